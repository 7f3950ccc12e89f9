#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The nightly CronJob (manifests/cronjob-pvc.yaml with its claim, manifests/history-pvc.yaml) run
# BY kube-sim for three nights, time compressed: kube-sim's CronJob controller starts each night's
# Job at 02:17 of the simulated clock (kube-sim cron --next jumps to it), the pod's init container
# "run" and container "compare" are the real kperf binary with in-cluster credentials (the
# ServiceAccount token, ca.crt and namespace at /var/run/secrets/kubernetes.io/serviceaccount,
# the API through the kubernetes Service), the least-privilege RBAC of manifests/rbac.yaml
# enforced, and the history on a PersistentVolumeClaim bound by kube-sim's provisioner that
# outlives each pod. The manifest is applied as shipped except the run's length (1 s, 1 sample,
# pod-to-pod TCP_RR) and --keep-runs 30 -> 3. Before night 1 the objects of a killed earlier run
# are planted in namespace kperf: night 1's run removes them first. Night 1 has nothing to judge
# against; night 2 is judged against night 1; night 3 against nights 1 and 2 from the history;
# between nights 1 and 2 the baseline's nodes are replaced (kube-sim node add --like / node
# remove: new names, the same shape), so nights 2 and 3 run on the replacements named in
# metadata.nodes_substituted and night 3 exits 0;
# night 4 against a history made 3x faster (an injected regression: exit 3, the Job fails). Each
# night's containers leave a one-line verdict in their termination message.
# Also: the baseline ConfigMap from kperf manifests (and its 1 MiB limit), least privilege
# outside -n kperf.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
export KUBECTL=${KUBECTL:-$(bash "$KPERF_SRC/test/tools/get-kubectl.sh")}
# the shipped split: the job and the pod-network agents in kperf ("restricted"), the
# host-network agents' namespace kperf-host with its RBAC (the CronJob passes --host-namespace)
k8s_up --nodes 3 --rbac "$KPERF_SRC/manifests/rbac.yaml" --rbac "$KPERF_SRC/manifests/rbac-host.yaml" \
    --user system:serviceaccount:kperf:kperf --cron-start 2026-12-01T00:00:00Z --gc-lag 0
for f in namespace namespace-host rbac rbac-host; do
    kadmin apply -f "$KPERF_SRC/manifests/$f.yaml" >/dev/null || fail "$f.yaml"
done
mkdir -p "$K8S_DIR/baseline"
# a person's own runs from the host: the kubeconfig of the same identity
# (system:serviceaccount:kperf:kperf, RBAC enforced)
in_cluster() {
    env HOME="$K8S_DIR" KUBECONFIG="$K8S_DIR/kubeconfig" "$KPERF" "$@"
}
short=(--duration 1s --samples 1 --tests TCP_RR --image kperf-agent:e2e)

# the baseline a person would take first (same identity, same namespace)
in_cluster run -n kperf --scenarios pod-to-pod "${short[@]}" -o json \
    >"$K8S_DIR/baseline/report.json" 2>"$K8S_DIR/base.err" &&
    pass "baseline run with the kperf ServiceAccount's rights (rbac.yaml)" ||
    { fail "baseline run"; tail -5 "$K8S_DIR/base.err"; }
# provenance read with the shipped rights (issue 31): kube-sim's kube-proxy is kubeadm's, its
# mode in ConfigMap kube-proxy's config.conf (kube-proxy-config is absent: not found, skipped)
jq -e '.metadata.kube_proxy_mode == "nftables" and
    .metadata.kube_proxy_mode_source == "ConfigMap kube-system/kube-proxy key config.conf"' \
    "$K8S_DIR/baseline/report.json" >/dev/null &&
    pass "kube-proxy mode nftables from ConfigMap kube-proxy key config.conf (rbac.yaml's rights)" ||
    fail "kube-proxy mode: $(jq -c '.metadata | {kube_proxy_mode, kube_proxy_mode_source}' \
        "$K8S_DIR/baseline/report.json")"

# the baseline ConfigMap from kperf itself: applies; a report over 1 MiB is refused by kperf
"$KPERF" manifests --baseline-configmap "$K8S_DIR/baseline/report.json" -n kperf >"$K8S_DIR/cm.yaml" &&
    kadmin apply -f "$K8S_DIR/cm.yaml" >/dev/null &&
    kadmin get configmap kperf-baseline -n kperf -o json | jq -e '.data["report.json"] | fromjson |
        .schema == "kperf.report/v1"' >/dev/null &&
    pass "manifests --baseline-configmap: ConfigMap kperf-baseline applied, report.json intact" ||
    fail "baseline ConfigMap from kperf manifests"
