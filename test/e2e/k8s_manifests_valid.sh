#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every object `kperf manifests` prints (the objects a run creates) and every file in
# manifests/ validates against the official Kubernetes 1.35 schemas (test/kube-sim/schemas/) with
# our validator (test/kube-sim/kubesim/openapi.py). On top: a CronJob's jobTemplate is validated as
# a Job, RBAC rules must not use wildcards, bindings name a role and subjects.
set -euo pipefail
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
KPERF="${KPERF_BIN:?}/kperf"
SRC="${KPERF_SRC:?}"
VALIDATE="$SRC/test/kube-sim/kubesim/openapi.py"
[ -x "$KPERF" ] || { echo "no $KPERF"; exit 77; }
[ -f "$VALIDATE" ] || { echo "no $VALIDATE"; exit 77; }
command -v jq >/dev/null || { echo "no jq"; exit 77; }
declare tmp # set by h_tmpdir
h_tmpdir tmp manifests-valid
n_valid=0

# validate_lines FILE: each line one object, queued for one validator call at the end (python
# start-up dominates; the validator picks each object's schema from its apiVersion/kind); some
# kinds get structural checks here too
n_doc=0
validate_lines() {
    local file=$1 i=0 kind doc
    while IFS= read -r line; do
        i=$((i + 1))
        n_doc=$((n_doc + 1))
        kind=$(jq -r .kind <<<"$line")
        doc="$tmp/doc-$n_doc.json"
        printf '%s\n' "$line" >"$doc"
        echo "$doc" >>"$tmp/queue"
        case "$kind" in
        Namespace | Service | DaemonSet | Job | Pod) ;;
        CronJob)
            jq '{apiVersion: "batch/v1", kind: "Job", metadata: (.spec.jobTemplate.metadata +
                 {name: .metadata.name, namespace: .metadata.namespace}),
                 spec: .spec.jobTemplate.spec}' "$doc" >"$tmp/job-$n_doc.json"
            echo "$tmp/job-$n_doc.json" >>"$tmp/queue"
            jq -e '.spec.schedule and .spec.concurrencyPolicy == "Forbid"' "$doc" \
                >/dev/null || { fail "$file CronJob schedule/concurrency"; }
            ;;
        ClusterRole | Role)
            jq -e '.rules | length > 0 and all(.[]; (.verbs | length > 0) and
                   (.verbs | index("*") | not) and ((.resources // []) | index("*") | not) and
                   ((.apiGroups // []) | index("*") | not))' "$doc" >/dev/null ||
                fail "$file $kind $(jq -r .metadata.name "$doc") uses wildcards or no verbs"
            ;;
        Lease)
            jq -e '.metadata.name and .metadata.namespace and .spec.leaseDurationSeconds > 0' \
                "$doc" >/dev/null || { fail "$file Lease"; }
            ;;
        ClusterRoleBinding | RoleBinding)
            jq -e '.roleRef.kind and .roleRef.name and (.subjects | length > 0)' \
                "$doc" >/dev/null || { fail "$file $kind binding"; }
            ;;
        ValidatingAdmissionPolicy | ValidatingAdmissionPolicyBinding)
            # not in the schema subset (test/kube-sim/schemas): structural checks only; the
            # policy's CEL is run by unit.kubesim_vap and e2e.k8s_policy
            sed -i '$d' "$tmp/queue"
            jq -e '.apiVersion == "admissionregistration.k8s.io/v1" and .metadata.name and
                   (if .kind == "ValidatingAdmissionPolicy" then
                      .spec.failurePolicy == "Fail" and (.spec.matchConstraints.resourceRules | length > 0)
                      and (.spec.validations | length > 0) and all(.spec.validations[]; .expression | length > 0)
                    else .spec.policyName and .spec.validationActions == ["Deny"] and
                      .spec.matchResources.namespaceSelector end)' "$doc" >/dev/null ||
                fail "$file $kind $(jq -r .metadata.name "$doc")"
            ;;
        ServiceAccount | Secret | ConfigMap | PersistentVolumeClaim)
            jq -e '.apiVersion == "v1" and .metadata.name and .metadata.namespace' \
                "$doc" >/dev/null || { fail "$file $kind metadata"; }
            ;;
        *)
            fail "$file document $i: unexpected kind '$kind'"
            ;;
        esac
    done <"$file"
}

