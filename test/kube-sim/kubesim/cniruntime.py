# SPDX-License-Identifier: Apache-2.0
"""cniruntime - the container runtime's side of CNI (spec 1.0), our own code.

Owns: each node's CNI configuration directory and IPAM state under the state
dir (DIR/cni/node-<i>/net.d/10-kube-sim.conflist, DIR/cni/node-<i>/ipam = the
host-local dataDir, DIR/cni/node-<i>/cache = the results of ADD, kept for
DEL as a runtime keeps them), the conflist kube-sim writes (Debian's
containernetworking-plugins: bridge on the node's existing pod bridge with
host-local IPAM over the node's pod CIDRs, one range per cluster family, then
portmap; containerd's own example chain), the faults that rewrite it
(cni-ipam-size: a short host-local range; cni-plugin-fail / cni-add-hang: a
plugin of ours, kubesim/cni-fault-plugin, first in the chain; cni-conf-
missing / cni-conf-broken: no conflist / an unparsable one), and running the
plugins as a runtime does: CNI_COMMAND ADD (each plugin of the list in order,
prevResult chained), DEL (in reverse order, with the cached result as
prevResult), CHECK, with CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_PATH,
CNI_ARGS (the K8S_POD_* keys containerd passes), the network configuration on
stdin, a timeout (the plugin's process group is killed), the result or the
error JSON ({code, msg, details}) parsed. A node's plugins run in the node's
network namespace (nsenter --net), which is the "host" namespace of that
node's runtime. The loopback interface of a pod is set up by the loopback
plugin, a network of its own, as containerd does.
Knows nothing of the Kubernetes API.
"""
import json
import os
import shutil
import signal
import subprocess
import threading

from . import net

CONF_NAME = "10-kube-sim.conflist"
NET_NAME = "kube-sim"
FAULT_PLUGIN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "cni-fault-plugin")
SYSTEM_CNI_PATH = ["/usr/lib/cni", "/opt/cni/bin"]
HANG_TYPE = "kube-sim-hang"
LOOPBACK = {"cniVersion": "1.0.0", "name": "cni-loopback",
            "plugins": [{"type": "loopback"}]}
# what containerd's go-cni says while it has no usable network config
NOT_INITIALIZED = "cni plugin not initialized"


class CniError(RuntimeError):
    """A plugin failed: its type, the command and its error message."""

    def __init__(self, ptype, cmd, msg, code=None, timeout=False):
        RuntimeError.__init__(self, 'plugin type="%s" failed (%s): %s' % (
            ptype, cmd.lower(), msg))
        self.ptype, self.cmd, self.msg, self.code = ptype, cmd, msg, code
        self.timeout = timeout


class NotInitialized(RuntimeError):
    """The node's net.d holds no usable network configuration."""


def plugin_msg(p, out, err):
    """The message of a failed plugin run, from its error JSON when it
    printed one (msg; details), else from what it wrote."""
    try:
        e = json.loads(out)
        m = e.get("msg") or ""
        if e.get("details"):
            m += "; " + e["details"]
        return m or "exit status %d" % p.returncode, e.get("code")
    except (ValueError, AttributeError):
        text = (err or out or "").strip()
        return text or "exit status %d" % p.returncode, None