jq '.results[0].samples as $s | .results[0].samples = [range(0; 400) as $i | ($s[0] | .sample = $i)]' \
    "$K8S_DIR/baseline/report.json" >"$K8S_DIR/big.json"
# (run in K8S_DIR with a relative name: the message is then the one docs/history-volume.md shows)
(cd "$K8S_DIR" && "$KPERF" manifests --baseline-configmap big.json >/dev/null 2>big.err)
rc=$?
python3 "$KPERF_SRC/scripts/check-docs.py" check "$KPERF_SRC/docs/history-volume.md" k8s_nightly.sh "$K8S_DIR/big.err" ||
    fail "docs/history-volume.md's refusal message drifted from what kperf prints"
[ "$rc" = 1 ] && grep -q "over the 1048576-byte (1 MiB) limit of a ConfigMap: keep it on a volume" "$K8S_DIR/big.err" &&
    pass "a $(stat -c %s "$K8S_DIR/big.json")-byte baseline is refused before the API server: $(cut -c1-120 "$K8S_DIR/big.err")" ||
    fail "big baseline: exit $rc: $(cat "$K8S_DIR/big.err")"

# what a killed earlier night left in namespace kperf: its objects and a Lease nobody renews
# (night 0's run watches it for its whole leaseDurationSeconds before removing it: 5 s here)
dead=20261130-020000-dead01
cat <<YAML | kadmin apply -f - >/dev/null || fail "planting a crashed run"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: kperf-run-$dead
  namespace: kperf
  labels: {app.kubernetes.io/managed-by: kperf, app.kubernetes.io/name: kperf, kperf.io/run-id: "$dead"}
