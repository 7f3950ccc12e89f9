#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim up/down leaves nothing behind (network namespaces, processes,
# state files), also after SIGKILL of the daemon; two kube-sims coexist;
# 50 nodes come up and run a DaemonSet. Prints start-up times.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
[ -x "$KUBECTL" ] || { echo "SKIP: no kubectl"; exit 77; }
k() { "$KUBECTL" "$@"; }
prefix() { python3 -c 'import hashlib,os,sys; print("ks"+hashlib.sha1(os.path.realpath(sys.argv[1]).encode()).hexdigest()[:4]+"-")' "$1"; }
ours() { ip netns list | awk '{print $1}' | grep "^$1" ; }

A=/tmp/kubesim-life-a.$$; B=/tmp/kubesim-life-b.$$
ks_cleanup_on_exit "$A"; ks_cleanup_on_exit "$B"
PA=$(prefix "$A"); PB=$(prefix "$B")

t0=$(date +%s.%N)
"$KS" up --nodes 3 --state-dir "$A" || fail "up A"
t1=$(date +%s.%N)
echo "startup 3 nodes: $(echo "$t1 - $t0" | bc) s"
"$KS" up --nodes 2 --state-dir "$B" || fail "up B"
[ "$(ours "$PA" | wc -l)" = 4 ] && [ "$(ours "$PB" | wc -l)" = 3 ] \
    && pass "two kube-sims coexist ($PA, $PB)" || fail "netns: $(ip netns list)"
export KUBECONFIG=$A/kubeconfig
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: sleeper, namespace: default}
spec:
  selector: {matchLabels: {app: sleeper}}
  template:
    metadata: {labels: {app: sleeper}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: s, image: kube-sim/host, command: ["sh", "-c", "trap '' TERM; sleep 600 & wait"]}
---
apiVersion: v1
kind: Pod
metadata: {name: hostpod, namespace: default}
spec:
  hostNetwork: true
  containers:
  - {name: s, image: kube-sim/host, command: ["sleep", "600"]}
YAML
wait_for 20 sh -c "\"$KUBECTL\" get ds sleeper -o jsonpath='{.status.numberReady}' | grep -qx 3" \
    && pass "pods running" || fail "pods: $(k get pods -o wide)"
wait_for 10 sh -c "\"$KUBECTL\" get pod hostpod -o jsonpath='{.status.phase}' | grep -qx Running" || fail "hostpod"
hip=$(k get pod hostpod -o jsonpath='{.status.podIP}')
[ "$hip" = "$(k get pod hostpod -o jsonpath='{.status.hostIP}')" ] && pass "hostNetwork pod IP = node IP ($hip)" || fail "hostNetwork ip"
pids=$(awk '$3=="pod"{print $1}' "$A/pids")
[ -n "$pids" ] || fail "no pod pids recorded"
daemon=$(awk '$3=="kube-sim"{print $1}' "$A/pids")
kill -9 "$daemon"
sleep 0.3 # only for the figure printed below; nothing is asserted on it
alive=0; for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive+1)); done
echo "after SIGKILL of kube-sim: $alive pod processes still alive (expected: orphans)"
"$KS" down --state-dir "$A" || fail "down A"
left=0; for p in $pids $daemon; do
    st=$(ps -o stat= -p "$p" 2>/dev/null); case $st in ""|Z*) ;; *) left=$((left+1));; esac
done
[ $left = 0 ] && pass "SIGKILL + down: no process left" || fail "$left processes left"
[ -z "$(ours "$PA")" ] && pass "SIGKILL + down: no netns left" || fail "netns left: $(ours "$PA")"
[ ! -e "$A" ] && pass "state dir removed" || fail "state dir: $(ls -A "$A")"
[ "$(ours "$PB" | wc -l)" = 3 ] && pass "the other kube-sim untouched" || fail "B damaged"
KUBECONFIG=$B/kubeconfig k get nodes >/dev/null && pass "B still serves" || fail "B down"
"$KS" down --state-dir "$B" >/dev/null
[ -z "$(ours "$PB")" ] && [ ! -e "$B" ] && pass "clean down B" || fail "B left: $(ours "$PB")"

t0=$(date +%s.%N)
"$KS" up --nodes 50 --state-dir "$A" || fail "up 50"
t1=$(date +%s.%N)
echo "startup 50 nodes: $(echo "$t1 - $t0" | bc) s"
export KUBECONFIG=$A/kubeconfig
[ "$(k get nodes --no-headers | grep -c ' Ready ')" = 50 ] && pass "50 nodes Ready" || fail "50 nodes"
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: sleeper, namespace: default}
spec:
  selector: {matchLabels: {app: sleeper}}
  template:
    metadata: {labels: {app: sleeper}}
    spec:
      containers:
      - {name: s, image: kube-sim/host, command: ["sleep", "600"]}
YAML
t0=$(date +%s.%N)
wait_for 120 sh -c "\"$KUBECTL\" get ds sleeper -o jsonpath='{.status.numberReady}' | grep -qx 50" \
    && pass "DaemonSet ready on 50 nodes in $(echo "$(date +%s.%N) - $t0" | bc) s" \
    || fail "50-node ds: $(k get ds sleeper)"
n=$(k get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)
[ "$n" = 50 ] && pass "one pod per node" || fail "pods on $n nodes"
"$KS" down --state-dir "$A" >/dev/null
[ -z "$(ours "$PA")" ] && pass "50 nodes: clean down" || fail "left: $(ours "$PA" | head)"
ks_finish
