#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A slow node is found: kube-sim's slow-node fault (a 1 Mbit/s tbf rate limit on node-4's
# underlay link; tbf rather than netem delay, which needs sch_netem that not every kernel has)
# on a 6-node cluster; `kperf run --all-nodes` measures every node in ring pairs (each node client
# once and server once; 3 node-disjoint pairs at a time) with TCP_RR, takes a second look at the
# flagged node (its two pairs measured again, one at a time: 2 samples each), and its verdict
# flags node-4 as the outlier, in JSON, CSV and the table. Short
# durations keep it well under a minute. (TCP_STREAM is left out: on kube-sim all "nodes" share
# the machine's CPUs, and streams of concurrent pairs starve each other, which made a healthy
# neighbour look slow in one run of five.)
# Then the next night after a node group roll (issue 30): a plain run with --nodes-from the
# sweep's report, whose node A (node-1) is renamed node-old-1 there (replaced: a new name,
# same shape) and whose node B (node-4) is cordoned (being drained): kperf picks nodes of the
# same shape (arch, instance type sim.large, node group perf, zone preferred), node-5 (another
# instance type) and node-4 are excluded in the ranked table, and the report says which
# nodes were substituted and why.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v tc >/dev/null || { echo "SKIP: no tc"; exit 77; }
labels=(--label node-5=node.kubernetes.io/instance-type=sim.xlarge)
for n in 1 2 3 4 5; do labels+=(--label "node-$n=eks.amazonaws.com/nodegroup=perf"); done
k8s_up --nodes 6 "${labels[@]}" --label node-6=eks.amazonaws.com/nodegroup=other
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
# node-4 (1 Mbit/s: p50 in the hundreds of us) must be flagged and confirmed. Its ring
# neighbours node-3 and node-5 each have one slow pair (with node-4) and one good pair; the rule
# judges a node on the better of its pairs, so each neighbour's value must be exactly the best
# p50 of its good pair (node-2 -> node-3 for node-3, node-5 -> node-6 for node-5), far from
# node-4's. Whether that value is then flagged is this VM's noise, not the rule: kube-sim's
# "nodes" share two CPUs, and a pair's p50 is bimodal (about 26 us, or about 35 us when the
# scheduler puts its ends on different CPUs for the whole test; 15 local runs: 6 had a node at
# 33-36 us, and twice the second look saw the slow mode again, once on node-5, once on node-1
# in CI). So a node other than node-4 may be flagged only below 2x the median, and at most one
# (6 nodes, the median is in the fast mode only when 3 or more are in it, see the count below).
if jq -e '
    def best(pl): [.results[] | select(.placement == pl and .test == "TCP_RR")
        | [.aggregate.latency_us.p50] + [.samples[].latency_us.p50] | map(select(. > 0)) | min][0];
    def value(n): [.metadata.sweep.nodes[] | select(.name == n) | .metrics | to_entries[0].value.value][0];
    (.metadata.sweep.outliers | index("node-4")) and
    (.metadata.sweep.confirmed | index("node-4")) and
    ([.results[] | select(.placement == "node:node-4" or .placement == "node:node-3")
        | .samples | length] == [2, 2]) and
    (value("node-3") == best("node:node-2")) and (value("node-5") == best("node:node-5")) and
    ([.metadata.sweep.nodes[] | .metrics | to_entries[0].value.value] | sort | .[2]) as $med |
    (value("node-4") > 5 * $med) and
    all(.metadata.sweep.nodes[] | select(.verdict == "outlier" and .name != "node-4");
        (.metrics | to_entries[0].value.value) < 2 * $med) and
    ([.metadata.sweep.nodes[] | select(.verdict == "ok")] | length >= 4) and
    all(.metadata.sweep.nodes[]; .instance_type and .zone and .kernel)' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "the slowed node-4 is an outlier, its neighbours are judged on their good pairs: $(jq -c '[.metadata.sweep.nodes[] | {name, verdict, p50: (.metrics | to_entries[0].value.value | floor)}]' "$K8S_DIR/sweep.json")"
else
    fail "verdict: $(jq -c '.metadata.sweep | {outliers, confirmed, nodes: [.nodes[] | {name, verdict, p50: (.metrics | to_entries[0].value.value)}]}' "$K8S_DIR/sweep.json") rows: $(jq -c '[.results[] | select(.test == "TCP_RR") | {placement, p50: [.samples[].latency_us.p50]}]' "$K8S_DIR/sweep.json")"
fi
"$KPERF" report -o csv "$K8S_DIR/sweep.json" >"$K8S_DIR/sweep.csv" 2>&1
"$KPERF" report -o table "$K8S_DIR/sweep.json" >"$K8S_DIR/sweep.txt" 2>&1
csv_verdicts=1 # each node's row carries the verdict the JSON gives that node
for n in 1 2 3 4 5 6; do
    v=$(jq -r --arg n "node-$n" '.metadata.sweep.nodes[] | select(.name == $n) | .verdict' \
        "$K8S_DIR/sweep.json")
    grep -q "^pod-to-pod,node:node-$n,TCP_RR,.*,$v\$" "$K8S_DIR/sweep.csv" || csv_verdicts=0
