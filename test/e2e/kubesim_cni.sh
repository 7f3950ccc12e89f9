#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim's pod networks come from real CNI plugins (issue 29): bridge + host-local + portmap
# and loopback, called as containerd calls them, dual-stack; hostNetwork pods get no CNI call;
# the CNI faults (cni-ipam-size at start-up, cni-plugin-fail with a preset, a custom text and
# for=, cni-add-hang, cni-conf-missing, cni-conf-broken) give the kubelet's events and node
# conditions word for word, retried until the fault lifts; kubectl describe shows them; 200 pod
# churns leave the host-local pools as they were; `down` runs CNI DEL for the pods left.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
[ -x "$KUBECTL" ] || { echo "SKIP: no kubectl"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }
k() { "$KUBECTL" "$@"; }
A=/tmp/kubesim-cni.$$
ks_cleanup_on_exit "$A"
T0=$SECONDS
"$KS" up --nodes 2 --ip-family dual --state-dir "$A" --sandbox-backoff 1 --cni-timeout 2 \
    --faults 'cni-ipam-size:node=node-2,size=2' >/dev/null || fail "up"
export KUBECONFIG=$A/kubeconfig

# pod NAME NODE [host] [LABELS]: a pod of `sleep` pinned to NODE (host: hostNetwork)
pod() {
    local hn=""
    [ "${3:-}" = host ] && hn="hostNetwork: true"
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {${4:-}}}
spec:
  nodeName: $2
  $hn
  terminationGracePeriodSeconds: 1
  containers:
  - {name: s, image: kube-sim/host, command: ["sleep", "3600"]}
YAML
}
running() { [ "$(k get pod "$1" -o jsonpath='{.status.phase}')" = Running ]; }
# events POD: the pod's events as JSON lines {reason, message, count, source}
events() {
    k get events --field-selector "involvedObject.name=$1" -o json |
        jq -c '.items[] | {reason, message, count, type, source}'
}
has_event() { events "$1" | jq -s -e --arg r "$2" --arg m "$3" 'any(.[]; .reason == $r and (.message | test($m)))' >/dev/null; }
cond() { k get pod "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}"; }
# ipfiles NODE: the addresses allocated in the node's host-local pool (a file per address)
ipfiles() {
    local f
    for f in "$A/cni/$1/ipam/kube-sim"/[0-9]*; do [ -e "$f" ] && basename "$f"; done | sort | tr '\n' ' '
}
SANDBOX='^Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "[0-9a-f]{64}": '

# --- addresses from host-local through the plugins, both families
pod p1 node-1 | k apply -f - >/dev/null
wait_for 60 running p1 || fail "p1 not Running: $(k get pods -o wide)"
ips=$(k get pod p1 -o jsonpath='{range .status.podIPs[*]}{.ip}{" "}{end}')
assert_eq "p1 has an IPv4 and an IPv6 address of node-1's pod CIDRs" 1 \
    "$(echo "$ips" | grep -cE '^198\.19\.17\.[0-9]+ 2001:2:0:201::[0-9a-f]+ $')"
assert_eq "host-local's pool on node-1 holds exactly p1's addresses" "$(echo "$ips" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')" "$(ipfiles node-1)"
res=$(cat "$A"/cni/node-1/cache/kube-sim-*-eth0)
assert_eq "the cached ADD result (the plugins' JSON) has those addresses" "$ips" \
    "$(echo "$res" | jq -r '[.result.ips[].address | sub("/.*"; "")] | join(" ") + " "')"
assert_eq "the chain is bridge + portmap with host-local IPAM" "bridge portmap host-local" \
    "$(jq -r '[.plugins[].type] + [.plugins[0].ipam.type] | join(" ")' "$A/cni/node-1/net.d/10-kube-sim.conflist")"
pod h1 node-1 host | k apply -f - >/dev/null
wait_for 60 running h1 || fail "h1 not Running"
assert_eq "a hostNetwork pod gets no CNI call (one cached network on node-1)" 1 "$(ls "$A"/cni/node-1/cache | wc -l)"
assert_eq "a hostNetwork pod's IP is its node's" "198.19.0.11" "$(k get pod h1 -o jsonpath='{.status.podIP}')"

