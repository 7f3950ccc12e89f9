#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_policy.sh - least privilege in the privileged namespace, on a 2-node kube-sim whose only
# user is the nightly's ServiceAccount (system:serviceaccount:kperf:kperf) with the shipped
# manifests loaded: namespace.yaml, namespace-host.yaml, rbac.yaml, rbac-host.yaml and
# admission-policy.yaml (its repository set to the tests' agent image, as docs/kubernetes.md
# tells users to set theirs), the policy evaluated by kube-sim's CEL (@bufbuild/cel):
#  * the token cannot create, in kperf-host, a pod of another image, a privileged pod, a pod
#    adding a capability, a DaemonSet of another image (the policy refuses each, with its
#    message), nor change the policy, its binding, the namespace's labels or Roles (RBAC);
#  * it cannot create pods outside kperf and kperf-host (RBAC);
#  * the same pod of the agent image without the privileges is admitted, and kperf's own run
#    works with the split: `-n kperf --host-namespace kperf-host`, kperf relabelled to enforce
#    Pod Security "restricted" (its pod-network agents pass it), the host-network agents in
#    kperf-host (admitted by the policy), nothing left behind in either; with --netpol-rules
#    0,10 the pod rows again under the run's NetworkPolicy (kube-sim enforces it), which the
#    token creates and deletes (rbac.yaml).
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v node >/dev/null || { echo "FAIL: node (nodejs) is needed for kube-sim's CEL"; exit 1; }
CEL=$(bash "$KPERF_SRC/test/tools/get-cel.sh") || { echo "FAIL: test/tools/get-cel.sh"; exit 1; }
M=$KPERF_SRC/manifests
AGENT=kperf-agent # the repository of the tests' agent image (kperf_k8s: kperf-agent:e2e)
sed "s|'ghcr.io/kperf/kperf-agent'|'$AGENT'|" "$M/admission-policy.yaml" >"$K8S_DIR/policy.yaml"
grep -q "'$AGENT'" "$K8S_DIR/policy.yaml" || fail "could not set the policy's repository"
k8s_up --nodes 2 --zones 1 --user system:serviceaccount:kperf:kperf --cel-dir "$CEL" \
    --rbac "$M/namespace.yaml" --rbac "$M/namespace-host.yaml" --rbac "$M/rbac.yaml" \
    --rbac "$M/rbac-host.yaml" --rbac "$K8S_DIR/policy.yaml"
start=$(date +%s)
k() { "$KUBECTL" --kubeconfig "$K8S_DIR/kubeconfig" "$@"; }

# pod NAME IMAGE [privileged|cap|hostpid]: an agent-like pod (restricted but for hostNetwork)
pod() {
    local sc='{"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}'
    case "${3:-}" in
    privileged) sc='{"privileged": true}' ;;
    cap) sc='{"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]}}' ;;
    esac
    cat <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "namespace": "kperf-host"},
 "spec": {"hostNetwork": true, "restartPolicy": "Never", "serviceAccountName": "default",
          "securityContext": {"runAsNonRoot": true, "runAsUser": 65532,
                              "seccompProfile": {"type": "RuntimeDefault"}},
          "containers": [{"name": "c", "image": "$2", "command": ["sleep", "1"],
                          "securityContext": $sc}]}}
JSON
}

# refused CASE WANT JSON: the SA's create is refused with WANT in the message
refused() {
    local out
    if ! out=$(k create -f - <<<"$3" 2>&1) && grep -q -- "$2" <<<"$out"; then
        pass "$1: $(cut -c1-150 <<<"$out")"
    else
        fail "$1: $out"
    fi
}
refused "another image in kperf-host" \
    "ValidatingAdmissionPolicy 'kperf-host-agents' with binding 'kperf-host-agents' denied request: only the kperf agent image ($AGENT:TAG or @DIGEST) may run in kperf-host; not docker.io/library/busybox:1" \
    "$(pod other docker.io/library/busybox:1)"
refused "a privileged container of the agent image" "privileged containers are not allowed" \
    "$(pod priv "$AGENT:e2e" privileged)"
refused "an added capability" "containers may not add capabilities" "$(pod cap "$AGENT:e2e" cap)"
ds=$(jq -c '{apiVersion: "apps/v1", kind: "DaemonSet",
        metadata: {name: "other", namespace: "kperf-host"},
        spec: {selector: {matchLabels: {a: "b"}},
               template: {metadata: {labels: {a: "b"}}, spec: (.spec | del(.restartPolicy))}}}' \
    <<<"$(pod x busybox)")
refused "a DaemonSet of another image" "only the kperf agent image" "$ds"
out=$(k create -f - <<<"$(pod other busybox | sed 's/"kperf-host"/"default"/')" 2>&1)
grep -q 'cannot create resource "pods" in API group "" in the namespace "default"' <<<"$out" &&
    pass "pods outside kperf/kperf-host: RBAC 403" || fail "default: $out"
for what in "delete validatingadmissionpolicies.admissionregistration.k8s.io" \
    "update validatingadmissionpolicybindings.admissionregistration.k8s.io" \
    "patch namespaces" "create roles -n kperf-host" "create rolebindings -n kperf-host" \
    "update configmaps -n kperf-host" \
    "list secrets -A"; do
    # shellcheck disable=SC2086 # $what is several words on purpose
    [ "$(k auth can-i $what 2>/dev/null)" = no ] || fail "the SA may $what"
