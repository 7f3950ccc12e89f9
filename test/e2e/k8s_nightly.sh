#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The nightly CronJob's pod spec (manifests/cronjob.yaml) against kube-sim, with in-cluster
# style credentials and the least-privilege RBAC of manifests/rbac.yaml enforced: kube-sim runs
# with --rbac manifests/rbac.yaml for the user system:serviceaccount:kperf:kperf; kperf gets
# KUBERNETES_SERVICE_HOST/PORT and a service-account directory (token, ca.crt, namespace), no
# kubeconfig; the "run" init container's args then the "compare" container's args run as in
# the pod (paths /baseline and /results mapped to temporary directories, a shorter duration),
# after planting what a killed earlier night left in namespace kperf: the run removes it first.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3 --rbac "$KPERF_SRC/manifests/rbac.yaml" --user system:serviceaccount:kperf:kperf
kadmin apply -f "$KPERF_SRC/manifests/namespace.yaml" >/dev/null || fail "namespace.yaml"
kadmin apply -f "$KPERF_SRC/manifests/rbac.yaml" >/dev/null || fail "rbac.yaml"

# in-cluster credentials: the kubeconfig's token and CA as a service-account mount
sa="$K8S_DIR/sa"
mkdir -p "$sa" "$K8S_DIR/baseline" "$K8S_DIR/results"
kc="$K8S_DIR/kubeconfig"
"$KUBECTL" --kubeconfig "$kc" config view --raw -o jsonpath='{.users[0].user.token}' >"$sa/token"
"$KUBECTL" --kubeconfig "$kc" config view --raw \
    -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$sa/ca.crt"