spec: {holderIdentity: kperf@gone/1, leaseDurationSeconds: 5,
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

# a CronJob manifest as shipped but for the run's length and retention: FILE.yaml -> FILE-short.json
shorten() {
    local b
    b=$K8S_DIR/$(basename "$1" .yaml)
    "$KPERF" manifests --from-yaml "$1" >"$b.json" || fail "$1 does not parse"
    jq '.spec.jobTemplate.spec.template.spec.initContainers[0].args |= (. as $a |
            {"--duration": "1s", "--samples": "1", "--scenarios": "pod-to-pod", "--keep-runs": "3"} as $m |
            [range(0; length) as $i | ($m[if $i > 0 then $a[$i - 1] else "" end] // $a[$i])] +
            ["--tests", "TCP_RR"])' "$b.json" >"$b-short.json"
    # nothing but those args differs from the manifest
    [ "$(jq -S 'del(.spec.jobTemplate.spec.template.spec.initContainers[0].args)' "$b.json")" = \
        "$(jq -S 'del(.spec.jobTemplate.spec.template.spec.initContainers[0].args)' "$b-short.json")" ] &&
        jq -e '.spec.schedule == "17 2 * * *" and .spec.concurrencyPolicy == "Forbid"' "$b-short.json" >/dev/null ||
        fail "the shortened $1 differs from the manifest beyond the run's args"
    kadmin apply -f "$b-short.json" >/dev/null || fail "applying $1"
}
# job_ended: st = the Job's Complete or Failed condition, once it has one (sets the caller's st)
job_ended() {
    st=$(kadmin get job "$JOB" -n kperf -o json 2>/dev/null |
        jq -r '[.status.conditions[]? | select(.status == "True" and
                (.type == "Complete" or .type == "Failed")) | .type][0] // empty')
    [ -n "$st" ]
}
# one night: the clock jumps to the next 02:17, the controller creates the Job, it runs to the end
night() {
    local n=$1 out now st pod t0=$SECONDS
    out=$("$KS" cron --state-dir "$K8S_DIR" --next) || { fail "night $n: kube-sim cron --next"; return 1; }
    now=$(jq -r .now <<<"$out")
    JOB=kperf-nightly-$(($(date -ud "$now" +%s) / 60))
    st=
    # 60 s bounds a hang (a night's Job takes ~10 s); job_ended sets st
    wait_for 60 "Job $JOB to complete or fail" job_ended
    pod=$(kadmin get pods -n kperf -l "job-name=$JOB" -o name | head -1)
    kadmin logs -n kperf "$pod" -c run >"$K8S_DIR/run$n.log" 2>&1
    kadmin logs -n kperf "$pod" -c compare >"$K8S_DIR/cmp$n.log" 2>&1
    kadmin get -n kperf "$pod" -o json >"$K8S_DIR/pod$n.json"
    # seconds: Job created -> run started, run, compare (pod timestamps, real time)
    times=$(jq -r --slurpfile j <(kadmin get job "$JOB" -n kperf -o json) '
        def s: sub("\\.[0-9]+"; "") | fromdate;
        (.status.initContainerStatuses[0].state.terminated // {}) as $r |
        (.status.containerStatuses[0].state.terminated // {}) as $c |
        if $r.startedAt and $c.finishedAt then
            "start \(($r.startedAt | s) - ($j[0].metadata.creationTimestamp | s)) s, run \(($r.finishedAt | s) - ($r.startedAt | s)) s, compare \(($c.finishedAt | s) - ($c.startedAt | s)) s"
        else "no times" end' "$K8S_DIR/pod$n.json" 2>/dev/null)
    runrc=$(jq -r '.status.initContainerStatuses[0].state.terminated.exitCode // "none"' "$K8S_DIR/pod$n.json")
    cmprc=$(jq -r '.status.containerStatuses[0].state.terminated.exitCode // "none"' "$K8S_DIR/pod$n.json")
    # the containers' termination messages, as kube-sim's kubelet keeps them (kubesim/termmsg.py)
    runmsg=$(jq -r '.status.initContainerStatuses[0].state.terminated.message // "none"' "$K8S_DIR/pod$n.json")
    cmpmsg=$(jq -r '.status.containerStatuses[0].state.terminated.message // "none"' "$K8S_DIR/pod$n.json")
    if [ "$runrc" = 0 ] && { [ "$cmprc" = 0 ] || [ "$cmprc" = 3 ] || [ "$cmprc" = 5 ]; } &&
        { [ "$st" = Complete ] || { [ "$st" = Failed ] && [ "$cmprc" != 0 ]; }; }; then
        pass "night $n ($now): Job $JOB $st, run exit 0, compare exit $cmprc (3 regression, 5 inconclusive: fail the Job); $times; $((SECONDS - t0)) s in all"
    else
        fail "night $n ($now): Job $JOB [$st], run exit $runrc, compare exit $cmprc"
        tail -n 5 "$K8S_DIR/run$n.log" "$K8S_DIR/cmp$n.log"
    fi
}

# night 0: manifests/cronjob.yaml (an emptyDir for the results, the history in ConfigMaps);
# ConfigMap); its run first removes what the killed earlier run left
shorten "$KPERF_SRC/manifests/cronjob.yaml"
night 0
grep -q "removing run $dead in namespace kperf: its lease expired" "$K8S_DIR/run0.log" &&
    [ -z "$(kadmin get secrets,leases -n kperf -l "kperf.io/run-id=$dead" -o name)" ] &&
    pass "night 0's run first removed the killed run $dead (expired Lease)" ||
    fail "crashed run not removed: $(grep -m1 "$dead" "$K8S_DIR/run0.log"; kadmin get secrets,leases -n kperf -o name | tr '\n' ' ')"
uid0=$(jq -r .metadata.uid "$K8S_DIR/pod0.json")
jq -e '.spec.initContainers[0].args as $a | $a[($a | index("--host-namespace")) + 1] == "kperf-host"' \
    "$K8S_DIR/pod0.json" >/dev/null &&
    pass "night 0 ran with --host-namespace kperf-host (its dead-run cleanup covers kperf-host too)" ||
    fail "night 0's run has no --host-namespace kperf-host"
jq -e '.results | length > 0' "$K8S_DIR/pods/$uid0/volumes/results/report.json" >/dev/null &&
    grep -q '"schema": *"kperf.report/v1"' "$K8S_DIR/run0.log" &&
    jq -e '.spec.serviceAccountName == "kperf" and
        ([.spec.initContainers[0].volumeMounts[].mountPath] | index("/var/run/secrets/kubernetes.io/serviceaccount") != null) and
        .metadata.ownerReferences[0].kind == "Job"' "$K8S_DIR/pod0.json" >/dev/null &&
    pass "cronjob.yaml: the report in the pod's log and its results volume; ServiceAccount kperf, token automounted" ||
    fail "cronjob.yaml night: $(jq -c '.spec | {serviceAccountName, volumes}' "$K8S_DIR/pod0.json")"
# cronjob.yaml keeps the history in ConfigMaps of namespace kperf (no volume): night 0 was the
# first (nothing to judge), night 0b is judged against it from the cluster
grep -q "the first run, nothing to judge" "$K8S_DIR/cmp0.log" &&
    pass "cronjob.yaml night 0: no ConfigMap history yet, compare passes" ||
    fail "night 0 compare: $(cat "$K8S_DIR/cmp0.log")"
night 0b
hist=$(kadmin get configmaps -n kperf -l kperf.io/history=kperf-history -o json)
hfile0=$(jq -r '[.items[].metadata.annotations["kperf.io/history-file"]] | sort | .[0]' <<<"$hist")
[ "$(jq '.items | length' <<<"$hist")" = 2 ] &&
    jq -e '[.items[] | (.data["report.json"] | fromjson | .schema == "kperf.report/v1") and
        (.metadata.labels["app.kubernetes.io/managed-by"] == null)] | all' <<<"$hist" >/dev/null &&
    grep -q "against 1 earlier run of .*: $hfile0\$" "$K8S_DIR/cmp0b.log" &&
    pass "night 0b judged against night 0 from ConfigMap history kperf-history ($(jq -r '[.items[] | "\(.metadata.name) \(.data["report.json"] | length) B"] | join(", ")' <<<"$hist"))" ||
    fail "ConfigMap history: $(jq -c '[.items[].metadata.name]' <<<"$hist") cmp0b: $(head -3 "$K8S_DIR/cmp0b.log")"
# instead of cronjob.yaml: the claim and cronjob-pvc.yaml
kadmin delete cronjob kperf-nightly -n kperf >/dev/null || fail "deleting the cronjob.yaml CronJob"
# the history volume's preflight (kperf manifests --history-claim): a StorageClass that does not
# exist fails in seconds naming it, where the claim would stay Pending; the default one passes
t0=$SECONDS
if "$KPERF" manifests --kubeconfig "$K8S_DIR/admin.kubeconfig" -n kperf --history-claim \
    --storage-class gp3 >/dev/null 2>"$K8S_DIR/sc.err"; then
    fail "--history-claim --storage-class gp3 passed on a cluster without gp3"
else
    grep -q "StorageClass gp3 does not exist in this cluster" "$K8S_DIR/sc.err" &&
        pass "--history-claim: a missing StorageClass fails in $((SECONDS - t0)) s: $(cut -c1-110 "$K8S_DIR/sc.err")" ||
        fail "--history-claim gp3: $(cat "$K8S_DIR/sc.err")"
fi
"$KPERF" manifests --kubeconfig "$K8S_DIR/admin.kubeconfig" -n kperf --history-claim --format json |
    jq -e '.metadata.name == "kperf-history" and (.spec | has("storageClassName") | not)' >/dev/null &&
    pass "--history-claim: the cluster's default StorageClass (standard) can bind the claim" ||
    fail "--history-claim with the default class"
# kube-sim as strict as a cluster: a claim naming a missing class stays Pending, with the event
kadmin apply -f - >/dev/null <<'YAML' || fail "claim with a missing class"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: no-class, namespace: kperf}
spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, resources: {requests: {storage: 1Gi}}}
YAML
pending_evt() {
    kadmin get events -n kperf --field-selector involvedObject.name=no-class -o json 2>/dev/null |
        jq -e '[.items[] | select(.reason == "ProvisioningFailed")] | length > 0' >/dev/null
}
wait_for 30 "the ProvisioningFailed event of claim no-class" pending_evt
[ "$(kadmin get pvc no-class -n kperf -o jsonpath='{.status.phase}')" = Pending ] && pending_evt &&
    pass "kube-sim: a claim naming StorageClass gp3 stays Pending with ProvisioningFailed" ||
    fail "claim no-class: $(kadmin get pvc no-class -n kperf -o jsonpath='{.status.phase}')"
kadmin delete pvc no-class -n kperf >/dev/null || fail "deleting claim no-class"
kadmin apply -f "$KPERF_SRC/manifests/history-pvc.yaml" >/dev/null || fail "history-pvc.yaml"
pvdir=
pv=
# pvc_bound sets pv ("PHASE VOLUME"); 30 s bounds a hang (binding takes well under 1 s)
pvc_bound() {
    pv=$(kadmin get pvc kperf-history -n kperf -o jsonpath='{.status.phase} {.spec.volumeName}' 2>/dev/null)
    [ "${pv%% *}" = Bound ]
}
wait_for 30 "claim kperf-history to be Bound" pvc_bound
pvdir=$(kadmin get pv "${pv#* }" -o jsonpath='{.spec.hostPath.path}' 2>/dev/null)
[ "${pv%% *}" = Bound ] && [ -d "$pvdir" ] &&
    pass "claim kperf-history Bound to ${pv#* } (kube-sim's provisioner: $pvdir)" ||
    fail "claim not bound: [$pv] [$pvdir]"
H=$pvdir

shorten "$KPERF_SRC/manifests/cronjob-pvc.yaml"
# the test's nights are gated on ops/s, what night 4 injects (-67%), at 40%: a 1-s run of one
# sample on this shared machine moves its ops/s by tens of percent from night to night and its
# latency tail by hundreds (p99.9 +196% seen between two quiet nights), and night 3 on its new
# nodes must pass; the latency thresholds are set out of reach
th='latency=100000%,p999=100000%,ops=40%'
kadmin patch cronjob kperf-nightly -n kperf --type json -p '[{"op": "add",
    "path": "/spec/jobTemplate/spec/template/spec/containers/0/args/1", "value": "--threshold"},
    {"op": "add", "path": "/spec/jobTemplate/spec/template/spec/containers/0/args/2", "value": "'"$th"'"}]' \
    >/dev/null || fail "adding --threshold $th to the CronJob's compare"

