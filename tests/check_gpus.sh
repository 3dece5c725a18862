#!/usr/bin/env bash
# check_gpus.sh - make check-gpus: every chapter as on each GPU of common/gpu_profile.cuh's presets, on
# the GPU here. Per preset: a build for its architecture (PTX only, compute_NN, so the driver
# JIT-compiles the pre-Hopper code paths for this GPU; sm_90 for h100), its tests and every
# program at the small sizes of NN_name/sanitize.args (each of its command lines), under GPU_PROFILE=<preset>. A preset newer
# than this GPU (rtx5090 on an H200) gets the newest PTX this GPU can JIT: compute_<this GPU>.
# Prints one table, chapter x GPU: PASS, WAIVED (the kernels waived), FAIL. Logs: $CHECK_GPUS_LOGS
# (default /tmp/check-gpus: make clean empties build/ between presets).
# CHECK_GPUS_PRESETS="t4:75 h100:90" runs a subset (preset:capability).
# CHECK_GPUS_PREBUILT=DIR takes each preset's binaries from DIR/<preset>.tgz instead of building
# them here (the programs and build/tests of `make ARCH=<its arch> all` and the tests, archived
# from the repository root, e.g. on a machine with more cores; the archive's files are then
# touched, so make finds them newer than the sources). DIR must not be under build/: each preset
# starts with `make clean`, which empties build/.
# One copy at a time on a GPU: the chapters already run side by side, and their largest-n tests
# check the free device memory before they allocate it; three copies at once on an H200 (139 GiB)
# made three test binaries run out of memory, and a pitfall test that needs stale shared memory came
# out right (our reading: it found zeros other processes had left).
# Exit 0 when no cell is FAIL.
set -u
cd "$(dirname "$0")/.."
nvidia-smi -L >/dev/null 2>&1 || { echo "make check-gpus: no GPU found (nvidia-smi -L fails)"; exit 2; }
real=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
presets=${CHECK_GPUS_PRESETS:-"t4:75 a100:80 rtx3090:86 rtx4090:89 rtx5090:120 h100:90"}
chapters=${CHAPTERS:-$(ls -d [0-9][0-9]_*/ | tr -d /)}
jobs=$(nproc)
logs=${CHECK_GPUS_LOGS:-/tmp/check-gpus}
declare -A cell
header="chapter"
for pc in $presets; do
    p=${pc%%:*} cc=${pc#*:}
    if [ "$cc" -ge "$real" ]; then cc=$real; fi
    arch=compute_$cc
    [ "$p" = h100 ] && [ "$real" = 90 ] && arch=sm_90
    header="$header|$p ($arch)"
    echo "== $p: make ARCH=$arch, GPU_PROFILE=$p"
    make clean >/dev/null
    mkdir -p "$logs"
    targets=""
    for c in $chapters; do targets="$targets $c $(ls tests/test_"$c".cu tests/test_"$c"_*.cu 2>/dev/null | sed 's|^tests/\(.*\)\.cu$|build/tests/\1|')"; done
    if [ -n "${CHECK_GPUS_PREBUILT:-}" ]; then
        if ! tar xzf "$CHECK_GPUS_PREBUILT/$p.tgz" >"$logs/$p.build.log" 2>&1; then
            for c in $chapters; do cell[$c,$p]="FAIL (no prebuilt $CHECK_GPUS_PREBUILT/$p.tgz)"; done
            continue
        fi
        # shellcheck disable=SC2046  # the archive's file list
        touch $(tar tzf "$CHECK_GPUS_PREBUILT/$p.tgz" | grep -v '/$')
    elif ! make -j"$jobs" ARCH="$arch" $targets >"$logs/$p.build.log" 2>&1; then
        for c in $chapters; do cell[$c,$p]="FAIL (build: $logs/$p.build.log)"; done
        continue
    fi
    # The chapters run side by side (the GPU time-slices between them; the driver's JIT
    # compilation of a compute_NN build and the CPU references take the cores).
    for c in $chapters; do
        (
            prog=${c#*_}
            GPU_PROFILE=$p tests/run.sh $(ls build/tests/test_"$c" build/tests/test_"$c"_* 2>/dev/null) >"$logs/$p.$c.test.log" 2>&1
            echo $? >"$logs/$p.$c.test.rc"
            # Each command line of sanitize.args; the run's code: the first that is neither 0
            # nor 77 (waived), else 77 if any was, else 0.
            : >"$logs/$p.$c.run.log"
            run_rc=0
            lines=$(grep -v -E '^[[:space:]]*(#|$)' "$c/sanitize.args" 2>/dev/null || true)
            while IFS= read -r args; do
                # shellcheck disable=SC2086  # args is a command line: split it
                GPU_PROFILE=$p ./"$prog" $args </dev/null >>"$logs/$p.$c.run.log" 2>&1
                r=$?
                case $r in
                    0) ;;
                    77) [ $run_rc -eq 0 ] && run_rc=77 ;;
                    *) if [ $run_rc -eq 0 ] || [ $run_rc -eq 77 ]; then run_rc=$r; fi ;;
                esac
            done <<<"${lines:- }"
            echo $run_rc >"$logs/$p.$c.run.rc"
        ) &
    done
    wait
    for c in $chapters; do
        test_rc=$(cat "$logs/$p.$c.test.rc") run_rc=$(cat "$logs/$p.$c.run.rc")
        # The kernel: the word before WAIVED or "not run" ("opt-in: reverseBlockOptIn: WAIVED: ...", "  name: WAIVED: ...").
        waived=$(grep -E 'WAIVED|not run:' "$logs/$p.$c.run.log" | grep -v '^note:' |
                 sed -E 's/^(.*[[:space:]])?([^[:space:]]+)[[:space:]]+(WAIVED|not run).*/\2/; s/:$//' | grep -v ' ' |
                 sort -u | tr '\n' ' ')
        if [ "$test_rc" -ne 0 ] || { [ "$run_rc" -ne 0 ] && [ "$run_rc" -ne 77 ]; }; then
            cell[$c,$p]="FAIL (tests $test_rc, program $run_rc: $logs/$p.$c.*.log)"
        elif [ "$run_rc" -eq 77 ] || [ -n "$waived" ]; then
            cell[$c,$p]="WAIVED (${waived% })"
        else
            cell[$c,$p]="PASS"
        fi
        echo "   $c: ${cell[$c,$p]} ($(tail -n 1 "$logs/$p.$c.test.log"))"
    done
done
make clean >/dev/null
echo
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1) (cc $real); limits emulated by GPU_PROFILE, timings this GPU's"
echo "$header" | tr '|' '\t'
fail=0
for c in $chapters; do
    line=$c
    for pc in $presets; do
        p=${pc%%:*}
        line="$line|${cell[$c,$p]}"
        case ${cell[$c,$p]} in FAIL*) fail=1 ;; esac
    done
    echo "$line" | tr '|' '\t'
done
exit $fail
