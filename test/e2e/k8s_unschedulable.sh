#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An agent pod the scheduler cannot place is reported at once, naming the node and the
# scheduler's reason, and the placements that can run still run (issue 29). kube-sim, 3 nodes,
# a sweep (--all-nodes: ring pairs node-1 -> node-2 -> node-3 -> node-1), --timeout 120s:
#  1. node-3's allocatable cpu is 50m (kube-sim fault node-allocatable), less than the agent's
#     100m request: the sweep server DaemonSet's pod for node-3 stays Pending (PodScheduled
#     False, Unschedulable, "0/3 nodes are available: 1 Insufficient cpu, ..."). kperf waits for
#     the other servers, then node-3's two pairs fail at once with that message; node-1's pair
#     is measured.
#  2. node-3's max-pods is 1: its server pod fits, the client Job pod of node-3's own pair does
#     not ("1 Too many pods"): that pair fails at once; node-1's and node-2's pairs (node-2's
#     server is on node-3) are measured.
# Each time the report comes well before --timeout: the time from the pod's PodScheduled=False
# transition (kube-sim's clock, whole seconds) to kperf's message is printed and bounded at
# 30 s (normally under 2 s: 15x). Exit status 4 (the cluster could not start a pod), the failed
# rows' errors carry "cause": "unschedulable", nothing left behind.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3 --faults "node-allocatable:node=node-3,cpu=50m"

# when (Unix s) the recorded pod of role $1 for node-3 first had PodScheduled False
unsched_since() {
    jq -r --arg role "$1" 'select(.metadata.labels["kperf.io/role"] == $role) |
        .status.conditions[]? | select(.type == "PodScheduled" and .status == "False") |
        .lastTransitionTime' "$K8S_DIR/pods.$2.jsonl" | head -1 |
        { read -r t && date -d "$t" +%s; }
}

# run NAME ROLE: a sweep; prints how long after the pod turned unschedulable kperf said so
run() {
    local name=$1 role=$2 t_msg since rc start
    k8s_record_pods_start "$K8S_DIR/pods.$name.jsonl"
    start=$(date +%s)
    kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 2s --omit 0s --all-nodes \
        --timeout 120s -o json >"$K8S_DIR/$name.json" 2>"$K8S_DIR/$name.err" &
    local kpid=$!
    if wait_for 150 grep -q 'for node node-3 is unschedulable' "$K8S_DIR/$name.err"; then
        t_msg=$(date +%s)
    else
        fail "$name: no unschedulable message: $(tail -3 "$K8S_DIR/$name.err")"
    fi
    wait "$kpid"
    rc=$?
    k8s_record_pods_stop
    since=$(unsched_since "$role" "$name")
    if [ -n "${t_msg:-}" ] && [ -n "$since" ] && [ $((t_msg - since)) -le 30 ]; then
        pass "$name: reported $((t_msg - since))s after the $role pod turned unschedulable" \
            "($((t_msg - start))s into the run, $(($(date +%s) - start))s in all; --timeout 120s)"
    else
        fail "$name: time to diagnosis: message at ${t_msg:-never}, unschedulable since ${since:-?}"
    fi
    if [ "$rc" = 4 ]; then
        pass "$name: kperf exits 4 (the cluster could not start a pod)"
    else
        fail "$name: kperf rc=$rc (want 4): $(tail -3 "$K8S_DIR/$name.err")"
    fi
}

# rows NAME: "placement=status" of the sweep's rows, sorted
rows() {
    jq -r '[.results[] | select(.placement | startswith("node:")) |
        "\(.placement)=\(.status)"] | unique | join(" ")' "$K8S_DIR/$1.json"
}
# row_error NAME NODE: the first error of node NODE's row
row_error() {
    jq -r --arg p "node:$2" '[.results[] | select(.placement == $p) | .errors[0].error][0] // ""' \
        "$K8S_DIR/$1.json"
}

run cpu server
got=$(rows cpu)
if [ "$got" = "node:node-1=ok node:node-2=failed node:node-3=failed" ]; then
    pass "cpu: node-1's pair measured, node-3's two pairs failed"
else
    fail "cpu: rows $got"
fi
e2=$(row_error cpu node-2)
e3=$(row_error cpu node-3)
re='for node node-3 is unschedulable: 0/3 nodes are available: 1 Insufficient cpu, 2 node\(s\) '
re+="didn't match Pod's node affinity/selector\. preemption: 0/3 nodes are available: "
re+='3 Preemption is not helpful for scheduling\.'
if [[ "$e2" == "server node node-3: pod kperf-server-pod-sweep-"* ]] && [[ "$e2" =~ $re ]] &&
    [[ "$e3" == "client node node-3: pod kperf-server-pod-sweep-"* ]]; then
    pass "cpu: the rows name node-3, the pod and the scheduler's message: $e2"
else
    fail "cpu: errors: node-2: $e2 / node-3: $e3"
fi
if jq -e '[.metadata.sweep.nodes[] | select(.verdict == "skipped") | .name] == ["node-3"] and
        ([.metadata.sweep.nodes[] | select(.name == "node-3") | .skipped][0] | test("Insufficient cpu"))' \
    "$K8S_DIR/cpu.json" >/dev/null; then
    pass "cpu: node-3's verdict is skipped, with the reason"
    if jq -e '[.results[] | select(.placement == "node:node-3") | .errors[0].cause] |
            all(. == "unschedulable")' "$K8S_DIR/cpu.json" >/dev/null; then
        pass "cpu: node-3's rows carry the cause unschedulable"
    else
        fail "cpu: causes: $(jq -c '[.results[] | .errors[0].cause]' "$K8S_DIR/cpu.json")"
    fi
else
    fail "cpu: verdicts: $(jq -c '[.metadata.sweep.nodes[] | {name, verdict, skipped}]' "$K8S_DIR/cpu.json")"
fi
k8s_nothing_left "cpu"

"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null || fail "kube-sim fault --clear"
"$KS" fault --state-dir "$K8S_DIR" "node-allocatable:node=node-3,pods=1" >/dev/null ||
    fail "kube-sim fault node-allocatable pods=1"
run pods client
got=$(rows pods)
if [ "$got" = "node:node-1=ok node:node-2=ok node:node-3=failed" ]; then
    pass "pods: node-1's and node-2's pairs measured (node-2's server is on node-3)"
else
    fail "pods: rows $got"
fi
e3=$(row_error pods node-3)
re='pod kperf-[^ ]* for node node-3 is unschedulable: 0/3 nodes are available: 1 Too many pods, '
if [[ "$e3" =~ $re ]]; then
    pass "pods: node-3's row names its client pod and the scheduler's message: ${e3:0:220}"
else
    fail "pods: node-3 error: $e3"
fi
k8s_nothing_left "pods"
ks_finish
