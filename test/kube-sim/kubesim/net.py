# SPDX-License-Identifier: Apache-2.0
"""net - the simulated cluster network, built from network namespaces.

Owns: the underlay (one namespace "<p>ul" holding a bridge "<p>ub"), one
namespace per node ("<p>n<i>", eth0 = 198.19.0.(10+i) on the underlay,
bridge "<p>br" = 198.19.(16+i).1/24 for its pods, routes to every other
node's pod CIDR), the pod namespaces ("<p>p<k>"; their eth0, address and
routes come from the CNI plugins, cniruntime.py; static neighbour entries
are added here), and each node's Service proxy (proxy.py: the nftables
table "<p>svc" that DNATs Service ClusterIPs (198.19.240.0/20) to
endpoints, synced by a thread per node).
What stays here rather than in a CNI plugin: the underlay, the node
namespaces, bridges and host-gw routes (the cluster's node network, not a
pod's CNI job), the neighbour entries and the Service proxy (kube-proxy's).
With --ip-family ipv6 or dual (configure()), the same from 2001:2::/48:
underlay 2001:2:0:100::/64 (node i = ::(10+i) in hex), pod CIDR of node i
2001:2:0:(200+i hex)::/64 (gateway ::1, a pod's host number as in IPv4),
Services 2001:2:0:f00::/108; the table is then "inet" (ip and ip6 rules).
IPv6 addresses are added without DAD and no interface takes router
advertisements, so an address works the moment it is added.
The API server's in-cluster address is on the underlay bridge: 198.19.0.1
(2001:2:0:100::1), port 6443 (api_ips(); the daemon listens there through a
socket made in the underlay namespace), with routes back to every node's pod
CIDR, so pods reach it through the default/kubernetes Service's ClusterIP.
<p> is "ks<id>-". Nothing is created in the root namespace; every name is
recorded in the state dir (record_name) before it is created, so `down`
can delete exactly those.
Knows nothing of the Kubernetes API.
"""
import ctypes
import os
import subprocess
import threading
import time

from . import proxy

CLONE_NEWNET = 0x40000000
UNDERLAY_NET = "198.19.0.0/20"
SERVICE_NET = "198.19.240.0/20"
# where IPv4 ClusterIPs go once the /20 is full (admission.py SERVICE_EXTRA)
SERVICE_NET_EXTRA = "198.18.192.0/18"
UNDERLAY_NET6 = "2001:2:0:100::/64"
SERVICE_NET6 = "2001:2:0:f00::/108"
SERVICE_NETS = {"IPv4": SERVICE_NET, "IPv6": SERVICE_NET6}
MAX_NODES = 500
API_PORT = 6443
IP_FAMILY_MODES = {"ipv4": ["IPv4"], "ipv6": ["IPv6"],
                   "dual": ["IPv4", "IPv6"]}
# the cluster's families, the first one primary (podIP, node address, the
# default of a SingleStack Service); set once by configure() at start
FAMILIES = ["IPv4"]


def configure(mode):
    FAMILIES[:] = IP_FAMILY_MODES[mode]


def family_of(ip):
    return "IPv6" if ":" in ip else "IPv4"


def _ip(fam, v4, v6):
    return v4 if fam == "IPv4" else v6


def _v4_block(i):
    """Node i's IPv4 pod block: (first three octets, first host octet,
    prefix length). Nodes 1..223: 198.19.(16+i).0/24; nodes 224..500 (past
    the /24s below the Service range): /25s from 198.18.0.0/16."""
    if i <= 223:
        return "198.19.%d" % (16 + i), 0, 24
    k = i - 224
    return "198.18.%d" % (k >> 1), (k & 1) * 128, 25


def pod_plen(i):
    return _v4_block(i)[2]


def node_ips(i):
    # underlay 198.19.0.0/20: node i = 198.19.0.0 + 10 + i (198.19.0.(10+i)
    # for i <= 245)
    return [_ip(f, "198.19.%d.%d" % ((10 + i) >> 8, (10 + i) & 0xff),
                "2001:2:0:100::%x" % (10 + i)) for f in FAMILIES]


def api_ips():
    """The API server's addresses on the underlay, one per family."""
    return [_ip(f, "198.19.0.1", "2001:2:0:100::1") for f in FAMILIES]


def kube_service_ips():
    """ClusterIPs of default/kubernetes: the first of each Service range."""
    return [_ip(f, "198.19.240.1", "2001:2:0:f00::1") for f in FAMILIES]


def node_ip(i):
    return node_ips(i)[0]


