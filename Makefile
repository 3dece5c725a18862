# One program per chapter (NN_name/name.cu -> ./name), one GoogleTest binary
# per chapter (tests/test_NN_name.cu -> build/tests/test_NN_name).
#
#   make                      build every chapter's program
#   make 05_transpose         build ./transpose
#   make test                 build and run the tests; ends with "N passed, N failed, N skipped"
#   make test CHAPTERS=05_transpose    only that chapter (plus the common tests)
#   make bench | plots | readme-tables | sanitize | profile | check-gpus | clean
#
# ARCH defaults to the GPU in this machine (native), or sm_90 (the H200 the
# results come from) where there is none; `make ARCH=sm_80` overrides.

SHELL := /bin/bash
.DEFAULT_GOAL := all

# NVIDIA's packages (./setup.sh) install to /usr/local/cuda, which is not on PATH until the
# shell is told: look there too, so `./setup.sh && make` works in the same shell.
ifeq ($(shell command -v nvcc),)
  ifneq ($(wildcard /usr/local/cuda/bin/nvcc),)
    export PATH := /usr/local/cuda/bin:$(PATH)
  endif
endif
NVCC   ?= nvcc
CXX    ?= g++
# The one Python: the first with matplotlib (make plots), else python3 (the README tables need only the stdlib).
PYTHON ?= $(or $(shell for p in python3 /usr/bin/python3; do $$p -c 'import matplotlib' >/dev/null 2>&1 && { echo $$p; break; }; done),python3)
NCU    ?= ncu
SANITIZER ?= compute-sanitizer
NVCC_MIN_MAJOR := 12

# make bench / profile / sanitize stop at once, in one line (exit 2), where they cannot run:
# no GPU (nvidia-smi -L fails), or no ncu / compute-sanitizer.
GPU_GOALS := $(filter bench profile sanitize,$(MAKECMDGOALS))
ifneq ($(GPU_GOALS),)
  ifneq ($(shell nvidia-smi -L >/dev/null 2>&1 && echo yes),yes)
    $(error make $(firstword $(GPU_GOALS)): no GPU found (nvidia-smi -L fails); it needs an NVIDIA GPU and its driver)
  endif
endif
ifneq ($(filter profile,$(MAKECMDGOALS)),)
  ifeq ($(shell PATH="$(PATH)" command -v $(NCU)),)
    $(error make profile: $(NCU) (Nsight Compute) not found; it comes with the CUDA Toolkit: put its bin/ on PATH or set NCU=/path/to/ncu)
  endif
endif
ifneq ($(filter sanitize,$(MAKECMDGOALS)),)
  ifeq ($(shell PATH="$(PATH)" command -v $(SANITIZER)),)
    $(error make sanitize: $(SANITIZER) not found; it comes with the CUDA Toolkit: put its bin/ on PATH or set SANITIZER=/path/to/compute-sanitizer)
  endif
endif

ifeq ($(origin ARCH),undefined)
  ARCH := $(shell nvidia-smi -L >/dev/null 2>&1 && echo native || echo sm_90)
endif

NVFLAGS  := -std=c++17 -O3 -lineinfo -arch=$(ARCH) -I. -Xcompiler -Wall,-Wextra $(EXTRA_NVFLAGS)
# 01_matmul's Hopper steps use wgmma and setmaxnreg, which only the arch-specific
# target sm_90a has (its code runs on compute capability 9.0 only). Where ARCH is
# sm_90, matmul and its tests are built for sm_90a instead; where it is native and
# the machine has a 9.0 GPU, for each of its GPUs as -arch=native would, 9.0 as sm_90a.
comma := ,
# The machine's compute capabilities (90 for 9.0), each once, where ARCH is native.
NATIVE_CCS := $(if $(filter native,$(ARCH)),$(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d . | sort -u | tr '\n' ' '))
ifneq ($(filter sm_90 sm_90a,$(ARCH)),)
  ARCHFLAGS_matmul := -gencode=arch=compute_90a$(comma)code=sm_90a
else ifneq ($(filter 90,$(NATIVE_CCS)),)
  ARCHFLAGS_matmul := $(foreach c,$(NATIVE_CCS),-gencode=arch=compute_$(c)$(if $(filter 90,$(c)),a)$(comma)code=sm_$(c)$(if $(filter 90,$(c)),a))
endif
# A chapter's flags: NVFLAGS, with its own target where it has one.
nvflags = $(if $(ARCHFLAGS_$(1)),$(filter-out -arch=%,$(NVFLAGS)) $(ARCHFLAGS_$(1)),$(NVFLAGS))
CXXFLAGS := -std=c++17 -O2 -Wall -Wextra -I.
GTEST    := -lgtest -lgtest_main -lpthread

