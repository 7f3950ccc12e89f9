#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim enforces NetworkPolicy with nftables (kubesim/netpol.py), seen with real traffic: a
# server pod on node-1 and one on node-2 (app=srv), a client pod on node-3 that opens a TCP
# connection to each every 100 ms and logs the outcome with the time. Open before any policy;
# a deny-all ingress policy closes both, node-2 ~2 s later than node-1 under
# netpol-delay:node=node-2,delay=2s; an allow from role=client on the port opens both again;
# an egress policy on the client (ipBlock with an except of node-2's server) keeps node-1's
# server open and closes node-2's; deleting the policies opens both. Bounds are generous
# (node-2 at least 1 s after node-1): behaviour, not speed.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
D=$(mktemp -d /tmp/kubesim-netpol.XXXXXX)
ks_cleanup_on_exit "$D"
"$KS" up --nodes 3 --state-dir "$D" || { fail "kube-sim up"; ks_finish; }
export KUBECONFIG=$D/kubeconfig
k() { "$KUBECTL" "$@"; }
cat > "$D/pods.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: np}
---
apiVersion: v1
kind: Pod
metadata: {name: srv-1, namespace: np, labels: {app: srv}}
spec:
  nodeSelector: {kubernetes.io/hostname: node-1}
  containers:
  - {name: c, image: kube-sim/host, ports: [{name: http, containerPort: 8080}], command: ["python3", "-m", "http.server", "8080"]}
---
apiVersion: v1
kind: Pod
metadata: {name: srv-2, namespace: np, labels: {app: srv}}
spec:
  nodeSelector: {kubernetes.io/hostname: node-2}
  containers:
  - {name: c, image: kube-sim/host, ports: [{name: http, containerPort: 8080}], command: ["python3", "-m", "http.server", "8080"]}
YAML
k apply -f "$D/pods.yaml" >/dev/null || fail "apply servers"
for p in srv-1 srv-2; do
    wait_for 30 "$p running" sh -c "\"$KUBECTL\" get pod -n np $p -o jsonpath='{.status.podIP}' | grep -q ." ||
        fail "$p has no address"
done
ip1=$(k get pod -n np srv-1 -o jsonpath='{.status.podIP}')
ip2=$(k get pod -n np srv-2 -o jsonpath='{.status.podIP}')
cat > "$D/client.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: cli, namespace: np, labels: {role: client}}
spec:
  nodeSelector: {kubernetes.io/hostname: node-3}
  containers:
  - name: c
    image: kube-sim/host
    command:
    - python3
    - -c
    - |
      import socket, sys, time
      while True:
          for ip in sys.argv[1:]:
              s = socket.socket()
              s.settimeout(0.3)
              t = time.time()
              try:
                  s.connect((ip, 8080))
                  r = "open"
              except OSError:
                  r = "shut"
              s.close()
              print("%.3f %s %s" % (t, ip, r), flush=True)
          time.sleep(0.1)
    - $ip1
    - $ip2
YAML
k apply -f "$D/client.yaml" >/dev/null || fail "apply client"
wait_for 30 "client running" sh -c "\"$KUBECTL\" get pod -n np cli -o jsonpath='{.status.phase}' | grep -q Running" ||
    fail "client not running"
now() { date +%s.%N; }
# state IP SINCE: the outcome of the last probe of IP started after SINCE
state() { k logs -n np cli | awk -v ip="$1" -v t="$2" '$2 == ip && $1 > t {s = $3} END {print s}'; }
# first IP SINCE STATE: seconds from SINCE to the first probe of IP from which every later one is STATE
first() {
    k logs -n np cli | awk -v ip="$1" -v t="$2" -v want="$3" '$2 == ip && $1 > t {
        if ($3 == want) { if (f == "") f = $1 } else f = "" } END { if (f != "") printf "%.2f\n", f - t }'
}
# is IP STATE SINCE: the last probe of IP since SINCE was STATE
is() { [ "$(state "$1" "$3")" = "$2" ]; }
both() { is "$ip1" "$1" "$2" && is "$ip2" "$1" "$2"; }
# until_both STATE SECONDS SINCE: wait until the last probes of both servers are STATE
until_both() { wait_for "$2" both "$1" "$3"; }
t=$(now)
until_both open 20 "$t" && pass "no policy: both servers open" || fail "servers not open without a policy"