def pod_cidrs(i):
    pfx, base, plen = _v4_block(i)
    return [_ip(f, "%s.%d/%d" % (pfx, base, plen),
                "2001:2:0:%x::/64" % (0x200 + i)) for f in FAMILIES]


def pod_cidr(i):
    return pod_cidrs(i)[0]


def pod_gw(i):
    pfx, base, _ = _v4_block(i)
    return "%s.%d" % (pfx, base + 1)


def pod_gw6(i):
    return "2001:2:0:%x::1" % (0x200 + i)


def bridge_mac(i):
    """The fixed MAC of node i's pod bridge (the pods' gateway)."""
    return "02:00:c6:13:%02x:%02x" % (i >> 8, i & 0xff)


class NetError(RuntimeError):
    pass


def run(argv, stdin=None, check=True):
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise NetError("%s: %s" % (" ".join(argv[:6]), p.stderr.strip()))
    return p


_libc = None


def _setns(fd):
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def in_netns(name, fn, *args):
    """Run fn(*args) on a fresh thread that has joined netns `name` (sockets
    created there stay in that namespace). Returns fn's result or raises."""
    box = {}

    def body():
        try:
            fd = os.open("/run/netns/%s" % name, os.O_RDONLY)
            try:
                _setns(fd)
            finally:
                os.close(fd)
            box["r"] = fn(*args)
        except BaseException as e:  # handed to the caller
            box["e"] = e
    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]
    return box.get("r")


def sysctl_in(ns, key, value):
    def w():
        with open("/proc/sys/" + key.replace(".", "/"), "w") as f:
            f.write(str(value))
    in_netns(ns, w)


def ipv6_sysctls(ns):
    """No duplicate address detection, no router advertisements: set on
    "default" before the namespace's interfaces exist, and on "all"."""
    for scope in ("all", "default"):
        sysctl_in(ns, "net.ipv6.conf.%s.accept_dad" % scope, 0)
        sysctl_in(ns, "net.ipv6.conf.%s.accept_ra" % scope, 0)
        sysctl_in(ns, "net.ipv6.conf.%s.dad_transmits" % scope, 0)
        sysctl_in(ns, "net.ipv6.conf.%s.ndisc_notify" % scope, 1)


class Names:
    """Append-only record of every namespace created (state dir file)."""

    def __init__(self, state_dir):
        self.path = os.path.join(state_dir, "netns.list")
        self.lock = threading.Lock()

    def record(self, name):
        # written through to the kernel before the namespace exists, so a
        # `down` after SIGKILL reads it; no fsync: namespaces do not outlive
        # the machine, and an fsync per pod under this lock made every pod
        # start wait for the disk (the busiest line of a 100-node sweep)
        with self.lock:
            with open(self.path, "a") as f:
                f.write(name + "\n")

    def all(self):
        try:
            with open(self.path) as f:
                return [ln.strip() for ln in f if ln.strip()]
        except OSError:
            return []


