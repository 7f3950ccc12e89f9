# SPDX-License-Identifier: Apache-2.0
"""netpol - NetworkPolicy (networking.k8s.io/v1) enforced with nftables.

Owns: the rules each pod gets from the policies that select it (rules()),
their nftables text (pod_table()) and each node's programmer (Programmer):
a node's rules are recomputed on every pass of the controllers (a pod,
policy or namespace changed) and applied to the node's pods after the
node's programming delay (fault `netpol-delay:node=N,delay=DUR`), as a
CNI's policy agent on that node would. A new pod's table is in place before
its containers start on a node that keeps up (no delay: the CNI ADD waits for
its endpoint's policy, as Cilium's and Calico's do); on a delayed node the
agent notices the pod only after the delay, its traffic open meanwhile (the
window of aws-network-policy-agent#271).

Where the rules live: table "inet kspol" in the pod's own network
namespace (input hook: ingress, output hook: egress), as per-endpoint
datapaths (Cilium's, Calico's eBPF) attach a program per pod; the node
namespace does not see traffic between two pods of one bridge. A pod no
policy selects has no table (all allowed); a pod selected for a direction
drops what no rule of that direction allows, except replies (ct state
established,related), loopback and its node (the bridge address: the
kubelet's probes; Service traffic the node masquerades comes from there
too, so an ingress deny is seen on pod addresses, not through a
ClusterIP).
Knows nothing of HTTP; reads the store, runs `nft` in namespaces.
"""
import ipaddress
import subprocess
import sys
import threading
import time

from .util import label_match, selector_to_reqs

TABLE = "kspol"


def _sel(sel, labels):
    return label_match(selector_to_reqs(sel or {}), labels or {})


def _types(pol):
    spec = pol.get("spec") or {}
    t = spec.get("policyTypes")
    if t:
        return set(t)
    return {"Ingress"} | ({"Egress"} if spec.get("egress") else set())


def _peer_ips(peer, pol_ns, pods, ns_labels):
    """The addresses of peer (a NetworkPolicyPeer): a list of
    ("pod", ip) or ("cidr", cidr, [except...])."""
    if peer.get("ipBlock"):
        b = peer["ipBlock"]
        return [("cidr", b.get("cidr", ""), list(b.get("except") or []))]
    out = []
    psel, nsel = peer.get("podSelector"), peer.get("namespaceSelector")
    for p in pods:
        ns = p["metadata"]["namespace"]
        if nsel is None:
            if ns != pol_ns:
                continue
        elif not _sel(nsel, ns_labels.get(ns, {})):
            continue
        if psel is not None and not _sel(psel, p["metadata"].get("labels")):
            continue
        for ip in p["ips"]:
            out.append(("pod", ip))
    return out


def _named_port(pod, name):
    for c in (pod.get("spec") or {}).get("containers") or []:
        for cp in c.get("ports") or []:
            if cp.get("name") == name:
                return cp.get("containerPort")
    return None


def _ports(rule_ports, pod):
    """[(proto, "80" | "1000-2000" | None)] of a rule; [] = every port."""
    out = []
    for pt in rule_ports or []:
        proto = (pt.get("protocol") or "TCP").lower()
        port = pt.get("port")
        if isinstance(port, str) and not port.isdigit():
            port = _named_port(pod, port) if pod is not None else None
            if port is None:
                continue   # a name no container gives: matches nothing
        if port is None:
            out.append((proto, None))
        elif pt.get("endPort"):
            out.append((proto, "%d-%d" % (int(port), int(pt["endPort"]))))
        else:
            out.append((proto, str(int(port))))
    return out


def rules(pod, pods, policies, ns_labels):
    """The pod's policy rules: {"Ingress": None | [rule...], "Egress": ...}
    (None: not isolated in that direction); a rule is (peers, ports) with
    peers None for every address and ports [] for every port."""
    ns = pod["metadata"]["namespace"]
    out = {"Ingress": None, "Egress": None}
    for pol in policies:
        if pol["metadata"]["namespace"] != ns:
            continue
        spec = pol.get("spec") or {}
        if not _sel(spec.get("podSelector") or {},
                    pod["metadata"].get("labels")):
            continue
        for d, key, pk in (("Ingress", "ingress", "from"),
                           ("Egress", "egress", "to")):
            if d not in _types(pol):
                continue
            if out[d] is None:
                out[d] = []
            for r in spec.get(key) or []:
                peers = None
                if r.get(pk):
                    peers = []
                    for peer in r[pk]:
                        peers += _peer_ips(peer, ns, pods, ns_labels)
                    if not peers:
                        continue
                # named ports: the selected pod's (ingress) or, for egress,
                # the pod's own table cannot tell the peer's: numbers only
                out[d].append((peers, _ports(r.get("ports"),
                                             pod if d == "Ingress" else None)
                               if r.get("ports") else []))
    return out


def _fam(a):
    return "ip6" if ":" in a else "ip"


def _addr_matches(peers, field):
    """nft match expressions, one per family/block, for field saddr/daddr."""
    if peers is None:
        return [""]
    out = []
    by = {"ip": [], "ip6": []}
    for p in peers:
        if p[0] == "pod":
            by[_fam(p[1])].append(p[1])
    for f in ("ip", "ip6"):
        if by[f]:
            out.append("%s %s { %s } " % (f, field,
                                          ", ".join(sorted(set(by[f])))))
    for p in peers:
        if p[0] != "cidr":
            continue
        try:
            net = ipaddress.ip_network(p[1], strict=False)
        except ValueError:
            continue
        f = "ip6" if net.version == 6 else "ip"
        m = "%s %s %s " % (f, field, net)
        exc = [str(ipaddress.ip_network(e, strict=False)) for e in p[2]]
        if exc:
            m += "%s %s != { %s } " % (f, field, ", ".join(exc))
        out.append(m)
    return out


