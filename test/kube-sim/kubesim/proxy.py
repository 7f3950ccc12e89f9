# SPDX-License-Identifier: Apache-2.0
"""proxy - the Service proxy of each node (kube-proxy's nftables mode).

Owns: the per-node nftables table "<p>svc" that DNATs Service ClusterIPs to
endpoints, its layout and its sync. The layout is kube-proxy's: one verdict
map keyed by (ClusterIP . protocol . port) jumps to the Service's own chain
(one DNAT rule, random over the endpoints with numgen), and a set of the
Services without endpoints is rejected; so a packet costs one hash lookup
whatever the number of Services. Each node has its own sync thread: the
first sync (and any after an error) loads the whole table in one
transaction, later ones send only what changed (chains added, flushed and
refilled, map elements added and deleted). A node's sync may lag by a
settable delay (the proxy-delay fault): a change made at t reaches that
node's table at t + delay, and the other nodes at once. Like kube-proxy
(minSyncPeriod, 1 s by default), a node syncs at most once a second: a
change after a quiet second is programmed at once, a burst of changes
(kperf --services creating thousands) in one sync a second.
Knows nothing of the Kubernetes API.
"""
import subprocess
import sys
import threading
import time


MIN_SYNC_S = 1.0


class ProxyError(RuntimeError):
    pass


def _chain(key):
    """The chain of one Service port: its name from (ip, proto, port)."""
    cip, proto, port = key
    return "s_%s_%s_%d" % (cip.replace(".", "_").replace(":", "x"), proto,
                           port)


def _af(cip):
    return "ip6" if ":" in cip else "ip"


def _elem(key):
    cip, proto, port = key
    return "%s . %s . %d" % (cip, proto, port)


def _body(tf, cip, eps):
    """The DNAT statement of a Service port to its endpoints."""
    af = _af(cip)
    nat = "dnat" if tf == "ip" else "dnat " + af
    if len(eps) == 1:
        ip, port = eps[0]
        return "%s to %s:%d" % (nat, "[%s]" % ip if af == "ip6" else ip,
                                port)
    m = ", ".join("%d : %s . %d" % (k, e[0], e[1]) for k, e in enumerate(eps))
    return ("dnat %s addr . port to numgen random mod %d map { %s }" % (
        af, len(eps), m))


def desired(rules):
    """rules: [(cluster_ip, proto, port, [(ip, port), ...])] -> (services:
    {key: eps tuple}, no-endpoint keys: set); key = (ip, proto, port)."""
    svc, noep = {}, set()
    for cip, proto, port, eps in rules:
        key = (cip, proto.lower(), int(port))
        if eps:
            svc[key] = tuple(sorted((ip, int(p)) for ip, p in eps))
        else:
            noep.add(key)
    return svc, noep


def full_text(t, tf, br, svc, noep):
    """The whole table, replaced in one transaction."""
    fams = ["ip"] if tf == "ip" else ["ip", "ip6"]
    addr = {"ip": "ipv4_addr", "ip6": "ipv6_addr"}
    out = ["table %s %s {}" % (tf, t), "delete table %s %s" % (tf, t),
           "table %s %s {" % (tf, t)]
    for f in fams:
        out.append("  map svc_%s { type %s . inet_proto . inet_service : "
                   "verdict; }" % (f, addr[f]))
        out.append("  set noep_%s { type %s . inet_proto . inet_service; }" %
                   (f, addr[f]))
    out.append("  chain services {")
    out += ["    %s daddr . meta l4proto . th dport vmap @svc_%s" % (f, f)
            for f in fams]
    out.append("  }")
    # no endpoints: kube-proxy rejects (TCP reset, else ICMP unreachable)
    out.append("  chain noendpoints {")
    for f in fams:
        m = "%s daddr . meta l4proto . th dport @noep_%s" % (f, f)
        out.append("    %s meta l4proto tcp reject with tcp reset" % m)
        out.append("    %s reject" % m)
    out.append("  }")
    out.append("  chain prerouting { type nat hook prerouting "
               "priority dstnat; jump services; }")
    out.append("  chain output { type nat hook output priority -100; "
               "jump services; }")
    out.append('  chain postrouting { type nat hook postrouting '
               'priority srcnat; ct status dnat oifname "%s" '
               'masquerade; }' % br)
    out.append("  chain filter_forward { type filter hook forward "
               "priority 0; jump noendpoints; }")
    out.append("  chain filter_output { type filter hook output "
               "priority 0; jump noendpoints; }")
    # the Services' chains and elements inside the one table block: nft
    # reads it much faster than one command each (10k: ~3x)
    for key in sorted(svc):
        out.append("  chain %s { meta l4proto %s %s; }" % (
            _chain(key), key[1], _body(tf, key[0], svc[key])))
    for f in fams:
        el = [("%s : jump %s" % (_elem(k), _chain(k))) for k in sorted(svc)
              if _af(k[0]) == f]
        if el:
            out.append("  map svc_%s { type %s . inet_proto . inet_service "
                       ": verdict; elements = { %s } }" % (
                           f, addr[f], ",\n    ".join(el)))
        el = [_elem(k) for k in sorted(noep) if _af(k[0]) == f]
        if el:
            out.append("  set noep_%s { type %s . inet_proto . inet_service;"
                       " elements = { %s } }" % (f, addr[f],
                                                 ",\n    ".join(el)))
    out.append("}")
    return "\n".join(out) + "\n"