printf kperf >"$sa/namespace"
server=$("$KUBECTL" --kubeconfig "$kc" config view --raw -o jsonpath='{.clusters[0].cluster.server}')
hostport=${server#https://}
[ -s "$sa/token" ] && [ -s "$sa/ca.crt" ] || { fail "no token/CA in the kubeconfig"; ks_finish; }

# the containers' args, from the manifest itself
"$KPERF" manifests --from-yaml "$KPERF_SRC/manifests/cronjob.yaml" >"$K8S_DIR/cronjob.json" ||
    fail "cronjob.yaml does not parse"
mapfile -t run_args < <(jq -r '.spec.jobTemplate.spec.template.spec.initContainers[0].args[]' \
    "$K8S_DIR/cronjob.json" | sed -e "s#^/baseline#$K8S_DIR/baseline#" -e "s#^/results#$K8S_DIR/results#")
mapfile -t cmp_args < <(jq -r '.spec.jobTemplate.spec.template.spec.containers[0].args[]' \
    "$K8S_DIR/cronjob.json" | sed -e "s#^/baseline#$K8S_DIR/baseline#" -e "s#^/results#$K8S_DIR/results#")
[ "${run_args[0]}" = run ] && [ "${cmp_args[0]}" = compare ] || fail "unexpected container args"

in_cluster() {
    env -u KUBECONFIG HOME="$K8S_DIR" KUBERNETES_SERVICE_HOST="${hostport%:*}" \
        KUBERNETES_SERVICE_PORT="${hostport##*:}" KPERF_INCLUSTER_ROOT="$sa" "$KPERF" "$@"
}
short=(--duration 1s --samples 1 --tests TCP_RR,TCP_STREAM --image kperf-agent:e2e)

# the baseline a person would take first (same identity, same namespace)
in_cluster run -n kperf --scenarios pod-to-pod,host-to-host "${short[@]}" -o json \
    >"$K8S_DIR/baseline/report.json" 2>"$K8S_DIR/base.err" &&
    pass "baseline run with in-cluster credentials and rbac.yaml" ||
    { fail "baseline run"; tail -5 "$K8S_DIR/base.err"; }
# what a killed earlier night left in namespace kperf: its objects and a Lease nobody renews
dead=20261130-020000-dead01
cat <<YAML | kadmin apply -f - >/dev/null || fail "planting a crashed run"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: kperf-run-$dead
  namespace: kperf
  labels: {app.kubernetes.io/managed-by: kperf, app.kubernetes.io/name: kperf, kperf.io/run-id: "$dead"}
spec: {holderIdentity: kperf@gone/1, leaseDurationSeconds: 30,
       acquireTime: "2026-11-30T02:00:00.000000Z", renewTime: "2026-11-30T02:10:00.000000Z"}
---
apiVersion: v1
kind: Secret
metadata:
  name: kperf-token
  namespace: kperf
  labels: {app.kubernetes.io/managed-by: kperf, app.kubernetes.io/name: kperf, kperf.io/run-id: "$dead"}
stringData: {token: x}
YAML
# the init container, as in the pod (plus the shorter duration)
in_cluster "${run_args[@]}" "${short[@]}" >"$K8S_DIR/run.json" 2>"$K8S_DIR/run.err"
rc=$?
grep -q "removing run $dead in namespace kperf: its lease expired" "$K8S_DIR/run.err" &&
    [ -z "$(kadmin get secrets,leases -n kperf -l "kperf.io/run-id=$dead" -o name)" ] &&
    pass "the nightly run first removed the killed run $dead (expired Lease)" ||
    fail "crashed run not removed: $(grep -m1 "$dead" "$K8S_DIR/run.err"; kadmin get secrets,leases -n kperf -o name | tr '\n' ' ')"
if [ "$rc" = 0 ] && [ -s "$K8S_DIR/results/report.json" ] &&
    jq -e '.results | length > 0' "$K8S_DIR/run.json" >/dev/null; then
    pass "CronJob 'run' container: report on stdout and in the results volume"
else
    fail "CronJob 'run' container: rc=$rc"; tail -5 "$K8S_DIR/run.err"
fi
jq -e --slurpfile b "$K8S_DIR/baseline/report.json" \
    '[.metadata.nodes[].name] == [$b[0].metadata.nodes[].name]' "$K8S_DIR/run.json" >/dev/null &&
    pass "--nodes-from: the nightly run measured the baseline's nodes" || fail "node pair differs"
in_cluster "${cmp_args[@]}" >"$K8S_DIR/compare.out" 2>"$K8S_DIR/compare.err"
rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
    pass "CronJob 'compare' container: exit $rc (3 = regression fails the Job)"
else
    fail "compare: rc=$rc"; tail -5 "$K8S_DIR/compare.err"
    keep=/tmp/kperf-nightly-failed; rm -rf "$keep"; mkdir -p "$keep"
    cp "$K8S_DIR/baseline/report.json" "$keep/base.json"; cp "$K8S_DIR/results/report.json" "$keep/new.json"
    echo "reports kept in $keep"
fi

# the baseline ConfigMap from kperf itself: applies; a report over 1 MiB is refused by kperf
"$KPERF" manifests --baseline-configmap "$K8S_DIR/baseline/report.json" -n kperf >"$K8S_DIR/cm.yaml" &&
    kadmin apply -f "$K8S_DIR/cm.yaml" >/dev/null &&
    kadmin get configmap kperf-baseline -n kperf -o json | jq -e '.data["report.json"] | fromjson |
        .schema == "kperf.report/v1"' >/dev/null &&
    pass "manifests --baseline-configmap: ConfigMap kperf-baseline applied, report.json intact" ||
    fail "baseline ConfigMap from kperf manifests"
jq '.results[0].samples as $s | .results[0].samples = [range(0; 400) as $i | ($s[0] | .sample = $i)]' \
    "$K8S_DIR/baseline/report.json" >"$K8S_DIR/big.json"
"$KPERF" manifests --baseline-configmap "$K8S_DIR/big.json" >/dev/null 2>"$K8S_DIR/big.err"
rc=$?
[ "$rc" = 1 ] && grep -q "over the 1048576-byte (1 MiB) limit of a ConfigMap: keep it on a volume" "$K8S_DIR/big.err" &&
    pass "a $(stat -c %s "$K8S_DIR/big.json")-byte baseline is refused before the API server: $(cut -c1-120 "$K8S_DIR/big.err")" ||
    fail "big baseline: exit $rc: $(cat "$K8S_DIR/big.err")"

# cronjob-pvc.yaml: three nights (time compressed) on a history volume. Each night runs the
# "run" then the "compare" container's args as in the pod, /history mapped to a directory:
# night 1 has nothing to judge against (--first-run-ok: exit 0), night 2 is judged against
# night 1, night 3 against nights 1 and 2 from the history (named on compare's stderr).
# --keep-runs 30 becomes 3 (retention: the run history and the night folders keep 3).
"$KPERF" manifests --from-yaml "$KPERF_SRC/manifests/cronjob-pvc.yaml" >"$K8S_DIR/cronjob-pvc.json" ||
    fail "cronjob-pvc.yaml does not parse"
H="$K8S_DIR/history"
mkdir -p "$H"
mapfile -t pvc_run < <(jq -r '.spec.jobTemplate.spec.template.spec.initContainers[0].args[]' \
    "$K8S_DIR/cronjob-pvc.json" | sed -e "s#^/baseline#$K8S_DIR/baseline#" -e "s#^/history#$H#" -e 's#^30$#3#')
mapfile -t pvc_cmp < <(jq -r '.spec.jobTemplate.spec.template.spec.containers[0].args[]' \
    "$K8S_DIR/cronjob-pvc.json" | sed -e "s#^/baseline#$K8S_DIR/baseline#" -e "s#^/history#$H#")
printf '%s\n' "${pvc_run[@]}" | grep -qx -- --keep-runs || fail "cronjob-pvc.yaml: no --keep-runs"
printf '%s\n' "${pvc_run[@]}" | grep -qx -- --history || fail "cronjob-pvc.yaml: run has no --history"
printf '%s\n' "${pvc_cmp[@]}" | grep -qx -- --baseline || fail "cronjob-pvc.yaml: compare has no --baseline"
nights=() hfiles=()
for night in 1 2 3; do
    before=$(find "$H/runs" -name '*.json' 2>/dev/null | sort)
    in_cluster "${pvc_run[@]}" "${short[@]}" --scenarios pod-to-pod >/dev/null 2>"$K8S_DIR/pvc-run.err" ||
        { fail "PVC night $night: run failed"; tail -3 "$K8S_DIR/pvc-run.err"; }
    nights+=("$(readlink "$H/nights/latest")")
    added=$(comm -13 <(echo "$before") <(find "$H/runs" -name '*.json' | sort))
    [ "$(echo "$added" | grep -c .)" = 1 ] || fail "PVC night $night: --history added [$added]"
    hfiles+=("$(basename "$added")")
    in_cluster "${pvc_cmp[@]}" >"$K8S_DIR/pvc-cmp$night.out" 2>"$K8S_DIR/pvc-cmp$night.err"
    rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] ||
        { fail "PVC night $night: compare exit $rc"; tail -3 "$K8S_DIR/pvc-cmp$night.err"; }
    # the next night starts in a later second: its folder name differs
    while [ "$(date -u +%Y%m%dT%H%M%SZ)" = "${nights[-1]}" ]; do sleep 0.2; done
