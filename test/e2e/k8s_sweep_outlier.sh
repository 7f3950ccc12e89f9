#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A slow node is found: kube-sim's slow-node fault (a 1 Mbit/s tbf rate limit on node-4's
# underlay link; tbf rather than netem delay, which needs sch_netem that not every kernel has)
# on a 6-node cluster; `kperf run --all-nodes` measures every node in ring pairs (each node client
# once and server once; 3 node-disjoint pairs at a time) with TCP_RR, takes a second look at the
# flagged node (its two pairs measured again, one at a time: 2 samples each), and its verdict
# flags exactly node-4 as the outlier, in JSON, CSV and the table. Short
# durations keep it well under a minute. (TCP_STREAM is left out: on kube-sim all "nodes" share
# the machine's CPUs, and streams of concurrent pairs starve each other, which made a healthy
# neighbour look slow in one run of five.)
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v tc >/dev/null || { echo "SKIP: no tc"; exit 77; }
k8s_up --nodes 6
"$KS" fault --state-dir "$K8S_DIR" "slow-node:node=node-4,mbit=1" >/dev/null ||
    { fail "kube-sim fault slow-node"; ks_finish; }
start=$(date +%s)
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 1s --omit 0s --all-nodes \
    --parallel 3 -o json >"$K8S_DIR/sweep.json" 2>"$K8S_DIR/sweep.err"
rc=$?
wall=$(( $(date +%s) - start ))
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
if [ "$rc" = 0 ] && jq -e '
    ([.results[] | select((.placement | startswith("node:")) and .test == "TCP_RR") | .placement]
        | sort == ["node:node-1", "node:node-2", "node:node-3", "node:node-4", "node:node-5",
                   "node:node-6"])
    and ([.metadata.sweep.pairs[] | .round] == [0, 1, 0, 1, 0, 1])
    and ([.metadata.sweep.pairs[] | .server] | sort ==
        ["node-1", "node-2", "node-3", "node-4", "node-5", "node-6"])' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "sweep: 6 ring pairs in 2 rounds, every node client once and server once (${wall}s)"
else
    fail "sweep: rc=$rc $(jq -c '[.results[] | {placement, status}]' "$K8S_DIR/sweep.json" 2>&1 | cut -c1-300) $(tail -3 "$K8S_DIR/sweep.err")"
fi
# node-4 (1 Mbit/s: p50 in the hundreds of us) must be flagged and confirmed, and its ring
# neighbours node-3 and node-5 must not be. Another node may be flagged only by this VM's noise
# (one CI run: node-1 at 36 us against a 27 us median, CV 14%), never near node-4's figure.
if jq -e '(.metadata.sweep.outliers | index("node-4")) and
    (.metadata.sweep.confirmed | index("node-4")) and
    ([.results[] | select(.placement == "node:node-4" or .placement == "node:node-3")
        | .samples | length] == [2, 2]) and
    ([.metadata.sweep.nodes[] | select(.name == "node-3" or .name == "node-5") | .verdict]
        == ["ok", "ok"]) and
    ([.metadata.sweep.nodes[] | .metrics | to_entries[0].value.value] | sort | .[2]) as $med |
    all(.metadata.sweep.nodes[] | select(.verdict == "outlier" and .name != "node-4");
        (.metrics | to_entries[0].value.value) < 2 * $med) and
    ([.metadata.sweep.nodes[] | select(.verdict == "ok")] | length >= 4) and
    all(.metadata.sweep.nodes[]; .instance_type and .zone and .kernel)' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "the slowed node-4 is an outlier, its neighbours are not: $(jq -c '[.metadata.sweep.nodes[] | {name, verdict, p50: (.metrics | to_entries[0].value.value | floor)}]' "$K8S_DIR/sweep.json")"
else
    fail "verdict: $(jq -c '.metadata.sweep | {outliers, nodes: [.nodes[] | {name, verdict, metrics}]}' "$K8S_DIR/sweep.json" | cut -c1-600)"
fi
"$KPERF" report -o csv "$K8S_DIR/sweep.json" >"$K8S_DIR/sweep.csv" 2>&1
"$KPERF" report -o table "$K8S_DIR/sweep.json" >"$K8S_DIR/sweep.txt" 2>&1
if head -1 "$K8S_DIR/sweep.csv" | grep -q ',node_verdict$' &&
    grep -q '^pod-to-pod,node:node-4,TCP_RR,.*,outlier$' "$K8S_DIR/sweep.csv" &&
    grep -q '^pod-to-pod,node:node-3,TCP_RR,.*,ok$' "$K8S_DIR/sweep.csv" &&
    grep -Eq 'outlier +node-4' "$K8S_DIR/sweep.txt" &&
    grep -q "$(jq -r '.metadata.sweep.outliers | length' "$K8S_DIR/sweep.json") outlier" "$K8S_DIR/sweep.txt"; then
    pass "CSV and table show the verdict"
else
    fail "CSV/table: $(head -3 "$K8S_DIR/sweep.csv") / $(grep -i sweep -A7 "$K8S_DIR/sweep.txt")"
fi
if [ "$wall" -le 60 ]; then pass "sweep of 6 nodes in ${wall}s"; else fail "sweep took ${wall}s (> 60s)"; fi
k8s_nothing_left "sweep"
ks_finish
