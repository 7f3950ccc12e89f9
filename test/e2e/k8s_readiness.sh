#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pod network readiness (issue 13): `kperf run` on kube-sim reports, per node, how long its
# client pods took from creation to scheduling, to a started sandbox with a network, and to the
# first answered packet; `--pod-churn N` adds N short-lived pods per node. The same run with
# kube-sim's `cni-add-delay:node=node-2,delay=2s` (every new pod on node-2 waits 2 s for its
# network, staying ContainerCreating) must show every node-2 pod's network set-up at least 2 s
# and no other node's (within that run: no check on speed), and `kperf compare` must call it a
# readiness regression. The churn pods are removed at the end and on SIGINT (nothing of kperf's
# is left either way).
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
ARGS=(--scenarios pod-to-pod --tests TCP_RR --duration 1s --omit 0s --nodes node-1,node-2
    --pod-churn 3 --timeout 60s)

run() { # run NAME: a run with ARGS into NAME.json
    kperf_k8s "${ARGS[@]}" -o json >"$K8S_DIR/$1.json" 2>"$K8S_DIR/$1.err"
    local rc=$?
    [ "$rc" = 0 ] && pass "$1: run ok" || { fail "$1: exit $rc"; tail -5 "$K8S_DIR/$1.err"; }
}

# seg NAME NODE KIND SEGMENT: p50 of that segment in NAME.json
seg() {
    jq -r --arg n "$2" --arg k "$3" --arg s "$4" \
        '[.metadata.readiness.nodes[] | select(.node == $n and .kind == $k)][0][$s].p50 // "none"' \
        "$K8S_DIR/$1.json"
}

run base
if jq -e '
    ([.metadata.readiness.nodes[] | select(.kind == "client") | .node] | sort == ["node-1", "node-2"])
    and ([.metadata.readiness.nodes[] | select(.kind == "churn") | {node, pods}] ==
         [{node: "node-1", pods: 3}, {node: "node-2", pods: 3}, {node: "node-3", pods: 3}])
    and all(.metadata.readiness.pods[]; .scheduling_s >= 0 and .network_s >= 0 and
        .first_packet_s >= 0 and (.total_s - .scheduling_s - .network_s - .first_packet_s
        | fabs) < 0.001)' "$K8S_DIR/base.json" >/dev/null; then
    pass "base: readiness of 2 client pods and 3 churn pods per node: $(jq -c '[.metadata.readiness.nodes[] | {node, kind, net: .network_s.p50, total: .total_s.p50}]' "$K8S_DIR/base.json")"
else
    fail "base readiness: $(jq -c '.metadata.readiness' "$K8S_DIR/base.json" | cut -c1-800)"
fi
k8s_nothing_left "base (with --pod-churn)"

"$KS" fault --state-dir "$K8S_DIR" "cni-add-delay:node=node-2" >"$K8S_DIR/bad.out" 2>&1 &&
    fail "cni-add-delay without delay= was accepted" ||
    pass "cni-add-delay without delay= refused: $(tail -1 "$K8S_DIR/bad.out" | cut -c1-120)"
"$KS" fault --state-dir "$K8S_DIR" "cni-add-delay:node=node-2,delay=2s" >/dev/null ||
    { fail "kube-sim fault cni-add-delay"; ks_finish; }
run slow
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
k8s_nothing_left "slow (with --pod-churn)"

# The delay is a floor, judged within the faulted run: every node-2 pod (client and churn)
# waited at least 1.9 s for its network, every pod on the other nodes less (their set-up is
# ~0.2 s, 0.84 s seen on a busy CI machine: 1.9 s is about 10x), and node-2's client pod has
# the delay in its network segment, not in scheduling or first packet (each under 1.9 s).
# Across runs only the figures are shown: a busy machine moves a base run's set-up by hundreds
# of ms either way (issue 27: no check on speed).
for kind in client churn; do
    for node in node-1 node-2 node-3; do
        [ "$kind/$node" = client/node-3 ] && continue
        echo "$kind pods on $node: network set-up p50 $(seg base "$node" "$kind" network_s) s -> $(seg slow "$node" "$kind" network_s) s"
    done
done
if jq -e '[.metadata.readiness.pods[] | select(.node == "node-2") | .network_s] | length == 4 and min >= 1.9' \
    "$K8S_DIR/slow.json" >/dev/null; then
    pass "every pod on node-2 (1 client, 3 churn) waited >= 1.9 s for its network: $(jq -c '[.metadata.readiness.pods[] | select(.node == "node-2") | .network_s]' "$K8S_DIR/slow.json")"
else
    fail "pods on node-2: $(jq -c '[.metadata.readiness.pods[] | select(.node == "node-2")]' "$K8S_DIR/slow.json")"
fi
if jq -e '[.metadata.readiness.pods[] | select(.node != "node-2") | .network_s] | length == 7 and max < 1.9' \
    "$K8S_DIR/slow.json" >/dev/null; then
    pass "no pod on node-1 or node-3 waited the delay: $(jq -c '[.metadata.readiness.pods[] | select(.node != "node-2") | .network_s]' "$K8S_DIR/slow.json")"
