#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_arch_secret.sh - on a 3-node kube-sim whose node-3 is arm64 (kube-sim --node-arch):
#  * --image-pull-secret team-a/regcred without -n: the Secret is copied into the run's
#    namespace as kperf-pull-secret (its type and data, kperf's run labels, copied-from), every
#    agent pod references it, and it goes with the run (--keep, then kperf cleanup);
#  * a pull secret that does not exist: one line naming it and the namespace it was looked for
#    in (the context's), exit 1, nothing created;
#  * node choice per architecture: by default the amd64 pair (node-3 left out, said once), the
#    report's nodes[] and text summary carry each node's arch; --arch arm64 (one node: same-node
#    only); --arch mixed (B of the other architecture); --all-nodes rings the amd64 nodes only;
#    a named node of another architecture is refused with the reason;
#  * RBAC: with manifests/rbac.yaml (-n kperf) a copy from team-a is refused naming
#    manifests/rbac-pull-secret.yaml, and runs once that Role (get of the one Secret) is applied.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3 --zones 1 --node-arch node-3=arm64
RUN=(--scenarios pod-to-pod --tests TCP_RR --duration 1s --omit 0s)
start=$(date +%s)

# --- the pull secret's copy ------------------------------------------------------------------
cfg=$(printf '{"auths":{"registry.example:5000":{"auth":"%s"}}}' "$(printf 'u:p' | base64)")
kadmin create namespace team-a >/dev/null || fail "create namespace team-a"
kadmin -n team-a create secret generic regcred --type=kubernetes.io/dockerconfigjson \
    --from-literal=.dockerconfigjson="$cfg" >/dev/null || fail "create team-a/regcred"
src_data=$(kadmin -n team-a get secret regcred -o json | jq -c .data)

k8s_record_pods_start "$K8S_DIR/pods.ndjson"
kperf_k8s "${RUN[@]}" --image-pull-secret team-a/regcred --keep -v -o json \
    >"$K8S_DIR/copy.json" 2>"$K8S_DIR/copy.err"
rc=$?
k8s_record_pods_stop
[ "$rc" = 0 ] && pass "run with --image-pull-secret team-a/regcred (no -n) exits 0" ||
    fail "rc $rc: $(tail -3 "$K8S_DIR/copy.err")"
run_id=$(jq -r .metadata.run_id "$K8S_DIR/copy.json")
ns=$(jq -r .metadata.namespace "$K8S_DIR/copy.json")
kadmin -n "$ns" get secret kperf-pull-secret -o json >"$K8S_DIR/copy-secret.json" 2>&1 ||
    fail "no kperf-pull-secret in $ns: $(cat "$K8S_DIR/copy-secret.json")"
if jq -e --arg id "$run_id" --argjson data "$src_data" '
        .type == "kubernetes.io/dockerconfigjson" and .data == $data and
        .metadata.labels["app.kubernetes.io/managed-by"] == "kperf" and
        .metadata.labels["kperf.io/run-id"] == $id and
        .metadata.annotations["kperf.io/copied-from"] == "team-a/regcred"' \
    "$K8S_DIR/copy-secret.json" >/dev/null; then
    pass "the copy in $ns: same type and data, run labels, copied-from team-a/regcred"
else
    fail "copy: $(jq -c '{type, metadata}' "$K8S_DIR/copy-secret.json")"
fi
pods=$(jq -s --arg ns "$ns" '[.[] | select(.metadata.namespace == $ns)] |
        unique_by(.metadata.name)' "$K8S_DIR/pods.ndjson")
if jq -e 'length >= 3 and all(.[]; .spec.imagePullSecrets == [{"name": "kperf-pull-secret"}])' \
    <<<"$pods" >/dev/null; then
    pass "every agent pod ($(jq length <<<"$pods"): servers and clients) references kperf-pull-secret"
else
    fail "pods' pull secrets: $(jq -c '[.[] | [.metadata.name, .spec.imagePullSecrets]]' <<<"$pods")"
fi
kadmin -n team-a get secret regcred >/dev/null 2>&1 && pass "the source Secret is untouched" ||
    fail "team-a/regcred is gone"
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" --run-id "$run_id" >/dev/null 2>&1 ||
    fail "kperf cleanup --run-id $run_id"
k8s_nothing_left "kperf cleanup after --keep (the copy included)"

# a missing source: one line, exit 1, nothing created
kperf_k8s "${RUN[@]}" --image-pull-secret nosuch -o json >/dev/null 2>"$K8S_DIR/missing.err"
rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c '^kperf: error:' "$K8S_DIR/missing.err")" = 1 ] &&
    grep -q "Secret nosuch not found in namespace default: create it there" "$K8S_DIR/missing.err"; then
    pass "missing pull secret: $(grep '^kperf: error:' "$K8S_DIR/missing.err" | cut -c1-110)..."
