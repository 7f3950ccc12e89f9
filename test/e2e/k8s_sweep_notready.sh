#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A node that goes NotReady mid-sweep is reported and skipped, and the sweep goes on. 6 nodes,
# ring pairs node-i -> node-(i+1) run one at a time (--parallel 1) in name order. Two faults
# (kube-sim node-notready: Ready=Unknown, the node's pods not Ready, its network dropped):
#  * node-3 while node-1's pair runs: node-2's pair (server node-3) fails, kperf reads both
#    nodes, and node-3's own pair (not run yet) is skipped with the reason;
#  * node-5 once its own client pod runs: kperf's pod watch sees the pod turn not Ready, reads
#    the node and ends that pair at once (not at --timeout).
# The other pairs (node-1, node-4, node-6) are measured; both nodes' verdict is "skipped".
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 6

# the phase of the kperf client pod on node $1 ("" when none)
client_phase() {
    kadmin get pods -A -l app.kubernetes.io/managed-by=kperf,kperf.io/role=client -o json |
        jq -r --arg n "$1" '[.items[] | select(.spec.nodeName == $n) | .status.phase] | last // ""'
}
client_running() { [ "$(client_phase "$1")" = Running ]; }

start=$(date +%s)
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 3s --omit 0s --all-nodes \
    --parallel 1 --timeout 60s -o json >"$K8S_DIR/sweep.json" 2>"$K8S_DIR/sweep.err" &
kpid=$!
if wait_for 90 client_running node-1; then
    "$KS" fault --state-dir "$K8S_DIR" "node-notready:node=node-3" >/dev/null ||
        fail "kube-sim fault node-3"
else
    fail "node-1's client pod never ran: $(tail -3 "$K8S_DIR/sweep.err")"
fi
if wait_for 120 client_running node-5; then
    t5=$(date +%s)
    "$KS" fault --state-dir "$K8S_DIR" "node-notready:node=node-5" >/dev/null ||
        fail "kube-sim fault node-5"
else
    fail "node-5's client pod never ran: $(tail -3 "$K8S_DIR/sweep.err")"
    t5=$(date +%s)
fi
# node-5's pair ends when kperf sees the pod not Ready (well before --timeout 60s)
if wait_for 30 grep -q 'node:node-5 .*NotReady' "$K8S_DIR/sweep.err"; then
    pass "node-5's pair ended $(($(date +%s) - t5))s after the fault (--timeout is 60s)"
else
    fail "node-5's pair did not end within 30s of the fault: $(tail -3 "$K8S_DIR/sweep.err")"
fi
wait "$kpid"
rc=$?
wall=$(($(date +%s) - start))
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
[ "$rc" = 1 ] && pass "kperf exits 1 (failed rows) after ${wall}s" ||
    fail "kperf rc=$rc (want 1): $(tail -3 "$K8S_DIR/sweep.err")"

rows() { jq -c --arg p "$1" '[.results[] | select(.placement == $p)]' "$K8S_DIR/sweep.json"; }
if jq -e '[.results[] | select(.status == "ok" and (.placement | startswith("node:"))) | .placement] | sort ==
        ["node:node-1", "node:node-4", "node:node-6"]' "$K8S_DIR/sweep.json" >/dev/null; then
    pass "node-1, node-4 and node-6 measured"
else
    fail "measured rows: $(jq -c '[.results[] | {placement, status}]' "$K8S_DIR/sweep.json")"
fi
if jq -e '[.results[] | select(.placement == "node:node-2")] | length == 1 and
        (.[0].status == "failed") and (.[0].errors[0].error | test("server node node-3 is NotReady"))' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "node-2's pair failed, naming its server node-3 NotReady"
else
    fail "node-2 row: $(rows node:node-2 | cut -c1-400)"
fi
if jq -e '[.skipped[]? | select(.placement == "node:node-3")] | length >= 1 and
        all(.[]; .reason | test("node node-3 is NotReady: Ready=Unknown"))' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "node-3's pair skipped: $(jq -c '[.skipped[] | select(.placement == "node:node-3")][0].reason' "$K8S_DIR/sweep.json")"
else
    fail "node-3 not skipped: $(jq -c '.skipped' "$K8S_DIR/sweep.json" | cut -c1-400) $(rows node:node-3 | cut -c1-300)"
fi
if jq -e '[.results[] | select(.placement == "node:node-5")] | length == 1 and
        (.[0].status == "failed") and (.[0].errors[0].error | test("node node-5 is NotReady: Ready=Unknown"))' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "node-5's pair failed, naming node-5 NotReady"
else
    fail "node-5 row: $(rows node:node-5 | cut -c1-400)"
fi
if jq -e '[.metadata.sweep.nodes[] | select(.verdict == "skipped") | .name] == ["node-3", "node-5"]
        and (.metadata.sweep.outliers | index("node-3") | not)' "$K8S_DIR/sweep.json" >/dev/null; then
    pass "verdict: node-3 and node-5 skipped"
else
    fail "verdicts: $(jq -c '[.metadata.sweep.nodes[] | {name, verdict, skipped}]' "$K8S_DIR/sweep.json" | cut -c1-500)"
fi
"$KPERF" report -o table "$K8S_DIR/sweep.json" >"$K8S_DIR/sweep.txt" 2>&1
if grep -Eq 'skipped +node-3 .*NotReady' "$K8S_DIR/sweep.txt"; then
    pass "the table lists node-3 as skipped with the reason"
else
    fail "table: $(grep -A8 -i 'sweep:' "$K8S_DIR/sweep.txt")"
fi
k8s_nothing_left "sweep with NotReady nodes"
ks_finish