# between nights 1 and 2 the node group replaces the baseline's nodes (the ones --nodes-from
# names): new names, the same shape. kube-sim node add NEW --like OLD (labels: instance type,
# zone, arch; a new node namespace, CNI and kubelet), then node remove OLD (cordoned, drained,
# its Node object, kubelet and namespace gone)
declare -A newname=()
replace_nodes() {
    local old k=4 n
    for old in $(jq -r '.metadata.nodes[].name' "$K8S_DIR/baseline/report.json"); do
        newname[$old]=node-$k
        kadmin get node "$old" -o json | jq -Sc '.metadata.labels | del(.["kubernetes.io/hostname"])' \
            >"$K8S_DIR/labels-$old.json"
        "$KS" node add "node-$k" --like "$old" --state-dir "$K8S_DIR" >"$K8S_DIR/add-$k.json" ||
            fail "kube-sim node add node-$k --like $old"
        k=$((k + 1))
    done
    for old in "${!newname[@]}"; do
        "$KS" node remove "$old" --state-dir "$K8S_DIR" >"$K8S_DIR/remove-$old.json" ||
            fail "kube-sim node remove $old"
    done
    n=$(kadmin get nodes -o json | jq -r '[.items[].metadata.name] | sort | join(" ")')
    for old in "${!newname[@]}"; do
        [ "$(kadmin get node "${newname[$old]}" -o json | jq -Sc '.metadata.labels |
            del(.["kubernetes.io/hostname"])')" = "$(cat "$K8S_DIR/labels-$old.json")" ] &&
            ! grep -qw "$old" <<<"$n" || { fail "replacing $old by ${newname[$old]}: nodes [$n]"; return; }
    done
    pass "nodes replaced between nights 1 and 2: $(for o in "${!newname[@]}"; do
        printf '%s -> %s (%s) ' "$o" "${newname[$o]}" "$(jq -r '.labels | [.["node.kubernetes.io/instance-type"],
            .["topology.kubernetes.io/zone"], .["kubernetes.io/arch"]] | join(" ")' \
            "$K8S_DIR/add-${newname[$o]#node-}.json")"; done)drained ($(jq -s 'map(.podsDeleted) | add' \
            "$K8S_DIR"/remove-*.json) pods deleted); nodes now: $n"
}

