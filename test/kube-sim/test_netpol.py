#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_netpol - kube-sim's NetworkPolicy rules (kubesim/netpol.py) without
a network: which pods a policy selects and isolates (podSelector,
policyTypes, a pod no policy selects), the peers (podSelector in the
policy's namespace, namespaceSelector, both, ipBlock with except), ports
(protocol, port, named port, endPort), the nftables text they give, the
netpol-delay fault's parsing, and a node's programmer applying a change
after that node's delay only (a new pod's table before it starts where the
node has none). With root and nft, every table made here is
also checked by `nft -c` in a namespace of its own (unshare -n)."""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import faults, netpol, resources, store  # noqa: E402

FAILS = []
PASSES = []


def check(what, ok):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    (PASSES if ok else FAILS).append(what)


def pod(name, ns, ip, labels, node="node-1", ports=None):
    return {"metadata": {"name": name, "namespace": ns, "uid": "u-" + name,
                         "labels": labels},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "ports": ports or []}]},
            "status": {"phase": "Running", "podIP": ip,
                       "podIPs": [{"ip": ip}]}, "ips": [ip]}


def pol(name, ns, spec):
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


SRV = pod("srv", "a", "198.19.17.2", {"app": "srv"},
          ports=[{"name": "http", "containerPort": 8080}])
CLI = pod("cli", "a", "198.19.17.3", {"role": "client"})
OTHER = pod("other", "b", "198.19.18.2", {"role": "client"}, "node-2")
PODS = [SRV, CLI, OTHER]
NSL = {"a": {"kubernetes.io/metadata.name": "a"},
       "b": {"kubernetes.io/metadata.name": "b", "team": "x"}}


def nft_ok(text):
    """`nft -c` accepts text (True when it cannot be run here)."""
    if os.geteuid() != 0 or not shutil.which("nft") or \
            not shutil.which("unshare"):
        return True
    p = subprocess.run(["unshare", "-n", "nft", "-c", "-f", "-"], input=text,
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr)
    return p.returncode == 0


def test_rules():
    deny = pol("deny", "a", {"podSelector": {"matchLabels": {"app": "srv"}},
                             "policyTypes": ["Ingress"]})
    r = netpol.rules(SRV, PODS, [deny], NSL)
    check("deny-all ingress isolates the selected pod with no rule",
          r == {"Ingress": [], "Egress": None})
    check("a pod no policy selects is not isolated",
          netpol.rules(CLI, PODS, [deny], NSL) ==
          {"Ingress": None, "Egress": None})
    check("no table for a pod not isolated",
          netpol.pod_table(netpol.rules(CLI, PODS, [deny], NSL), []) is None)
    t = netpol.pod_table(r, ["198.19.17.1"])
    check("deny-all: input chain drops, replies and the node pass",
          "hook input priority 0; policy drop;" in t and
          "ct state established,related accept" in t and
          "ip saddr 198.19.17.1 accept" in t and "output" not in t)
    check("deny-all table is valid nft", nft_ok(t))
    allow = pol("allow", "a", {
        "podSelector": {"matchLabels": {"app": "srv"}},
        "ingress": [{"from": [{"podSelector": {"matchLabels": {
            "role": "client"}}}], "ports": [{"port": "http"}]}]})
    r = netpol.rules(SRV, PODS, [deny, allow], NSL)
    check("podSelector peers: the policy's namespace only, named port",
          r["Ingress"] == [([("pod", "198.19.17.3")], [("tcp", "8080")])])
    t = netpol.pod_table(r, [])
    check("allow rule text", "ip saddr { 198.19.17.3 } tcp dport 8080 "
          "accept" in t and nft_ok(t))
    both = pol("both", "a", {
        "podSelector": {},
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "team": "x"}}, "podSelector": {"matchLabels": {
                "role": "client"}}}],
            "ports": [{"protocol": "UDP", "port": 5000, "endPort": 5010},
                      {"protocol": "SCTP"}]}]})
    r = netpol.rules(CLI, PODS, [both], NSL)
    check("namespaceSelector + podSelector, endPort and protocol only",
          r["Ingress"] == [([("pod", "198.19.18.2")],
                            [("udp", "5000-5010"), ("sctp", None)])])
    t = netpol.pod_table(r, [])
    check("port range and l4proto text", "udp dport 5000-5010" in t and
          "meta l4proto sctp" in t and nft_ok(t))
    eg = pol("eg", "a", {
        "podSelector": {"matchLabels": {"role": "client"}},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"ipBlock": {"cidr": "198.19.0.0/16", "except": [
            "198.19.18.0/24"]}}]}, {"ports": [{"protocol": "UDP",
                                              "port": 53}]}]})
    r = netpol.rules(CLI, PODS, [eg], NSL)
    check("egress ipBlock with except; a rule of ports only",
          r == {"Ingress": None, "Egress": [
              ([("cidr", "198.19.0.0/16", ["198.19.18.0/24"])], []),
              (None, [("udp", "53")])]})
    t = netpol.pod_table(r, ["198.19.17.1"])
    check("egress text", "hook output" in t and "ip daddr 198.19.0.0/16 "
          "ip daddr != { 198.19.18.0/24 } accept" in t and
          "udp dport 53 accept" in t and "oif lo accept" in t and nft_ok(t))
    none = pol("none", "a", {"podSelector": {"matchLabels": {"app": "srv"}},
                             "ingress": [{"from": [{"podSelector": {
                                 "matchLabels": {"role": "nobody"}}}]}]})
    check("a peer that selects no pod allows nothing",
          netpol.rules(SRV, PODS, [none], NSL)["Ingress"] == [])
    check("policies of another namespace select nothing",
          netpol.rules(OTHER, PODS, [deny, allow, both, eg], NSL) ==
          {"Ingress": None, "Egress": None})
    v6 = pod("v6", "a", "2001:2:0:201::5", {"role": "client"})
    r = netpol.rules(SRV, [SRV, v6], [allow], NSL)
    check("IPv6 peers use ip6", "ip6 saddr { 2001:2:0:201::5 }" in
          netpol.pod_table(r, ["2001:2:0:201::1"]))


def test_resource():
    r = resources.BY_GR.get(("networking.k8s.io", "networkpolicies"))
    check("networkpolicies served, schema-checked, in discovery",
          r is not None and r.schema ==
          "io.k8s.api.networking.v1.NetworkPolicy" and
          "networking.k8s.io" in resources.GROUPS and "create" in r.verbs)


class Cfg:
    prefix, nodes = "", 3


class Net:
    pass


def test_delay():
    rs = faults.parse("netpol-delay:node=node-2,delay=1500ms")
    check("netpol-delay parses", rs == [{"kind": "netpol-delay",
                                         "node": "node-2", "delay": 1.5}])
    try:
        faults.parse("netpol-delay:node=node-2")
        check("netpol-delay without delay refused", False)
    except faults.FaultError as e:
        check("netpol-delay without delay refused: %s" % e,
              "node=NAME,delay=DUR" in str(e))
    fl = faults.Faults(Cfg())
    fl.store = store.Store()
    fl.add("netpol-delay:node=node-2,delay=1s")
    check("the delay is node-2's only", fl.netpol_delay("node-2") == 1.0 and
          fl.netpol_delay("node-1") == 0)
    prog = netpol.Programmer(Net(), fl, lambda n: [])
    applied = []
    prog._apply = lambda node, tabs: applied.append((time.time(), node))
    deny = {"Ingress": [], "Egress": None}
    t0 = time.time()
    prog.update({"node-1": {"ns1": deny}, "node-2": {"ns2": deny}})
    time.sleep(1.6)
    at = {n: t - t0 for t, n in applied}
    print("applied after: %s" % at)
    check("node-1 programmed at once, node-2 after its 1 s delay",
          at.get("node-1", 9) < 0.5 and 0.9 <= at.get("node-2", 0) < 1.5)
    n = len(applied)
    prog.update({"node-1": {"ns1": deny}, "node-2": {"ns2": deny}})
    time.sleep(0.2)
    check("no change, nothing queued", len(applied) == n)
    # a new pod's sandbox: programmed at once where the node keeps up, left
    # to the delayed pass on node-2 (its traffic open until then)
    one = []
    prog._apply_one = lambda nsname, text: one.append((nsname, text))
    prog.admit("node-1", "ns3", {"node-1": {"ns3": deny}})
    prog.admit("node-2", "ns4", {"node-2": {"ns4": deny}})
    prog.admit("node-1", "ns5", {"node-1": {}})
    check("a new pod programmed before it starts on node-1 only: %s" % one,
          [n for n, _ in one] == ["ns3"] and "policy drop" in one[0][1] and
          prog.node_of.get("ns3") == "node-1")


def main():
    test_rules()
    test_resource()
    test_delay()
    print("%d passed, %d failed" % (len(PASSES), len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
