# SPDX-License-Identifier: Apache-2.0
"""dns - the cluster DNS (`up --dns`): Debian's dnsmasq in the underlay
namespace, behind the Service kube-system/kube-dns, as CoreDNS is behind it
on a real cluster.

Owns: the kube-dns Service (seeded), dnsmasq's process and its hosts file
(one line per Service address, `<svc>.<ns>.svc.cluster.local`; a headless
Service's name gives its ready pods' addresses), reloaded with SIGHUP when
Services or their endpoints change; the resolv.conf pods get; and the
`dns-drop` fault's nftables table in a node's namespace. The Service's
DNAT to dnsmasq is workloads.py's (like default/kubernetes' to the API
server), the resolv.conf mount pod.py's.
"""
import os
import signal
import socket
import subprocess
import time

from . import net

DOMAIN = "cluster.local"


def server_ips():
    """dnsmasq's addresses on the underlay bridge (the API server has .1)."""
    return [net._ip(f, "198.19.0.2", "2001:2:0:100::2") for f in net.FAMILIES]


def service_ips():
    """kube-dns's ClusterIPs: the 10th of the Service range, as kubeadm's;
    the allocator starts there (IPv4) or above (IPv6), and this Service is
    made first."""
    return [net._ip(f, "198.19.240.10", "2001:2:0:f00::a")
            for f in net.FAMILIES]


def seed_service(st):
    ips = service_ips()
    st.create("services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {
            "name": "kube-dns", "namespace": "kube-system", "labels": {
                "k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}},
        "spec": {"type": "ClusterIP", "clusterIP": ips[0], "clusterIPs": ips,
                 "ipFamilies": list(net.FAMILIES), "ipFamilyPolicy":
                 "RequireDualStack" if len(ips) > 1 else "SingleStack",
                 "ports": [{"name": "dns", "port": 53, "protocol": "UDP",
                            "targetPort": 53},
                           {"name": "dns-tcp", "port": 53, "protocol": "TCP",
                            "targetPort": 53}],
                 "sessionAffinity": "None"},
        "status": {"loadBalancer": {}}})


def resolv_conf(namespace):
    """A ClusterFirst pod's /etc/resolv.conf, as the kubelet writes it."""
    return "search %s.svc.%s svc.%s %s\nnameserver %s\noptions ndots:5\n" % (
        namespace, DOMAIN, DOMAIN, DOMAIN, service_ips()[0])


def pod_resolv(cfg, pod, pod_dir):
    """The resolv.conf file to mount at a container's /etc/resolv.conf
    (written in pod_dir), or None: no cluster DNS, or a pod whose dnsPolicy
    keeps the node's (Default, None; hostNetwork unless
    ClusterFirstWithHostNet)."""
    spec = pod["spec"]
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    if not getattr(cfg, "dns", False) or policy in ("Default", "None") or \
            spec.get("hostNetwork") and policy != "ClusterFirstWithHostNet":
        return None
    path = os.path.join(pod_dir, "resolv.conf")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(resolv_conf(pod["metadata"].get("namespace", "default")))
        os.chmod(path, 0o644)
    return path


def hosts_text(records):
    """records: [(fqdn, [ip, ...]), ...] -> a hosts file, sorted."""
    lines = sorted("%s %s" % (ip, name) for name, ips in records
                   for ip in ips if ip and ip != "None")
    return "".join(x + "\n" for x in lines)


class Server:
    """dnsmasq for one cluster; files in STATE/dns."""

    def __init__(self, state_dir, network, pids):
        self.dir = os.path.join(state_dir, "dns")
        self.hosts = os.path.join(self.dir, "hosts")
        self.net, self.pids = network, pids
        self.proc = None
        self.text = None

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)
        self.write("")
        br = self.net.prefix + "ub"
        net.run(["ip", "-n", self.net.ul, "-batch", "-"], stdin="".join(
            "addr add %s/%s dev %s%s\n" % (ip, "64" if ":" in ip else "20",
                                           br, " nodad" if ":" in ip else "")
            for ip in server_ips()))
        argv = ["ip", "netns", "exec", self.net.ul, "dnsmasq",
                "--keep-in-foreground", "--conf-file=/dev/null",
                "--no-resolv", "--no-hosts", "--no-poll",
                "--addn-hosts=" + self.hosts, "--local=/%s/" % DOMAIN,
                "--bind-interfaces", "--max-tcp-connections=200",
                "--user=root", "--group=root",
                "--pid-file=", "--log-facility=-"] + [
                    "--listen-address=" + ip for ip in server_ips()]
        log = open(os.path.join(self.dir, "dnsmasq.log"), "ab")
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log,
                                         start_new_session=True)
        finally:
            log.close()
        self.pids.add(self.proc.pid, "dnsmasq")
        # answering: dnsmasq has its SIGHUP handler (a SIGHUP to `ip`
        # before it execs dnsmasq, or to dnsmasq before the handler is set,
        # would end it)
        if not net.in_netns(self.net.ul, self._answers, 10.0):
            raise net.NetError("dnsmasq did not answer in 10 s (see %s)" %
                               os.path.join(self.dir, "dnsmasq.log"))

    def _answers(self, bound):
        ip = server_ips()[0]
        q = b"\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00" \
            b"\x05ready\x00\x00\x01\x00\x01"
        end = time.time() + bound
        with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET,
                           socket.SOCK_DGRAM) as s:
            s.settimeout(0.1)
            while time.time() < end and self.proc.poll() is None:
                try:
                    s.sendto(q, (ip, 53))
                    if s.recv(512)[:2] == q[:2]:
                        return True
                except OSError:
                    time.sleep(0.05)
        return False

    @staticmethod
    def server_ips():
        return server_ips()

    def write(self, text):
        tmp = self.hosts + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, self.hosts)
        self.text = text

    def set_records(self, records):
        """Rewrites the hosts file when records changed and has dnsmasq
        read it again (SIGHUP)."""
        text = hosts_text(records)
        if text == self.text:
            return
        self.write(text)
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGHUP)


def drop_table(prefix, pct):
    """nft text of the dns-drop table: pct % of DNS queries (UDP and TCP
    to port 53) forwarded by the node (its pods') or sent by it (host
    network pods) are dropped; replies (from port 53) pass."""
    t = prefix + "dnsdrop"
    rule = "meta l4proto { udp, tcp } th dport 53 numgen random mod 100 " \
        "< %d counter drop" % pct
    return "table inet %s {}\ndelete table inet %s\n" % (t, t) + (
        "table inet %s {\n" % t + "".join(
            "  chain %s { type filter hook %s priority -5; %s; }\n" % (
                h, h, rule) for h in ("forward", "output")) + "}\n"
        if pct else "")


def drop(prefix, node_i, pct):
    """Sets node node_i's dns-drop share to pct % (0: none)."""
    ns = "%sn%d" % (prefix, node_i)
    p = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                       input=drop_table(prefix, pct), capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise net.NetError("dns-drop on %s: %s" % (ns, p.stderr.strip()))
