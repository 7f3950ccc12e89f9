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
# nodes replaced at runtime: node-4 added shaped as node-1 (its zone), node-2 drained and removed
dsready() { [ "$(k get ds sleeper -o jsonpath='{.status.numberReady}')" = "$1" ]; }
"$KS" node add node-4 --like node-1 --state-dir "$A" >/dev/null || fail "node add node-4"
wait_for 20 dsready 4
p4=$(k get pods -l app=sleeper --field-selector spec.nodeName=node-4 -o name)
p2ip=$(k get pods -l app=sleeper --field-selector spec.nodeName=node-2 -o jsonpath='{.items[0].status.podIP}')
[ "$(k get node node-4 -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')" = \
    "$(k get node node-1 -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')" ] &&
    [ -n "$p4" ] && ours "$PA" | grep -qx "${PA}n4" &&
    pass "node add node-4 --like node-1: Ready in node-1's zone, namespace ${PA}n4, the DaemonSet's pod there" ||
    fail "node-4: $(k get nodes --show-labels) $(k get pods -o wide)"
# from the new node: a pod on node-2 answers (port 1: refused, so reached) and the API's
# ClusterIP (the Service table on the new node) answers
ip netns exec "${PA}n4" python3 -c '
import socket, sys
try:
    socket.create_connection((sys.argv[1], 1), timeout=5)
except ConnectionRefusedError:
    pass
socket.create_connection(("198.19.240.1", 443), timeout=5).close()' "$p2ip" &&
    pass "node-4 reaches a pod on node-2 ($p2ip) and the kubernetes Service" ||
    fail "node-4: no way to $p2ip or the kubernetes Service"
"$KS" node remove node-2 --state-dir "$A" >/dev/null || fail "node remove node-2"
! k get node node-2 >/dev/null 2>&1 && dsready 3 && ! ours "$PA" | grep -qx "${PA}n2" &&
    [ -z "$(k get pods -A --field-selector spec.nodeName=node-2 -o name)" ] &&
    pass "node remove node-2: drained, Node gone, namespace ${PA}n2 deleted" ||
    fail "node-2: $(k get nodes) $(k get pods -o wide) $(ours "$PA" | tr '\n' ' ')"
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
