#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim's cluster DNS (up --dns: dnsmasq behind kube-system/kube-dns) and its dns-drop fault,
# measured by `kperf-agent dns`: a pod resolves a Service's short name through its resolv.conf;
# then one probe pod per node sends A lookups over UDP and TCP to the kube-dns ClusterIP while
# node-2 drops 30 % of DNS queries: lookups are lost (UDP) or late (TCP) on node-2 only, none
# on node-1 and node-3. Latency is printed, never asserted. `down` stops dnsmasq.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
command -v dnsmasq >/dev/null || { echo "SKIP: dnsmasq missing (dnsmasq-base)"; exit 77; }
AGENT=${KPERF_BIN:-}/kperf-agent
[ -x "$AGENT" ] || { echo "SKIP: no agent binary at $AGENT"; exit 77; }
D=$(mktemp -d /tmp/kubesim-dns.XXXXXX)
ks_cleanup_on_exit "$D"
"$KS" up --nodes 3 --dns --state-dir "$D" || { fail "kube-sim up --dns"; ks_finish; }
export KUBECONFIG=$D/kubeconfig
k() { "$KUBECTL" "$@"; }
NAME=web.perf.svc.cluster.local
cat > "$D/svc.yaml" <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: perf}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: perf}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: resolver, namespace: perf}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: node-1}
  containers:
  - {name: c, image: kube-sim/host, command: ["sh", "-c", "cat /etc/resolv.conf; getent ahostsv4 web | head -1"]}
YAML
k apply -f "$D/svc.yaml" >/dev/null || fail "apply"
dns_ip=$(k get svc -n kube-system kube-dns -o jsonpath='{.spec.clusterIP}')
web_ip=$(k get svc -n perf web -o jsonpath='{.spec.clusterIP}')
[ "$dns_ip" = 198.19.240.10 ] && pass "kube-system/kube-dns at $dns_ip" || fail "kube-dns: '$dns_ip'"
wait_for 30 "resolver pod done" sh -c "\"$KUBECTL\" get pod -n perf resolver -o jsonpath='{.status.phase}' | grep -qE 'Succeeded|Failed'" ||
    fail "resolver pod did not finish"
out=$(k logs -n perf resolver)
echo "$out"
assert_contains "pod resolv.conf names the cluster DNS" "$out" "nameserver $dns_ip"
assert_contains "pod resolv.conf search list" "$out" "search perf.svc.cluster.local svc.cluster.local cluster.local"
assert_contains "short name 'web' resolves to the Service's ClusterIP ($web_ip)" "$out" "$web_ip"

"$KS" fault --state-dir "$D" 'dns-drop:node=node-2,pct=30' >/dev/null || fail "fault dns-drop"
for n in 1 2 3; do
    cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: probe-$n, namespace: perf}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: node-$n}
  containers:
YAML
    # TCP at a lower rate: dnsmasq forks a child per connection (slow on a busy machine)
    for p in udp:20 tcp:5; do
        echo "  - {name: ${p%:*}, image: kube-sim/host, command: [\"$AGENT\", dns, --name, $NAME, --server, $dns_ip, --rate, '${p#*:}', --duration, 5s, --timeout, 5s, --proto, ${p%:*}]}"
    done
    echo ---
done > "$D/probes.yaml"
k apply -f "$D/probes.yaml" >/dev/null || fail "apply probes"
for n in 1 2 3; do
    wait_for 60 "probe-$n done" sh -c "\"$KUBECTL\" get pod -n perf probe-$n -o jsonpath='{.status.phase}' | grep -qE 'Succeeded|Failed'" ||
        fail "probe-$n did not finish: $(k get pod -n perf -o wide)"
    for p in udp tcp; do
        k logs -n perf "probe-$n" -c "$p" > "$D/node-$n.$p.json"
    done
done
python3 - "$D" <<'PY' && pass "lookups lost or late on node-2 only" || fail "probe results (above)"
import json, sys
bad = []
for n in (1, 2, 3):
    for p in ("udp", "tcp"):
        r = json.load(open("%s/node-%d.%s.json" % (sys.argv[1], n, p)))
        lat = r["latency_us"]
        print("node-%d %s: sent %d answered %d lost %d slow_1s %d p50 %.0f us p99 %.0f us" % (
            n, p, r["sent"], r["answered"], r["lost"], r["slow_1s"], lat["p50"], lat["p99"]))
        if r["sent"] < r["rate"] * 4 or r["rcode_errors"] or r["malformed"]:
            bad.append("node-%d %s: too few sent, or errors" % (n, p))
        if n == 2 and p == "udp" and r["lost"] == 0:
            bad.append("node-2 udp: nothing lost under a 30 % drop")
        if n == 2 and p == "tcp" and r["lost"] + r["slow_1s"] == 0:
            bad.append("node-2 tcp: nothing lost or late under a 30 % drop")
        if n != 2 and r["lost"] != 0:
            bad.append("node-%d %s: %d lost without a fault" % (n, p, r["lost"]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
dpid=$(awk '$3 == "dnsmasq" {print $1}' "$D/pids")
[ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null && pass "dnsmasq runs (pid $dpid)" || fail "no dnsmasq pid"
"$KS" down --state-dir "$D" >/dev/null || fail "down"
# a zombie left for init to reap has stopped too
st=$(ps -o stat= -p "$dpid" 2>/dev/null || true)
case "$st" in "" | Z*) pass "down stopped dnsmasq" ;; *) fail "dnsmasq $dpid still runs after down ($st)" ;; esac
ks_finish