# --- cni-ipam-size from the start-up SPEC: node-2's range has 2 addresses, the third pod fails
{ pod q1 node-2; pod q2 node-2; } | k apply -f - >/dev/null
wait_for 60 sh -c "[ \"\$(\"$KUBECTL\" get pods q1 q2 -o jsonpath='{.items[*].status.phase}')\" = 'Running Running' ]" ||
    fail "q1 q2 not Running: $(k get pods -o wide)"
pod q3 node-2 | k apply -f - >/dev/null
RE="${SANDBOX}plugin type=\"bridge\" failed \\(add\\): failed to allocate for range 0: no IP addresses available in range set: 198\\.19\\.18\\.2-198\\.19\\.18\\.3$"
wait_for 60 has_event q3 FailedCreatePodSandBox "$RE" && pass "IP exhaustion: host-local's own error in FailedCreatePodSandBox" ||
    fail "no exhaustion event: $(events q3)"
assert_eq "the event is the kubelet's on node-2" '{"component":"kubelet","host":"node-2"}' \
    "$(events q3 | jq -c 'select(.reason == "FailedCreatePodSandBox") | .source' | head -1)"
assert_eq "q3 waits: Pending, ContainerCreating, PodReadyToStartContainers False" "Pending ContainerCreating False" \
    "$(k get pod q3 -o jsonpath='{.status.phase} {.status.containerStatuses[0].state.waiting.reason} ')$(cond q3 PodReadyToStartContainers)"
k delete pod q1 --wait=true >/dev/null
wait_for 60 running q3 && pass "q3 runs once q1's address is back in the pool (the kubelet retried)" || fail "q3 not Running"

# --- cni-plugin-fail with a custom text on node-2, left on: the events aggregate
"$KS" fault --state-dir "$A" 'cni-plugin-fail:node=node-2,msg=boom from a test' >/dev/null || fail "fault"
pod s1 node-2 | k apply -f - >/dev/null

# --- cni-plugin-fail:msg=cilium,for=3s on node-1: fails, then recovers by itself
"$KS" fault --state-dir "$A" 'cni-plugin-fail:node=node-1,msg=cilium,for=3s' >/dev/null || fail "fault"
pod r1 node-1 | k apply -f - >/dev/null
RE="${SANDBOX}plugin type=\"cilium-cni\" failed \\(add\\): unable to connect to Cilium daemon: .*connection refused$"
wait_for 60 has_event r1 FailedCreatePodSandBox "$RE" && pass "the cilium preset's text" || fail "no cilium event: $(events r1)"
wait_for 60 running r1 && pass "r1 runs after the for=3s fault lifted" || fail "r1 not Running"
[ -n "$(k get pod r1 -o jsonpath='{.status.conditions[?(@.type=="PodReadyToStartContainers")].lastTransitionTime}')" ] &&
    [ "$(cond r1 PodReadyToStartContainers)" = True ] && pass "PodReadyToStartContainers True with its lastTransitionTime" ||
    fail "r1 conditions: $(k get pod r1 -o jsonpath='{.status.conditions}')"
desc=$(k describe pod r1)
assert_contains "kubectl describe shows the failure" "$desc" "FailedCreatePodSandBox"
assert_contains "kubectl describe shows the plugin's text" "$desc" 'plugin type="cilium-cni" failed (add): unable to connect to Cilium daemon'

# --- cni-add-hang: ADD outlives the runtime's timeout (--cni-timeout 2)
"$KS" fault --state-dir "$A" 'cni-add-hang:node=node-1,for=5s' >/dev/null || fail "fault"
pod t1 node-1 | k apply -f - >/dev/null
wait_for 60 has_event t1 FailedCreatePodSandBox '^Failed to create pod sandbox: rpc error: code = DeadlineExceeded desc = context deadline exceeded$' &&
    pass "a hanging ADD: DeadlineExceeded" || fail "no deadline event: $(events t1)"
wait_for 60 running t1 && pass "t1 runs after the hang lifted" || fail "t1 not Running"
assert_eq "the hanging plugin was killed" "" "$(pgrep -f "$A/cni/bin/kube-sim-hang" || true)"