done
grep -q "the first run, nothing to judge" "$K8S_DIR/pvc-cmp1.err" && [ ! -s "$K8S_DIR/pvc-cmp1.out" ] &&
    pass "PVC night 1: nothing in the history yet, compare passes: $(cat "$K8S_DIR/pvc-cmp1.err")" ||
    fail "PVC night 1: $(cat "$K8S_DIR/pvc-cmp1.err")"
grep -q "against 1 earlier run of .*: ${hfiles[0]}\$" "$K8S_DIR/pvc-cmp2.err" &&
    pass "PVC night 2 judged against night 1 (${hfiles[0]})" ||
    fail "PVC night 2: $(cat "$K8S_DIR/pvc-cmp2.err")"
grep -q "against 2 earlier runs of .*: ${hfiles[0]} ${hfiles[1]}\$" "$K8S_DIR/pvc-cmp3.err" &&
    grep -q "judged against the last 2 comparable runs" "$K8S_DIR/pvc-cmp3.out" &&
    pass "PVC night 3 judged against nights 1 and 2 from the history: $(grep -m1 judging "$K8S_DIR/pvc-cmp3.err")" ||
    fail "PVC night 3: $(cat "$K8S_DIR/pvc-cmp3.err"; head -2 "$K8S_DIR/pvc-cmp3.out")"
kept=$(cd "$H/nights" && ls -d 2*Z 2>/dev/null | tr '\n' ' ')
[ "${#nights[@]}" = 3 ] && [ "${nights[0]}" != "${nights[1]}" ] && [ "${nights[1]}" != "${nights[2]}" ] &&
    [ "$kept" = "${nights[0]} ${nights[1]} ${nights[2]} " ] && [ "$(readlink "$H/nights/latest")" = "${nights[2]}" ] &&
    jq -e '.results | length > 0' "$H/nights/latest/report.json" >/dev/null &&
    [ "$("$KPERF" history list "$H/runs" | grep -c "\.json$")" = 3 ] &&
    pass "cronjob-pvc.yaml: 3 nights kept (${kept}), latest -> ${nights[2]}, 3 runs in the history" ||
    fail "PVC history: nights ${nights[*]}, kept [$kept], latest $(readlink "$H/nights/latest"), history: $("$KPERF" history list "$H/runs" | tr '\n' ' ')"

# the identity cannot do more than rbac.yaml says: no namespace of its own
in_cluster run --scenarios pod-to-pod "${short[@]}" >/dev/null 2>"$K8S_DIR/denied.err"
grep -q "missing permissions" "$K8S_DIR/denied.err" &&
    pass "least privilege: runs outside -n kperf are refused at preflight: $(grep -m1 "missing permissions" "$K8S_DIR/denied.err" | cut -c1-200)" ||
    { fail "preflight did not report missing permissions"; tail -3 "$K8S_DIR/denied.err"; }
k8s_nothing_left "nightly"
ks_finish
