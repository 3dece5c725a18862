#!/usr/bin/env bash
# setup.sh - install what this repository needs, on Debian 12, Ubuntu 22.04 or Ubuntu 24.04.
#
# usage: ./setup.sh [--dry-run]
#
#   From the distribution: make, g++, libgtest-dev (make test), python3-matplotlib (make plots),
#   each only where it is missing.
#   The CUDA Toolkit (nvcc 12 or newer), only where no such nvcc is found on PATH or in
#   /usr/local/cuda/bin: from NVIDIA's own package repository for the distribution
#   (/etc/os-release), the route of NVIDIA's installation guide ("Network Repository
#   Installation"): the cuda-keyring package, then apt-get install cuda-toolkit (the newest; where
#   nvidia-smi reports a driver older than 580, which CUDA 13 needs, cuda-toolkit-12-8). It goes to
#   /usr/local/cuda. Debian's own nvidia-cuda-toolkit is not used: it is CUDA 11.8 (in non-free).
#   Never a driver: a GPU machine has one already; without one everything still builds and the
#   programs print WAIVED.
#
#   Runs as root, or through sudo when not root. Idempotent: a second run installs nothing.
#   The package manager's output goes to a log file it names; the last line on the terminal is
#   one line of what it installed and what it skipped. --dry-run prints what it would install
#   and changes nothing. Where nvcc is found only in /usr/local/cuda/bin, it prints the
#   `export PATH=...` line to run first. Other distributions: a message pointing to NVIDIA's runfile
#   installer or conda's cuda-toolkit, exit 1.
#
# For tests: SETUP_OS_RELEASE (default /etc/os-release) and SETUP_CUDA_HOME (default
# /usr/local/cuda) replace the files looked at, and SETUP_FAKE_PRESENT, where set, replaces the
# probes for make, g++, libgtest-dev, python3-matplotlib, wget, ca-certificates and apt-get:
# present are the names it lists, missing all others. tests/test_setup.sh uses them.
set -euo pipefail

dry_run=0
for a in "$@"; do
    case $a in
        --dry-run) dry_run=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup.sh: unknown argument '$a' (usage: ./setup.sh [--dry-run])" >&2; exit 2 ;;
    esac
done

os_release=${SETUP_OS_RELEASE:-/etc/os-release}
cuda_home=${SETUP_CUDA_HOME:-/usr/local/cuda}
need_major=12

# --- what the distribution is -------------------------------------------------------------
distro=""
pretty="an unknown distribution (no $os_release)"
if [ -r "$os_release" ]; then
    # shellcheck disable=SC1090  # the os-release file is sourced in a subshell, three times
    os_id=$(. "$os_release"; echo "${ID:-}") version=$(. "$os_release"; echo "${VERSION_ID:-}")
    # shellcheck disable=SC1090
    pretty=$(. "$os_release"; echo "${PRETTY_NAME:-$os_id $version}")
    case "$os_id:$version" in
        debian:12) distro=debian12 ;;
        ubuntu:22.04) distro=ubuntu2204 ;;
        ubuntu:24.04) distro=ubuntu2404 ;;
    esac
fi
arch=$(uname -m)

# --- what is there ------------------------------------------------------------------------
# "13.0" from `nvcc --version` ("Cuda compilation tools, release 13.0, V13.0.88"), "" if none;
# "" and success too where that nvcc fails (set -e would end the script at r=$(...) silently).
nvcc_release() { "$1" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1 || true; }
best_nvcc="" best_release=""
for n in "$(command -v nvcc || true)" "$cuda_home/bin/nvcc"; do
    [ -n "$n" ] && [ -x "$n" ] || continue
    r=$(nvcc_release "$n")
    [ -n "$r" ] || continue
    if [ -z "$best_release" ] || [ "${r%%.*}" -gt "${best_release%%.*}" ]; then best_nvcc=$n best_release=$r; fi
done
found_nvcc_line=""
[ -n "$best_release" ] && found_nvcc_line="nvcc $best_release ($best_nvcc)"
cuda_needed=1
if [ -n "$best_release" ] && [ "${best_release%%.*}" -ge $need_major ]; then cuda_needed=0; fi

has_matplotlib() {
    local p
    for p in python3 /usr/bin/python3; do "$p" -c 'import matplotlib' >/dev/null 2>&1 && return 0; done
    return 1
}
has_gtest() { command -v g++ >/dev/null 2>&1 && echo '#include <gtest/gtest.h>' | g++ -x c++ -std=c++17 -fsyntax-only - >/dev/null 2>&1; }

has_certs() { [ -d /etc/ssl/certs ] && [ -n "$(ls -A /etc/ssl/certs 2>/dev/null)" ]; }
# has NAME PROBE...: whether NAME is there (PROBE succeeds), or what SETUP_FAKE_PRESENT says.
has() {
    local name=$1
    shift
    if [ -n "${SETUP_FAKE_PRESENT+set}" ]; then [[ " $SETUP_FAKE_PRESENT " == *" $name "* ]]; return; fi
    "$@"
}
missing=() present=()
has make command -v make >/dev/null 2>&1 && present+=(make) || missing+=(make)
has g++ command -v g++ >/dev/null 2>&1 && present+=(g++) || missing+=(g++)
has libgtest-dev has_gtest && present+=(libgtest-dev) || missing+=(libgtest-dev)
has python3-matplotlib has_matplotlib && present+=(python3-matplotlib) || missing+=(python3-matplotlib)
if [ $cuda_needed -eq 1 ]; then
    # The keyring is downloaded: wget and the CA certificates it checks https with.
    has wget command -v wget >/dev/null 2>&1 || missing+=(wget)
    has ca-certificates has_certs || missing+=(ca-certificates)
fi