done
if head -1 "$K8S_DIR/sweep.csv" | grep -q ',node_verdict$' && [ "$csv_verdicts" = 1 ] &&
    grep -q '^pod-to-pod,node:node-4,TCP_RR,.*,outlier$' "$K8S_DIR/sweep.csv" &&
    grep -Eq 'outlier +node-4' "$K8S_DIR/sweep.txt" &&
    grep -q "$(jq -r '.metadata.sweep.outliers | length' "$K8S_DIR/sweep.json") outlier" "$K8S_DIR/sweep.txt"; then
    pass "CSV and table show the verdict"
else
    fail "CSV/table: $(head -3 "$K8S_DIR/sweep.csv") / $(grep -i sweep -A7 "$K8S_DIR/sweep.txt")"
fi
# Not a speed check: the rounds above prove the pairs ran three at a time. This bound only
# guards a hang (about 10x the ~50 s a quiet 2-vCPU machine takes); the time is printed.
if [ "$wall" -le 600 ]; then pass "sweep of 6 nodes ended (${wall}s)"; else fail "sweep took ${wall}s: hung? (> 600s)"; fi
k8s_nothing_left "sweep"

# --- the next night, after a node group roll: --nodes-from picks nodes of the same shape -----
if jq -e '[.metadata.nodes[] | [.name, .role, .instance_type, .zone, .node_group]] ==
        [["node-1", "server", "sim.large", "sim-1a", "eks.amazonaws.com/nodegroup=perf"],
         ["node-4", "client", "sim.large", "sim-1a", "eks.amazonaws.com/nodegroup=perf"]]' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "the report records each role's shape (instance type, zone, node group)"
else
    fail "nodes: $(jq -c .metadata.nodes "$K8S_DIR/sweep.json")"
fi
jq '(.metadata.nodes[] | select(.name == "node-1") | .name) = "node-old-1"' \
    "$K8S_DIR/sweep.json" >"$K8S_DIR/night1.json"
kadmin cordon node-4 >/dev/null || fail "cordon node-4"
start=$(date +%s)
kperf_k8s -v --scenarios pod-to-pod --tests TCP_RR --duration 1s --omit 0s \
    --nodes-from "$K8S_DIR/night1.json" -o json >"$K8S_DIR/night2.json" 2>"$K8S_DIR/night2.err"
rc=$?
wall=$(( $(date +%s) - start ))
kadmin uncordon node-4 >/dev/null || fail "uncordon node-4"
if [ "$rc" = 0 ] && jq -e '
    [.metadata.nodes[] | .name] == ["node-1", "node-2"] and
    ([.metadata.nodes_substituted[] | [.role, .was, .now]] ==
        [["server", "node-old-1", "node-1"], ["client", "node-4", "node-2"]]) and
    (.metadata.nodes_substituted[0].why | startswith("node node-old-1 is gone")) and
    (.metadata.nodes_substituted[1].why | startswith("node node-4 can no longer run agents: cordoned")) and
    ([.results[] | .status] | all(. == "ok"))' "$K8S_DIR/night2.json" >/dev/null; then
    pass "night 2 (${wall} s): node-old-1 -> node-1 (gone), node-4 -> node-2 (cordoned), measured"
else
    fail "night 2: rc $rc: $(jq -c '.metadata | {nodes, nodes_substituted}' "$K8S_DIR/night2.json" 2>&1 | cut -c1-600) $(tail -3 "$K8S_DIR/night2.err")"
fi
if jq -e '[.metadata.node_table[] | [.name, .rank, .excluded]] | .[0] == ["node-1", 1, null]
        and (.[] | select(.[0] == "node-5") | .[2] | test("instance type sim.xlarge, not sim.large"))
        and (.[] | select(.[0] == "node-4") | .[2] | test("cordoned"))' \
    "$K8S_DIR/night2.json" >/dev/null &&
    grep -q "^rank node " "$K8S_DIR/night2.err" &&
    grep -q "the client node node-4 is replaced by node-2: node node-4 can no longer run agents" \
        "$K8S_DIR/night2.err"; then
    pass "the ranked table (stderr and metadata.node_table) says why node-4 and node-5 were not taken"
else
    fail "table: $(jq -c '.metadata.node_table' "$K8S_DIR/night2.json" | cut -c1-600)"
fi
sed -n '/^rank node /,/^kperf: /p' "$K8S_DIR/night2.err" | grep -v '^kperf: ' | sed 's/^/# /'
python3 "$KPERF_SRC/scripts/check-docs.py" check "$KPERF_SRC/docs/kubernetes.md" \
    k8s_sweep_outlier.sh "$K8S_DIR/night2.err" ||
    fail "docs/kubernetes.md's ranked table drifted from what kperf printed"
if grep -q "^node node-2 (client, .*in place of node-4" <<<"$("$KPERF" report "$K8S_DIR/night2.json" 2>&1)"; then
    pass "the text report: $("$KPERF" report "$K8S_DIR/night2.json" 2>&1 | grep -m1 "^node node-2 " | cut -c1-160)"
else
    fail "text report: $("$KPERF" report "$K8S_DIR/night2.json" 2>&1 | grep "^node ")"
fi
k8s_nothing_left "night 2"
ks_finish
