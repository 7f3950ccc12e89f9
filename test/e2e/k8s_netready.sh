#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy enforcement readiness per node (issue 33 part 1) on a 2-node kube-sim, which
# enforces NetworkPolicy with nftables (kubesim/netpol.py): `kperf run --netpol-readiness`
# (one short TCP_RR row) gives metadata.netpol with policy_deny_s and policy_allow_s for node-1
# and node-2; under netpol-delay:node=node-2,delay=2s node-2's deny time is over 1 s above
# node-1's (a generous bound: behaviour, not speed), and kperf compare of the clean run vs the
# faulted one exits 3 naming node-2. The targets, probers and policies are gone after each
# run. `--local --netpol-readiness` is refused in one line.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 2
ARGS=(--scenarios pod-to-pod --same-node --tests TCP_RR --duration 1s --timeout 30s
    --netpol-readiness)

# np_run NAME: a run into NAME.json with a figure for both nodes
np_run() {
    kperf_k8s "${ARGS[@]}" -o json >"$K8S_DIR/$1.json" 2>"$K8S_DIR/$1.err"
    local rc=$?
    if [ "$rc" = 0 ] && jq -e '.metadata.netpol.nodes | length == 2 and
            all(.[]; (.policy_deny_s | type == "number") and (.policy_allow_s | type == "number"))' \
        "$K8S_DIR/$1.json" >/dev/null; then
        pass "$1: deny and allow times for both nodes"
    else
        fail "$1: rc=$rc"; tail -5 "$K8S_DIR/$1.err"; jq -c '.metadata.netpol' "$K8S_DIR/$1.json"
    fi
    jq -r '.metadata.netpol.nodes[] | "\(.node): deny \(.policy_deny_s) s (\(.policy_early) early) allow \(.policy_allow_s) s \(.error // "")"' \
        "$K8S_DIR/$1.json"
    k8s_nothing_left "$1"
    [ -z "$(kadmin get networkpolicies -A -l app.kubernetes.io/managed-by=kperf -o name 2>&1)" ] &&
        pass "$1: no NetworkPolicy left" || fail "$1: NetworkPolicies left"
}

np_run clean
"$KS" fault --state-dir "$K8S_DIR" 'netpol-delay:node=node-2,delay=2s' >/dev/null || fail "fault netpol-delay"
np_run faulted
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null || fail "fault --clear"
jq -e '.metadata.netpol.nodes | (map(select(.node == "node-2"))[0].policy_deny_s) -
        (map(select(.node == "node-1"))[0].policy_deny_s) > 1' "$K8S_DIR/faulted.json" >/dev/null &&
    pass "faulted: node-2's deny took over 1 s longer than node-1's" ||
    fail "faulted: node-2 not slower: $(jq -c '.metadata.netpol.nodes' "$K8S_DIR/faulted.json")"

"$KPERF" compare "$K8S_DIR/clean.json" "$K8S_DIR/faulted.json" -o json >"$K8S_DIR/cmp.json" 2>/dev/null
rc=$?
regressed=$(jq -r '[.netpol[] | select(.verdict == "regression") | .node] | unique | join(", ")' "$K8S_DIR/cmp.json")
if [ "$rc" = 3 ] && [ "$regressed" = node-2 ]; then
    pass "compare clean vs faulted: exit 3, regression on node-2"
else
    fail "compare clean vs faulted: exit $rc, regressions on '$regressed'"
fi

out=$("$KPERF" run --local --netpol-readiness 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "does not apply with --local" <<<"$out" &&
    pass "--local --netpol-readiness refused: $out" || fail "--local: exit $rc: $out"
ks_finish
