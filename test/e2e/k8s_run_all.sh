#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kperf run --scenarios all on a 3-node kube-sim: every row present with real figures, pods
# placed as planned (same-node really on the server's node, host network really host network,
# the service's only backend on node A), the report valid against docs/report-schema.json,
# nothing left behind; every agent pod carries the pod template flags and --pod-overlay (issue
# 30: "the pod overlay and labels appear on the pods"). Prints the controller overhead and the API requests of the run.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
DUR=${K8S_E2E_DURATION:-2}

cat >"$K8S_DIR/overlay.yaml" <<'EOF2'
metadata:
  annotations:
    karpenter.sh/do-not-disrupt: "true"
spec:
  containers:
  - name: server
    env: [{name: KPERF_OVERLAY, value: server}]
  - name: client
    env: [{name: KPERF_OVERLAY, value: client}]
EOF2
k8s_record_pods_start "$K8S_DIR/pods.ndjson"
start=$(date +%s.%N)
kperf_k8s --scenarios all --duration "${DUR}s" -o json --pod-labels team=net \
    --pod-annotations example.com/owner=net-team --agent-requests cpu=150m \
    --pod-overlay "$K8S_DIR/overlay.yaml" >"$K8S_DIR/report.json" 2>"$K8S_DIR/run.err"
rc=$?
end=$(date +%s.%N)
k8s_record_pods_stop
[ "$rc" = 0 ] && pass "run exits 0" || { fail "run exit $rc"; cat "$K8S_DIR/run.err"; }

R="$K8S_DIR/report.json"
python3 "$KPERF_SRC/test/tools/validate_report.py" "$KPERF_SRC/docs/report-schema.json" "$R" &&
    pass "report valid" || fail "report invalid"
# every (scenario, placement) of the three in-cluster scenarios, each test with real figures
for s in pod-to-pod host-to-host pod-to-service; do
    for p in same-node other-node; do
        for t in TCP_RR TCP_STREAM TCP_STREAM_MULTI; do
            if jq -e --arg s "$s" --arg p "$p" --arg t "$t" '
                [.results[] | select(.scenario == $s and .placement == $p and .test == $t)] |
                length == 1 and (.[0] | .status == "ok" and
                                 ((.aggregate.throughput_mbps // 0) > 0 or
                                  (.aggregate.latency_us.p50 // 0) > 0))' "$R" >/dev/null; then
                :
            else
                fail "row $s $p $t missing or empty"
            fi
        done
    done
done
n_rows=$(jq '.results | length' "$R")
[ "$n_rows" -ge 18 ] && pass "$n_rows rows" || fail "only $n_rows rows"
jq -e '.metadata.backend == "k8s" and (.metadata.kubernetes_version | length > 0) and
       (.metadata.nodes | length == 2) and (.metadata.nodes[0].role == "server")' "$R" \
    >/dev/null && pass "metadata: backend, version, node pair" || fail "metadata incomplete"
# MTUs are not in the API objects: they come from what the agents saw (kube-sim links: 1500)
jq -e '.metadata.mtu.pod == 1500 and .metadata.mtu.host == 1500 and
       ([.metadata.nodes[].mtu] == [1500, 1500])' "$R" >/dev/null \
    && pass "metadata: pod/host/node MTUs from the agents" || fail "MTUs: $(jq -c '[.metadata.mtu, [.metadata.nodes[].mtu]]' "$R")"

# placement, from every pod state seen during the run
P="$K8S_DIR/pods.ndjson"
A=$(jq -r '.metadata.nodes[] | select(.role == "server") | .name' "$R")
B=$(jq -r '.metadata.nodes[] | select(.role == "client") | .name' "$R")
last() { jq -s -c 'group_by(.metadata.name) | map(max_by(.metadata.resourceVersion | tonumber)) | .[]' "$P"; }
last >"$K8S_DIR/pods-last.ndjson"
bad=$(jq -r --arg a "$A" --arg b "$B" '
    select(.spec.nodeName != null) |
    (.metadata.labels["kperf.io/role"]) as $role | (.metadata.labels["kperf.io/job"] // "") as $job |
    (.metadata.labels["kperf.io/network"]) as $net |
    if $role == "server" and .spec.nodeName != $a then "server \(.metadata.name) on \(.spec.nodeName)"
    elif $role == "client" and ($job | test("same-node")) and .spec.nodeName != $a then "same-node client \(.metadata.name) on \(.spec.nodeName)"
    elif $role == "client" and ($job | test("other-node")) and .spec.nodeName != $b then "other-node client \(.metadata.name) on \(.spec.nodeName)"
    elif ($net == "host") != (.spec.hostNetwork == true) then "pod \(.metadata.name) network \($net) hostNetwork=\(.spec.hostNetwork)"
    else empty end' "$K8S_DIR/pods-last.ndjson")
n_clients=$(jq -r 'select(.metadata.labels["kperf.io/role"] == "client") | .metadata.name' \
    "$K8S_DIR/pods-last.ndjson" | sort -u | wc -l)
[ -z "$bad" ] && [ "$n_clients" = 6 ] && pass "placement: servers on $A, 6 client pods where planned" ||
    fail "placement: ${bad:-$n_clients client pods}"
# host network pods really share the node's address
jq -e -s 'map(select(.spec.hostNetwork == true and .status.podIP != null)) |
          all(.status.podIP == .status.hostIP) and length > 0' "$K8S_DIR/pods-last.ndjson" \
    >/dev/null && pass "host-network pods use the node IP" || fail "host-network pod IPs"

# the pod template flags and the overlay, on every agent pod the cluster ran
jq -e -s 'map(select(.metadata.labels["kperf.io/role"] != null)) | length > 0 and all(.[];
    .metadata.labels.team == "net" and .metadata.annotations["example.com/owner"] == "net-team" and
    .metadata.annotations["karpenter.sh/do-not-disrupt"] == "true" and
    (.spec.containers[0] | .resources.requests.cpu == "150m" and
     .env == [{name: "KPERF_OVERLAY", value: .name}]))' "$K8S_DIR/pods-last.ndjson" >/dev/null &&
    pass "pod labels, annotations, requests and the overlay on every agent pod" ||
    fail "pod template: $(jq -c -s 'map({n: .metadata.name, l: .metadata.labels.team, c: .spec.containers[0].env})' "$K8S_DIR/pods-last.ndjson" | head -c 600)"

k8s_nothing_left "after a full run"

wall=$(echo "$end - $start" | bc)
meas=$(jq '[.results[] | (.samples // []) | .[] | .duration_s // 0] | add // 0' "$R")
expected=$((18 * DUR))
reqs=$(k8s_user_requests)
echo "figures: wall ${wall}s, planned measurement ${expected}s, overhead $(echo "scale=1; ($wall - $expected) * 100 / $wall" | bc)%, measured sample time ${meas}s, API requests $reqs"
ks_finish
