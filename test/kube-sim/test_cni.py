#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_cni - kube-sim's CNI rollout (kubesim/cni.py) without root: a fake
store, controller and network record what the rollout does. Checks the node
order, the nftables text for each node (the drop table on the pods' veths in,
then out), the DaemonSet status during and after, the Events, and the
records in cni-rollout.jsonl. No timing is asserted."""
import json
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import cni  # noqa: E402

FAILS = []


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       "" if cond else ": " + str(detail)[:400]))
    if not cond:
        FAILS.append(name)


class Store:
    def __init__(self):
        self.ds = {"metadata": {"name": "aws-node", "namespace": "kube-system",
                                "generation": 2},
                   "spec": {"template": {}}, "status": {}}
        self.statuses = []

    def get(self, res, ns, name):
        return self.ds if (res, ns, name) == ("daemonsets", "kube-system",
                                              "aws-node") else None

    def mutate(self, res, ns, name, fn):
        fn(self.ds)
        self.statuses.append(dict(self.ds["status"]))
        return self.ds


class Ctrl:
    def __init__(self):
        self.events = []

    def event(self, obj, typ, reason, msg, component):
        self.events.append((reason, msg))


class Net:
    indices = [1, 2, 3]

    def node_name(self, i):
        return "node-%d" % i

    def node_ns(self, i):
        return "kst-n%d" % i

    def bridge(self):
        return "kst-br"


def main():
    d = tempfile.mkdtemp(prefix="kubesim-cni-")
    cfg = types.SimpleNamespace(state_dir=d, prefix="kst-", cni="aws-node",
                                cni_restart_time=0.02,
                                cni_restart_outage=0.01,
                                cni_conntrack_flush=False)
    st, ctrl = Store(), Ctrl()
    r = cni.Rollout(cfg, st, ctrl, Net(), log=lambda m: None)
    nft = []
    r._nft = lambda i, text: nft.append((i, text))
    r.roll(st.ds)

    check("one drop and one undrop per node, in node order",
          [(i, "delete" in t) for i, t in nft] ==
          [(1, False), (1, True), (2, False), (2, True), (3, False),
           (3, True)], nft)
    add = nft[0][1]
    check("the drop table is kube-sim's, on the pods' veths, IP only",
          "table bridge kst-cni" in add and 'iifname "veth*"' in add and
          'oifname "veth*"' in add and "ether type { ip, ip6 } drop" in add,
          add)
    check("undrop deletes only that table",
          nft[1][1].strip() == "delete table bridge kst-cni", nft[1][1])
    during = [s for s in st.statuses if s.get("numberUnavailable") == 1]
    check("one node unavailable at a time, updated counting up",
          [s["updatedNumberScheduled"] for s in during] == [0, 1, 2], during)
    last = st.statuses[-1]
    check("rollout complete: all updated, none unavailable, observed",
          last.get("updatedNumberScheduled") == 3 and
          "numberUnavailable" not in last and
          last.get("observedGeneration") == 2 and
          last.get("numberAvailable") == 3, last)
    check("Events CniRestart/CniRestarted per node",
          [e[0] for e in ctrl.events] == ["CniRestart", "CniRestarted"] * 3 and
          "node-2" in ctrl.events[2][1], ctrl.events)
    with open(os.path.join(d, cni.LOG)) as f:
        recs = [json.loads(x) for x in f]
    check("one record per node with start <= end",
          [x["node"] for x in recs] == ["node-1", "node-2", "node-3"] and
          all(x["before_unix"] <= x["start_unix"] <= x["end_unix"] and
              not x["conntrack_flushed"]
              for x in recs), recs)

    # no outage configured: status still rolls, nothing is dropped
    nft.clear()
    r.outage_s = 0.0
    r.roll(st.ds)
    check("no outage: no nftables change", nft == [], nft)
    os.unlink(os.path.join(d, cni.LOG))
    os.rmdir(d)
    print("RESULT: %s" % ("FAILED" if FAILS else "PASSED"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