# Which toolkit the driver runs: CUDA 13 needs a driver of 580 or newer, CUDA 12.x runs on 525 or
# newer (NVIDIA's CUDA Toolkit release notes, "CUDA Toolkit and Corresponding Driver Versions"). A
# GPU whose driver is older than 580 gets CUDA 12.8; no driver (no GPU, as in CI) gets the newest.
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
toolkit=cuda-toolkit
driver_note=""
if [[ $driver =~ ^[0-9]+ ]] && [ "${BASH_REMATCH[0]}" -lt 580 ]; then
    toolkit=cuda-toolkit-12-8
    driver_note="; driver $driver: CUDA 13 needs 580 or newer, so CUDA 12.8"
fi

keyring_url=""
[ -n "$distro" ] && keyring_url="https://developer.download.nvidia.com/compute/cuda/repos/$distro/$arch/cuda-keyring_1.1-1_all.deb"

path_line='export PATH=/usr/local/cuda/bin:$PATH'
path_hint() {
    # nvcc is in $cuda_home/bin but not on PATH: a script cannot change its caller's PATH.
    [ "$best_nvcc" = "$cuda_home/bin/nvcc" ] || return 0
    if ! command -v nvcc >/dev/null 2>&1 || [ "$(nvcc_release nvcc)" != "$best_release" ]; then
        echo "nvcc is in $cuda_home/bin, not on your PATH. For this shell:  $path_line"
        echo "  and for every new one:  echo '$path_line' >> ~/.bashrc"
    fi
}

unsupported_cuda() {
    echo "setup.sh: no nvcc $need_major or newer found${found_nvcc_line:+ (found $found_nvcc_line)}, and $pretty ($arch) is not"
    echo "  one this script installs CUDA on (Debian 12, Ubuntu 22.04, Ubuntu 24.04 on x86_64). Install CUDA"
    echo "  Toolkit 12 or 13 yourself: NVIDIA's runfile installer (https://developer.nvidia.com/cuda-downloads,"
    echo "  toolkit only, no driver) or conda's: conda install -c nvidia cuda-toolkit; then put its bin/ on PATH."
}

# --- what to do ---------------------------------------------------------------------------
if [ $cuda_needed -eq 1 ] && { [ -z "$distro" ] || [ "$arch" != x86_64 ]; }; then
    if [ ${#missing[@]} -gt 0 ]; then
        echo "setup.sh: (also missing: ${missing[*]}: install them with your package manager)"
    fi
    unsupported_cuda
    exit 1
fi
if [ ${#missing[@]} -gt 0 ] && ! has apt-get command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: missing ${missing[*]}, and there is no apt-get here: install them with your package manager"
    exit 1
fi

cuda_what="CUDA Toolkit ($toolkit from NVIDIA's $distro repository; found ${found_nvcc_line:-no nvcc}$driver_note)"
skipped="${present[*]:-}"
[ $cuda_needed -eq 0 ] && skipped="${skipped:+$skipped, }$found_nvcc_line"

if [ $dry_run -eq 1 ]; then
    todo=()
    [ ${#missing[@]} -gt 0 ] && todo+=("apt-get install ${missing[*]}")
    if [ $cuda_needed -eq 1 ]; then
        todo+=("$cuda_what: wget $keyring_url; dpkg -i cuda-keyring_1.1-1_all.deb; apt-get update; apt-get install $toolkit")
    fi
    [ $cuda_needed -eq 0 ] && path_hint
    if [ ${#todo[@]} -eq 0 ]; then
        echo "setup.sh --dry-run: would install nothing; present: $skipped"
    else
        printf 'setup.sh --dry-run: would run: %s' "${todo[0]}"
        [ ${#todo[@]} -gt 1 ] && printf '; then %s' "${todo[1]}"
        echo "; present (skipped): ${skipped:-nothing}"
    fi
    exit 0
fi

if [ ${#missing[@]} -eq 0 ] && [ $cuda_needed -eq 0 ]; then
    path_hint
    echo "setup.sh: installed nothing; skipped (present): $skipped"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup.sh: not root and no sudo: run it as root"; exit 1; }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# The package manager's pages of output go to a log, so that the summary stays the last line on
# the terminal; a failed step shows the end of the log and names it.
log=$(mktemp "${TMPDIR:-/tmp}/setup.XXXXXX.log")
echo "setup.sh: installing ${missing[*]}${missing[*]:+ }$([ $cuda_needed -eq 1 ] && echo "CUDA Toolkit "); output in $log"
logged() {
    echo "+ $*" >>"$log"
    if ! "$@" >>"$log" 2>&1; then
        tail -n 15 "$log"
        echo "setup.sh: failed: $* (all of its output: $log)"
        exit 1
    fi
}
logged "${sudo[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    logged "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi
if [ $cuda_needed -eq 1 ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    logged wget -q -O "$tmp/cuda-keyring_1.1-1_all.deb" "$keyring_url"
    logged "${sudo[@]}" dpkg -i "$tmp/cuda-keyring_1.1-1_all.deb"
    logged "${sudo[@]}" apt-get update -qq
    logged "${sudo[@]}" apt-get install -y -qq "$toolkit"
    r=$(nvcc_release "$cuda_home/bin/nvcc")
    [ -n "$r" ] || { echo "setup.sh: $toolkit installed but $cuda_home/bin/nvcc does not run (log: $log)"; exit 1; }
    best_release=$r best_nvcc=$cuda_home/bin/nvcc
fi
done_what=("${missing[@]}")
[ $cuda_needed -eq 1 ] && done_what+=("CUDA Toolkit $best_release (NVIDIA's $distro repository, in $cuda_home)")
path_hint
echo "setup.sh: installed ${done_what[*]}; skipped (present): ${skipped:-nothing}; log: $log"