nights=() hfiles=() night3rc=none
for n in 1 2 3; do
    [ "$n" = 2 ] && replace_nodes
    before=$(find "$H/runs" -name '*.json' 2>/dev/null | sort)
    night "$n"
    nights+=("$(readlink "$H/nights/latest")")
    added=$(comm -13 <(echo "$before") <(find "$H/runs" -name '*.json' 2>/dev/null | sort))
    [ "$(echo "$added" | grep -c .)" = 1 ] || fail "night $n: --history added [$added]"
    hfiles+=("$(basename "$added")")
    [ "$n" = 3 ] && night3rc=$cmprc
done
jq -e '[.spec.volumes[] | select(.persistentVolumeClaim.claimName == "kperf-history")] | length == 1' \
    "$K8S_DIR/pod1.json" >/dev/null && [ "$(jq -r .metadata.uid "$K8S_DIR/pod1.json")" != \
    "$(jq -r .metadata.uid "$K8S_DIR/pod3.json")" ] &&
    pass "the nights' pods mount claim kperf-history; each night is a new pod" ||
    fail "the nights' pods: $(jq -c '.spec.volumes' "$K8S_DIR/pod1.json")"
grep -q "the first run, nothing to judge" "$K8S_DIR/cmp1.log" &&
    pass "night 1: nothing in the history yet, compare passes: $(grep -m1 "nothing to judge" "$K8S_DIR/cmp1.log")" ||
    fail "night 1: $(cat "$K8S_DIR/cmp1.log")"
grep -q "against 1 earlier run of .*: ${hfiles[0]}\$" "$K8S_DIR/cmp2.log" &&
    pass "night 2 judged against night 1 (${hfiles[0]})" ||
    fail "night 2: $(head -3 "$K8S_DIR/cmp2.log")"