class CniRuntime:
    def __init__(self, state_dir, prefix, nnodes, timeout=10.0):
        self.root = os.path.join(state_dir, "cni")
        self.bindir = os.path.join(self.root, "bin")
        self.prefix = prefix
        self.nnodes = nnodes
        self.timeout = timeout
        self.cni_path = [self.bindir] + SYSTEM_CNI_PATH
        self.lock = threading.Lock()

    # ------------------------------------------------------------ layout
    def node_dir(self, i):
        return os.path.join(self.root, "node-%d" % i)

    def confdir(self, i):
        return os.path.join(self.node_dir(i), "net.d")

    def ipam_dir(self, i):
        return os.path.join(self.node_dir(i), "ipam")

    def setup(self):
        """The plugin directory of our fault plugin, each node's net.d
        (the normal conflist), ipam and cache directories."""
        os.makedirs(self.bindir, exist_ok=True)
        self.link_plugin(HANG_TYPE)
        for i in range(1, self.nnodes + 1):
            self.setup_node(i)

    def setup_node(self, i):
        """Node i's net.d (the normal conflist), ipam and cache
        directories (also for a node added at runtime)."""
        for sub in ("net.d", "ipam", "cache"):
            os.makedirs(os.path.join(self.node_dir(i), sub), exist_ok=True)
        self.write_conf(i, [])

    def remove_node(self, i):
        """A removed node's directories, once its networks are DELeted."""
        shutil.rmtree(self.node_dir(i), ignore_errors=True)

    def link_plugin(self, ptype):
        """Our fault plugin under the plugin type name a fault gives it."""
        p = os.path.join(self.bindir, ptype)
        with self.lock:
            if not os.path.lexists(p):
                os.symlink(FAULT_PLUGIN, p)

    def conflist(self, i, rules):
        """The conflist of node i under the CNI faults `rules`."""
        p = self.prefix
        pfx, base, plen = net._v4_block(i)
        size = (1 << (32 - plen)) - 3   # less network, gateway, broadcast
        for r in rules:
            if r["kind"] == "cni-ipam-size":
                size = min(size, r["size"])
        ranges = []
        for f in net.FAMILIES:
            if f == "IPv4":
                ranges.append([{"subnet": "%s.%d/%d" % (pfx, base, plen),
                                "rangeStart": "%s.%d" % (pfx, base + 2),
                                "rangeEnd": "%s.%d" % (pfx, base + 1 + size),
                                "gateway": net.pod_gw(i)}])
            else:
                v6 = "2001:2:0:%x::" % (0x200 + i)
                ranges.append([{"subnet": v6 + "/64", "rangeStart": v6 + "2",
                                "rangeEnd": v6 + "%x" % (1 + size),
                                "gateway": net.pod_gw6(i)}])
        plugins = [{"type": "bridge", "bridge": p + "br",
                    "isDefaultGateway": True, "hairpinMode": True,
                    "ipMasq": False,
                    "ipam": {"type": "host-local", "dataDir":
                             self.ipam_dir(i), "ranges": ranges}},
                   {"type": "portmap", "capabilities": {"portMappings": True}}]
        for r in rules:
            if r["kind"] == "cni-plugin-fail":
                plugins.insert(0, {"type": r["type"],
                                   "kubeSimFail": r["msg"]})
            elif r["kind"] == "cni-add-hang":
                plugins.insert(0, {"type": HANG_TYPE, "kubeSimHang": True})
        return {"cniVersion": "1.0.0", "name": NET_NAME, "plugins": plugins}

    def write_conf(self, i, rules):
        """Write node i's net.d as the faults `rules` (the node's CNI faults,
        faults.py) make it: missing, broken or a conflist."""
        d = self.confdir(i)
        path = os.path.join(d, CONF_NAME)
        kinds = {r["kind"] for r in rules}
        for r in rules:
            if r["kind"] == "cni-plugin-fail":
                self.link_plugin(r["type"])
        if "cni-conf-missing" in kinds:
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            return
        if "cni-conf-broken" in kinds:
            # half of a conflist, as an interrupted upgrade leaves it
            text = json.dumps(self.conflist(i, rules), indent=1)
            text = text[:len(text) // 2]
        else:
            text = json.dumps(self.conflist(i, rules), indent=1) + "\n"
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.rename(path + ".tmp", path)

    def load(self, i):
        """The network configuration list node i's runtime uses: the first
        file of net.d by name (.conflist, .conf, .json), as go-cni picks
        it. Raises NotInitialized when there is none or it does not parse."""
        d = self.confdir(i)
        try:
            files = sorted(f for f in os.listdir(d)
                           if f.endswith((".conflist", ".conf", ".json")))
        except OSError:
            files = []
        if not files:
            raise NotInitialized("no network config found in %s: %s" % (
                d, NOT_INITIALIZED))
        try:
            with open(os.path.join(d, files[0])) as f:
                c = json.load(f)
            if "plugins" not in c:   # a single .conf: a list of one
                c = {"cniVersion": c.get("cniVersion"), "name": c.get("name"),
                     "plugins": [c]}
            if not c.get("name") or not c["plugins"] or not all(
                    isinstance(p, dict) and p.get("type")
                    for p in c["plugins"]):
                raise ValueError("no name or plugin type")
        except (OSError, ValueError, TypeError) as e:
            raise NotInitialized("cni config load failed: %s: %s" % (
                e, NOT_INITIALIZED))
        return c

    def ready(self, i):
        """(True, "") when node i's network is ready, else (False, why)."""
        try:
            self.load(i)
            return True, ""
        except NotInitialized as e:
            return False, str(e)

    # ------------------------------------------------------------ running
    def _find(self, ptype):
        for d in self.cni_path:
            p = os.path.join(d, ptype)
            if os.access(p, os.X_OK):
                return p
        return None

    def exec_plugin(self, i, conf, cmd, cid, netns, ifname, args):
        """Run one plugin; returns its parsed stdout (None when empty)."""
        ptype = conf["type"]
        path = self._find(ptype)
        if path is None:
            raise CniError(ptype, cmd, 'failed to find plugin "%s" in path '
                           '[%s]' % (ptype, " ".join(self.cni_path)))
        env = {"CNI_COMMAND": cmd, "CNI_CONTAINERID": cid,
               "CNI_NETNS": netns, "CNI_IFNAME": ifname,
               "CNI_PATH": ":".join(self.cni_path), "CNI_ARGS": args,
               "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
        argv = [path]
        if i:  # the node's namespace is the host namespace of its runtime
            argv = ["nsenter", "--net=/run/netns/%s" % self._node_ns(i), path]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, text=True, start_new_session=True)
        try:
            out, err = p.communicate(json.dumps(conf), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.communicate()
            raise CniError(ptype, cmd, "signal: killed (no answer within "
                           "%gs)" % self.timeout, timeout=True)
        if p.returncode != 0:
            msg, code = plugin_msg(p, out, err)
            raise CniError(ptype, cmd, msg, code)
        if not out.strip():
            return None
        try:
            return json.loads(out)
        except ValueError:
            raise CniError(ptype, cmd, "decoding version from network config:"
                           " %s" % out.strip()[:200])

    def _node_ns(self, i):
        return "%sn%d" % (self.prefix, i)

    def _plugin_conf(self, lst, plugin, prev, runtime_config):
        c = dict(plugin, cniVersion=lst.get("cniVersion") or "1.0.0",
                 name=lst["name"])
        caps = plugin.get("capabilities") or {}
        rc = {k: v for k, v in runtime_config.items() if caps.get(k)}
        if rc:
            c["runtimeConfig"] = rc
        if prev is not None:
            c["prevResult"] = prev
        return c

    def run_list(self, i, lst, cmd, cid, netns, ifname, args, prev=None):
        """ADD/CHECK: the plugins in order; DEL: in reverse. Returns the
        last ADD result."""
        rc = {"portMappings": []}
        plugins = lst["plugins"]
        if cmd == "DEL":
            plugins = list(reversed(plugins))
        result = prev
        for pl in plugins:
            r = self.exec_plugin(i, self._plugin_conf(lst, pl, result, rc),
                                 cmd, cid, netns, ifname, args)
            if cmd == "ADD":
                result = r
        return result

    def _cache(self, i, cid, ifname):
        return os.path.join(self.node_dir(i), "cache", "%s-%s-%s" % (
            NET_NAME, cid, ifname))

    def add(self, i, cid, netns, pod, ifname="eth0"):
        """Set up the pod's network: loopback, then node i's conflist.
        Returns the conflist's result. Raises NotInitialized or CniError
        (after a DEL, as containerd tears a failed sandbox's network down)."""
        lst = self.load(i)
        args = pod_args(pod, cid)
        # the cache is written before the ADD: a DEL after a crash, a
        # timeout or a failure finds the config to run
        with open(self._cache(i, cid, ifname), "w") as f:
            json.dump({"kind": "cniCacheV1", "containerId": cid,
                       "ifName": ifname, "networkName": lst["name"],
                       "netns": netns, "cniArgs": args, "config": lst}, f)
        try:
            self.run_list(0, LOOPBACK, "ADD", cid, netns, "lo", args)
            res = self.run_list(i, lst, "ADD", cid, netns, ifname, args)
        except CniError:
            self.delete(i, cid, netns, ifname)
            raise
        with open(self._cache(i, cid, ifname), "w") as f:
            json.dump({"kind": "cniCacheV1", "containerId": cid,
                       "ifName": ifname, "networkName": lst["name"],
                       "netns": netns, "cniArgs": args, "config": lst,
                       "result": res}, f)
        return res

    def check(self, i, cid, ifname="eth0"):
        """CHECK with the cached result as prevResult."""
        with open(self._cache(i, cid, ifname)) as f:
            c = json.load(f)
        self.run_list(i, c["config"], "CHECK", cid, c["netns"], ifname,
                      c["cniArgs"], c.get("result"))

    def delete(self, i, cid, netns=None, ifname="eth0"):
        """DEL with the configuration and result cached at ADD (the current
        net.d may be missing or broken by a fault: the addresses still go
        back to the pool). Raises CniError."""
        path = self._cache(i, cid, ifname)
        try:
            with open(path) as f:
                c = json.load(f)
        except (OSError, ValueError):
            return
        netns = netns if netns is not None else c["netns"]
        if not os.path.exists(netns):
            netns = ""   # gone: plugins clean up what is outside it
        self.run_list(i, c["config"], "DEL", cid, netns, ifname,
                      c["cniArgs"], c.get("result"))
        if netns:
            self.run_list(0, LOOPBACK, "DEL", cid, netns, "lo", c["cniArgs"])
        os.unlink(path)

    def cached(self):
        """(node index, container id, ifname) of every network not DELeted
        yet."""
        out = []
        # every node directory: those of `up` and those added at runtime
        try:
            idx = sorted(int(n[5:]) for n in os.listdir(self.root)
                         if n.startswith("node-") and n[5:].isdigit())
        except OSError:
            idx = []
        for i in idx:
            d = os.path.join(self.node_dir(i), "cache")
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for n in names:
                rest = n[len(NET_NAME) + 1:]
                cid, _, ifname = rest.rpartition("-")
                if n.startswith(NET_NAME + "-") and cid:
                    out.append((i, cid, ifname))
        return out


def pod_args(pod, cid):
    md = pod["metadata"]
    return ("IgnoreUnknown=1;K8S_POD_NAMESPACE=%s;K8S_POD_NAME=%s;"
            "K8S_POD_INFRA_CONTAINER_ID=%s;K8S_POD_UID=%s" % (
                md["namespace"], md["name"], cid, md["uid"]))


def result_ips(res, netns):
    """The pod's addresses from a CNI 1.0 result: those on an interface in
    the pod's namespace (or naming no interface), the cluster's primary
    family first."""
    ifs = res.get("interfaces") or []
    ips = []
    for a in res.get("ips") or []:
        k = a.get("interface")
        if k is not None and 0 <= k < len(ifs) and \
                ifs[k].get("sandbox") != netns:
            continue   # an address on the host side (none of the pod's)
        ips.append(a["address"].split("/")[0])
    order = {f: n for n, f in enumerate(net.FAMILIES)}
    return sorted(ips, key=lambda ip: order.get(net.family_of(ip), 9))


def pod_mac(res, netns):
    """The MAC of the pod's interface in the result."""
    for itf in res.get("interfaces") or []:
        if itf.get("sandbox") == netns and itf.get("mac"):
            return itf["mac"]
    return None


def teardown(state_dir, nnodes, prefix, workers=4):
    """kube-sim down: DEL every network still cached (before the namespaces
    go), a few at once. Returns how many were DELeted."""
    rt = CniRuntime(state_dir, prefix, nnodes, timeout=10)
    todo = rt.cached()
    done = []
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                i, cid, ifname = todo.pop()
            try:
                rt.delete(i, cid, None, ifname)
                done.append(cid)
            except (CniError, OSError):
                pass
    ts = [threading.Thread(target=worker) for _ in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return len(done)