"$KS" fault --state-dir "$D" 'netpol-delay:node=node-2,delay=2s' >/dev/null || fail "fault netpol-delay"
t0=$(now)
k apply -f - >/dev/null <<'YAML' || fail "apply deny"
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: np}
spec: {podSelector: {matchLabels: {app: srv}}, policyTypes: [Ingress]}
YAML
until_both shut 20 "$t0" && pass "deny-all ingress: both servers shut" || fail "deny not enforced"
sleep 1
d1=$(first "$ip1" "$t0" shut)
d2=$(first "$ip2" "$t0" shut)
echo "deny enforced after: node-1 ${d1}s, node-2 ${d2}s"
python3 -c "import sys; sys.exit(0 if float('$d2') > float('$d1') + 1 else 1)" 2>/dev/null &&
    pass "node-2 enforces the deny >1 s after node-1 (netpol-delay 2s on node-2 only)" ||
    fail "node-2 ${d2}s vs node-1 ${d1}s: the delay does not show on node-2 only"
k get networkpolicy -n np deny -o jsonpath='{.spec.policyTypes[0]}' | grep -q Ingress &&
    pass "kubectl reads the NetworkPolicy back" || fail "get networkpolicy"
"$KS" fault --state-dir "$D" --clear >/dev/null || fail "fault --clear"

t1=$(now)
k apply -f - >/dev/null <<'YAML' || fail "apply allow"
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow, namespace: np}
spec:
  podSelector: {matchLabels: {app: srv}}
  ingress: [{from: [{podSelector: {matchLabels: {role: client}}}], ports: [{port: http}]}]
YAML
until_both open 20 "$t1" && pass "allow from role=client to port http: both open" || fail "allow not enforced"

t2=$(now)
k apply -f - >/dev/null <<YAML || fail "apply egress"
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress, namespace: np}
spec:
  podSelector: {matchLabels: {role: client}}
  policyTypes: [Egress]
  egress: [{to: [{ipBlock: {cidr: 198.19.0.0/16, except: [$ip2/32]}}], ports: [{protocol: TCP, port: 8000, endPort: 8100}]}]
YAML
wait_for 20 is "$ip2" shut "$t2" &&
    pass "egress ipBlock except: srv-2 shut" || fail "egress except not enforced"
sleep 1
[ "$(state "$ip1" "$t2")" = open ] && pass "egress ipBlock + endPort range: srv-1 still open" ||
    fail "egress: srv-1 not open"
bad=$(printf 'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: bad, namespace: np}\nspec: {podSelector: {}, policyTypes: 7}\n' |
    k apply -f - 2>&1) && fail "a malformed policy was accepted" ||
    assert_contains "a malformed policy is refused by the schema" "$bad" "policyTypes"
t3=$(now)
k delete networkpolicy -n np deny allow egress >/dev/null || fail "delete policies"
until_both open 20 "$t3" && pass "policies deleted: both open" || fail "not open after delete"
# kperf's cleanup removes a NetworkPolicy a run left (found by the run's labels, as after kill -9)
# and leaves the others alone
KPERF=${KPERF_BIN:-}/kperf
if [ -x "$KPERF" ]; then
    k apply -f - >/dev/null <<'YAML' || fail "apply labelled policies"
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: kperf-left, namespace: np, labels: {app.kubernetes.io/managed-by: kperf, kperf.io/run-id: 20260101-000000-abcdef}}
spec: {podSelector: {matchLabels: {app: srv}}, policyTypes: [Ingress]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: theirs, namespace: np}
spec: {podSelector: {matchLabels: {app: nothing}}}
YAML
    "$KPERF" cleanup --kubeconfig "$D/kubeconfig" -n np --timeout 20s 2>"$D/cleanup.err" ||
        fail "kperf cleanup: $(cat "$D/cleanup.err")"
    left=$(k get networkpolicy -n np -o name | tr '\n' ' ')
    [ "$left" = "networkpolicy.networking.k8s.io/theirs " ] &&
        pass "kperf cleanup removed the run's NetworkPolicy, kept the other ($left)" ||
        fail "after kperf cleanup: '$left' ($(cat "$D/cleanup.err"))"
fi
ks_finish
