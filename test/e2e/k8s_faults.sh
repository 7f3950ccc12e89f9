#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault runs on a 3-node kube-sim: 429 storms and 5xx (run completes), dropped watches and
# 410 Gone (run completes), an image that cannot be pulled (clear error, nothing left), Pod
# Security rejection (clear error naming the label), a Gatekeeper-like rule refusing to delete
# non-empty namespaces (cleanup completes), tainted and NotReady nodes (skipped, or used with
# --tolerations). After every case nothing of kperf's is left.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
QUICK=(--scenarios pod-to-pod --tests TCP_RR --duration 1s --timeout 30s)

fault() { "$KS" fault --state-dir "$K8S_DIR" "$@" >/dev/null || fail "kube-sim fault $*"; }

# run_ok NAME ARGS...: the run exits 0 with every row measured
run_ok() {
    local name=$1; shift
    kperf_k8s "$@" -o json >"$K8S_DIR/$name.json" 2>"$K8S_DIR/$name.err"
    local rc=$?
    if [ "$rc" = 0 ] && jq -e '(.results | length > 0) and all(.results[]; .status == "ok")' \
        "$K8S_DIR/$name.json" >/dev/null; then
        pass "$name: run completes"
    else
        fail "$name: rc=$rc"; tail -5 "$K8S_DIR/$name.err"
    fi
    k8s_nothing_left "$name"
}

# run_fails NAME PATTERN ARGS...: the run exits ${WANT_RC:-1} and stderr matches PATTERN (grep -E)
run_fails() {
    local name=$1 pat=$2; shift 2
    kperf_k8s "$@" -o json >"$K8S_DIR/$name.json" 2>"$K8S_DIR/$name.err"
    local rc=$?
    if [ "$rc" = "${WANT_RC:-1}" ] && grep -Eq "$pat" "$K8S_DIR/$name.err"; then
        pass "$name: fails clearly: $(grep -E "$pat" "$K8S_DIR/$name.err" | head -1 | cut -c1-300)"
    else
        fail "$name: rc=$rc, no /$pat/ in:"; tail -5 "$K8S_DIR/$name.err"
    fi
    k8s_nothing_left "$name"
}

# a 429 storm and, in the same run, a Gatekeeper-like rule refusing to delete non-empty
# namespaces: the run completes and its cleanup too (nothing left)
fault "429:rate=0.3,retry-after=0s;ns-delete-guard"
run_ok "429-storm+delete-guard" "${QUICK[@]}"
n429=$(grep -c ' 429$' "$K8S_DIR/requests.log")
[ "$n429" -gt 0 ] && pass "429-storm: $n429 requests answered 429" || fail "no 429 injected"
fault --clear

fault "500:rate=0.15,retry-after=0s;503:rate=0.15,retry-after=0s"
run_ok "5xx" "${QUICK[@]}"
fault --clear

fault "drop-watch:after=0.5s;gone-watch:rate=0.5"
run_ok "watch-drops-and-410" "${QUICK[@]}" --scenarios pod-to-pod,host-to-host
fault --clear

# a permanent pull error (the registry says "not found"): exit 4, the cluster's failure
WANT_RC=4 run_fails "unknown-image" \
    "(ErrImagePull|ImagePullBackOff) for image ghcr.io/kperf/nothing:1 \(image-pull\)" \
    "${QUICK[@]}" --image ghcr.io/kperf/nothing:1

# Pod Security: an existing namespace that enforces baseline refuses host-to-host
kadmin create namespace kperf-psa >/dev/null
kadmin label namespace kperf-psa pod-security.kubernetes.io/enforce=baseline >/dev/null
run_fails "psa-label" "enforces Pod Security 'baseline'.*kubectl label namespace kperf-psa" \
    "${QUICK[@]}" --scenarios host-to-host -n kperf-psa
# ... and a cluster default of baseline is caught by the server-side dry run
kadmin label namespace kperf-psa pod-security.kubernetes.io/enforce- >/dev/null
fault "psa-default:level=baseline"
run_fails "psa-dry-run" "PodSecurity|Pod Security" "${QUICK[@]}" --scenarios host-to-host -n kperf-psa
fault --clear
kadmin get namespace kperf-psa >/dev/null 2>&1 && pass "psa: a namespace given with -n is kept" ||
    fail "psa: -n namespace was deleted"
kadmin delete namespace kperf-psa --wait=false >/dev/null

# taints and NotReady: node-2 tainted, node-3 NotReady -> only node-1 is eligible
fault "node-taint:node=node-2,key=dedicated,value=perf,effect=NoSchedule;node-notready:node=node-3"
kperf_k8s "${QUICK[@]}" -o json >"$K8S_DIR/taint.json" 2>"$K8S_DIR/taint.err"
if jq -e '(.metadata.nodes | length == 1) and .metadata.nodes[0].name == "node-1" and
          any(.skipped[]; .placement == "other-node")' "$K8S_DIR/taint.json" >/dev/null; then
    pass "taint+notready: only node-1 used, other-node skipped"
else
    fail "taint+notready: $(jq -c '.metadata.nodes' "$K8S_DIR/taint.json")"; tail -3 "$K8S_DIR/taint.err"
fi
k8s_nothing_left "taint+notready"
run_ok "tolerations" "${QUICK[@]}" --tolerations dedicated=perf:NoSchedule --nodes node-2,node-1
jq -e '.metadata.nodes[0].name == "node-2"' "$K8S_DIR/tolerations.json" >/dev/null &&
    pass "tolerations: servers on the tainted node-2" || fail "tolerations: wrong node"
run_fails "notready-named" "node-3 cannot run agents: not Ready" "${QUICK[@]}" --nodes node-3,node-1
fault --clear
ks_finish
