# SPDX-License-Identifier: Apache-2.0
"""faults - misbehaviour on demand.

Owns: the fault SPEC parser (see docs/kube-sim.md), per-request decisions
(429 with Retry-After and APF's plain-text body, 500/503 Status, slow
answers), watch faults (streams cut after N seconds, 410 ERROR events or
an HTTP 410), node faults (NotReady, unschedulable, tainted, a node's
allocatable cpu / memory / pods for the scheduler's fit), a node's links at a
lower speed both ways (link-rate: tbf on both ends of its veth), images that
never pull, slow pod network set-up (cni-add-delay), slow container
readiness (ready-delay), a node's slow NetworkPolicy programming
(netpol-delay, netpol.py), a node's Service proxy syncing late
(proxy-delay), a namespace's LimitRange default CPU limit
(limit-range-cpu, applied by admission.py and enforced by the kubelet as a
CFS quota), Pod Security default
level, a Gatekeeper-like rule refusing to
delete a namespace that still holds pods, exec-token rotation, and the
/kube-sim/faults control endpoint behind `kube-sim fault`.
"""
import json
import random
import subprocess
import re
import threading
import time

from .fit import DEFAULT_ALLOCATABLE, quantity
from .schema import Rejected
from .util import now_iso

KINDS = {"429", "500", "503", "slow", "drop-watch", "gone-watch", "compact",
         "node-notready", "node-unschedulable", "node-taint", "slow-node",
         "image-pull-fail", "ns-delete-guard", "psa-default", "rotate-token",
         "cni-add-delay", "ready-delay", "limit-range-cpu",
         "node-allocatable", "link-rate", "dns-drop", "netpol-delay", "proxy-delay"}
# faults of a node's CNI (kubesim/cniruntime.py writes them into the node's
# conflist; kubesim/sandbox.py reports what the kubelet then reports)
CNI_KINDS = {"cni-ipam-size", "cni-plugin-fail", "cni-add-hang",
             "cni-conf-missing", "cni-conf-broken"}
KINDS |= CNI_KINDS
# cni-plugin-fail:msg=PRESET: (plugin type, message) as the real CNIs say it
CNI_FAIL_PRESETS = {
    "vpc-cni": ("aws-cni", "add cmd: failed to assign an IP address to "
                "container"),
    "cilium": ("cilium-cni", "unable to connect to Cilium daemon: failed to "
               "create cilium agent client after 30.000000 seconds timeout: "
               "Get \"http:///var/run/cilium/cilium.sock/v1/config\": dial "
               "unix /var/run/cilium/cilium.sock: connect: connection "
               "refused")}
CNI_FAIL_TYPE = "kube-sim-fail"


class FaultError(ValueError):
    pass


def _dur(v):
    m = re.match(r"^([0-9.]+)(ms|s|m)?$", v or "")
    if not m:
        raise FaultError("bad duration %r" % v)
    x = float(m.group(1))
    return x / 1000 if m.group(2) == "ms" else x * 60 if m.group(2) == "m" \
        else x


def parse(spec):
    """'kind[:k=v,k=v][;kind...]' -> list of rule dicts."""
    rules = []
    for item in re.split(r"[;\n]", spec or ""):
        item = item.strip()
        if not item:
            continue
        kind, _, rest = item.partition(":")
        kind = kind.strip()
        if kind not in KINDS:
            raise FaultError("unknown fault %r (known: %s)" % (
                kind, ", ".join(sorted(KINDS))))
        r = {"kind": kind}
        for kv in filter(None, (x.strip() for x in rest.split(","))):
            k, eq, v = kv.partition("=")
            if not eq:
                raise FaultError("fault %s: expected key=value, got %r" %
                                 (kind, kv))
            r[k.strip()] = v.strip()
        for k in ("rate",):
            if k in r and kind != "link-rate":
                r[k] = float(r[k])
        for k in ("count",):
            if k in r:
                r[k] = int(r[k])
        for k in ("delay", "after", "retry-after", "for"):
            if k in r:
                r[k] = _dur(r[k])
        if kind.startswith("node-") and "node" not in r:
            raise FaultError("fault %s needs node=NAME" % kind)
        if kind == "limit-range-cpu" and not re.match(
                r"^[0-9]+(m|\.[0-9]+)?$", r.get("cpu", "")):
            raise FaultError("fault limit-range-cpu needs cpu=QUANTITY "
                             "(e.g. 500m or 1)")
        if kind == "node-allocatable":
            _check_allocatable(r)
        if kind in ("cni-add-delay", "ready-delay", "netpol-delay", "proxy-delay") and \
                ("node" not in r or "delay" not in r):
            raise FaultError("fault %s needs node=NAME,delay=DUR" % kind)
        if kind in CNI_KINDS:
            _check_cni(r)
        if kind == "link-rate":
            _check_link_rate(r)
        if kind == "dns-drop":
            _check_dns_drop(r)
        rules.append(r)
    return rules


