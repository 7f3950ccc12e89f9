#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_under_load.sh - `kperf run --under-load` on kube-sim: pod-to-pod same-node and
# other-node each get the idle TCP_RR and a TCP_RR_LOADED row, measured by one client Job per
# path whose agent runs the TCP_RR while a TCP_STREAM_MULTI fills the path; the loaded rows
# carry the load (bytes moved over the whole latency window) and the increase over the idle
# TCP_RR; nothing is left behind. Timings are not asserted.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --under-load --duration 1s -o json \
    >"$K8S_DIR/r.json" 2>"$K8S_DIR/r.err"
rc=$?
[ "$rc" = 0 ] && pass "run exits 0" || { fail "run exit $rc"; tail -5 "$K8S_DIR/r.err"; }
if jq -e '[.results[] | select(.status == "ok") | "\(.placement)/\(.test)"] | sort ==
          ["other-node/TCP_RR", "other-node/TCP_RR_LOADED", "same-node/TCP_RR", "same-node/TCP_RR_LOADED"]' \
    "$K8S_DIR/r.json" >/dev/null; then
    pass "rows: TCP_RR and TCP_RR_LOADED on both placements"
else
    fail "rows: $(jq -c '[.results[] | {placement, test, status, errors}]' "$K8S_DIR/r.json")"
fi
if jq -e '[.results[] | select(.test == "TCP_RR_LOADED")] | length == 2 and all(
          (.samples[0].load | .test == "TCP_STREAM_MULTI" and .bytes > 1000000 and .throughput_mbps > 1)
          and .samples[0].load.duration_s >= .samples[0].duration_s
          and (.aggregate.latency_increase_us.p50 | type == "number")
          and (.aggregate.idle_latency_us.p99 > 0) and .aggregate.load.throughput_mbps > 1)' \
    "$K8S_DIR/r.json" >/dev/null; then
    pass "loaded rows: the load moved bytes over the latency window; increase over idle"
else
    fail "loaded rows: $(jq -c '[.results[] | select(.test == "TCP_RR_LOADED") | {s: .samples[0].load, d: .samples[0].duration_s, a: .aggregate.latency_increase_us}]' "$K8S_DIR/r.json")"
fi
k8s_nothing_left "under-load"
ks_finish