# --- cni-conf-missing / cni-conf-broken: the node's network is not ready
NR='container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized'
ready() { k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'; }
"$KS" fault --state-dir "$A" 'cni-conf-missing:node=node-1,for=4s' >/dev/null || fail "fault"
assert_eq "net.d of node-1 is empty" "" "$(ls "$A/cni/node-1/net.d")"
assert_eq "node-1 Ready False, KubeletNotReady, the runtime's words" "False KubeletNotReady $NR" \
    "$(k get node node-1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="Ready")].message}')"
assert_eq "node-1 tainted not-ready:NoSchedule" "node.kubernetes.io/not-ready:NoSchedule" \
    "$(k get node node-1 -o jsonpath='{range .spec.taints[*]}{.key}:{.effect}{end}')"
pod u1 node-1 | k apply -f - >/dev/null
wait_for 60 has_event u1 NetworkNotReady "^network is not ready: $NR\$" && pass "a pod bound there: NetworkNotReady" ||
    fail "no NetworkNotReady: $(events u1)"
wait_for 60 sh -c "[ \"\$(\"$KUBECTL\" get node node-1 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}{.spec.taints}')\" = True ]" &&
    pass "node-1 Ready again, untainted, after for=4s" || fail "node-1: $(k get node node-1 -o jsonpath='{.status.conditions}')"
wait_for 60 running u1 && pass "u1 runs once the network is ready" || fail "u1 not Running"
"$KS" fault --state-dir "$A" 'cni-conf-broken:node=node-2,for=3s' >/dev/null || fail "fault"
jq . "$A/cni/node-2/net.d/10-kube-sim.conflist" >/dev/null 2>&1 && fail "node-2's conflist parses"
assert_eq "a broken conflist: node-2 NotReady with the same words" "False $NR" \
    "$(k get node node-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].message}')"
wait_for 60 sh -c "[ \"\$(\"$KUBECTL\" get node node-2 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]" ||
    fail "node-2 not Ready again"

# --- s1 has failed all along: the kubelet retried with back-off, the recorder combined the events
RE="^\\(combined from similar events\\): ${SANDBOX#^}plugin type=\"kube-sim-fail\" failed \\(add\\): boom from a test$"
comb() { events s1 | jq -s -e --arg m "$RE" 'any(.[]; (.message | test($m)) and .count >= 2)' >/dev/null; }
wait_for 120 comb && pass "10 events, then one combined event that counts on" || fail "s1 events: $(events s1 | tail -3)"
assert_eq "first ten FailedCreatePodSandBox events, each with its sandbox id" 10 \
    "$(events s1 | jq -r 'select(.message | startswith("Failed to create pod sandbox")) | .message' | grep -c 'type="kube-sim-fail" failed (add): boom from a test$')"
"$KS" fault --state-dir "$A" --clear >/dev/null
wait_for 60 running s1 && pass "s1 runs after --clear" || fail "s1 not Running"
echo "faults checked in $((SECONDS - T0)) s"

# --- 200 pod churns leave the host-local pools as they were
before1=$(ipfiles node-1) before2=$(ipfiles node-2)
T1=$SECONDS
for r in 1 2 3 4 5 6 7 8; do
    for n in $(seq 1 25); do pod "c$r-$n" "node-$((n % 2 + 1))" "" "churn: \"$r\""; done | k apply -f - >/dev/null
    # one watching kubectl, not a poll: a kubectl run costs ~0.1 s of CPU
    k wait pod -l "churn=$r" --for=condition=PodReadyToStartContainers --timeout=120s >/dev/null ||
        fail "round $r: not every pod got its network: $(k get pods -l "churn=$r" --no-headers | grep -vc Running)"
    k delete pods -l "churn=$r" --wait=true >/dev/null
done
echo "200 pod churns in $((SECONDS - T1)) s"
assert_eq "node-1's pool is as it started after 200 churns" "$before1" "$(ipfiles node-1)"
assert_eq "node-2's pool is as it started after 200 churns" "$before2" "$(ipfiles node-2)"
assert_eq "no cached network left but the running pods' (p1 q2 q3 r1 t1 u1 s1)" 7 "$(find "$A"/cni/node-*/cache -name "kube-sim-*" | wc -l)"

out=$("$KS" down --state-dir "$A")
assert_contains "down runs CNI DEL for the pods left" "$out" "CNI DEL of 7 pod network(s)"
echo "whole test: $((SECONDS - T0)) s"
ks_finish