def _check_cni(r):
    kind = r["kind"]
    if not re.match(r"^node-[0-9]+$", r.get("node", "")):
        raise FaultError("fault %s needs node=node-N" % kind)
    allowed = {"kind", "node", "for"} | {
        "cni-ipam-size": {"size"}, "cni-plugin-fail": {"msg", "type"}}.get(
            kind, set())
    if set(r) - allowed:
        raise FaultError("fault %s takes only %s" % (kind, ", ".join(
            sorted(allowed - {"kind"}))))
    if kind == "cni-ipam-size":
        if not re.match(r"^[0-9]+$", r.get("size", "")) or \
                int(r["size"]) < 1:
            raise FaultError("fault cni-ipam-size needs node=node-N,size=K "
                             "(K >= 1 pod addresses)")
        r["size"] = int(r["size"])
    if kind == "cni-plugin-fail":
        if not r.get("msg"):
            raise FaultError("fault cni-plugin-fail needs node=node-N,"
                             "msg=TEXT (no ',' or ';'; presets: %s)" %
                             ", ".join(sorted(CNI_FAIL_PRESETS)))
        t, m = CNI_FAIL_PRESETS.get(r["msg"], (CNI_FAIL_TYPE, r["msg"]))
        r["msg"] = m
        r.setdefault("type", t)
        if not re.match(r"^[a-z0-9][a-z0-9._-]*$", r["type"]):
            raise FaultError("fault cni-plugin-fail: type=%r is not a "
                             "plugin name ([a-z0-9._-])" % r["type"])


def _check_link_rate(r):
    if not re.match(r"^node-[0-9]+$", r.get("node", "")) or \
            not re.match(r"^[0-9]+(\.[0-9]+)?(kbit|mbit|gbit)$",
                         r.get("rate", "")) or \
            set(r) - {"kind", "node", "rate", "for"}:
        raise FaultError("fault link-rate needs node=node-N,rate=RATE "
                         "(a tc rate: e.g. 1gbit, 500mbit)")


def _check_dns_drop(r):
    if not re.match(r"^node-[0-9]+$", r.get("node", "")) or \
            not re.match(r"^[0-9]+$", r.get("pct", "")) or \
            not 1 <= int(r["pct"]) <= 100 or \
            set(r) - {"kind", "node", "pct", "for"}:
        raise FaultError("fault dns-drop needs node=node-N,pct=P (1 to 100: "
                         "the share of DNS queries dropped)")
    r["pct"] = int(r["pct"])


def _link_rate_bytes_per_s(rate):
    m = re.match(r"^([0-9.]+)(kbit|mbit|gbit)$", rate)
    return float(m.group(1)) * {"kbit": 1e3, "mbit": 1e6,
                                "gbit": 1e9}[m.group(2)] / 8


def _check_allocatable(r):
    keys = [k for k in ("cpu", "memory", "pods") if k in r]
    if not keys or set(r) - {"kind", "node", "cpu", "memory", "pods"}:
        raise FaultError("fault node-allocatable needs node=NAME and one or "
                         "more of cpu=QUANTITY, memory=QUANTITY, pods=N "
                         "(e.g. node=node-2,cpu=500m,pods=4)")
    for k in keys:
        q = quantity(r[k])
        if q is None or q < 0 or (k == "pods" and q != int(q)):
            raise FaultError("fault node-allocatable: bad %s=%s" % (k, r[k]))