else
    fail "missing pull secret: rc $rc: $(cat "$K8S_DIR/missing.err")"
fi
k8s_nothing_left "missing pull secret"
if ! grep -q kperf- <<<"$(kadmin get namespaces -o name)"; then
    pass "no run namespace was created"
else
    fail "namespaces: $(kadmin get namespaces -o name | grep kperf-)"
fi

# --- architectures ---------------------------------------------------------------------------
arches() { jq -r '[.metadata.nodes[] | "\(.name)=\(.role)/\(.arch)"] | join(" ")' "$1"; }
# the copy run above used the default rule: the amd64 pair, node-3 left out and said so
if [ "$(arches "$K8S_DIR/copy.json")" = "node-1=server/amd64 node-2=client/amd64" ] &&
    jq -e '.metadata.arch == "amd64"' "$K8S_DIR/copy.json" >/dev/null &&
    grep -q "measuring the amd64 nodes only (eligible: amd64 x2, arm64 x1)" "$K8S_DIR/copy.err"; then
    pass "default: the amd64 pair ($(arches "$K8S_DIR/copy.json")), arm64 node-3 left out with a warning"
else
    fail "default: $(arches "$K8S_DIR/copy.json"), arch $(jq -c .metadata.arch "$K8S_DIR/copy.json"): $(grep -i arch "$K8S_DIR/copy.err")"
fi
grep -q "node node-3 skipped: architecture arm64, not amd64 (--arch)" "$K8S_DIR/copy.err" &&
    grep -q "node A node-1 (amd64), node B node-2 (amd64)" "$K8S_DIR/copy.err" &&
    pass "-v lists the node left out and the pair, with their architectures" ||
    fail "-v node lines: $(grep -i "node" "$K8S_DIR/copy.err" | head -5)"
"$KPERF" report -o table "$K8S_DIR/copy.json" >"$K8S_DIR/copy.txt" 2>&1
grep -q "node node-1 (server, amd64," "$K8S_DIR/copy.txt" &&
    grep -q "node node-2 (client, amd64," "$K8S_DIR/copy.txt" &&
    pass "the text summary names each node's arch" ||
    fail "text summary: $(grep '^node' "$K8S_DIR/copy.txt")"

kperf_k8s "${RUN[@]}" --arch arm64 -o json >"$K8S_DIR/arm.json" 2>"$K8S_DIR/arm.err" ||
    fail "--arch arm64: rc $?: $(tail -2 "$K8S_DIR/arm.err")"
if [ "$(arches "$K8S_DIR/arm.json")" = "node-3=server/arm64" ] &&
    jq -e '([.results[].placement] | unique) == ["same-node"] and all(.results[]; .status == "ok")' \
        "$K8S_DIR/arm.json" >/dev/null; then
    pass "--arch arm64: node-3 alone (same-node measured, no other-node row)"
else
    fail "--arch arm64: $(arches "$K8S_DIR/arm.json"): $(jq -c '[.results[] | [.placement, .status]]' "$K8S_DIR/arm.json")"
fi

kperf_k8s "${RUN[@]}" --arch mixed -o json >"$K8S_DIR/mixed.json" 2>"$K8S_DIR/mixed.err" ||
    fail "--arch mixed: rc $?: $(tail -2 "$K8S_DIR/mixed.err")"