else
    fail "pods off node-2: $(jq -c '[.metadata.readiness.pods[] | select(.node != "node-2") | {node, kind, network_s}]' "$K8S_DIR/slow.json")"
fi
for s in scheduling_s first_packet_s; do
    x=$(seg slow node-2 client "$s")
    awk -v x="$x" 'BEGIN { exit !(x != "none" && x >= 0 && x < 1.9) }' &&
        pass "slow: node-2 client $s $x s (not delayed by the 2 s)" ||
        fail "slow: node-2 client $s $x s"
done

if command -v python3 >/dev/null; then
    python3 "$KPERF_SRC/test/tools/validate_report.py" "$KPERF_SRC/docs/report-schema.json" \
        "$K8S_DIR/slow.json" >"$K8S_DIR/schema.out" 2>&1 &&
        pass "the report with readiness matches docs/report-schema.json" ||
        fail "schema: $(head -3 "$K8S_DIR/schema.out")"
fi
"$KPERF" report -o table "$K8S_DIR/slow.json" >"$K8S_DIR/slow.txt" 2>&1
"$KPERF" report -o markdown "$K8S_DIR/slow.json" >"$K8S_DIR/slow.md" 2>&1
if grep -q '^Pod network readiness (seconds, p50 / max)' "$K8S_DIR/slow.txt" &&
    grep -Eq '^node-2 +1 +client +[0-9.]+ / [0-9.]+ +[0-9]+\.[0-9]{3} / ' "$K8S_DIR/slow.txt" &&
    grep -Eq '^node-3 +3 +churn +[0-9.]+ / [0-9.]+ +[0-9]+\.[0-9]{3} / ' "$K8S_DIR/slow.txt" &&
    grep -q '^| node-2 | 1 | client | ' "$K8S_DIR/slow.md"; then
    pass "table and Markdown show readiness per node"
else
    fail "table/markdown: $(grep -A8 'Pod network readiness' "$K8S_DIR/slow.txt")"
fi

# At 1 s (absolute), halfway to the 2 s delay: node-2's figures move by ~2 s, while a busy
# machine moves the other nodes' set-up by up to ~0.65 s between two runs (0.2 -> 0.84 s seen),
# past the default 0.5 s, which would then blame node-1 or node-3 too. The default itself:
"$KPERF" compare -o json "$K8S_DIR/base.json" "$K8S_DIR/base.json" >"$K8S_DIR/cmp-same.json" 2>&1
jq -e '.thresholds.readiness == "0.5" and .summary.readiness_regressions == 0' \
    "$K8S_DIR/cmp-same.json" >/dev/null && pass "compare: readiness threshold 0.5 s by default" ||
    fail "compare default readiness threshold: $(jq -c '[.thresholds, .summary]' "$K8S_DIR/cmp-same.json" | cut -c1-400)"
"$KPERF" compare -o json --threshold readiness=1 "$K8S_DIR/base.json" "$K8S_DIR/slow.json" \
    >"$K8S_DIR/cmp.json" 2>"$K8S_DIR/cmp.err"
rc=$?
if [ "$rc" = 3 ] && jq -e '
    ([.readiness[] | select(.verdict == "regression" and .segment == "network_s" and .stat == "p50")
      | .node] | unique == ["node-2"])
    and .summary.readiness_regressions >= 2 and .thresholds.readiness == "1"' \
    "$K8S_DIR/cmp.json" >/dev/null; then
    pass "compare: exit 3, readiness regressions on node-2 only: $(jq -c '[.readiness[] | select(.verdict == "regression") | {node, kind, segment, stat, delta}]' "$K8S_DIR/cmp.json" | cut -c1-400)"
else
    fail "compare: exit $rc $(jq -c '{readiness, summary}' "$K8S_DIR/cmp.json" | cut -c1-600) $(tail -2 "$K8S_DIR/cmp.err")"
fi

# SIGINT while the churn pods wait for their network: the run stops and removes them
"$KS" fault --state-dir "$K8S_DIR" "cni-add-delay:node=node-2,delay=30s" >/dev/null
"$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "${ARGS[@]}" -o json \
    >"$K8S_DIR/int.json" 2>"$K8S_DIR/int.err" &
pid=$!
churn_pods() { # the whole burst exists (9 client pods), node-2's still without a network
    [ "$(kadmin get pods -A -l kperf.io/role=client -o name 2>/dev/null | wc -l)" -ge 9 ]
}
if wait_for 60 churn_pods; then
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    [ "$rc" = 130 ] && pass "SIGINT during the churn burst: exit 130" ||
        { fail "SIGINT during churn: exit $rc"; tail -5 "$K8S_DIR/int.err"; }
else
    kill -INT "$pid"; wait "$pid"
    fail "the churn burst never started: $(tail -3 "$K8S_DIR/int.err")"
fi
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
k8s_nothing_left "SIGINT during --pod-churn"
ks_finish
