#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kube-sim's Service proxy (kubesim/proxy.py) without root: the nft text of
a whole table and of a change, and a node's sync thread (first a whole
table, then deltas; at most one sync a second; a proxy-delay makes that
node's sync wait) with nft replaced by a recorder."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import proxy  # noqa: E402

FAILS = []


def check(name, cond, detail=""):
    print("%s: %s%s" % ("ok" if cond else "FAIL", name,
                        (" (%s)" % detail) if detail and not cond else ""))
    if not cond:
        FAILS.append(name)


def texts():
    a = proxy.desired([("198.19.240.20", "TCP", 80, [("198.19.17.2", 5201)]),
                       ("198.19.240.21", "TCP", 80, [("198.19.17.2", 5201),
                                                     ("198.19.18.2", 5201)]),
                       ("198.19.240.22", "UDP", 53, [])])
    full = proxy.full_text("ks1-svc", "ip", "ks1-br", *a)
    check("one verdict map lookup per packet",
          "ip daddr . meta l4proto . th dport vmap @svc_ip" in full)
    check("a chain per Service port",
          "chain s_198_19_240_20_tcp_80 { meta l4proto tcp dnat to "
          "198.19.17.2:5201; }" in full, full)
    check("several endpoints: numgen", "numgen random mod 2 map" in full)
    check("no endpoints: rejected through a set",
          "198.19.240.22 . udp . 53" in full and
          "@noep_ip meta l4proto tcp reject with tcp reset" in full)
    b = proxy.desired([("198.19.240.20", "TCP", 80, [("198.19.17.3", 5201)]),
                       ("198.19.240.22", "UDP", 53, [("198.19.17.3", 53)]),
                       ("198.19.240.23", "TCP", 81, [("198.19.17.3", 5201)])])
    d = proxy.delta_text("ks1-svc", "ip", a, b).splitlines()
    want = [
        "delete element ip ks1-svc svc_ip { 198.19.240.21 . tcp . 80 }",
        "delete chain ip ks1-svc s_198_19_240_21_tcp_80",
        "delete element ip ks1-svc noep_ip { 198.19.240.22 . udp . 53 }",
        "flush chain ip ks1-svc s_198_19_240_20_tcp_80",
        "add rule ip ks1-svc s_198_19_240_20_tcp_80 meta l4proto tcp dnat to "
        "198.19.17.3:5201",
        "add chain ip ks1-svc s_198_19_240_22_udp_53"]
    check("a delta deletes, refills and adds only what changed",
          d[:6] == want and len(d) == 11, "\n".join(d))
    check("no change, no delta", proxy.delta_text("ks1-svc", "ip", b, b) == "")


def sync_thread():
    calls = []
    proxy.nft = lambda ns, text: calls.append((time.monotonic(), text))
    delay = [0.0]
    px = proxy.NodeProxy("ks1-n2", "ks1-svc", "ip", "ks1-br",
                         lambda: delay[0], "node-2")
    s1 = proxy.desired([("198.19.240.20", "TCP", 80, [("198.19.17.2", 1)])])
    s2 = proxy.desired([("198.19.240.21", "TCP", 80, [("198.19.17.2", 1)])])
    px.push(s1)
    time.sleep(0.3)
    check("the first sync loads the whole table",
          len(calls) == 1 and "delete table ip ks1-svc" in calls[0][1])
    t0 = time.monotonic()
    px.push(s2)
    time.sleep(1.3)
    check("a change within a second of the last sync waits for it",
          len(calls) == 2 and calls[1][0] - calls[0][0] >= 0.95 and
          "delete table" not in calls[1][1], [c[0] - t0 for c in calls])
    delay[0] = 0.8
    t0 = time.monotonic()
    px.push(s1)
    time.sleep(0.5)
    n_early = len(calls)
    time.sleep(0.6)
    check("proxy-delay: the change reaches the table that late",
          n_early == 2 and len(calls) == 3 and calls[2][0] - t0 >= 0.8,
          [c[0] - t0 for c in calls])
    px.close()


if __name__ == "__main__":
    texts()
    t = threading.Thread(target=sync_thread)
    t.start()
    t.join()
    print("RESULT: %s" % ("FAILED %s" % FAILS if FAILS else "PASSED"))
    sys.exit(1 if FAILS else 0)