[ "$(arches "$K8S_DIR/mixed.json")" = "node-1=server/amd64 node-3=client/arm64" ] &&
    pass "--arch mixed: a cross-architecture pair ($(arches "$K8S_DIR/mixed.json"))" ||
    fail "--arch mixed: $(arches "$K8S_DIR/mixed.json")"

# a sweep keeps to one architecture too: the ring of the amd64 nodes
kperf_k8s "${RUN[@]}" --all-nodes -o json >"$K8S_DIR/sweep.json" 2>"$K8S_DIR/sweep.err" ||
    fail "--all-nodes: rc $?: $(tail -2 "$K8S_DIR/sweep.err")"
if jq -e '.metadata.sweep | ([.pairs[] | "\(.client)>\(.server)"] == ["node-1>node-2", "node-2>node-1"])
        and ([.nodes[] | "\(.name)/\(.arch)"] == ["node-1/amd64", "node-2/amd64"])' \
    "$K8S_DIR/sweep.json" >/dev/null; then
    pass "--all-nodes: the ring of the amd64 nodes, each node's arch in metadata.sweep.nodes"
else
    fail "--all-nodes: $(jq -c '.metadata.sweep | [.pairs, [.nodes[] | [.name, .arch]]]' "$K8S_DIR/sweep.json")"
fi

kperf_k8s "${RUN[@]}" --nodes node-1,node-3 -o json >/dev/null 2>"$K8S_DIR/named.err"
rc=$?
if [ "$rc" != 0 ] && grep -q "node node-3 cannot run agents: architecture arm64, not amd64" "$K8S_DIR/named.err"; then
    pass "--nodes node-1,node-3: refused, naming node-3's architecture"
else
    fail "--nodes node-1,node-3: rc $rc: $(cat "$K8S_DIR/named.err")"
fi
k8s_nothing_left "after the arch runs"

# --- RBAC: manifests/rbac.yaml (-n kperf) plus manifests/rbac-pull-secret.yaml is enough -------
"$KS" down --state-dir "$K8S_DIR" >/dev/null 2>&1
k8s_up --nodes 2 --zones 1 --rbac "$KPERF_SRC/manifests/rbac.yaml" \
    --user system:serviceaccount:kperf:kperf
kadmin apply -f "$KPERF_SRC/manifests/namespace.yaml" -f "$KPERF_SRC/manifests/rbac.yaml" \
    >/dev/null || fail "namespace.yaml, rbac.yaml"
kadmin create namespace team-a >/dev/null || fail "create namespace team-a"
kadmin -n team-a create secret generic regcred --type=kubernetes.io/dockerconfigjson \
    --from-literal=.dockerconfigjson="$cfg" >/dev/null || fail "create team-a/regcred"
kperf_k8s "${RUN[@]}" -n kperf --image-pull-secret team-a/regcred -o json >/dev/null \
    2>"$K8S_DIR/rbac-no.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "cannot read Secret team-a/regcred .*manifests/rbac-pull-secret.yaml" \
    "$K8S_DIR/rbac-no.err"; then
    pass "rbac.yaml alone: refused before anything exists, naming manifests/rbac-pull-secret.yaml"
else
    fail "without the Role: rc $rc: $(cat "$K8S_DIR/rbac-no.err")"
fi
k8s_nothing_left "refused for want of the Role"
# the shipped Role with its namespace set to where the Secret lives (its RoleBinding too)
sed 's/^  namespace: kperf$/  namespace: team-a/' "$KPERF_SRC/manifests/rbac-pull-secret.yaml" |
    kadmin apply -f - >/dev/null || fail "apply rbac-pull-secret.yaml for team-a"
kperf_k8s "${RUN[@]}" -n kperf --image-pull-secret team-a/regcred -o json \
    >"$K8S_DIR/rbac.json" 2>"$K8S_DIR/rbac.err" &&
    pass "with manifests/rbac-pull-secret.yaml (get of team-a/regcred only): -n kperf copies it and runs" ||
    fail "with the Role: rc $?: $(tail -3 "$K8S_DIR/rbac.err")"
k8s_nothing_left "after the run with the Role (the copy in kperf included)"
echo "time: $(($(date +%s) - start)) s (kube-sim start-up excluded)"
ks_finish
