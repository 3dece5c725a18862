#!/usr/bin/env bash
# sanitize.sh - compute-sanitizer on every chapter's program at the small size in
# NN_name/sanitize.args (`make sanitize` runs it).
#
# usage: tests/sanitize.sh CHAPTER...      (e.g. tests/sanitize.sh 05_transpose)
# sanitize.args holds one command line a line (several where one size cannot run every
# kernel); blank lines and lines starting with # are left out.
# env:   SANITIZER (default compute-sanitizer), SANITIZE_TOOLS (default: memcheck racecheck
#        synccheck initcheck)
# One line per command line and tool: the command, the tool, the tool's summary, "clean" or
# "FAILED (see build/sanitize/PROGRAM.TOOL.log)", PROGRAM.TOOL.2.log for the
# second command line and so on. Exits 1 if any run failed, 2 without a GPU
# or without compute-sanitizer (one line, before anything runs).
set -u
cd "$(dirname "$0")/.." || exit 2
sanitizer=${SANITIZER:-compute-sanitizer}
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
[ $# -gt 0 ] || { echo "usage: tests/sanitize.sh CHAPTER..." >&2; exit 2; }
command -v "$sanitizer" >/dev/null 2>&1 ||
    { echo "sanitize.sh: $sanitizer not found: it comes with the CUDA Toolkit; put its bin/ on PATH or set SANITIZER"; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "sanitize.sh: no GPU found (nvidia-smi -L fails)"; exit 2; }
mkdir -p build/sanitize
fails=0
for c in "$@"; do
    p=${c#*_}
    [ -x "./$p" ] || { echo "sanitize.sh: ./$p is not built (make $c)"; fails=1; continue; }
    lines=$(grep -v -E '^[[:space:]]*(#|$)' "$c/sanitize.args" 2>/dev/null || true)
    i=0
    while IFS= read -r args; do
        i=$((i + 1))
        suffix=$([ $i -gt 1 ] && echo ".$i")
        for t in $tools; do
            log=build/sanitize/$p.$t$suffix.log
            # shellcheck disable=SC2086  # args is a command line: split it
            if "$sanitizer" --tool "$t" --error-exitcode 99 "./$p" $args </dev/null >"$log" 2>&1; then
                r=clean
            else
                r="FAILED (see $log)"
                fails=1
            fi
            summary=$(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log" | tail -n 1 | sed 's/=* *//')
            printf '%-18s %-10s %-44s %s\n' "$p $args" "$t" "$summary" "$r"
        done
    done <<<"${lines:- }"  # no command line: the program's defaults
done
exit $fails
