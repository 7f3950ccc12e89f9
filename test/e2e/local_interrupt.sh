#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_interrupt.sh - stopping `kperf run --local` mid-run, as root with network namespaces:
#  1. SIGINT once the second measurement runs: exit 130, the report (what was measured so far,
#     the rest listed as not run) still printed and valid, nothing left behind; the partial
#     report does not enter --history (later runs are judged against it).
#  2. SIGTERM during the topology build: exit 143, nothing left behind.
#  3. SIGKILL mid-run (no cleanup possible): the agents die with kperf, and the next run
#     removes the namespaces and state the killed run left.
# Runtime about 40 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-int
pid=
on_exit '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null'
# The bounds below only stop a hang: what they wait for normally comes within a few seconds.

# run_id_from_state: the run id of the newest state file in /run/kperf (the run in progress)
newest_id() {
    ls -t /run/kperf/kpl*.state 2>/dev/null | head -1 | sed 's|.*/\(kpl[0-9a-f]*\)\.state|\1|'
}

# --- 1. SIGINT during the second measurement
"$KPERF" run --local --scenarios all --duration 3s -o json --history "$D/hist" >"$D/int.json" 2>"$D/int.err" &
pid=$!
wait_for 60 "the progress line of the 2nd measurement" grep -qF -- "[2/23]" "$D/int.err" || fail "no progress line for the 2nd measurement: $(cat "$D/int.err")"
id=$(newest_id)
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 130 ] || fail "SIGINT: exit $rc, want 130"
grep -q "interrupted (SIGINT)" "$D/int.err" || fail "no 'interrupted' line: $(tail -2 "$D/int.err")"
grep -q "partial report is not pushed" "$D/int.err" || fail "no word on the skipped history: $(tail -3 "$D/int.err")"
[ -z "$(find "$D/hist" -name '*.json' 2>/dev/null)" ] || fail "the partial report entered the history: $(find "$D/hist" -type f)"
validate "$D/int.json"
python3 - "$D/int.json" <<'PY' || fail "partial report content"
import json, sys
rep = json.load(open(sys.argv[1]))
ok = [r for r in rep["results"] if r["status"] == "ok"]
skipped = [s for s in rep.get("skipped", []) if "interrupted" in s.get("reason", "")]
skipped += [r for r in rep["results"] if r["status"] == "skipped"]
if len(ok) < 1:
    print("no measured row in the partial report"); sys.exit(1)
if not skipped:
    print("the rows not run are not listed"); sys.exit(1)
if rep["metadata"].get("run_id") is None:
    sys.exit(1)
PY
[ -n "$id" ] || fail "no state file seen during the run"
[ -n "$id" ] && assert_clean "$id" "SIGINT run"

# --- 2. SIGTERM while the cluster is being built
"$KPERF" run --local --scenarios all --duration 3s -o json >"$D/term.json" 2>"$D/term.err" &
pid=$!
new_state() { [ -n "$(newest_id)" ] && [ "$(newest_id)" != "$id" ]; }
wait_for 30 "the new run's state file" new_state
id2=$(newest_id)
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, want 143 ($(tail -2 "$D/term.err"))"
[ -n "$id2" ] && [ "$id2" != "$id" ] && assert_clean "$id2" "SIGTERM run"

# --- 3. SIGKILL: no cleanup by the run itself; the next run removes its leftovers
"$KPERF" run --local --scenarios pod-to-pod --duration 5s -o json >/dev/null 2>"$D/kill.err" &
pid=$!
wait_for 60 "the progress line of the 1st measurement" grep -qF -- "[1/6]" "$D/kill.err" || fail "no progress before SIGKILL: $(cat "$D/kill.err")"
id3=$(newest_id)
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
# the agents die with kperf (parent-death signal), a moment after it
agents_gone() { ! leftovers "$id3" | grep -q "^process"; }
wait_for 30 "the killed run's agents to exit" agents_gone
left=$(leftovers "$id3")
echo "$left" | grep -q "^$id3-" || fail "SIGKILL left no namespace? (test assumption): $left"
echo "$left" | grep -q "^process" && fail "agents outlived a SIGKILLed kperf: $left"
"$KPERF" run --local --scenarios host-to-host --same-node --tests TCP_RR --duration 1s -o json \
    >"$D/next.json" 2>"$D/next.err"
rc=$?
[ "$rc" = 0 ] || fail "the run after SIGKILL exited $rc: $(tail -3 "$D/next.err")"
grep -q "earlier killed run" "$D/next.err" || fail "no word about removed leftovers: $(head -3 "$D/next.err")"
assert_clean "$id3" "SIGKILLed run (after the next run)"
assert_clean "$(run_id_of "$D/next.json")" "the run after SIGKILL"
finish
