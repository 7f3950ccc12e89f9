#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The nightly job as a Helm chart (manifests/helm/kperf) and with kustomize (manifests/ as the
# base, deploy/overlays/* per platform), with the real helm 4 and kubectl 1.35 (fetched by
# test/tools/get-helm.sh and get-kubectl.sh: never skipped for want of them):
# * helm lint, and helm template with the default values and the value sets in the chart's ci/;
#   kubectl kustomize of the base and of every overlay;
# * every object produced validates against the official Kubernetes 1.35 schemas with our
#   validator (test/kube-sim/kubesim/openapi.py, as k8s_manifests_valid.sh), a CronJob's
#   jobTemplate also as a Job and its pod template as a Pod; RBAC rules use no wildcards;
# * the kperf run and kperf compare arguments of every CronJob are accepted by this kperf;
# * one source of truth: the chart's default rendering and the kustomize base are, as parsed
#   objects, exactly the plain YAML in manifests/ (nothing ignored: the chart adds no helm
#   labels unless commonLabels asks), and rbac.perRunNamespaces adds exactly
#   manifests/rbac-namespaces.yaml;
# * the nightly's host-network agents go to the privileged namespace kperf-host: every default
#   CronJob runs `kperf run -n kperf --host-namespace kperf-host`, kperf enforces "restricted",
#   and namespace-host.yaml, rbac-host.yaml and admission-policy.yaml are part of helm's and
#   kustomize's output; hostNamespace.name renames that namespace everywhere ("" drops it and the
#   flag), and the policy admits exactly the agent image repository the CronJob passes (--image);
# * each value set and overlay changes what it says it changes; history.existingClaim renders
#   exactly manifests/cronjob-pvc.yaml; pushgateway.url adds --push-gateway (and clusterName
#   --cluster-name) to "run" and --push-gateway to "compare", notify.url --notify (and reportUrl
#   --report-url) to "compare"; history.keep 0 stops helm with a clear error.
set -euo pipefail
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
KPERF="${KPERF_BIN:?}/kperf"
SRC="${KPERF_SRC:?}"
VALIDATE="$SRC/test/kube-sim/kubesim/openapi.py"
CHART="$SRC/manifests/helm/kperf"
[ -x "$KPERF" ] || { echo "no $KPERF"; exit 77; }
command -v jq >/dev/null || { echo "no jq"; exit 77; }
HELM=${HELM:-$(bash "$SRC/test/tools/get-helm.sh")}
KUBECTL=${KUBECTL:-$(bash "$SRC/test/tools/get-kubectl.sh")}
declare tmp # set by h_tmpdir
h_tmpdir tmp helm-kustomize
n_doc=0

# to_ndjson YAML OUT: the objects of a multi-document YAML file, one sorted JSON per line, in a
# stable order (kind, namespace, name)
to_ndjson() {
    "$KPERF" manifests --from-yaml "$1" | jq -S -c . |
        jq -s -c 'sort_by(.kind, .metadata.namespace // "", .metadata.name)[]' >"$2"
}

