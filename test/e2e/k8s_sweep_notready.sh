#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A node that goes NotReady mid-sweep is reported and skipped, and the sweep goes on. 6 nodes,
# ring pairs node-i -> node-(i+1) run one at a time (--parallel 1) in name order. Three faults
# (kube-sim node-notready: Ready=Unknown, the node's pods not Ready, its network dropped):
#  * node-3 while node-1's pair runs: node-2's pair (server node-3) fails, kperf reads both
#    nodes, and node-3's own pair (not run yet) is skipped with the reason;
#  * node-5 once its own client pod is Ready: kperf's pod watch sees the pod turn not Ready,
#    reads the node and ends that pair at once (not at --timeout);
#  * node-6 once its client pod runs but before it is Ready (kube-sim ready-delay keeps it not
#    Ready): no pod event follows, so kperf finds the node down when it reads the node of the
#    not-Ready pod between watch slices (K8S_WAIT_NODE_CHECK_MS, 15 s), again not at --timeout.
#    Each fault is injected at a state the test has seen, so each case takes its own path.
# The other pairs (node-1, node-4) are measured; the faulted nodes' verdict is "skipped".
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 6

# the phase of the kperf client pod on node $1 ("" when none), and its Ready condition
client_phase() {
    kadmin get pods -A -l app.kubernetes.io/managed-by=kperf,kperf.io/role=client -o json |
        jq -r --arg n "$1" '[.items[] | select(.spec.nodeName == $n) |
            .status.phase + "/" + ([.status.conditions[]? | select(.type == "Ready") | .status][0] // "")] |
            last // ""'
}
client_running() { [[ "$(client_phase "$1")" == Running/* ]]; }
client_ready() { [ "$(client_phase "$1")" = Running/True ]; }
# node_fault NODE: node-notready on NODE
node_fault() {
    "$KS" fault --state-dir "$K8S_DIR" "node-notready:node=$1" >/dev/null ||
        fail "kube-sim fault $1"
}
# pair_ends NODE T0 WHY: the pair of client NODE ended, naming a NotReady node, within 30 s of T0
pair_ends() {
    if wait_for 30 grep -q "node:$1 .*NotReady" "$K8S_DIR/sweep.err"; then
        pass "$1's pair ended $(($(date +%s) - $2))s after the fault ($3; --timeout is 60s)"
    else
        fail "$1's pair did not end within 30s of the fault: $(tail -3 "$K8S_DIR/sweep.err")"
    fi
}

start=$(date +%s)
# 6 s pairs: each fault below lands while a pair measures, after a kubectl poll and a kube-sim
# CLI start (~1 s, more on a loaded machine); a pair that ended first would measure "ok"
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 6s --omit 0s --all-nodes \
    --parallel 1 --timeout 60s -o json >"$K8S_DIR/sweep.json" 2>"$K8S_DIR/sweep.err" &
kpid=$!
if wait_for 90 client_running node-1; then
    node_fault node-3
    # the servers are Ready by now: from here a container started on node-6 stays not Ready
    "$KS" fault --state-dir "$K8S_DIR" "ready-delay:node=node-6,delay=120s" >/dev/null ||
        fail "kube-sim fault ready-delay node-6"
else
    fail "node-1's client pod never ran: $(tail -3 "$K8S_DIR/sweep.err")"
fi
t5=$(date +%s)
if wait_for 120 client_ready node-5; then
    t5=$(date +%s)
    node_fault node-5
    pair_ends node-5 "$t5" "the pod turned not Ready"
else
    fail "node-5's client pod never was Ready: $(tail -3 "$K8S_DIR/sweep.err")"
fi
t6=$(date +%s)
if wait_for 60 client_running node-6; then
    t6=$(date +%s)
    if client_ready node-6; then
        fail "node-6's client is Ready despite ready-delay: the case below is not the one meant"
    fi
    node_fault node-6
    pair_ends node-6 "$t6" "a not-Ready pod's node read between watch slices"
else
    fail "node-6's client pod never ran: $(tail -3 "$K8S_DIR/sweep.err")"
fi
wait "$kpid"
rc=$?
wall=$(($(date +%s) - start))
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
[ "$rc" = 1 ] && pass "kperf exits 1 (failed rows) after ${wall}s" ||
    fail "kperf rc=$rc (want 1): $(tail -3 "$K8S_DIR/sweep.err")"

rows() { jq -c --arg p "$1" '[.results[] | select(.placement == $p)]' "$K8S_DIR/sweep.json"; }
if jq -e '[.results[] | select(.status == "ok" and (.placement | startswith("node:"))) | .placement] | sort ==
        ["node:node-1", "node:node-4"]' "$K8S_DIR/sweep.json" >/dev/null; then
    pass "node-1 and node-4 measured"
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
for n in node-5 node-6; do
    if jq -e --arg p "node:$n" --arg re "node $n is NotReady: Ready=Unknown" \
        '[.results[] | select(.placement == $p)] | length == 1 and
        (.[0].status == "failed") and (.[0].errors[0].error | test($re))' \
        "$K8S_DIR/sweep.json" >/dev/null; then
        pass "$n's pair failed, naming $n NotReady"
    else
        fail "$n row: $(rows "node:$n" | cut -c1-400)"
    fi
done
if jq -e '[.metadata.sweep.nodes[] | select(.verdict == "skipped") | .name] == ["node-3", "node-5", "node-6"]
        and (.metadata.sweep.outliers | index("node-3") | not)' "$K8S_DIR/sweep.json" >/dev/null; then
    pass "verdict: node-3, node-5 and node-6 skipped"
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
