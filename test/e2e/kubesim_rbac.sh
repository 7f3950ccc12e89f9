#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim RBAC mode: a fixture of Roles/ClusterRoles/bindings is enforced
# for the kubeconfig's user (403 with the apiserver's message), kubectl
# auth can-i (SelfSubjectAccessReview) agrees, admin.kubeconfig bypasses.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
[ -x "$KUBECTL" ] || { echo "SKIP: no kubectl"; exit 77; }
D=$(mktemp -d /tmp/kubesim-rbac.XXXXXX)
ks_cleanup_on_exit "$D"
"$KS" up --nodes 2 --state-dir "$D" --auth cert \
    --rbac "$KPERF_SRC/test/kube-sim/testdata/rbac-fixture.yaml" || { fail "kube-sim up"; 
# the project's own manifests load, and their ServiceAccount can do the basics
M=$KPERF_SRC/manifests
if [ -f "$M/rbac.yaml" ] && [ -f "$M/namespace.yaml" ]; then
    "$KS" down --state-dir "$D" >/dev/null
    "$KS" up --nodes 2 --state-dir "$D" --user system:serviceaccount:kperf:kperf \
        --rbac "$M/namespace.yaml" --rbac "$M/rbac.yaml" >/dev/null || fail "up with manifests/rbac.yaml"
    [ "$(k get nodes --no-headers | wc -l)" = 2 ] && pass "manifests/rbac.yaml: SA lists nodes" || fail "SA nodes"
    [ "$(k auth can-i create daemonsets.apps -n kperf)" = yes ] && pass "manifests/rbac.yaml: SA may create DaemonSets in kperf" \
        || fail "SA daemonsets"
    [ "$(k auth can-i create pods -n default 2>/dev/null)" = no ] && pass "manifests/rbac.yaml: not in default" || fail "SA default"
else
    echo "note: manifests/rbac.yaml not there yet; skipped that part"
fi
ks_finish; }
export KUBECONFIG=$D/kubeconfig
k() { "$KUBECTL" "$@"; }
[ "$(k get nodes --no-headers | wc -l)" = 2 ] && pass "user lists nodes" || fail "list nodes"
out=$(k get secrets -A 2>&1)
echo "$out"
echo "$out" | grep -q 'secrets is forbidden: User "kperf-test" cannot list resource "secrets" in API group "" at the cluster scope' \
    && pass "403 cluster scope message" || fail "secrets: $out"
out=$(k run -n default p --image=kube-sim/host -- true 2>&1)
echo "$out"
echo "$out" | grep -q 'pods is forbidden: User "kperf-test" cannot create resource "pods" in API group "" in the namespace "default"' \
    && pass "403 namespaced message" || fail "create in default: $out"
k run -n rbac-ok p --image=kube-sim/host --restart=Never -- echo hi >/dev/null && pass "create pod where allowed" || fail "create in rbac-ok"
wait_for 15 sh -c "\"$KUBECTL\" logs -n rbac-ok p | grep -qx hi" && pass "pods/log allowed" || fail "logs"
[ "$(k auth can-i create pods -n rbac-ok)" = yes ] && pass "can-i yes" || fail "can-i rbac-ok"
[ "$(k auth can-i create pods -n default 2>/dev/null)" = no ] && pass "can-i no" || fail "can-i default"
[ "$(k auth can-i create daemonsets.apps -n rbac-ok 2>/dev/null)" = no ] && pass "can-i ds no" || fail "can-i ds"
KUBECONFIG=$D/admin.kubeconfig k get secrets -A >/dev/null && pass "admin (system:masters) bypasses RBAC" || fail "admin"

# the project's own manifests load, and their ServiceAccount can do the basics
M=$KPERF_SRC/manifests
if [ -f "$M/rbac.yaml" ] && [ -f "$M/namespace.yaml" ]; then
    "$KS" down --state-dir "$D" >/dev/null
    "$KS" up --nodes 2 --state-dir "$D" --user system:serviceaccount:kperf:kperf \
        --rbac "$M/namespace.yaml" --rbac "$M/rbac.yaml" >/dev/null || fail "up with manifests/rbac.yaml"
    [ "$(k get nodes --no-headers | wc -l)" = 2 ] && pass "manifests/rbac.yaml: SA lists nodes" || fail "SA nodes"
    [ "$(k auth can-i create daemonsets.apps -n kperf)" = yes ] && pass "manifests/rbac.yaml: SA may create DaemonSets in kperf" \
        || fail "SA daemonsets"
    [ "$(k auth can-i create pods -n default 2>/dev/null)" = no ] && pass "manifests/rbac.yaml: not in default" || fail "SA default"
else
    echo "note: manifests/rbac.yaml not there yet; skipped that part"
fi
ks_finish