grep -q "against 2 earlier runs of .*: ${hfiles[0]} ${hfiles[1]}\$" "$K8S_DIR/cmp3.log" &&
    grep -q "judged against the last 2 comparable runs" "$K8S_DIR/cmp3.log" &&
    pass "night 3 judged against nights 1 and 2 from the history on the claim: $(grep -m1 judging "$K8S_DIR/cmp3.log")" ||
    fail "night 3: $(head -3 "$K8S_DIR/cmp3.log")"
kept=$(cd "$H/nights" && ls -d 2*Z 2>/dev/null | tr '\n' ' ')
[ "${#nights[@]}" = 3 ] && [ "${nights[0]}" != "${nights[1]}" ] && [ "${nights[1]}" != "${nights[2]}" ] &&
    [ "$kept" = "${nights[0]} ${nights[1]} ${nights[2]} " ] && [ "$(readlink "$H/nights/latest")" = "${nights[2]}" ] &&
    jq -e '.results | length > 0' "$H/nights/latest/report.json" >/dev/null &&
    [ "$("$KPERF" history list "$H/runs" | grep -c "\.json$")" = 3 ] &&
    pass "the volume: 3 nights kept (${kept}), latest -> ${nights[2]}, 3 runs in the history" ||
    fail "history: nights ${nights[*]}, kept [$kept], latest $(readlink "$H/nights/latest"), history: $("$KPERF" history list "$H/runs" | tr '\n' ' ')"
# night 1 measured the baseline's nodes; nights 2 and 3 their replacements, role for role, each
# saying so in metadata.nodes_substituted (was -> now); nights 1-3 stay one comparable series
# (the node pair is the instance types)
map=$(for o in "${!newname[@]}"; do printf '{"%s": "%s"}' "$o" "${newname[$o]}"; done | jq -cs add)
jq -e --slurpfile b "$K8S_DIR/baseline/report.json" '[.metadata.nodes[].name] ==
    [$b[0].metadata.nodes[].name] and (.metadata.nodes_substituted // [] | length == 0)' \
    "$H/nights/${nights[0]}/report.json" >/dev/null &&
    pass "--nodes-from /baseline/report.json: night 1 measured the baseline's nodes" ||
    fail "night 1's nodes: $(jq -c '[.metadata.nodes[].name]' "$H/nights/${nights[0]}/report.json")"
for k in 1 2; do
    r=$H/nights/${nights[$k]}/report.json
    jq -e --slurpfile b "$K8S_DIR/baseline/report.json" --argjson m "$map" '
        ($b[0].metadata.nodes | map({role, name: $m[.name]}) | sort) as $want |
        ([.metadata.nodes[] | {role, name}] | sort) == $want and
        ([.metadata.nodes_substituted[] | {role, was, now}] | sort) ==
            ($b[0].metadata.nodes | map({role, was: .name, now: $m[.name]}) | sort)' "$r" >/dev/null &&
        pass "night $((k + 1)) ran on the new nodes: $(jq -r '[.metadata.nodes_substituted[] |
            "\(.role) \(.was) -> \(.now)"] | join(", ")' "$r")" ||
        fail "night $((k + 1)) nodes: $(jq -c '{n: [.metadata.nodes[] | {role, name}], s: .metadata.nodes_substituted}' "$r")"
done
jq -r '.metadata.nodes_substituted[0].why' "$H/nights/${nights[1]}/report.json" | grep -q . &&
    grep -q "is replaced by" "$K8S_DIR/run2.log" &&
    pass "night 2's run said why: $(grep -m1 "is replaced by" "$K8S_DIR/run2.log" | cut -c1-200)" ||
    fail "night 2's run did not say a node was replaced: $(grep -m2 nodes-from "$K8S_DIR/run2.log")"
[ "$night3rc" = 0 ] &&
    pass "night 3 (on the new nodes) judged against nights 1 and 2, compare exit 0" ||
    fail "night 3: compare exit $night3rc: $(grep -m3 "REGRESSION\|INCONCLUSIVE\|judg" "$K8S_DIR/cmp3.log")"
kadmin get cronjob kperf-nightly -n kperf -o json >"$K8S_DIR/cj.json"
jq -e '.status.lastScheduleTime == "2026-12-05T02:17:00Z" and (.status.active // [] | length == 0)' \
    "$K8S_DIR/cj.json" >/dev/null &&
    [ "$(kadmin get jobs -n kperf -o json | jq '[.items[] | select(.metadata.ownerReferences[0].kind == "CronJob")] | length')" = 3 ] &&
    pass "CronJob status: lastScheduleTime 2026-12-05T02:17:00Z (simulated clock), nothing active, 3 Jobs kept$(jq -r '.status.lastSuccessfulTime // empty | ", lastSuccessfulTime " + .' "$K8S_DIR/cj.json")" ||
    fail "CronJob status: $(jq -c .status "$K8S_DIR/cj.json")"