# The flags, in files rewritten only when they change: every binary depends on its compiler's, so
# `make ARCH=sm_80` (or another EXTRA_NVFLAGS, or CXX) after a build rebuilds, instead of finding
# the old binaries up to date. One for nvcc's binaries, one for the two g++ ones.
NVCC_STAMP := build/.nvcc-flags
CXX_STAMP  := build/.cxx-flags
stamp_text = $(subst ','\'',$(1))
# (-arch=native means this machine's GPUs: the stamp names them, so a build on another machine
# with other GPUs, a shared home folder say, is rebuilt for them.)
NVCC_TEXT  := $(call stamp_text,$(NVCC) $(NVFLAGS) $(ARCHFLAGS_matmul)$(if $(NATIVE_CCS), (native: $(strip $(NATIVE_CCS)))))
CXX_TEXT   := $(call stamp_text,$(CXX) $(CXXFLAGS))
write_stamp = mkdir -p build && { [ "$$(cat $(1) 2>/dev/null)" = '$(2)' ] || printf '%s\n' '$(2)' > $(1); }
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS))),)  # not under make -n, which changes nothing
  $(shell $(call write_stamp,$(NVCC_STAMP),$(NVCC_TEXT)))
  $(shell $(call write_stamp,$(CXX_STAMP),$(CXX_TEXT)))
endif
$(NVCC_STAMP):
	@$(call write_stamp,$@,$(NVCC_TEXT))
$(CXX_STAMP):
	@$(call write_stamp,$@,$(CXX_TEXT))

# Every folder named NN_something is a chapter; `make test CHAPTERS=...` narrows it.
CHAPTERS ?= $(patsubst %/,%,$(sort $(wildcard [0-9][0-9]_*/)))
prog      = $(patsubst $(firstword $(subst _, ,$(1)))_%,%,$(1))
PROGRAMS := $(foreach c,$(CHAPTERS),$(call prog,$(c)))
# A chapter's tests: tests/test_NN_name.cu, and tests/test_NN_name_PART.cu for a chapter in parts.
test_srcs = $(wildcard tests/test_$(1).cu tests/test_$(1)_*.cu)
TESTS    := build/tests/test_common build/tests/test_programs build/tests/test_fuzz \
            $(foreach c,$(CHAPTERS),$(patsubst tests/%.cu,build/tests/%,$(call test_srcs,$(c))))
