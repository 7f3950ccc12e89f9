# SPDX-License-Identifier: Apache-2.0
"""kubelet - the nodes: Node objects, one Worker (pod.py) per pod bound to
a node, container logs and the pods/log reader.

Owns: Node objects (labels, taints, status, nodeInfo from this machine),
starting and stopping pod workers as pods are bound, deleted or force-
deleted, node heartbeats, LogSource (CRI-like files under
DIR/pods/<uid>/logs), and DIR/pids (every process started, with its start
time, so `down` can kill exactly those).
"""
import os
import sys
import threading
import time
import traceback
import uuid

from .cniruntime import CniRuntime
from .cpulimit import CpuLimits
from .fit import DEFAULT_ALLOCATABLE
from .images import Store, host_arch
from .net import node_ips, pod_cidrs
from .util import dcopy, now_iso, rand_token, wall
from .pod import Worker
from .sandbox import NodeNetworks

RUNTIME = "containerd://1.7.27"
KUBELET_VERSION = "v1.35.0"


def _os_image():
    try:
        with open("/etc/os-release") as f:
            for ln in f:
                if ln.startswith("PRETTY_NAME="):
                    return ln.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "Linux"


def proc_starttime(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


class PidFile:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def add(self, pid, role):
        st = proc_starttime(pid) or "0"
        with self.lock, open(self.path, "a") as f:
            f.write("%d %s %s\n" % (pid, st, role))


class LogSource:
    """A container's log file (lines "<ts> <stream> <F|P> <text>")."""

    def __init__(self, path, alive):
        self.path, self.alive = path, alive

    @staticmethod
    def _render(rec, ts):
        try:
            t, _, tag, text = rec.split(b" ", 3)
        except ValueError:
            return b""
        out = (t + b" " if ts else b"") + text
        return out + b"\n" if tag == b"F" else out

    def read(self, follow, tail, timestamps, since):
        try:
            f = open(self.path, "rb")
        except OSError:
            return
        with f:
            data = f.read()
            pos = data.rfind(b"\n") + 1
            recs = data[:pos].split(b"\n")[:-1]
            if since is not None:
                cut = wall() - since
                recs = [r for r in recs if _rec_time(r) >= cut]
            if tail is not None:
                keep, n = [], 0
                for r in reversed(recs):
                    if r.split(b" ", 3)[2:3] == [b"F"]:
                        n += 1
                        if n > tail:
                            break
                    keep.append(r)
                recs = list(reversed(keep))
            out = b"".join(self._render(r, timestamps) for r in recs)
            if out:
                yield out
            if not follow:
                return
            f.seek(pos)
            buf = b""
            while True:
                chunk = f.read()
                if chunk:
                    buf += chunk
                    i = buf.rfind(b"\n") + 1
                    if i:
                        yield b"".join(self._render(r, timestamps)
                                       for r in buf[:i].split(b"\n")[:-1])
                        buf = buf[i:]
                    continue
                if not self.alive():
                    chunk = f.read()
                    if not chunk:
                        return
                    continue
                time.sleep(0.1)
                yield b""


def _rec_time(r):
    from .util import parse_iso
    return parse_iso(r.split(b" ", 1)[0].decode(errors="replace")) or 0


class Kubelet:
    """All simulated kubelets (one per node) of this kube-sim."""

    def __init__(self, cfg, store, ctrl, net, faults, pids):
        self.cfg, self.store, self.ctrl, self.net = cfg, store, ctrl, net
        self.faults, self.pids = faults, pids
        self.cpulimits = CpuLimits(getattr(cfg, "prefix", ""),
                                   getattr(cfg, "state_dir", None))
        self.workers = {}          # pod uid -> Worker
        self.images = Store(cfg, faults)   # every node's images
        self.lock = threading.Lock()
        self.node_index = {}       # node name -> i
        self.wake = threading.Event()
        # each node's CNI runtime (net.d, host-local pool, plugins) and its
        # network readiness
        self.cni = CniRuntime(cfg.state_dir, cfg.prefix, cfg.nodes,
                              float(getattr(cfg, "cni_timeout", 10.0)))
        self.nodenet = NodeNetworks(self)
        faults.on_cni = self.nodenet.fault_changed
        store.subscribers.append(self._on_change)

    def node_arch(self, name):
        """The node's kubernetes.io/arch: --node-arch, else this machine's
        (an arm64 node on an amd64 host runs its containers under
        qemu-user)."""
        return (getattr(self.cfg, "node_arch", None) or {}).get(
            name) or host_arch()

    def node_name(self, i):
        return "node-%d" % i

    def register_nodes(self):
        """Create the Node objects (Ready)."""
        for i in range(1, self.cfg.nodes + 1):
            name = self.node_name(i)
            labels = {"topology.kubernetes.io/zone": "sim-1" + chr(
                ord("a") + (i - 1) % self.cfg.zones)}
            labels.update(self.cfg.labels.get(name, {}))
            self.register_node(i, name, self.node_arch(name), labels,
                               self.cfg.taints.get(name))
        self.cni.setup()

    def register_node(self, i, name, arch, labels, taints):
        """Node i's Node object, Ready, named `name`: the labels every node
        has, then `labels` over them (zone, instance type, node group...).
        Also what `kube-sim node add` creates (kubesim/nodes.py)."""
        uname = os.uname()
        try:
            with open("/etc/machine-id") as f:
                mid = f.read().strip()
        except OSError:
            mid = rand_token(32).lower()
        self.node_index[name] = i
        t = now_iso()
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": name, "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux", "kubernetes.io/arch": arch,
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": arch,
                "topology.kubernetes.io/region": "sim-1",
                "topology.kubernetes.io/zone": labels.get(
                    "topology.kubernetes.io/zone", "sim-1a"),
                "node.kubernetes.io/instance-type": "sim.large"},
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach":
                "true"}},
            "spec": {"podCIDR": pod_cidrs(i)[0],
                     "podCIDRs": pod_cidrs(i),
                     "providerID": "kube-sim://%s" % name},
            "status": {
                "capacity": dict(DEFAULT_ALLOCATABLE,
                                 **{"ephemeral-storage": "50Gi"}),
                "allocatable": dict(DEFAULT_ALLOCATABLE,
                                    **{"ephemeral-storage": "50Gi"}),
                "conditions": [
                    _ncond("MemoryPressure", "False",
                           "KubeletHasSufficientMemory",
                           "kubelet has sufficient memory available", t),
                    _ncond("DiskPressure", "False",
                           "KubeletHasNoDiskPressure",
                           "kubelet has no disk pressure", t),
                    _ncond("PIDPressure", "False",
                           "KubeletHasSufficientPID",
                           "kubelet has sufficient PID available", t),
                    _ncond("Ready", "True", "KubeletReady",
                           "kubelet is posting ready status", t)],
                "addresses": [{"type": "InternalIP", "address": a}
                              for a in node_ips(i)] + [
                                  {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "machineID": mid, "systemUUID": "%s-%04d" % (
                        mid[:8], i), "bootID": str(uuid.uuid4()),
                    "kernelVersion": uname.release,
                    "osImage": _os_image(),
                    "containerRuntimeVersion": RUNTIME,
                    "kubeletVersion": KUBELET_VERSION,
                    "kubeProxyVersion": "",
                    "operatingSystem": "linux", "architecture": arch},
                "images": []}}
        node["metadata"]["labels"].update(labels)
        if taints:
            node["spec"]["taints"] = taints
        self.store.create("nodes", node)

    def _on_change(self, typ, res, obj, old):
        if res == "pods" and obj["spec"].get("nodeName"):
            self.wake.set()

    def start(self):
        threading.Thread(target=self.loop, name="kubelets",
                         daemon=True).start()

    def loop(self):
        last_hb = time.time()
        while True:
            self.wake.wait(0.5)
            self.wake.clear()
            try:
                self.sync()
                if time.time() - last_hb > 40:
                    last_hb = time.time()
                    self.heartbeat()
            except Exception:
                traceback.print_exc(file=sys.stderr)

    def heartbeat(self):
        for name, i in list(self.node_index.items()):
            if self.faults.node_down(name):
                continue

            def hb(n):
                for c in n["status"]["conditions"]:
                    c["lastHeartbeatTime"] = now_iso()
            self.store.mutate("nodes", "", name, hb)

    def sync(self):
        # read-only refs: only a new worker gets (a copy of) its pod
        pods = [p for p in self.store.list_refs("pods")
                if p["spec"].get("nodeName") in self.node_index]
        for p in pods:
            uid = p["metadata"]["uid"]
            node = p["spec"]["nodeName"]
            if self.faults.node_down(node):
                continue
            with self.lock:
                w = self.workers.get(uid)
                if w is None:
                    if terminal(p) and not p["metadata"].get(
                            "deletionTimestamp"):
                        continue
                    i = self.node_index.get(node)
                    if i is None:   # removed meanwhile (kubesim/nodes.py)
                        continue
                    w = Worker(self, dcopy(p), i)
                    self.workers[uid] = w
                    if p["metadata"].get("deletionTimestamp"):
                        w.deleting.set()
                    threading.Thread(target=w.run, daemon=True,
                                     name="pod-" + p["metadata"]["name"]
                                     ).start()
            if p["metadata"].get("deletionTimestamp"):
                w.deleting.set()
        # pods removed from the API without us (force deletion): stop them
        live = {p["metadata"]["uid"] for p in pods}
        with self.lock:
            gone = [w for uid, w in self.workers.items() if uid not in live]
        for w in gone:
            w.deleting.set()

    def log_source(self, pod, cname, previous):
        """A LogSource, or an error text for a 400 answer."""
        uid = pod["metadata"]["uid"]
        w = self.workers.get(uid)
        cs = {c["name"]: c for c in (pod["status"].get("containerStatuses")
                                     or []) + (pod["status"].get(
                                         "initContainerStatuses") or [])
              }.get(cname) or {}
        n = cs.get("restartCount", 0)
        if previous:
            n -= 1
            if n < 0 or "terminated" not in (cs.get("lastState") or {}):
                return 'previous terminated container "%s" in pod "%s" not ' \
                    'found' % (cname, pod["metadata"]["name"])
        path = os.path.join(self.cfg.state_dir, "pods", uid, "logs",
                            "%s.%d.log" % (cname, n))
        if not os.path.exists(path):
            reason = ((cs.get("state") or {}).get("waiting") or {}).get(
                "reason", "ContainerCreating")
            return 'container "%s" in pod "%s" is waiting to start: %s' % (
                cname, pod["metadata"]["name"], reason)

        def alive():
            c = w.containers.get(cname) or w.inits.get(cname) if w else None
            return bool(c and c.proc and c.proc.poll() is None and
                        c.restarts == n) or bool(c and c.readers_alive())
        return LogSource(path, alive)


def _ncond(t, s, reason, msg, ts):
    return {"type": t, "status": s, "lastHeartbeatTime": ts,
            "lastTransitionTime": ts, "reason": reason, "message": msg}


def terminal(p):
    return (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")
