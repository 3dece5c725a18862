#!/usr/bin/env bash
# run.sh - run GoogleTest binaries and add up their results.
#
# usage: tests/run.sh BINARY...
# Prints each binary's failures (GTEST_BRIEF) and its own summary, then one
# closing line "N passed, N failed, N skipped". Exits 1 if any test failed or a
# binary died without a summary (a crash, or CHECK() exiting on a CUDA error).
set -u
passed=0 failed=0 skipped=0
for bin in "$@"; do
    echo "== $bin"
    log=$(mktemp)
    GTEST_BRIEF=1 GTEST_COLOR=no "$bin" >"$log" 2>&1
    rc=$?
    # Show failures and summaries; a skipped test's two lines (where, why) only once, as a count.
    awk '/: Skipped$/ { skip = 2 } skip > 0 { skip--; next } { print }' "$log"
    # "[==========] N tests from M test suites ran." then PASSED / SKIPPED counts;
    # brief mode prints no FAILED count, so failed = ran - passed - skipped.
    ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$log" | tail -n 1)
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    rm -f "$log"
    f=""
    [ -n "$ran" ] && f=$((ran - ${p:-0} - ${s:-0}))
    passed=$((passed + ${p:-0})); skipped=$((skipped + ${s:-0})); failed=$((failed + ${f:-0}))
    if [ "$rc" -ne 0 ] && { [ -z "$f" ] || [ "$f" -eq 0 ]; }; then
        echo "!! $bin exited with status $rc before reporting: counted as 1 failure"
        failed=$((failed + 1))
    fi
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