# queue NDJSON WHAT: queues every object for the schema validator (plus a CronJob's Job and Pod)
# and runs the structural checks
queue() {
    local line doc kind
    while IFS= read -r line; do
        n_doc=$((n_doc + 1))
        doc="$tmp/doc-$n_doc.json"
        printf '%s\n' "$line" >"$doc"
        echo "$doc" >>"$tmp/queue"
        kind=$(jq -r .kind "$doc")
        case "$kind" in
        Namespace | ServiceAccount) ;;
        ValidatingAdmissionPolicy | ValidatingAdmissionPolicyBinding)
            # not in the schema subset (as k8s_manifests_valid.sh): checked by host_split
            sed -i '$d' "$tmp/queue"
            ;;
        CronJob)
            jq '{apiVersion: "batch/v1", kind: "Job", metadata: (.spec.jobTemplate.metadata +
                 {name: .metadata.name, namespace: .metadata.namespace}),
                 spec: .spec.jobTemplate.spec}' "$doc" >"$tmp/job-$n_doc.json"
            jq '{apiVersion: "v1", kind: "Pod", metadata: (.spec.jobTemplate.spec.template.metadata +
                 {name: "p", namespace: .metadata.namespace}),
                 spec: .spec.jobTemplate.spec.template.spec}' "$doc" >"$tmp/pod-$n_doc.json"
            printf '%s\n%s\n' "$tmp/job-$n_doc.json" "$tmp/pod-$n_doc.json" >>"$tmp/queue"
            jq -e '.spec.concurrencyPolicy == "Forbid"' "$doc" >/dev/null ||
                fail "$2: CronJob concurrencyPolicy"
            check_args "$doc" "$2"
            ;;
        ClusterRole | Role)
            jq -e '.rules | length > 0 and all(.[]; (.verbs | length > 0) and
                   (.verbs | index("*") | not) and ((.resources // []) | index("*") | not) and
                   ((.apiGroups // []) | index("*") | not))' "$doc" >/dev/null ||
                fail "$2: $kind $(jq -r .metadata.name "$doc") uses wildcards or no verbs"
            ;;
        ClusterRoleBinding | RoleBinding)
            jq -e '.roleRef.kind and .roleRef.name and (.subjects | length > 0)' "$doc" \
                >/dev/null || fail "$2: $kind binding"
            ;;
        *) fail "$2: unexpected kind '$kind'" ;;
        esac
    done <"$1"
}

# check_args CRONJOB.json WHAT: this kperf accepts the job's kperf run flags (kperf manifests
# takes every run flag; --nodes-from is left out: its report exists only in the cluster) and its
# kperf compare flags (missing files give exit 1, a bad flag 2; with a history volume NEW is
# /history/nights/latest/report.json)
check_args() {
    local -a run cmp
    mapfile -t run < <(jq -r '.spec.jobTemplate.spec.template.spec.initContainers[0].args[]' "$1")
    mapfile -t cmp < <(jq -r '.spec.jobTemplate.spec.template.spec.containers[0].args[]' "$1")
    [ "${run[0]}" = run ] || fail "$2: first container does not run 'kperf run'"
    local -a flags=()
    local i
    for ((i = 1; i < ${#run[@]}; i++)); do
        if [ "${run[i]}" = --nodes-from ]; then
            i=$((i + 1))
        else
            flags+=("${run[i]}")
        fi
    done
    "$KPERF" manifests --format json "${flags[@]}" >/dev/null 2>"$tmp/err" ||
        fail "$2: kperf run ${flags[*]}: $(cat "$tmp/err")"
    [ "${cmp[0]}" = compare ] || fail "$2: second container does not run 'kperf compare'"
    local rc=0
    "$KPERF" "${cmp[@]}" >/dev/null 2>"$tmp/err" || rc=$?
    [ "$rc" = 1 ] && grep -q 'cannot read /baseline/report.json\|cannot read /results/report.json\|cannot read /history/nights/latest/report.json' "$tmp/err" ||
        fail "$2: kperf ${cmp[*]}: exit $rc: $(cat "$tmp/err")"
}

# cron JSON-PATH-FILTER NDJSON: a jq filter on the one CronJob
cron() { jq -e -s "map(select(.kind == \"CronJob\"))[0] | $1" "$2" >/dev/null; }

# host_split NDJSON NS HOST-NS WHAT: the CronJob runs `run --namespace NS --host-namespace
# HOST-NS`; NS enforces "restricted", HOST-NS "privileged"; HOST-NS has the Role and binding of
# rbac-host.yaml for NS's ServiceAccount, the ClusterRole may read both namespaces, and the
# admission policy binds to HOST-NS and admits the repository of the CronJob's --image
host_split() {
    jq -e -s --arg ns "$2" --arg h "$3" '
        (map(select(.kind == "CronJob"))[0].spec.jobTemplate.spec.template.spec) as $p |
        ($p.initContainers[0].args) as $a |
        ($a[(($a | index("--image")) + 1)] | sub("[:@][^/]*$"; "")) as $repo |
        ($a[0:5] == ["run", "--namespace", $ns, "--host-namespace", $h]) and
        (map(select(.kind == "Namespace")) | map({(.metadata.name):
            .metadata.labels["pod-security.kubernetes.io/enforce"]}) | add) ==
            {($ns): "restricted", ($h): "privileged"} and
        (map(select(.kind == "RoleBinding" and .metadata.namespace == $h))[0] |
            .roleRef.name == "kperf-host" and .subjects[0].namespace == $ns and
            .subjects[0].name == $p.serviceAccountName) and
        any(.[]; .kind == "Role" and .metadata.namespace == $h and
            any(.rules[]; .resources | index("daemonsets"))) and
        (map(select(.kind == "ClusterRole"))[0].rules |
            any(.[]; .resources == ["namespaces"] and .resourceNames == [$ns, $h])) and
        (map(select(.kind == "ValidatingAdmissionPolicyBinding"))[0].spec.matchResources
            .namespaceSelector.matchLabels == {"kubernetes.io/metadata.name": $h}) and
        (map(select(.kind == "ValidatingAdmissionPolicy"))[0].spec.variables[] |
            select(.name == "repository") | .expression) == "\u0027" + $repo + "\u0027"' \
        "$1" >/dev/null || fail "$4: host-network agents not split into $3 (flag, namespaces, RBAC or policy)"
}

# 1. the plain YAML: the reference
for f in namespace namespace-host rbac rbac-host admission-policy cronjob; do
    cat "$SRC/manifests/$f.yaml"
    echo ---
done >"$tmp/plain.yaml"
to_ndjson "$tmp/plain.yaml" "$tmp/plain.ndjson"
to_ndjson "$SRC/manifests/rbac-namespaces.yaml" "$tmp/plain-rbac-ns.ndjson"
[ "$(wc -l <"$tmp/plain.ndjson")" -ge 14 ] || fail "manifests/: only $(wc -l <"$tmp/plain.ndjson") objects"

# 2. Helm
"$HELM" lint "$CHART" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "helm lint"; }
for v in "$CHART"/ci/*-values.yaml; do
    "$HELM" lint "$CHART" -f "$v" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "helm lint -f $v"; }
done
render() { # NAME HELM-ARGS...: helm template into $tmp/helm-NAME.ndjson, queued for validation
    local name=$1
    shift
    "$HELM" template kperf "$CHART" "$@" >"$tmp/helm-$name.yaml" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "helm template $name"; return; }
    to_ndjson "$tmp/helm-$name.yaml" "$tmp/helm-$name.ndjson"
    queue "$tmp/helm-$name.ndjson" "helm template ($name)"
}
render default
render history-pvc -f "$CHART/ci/history-pvc-values.yaml"
render restricted -f "$CHART/ci/restricted-values.yaml"
# rbac.pullSecretSource renders manifests/rbac-pull-secret.yaml (whose example names it uses)
render pull-secret --set rbac.pullSecretSource.name=regcred
to_ndjson "$SRC/manifests/rbac-pull-secret.yaml" "$tmp/plain-pull.ndjson"
diff <(jq -S 'select(.metadata.name == "kperf-pull-secret")' "$tmp/helm-pull-secret.ndjson") \
    <(jq -S . "$tmp/plain-pull.ndjson") >"$tmp/diff" ||
    { cat "$tmp/diff"; fail "rbac.pullSecretSource differs from manifests/rbac-pull-secret.yaml"; }

# one source of truth: the default rendering is the plain YAML
diff <(jq . "$tmp/plain.ndjson") <(jq . "$tmp/helm-default.ndjson") >"$tmp/diff" ||
    { cat "$tmp/diff"; fail "helm template (default values) differs from manifests/*.yaml"; }
host_split "$tmp/plain.ndjson" kperf kperf-host "manifests/*.yaml"
host_split "$tmp/helm-default.ndjson" kperf kperf-host "helm template (default)"
# the host namespace renamed, the agents from a mirror: flag, RBAC, binding and policy follow
render host-renamed --set hostNamespace.name=perf-host --set agentImage.registry=mirror.example/k
host_split "$tmp/helm-host-renamed.ndjson" kperf perf-host "hostNamespace.name=perf-host"
# none: no host namespace objects, no flag, and the one namespace is "privileged" again
render no-host --set hostNamespace.name=
jq -e -s 'all(.[]; (.kind | startswith("ValidatingAdmission") | not) and
          .metadata.name != "kperf-host" and .metadata.namespace != "kperf-host") and
          (map(select(.kind == "Namespace")) | map(.metadata.labels["pod-security.kubernetes.io/enforce"])) == ["privileged"] and
          (map(select(.kind == "CronJob"))[0].spec.jobTemplate.spec.template.spec.initContainers[0].args |
           index("--host-namespace") == null) and
          (map(select(.kind == "ClusterRole"))[0].rules[] | select(.resources == ["namespaces"]) | .resourceNames) == ["kperf"]' \
    "$tmp/helm-no-host.ndjson" >/dev/null || fail "hostNamespace.name='': host namespace objects or flag left"

# the packaged chart (what a chart repository serves) carries the linked files: same objects
"$HELM" package "$CHART" -d "$tmp" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "helm package"; }
"$HELM" template kperf "$tmp"/kperf-*.tgz >"$tmp/helm-packaged.yaml" 2>"$tmp/err" || { cat "$tmp/err"; fail "helm template kperf-*.tgz"; }
to_ndjson "$tmp/helm-packaged.yaml" "$tmp/helm-packaged.ndjson"
cmp -s "$tmp/plain.ndjson" "$tmp/helm-packaged.ndjson" || fail "the packaged chart renders other objects"
# (tar's list captured: under pipefail a SIGPIPE'd tar would make the pipeline false, and the check pass)
grep -q '^kperf/ci/' <<<"$(tar -tzf "$tmp"/kperf-*.tgz)" && fail "the packaged chart carries ci/"

P=helm-history-pvc
host_split "$tmp/$P.ndjson" kperf kperf-host "$P"
# perRunNamespaces adds rbac-namespaces.yaml, and nothing else RBAC-wise besides the baseline rule
jq -c 'select(.metadata.name == "kperf-namespaces")' "$tmp/$P.ndjson" >"$tmp/rbac-ns.ndjson"
cmp -s "$tmp/rbac-ns.ndjson" "$tmp/plain-rbac-ns.ndjson" ||
    fail "rbac.perRunNamespaces does not render manifests/rbac-namespaces.yaml"
cron '.spec.jobTemplate.spec.template.spec.volumes[1] == {name: "baseline",
      persistentVolumeClaim: {claimName: "kperf-history", readOnly: true}}' "$tmp/$P.ndjson" ||
    fail "$P: baseline.existingClaim"
jq -e -s 'map(select(.kind == "Role" and .metadata.name == "kperf"))[0].rules |
          all(.[]; .resources | index("configmaps") | not)' "$tmp/$P.ndjson" >/dev/null ||
    fail "$P: a PVC baseline still grants the ConfigMap"
cron '.spec.timeZone == "Europe/Berlin" and .spec.schedule == "30 1 * * 1-5"' "$tmp/$P.ndjson" ||
    fail "$P: schedule"
cron '.spec.jobTemplate.spec.template.spec as $s |
      $s.nodeSelector == {"node-role.example.com/perf": "true"} and
      $s.tolerations[0].key == "dedicated" and $s.imagePullSecrets == [{name: "regcred"}] and
      ($s.initContainers + $s.containers | all(.[]; .image == "mirror.example.internal/kperf/kperf:0.1.0-rc1"
        and .imagePullPolicy == "Always")) and
      ($s.initContainers[0].args | join(" ") | test("--tests all .*--image mirror.example.internal/kperf/kperf-agent:0.1.0-rc1 --image-pull-policy IfNotPresent --image-pull-secret regcred --node-selector node-role.example.com/perf=true --tolerations dedicated=perf:NoSchedule "))' \
    "$tmp/$P.ndjson" || fail "$P: images, placement or agent flags"

R=helm-restricted
jq -e -s 'map(select(.kind == "Namespace"))[0].metadata |
          .name == "perf" and .labels["pod-security.kubernetes.io/enforce"] == "restricted" and
          .labels.team == "netperf"' "$tmp/$R.ndjson" >/dev/null || fail "$R: namespace"
jq -e -s 'all(.[]; (.metadata.namespace // "perf") as $n | ($n == "perf" or $n == "kube-system")
          and .metadata.labels.team == "netperf" and
          all((.subjects // [])[]; .namespace == "perf" and .name == "perf-runner"))' \
    "$tmp/$R.ndjson" >/dev/null || fail "$R: objects outside namespace perf or unlabelled"
jq -e -s 'all(.[]; .kind | startswith("ValidatingAdmission") | not) and
          (map(select(.kind == "ClusterRole"))[0].rules[] | select(.resources == ["namespaces"]) | .resourceNames) == ["perf"]' \
    "$tmp/$R.ndjson" >/dev/null || fail "$R: host namespace objects without a host namespace"
cron '.metadata.name == "perf-hourly" and .spec.suspend == true and
      .spec.successfulJobsHistoryLimit == 3 and
      (.spec.jobTemplate.spec.template.spec.initContainers[0].args | join(" ")) ==
      "run --namespace perf --scenarios pod-to-pod,pod-to-service --tests TCP_RR,TCP_CRR --duration 10s --samples 3 --image ghcr.io/kperf/kperf-agent:0.1.0 --streams 8 --timeout 5m --output json --output-dir /results" and
      (.spec.jobTemplate.spec.template.spec.containers[0].args | join(" ")) ==
      "compare /baseline/report.json /results/report.json --threshold 10%" and
      .spec.jobTemplate.spec.template.spec.volumes[1].configMap.name == "perf-baseline"' \
    "$tmp/$R.ndjson" || fail "$R: CronJob"

# history on a volume: the chart's rendering is manifests/cronjob-pvc.yaml (+ history-pvc.yaml
# is the claim it names); the job keeps RBAC as it is
render pvc --set history.existingClaim=kperf-history
to_ndjson "$SRC/manifests/cronjob-pvc.yaml" "$tmp/plain-pvc.ndjson"
diff <(jq . "$tmp/plain-pvc.ndjson") <(jq -c 'select(.kind == "CronJob")' "$tmp/helm-pvc.ndjson" | jq .) >"$tmp/diff" ||
    { cat "$tmp/diff"; fail "helm history.existingClaim differs from manifests/cronjob-pvc.yaml"; }
cmp -s <(grep -v '"kind":"CronJob"' "$tmp/helm-default.ndjson") <(grep -v '"kind":"CronJob"' "$tmp/helm-pvc.ndjson") ||
    fail "history.existingClaim changes more than the CronJob"
"$KPERF" manifests --from-yaml "$SRC/manifests/history-pvc.yaml" |
    jq -e -s '.[0].kind == "PersistentVolumeClaim" and .[0].metadata.name == "kperf-history" and
              .[0].metadata.namespace == "kperf"' >/dev/null || fail "history-pvc.yaml: not the claim kperf-history"
if "$HELM" template kperf "$CHART" --set history.existingClaim=h --set history.keep=0 >/dev/null 2>"$tmp/err"; then
    fail "history.keep=0 rendered"
elif ! grep -q 'history.keep: must be at least 1' "$tmp/err"; then
    fail "history.keep=0: unclear error: $(cat "$tmp/err")"
fi

# the Pushgateway: "run" pushes its metrics (e2e.prometheus_push tests the push itself)
render push --set pushgateway.url=http://pushgateway.monitoring:9091 --set pushgateway.clusterName=prod-eu
cron '(.spec.jobTemplate.spec.template.spec.initContainers[0].args | join(" ") |
       endswith("--output json --output-dir /results --history configmap:kperf-history --keep-runs 30 --push-gateway http://pushgateway.monitoring:9091 --cluster-name prod-eu"))' \
    "$tmp/helm-push.ndjson" || fail "pushgateway.url: no --push-gateway/--cluster-name in run"
# ... and "compare" its verdict gauges; notify.url and reportUrl: --notify and --report-url
render notify --set pushgateway.url=http://pushgateway.monitoring:9091 \
    --set notify.url=https://hooks.example/T/B/x --set notify.reportUrl=https://r.example/nightly
cron '(.spec.jobTemplate.spec.template.spec.containers[0].args | join(" ") |
       endswith("/results/report.json --push-gateway http://pushgateway.monitoring:9091 --notify https://hooks.example/T/B/x --report-url https://r.example/nightly")) and
      .spec.jobTemplate.spec.template.spec.containers[0].terminationMessagePolicy == "FallbackToLogsOnError"' \
    "$tmp/helm-notify.ndjson" || fail "notify.url: no --push-gateway/--notify/--report-url in compare"

# 3. kustomize: the base is the plain YAML; each overlay changes only the CronJob, as it says
"$KUBECTL" kustomize "$SRC/manifests" >"$tmp/k-base.yaml" || fail "kubectl kustomize manifests"
to_ndjson "$tmp/k-base.yaml" "$tmp/k-base.ndjson"
queue "$tmp/k-base.ndjson" "kustomize base"
cmp -s "$tmp/plain.ndjson" "$tmp/k-base.ndjson" || fail "kustomize base differs from manifests/*.yaml"
host_split "$tmp/k-base.ndjson" kperf kperf-host "kustomize base"
for o in eks-vpc-cni tke cilium; do
    "$KUBECTL" kustomize "$SRC/deploy/overlays/$o" >"$tmp/k-$o.yaml" || { fail "kubectl kustomize $o"; continue; }
    to_ndjson "$tmp/k-$o.yaml" "$tmp/k-$o.ndjson"
    queue "$tmp/k-$o.ndjson" "kustomize $o"
    host_split "$tmp/k-$o.ndjson" kperf kperf-host "kustomize $o"
    # tke's agent image is also the one its admission policy admits (host_split checks it)
    k='"kind":"CronJob"'
    [ "$o" = tke ] && k='"kind":"\(CronJob\|ValidatingAdmissionPolicy\)"'
    cmp -s <(grep -v "$k" "$tmp/plain.ndjson") <(grep -v "$k" "$tmp/k-$o.ndjson") ||
        fail "overlay $o changes more than the CronJob"
done
A='.spec.jobTemplate.spec.template.spec.initContainers[0].args | join(" ")'
cron "(.spec.jobTemplate.spec.template.spec.nodeSelector == {\"eks.amazonaws.com/capacityType\": \"ON_DEMAND\"})
      and ($A | endswith(\"--node-selector eks.amazonaws.com/capacityType=ON_DEMAND\"))" \
    "$tmp/k-eks-vpc-cni.ndjson" || fail "overlay eks-vpc-cni"
cron ".spec.timeZone == \"Asia/Shanghai\" and
      (.spec.jobTemplate.spec.template.spec | [.initContainers[0].image, .containers[0].image] ==
       [\"ccr.ccs.tencentyun.com/your-namespace/kperf:0.1.0\", \"ccr.ccs.tencentyun.com/your-namespace/kperf:0.1.0\"])
      and ($A | test(\"--image ccr.ccs.tencentyun.com/your-namespace/kperf-agent:0.1.0 \"))" \
    "$tmp/k-tke.ndjson" || fail "overlay tke"
cron "($A | endswith(\"--tests all\")) and .spec.jobTemplate.spec.activeDeadlineSeconds == 7200" \
    "$tmp/k-cilium.ndjson" || fail "overlay cilium"

# 4. the schemas, all at once (python start-up dominates)
mapfile -t files <"$tmp/queue"
python3 "$VALIDATE" --quiet "${files[@]}" || fail "some objects are not valid (above)"
# the check can fail: a misspelt field in a rendered CronJob is caught
jq -s -c 'map(select(.kind == "CronJob"))[0] | .spec.jobTemplate.spec.template.spec.nodeselector = {}' \
    "$tmp/helm-default.ndjson" >"$tmp/bad.json"
if python3 "$VALIDATE" --quiet "$tmp/bad.json" >"$tmp/err"; then
    fail "the validator accepted a misspelt field"
fi
[ "${#files[@]}" -ge 60 ] || fail "only ${#files[@]} objects validated"
failed || pass "helm (3 value sets) and kustomize (base + 3 overlays): ${#files[@]} objects valid; defaults equal manifests/; host-network agents in kperf-host everywhere"
finish
