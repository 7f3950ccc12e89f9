#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pod-to-external on kube-sim: a kperf-agent server on an "external host" (an address on
# kube-sim's underlay, outside every node and pod network, routed back to node-1's pod CIDR as
# a VPC route table would), measured in both directions from a pod with --external-server,
# together with every in-cluster scenario: --scenarios all gives every row.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
EXT_IP=198.19.0.250
EXT_PORT=5301
k8s_external_host "$EXT_IP" node-1 node-2 node-3
k8s_external_start --port $EXT_PORT --bind $EXT_IP
kperf_k8s --scenarios all --tests TCP_RR,TCP_STREAM --duration 1s \
    --external-server "$EXT_IP:$EXT_PORT" -o json >"$K8S_DIR/all.json" 2>"$K8S_DIR/all.err"
rc=$?
[ "$rc" = 0 ] && pass "run exits 0" || { fail "run exit $rc"; tail -5 "$K8S_DIR/all.err"; }
if jq -e '[.results[] | select(.scenario == "pod-to-external" and .status == "ok") |
          "\(.test)/\(.reverse)"] | sort == ["TCP_RR/false", "TCP_STREAM/false", "TCP_STREAM/true"]' \
    "$K8S_DIR/all.json" >/dev/null; then
    pass "pod-to-external: TCP_RR, TCP_STREAM both directions"
else
    fail "pod-to-external rows: $(jq -c '[.results[] | select(.scenario == "pod-to-external") | {test, reverse, status}]' "$K8S_DIR/all.json")"
fi
n=$(jq '[.results[] | select(.status == "ok")] | length' "$K8S_DIR/all.json")
[ "$n" = 15 ] && pass "all scenarios: $n rows measured" || fail "only $n rows measured (want 15)"
jq -e '.metadata.external_server == "198.19.0.250:5301" and (.skipped | length == 0)' \
    "$K8S_DIR/all.json" >/dev/null && pass "metadata names the external server, nothing skipped" ||
    fail "metadata/skips: $(jq -c '{e: .metadata.external_server, s: .skipped}' "$K8S_DIR/all.json")"
k8s_nothing_left "external"
ks_finish