done
pass "the SA cannot touch the policy, its binding, namespaces, Roles, ConfigMaps there, secrets cluster-wide"
# the same pod without the privileges: admitted (the policy is not refusing everything)
k create -f - <<<"$(pod fine "$AGENT:e2e")" >/dev/null 2>"$K8S_DIR/fine.err" &&
    pass "the agent image without privileges is admitted" || fail "fine pod: $(cat "$K8S_DIR/fine.err")"
k -n kperf-host delete pod fine --wait=false >/dev/null 2>&1
# nothing the policy refused exists
# (grep -v reads all of it: no early exit to give kubectl SIGPIPE; an empty list is none)
stored=$(kadmin -n kperf-host get pods,daemonsets -o name 2>&1 | grep -v '^pod/fine$')
[ -z "$stored" ] && pass "no refused object was stored" || fail "stored: $stored"

# kperf's own run, as the same token, split: pod-network agents in kperf (restricted now),
# host-network ones in kperf-host
kadmin label namespace kperf pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null ||
    fail "relabel kperf restricted"
k8s_record_pods_start "$K8S_DIR/pods.ndjson"
kadmin get networkpolicies -n kperf -w -o json --output-watch-events >"$K8S_DIR/netpol.ndjson" 2>/dev/null &
np_watch=$!
kperf_k8s -n kperf --host-namespace kperf-host --scenarios pod-to-pod,host-to-host --tests TCP_RR \
    --duration 1s --omit 0s --netpol-rules 0,10 -o json >"$K8S_DIR/run.json" 2>"$K8S_DIR/run.err" &&
    pass "kperf run -n kperf --host-namespace kperf-host (pod-to-pod, host-to-host, --netpol-rules 0,10) as the nightly's token exits 0" ||
    fail "run: rc $?: $(tail -5 "$K8S_DIR/run.err")"
k8s_record_pods_stop
kill "$np_watch" 2>/dev/null
wait "$np_watch" 2>/dev/null
# --netpol-rules (issue 33 part 2): the pod rows once more under the run's policy of 10 rules,
# enforced by kube-sim; made and deleted by the same least-privilege token
jq -e '[.results[] | select(.placement | endswith("/netpol-10")) | select(.status == "ok") | .scenario + " " + .placement] | unique == ["pod-to-pod other-node/netpol-10", "pod-to-pod same-node/netpol-10"]' \
    "$K8S_DIR/run.json" >/dev/null 2>&1 && pass "the pod rows measured again under the 10-rule policy" ||
    fail "netpol rows: $(jq -c '[.results[] | [.scenario, .placement, .status]]' "$K8S_DIR/run.json")"
jq -e -s '[.[] | select(.type == "ADDED" and (.object.metadata.name | startswith("kperf-netpol-")))
        | .object.spec | (.ingress | length) == 10 and .podSelector.matchLabels["kperf.io/role"] == "server"
        and .podSelector.matchLabels["kperf.io/network"] == "pod"] == [true] and
    ([.[] | select(.type == "DELETED")] | length) == 1' "$K8S_DIR/netpol.ndjson" >/dev/null 2>&1 &&
    pass "one policy of 10 ingress rules selecting the pod-network servers, made and deleted by the run" ||
    fail "netpol events: $(jq -c -s '[.[] | [.type, .object.metadata.name, (.object.spec.ingress | length)]]' "$K8S_DIR/netpol.ndjson" 2>&1 | cut -c1-300)"
if jq -e -s 'unique_by(.metadata.name) | length >= 4 and
        all(.[]; (.spec.hostNetwork == true) == (.metadata.namespace == "kperf-host"))' \
    "$K8S_DIR/pods.ndjson" >/dev/null; then
    pass "every host-network agent pod ran in kperf-host, every other in kperf"
else
    fail "pods: $(jq -s -c '[unique_by(.metadata.name)[] | [.metadata.namespace, .metadata.name, .spec.hostNetwork]]' "$K8S_DIR/pods.ndjson")"
fi
jq -e '[.results[] | select(.scenario == "host-to-host" and .status == "ok")] | length > 0' "$K8S_DIR/run.json" \
    >/dev/null 2>&1 && pass "the report has host-to-host rows" || fail "no host-to-host rows"
k8s_nothing_left "after the split run (kperf and kperf-host)"
# a --host-namespace the token may not read (rbac.yaml names kperf and kperf-host) is refused
# before anything is made, naming it
kperf_k8s -n kperf --host-namespace nosuch --scenarios host-to-host --tests TCP_RR --duration 1s \
    -o json >/dev/null 2>"$K8S_DIR/nosuch.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'get namespaces nosuch: forbidden' "$K8S_DIR/nosuch.err" &&
    pass "--host-namespace nosuch: $(grep '^kperf: error:' "$K8S_DIR/nosuch.err" | cut -c1-120)" ||
    fail "nosuch: rc $rc: $(cat "$K8S_DIR/nosuch.err")"
# one that does not exist (as the admin, who may read any namespace)
"$KPERF" run --kubeconfig "$K8S_DIR/admin.kubeconfig" --image kperf-agent:e2e -n kperf \
    --host-namespace nosuch --scenarios host-to-host --tests TCP_RR --duration 1s -o json \
    >/dev/null 2>"$K8S_DIR/nosuch2.err"
rc=$?
[ "$rc" = 1 ] && grep -q "host-namespace nosuch does not exist: create it" "$K8S_DIR/nosuch2.err" &&
    pass "missing --host-namespace: $(grep '^kperf: error:' "$K8S_DIR/nosuch2.err" | cut -c1-120)" ||
    fail "nosuch (admin): rc $rc: $(cat "$K8S_DIR/nosuch2.err")"
k8s_nothing_left "refused --host-namespace"
echo "time: $(($(date +%s) - start)) s (kube-sim start-up excluded)"
ks_finish
