#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Deadlines hold (issue 34), each with a stopwatch bound of 2x --timeout:
#  * a storm of 503s on every API path but /version from before the run (the preflight:
#    leftovers, CNI facts, nodes): `kperf run --timeout 20s` fails within 40 s, saying it gave
#    up (the API client's retries stop once the server has failed for --timeout, and the calls
#    after that fail at their first 503; before, each call retried on its own: 133.6 s with
#    --timeout 40s, so about 67 s with 20s);
#  * a storm of 503s on every path while a client measures (--timeout 20s): the run ends
#    within 40 s of the storm; `kperf cleanup` afterwards removes what it could not;
#  * a sweep pair skipped because its node went NotReady is said on stderr as it happens (one
#    line, while kperf still runs), not only in the report.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 4

fault() { "$KS" fault --state-dir "$K8S_DIR" "$@" >/dev/null || fail "kube-sim fault $*"; }
now() { date +%s.%N; }
within() { [ "$(echo "$1 < $2" | bc)" = 1 ]; } # within SECONDS BOUND

# --- 1: a preflight under a 503 storm ends within 2x --timeout --------------------------------
fault "503:path=/api"
t0=$(now)
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 1s --timeout 20s -o json \
    >"$K8S_DIR/storm.json" 2>"$K8S_DIR/storm.err"
rc=$?
wall=$(echo "$(now) - $t0" | bc)
fault --clear
n503=$(grep -c ' 503$' "$K8S_DIR/requests.log")
if [ "$n503" -gt 0 ]; then pass "503 storm: $n503 requests answered 503"; else fail "no 503 injected"; fi
if [ "$rc" = 1 ]; then pass "503 storm: kperf exits 1"; else fail "503 storm: exit $rc, want 1"; fi
if within "$wall" 40; then
    pass "503 storm: --timeout 20s run ended after ${wall}s (bound 40 s)"
else
    fail "503 storm: --timeout 20s run took ${wall}s"
fi
if grep -Eq "^kperf: error: .*gave up after [0-9]+ s of failures.*503" "$K8S_DIR/storm.err"; then
    pass "503 storm: $(grep -m1 '^kperf: error' "$K8S_DIR/storm.err" | cut -c1-250)"
else
    fail "503 storm: no clear error: $(tail -3 "$K8S_DIR/storm.err")"
fi
k8s_nothing_left "503 storm"

# --- 2: a storm while a client measures ends the run within 2x --timeout ---------------------
# shellcheck disable=SC2317 # called through wait_for
client_running() { # (a captured list: `| grep -q .` under pipefail fails when kubectl dies of SIGPIPE)
    grep -q . <<<"$(kadmin get pods -A -l kperf.io/role=client --field-selector status.phase=Running \
        -o name 2>/dev/null)"
}
"$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e --scenarios pod-to-pod \
    --same-node --tests TCP_RR --duration 5s --timeout 20s --lease-duration 3s -o json \
    >"$K8S_DIR/mid.json" 2>"$K8S_DIR/mid.err" &
pid=$!
wait_for 90 client_running || fail "mid-run storm: the client never ran: $(tail -3 "$K8S_DIR/mid.err")"
fault "503"
t0=$(now)
wait "$pid"
rc=$?
wall=$(echo "$(now) - $t0" | bc)
fault --clear
if [ "$rc" = 1 ]; then pass "mid-run storm: kperf exits 1"; else fail "mid-run storm: exit $rc, want 1"; fi
if within "$wall" 40; then
    pass "mid-run storm: --timeout 20s run ended ${wall}s after the storm began (bound 40 s)"
else
    fail "mid-run storm: the run took ${wall}s after the storm began"
fi
grep -q "gave up after" "$K8S_DIR/mid.err" &&
    pass "mid-run storm: $(grep -m1 'gave up after' "$K8S_DIR/mid.err" | cut -c1-250)"
# what the storm kept the run from removing: its Lease is no longer renewed, so cleanup
# (watching it for its 3 s period) removes it
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" 2>"$K8S_DIR/mid-cleanup.err" ||
    fail "cleanup after the storm: $(cat "$K8S_DIR/mid-cleanup.err")"
k8s_nothing_left "mid-run storm"

# --- 3: a pair skipped for a NotReady node is said on stderr as it happens --------------------
# ring pairs node-1 -> node-2 -> node-3 -> node-4 -> node-1, one at a time in name order:
# node-3 goes NotReady while node-1's pair runs, so node-2's pair fails and node-3's is skipped
# before node-4's runs
# shellcheck disable=SC2317 # called through wait_for
client_on() {
    grep -q . <<<"$(kadmin get pods -A -l kperf.io/role=client \
        --field-selector "status.phase=Running,spec.nodeName=$1" -o name 2>/dev/null)"
}
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 3s --omit 0s --all-nodes \
    --parallel 1 --timeout 60s -o json >"$K8S_DIR/sweep.json" 2>"$K8S_DIR/sweep.err" &
kpid=$!
if wait_for 90 client_on node-1; then
    fault "node-notready:node=node-3"
else
    fail "node-1's client never ran: $(tail -3 "$K8S_DIR/sweep.err")"
fi
line="^kperf: warning: skipped pod-to-pod node:node-3 .*: .*node node-3 is NotReady"
if wait_for 120 grep -Eq "$line" "$K8S_DIR/sweep.err"; then
    if kill -0 "$kpid" 2>/dev/null; then
        pass "said while the sweep runs: $(grep -Em1 "$line" "$K8S_DIR/sweep.err" | cut -c1-200)"
    else
        fail "the skipped line came only after kperf ended"
    fi
    n=$(grep -Ec "skipped pod-to-pod node:node-3" "$K8S_DIR/sweep.err")
    if [ "$n" = 1 ]; then pass "one line for the skipped pair"; else fail "$n lines for one skipped pair"; fi
else
    fail "no skipped line on stderr: $(grep -i skip "$K8S_DIR/sweep.err" | head -5)"
fi
wait "$kpid"
fault --clear
if jq -e '[.skipped[]? | select(.placement == "node:node-3")] | length >= 1' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "the report lists it too"
else
    fail "the report does not list node-3 as skipped"
fi
k8s_nothing_left "notready skip"
ks_finish