COMMON   := $(wildcard common/*.cuh common/*.hpp)

# Libraries a chapter's program links beyond the CUDA runtime.
LDLIBS_matmul := -lcublas

.PHONY: all test bench plots readme-tables sanitize profile check-gpus clean check-nvcc check-gtest check-matplotlib \
        $(CHAPTERS)

all: $(CHAPTERS)

define chapter_rules
$(1): $(call prog,$(1))
$(call prog,$(1)): $(1)/$(call prog,$(1)).cu $$(wildcard $(1)/*.cuh $(1)/*.hpp $(1)/steps/*.cuh) $$(COMMON) $$(NVCC_STAMP) | check-nvcc
	$$(NVCC) $$(call nvflags,$(call prog,$(1))) -o $$@ $$< $$(LDLIBS_$(call prog,$(1)))
endef
# $(1) the chapter, $(2) one of its test sources
define test_rule
$(patsubst tests/%.cu,build/tests/%,$(2)): $(2) $$(wildcard tests/*.hpp) $$(wildcard $(1)/*.cuh $(1)/*.hpp $(1)/steps/*.cuh) $$(COMMON) $$(NVCC_STAMP) | check-nvcc check-gtest
	@mkdir -p build/tests
	$$(NVCC) $$(call nvflags,$(call prog,$(1))) -o $$@ $$< $$(GTEST) $$(LDLIBS_$(call prog,$(1)))
endef
$(foreach c,$(CHAPTERS),$(eval $(call chapter_rules,$(c))))
$(foreach c,$(CHAPTERS),$(foreach t,$(call test_srcs,$(c)),$(eval $(call test_rule,$(c),$(t)))))
# 05's tests count its tiles' bank conflicts with chapter 03's model.
build/tests/test_05_transpose: 03_bank_conflicts/bank_model.cuh

# Through nvcc: the GPU_PROFILE tests include common/gpu.cuh (cuda_runtime.h; no device code).
build/tests/test_common: tests/test_common.cpp $(wildcard tests/*.hpp) $(COMMON) $(NVCC_STAMP) | check-nvcc check-gtest
	@mkdir -p build/tests
	$(NVCC) -std=c++17 -O2 -I. -Xcompiler -Wall,-Wextra -o $@ $< $(GTEST)

build/tests/test_programs build/tests/test_fuzz: build/tests/%: tests/%.cpp tests/program_runner.hpp tests/require_gpu.hpp $(CXX_STAMP) | check-gtest
	@mkdir -p build/tests
	$(CXX) $(CXXFLAGS) -o $@ $< $(GTEST)

test: $(TESTS) $(PROGRAMS)
	@PROGRAMS="$(PROGRAMS)" tests/run.sh $(TESTS)

# Every program's size sweep, recorded as NN_name/results/<gpu>.csv.
bench: $(PROGRAMS)
	@tag=$$(common/gpu_tag.sh) || { echo "make bench: common/gpu_tag.sh named no GPU (nvidia-smi -L; why, if it said, above)"; exit 1; }; \
	set -e; for c in $(CHAPTERS); do \
	    mkdir -p $$c/results; ./$${c#*_} --sweep --csv $$c/results/$$tag.csv; done

# PNG plots beside each results CSV, and the README tables made from the same CSVs.
plots: | check-matplotlib
	@set -e; for f in $(wildcard $(addsuffix /results/*.csv,$(CHAPTERS))); do \
	    case $$f in *_ncu.csv) continue;; esac; \
	    c=$${f%%/*}; if [ -f $$c/plot.py ]; then $(PYTHON) $$c/plot.py $$f; else $(PYTHON) common/plot.py $$f; fi; done
	@$(MAKE) --no-print-directory readme-tables

readme-tables:
	@$(PYTHON) common/readme_table.py $(CHAPTERS)
	@set -e; for c in $(CHAPTERS); do if [ -f $$c/tables.py ]; then $(PYTHON) $$c/tables.py $$c; fi; done

# compute-sanitizer on every program at the small size in NN_name/sanitize.args (tests/sanitize.sh).
# Without a GPU or without compute-sanitizer: one line, exit 2, before anything is built.
SANITIZE_TOOLS ?= memcheck racecheck synccheck initcheck
sanitize: $(PROGRAMS)
	@SANITIZER="$(SANITIZER)" SANITIZE_TOOLS="$(SANITIZE_TOOLS)" tests/sanitize.sh $(CHAPTERS)

# Hardware counters (ncu) for the chapters that define NN_name/profile.sh. Without a GPU or
# without ncu: one line, exit 2, before anything is built; a committed CSV is replaced only
# by a run that succeeded.
profile: $(PROGRAMS)
	@set -e; for c in $(CHAPTERS); do if [ -x $$c/profile.sh ]; then NCU="$(NCU)" $$c/profile.sh ./$${c#*_}; fi; done

# Every chapter as on each preset GPU (GPU_PROFILE), built for its architecture, on this GPU:
# one table, chapter x GPU (tests/check_gpus.sh). Rebuilds per preset; ends with make clean.
check-gpus:
	@CHAPTERS="$(CHAPTERS)" tests/check_gpus.sh

clean:
	rm -rf build $(foreach c,$(patsubst %/,%,$(wildcard [0-9][0-9]_*/)),$(call prog,$(c)))

# One line, naming what is missing or too old ($(error) in a recipe: expanded only when a build needs nvcc).
NVCC_PATH    = $(shell PATH="$(PATH)" command -v $(NVCC))
NVCC_RELEASE = $(shell PATH="$(PATH)" $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)
NVCC_RECENT  = $(shell [ "$(firstword $(subst ., ,$(NVCC_RELEASE)))" -ge $(NVCC_MIN_MAJOR) ] 2>/dev/null && echo yes)
NVCC_PROBLEM = $(if $(NVCC_PATH),$(if $(NVCC_RECENT),,nvcc $(or $(NVCC_RELEASE),of unknown version) found ($(NVCC_PATH)); CUDA $(NVCC_MIN_MAJOR).0 or newer is needed: run ./setup.sh or put a newer nvcc first on PATH),nvcc not found: run ./setup.sh, or install the CUDA Toolkit (12.x or 13.x) and put its bin/ on PATH)
check-nvcc:
	$(if $(NVCC_PROBLEM),$(error $(NVCC_PROBLEM)))
check-gtest:
	@echo '#include <gtest/gtest.h>' | $(CXX) -x c++ -std=c++17 -fsyntax-only - >/dev/null 2>&1 || { echo "GoogleTest not found: install libgtest-dev (apt-get install libgtest-dev)"; exit 1; }
check-matplotlib:
	@$(PYTHON) -c 'import matplotlib' >/dev/null 2>&1 || { echo "matplotlib not found: install python3-matplotlib (apt-get install python3-matplotlib)"; exit 1; }
