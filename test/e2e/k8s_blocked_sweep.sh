#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A port dropped between two nodes (a node firewall rule in kube-sim's node-1 namespace, as a
# security group would) is reported as "blocked", not as a slow figure, while the same-node
# row still measures. Then sweep mode (--all-nodes): one row per node, in ring pairs.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v nft >/dev/null || { echo "SKIP: no nft"; exit 77; }
k8s_up --nodes 3
n1=$(grep -- '-n1$' "$K8S_DIR/netns.list")
[ -n "$n1" ] || { fail "no node-1 namespace in netns.list"; ks_finish; }
ip2=$(kadmin get node node-2 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
TABLE=kperf_e2e_block
ip netns exec "$n1" nft add table inet $TABLE
ip netns exec "$n1" nft add chain inet $TABLE input '{ type filter hook input priority 0; }'
ip netns exec "$n1" nft add rule inet $TABLE input ip saddr "$ip2" tcp dport 5201 drop
kperf_k8s --scenarios host-to-host --tests TCP_RR --duration 1s --nodes node-1,node-2 -o json \
    >"$K8S_DIR/blocked.json" 2>"$K8S_DIR/blocked.err"
rc=$?
ip netns exec "$n1" nft delete table inet $TABLE
if [ "$rc" = 1 ] && jq -e '
    (.results[] | select(.placement == "same-node") | .status == "ok") and
    (.results[] | select(.placement == "other-node") |
        .status == "failed" and (.errors[0].error | startswith("blocked: no answer from")))' \
    "$K8S_DIR/blocked.json" >/dev/null; then
    pass "blocked port: $(jq -r '.results[] | select(.placement == "other-node") | .errors[0].error' "$K8S_DIR/blocked.json" | cut -c1-120)"
else
    fail "blocked port: rc=$rc $(jq -c '[.results[] | {placement, status, errors}]' "$K8S_DIR/blocked.json" | cut -c1-300)"
fi
k8s_nothing_left "blocked"

kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 1s --all-nodes -o json \
    >"$K8S_DIR/sweep.json" 2>"$K8S_DIR/sweep.err"
if jq -e '[.results[] | .placement] | sort == ["node:node-1", "node:node-2", "node:node-3", "same-node"]' \
    "$K8S_DIR/sweep.json" >/dev/null && jq -e 'all(.results[]; .status == "ok")' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "sweep: one row per node"
else
    fail "sweep: $(jq -c '[.results[] | {placement, status}]' "$K8S_DIR/sweep.json")"
fi
k8s_nothing_left "sweep"
ks_finish
