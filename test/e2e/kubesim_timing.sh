#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim keeps a real cluster's timing (issue 14), which kperf must survive: the garbage
# collector removes a deleted Job's pod only --gc-lag later; a deleted pod that ignores SIGTERM
# stays Terminating for its grace period (capped by --max-grace), then goes; a container is
# Running before it is Ready (--ready-lag); a crashing container restarts with a restartCount.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
[ -x "$KUBECTL" ] || { echo "SKIP: no kubectl"; exit 77; }
k() { "$KUBECTL" "$@"; }
A=/tmp/kubesim-timing.$$
ks_cleanup_on_exit "$A"
"$KS" up --nodes 1 --state-dir "$A" --gc-lag 4 --max-grace 2 --ready-lag 1 >/dev/null || fail "up"
export KUBECONFIG=$A/kubeconfig

# Running before Ready: a watch records every state of the pod
k get pods -w -o json --output-watch-events >"$A/watch.json" 2>/dev/null &
wpid=$!
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: gcjob, namespace: default}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: s, image: kube-sim/host, command: ["sleep", "600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: stubborn, namespace: default}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - {name: s, image: kube-sim/host, command: ["sh", "-c", "trap '' TERM; sleep 600 & wait"]}
---
apiVersion: v1
kind: Pod
metadata: {name: crasher, namespace: default}
spec:
  restartPolicy: Always
  containers:
  - {name: s, image: kube-sim/host, command: ["sh", "-c", "exit 3"]}
YAML
wait_for 20 sh -c "\"$KUBECTL\" get pods -l job-name=gcjob -o jsonpath='{.items[0].status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" ||
    fail "job pod not Ready: $(k get pods -o wide)"
wait_for 20 sh -c "\"$KUBECTL\" get pod stubborn -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" ||
    fail "stubborn not Ready"
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
if jq -s -e '[.[] | .object | select(.metadata.name == "stubborn") |
              {p: .status.phase, r: ((.status.conditions // [])[] | select(.type == "Ready") | .status)}] |
             (index({p: "Running", r: "False"}) != null) and
             (index({p: "Running", r: "False"}) < index({p: "Running", r: "True"}))' \
    "$A/watch.json" >/dev/null; then
    pass "a pod is Running and not Ready before it is Ready"
else
    fail "no Running-not-Ready state: $(jq -c '.object | select(.metadata.name == "stubborn") | [.status.phase, ((.status.conditions // [])[] | select(.type == "Ready") | .status)]' "$A/watch.json" | tr '\n' ' ')"
fi

# garbage collection lag: the Job goes at once, its pod --gc-lag (4 s) later
pod=$(k get pods -l job-name=gcjob -o jsonpath='{.items[0].metadata.name}')
k delete job gcjob --cascade=background --wait=false >/dev/null || fail "delete job"
t0=$(date +%s.%N)
left=$(k get pod "$pod" -o jsonpath='{.metadata.name}/{.metadata.deletionTimestamp}' 2>/dev/null)
[ "$left" = "$pod/" ] && pass "right after its Job is deleted, pod $pod is still there, not deleting" ||
    fail "pod right after the Job's deletion: '$left'"
k wait --for=delete "pod/$pod" --timeout=30s >/dev/null 2>&1 || fail "pod $pod never collected"
dt=$(echo "$(date +%s.%N) - $t0" | bc)
[ "$(echo "$dt >= 3" | bc)" = 1 ] && pass "the garbage collector removed it after $dt s (--gc-lag 4)" ||
    fail "pod collected after only $dt s"

# graceful deletion: SIGTERM ignored, Terminating until --max-grace (2 s) caps the 30 s grace
k delete pod stubborn --wait=false >/dev/null || fail "delete stubborn"
t0=$(date +%s.%N)
ts=$(k get pod stubborn -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)
[ -n "$ts" ] && pass "stubborn is Terminating (deletionTimestamp $ts)" || fail "stubborn not Terminating"
k wait --for=delete pod/stubborn --timeout=30s >/dev/null 2>&1 || fail "stubborn never went"
dt=$(echo "$(date +%s.%N) - $t0" | bc)
[ "$(echo "$dt >= 1.5 && $dt < 15" | bc)" = 1 ] &&
    pass "stubborn gone after $dt s (grace 30 s capped by --max-grace 2)" || fail "stubborn went after $dt s"

# restarts: restartPolicy Always, the container exits 3, restartCount grows
wait_for 40 sh -c "\"$KUBECTL\" get pod crasher -o jsonpath='{.status.containerStatuses[0].restartCount}' | grep -qx '[1-9][0-9]*'" &&
    pass "crasher restarted (restartCount $(k get pod crasher -o jsonpath='{.status.containerStatuses[0].restartCount}'), last exit $(k get pod crasher -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode}'))" ||
    fail "crasher: $(k get pod crasher -o jsonpath='{.status.containerStatuses[0]}')"
"$KS" down --state-dir "$A" >/dev/null
ks_finish
