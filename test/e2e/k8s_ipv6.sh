#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_ipv6: the matrix on an IPv6-only kube-sim (--ip-family ipv6): every row ok and marked
# IPv6, the servers' pod IPs in the report IPv6 (2001:2::/48), the Service created IPv6, the
# cluster's families in the provenance; nothing left behind.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3 --ip-family ipv6
R="$K8S_DIR/report6.json"
k8s_record_pods_start "$K8S_DIR/pods6.ndjson"
kperf_k8s --scenarios all --tests TCP_RR,TCP_STREAM,UDP_RR --duration 1s -o json >"$R" \
    2>"$K8S_DIR/run6.err"
rc=$?
k8s_record_pods_stop
[ "$rc" = 0 ] && pass "ipv6-only: run exits 0" || { fail "ipv6-only: run exit $rc"; tail -5 "$K8S_DIR/run6.err"; }
python3 "$KPERF_SRC/test/tools/validate_report.py" "$KPERF_SRC/docs/report-schema.json" "$R" &&
    pass "ipv6-only: report valid" || fail "ipv6-only: report invalid"
n=$(jq '[.results[] | select(.status == "ok")] | length' "$R")
[ "$n" = 18 ] && pass "ipv6-only: 18 rows ok" ||
    fail "ipv6-only: $n rows ok: $(jq -c '[.results[] | select(.status != "ok") | [.scenario, .placement, .test, .status]]' "$R")"
jq -e 'all(.results[]; .ip_family == "IPv6")' "$R" >/dev/null &&
    pass "ipv6-only: rows marked IPv6" || fail "ipv6-only: families $(jq -c '[.results[].ip_family] | unique' "$R")"
jq -e '.metadata.cluster_ip_families == ["IPv6"]' "$R" >/dev/null &&
    pass "ipv6-only: provenance cluster_ip_families [IPv6]" ||
    fail "ipv6-only: provenance $(jq -c '.metadata.cluster_ip_families' "$R")"
# every kperf pod's IP is from 2001:2::/48; the Service the run created was IPv6
bad=$(jq -r -s 'map(select(.status.podIP != null and (.status.podIP | startswith("2001:2:0:") | not))) |
      map(.metadata.name + "=" + .status.podIP) | join(" ")' "$K8S_DIR/pods6.ndjson")
n_pods=$(jq -s 'map(select(.status.podIP != null)) | length' "$K8S_DIR/pods6.ndjson")
[ -z "$bad" ] && [ "$n_pods" -gt 0 ] && pass "ipv6-only: all $n_pods pod states with an IP are IPv6" ||
    fail "ipv6-only: pod IPs not IPv6: $bad"
k8s_nothing_left "ipv6-only"
ks_finish