validate_queued() {
    local files
    mapfile -t files <"$tmp/queue"
    if python3 "$VALIDATE" --quiet "${files[@]}"; then
        n_valid=$((n_valid + ${#files[@]}))
    else
        fail "some objects are not valid (above)"
    fi
}

# 1. what runs create, for several flag sets; the fifth with the pod template flags, the sixth
# the nightly's split (manifests/cronjob.yaml)
cat >"$tmp/overlay.yaml" <<'EOF2'
metadata:
  annotations:
    karpenter.sh/do-not-disrupt: "true"
spec:
  containers:
  - name: server
    env: [{name: GOMAXPROCS, value: "2"}]
  - name: client
    env: [{name: GOMAXPROCS, value: "2"}]
  - name: log-shipper
    image: reg.example/shipper:1
  tolerations: [{key: dedicated, operator: Exists}]
  terminationGracePeriodSeconds: null
EOF2
POD_FLAGS="--pod-labels team=net,cost-center=42 --pod-annotations example.com/owner=net-team --priority-class kperf-low --agent-requests cpu=250m,memory=128Mi --agent-limits memory=1Gi --pod-overlay $tmp/overlay.yaml"
i=0
for flags in "--scenarios all --nodes node-1,node-2 --external-server 192.0.2.10:5201" \
    "--scenarios pod-to-pod,pod-to-service --tests all --samples 3 --image-pull-policy Always --image-pull-secret regcred --tolerations dedicated=perf:NoSchedule,gpu --image reg.example/kperf-agent:1" \
    "--scenarios host-to-host -n kperf --port 6000" \
    "--scenarios pod-to-pod,host-to-host --all-nodes --parallel 4" \
    "--scenarios all --nodes node-1,node-2 $POD_FLAGS" \
    "-n kperf --host-namespace kperf-host --scenarios all"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$KPERF" manifests --format json $flags >"$tmp/run-$i.ndjson"
    validate_lines "$tmp/run-$i.ndjson"
    # every object carries both kperf labels
    jq -e -s 'all(.[]; .metadata.labels["app.kubernetes.io/managed-by"] == "kperf" and
              (.metadata.labels["kperf.io/run-id"] | length > 0))' "$tmp/run-$i.ndjson" \
        >/dev/null || { fail "run $i: unlabelled object"; }
    # the pods the DaemonSets and Jobs create are valid Pods too (what the dry run submits)
    jq -c 'select(.kind == "DaemonSet" or .kind == "Job") |
           {apiVersion: "v1", kind: "Pod",
            metadata: (.spec.template.metadata + {name: "p", namespace: .metadata.namespace}),
            spec: .spec.template.spec}' "$tmp/run-$i.ndjson" >"$tmp/pods-$i.ndjson"
    validate_lines "$tmp/pods-$i.ndjson"
    # YAML output parses back to the same objects
    # shellcheck disable=SC2086
    "$KPERF" manifests $flags >"$tmp/run-$i.yaml"
    "$KPERF" manifests --from-yaml "$tmp/run-$i.yaml" | jq -c 'del(.metadata.labels["kperf.io/run-id"], .metadata.namespace, .spec.selector.matchLabels["kperf.io/run-id"], .spec.template.metadata.labels["kperf.io/run-id"], .spec.selector["kperf.io/run-id"], .metadata.name)' >"$tmp/yaml-$i.ndjson"
    jq -c 'del(.metadata.labels["kperf.io/run-id"], .metadata.namespace, .spec.selector.matchLabels["kperf.io/run-id"], .spec.template.metadata.labels["kperf.io/run-id"], .spec.selector["kperf.io/run-id"], .metadata.name)' "$tmp/run-$i.ndjson" >"$tmp/json-$i.ndjson"
    if ! cmp -s <(grep -v '"Namespace"' "$tmp/yaml-$i.ndjson" | jq -S -c 'del(.spec.template.spec.containers[0].args)') \
               <(grep -v '"Namespace"' "$tmp/json-$i.ndjson" | jq -S -c 'del(.spec.template.spec.containers[0].args)'); then
        fail "run $i: YAML and JSON output differ"
    fi
done

# host-network scenarios label the namespace privileged, others restricted
jq -e -s 'map(select(.kind == "Namespace"))[0].metadata.labels["pod-security.kubernetes.io/enforce"] == "privileged"' \
    "$tmp/run-1.ndjson" >/dev/null || { fail "host network namespace not privileged"; }
jq -e -s 'map(select(.kind == "Namespace"))[0].metadata.labels["pod-security.kubernetes.io/enforce"] == "restricted"' \
    "$tmp/run-2.ndjson" >/dev/null || { fail "pod network namespace not restricted"; }
# --all-nodes: the sweep's server DaemonSets too, one per network, on every eligible node but A
jq -e -s '[.[] | select(.kind == "DaemonSet") | .metadata.name] | sort ==
          ["kperf-server-host-a", "kperf-server-host-sweep", "kperf-server-pod-a",
           "kperf-server-pod-sweep"]' "$tmp/run-4.ndjson" >/dev/null ||
    { fail "--all-nodes: sweep DaemonSets missing"; }
# -n NAME: no Namespace object
if jq -e -s 'any(.[]; .kind == "Namespace")' "$tmp/run-3.ndjson" >/dev/null; then
    fail "-n kperf still creates a Namespace"
fi

# the run's Lease, right after the Namespace, and the ClusterIP the run passes pod-to-service
jq -e -s '.[1].kind == "Lease" and .[1].metadata.name == "kperf-run-" + .[1].metadata.labels["kperf.io/run-id"]' \
    "$tmp/run-1.ndjson" >/dev/null || fail "the run's Lease is not the second object"
jq -e -s '[.[] | select(.kind == "Job" and .metadata.labels["kperf.io/scenario"] == "pod-to-service") |
           .spec.template.spec.containers[0].args | index("SERVICE-CLUSTER-IP:5201")] | length > 0 and all(. != null)' \
    "$tmp/run-1.ndjson" >/dev/null || fail "pod-to-service Jobs do not show the ClusterIP placeholder"
# 5: every agent pod template carries the pod template flags and the overlay
jq -e -s '[.[] | select(.kind == "DaemonSet" or .kind == "Job") | .spec.template] as $t | ($t | length) >= 5 and
    all($t[]; .metadata.labels.team == "net" and .metadata.labels["cost-center"] == "42" and
        .metadata.labels["kperf.io/role"] != null and
        .metadata.annotations["example.com/owner"] == "net-team" and
        .metadata.annotations["karpenter.sh/do-not-disrupt"] == "true" and
        .spec.priorityClassName == "kperf-low" and .spec.terminationGracePeriodSeconds == null and
        .spec.tolerations == [{key: "dedicated", operator: "Exists"}] and
        ([.spec.containers[].name] | length == 2 and index("log-shipper") != null) and
        (.spec.containers[0] | .env == [{name: "GOMAXPROCS", value: "2"}] and
         .resources == {requests: {cpu: "250m", memory: "128Mi"}, limits: {memory: "1Gi"}} and
         (.image | startswith("reg.example") | not)))' "$tmp/run-5.ndjson" >/dev/null ||
    fail "run 5: the pod template flags or the overlay are missing from a pod template"
# 6: the nightly's --host-namespace: hostNetwork agents (and their token Secret and
# ServiceAccount copies) in kperf-host, the Lease, Service and pod-network agents in kperf
jq -e -s '(map(select(.spec.template.spec.hostNetwork == true) | .metadata.namespace) | unique) == ["kperf-host"] and
    (map(select((.kind == "DaemonSet" or .kind == "Job") and .spec.template.spec.hostNetwork != true) |
         .metadata.namespace) | unique) == ["kperf"] and
    (map(select(.kind == "Lease" or .kind == "Service") | .metadata.namespace) | unique) == ["kperf"] and
    (map(select(.kind == "Secret") | .metadata.namespace) | sort) == ["kperf", "kperf-host"] and
    all(.[]; .kind != "Namespace")' "$tmp/run-6.ndjson" >/dev/null ||
    fail "run 6: --host-namespace kperf-host does not put exactly the host-network agents there"
# refused, each with one line naming what to do, exit 1 or 2, nothing on stdout
refused() { # WHAT EXPECTED-TEXT ARGS...
    local what=$1 want=$2 rc=0
    shift 2
    "$KPERF" manifests "$@" >"$tmp/refused.out" 2>"$tmp/refused.err" || rc=$?
    if [ "$rc" = 0 ] || [ -s "$tmp/refused.out" ] || [ "$(wc -l <"$tmp/refused.err")" != 1 ] ||
        ! grep -qF -- "$want" "$tmp/refused.err"; then
        fail "$what: rc $rc, stderr: $(cat "$tmp/refused.err")"
    fi
}
printf 'spec:\n  containers:\n  - name: server\n    image: evil:1\n' >"$tmp/ov-image.yaml"
printf 'kind: Pod\n' >"$tmp/ov-top.yaml"
printf 'spec:\n  hostNetwrk: true\n' >"$tmp/ov-field.yaml"
printf 'spec:\n  volumes: []\n' >"$tmp/ov-volumes.yaml"
refused "kperf label" "kperf.io/role is kperf's own label" --pod-labels kperf.io/role=x
refused "label syntax" "'-x' is not a valid label value" --pod-labels team=-x
refused "quantity" "'lots' is not a quantity" --agent-limits memory=lots
refused "request above limit" "memory request 1Gi is above its limit 512Mi" --agent-requests memory=1Gi
refused "overlay image" "spec.containers[server].image: kperf's own container" --pod-overlay "$tmp/ov-image.yaml"
refused "overlay top level" "unknown top-level field 'kind'" --pod-overlay "$tmp/ov-top.yaml"
refused "overlay field" "spec.hostNetwrk is not a PodSpec field" --pod-overlay "$tmp/ov-field.yaml"
refused "overlay volumes" "mounts volume 'token'" --pod-overlay "$tmp/ov-volumes.yaml"

# 2. the files a person applies
for f in "$SRC"/manifests/*.yaml; do
    # kustomize's own file lists the others; k8s_helm_kustomize.sh builds and checks it
    [ "$(basename "$f")" = kustomization.yaml ] && continue
    out="$tmp/$(basename "$f").ndjson"
    "$KPERF" manifests --from-yaml "$f" >"$out" || { fail "$f does not parse"; continue; }
    [ -s "$out" ] || { fail "$f is empty"; }
    validate_lines "$out"
done

validate_queued

# 3. broken objects are caught (the check can fail), each at the apiserver's field path
bad() { # NAME FINDING JSON: the validator must reject JSON and print FINDING
    printf '%s\n' "$3" >"$tmp/bad-$1.json"
    if out=$(python3 "$VALIDATE" --quiet "$tmp/bad-$1.json"); then
        fail "the validator accepted a broken object ($1)"
    elif ! grep -qF -- "$2" <<<"$out"; then
        fail "broken object ($1): expected '$2' in: $out"
    fi
}
ds() { # CONTAINER-FIELDS: a DaemonSet whose one container has these fields besides its name
    printf '{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"x"},"spec":{"selector":{},%s}}' \
        "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",$1}]}}"
}
C='spec.template.spec.containers[0]'
bad unknown "unknown field \"$C.imagee\"" "$(ds '"imagee":"x"')"
bad type "$C.ports[0].containerPort: expected integer, got string" "$(ds '"ports":[{"containerPort":"80"}]')"
bad required "$C.ports[0].containerPort: Required value" "$(ds '"ports":[{"protocol":"TCP"}]')"
bad enum "$C.imagePullPolicy: Unsupported value: \"Sometimes\"" "$(ds '"imagePullPolicy":"Sometimes"')"

[ "$n_valid" -ge 20 ] || { fail "only $n_valid documents validated"; }
failed || pass "$n_valid documents valid against the API schemas"
finish