night1msg=$(jq -r '.status.containerStatuses[0].state.terminated.message // "none"' "$K8S_DIR/pod1.json")
grep -Eq "^kperf: ok \(exit 0\): [0-9]+ rows?, 0 with errors$" <<<"$runmsg" &&
    grep -q "^kperf: \(ok (exit 0)\|regression (exit 3)\|inconclusive (exit 5)\): " <<<"$cmpmsg" &&
    [ "$night1msg" = "kperf: ok (exit 0): the first run, nothing to judge against yet" ] &&
    pass "termination messages: run [$runmsg], night 1's compare [$night1msg], night 3's compare [$cmpmsg]" ||
    fail "termination messages: run [$runmsg], compare [$cmpmsg], night 1 [$night1msg]"

# night 4, an injected regression: the history's three nights made 3x faster (ops/s), so tonight
# is ~67% slower than all of them; compare exits 3, the Job fails, its message names the row
while IFS= read -r f; do
    jq '.results[] |= (.aggregate.ops_per_sec *= 3 | .samples[]?.ops_per_sec *= 3)' "$f" >"$f.tmp" &&
        mv "$f.tmp" "$f" || fail "injecting the regression into $f"
done < <(find "$H/runs" -name '*.json')
# ... and its compare talks to a chat webhook and a Pushgateway outside the cluster: two
# test/tools/http_receiver.py on kube-sim's underlay (198.19.0.200), the webhook answering 503 once
mapfile -t nodes < <(kadmin get nodes -o name | sed 's|^node/||')
k8s_external_host 198.19.0.200 "${nodes[@]}"
mkdir -p "$K8S_DIR/hook" "$K8S_DIR/gw"
ip netns exec "$UL" python3 "$KPERF_SRC/test/tools/http_receiver.py" "$K8S_DIR/hook" \
    --bind 198.19.0.200 --fail-first 1 &
kill_on_exit $!
ip netns exec "$UL" python3 "$KPERF_SRC/test/tools/http_receiver.py" "$K8S_DIR/gw" --bind 198.19.0.200 &
kill_on_exit $!
# 30 s bounds a hang (python starts in well under 1 s)
wait_for 30 "the receivers to listen" test -s "$K8S_DIR/hook/port" -a -s "$K8S_DIR/gw/port"
add_arg() { printf '{"op": "add", "path": "/spec/jobTemplate/spec/template/spec/containers/0/args/-", "value": "%s"}' "$1"; }
kadmin patch cronjob kperf-nightly -n kperf --type json -p "[$(add_arg --notify),
    $(add_arg "http://198.19.0.200:$(cat "$K8S_DIR/hook/port")/services/T0/B0/night"),
    $(add_arg --report-url), $(add_arg https://reports.example/nightly),
    $(add_arg --push-gateway), $(add_arg "http://198.19.0.200:$(cat "$K8S_DIR/gw/port")")]" >/dev/null ||
    fail "adding --notify and --push-gateway to the CronJob's compare"
night 4
# (the message names each regressed row by its metric that moved most: with one sample a run's
# p99.9 may move more than the injected ops/s; the table shows the ops/s regression)
[ "$cmprc" = 3 ] && jq -e '.status.conditions[]? | select(.type == "Failed" and .status == "True")' \
    <(kadmin get job "$JOB" -n kperf -o json) >/dev/null &&
    grep -Eq "^kperf: regression \(exit 3\): [0-9]+ of [0-9]+ rows?: pod-to-pod [^,]* TCP_RR " <<<"$cmpmsg" &&
    grep -Eq "TCP_RR +\| ops/s +\|.*\| +-[67][0-9]\.[0-9]% \| REGRESSION" "$K8S_DIR/cmp4.log" &&
    [ "$(kadmin get pods -n kperf -l "job-name=$JOB" -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.message}')" = "$cmpmsg" ] &&
    pass "night 4 (injected regression): compare exit 3, Job Failed, kubectl get -o jsonpath shows [$cmpmsg]" ||
    fail "night 4: Job $JOB, compare exit $cmprc, message [$cmpmsg], $(grep "ops/s" "$K8S_DIR/cmp4.log" | head -2)"
[ -s "$K8S_DIR/hook/req-2.json" ] && [ ! -e "$K8S_DIR/hook/req-3.json" ] &&
    jq -e '.status == 503' "$K8S_DIR/hook/req-1.json" >/dev/null &&
    jq -e --arg m "$cmpmsg" '.status == 200 and (.body | fromjson | .text == $m and
        (.blocks[2].elements[0].text | contains("https://reports.example/nightly/report.html")))' \
        "$K8S_DIR/hook/req-2.json" >/dev/null &&
    pass "night 4: the webhook got one message (after one 503), its text the termination message" ||
    fail "night 4 webhook: $(cat "$K8S_DIR"/hook/req-*.json 2>/dev/null | head -c 500)"