def delta_text(t, tf, old, new):
    """The commands taking the table from `old` to `new` ((services,
    no-endpoint keys) as desired() gives), or "" when they are the same."""
    osvc, onoep = old
    nsvc, nnoep = new
    out = []
    for key in sorted(set(osvc) - set(nsvc)):
        out.append("delete element %s %s svc_%s { %s }" % (
            tf, t, _af(key[0]), _elem(key)))
        out.append("delete chain %s %s %s" % (tf, t, _chain(key)))
    for key in sorted(onoep - nnoep):
        out.append("delete element %s %s noep_%s { %s }" % (
            tf, t, _af(key[0]), _elem(key)))
    for key in sorted(nsvc):
        eps = nsvc[key]
        if osvc.get(key) == eps:
            continue
        c = _chain(key)
        rule = "add rule %s %s %s meta l4proto %s %s" % (
            tf, t, c, key[1], _body(tf, key[0], eps))
        if key in osvc:
            out += ["flush chain %s %s %s" % (tf, t, c), rule]
        else:
            out += ["add chain %s %s %s" % (tf, t, c), rule,
                    "add element %s %s svc_%s { %s : jump %s }" % (
                        tf, t, _af(key[0]), _elem(key), c)]
    for key in sorted(nnoep - onoep):
        out.append("add element %s %s noep_%s { %s }" % (
            tf, t, _af(key[0]), _elem(key)))
    return "".join(x + "\n" for x in out)


class NodeProxy:
    """One node's sync thread. push() hands it the cluster's Services at a
    moment; it programs the latest state older than the node's delay."""

    def __init__(self, ns, table, tf, bridge, delay_of, name):
        self.ns, self.t, self.tf, self.br = ns, table, tf, bridge
        self.delay_of = delay_of    # () -> seconds this node lags
        self.name = name
        self.cv = threading.Condition()
        self.queue = []             # [(monotonic time, (svc, noep))]
        self.cur = None             # what the table holds (None: unknown)
        self.stop = False
        self.syncs = 0
        self.last_sync_s = 0.0
        self.last_start = -MIN_SYNC_S   # monotonic start of the last sync
        threading.Thread(target=self.loop, daemon=True,
                         name="proxy-" + name).start()

    def push(self, state, at=None):
        with self.cv:
            self.queue.append((time.monotonic() if at is None else at,
                               state))
            self.cv.notify()

    def kick(self):
        with self.cv:
            self.cv.notify()

    def close(self):
        with self.cv:
            self.stop = True
            self.cv.notify()

    def _take(self):
        """Waits for the latest state whose delay has passed; None at stop."""
        with self.cv:
            while not self.stop:
                wait = self.last_start + MIN_SYNC_S - time.monotonic()
                if self.queue and wait > 0:
                    self.cv.wait(wait)
                elif self.queue:
                    due = time.monotonic() - self.delay_of()
                    k = max((i for i, (t, _) in enumerate(self.queue)
                             if t <= due), default=-1)
                    if k >= 0:
                        st = self.queue[k][1]
                        del self.queue[:k + 1]
                        return st
                    self.cv.wait(min(0.5, self.queue[0][0] - due))
                else:
                    self.cv.wait()
            return None

    def loop(self):
        while True:
            st = self._take()
            if st is None:
                return
            t0 = self.last_start = time.monotonic()
            try:
                if self.cur is None:
                    text = full_text(self.t, self.tf, self.br, *st)
                else:
                    text = delta_text(self.t, self.tf, self.cur, st)
                if text:
                    nft(self.ns, text)
                self.cur = st
            except ProxyError as e:
                # the next change loads the whole table again
                self.cur = None
                if not self.stop:
                    print("kube-sim: service rules on %s: %s" % (
                        self.name, e), file=sys.stderr)
                    time.sleep(1)
                    with self.cv:   # again, unless a newer state waits
                        if not self.queue:
                            self.queue.append((0.0, st))
            self.syncs += 1
            self.last_sync_s = time.monotonic() - t0


def nft(ns, text):
    p = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                       input=text, capture_output=True, text=True)
    if p.returncode != 0:
        raise ProxyError("nft: %s" % p.stderr.strip()[:500])
