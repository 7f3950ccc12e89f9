#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.e2e_harness: the e2e harness (test/e2e/lib/harness.sh) can fail. Scratch tests that
# source it: a wrong value, a missing text and a false jq expression each fail with one FAIL
# line and exit 1; wait_for returns at once on a true condition, and on a false one after its
# bound, saying what it waited for; the older wait_for form still works; what on_exit and
# h_tmpdir registered is removed at exit, also when the test fails or is interrupted.
set -uo pipefail
src=${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$src/test/e2e/lib/harness.sh"
work=$(mktemp -d /tmp/kperf-harness-lint.XXXXXX)
trap 'rm -rf "$work"' EXIT
bad=0
no() { echo "FAIL: $*"; bad=1; }

# scratch NAME BODY: runs BODY as a test sourcing the harness; output in $work/NAME.out
scratch() {
    printf '. "%s"\n%s\n' "$lib" "$2" >"$work/$1.sh"
    bash "$work/$1.sh" >"$work/$1.out" 2>&1
}

scratch good 'assert_eq "two" 2 2; assert_contains "hay" "a haystack" "hay"
echo "{\"a\": 1}" > /tmp/kperf-harness-lint.json.$$; on_exit "rm -f /tmp/kperf-harness-lint.json.$$"
assert_json "a is 1" /tmp/kperf-harness-lint.json.$$ ".a == 1"; finish'
rc=$?
[ "$rc" = 0 ] && grep -q '^RESULT: PASSED (good: 3 checks)$' "$work/good.out" ||
    no "passing checks: rc $rc: $(cat "$work/good.out")"

for c in 'assert_eq "value" 2 3' 'assert_contains "text" "a haystack" needle' \
    'echo "{}" > "$T/x.json"; assert_json "field" "$T/x.json" ".a == 1"' 'check "false" false'; do
    scratch bad "h_tmpdir T lint; $c; finish"
    rc=$?
    [ "$rc" = 1 ] && [ "$(grep -c '^FAIL: ' "$work/bad.out")" = 1 ] &&
        grep -q '^RESULT: FAILED (bad: 1 failed, 0 passed)$' "$work/bad.out" ||
        no "a failing check ($c) must fail the test with one FAIL line: rc $rc: $(cat "$work/bad.out")"
done

scratch wait 'x=0; bump() { x=$((x + 1)); [ "$x" -ge 3 ]; }
wait_for 5 "x to reach 3" bump && echo "reached $x"
wait_for 1 "a thing that never happens" false || echo "gave up"
wait_for 5 test -e /   # the older form: no WHAT
echo "old form $?"'
grep -q '^reached 3$' "$work/wait.out" || no "wait_for must poll until true: $(cat "$work/wait.out")"
grep -q '^timeout: waited 1 s for a thing that never happens$' "$work/wait.out" && grep -q '^gave up$' "$work/wait.out" ||
    no "wait_for must say what it waited for and return 1: $(cat "$work/wait.out")"
grep -q '^old form 0$' "$work/wait.out" || no "wait_for BOUND CMD... must still work: $(cat "$work/wait.out")"

scratch clean "h_tmpdir dir lint; echo \"\$dir\" > '$work/tdir'; on_exit 'touch $work/cleaned'; fail x; finish"
[ -f "$work/cleaned" ] && [ -s "$work/tdir" ] && [ ! -e "$(cat "$work/tdir")" ] ||
    no "on_exit and h_tmpdir must clean up when a test fails"
rm -f "$work/cleaned"
scratch int "on_exit 'touch $work/cleaned'; kill -INT \$\$; sleep 5"
rc=$?
[ "$rc" = 130 ] && [ -f "$work/cleaned" ] || no "an interrupted test must clean up and exit 130 (rc $rc)"

[ "$bad" = 0 ] && echo "e2e harness: checks fail when they should, waits are bounded, cleanup runs"
exit "$bad"