jq -r .body "$K8S_DIR/gw/req-1.json" >"$K8S_DIR/verdict.prom" 2>/dev/null
row=$(grep '^kperf_verdict{.*} 3$' "$K8S_DIR/verdict.prom" | head -1)
[ -n "$row" ] && grep -qx 'kperf_compare_status{cluster="default"} 3' "$K8S_DIR/verdict.prom" &&
    pass "night 4: the verdict gauges pushed: $row" ||
    fail "night 4 gauges: $(head -c 500 "$K8S_DIR/verdict.prom")"
# the shipped alert rule fires on exactly what was pushed (as Prometheus would scrape it)
python3 - "$K8S_DIR/verdict.prom" "$K8S_DIR/night4.test.yaml" "$KPERF_SRC/manifests/prometheus/kperf-alerts.yaml" <<'PY'
import json, re, sys
import yaml
rule = [r for g in yaml.safe_load(open(sys.argv[3]))["groups"] for r in g["rules"]
        if r.get("alert") == "KperfRegression"][0]
def render(text, labels):  # the {{ $labels.X }} of the rule's annotations
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)
series, want = [], []
for line in open(sys.argv[1]):
    m = re.match(r'(kperf_\w+)\{(.*)\} (-?\d+)$', line.strip())
    if not m:
        continue
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
    labels.update(job="kperf_verdict", instance=labels["cluster"])
    series.append({"series": "%s{%s}" % (m.group(1), ",".join('%s="%s"' % kv for kv in sorted(labels.items()))),
                   "values": "%sx5" % m.group(3)})
    if m.group(1) == "kperf_verdict" and m.group(3) == "3":
        key = {k: v for k, v in labels.items() if k not in ("job", "instance")}
        want.append({"exp_labels": dict(key, **rule["labels"]),
                     "exp_annotations": {k: render(v, key) for k, v in rule["annotations"].items()}})
test = {"rule_files": [sys.argv[3]], "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": [
            {"eval_time": "2m", "alertname": "KperfRegression", "exp_alerts": want}]}]}
json.dump(test, open(sys.argv[2], "w"))  # JSON is YAML
PY
promtool test rules "$K8S_DIR/night4.test.yaml" >"$K8S_DIR/promtool.out" 2>&1 &&
    pass "promtool test rules: KperfRegression fires on night 4's pushed gauges" ||
    fail "promtool on night 4's gauges: $(tail -5 "$K8S_DIR/promtool.out")"

# the identity cannot do more than rbac.yaml says: no namespace of its own
in_cluster run --scenarios pod-to-pod "${short[@]}" >/dev/null 2>"$K8S_DIR/denied.err"
grep -q "missing permissions" "$K8S_DIR/denied.err" &&
    pass "least privilege: runs outside -n kperf are refused at preflight: $(grep -m1 "missing permissions" "$K8S_DIR/denied.err" | cut -c1-200)" ||
    { fail "preflight did not report missing permissions"; tail -3 "$K8S_DIR/denied.err"; }
# deleting the CronJob takes its Jobs and pods (owner references); the claim keeps the history
kadmin delete cronjob kperf-nightly -n kperf >/dev/null
none_left() { [ -z "$(kadmin get jobs,pods -n kperf -o name 2>/dev/null)" ]; }
wait_for 20 none_left &&
    [ -s "$H/nights/latest/report.json" ] &&
    pass "CronJob deleted: its Jobs and pods are gone, the history stays on the claim" ||
    fail "after deleting the CronJob: $(kadmin get jobs,pods -n kperf -o name | tr '\n' ' ')"
k8s_nothing_left "nightly"
echo "e2e.k8s_nightly: $SECONDS s"
# KPERF_NIGHTLY_KEEP=DIR: keep the nights' logs and pods (and kube-sim's log) there
if [ -n "${KPERF_NIGHTLY_KEEP:-}" ]; then
    mkdir -p "$KPERF_NIGHTLY_KEEP" &&
        cp "$K8S_DIR"/run*.log "$K8S_DIR"/cmp*.log "$K8S_DIR"/pod*.json "$K8S_DIR/kube-sim.log" \
            "$K8S_DIR/requests.log" "$KPERF_NIGHTLY_KEEP/" 2>/dev/null
    for d in "$K8S_DIR"/pods/*/logs; do
        cp -r "$d" "$KPERF_NIGHTLY_KEEP/$(basename "$(dirname "$d")")"
    done
fi
ks_finish