class Faults:
    def __init__(self, cfg):
        self.cfg = cfg
        self.lock = threading.Lock()
        self.rules = []
        self.psa_default = None
        self.down_nodes = set()
        self.store = self.auth = None   # wired by main
        # called with a node name when that node's CNI faults change (the
        # kubelets rewrite its conflist and check its network): wired by main
        self.on_cni = None

    # ------------------------------------------------------------ control
    def add(self, spec):
        new = parse(spec)
        with self.lock:
            for r in new:
                if r["kind"] == "psa-default":
                    self.psa_default = r.get("level", "baseline")
                elif r["kind"] == "compact":
                    self.store.compact()
                elif r["kind"] == "rotate-token":
                    self.auth.rotate_exec_token()
                else:
                    self.rules.append(r)
        for r in new:
            if r["kind"].startswith("node-"):
                self.apply_node(r, True)
            elif r["kind"] == "slow-node":
                self.slow_node(r, True)
            elif r["kind"] == "link-rate":
                self.link_rate(r, True)
            elif r["kind"] == "dns-drop":
                self.dns_drop(r, True)
            elif r["kind"] in CNI_KINDS:
                self._cni_changed(r["node"])
            if r.get("for") is not None:
                t = threading.Timer(r["for"], self._lift, (r,))
                t.daemon = True
                t.start()
        return new

    def _lift(self, r):
        """A fault given for=DUR ends by itself after DUR."""
        with self.lock:
            if not any(x is r for x in self.rules):
                return
            self.rules = [x for x in self.rules if x is not r]
        if r["kind"].startswith("node-"):
            self.apply_node(r, False)
        elif r["kind"] == "slow-node":
            self.slow_node(r, False)
        elif r["kind"] == "link-rate":
            self.link_rate(r, False)
        elif r["kind"] == "dns-drop":
            self.dns_drop(r, False)
        elif r["kind"] in CNI_KINDS:
            self._cni_changed(r["node"])

    def _cni_changed(self, node):
        if self.on_cni:
            self.on_cni(node)

    def cni_rules(self, node):
        """The CNI faults (CNI_KINDS) of node now, oldest first."""
        with self.lock:
            return [dict(r) for r in self.rules
                    if r["kind"] in CNI_KINDS and r["node"] == node]

    def clear(self):
        with self.lock:
            old, self.rules = self.rules, []
            self.psa_default = None
        for r in old:
            if r["kind"].startswith("node-"):
                self.apply_node(r, False)
            elif r["kind"] == "slow-node":
                self.slow_node(r, False)
            elif r["kind"] == "link-rate":
                self.link_rate(r, False)
            elif r["kind"] == "dns-drop":
                self.dns_drop(r, False)
        for node in sorted({r["node"] for r in old
                            if r["kind"] in CNI_KINDS}):
            self._cni_changed(node)

    def slow_node(self, r, on):
        """A slow node network: netem delay (`delay`) and/or a tbf rate
        limit (`mbit`) on the egress of the node's underlay link (eth0 in
        its namespace), so every packet the node sends waits or queues."""
        m = re.match(r"^node-([0-9]+)$", r.get("node", ""))
        if not m:
            raise FaultError("slow-node: node=node-N required")
        ns = "%sn%d" % (self.cfg.prefix, int(m.group(1)))
        base = ["ip", "netns", "exec", ns, "tc", "qdisc"]
        if not on:
            subprocess.run(base + ["del", "dev", "eth0", "root"],
                           capture_output=True)
            return
        if "delay" not in r and "mbit" not in r:
            raise FaultError("slow-node: give delay=DUR and/or mbit=N")
        argv = base + ["replace", "dev", "eth0", "root"]
        if "delay" in r:
            argv += ["netem", "delay", "%dus" % int(r["delay"] * 1e6)]
            if "mbit" in r:
                argv += ["rate", "%smbit" % r["mbit"]]
        else:
            argv += ["tbf", "rate", "%smbit" % r["mbit"], "burst", "32kbit",
                     "latency", "50ms"]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            raise FaultError("slow-node: %s: %s" % (" ".join(argv[4:]),
                                                   p.stderr.strip()))

    def link_rate(self, r, on):
        """A node's underlay link at a lower speed, both ways, as a NIC
        negotiated down: a tbf rate limit on the egress of each end of the
        node's veth, eth0 in the node's namespace (what it sends) and
        <prefix>u<N> in the underlay namespace (what it receives)."""
        i = int(r["node"].split("-")[1])
        if not self.cfg.prefix or not 1 <= i <= self.cfg.nodes:
            raise FaultError("link-rate: no node %s" % r["node"])
        p = self.cfg.prefix
        ends = [("%sn%d" % (p, i), "eth0"), ("%sul" % p, "%su%d" % (p, i))]
        # burst: 4 ms at the rate (tbf needs at least rate/HZ), 64 KiB at
        # least so one GSO segment fits
        burst = max(65536, int(_link_rate_bytes_per_s(r["rate"]) * 0.004))
        for ns, dev in ends:
            base = ["ip", "netns", "exec", ns, "tc", "qdisc"]
            if not on:
                subprocess.run(base + ["del", "dev", dev, "root"],
                               capture_output=True)
                continue
            argv = base + ["replace", "dev", dev, "root", "tbf", "rate",
                           r["rate"], "burst", str(burst), "latency", "50ms"]
            p2 = subprocess.run(argv, capture_output=True, text=True)
            if p2.returncode != 0:
                raise FaultError("link-rate: %s: %s" % (
                    " ".join(argv[4:]), p2.stderr.strip()))

    def dns_drop(self, r, on):
        """A share of the DNS queries from a node's pods dropped (dns.py):
        off, the node's latest remaining dns-drop rule holds, if any."""
        from . import dns
        i = int(r["node"].split("-")[1])
        if not self.cfg.prefix or not 1 <= i <= self.cfg.nodes:
            raise FaultError("dns-drop: no node %s" % r["node"])
        pct = r["pct"] if on else 0
        if not on:
            with self.lock:
                left = [x["pct"] for x in self.rules if x["kind"] ==
                        "dns-drop" and x["node"] == r["node"]]
            pct = left[-1] if left else 0
        try:
            dns.drop(self.cfg.prefix, i, pct)
        except Exception as e:
            raise FaultError(str(e))

    def apply_node(self, r, on):
        name = r["node"]
        kind = r["kind"]

        def edit(n):
            spec = n.setdefault("spec", {})
            taints = [t for t in spec.get("taints") or []
                      if t.get("_fault") != kind]
            for t in spec.get("taints") or []:
                t.pop("_fault", None)
            if kind == "node-notready":
                for c in n["status"]["conditions"]:
                    c["lastTransitionTime"] = now_iso()
                    if on:
                        c["status"] = "Unknown"
                        c["reason"] = "NodeStatusUnknown"
                        c["message"] = "Kubelet stopped posting node status."
                    elif c["type"] == "Ready":
                        c["status"], c["reason"] = "True", "KubeletReady"
                        c["message"] = "kubelet is posting ready status"
                    else:
                        c["status"] = "False"
                        c["reason"] = {"MemoryPressure":
                                       "KubeletHasSufficientMemory",
                                       "DiskPressure":
                                       "KubeletHasNoDiskPressure",
                                       "PIDPressure":
                                       "KubeletHasSufficientPID"}.get(
                                           c["type"], "")
                        c["message"] = "kubelet is posting ready status"
                keys = [("node.kubernetes.io/unreachable", "NoSchedule"),
                        ("node.kubernetes.io/unreachable", "NoExecute")]
                taints = [t for t in taints if (t.get("key"),
                                                t.get("effect")) not in keys]
                if on:
                    taints += [{"key": k, "effect": e, "timeAdded":
                                now_iso()} for k, e in keys]
            elif kind == "node-unschedulable":
                if on:
                    spec["unschedulable"] = True
                else:
                    spec.pop("unschedulable", None)
                key = "node.kubernetes.io/unschedulable"
                taints = [t for t in taints if t.get("key") != key]
                if on:
                    taints.append({"key": key, "effect": "NoSchedule",
                                   "timeAdded": now_iso()})
            elif kind == "node-allocatable":
                st = n.setdefault("status", {})
                alloc = dict(st.get("capacity") or DEFAULT_ALLOCATABLE)
                if on:
                    alloc.update({k: r[k] for k in ("cpu", "memory", "pods")
                                  if k in r})
                st["allocatable"] = alloc
            elif kind == "node-taint":
                t = {"key": r.get("key", "kube-sim/fault"),
                     "effect": r.get("effect", "NoSchedule")}
                if r.get("value"):
                    t["value"] = r["value"]
                taints = [x for x in taints if (x.get("key"),
                                                x.get("effect")) !=
                          (t["key"], t["effect"])]
                if on:
                    taints.append(t)
            if taints:
                spec["taints"] = taints
            else:
                spec.pop("taints", None)
        with self.lock:
            if kind == "node-notready":
                (self.down_nodes.add if on else self.down_nodes.discard)(
                    name)
        self.store.mutate("nodes", "", name, edit)
        if kind == "node-notready":
            self._pods_ready(name, not on)
            self._node_network(name, not on)

    def _pods_ready(self, node, ready):
        """What the node lifecycle controller does when a node stops
        reporting (MarkPodsNotReady): the Ready condition of each running
        pod on it turns False; back to True when the fault is cleared."""
        pods = [p for p in self.store.list("pods")[0]
                if p["spec"].get("nodeName") == node and
                (p.get("status") or {}).get("phase") == "Running"]

        def edit(p):
            for c in p["status"].get("conditions") or []:
                if c.get("type") == "Ready" and \
                        c.get("status") != ("True" if ready else "False"):
                    c["status"] = "True" if ready else "False"
                    c["lastTransitionTime"] = now_iso()
        for p in pods:
            try:
                self.store.mutate("pods", p["metadata"]["namespace"],
                                  p["metadata"]["name"], edit)
            except Exception:
                pass  # gone meanwhile

    def _node_network(self, node, up):
        """An unreachable node: every packet to, from or through its
        namespace is dropped (nftables table <p>down), its pods' too."""
        m = re.match(r"^node-([0-9]+)$", node)
        if not m or not self.cfg.prefix:
            return
        ns = "%sn%d" % (self.cfg.prefix, int(m.group(1)))
        t = self.cfg.prefix + "down"
        if up:
            text = "table inet %s {}\ndelete table inet %s\n" % (t, t)
        else:
            text = "table inet %s {\n" % t + "".join(
                "  chain %s { type filter hook %s priority -10; "
                "policy drop; }\n" % (h, h)
                for h in ("input", "forward", "output")) + "}\n"
        subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                       input=text, capture_output=True, text=True)

    def control(self, app, req):
        if req.method == "GET":
            with self.lock:
                body = {"rules": self.rules, "psaDefault": self.psa_default}
            return app.send(req, 200, body)
        if req.method == "DELETE":
            self.clear()
            return app.send(req, 200, {"cleared": True})
        if req.method == "POST":
            try:
                new = self.add(req.body.decode())
            except FaultError as e:
                raise Rejected(400, "BadRequest", str(e))
            return app.send(req, 200, {"added": new})
        raise Rejected(405, "MethodNotAllowed", "GET, POST or DELETE")

    # ------------------------------------------------------------ matching
    def _take(self, kind, req, watch=None):
        with self.lock:
            for r in self.rules:
                if r["kind"] != kind:
                    continue
                if r.get("path") and not req.path.startswith(r["path"]):
                    continue
                if r.get("method") and r["method"].upper() != req.method:
                    continue
                if watch is not None and r.get("watch") is not None and \
                        (r["watch"] in ("1", "true")) != watch:
                    continue
                if "count" in r and r["count"] <= 0:
                    continue
                if random.random() >= r.get("rate", 1.0):
                    continue
                if "count" in r:
                    r["count"] -= 1
                return r
        return None

    def before(self, req):
        """A responder for a faulty answer, or None to serve normally."""
        if not self.rules:
            return None
        w = req.qbool("watch")
        r = self._take("slow", req, w)
        if r:
            time.sleep(r.get("delay", 1.0))
        for kind in ("429", "500", "503"):
            r = self._take(kind, req, w)
            if r:
                return lambda app, rq, r=r: self.respond(app, rq, r)
        return None

    def respond(self, app, req, r):
        ra = r.get("retry-after")
        if r["kind"] == "429":
            ra = int(ra if ra is not None else 1)
            return app.send(req, 429, "Too many requests, please try again "
                            "later.\n", "text/plain; charset=utf-8", [
                                ("Retry-After", str(ra)),
                                ("X-Content-Type-Options", "nosniff")])
        code = int(r["kind"])
        if code == 500:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Failure", "message": "Internal error "
                    "occurred: kube-sim injected fault", "reason":
                    "InternalError", "details": {"causes": [{
                        "message": "kube-sim injected fault"}]},
                    "code": 500}
        else:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Failure", "message": "the server is "
                    "currently unable to handle the request", "reason":
                    "ServiceUnavailable", "code": 503}
        headers = []
        if ra is not None:
            headers.append(("Retry-After", str(int(ra))))
            body.setdefault("details", {})["retryAfterSeconds"] = int(ra)
        return app.send(req, code, body, headers=headers)

    def watch_drop_after(self, req):
        r = self._take("drop-watch", req)
        return r.get("after", 2.0) if r else None

    def watch_gone(self, req):
        r = self._take("gone-watch", req)
        if r and r.get("mode") == "http":
            raise Rejected(410, "Expired", "too old resource version: %s (%d)"
                           % (req.q.get("resourceVersion", "0"),
                              self.store.rv))
        return r is not None

    def node_down(self, name):
        return name in self.down_nodes

    def _node_delay(self, kind, node):
        """The longest delay of the rules of kind for node, 0 when none."""
        with self.lock:
            return max([r["delay"] for r in self.rules
                        if r["kind"] == kind and r["node"] == node] or [0.0])

    def cni_add_delay(self, node):
        """Seconds the CNI ADD of a new pod on node waits (cni-add-delay)."""
        return self._node_delay("cni-add-delay", node)

    def proxy_delay(self, node):
        """Seconds a Service change waits before node's proxy programs it
        (proxy-delay; net.py / proxy.py read it at each sync)."""
        return self._node_delay("proxy-delay", node)

    def ready_delay(self, node):
        """Seconds a container started on node stays not Ready (ready-delay):
        a slow readiness gate, or the window between a container's start
        and its kubelet's next status report."""
        return self._node_delay("ready-delay", node)

    def netpol_delay(self, node):
        """Seconds node's policy agent takes to program a change of its
        pods' NetworkPolicy rules (netpol-delay; netpol.py)."""
        return self._node_delay("netpol-delay", node)

    def limit_range_cpu(self, ns):
        """The default CPU limit a LimitRange gives containers of namespace
        ns (the last matching limit-range-cpu rule), None when none."""
        with self.lock:
            cpu = None
            for r in self.rules:
                if r["kind"] == "limit-range-cpu" and \
                        r.get("namespace", ns) == ns:
                    cpu = r["cpu"]
            return cpu

    def pull_fails(self, image):
        with self.lock:
            return any(r["kind"] == "image-pull-fail" and
                       r.get("image", "") in image for r in self.rules)

    def check_ns_delete(self, ctrl, name):
        with self.lock:
            on = any(r["kind"] == "ns-delete-guard" for r in self.rules)
        if not on:
            return
        with self.store.lock:
            n = len(self.store.list_refs("pods", name))
        if n:
            raise Rejected(403, "Forbidden", 'admission webhook '
                           '"validation.gatekeeper.sh" denied the request: '
                           '[ns-must-be-empty] namespace "%s" still has %d '
                           'pod(s); delete its workloads first' % (name, n))


def dumps(rules):
    return json.dumps(rules)
