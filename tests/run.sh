#!/usr/bin/env bash
# run.sh - run GoogleTest binaries and add up their results.
#
# usage: tests/run.sh BINARY...
# Prints each binary's failures (GTEST_BRIEF) and its own summary, then how many
# tests were skipped and why (one line per reason), then one closing line
# "N passed, N failed, N skipped". Exits 1 if any test failed or a binary ended
# without a summary, whatever its status (a crash, CHECK() exiting on a CUDA error,
# or an exit(0) before the tests after it ran), and if no test ran at all (no binary given,
# or none with a test in it: a run that tests nothing must not pass). A binary still running after
# TEST_TIMEOUT seconds (default 3600; the longest takes ~5 minutes on an H200) is
# stopped and counts as a failure: a hung GPU test must not hang `make test`.
set -u
if [ $# -eq 0 ]; then
    echo "tests/run.sh: no test binaries given (usage: tests/run.sh BINARY...)" >&2
    exit 1
fi
timeout_s=${TEST_TIMEOUT:-3600}
passed=0 failed=0 skipped=0
reasons=$(mktemp)
trap 'rm -f "$reasons"' EXIT
for bin in "$@"; do
    echo "== $bin"
    log=$(mktemp)
    GTEST_BRIEF=1 GTEST_COLOR=no timeout "$timeout_s" "$bin" >"$log" 2>&1
    rc=$?
    [ "$rc" -eq 124 ] && echo "!! $bin still ran after $timeout_s s (TEST_TIMEOUT): stopped" >>"$log"
    # Show failures and summaries; a skipped test's two lines (where, why) only as a count per
    # reason at the end; not gtest_main's "Running main() from ..." banner.
    awk -v reasons="$reasons" '/: Skipped$/ { skip = 2 } skip == 1 { print >> reasons }
        skip > 0 { skip--; next } /^Running main\(\) from / { next } { print }' "$log"
    # "[==========] N tests from M test suites ran." then PASSED / SKIPPED counts;
    # brief mode prints no FAILED count, so failed = ran - passed - skipped.
    ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$log" | tail -n 1)
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    rm -f "$log"
    f=""
    [ -n "$ran" ] && f=$((ran - ${p:-0} - ${s:-0}))
    passed=$((passed + ${p:-0})); skipped=$((skipped + ${s:-0})); failed=$((failed + ${f:-0}))
    # No summary at all (a crash, CHECK() exiting, or an exit(0) part-way: the tests after it never
    # ran), or a failing status that no failed test explains: one failure.
    if [ -z "$ran" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
        echo "!! $bin exited with status $rc$([ -z "$ran" ] && echo ' before reporting'): counted as 1 failure"
        failed=$((failed + 1))
    fi
done
echo
# "326 GPU tests skipped: no CUDA device (cudaErrorNoDevice: ...)" - one line per reason, most
# frequent first.
sort "$reasons" | uniq -c | sort -rn | while read -r n why; do
    case $why in
        "no CUDA device available"*)
            echo "$n GPU tests skipped: no CUDA device ${why#no CUDA device available }; run on a GPU with REQUIRE_GPU=1 to make a skip a failure" ;;
        *) echo "$n tests skipped: $why" ;;
    esac
done
echo "$passed passed, $failed failed, $skipped skipped"
if [ $((passed + failed + skipped)) -eq 0 ]; then
    echo "!! no test ran: counted as a failure"
    exit 1
fi
[ "$failed" -eq 0 ]