class Network:
    def __init__(self, state_dir, prefix, nnodes):
        if nnodes > MAX_NODES:
            raise NetError("at most %d nodes" % MAX_NODES)
        self.prefix = prefix
        self.names = Names(state_dir)
        self.nnodes = nnodes
        self.ul = prefix + "ul"
        self.lock = threading.Lock()
        self.pod_seq = 0
        # the live nodes' indices: 1..nnodes from `up`, then as `kube-sim
        # node add/remove` change them (an index is never used twice)
        self.indices = list(range(1, nnodes + 1))
        self.top = nnodes      # the highest index used
        self.added = {}        # index -> name of a node added at runtime
        self.svc_state = None  # the Services last set (proxy.desired())
        self.proxies = {}      # index -> its proxy.NodeProxy
        # node name -> seconds its Service changes lag (the proxy-delay
        # fault, faults.py; main wires it)
        self.proxy_delay_of = lambda name: 0.0

    def node_name(self, i):
        """Node i's name: node-<i> from `up`, else the one it was added as."""
        return self.added.get(i, "node-%d" % i)

    def node_ns(self, i):
        return "%sn%d" % (self.prefix, i)

    def bridge(self):
        return self.prefix + "br"

    def build(self):
        """Create the underlay and every node namespace."""
        p = self.prefix
        allns = [self.ul] + [self.node_ns(i) for i in range(1, self.nnodes + 1)]
        for n in allns:
            self.names.record(n)
        run(["ip", "-batch", "-"], stdin="".join("netns add %s\n" % n
                                                 for n in allns))
        cmds = ["link set lo up", "link add %sub type bridge" % p,
                "link set %sub up" % p]
        for i in range(1, self.nnodes + 1):
            cmds.append("link add %su%d type veth peer name eth0 netns %s" %
                        (p, i, self.node_ns(i)))
            cmds.append("link set %su%d master %sub up" % (p, i, p))
        # the API server's in-cluster address, and the way back to pods
        for ip in api_ips():
            cmds.append("addr add %s/%s dev %sub%s" % (
                ip, "64" if ":" in ip else "20", p,
                " nodad" if ":" in ip else ""))
        for i in range(1, self.nnodes + 1):
            for cidr, via in zip(pod_cidrs(i), node_ips(i)):
                cmds.append("route add %s via %s" % (cidr, via))
        if "IPv6" in FAMILIES:
            ipv6_sysctls(self.ul)
        run(["ip", "-n", self.ul, "-batch", "-"], stdin="\n".join(cmds) + "\n")
        errs = []

        def node(i):
            try:
                self._node_setup(i, self.indices)
            except (NetError, OSError) as e:
                errs.append(e)
        # the ip commands wait on the kernel more than on the CPU: run a few
        # nodes at once
        todo = list(self.indices)
        lock = threading.Lock()

        def worker():
            while True:
                with lock:
                    if not todo:
                        return
                    i = todo.pop()
                node(i)
        ts = [threading.Thread(target=worker) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errs:
            raise errs[0]
        for i in self.indices:
            self._proxy(i)

    def _node_setup(self, i, peers):
        """Node i's namespace inside: eth0 on the underlay, the pod bridge, routes to
        the pod CIDRs of `peers` (node indices), forwarding."""
        ns = self.node_ns(i)
        br = self.bridge()
        v4, v6 = "IPv4" in FAMILIES, "IPv6" in FAMILIES
        c = ["link set lo up"]
        if v6:
            c.append("addr add 2001:2:0:100::%x/64 dev eth0 nodad" %
                     (10 + i))
        if v4:
            c.append("addr add %s/20 dev eth0" % node_ip(i))
        c += ["link set eth0 up",
              "link add %s type bridge" % br]
        # a fixed MAC: a bridge otherwise takes its lowest port's, which changes as pods
        # come and go, and nothing tells the pods (IPv4 sends no gratuitous ARP unless
        # arp_notify is set; IPv6 sends no NA): their neighbour entry for the gateway
        # keeps the old MAC, and whatever they route (to another node, to a Service, or
        # replies to a masqueraded client) is lost until it is resolved again, seconds later
        c.append("link set %s address %s" % (br, bridge_mac(i)))
        if v4:
            c.append("addr add %s/%d dev %s" % (pod_gw(i), pod_plen(i),
                                                  br))
        if v6:
            c.append("addr add %s/64 dev %s nodad" % (pod_gw6(i), br))
        c.append("link set %s up" % br)
        if v4:
            c.append("route add %s dev %s" % (SERVICE_NET, br))
            c.append("route add %s dev %s" % (SERVICE_NET_EXTRA, br))
        if v6:
            c.append("route add %s dev %s" % (SERVICE_NET6, br))
        for j in peers:
            if j != i:
                for cidr, via in zip(pod_cidrs(j), node_ips(j)):
                    c.append("route add %s via %s" % (cidr, via))
        if v6:
            ipv6_sysctls(ns)
        run(["ip", "-n", ns, "-batch", "-"], stdin="\n".join(c) + "\n")
        if v4:
            sysctl_in(ns, "net.ipv4.ip_forward", 1)
            # no ICMP redirects: a same-node Service packet leaves by the bridge it came
            # in on (DNAT to a pod there), so the node would tell the client pod to send
            # the ClusterIP straight to the endpoint pod (pods accept redirects), and
            # that pod's traffic to the Service would bypass the DNAT and be lost
            for dev in ("all", br):
                sysctl_in(ns, "net.ipv4.conf.%s.send_redirects" % dev, 0)
        if v6:
            sysctl_in(ns, "net.ipv6.conf.all.forwarding", 1)

    def _routes(self, ns, verb, i):
        """Route (add/del) node i's pod CIDRs via its address, in ns."""
        run(["ip", "-n", ns, "-batch", "-"], stdin="".join(
            "route %s %s via %s\n" % (verb, cidr, via)
            for cidr, via in zip(pod_cidrs(i), node_ips(i))), check=False)

    def add_node(self, name):
        """A node made at runtime (`kube-sim node add`), as build() makes
        each: its namespace, its veth on the underlay, its bridge and routes,
        the routes of the underlay and of every other node to its pods, the
        Services. Returns its index (one more than any used so far)."""
        with self.lock:
            i = self.top + 1
            if i > MAX_NODES:
                raise NetError("at most %d nodes" % MAX_NODES)
            self.top = i
            self.added[i] = name
        p, ns = self.prefix, self.node_ns(i)
        self.names.record(ns)
        run(["ip", "netns", "add", ns])
        run(["ip", "-n", self.ul, "-batch", "-"], stdin=(
            "link add %su%d type veth peer name eth0 netns %s\n"
            "link set %su%d master %sub up\n") % (p, i, ns, p, i, p))
        self._routes(self.ul, "add", i)
        with self.lock:
            peers = list(self.indices)
        self._node_setup(i, peers + [i])
        for j in peers:
            self._routes(self.node_ns(j), "add", i)
        with self.lock:
            self.indices.append(i)
        self._proxy(i)
        return i

    def remove_node(self, i):
        """Undo add_node (or build) for node i once its pods are gone: the
        routes to its pods everywhere, then its namespace by exact name (its
        veth pair goes with it)."""
        with self.lock:
            if i in self.indices:
                self.indices.remove(i)
            peers = list(self.indices)
            px = self.proxies.pop(i, None)
        if px is not None:
            px.close()
        self._routes(self.ul, "del", i)
        for j in peers:
            self._routes(self.node_ns(j), "del", i)
        ns = self.node_ns(i)
        for pid in pids_in_netns(ns):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        run(["ip", "netns", "del", ns], check=False)

    def new_pod_ns(self):
        """Create a pod's network namespace ("<p>p<k>", what a runtime
        makes for a sandbox); its interfaces come from the CNI plugins
        (cniruntime.py)."""
        with self.lock:
            self.pod_seq += 1
            k = self.pod_seq
        ns = "%sp%d" % (self.prefix, k)
        self.names.record(ns)
        run(["ip", "netns", "add", ns])
        if "IPv6" in FAMILIES:
            # before the plugin makes eth0, so its addresses are never
            # tentative (the bridge plugin would wait for DAD)
            ipv6_sysctls(ns)
        return ns

    def pod_neigh(self, node_i, ns, ips, mac):
        """Static neighbour entries both ways once the plugins made the
        pod's interface (kept by hand: the plugins leave neighbours to the
        kernel), as CNIs such as Calico install them: the kernel's neighbour
        table is shared by every namespace and holds 1024 learned entries by
        default (gc_thresh3); with 500 nodes, pods and probes learned more
        and new ARP entries failed ("neighbor table overflow"). A "replace"
        also overwrites the entry a former pod with this address left on
        the node, which a pod that only listens would otherwise be hidden
        behind until it failed (~10 s)."""
        if not mac:
            return
        run(["ip", "-n", self.node_ns(node_i), "-batch", "-"], stdin="".join(
            "neigh replace %s lladdr %s dev %s nud permanent\n" % (
                ip, mac, self.bridge()) for ip in ips))
        run(["ip", "-n", ns, "-batch", "-"], stdin="".join(
            "neigh replace %s lladdr %s dev eth0 nud permanent\n" % (
                pod_gw6(node_i) if ":" in ip else pod_gw(node_i),
                bridge_mac(node_i)) for ip in ips))

    def del_pod_ns(self, ns):
        run(["ip", "netns", "del", ns], check=False)

    def _proxy(self, i):
        """Node i's Service proxy (proxy.py), started with the Services
        last set."""
        tf = "ip" if FAMILIES == ["IPv4"] else "inet"
        name = self.node_name(i)
        px = proxy.NodeProxy(self.node_ns(i), self.prefix + "svc", tf,
                             self.bridge(),
                             lambda: self.proxy_delay_of(name), name)
        with self.lock:
            self.proxies[i] = px
            st = self.svc_state
        if st is not None:
            px.push(st)

    def set_services(self, rules):
        """rules: list of (cluster_ip, proto, port, [(ip, port), ...]).
        Hands them to every node's proxy, which programs its table <p>svc
        (at once, or as late as the node's proxy-delay)."""
        st = proxy.desired(rules)
        now = time.monotonic()
        with self.lock:
            self.svc_state = st
            pxs = list(self.proxies.values())
        for px in pxs:
            px.push(st, now)

def pids_in_netns(name):
    p = run(["ip", "netns", "pids", name], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def teardown(state_dir):
    """Delete every namespace recorded in the state dir (killing what still
    runs inside). Returns the list of names deleted."""
    import signal
    names = Names(state_dir).all()
    gone = []
    existing = set(run(["ip", "netns", "list"], check=False).stdout.split())
    for n in reversed(names):
        if n not in existing:
            continue
        for pid in pids_in_netns(n):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if run(["ip", "netns", "del", n], check=False).returncode == 0:
            gone.append(n)
    return gone
