#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy enforcement readiness per node (issue 33 part 1) on a 3-node kube-sim, which
# enforces NetworkPolicy with nftables (kubesim/netpol.py): `kperf run --netpol-readiness`
# (one short TCP_RR row) gives metadata.netpol with policy_deny_s, policy_allow_s and
# pod_deny_s for every node (a new pod under an egress deny refused from its first probe:
# pod_early 0). Two clean runs compare clean on those figures (exit 0). Under netpol-delay:node=node-2,delay=2s
# node-2's deny and new-pod deny are over 1 s above node-1's (generous bounds: behaviour, not
# speed) and only node-2's new pod got probes through; kperf compare of the clean run vs the
# faulted one exits 3 naming node-2 only, the new-pod figure among its regressions. The targets,
# probers and policies are gone after each run. `--local --netpol-readiness` is refused in one
# line.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
ARGS=(--scenarios pod-to-pod --same-node --tests TCP_RR --duration 1s --timeout 30s
    --netpol-readiness)

# np_run NAME: a run into NAME.json with every figure for all three nodes
np_run() {
    kperf_k8s "${ARGS[@]}" -o json >"$K8S_DIR/$1.json" 2>"$K8S_DIR/$1.err"
    local rc=$?
    if [ "$rc" = 0 ] && jq -e '.metadata.netpol.nodes | length == 3 and
            all(.[]; (.policy_deny_s | type == "number") and (.policy_allow_s | type == "number")
                and (.pod_deny_s | type == "number") and (.pod_early | type == "number"))' \
        "$K8S_DIR/$1.json" >/dev/null; then
        pass "$1: deny, allow and new-pod deny times for all three nodes"
    else
        fail "$1: rc=$rc"; tail -5 "$K8S_DIR/$1.err"; jq -c '.metadata.netpol' "$K8S_DIR/$1.json"
    fi
    jq -r '.metadata.netpol.nodes[] | "\(.node): deny \(.policy_deny_s) s (\(.policy_early) early) allow \(.policy_allow_s) s new pod deny \(.pod_deny_s) s (\(.pod_early) early) \(.error // "")"' \
        "$K8S_DIR/$1.json"
    k8s_nothing_left "$1"
    [ -z "$(kadmin get networkpolicies -A -l app.kubernetes.io/managed-by=kperf -o name 2>&1)" ] &&
        pass "$1: no NetworkPolicy left" || fail "$1: NetworkPolicies left"
}

# fig RUN NODE FIGURE
fig() {
    jq -r --arg n "$2" --arg f "$3" '.metadata.netpol.nodes[] | select(.node == $n) | .[$f]' \
        "$K8S_DIR/$1.json"
}

# no_early RUN NODE...: the new pod on each NODE got no probe through
no_early() {
    local r=$1 n; shift
    for n in "$@"; do
        [ "$(fig "$r" "$n" pod_early)" = 0 ] && pass "$r: $n's new pod refused from its first probe" ||
            fail "$r: $n's new pod got $(fig "$r" "$n" pod_early) probes through"
    done
}

np_run clean
no_early clean node-1 node-2 node-3
np_run clean2
# judged on their netpol figures only, at the default threshold: the row's latency and the pod
# readiness of two runs on one loaded machine differ by noise that is not this test's
for r in clean clean2; do
    jq 'del(.metadata.readiness)' "$K8S_DIR/$r.json" >"$K8S_DIR/$r.np.json"
done
"$KPERF" compare "$K8S_DIR/clean.np.json" "$K8S_DIR/clean2.np.json" -o json \
    --threshold latency=1000%,p999=1000%,ops=1000%,conn=1000%,throughput=1000%,jitter=1000%,node_cpu=1000%,agent_cpu=1000%,load=1000% \
    >"$K8S_DIR/cmp0.json" 2>"$K8S_DIR/cmp0.err"
rc=$?
[ "$rc" = 0 ] && pass "compare clean vs clean2: exit 0" ||
    fail "compare clean vs clean2: exit $rc: $(jq -c '[.. | objects | select(.verdict? == "regression" or .verdict? == "inconclusive")]' "$K8S_DIR/cmp0.json") $(tail -2 "$K8S_DIR/cmp0.err")"

"$KS" fault --state-dir "$K8S_DIR" 'netpol-delay:node=node-2,delay=2s' >/dev/null || fail "fault netpol-delay"
np_run faulted
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null || fail "fault --clear"
for f in policy_deny_s pod_deny_s; do
    d=$(jq -n --argjson a "$(fig faulted node-2 "$f")" --argjson b "$(fig faulted node-1 "$f")" '$a - $b' 2>/dev/null)
    jq -e -n --argjson d "${d:-0}" '$d > 1' >/dev/null &&
        pass "faulted: node-2's $f over 1 s above node-1's (+$d s)" ||
        fail "faulted: node-2's $f not slower: $(jq -c '.metadata.netpol.nodes' "$K8S_DIR/faulted.json")"
done
[ "$(fig faulted node-2 pod_early)" -gt 0 ] 2>/dev/null &&
    pass "faulted: node-2's new pod got $(fig faulted node-2 pod_early) probes through" ||
    fail "faulted: node-2's new pod got none through"
no_early faulted node-1 node-3

"$KPERF" compare "$K8S_DIR/clean.json" "$K8S_DIR/faulted.json" -o json >"$K8S_DIR/cmp.json" 2>/dev/null
rc=$?
regressed=$(jq -r '[.netpol[] | select(.verdict == "regression") | .node] | unique | join(", ")' "$K8S_DIR/cmp.json")
pod=$(jq -r '[.netpol[] | select(.verdict == "regression" and .figure == "pod_deny_s") | .node] | join(", ")' "$K8S_DIR/cmp.json")
if [ "$rc" = 3 ] && [ "$regressed" = node-2 ] && [ "$pod" = node-2 ]; then
    pass "compare clean vs faulted: exit 3, regressions on node-2 only, pod_deny_s among them"
else
    fail "compare clean vs faulted: exit $rc, regressions on '$regressed' (pod_deny_s: '$pod')"
fi

out=$("$KPERF" run --local --netpol-readiness 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "does not apply with --local" <<<"$out" &&
    pass "--local --netpol-readiness refused: $out" || fail "--local: exit $rc: $out"
ks_finish
