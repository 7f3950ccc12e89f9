# SPDX-License-Identifier: Apache-2.0
"""cni - what a CNI rollout does to a node's pod traffic.

Owns: the rollout of the seeded CNI DaemonSet (--cni, e.g. aws-node). When
its pod template changes (`kubectl rollout restart ds/aws-node` patches an
annotation in it), its pods are replaced node by node, in node order, one at
a time (RollingUpdate, maxUnavailable 1): each node's CNI pod takes
--cni-restart-time seconds, and for the first --cni-restart-outage seconds
of it that node's pod traffic is dropped (an nftables "bridge" table
"<p>cni" in the node's namespace, on the pod veths the bridge plugin made: IPv4 and
IPv6 frames entering the bridge from pods or leaving it to pods; ARP passes, so
neighbours stay resolved), and with --cni-conntrack-flush the node's
conntrack table is flushed as the outage starts. The DaemonSet's status
follows (updatedNumberScheduled, numberUnavailable, observedGeneration),
so `kubectl rollout status` works.
What was injected is recorded: one JSON line per node in
<state-dir>/cni-rollout.jsonl ({"node", "start_unix", "end_unix",
"outage_s", "before_unix", "conntrack_flushed"}: the drop is in place from
about start_unix, when its nft command returned, and never before
before_unix, when it was started) and Events on the DaemonSet
(CniRestart / CniRestarted). The seeded DaemonSet has no pod objects (it
stays kube-sim.io/static): the restart is simulated, not run.
"""
import json
import os
import socket
import struct
import subprocess
import threading
import time

from . import net

LOG = "cni-rollout.jsonl"


def flush_conntrack():
    """Flush this network namespace's conntrack table (ctnetlink
    IPCTNL_MSG_CT_DELETE with no attributes = all entries) for IPv4 and
    IPv6. Returns True when the kernel acknowledged both."""
    ok = True
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
    except OSError:
        return False
    with s:
        s.settimeout(2)
        for seq, fam in ((1, socket.AF_INET), (2, socket.AF_INET6)):
            # nlmsghdr: len, type (CTNETLINK << 8 | CT_DELETE), flags
            # (REQUEST | ACK), seq, pid; then nfgenmsg: family, version, res
            msg = struct.pack("=IHHII", 20, (1 << 8) | 2, 1 | 4, seq, 0) + \
                struct.pack("=BBH", fam, 0, 0)
            try:
                s.send(msg)
                ans = s.recv(4096)
                err = struct.unpack("=i", ans[16:20])[0] if len(ans) >= 20 \
                    else -1
                ok = ok and err in (0, -2)  # ENOENT: nothing to flush
            except OSError:
                ok = False
    return ok


class Rollout:
    def __init__(self, cfg, store, ctrl, network, log=print):
        self.cfg, self.store, self.ctrl, self.net = cfg, store, ctrl, network
        self.log = log
        self.restart_s = float(getattr(cfg, "cni_restart_time", 1.0))
        self.outage_s = float(getattr(cfg, "cni_restart_outage", 0.0))
        self.flush = bool(getattr(cfg, "cni_conntrack_flush", False))
        self.path = os.path.join(cfg.state_dir, LOG)
        self.table = cfg.prefix + "cni"
        self.ds = None
        if cfg.cni:
            from .seed import CNIS
            ns, name, _, _ = CNIS[cfg.cni.partition(":")[0]]
            self.ds = (ns, name)

    def start(self):
        if self.ds:
            threading.Thread(target=self.loop, name="cni-rollout",
                             daemon=True).start()

    def _template(self):
        o = self.store.get("daemonsets", self.ds[0], self.ds[1])
        if o is None:
            return None, None
        return json.dumps(o["spec"].get("template"), sort_keys=True), o

    def loop(self):
        seen, _ = self._template()
        while True:
            time.sleep(0.1)
            t, o = self._template()
            if t is None or t == seen:
                continue
            seen = t
            try:
                self.roll(o)
            except Exception as e:  # keep the daemon up; say why
                self.log("kube-sim: cni rollout failed: %s" % e)

    def _status(self, updated, unavailable, gen):
        n = len(self.net.indices)

        def setst(x):
            x["status"] = {
                "currentNumberScheduled": n, "desiredNumberScheduled": n,
                "numberMisscheduled": 0, "numberReady": n - unavailable,
                "numberAvailable": n - unavailable,
                "updatedNumberScheduled": updated,
                "observedGeneration": gen}
            if unavailable:
                x["status"]["numberUnavailable"] = unavailable
        self.store.mutate("daemonsets", self.ds[0], self.ds[1], setst)

    def _nft(self, i, text):
        p = subprocess.run(["ip", "netns", "exec", self.net.node_ns(i), "nft",
                            "-f", "-"], input=text, capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise net.NetError("nft: %s" % p.stderr.strip())

    def drop(self, i):
        # the pods' veths on the node's bridge are the bridge plugin's "veth<8 hex>" (the
        # node's namespace has no other veth on it: its own eth0 is the underlay link):
        # frames from a pod (prerouting: bridged to another pod or routed by the node) and
        # frames to a pod (output)
        veths = "veth*"
        self._nft(i, (
            "table bridge %s {\n"
            " chain pre { type filter hook prerouting priority -200;\n"
            "  iifname \"%s\" ether type { ip, ip6 } drop; }\n"
            " chain out { type filter hook output priority -200;\n"
            "  oifname \"%s\" ether type { ip, ip6 } drop; }\n"
            "}\n") % (self.table, veths, veths))

    def undrop(self, i):
        self._nft(i, "delete table bridge %s\n" % self.table)

    def roll(self, ds):
        gen = ds["metadata"].get("generation", 1)
        nodes = list(self.net.indices)
        n = len(nodes)
        self._status(0, 0, gen)
        for k, i in enumerate(nodes):
            node = self.net.node_name(i)
            self._status(k, 1, gen)
            self.ctrl.event(ds, "Normal", "CniRestart",
                            "Restarting the CNI pod on node %s" % node,
                            "daemonset-controller")
            t0 = before = time.time()
            flushed = False
            end = t0
            if self.outage_s > 0:
                # the rule takes effect as nft commits, near the end of its run: the outage is
                # from nft's return to the undrop nft's return; before_unix bounds it below
                self.drop(i)
                t0 = time.time()
                if self.flush:
                    flushed = net.in_netns(self.net.node_ns(i),
                                           flush_conntrack)
                time.sleep(max(0.0, t0 + self.outage_s - time.time()))
                self.undrop(i)
                end = time.time()
            rec = {"node": node, "start_unix": round(t0, 4),
                   "end_unix": round(end, 4),
                   "outage_s": round(end - t0, 4),
                   "before_unix": round(before, 4),
                   "conntrack_flushed": flushed}
            with open(self.path, "a") as f:
                f.write(json.dumps(rec) + "\n")
            self.log("kube-sim: cni restart %s" % json.dumps(rec))
            time.sleep(max(0.0, t0 + self.restart_s - time.time()))
            self.ctrl.event(ds, "Normal", "CniRestarted",
                            "The CNI pod on node %s is Ready again (outage "
                            "%.3f s)" % (node, end - t0),
                            "daemonset-controller")
        self._status(n, 0, gen)