def _port_matches(ports):
    if not ports:
        return [""]
    out = []
    for proto, rng in ports:
        if rng is None:
            out.append("meta l4proto %s " % proto)
        else:
            out.append("%s dport %s " % (proto, rng))
    return out


def pod_table(r, node_ips):
    """The nft text of a pod's table for rules r (rules()), or None when it
    is isolated in no direction."""
    if r["Ingress"] is None and r["Egress"] is None:
        return None
    lines = ["table inet %s {}" % TABLE, "delete table inet %s" % TABLE,
             "table inet %s {" % TABLE]
    for d, hook, field in (("Ingress", "input", "saddr"),
                           ("Egress", "output", "daddr")):
        if r[d] is None:
            continue
        lines.append("  chain %s {" % d.lower())
        lines.append("    type filter hook %s priority 0; policy drop;" %
                     hook)
        lines.append("    ct state established,related accept")
        lines.append("    %s lo accept" % ("iif" if hook == "input"
                                           else "oif"))
        for ip in node_ips:
            lines.append("    %s %s %s accept" % (_fam(ip), field, ip))
        for peers, ports in r[d]:
            for a in _addr_matches(peers, field):
                for pm in _port_matches(ports):
                    lines.append("    %s%saccept" % (a, pm))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _pod_ips(p):
    st = p.get("status") or {}
    ips = [e.get("ip") for e in st.get("podIPs") or [] if e.get("ip")]
    return ips or ([st["podIP"]] if st.get("podIP") else [])


def desired(store, netns_of):
    """{node name: {pod netns: rules()}} for every running pod
    with a network namespace of its own (netns_of(uid) -> name or None)."""
    pods = []
    for p in store.list_refs("pods"):
        if (p.get("spec") or {}).get("hostNetwork") or \
                (p.get("status") or {}).get("phase") in ("Succeeded",
                                                         "Failed"):
            continue
        ips = _pod_ips(p)
        if not ips:
            continue
        pods.append(dict(p, ips=ips))
    policies = store.list_refs("networkpolicies")
    ns_labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {}
                 for n in store.list_refs("namespaces")}
    out = {}
    for p in pods:
        node = p["spec"].get("nodeName")
        nsname = netns_of(p["metadata"]["uid"])
        if not node or not nsname:
            continue
        r = rules(p, pods, policies, ns_labels) if policies else \
            {"Ingress": None, "Egress": None}
        out.setdefault(node, {})[nsname] = r
    return out


class Programmer:
    """Applies each node's pod tables after the node's delay."""

    def __init__(self, net, faults, node_ips_of):
        self.net, self.faults = net, faults
        self.node_ips_of = node_ips_of    # node name -> the node's addrs
        self.lock = threading.Lock()
        self.cv = threading.Condition(self.lock)
        self.want = {}      # node -> {netns: text} last queued
        self.queue = []     # (due, node, {netns: text})
        self.applied = {}   # netns -> text
        self.node_of = {}   # netns -> node
        self.apply_lock = threading.Lock()   # applied, node_of, nft runs
        threading.Thread(target=self._run, name="netpol", daemon=True
                         ).start()

    def update(self, state):
        """state: desired()'s answer; queues each node whose tables
        changed, to be applied after its netpol-delay."""
        now = time.time()
        nodes = set(state) | set(self.want)
        with self.lock:
            for node in sorted(nodes):
                tabs = {}
                for nsname, r in state.get(node, {}).items():
                    tabs[nsname] = pod_table(r, self.node_ips_of(node))
                if tabs == self.want.get(node):
                    continue
                self.want[node] = tabs
                delay = self.faults.netpol_delay(node) if self.faults else 0
                self.queue.append((now + delay, node, tabs))
            self.queue.sort(key=lambda x: x[0])
            self.cv.notify()

    def admit(self, node, nsname, state):
        """A new pod's sandbox (netns nsname) on node is up, its address in
        the store (state: desired()'s answer): programmed now when the node
        keeps up; a delayed node's next queued pass programs it."""
        if not nsname or (self.faults and self.faults.netpol_delay(node)):
            return
        r = state.get(node, {}).get(nsname)
        if r is None:
            return
        with self.apply_lock:
            self._apply_one(nsname, pod_table(r, self.node_ips_of(node)))
            self.node_of[nsname] = node

    def _run(self):
        while True:
            with self.lock:
                while not self.queue or self.queue[0][0] > time.time():
                    self.cv.wait(max(0.01, self.queue[0][0] - time.time())
                                 if self.queue else None)
                _, node, tabs = self.queue.pop(0)
            self._apply(node, tabs)

    def _apply_one(self, nsname, text):
        if self.applied.get(nsname) == text:
            return
        body = text if text is not None else \
            "table inet %s {}\ndelete table inet %s\n" % (TABLE, TABLE)
        p = subprocess.run(["ip", "netns", "exec", nsname, "nft", "-f",
                            "-"], input=body, capture_output=True,
                           text=True)
        if p.returncode == 0:
            self.applied[nsname] = text
        elif "No such file" not in p.stderr and \
                "Cannot open network namespace" not in p.stderr:
            print("kube-sim: netpol %s: %s" % (nsname, p.stderr.strip()),
                  file=sys.stderr)

    def _apply(self, node, tabs):
        with self.apply_lock:
            self._apply_locked(node, tabs)

    def _apply_locked(self, node, tabs):
        for nsname, text in tabs.items():
            self._apply_one(nsname, text)
        gone = [n for n in self.applied if n not in tabs and
                self.node_of.get(n) == node]
        for n in gone:
            del self.applied[n]
            del self.node_of[n]
        for n in tabs:
            self.node_of[n] = node
