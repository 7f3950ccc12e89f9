#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_fit - kube-sim's scheduler resource fit (kubesim/fit.py and the
scheduler in kubesim/ctrl.py) without root, on a real store: quantities, a
pod's effective requests (init containers: the larger of the largest init
container and the sum of the app containers), the default allocatable, the
node-allocatable fault (its syntax, set and cleared), then scheduling: pods
spread while they fit, a node out of cpu or at max-pods is passed over, a
pod no node fits stays Pending with PodScheduled False / Unschedulable and
the scheduler's message (reasons as sorted "<count> <reason>" strings, the
preemption part) and a FailedScheduling Warning from default-scheduler, a
DaemonSet-style pod pinned to a full node stays Pending, and deleting a pod
or raising a node's allocatable lets the pending pod bind. No timing is
asserted."""
import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import ctrl, faults, fit, store  # noqa: E402

FAILS = []


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       "" if cond else ": " + str(detail)[:400]))
    if not cond:
        FAILS.append(name)


class Cfg:
    def __init__(self, d):
        self.state_dir = d
        self.nodes = 3
        self.prefix = ""
        self.faults = ""
        self.cron_minute_seconds = 60.0
        self.cron_start = "2026-12-01T00:00:00Z"
        self.job_backoff = 10


def pod(name, cpu="100m", mem="64Mi", node_pin=None, init=None):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"cpu": cpu, "memory": mem}}}]}
    if init:
        spec["initContainers"] = [{"name": "i", "image": "x", "resources": {
            "requests": {"cpu": init}}}]
    if node_pin:
        spec["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{
                    "key": "metadata.name", "operator": "In",
                    "values": [node_pin]}]}]}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "default"}, "spec": spec,
        "status": {"phase": "Pending"}}


def units():
    check("quantities", [fit.quantity(x) for x in
                         ("500m", "1.5", "64Mi", "1e3", "2k", "x")] ==
          [0.5, 1.5, 64 * 2 ** 20, 1000, 2000, None])
    check("requests: app containers summed",
          fit.pod_requests({"containers": [
              {"resources": {"requests": {"cpu": "100m", "memory": "1Mi"}}},
              {"resources": {"requests": {"cpu": "250m"}}}]}) ==
          {"cpu": 350, "memory": 2 ** 20})
    spec = pod("p", cpu="100m", init="300m")["spec"]
    check("requests: an init container larger than the app containers "
          "counts", fit.pod_requests(spec)["cpu"] == 300,
          fit.pod_requests(spec))
    spec = pod("p", cpu="400m", init="300m")["spec"]
    check("requests: else the app containers' sum",
          fit.pod_requests(spec)["cpu"] == 400)
    check("a node without allocatable offers the defaults",
          fit.allocatable({"metadata": {"name": "n"}}) ==
          {"cpu": 8000, "memory": 32 * 2 ** 30, "pods": 110})
    check("histogram: sorted as '<count> <reason>' strings",
          fit.histogram({"Insufficient cpu": 3, "Too many pods": 2}) ==
          "2 Too many pods, 3 Insufficient cpu")
    for bad in ("node-allocatable:node=node-1",
                "node-allocatable:node=node-1,cpu=lots",
                "node-allocatable:node=node-1,pods=1.5",
                "node-allocatable:node=node-1,gpu=1",
                "node-allocatable:cpu=1"):
        try:
            faults.parse(bad)
            check("refused: %s" % bad, False, "parsed")
        except faults.FaultError as e:
            check("refused: %s (%s)" % (bad, e), True)
    # link-rate (a node's links at a lower speed): a tc rate kept as text
    r = faults.parse("link-rate:node=node-3,rate=1gbit")[0]
    check("link-rate parses node and rate", r == {
        "kind": "link-rate", "node": "node-3", "rate": "1gbit"}, r)
    for bad in ("link-rate:node=node-3", "link-rate:node=node-3,rate=fast",
                "link-rate:rate=1gbit", "link-rate:node=node-3,rate=1gbit,x=1"):
        try:
            faults.parse(bad)
            check("refused: %s" % bad, False, "parsed")
        except faults.FaultError as e:
            check("refused: %s (%s)" % (bad, e), True)


def cond(st, name):
    p = st.get("pods", "default", name)
    for c in p["status"].get("conditions") or []:
        if c["type"] == "PodScheduled":
            return p["spec"].get("nodeName"), c
    return p["spec"].get("nodeName"), None


def scheduling():
    d = tempfile.mkdtemp(prefix="kubesim-fit-")
    atexit.register(shutil.rmtree, d, True)
    cfg = Cfg(d)
    st = store.Store()
    fl = faults.Faults(cfg)
    fl.store = st
    cm = ctrl.Controllers(cfg, st, None, None, fl)
    for i in (1, 2, 3):
        st.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": "node-%d" % i}, "spec": {}, "status": {
                "capacity": dict(fit.DEFAULT_ALLOCATABLE),
                "allocatable": dict(fit.DEFAULT_ALLOCATABLE)}})
    fl.add("node-allocatable:node=node-2,cpu=250m;"
           "node-allocatable:node=node-3,pods=2")
    n2 = st.get("nodes", "", "node-2")["status"]
    check("the fault sets node-2's allocatable cpu, keeps the rest",
          n2["allocatable"] == {"cpu": "250m", "memory": "32Gi",
                                "pods": "110"} and
          n2["capacity"]["cpu"] == "8", n2)
    for i in range(6):
        st.create("pods", pod("p%d" % i))
        cm.schedule()
    where = [cond(st, "p%d" % i)[0] for i in range(6)]
    check("pods spread while they fit; node-2 (250m) takes 2 of 100m, "
          "node-3 (max-pods 2) takes 2", sorted(where) ==
          ["node-1", "node-1", "node-2", "node-2", "node-3", "node-3"], where)
    # node-1 has room, the others not: pin a pod to node-2 (DaemonSet-like)
    st.create("pods", pod("ds-node-2", node_pin="node-2"))
    cm.schedule()
    node, c = cond(st, "ds-node-2")
    want = ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't "
            "match Pod's node affinity/selector. preemption: 0/3 nodes are "
            "available: 1 No preemption victims found for incoming pod, 2 "
            "Preemption is not helpful for scheduling.")
    check("a pinned pod that does not fit its node stays Pending: "
          "Unschedulable with the scheduler's message", node is None and c and
          c["status"] == "False" and c["reason"] == "Unschedulable" and
          c["message"] == want, (node, c))
    evs = [e for e in st.list("events")[0] if
           e["involvedObject"]["name"] == "ds-node-2"]
    check("a FailedScheduling Warning from default-scheduler",
          len(evs) == 1 and evs[0]["reason"] == "FailedScheduling" and
          evs[0]["type"] == "Warning" and evs[0]["message"] == want and
          evs[0]["source"]["component"] == "default-scheduler", evs)
    st.create("pods", pod("big", cpu="9"))
    cm.schedule()
    node, c = cond(st, "big")
    want = ("0/3 nodes are available: 1 Too many pods, 3 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 3 Preemption is not "
            "helpful for scheduling.")
    check("a pod larger than any node: every reason counted, preemption "
          "not helpful", node is None and c and c["message"] == want,
          (node, c and c.get("message")))
    st.delete("pods", "default", "big")
    # a pod that fits no node now but would after a deletion
    fl.add("node-allocatable:node=node-1,pods=2")
    st.create("pods", pod("late"))
    cm.schedule()
    node, c = cond(st, "late")
    want = ("0/3 nodes are available: 1 Insufficient cpu, 2 Too many pods. "
            "preemption: 0/3 nodes are available: 3 No preemption victims "
            "found for incoming pod.")
    check("max-pods and cpu reached: Too many pods / Insufficient cpu",
          node is None and c and c["message"] == want,
          (node, c and c.get("message")))
    gone = [i for i in range(6) if where[i] == "node-3"][0]
    st.delete("pods", "default", "p%d" % gone)
    cm.schedule()
    node, c = cond(st, "late")
    check("a deleted pod frees its node: the pending pod binds",
          node == "node-3" and c["status"] == "True", (node, c))
    # a terminal pod does not count
    done = [i for i in range(6) if where[i] == "node-1"][0]
    st.mutate("pods", "default", "p%d" % done,
              lambda x: x["status"].update(phase="Succeeded"))
    st.create("pods", pod("after"))
    cm.schedule()
    check("a Succeeded pod's requests and slot are free again",
          cond(st, "after")[0] == "node-1", cond(st, "after"))
    fl.clear()
    check("clearing the faults restores allocatable from capacity",
          st.get("nodes", "", "node-2")["status"]["allocatable"]["cpu"] ==
          "8")
    cm.schedule()
    node, c = cond(st, "ds-node-2")
    check("node-2's allocatable raised: the pinned pod binds",
          node == "node-2" and c["status"] == "True", (node, c))


if __name__ == "__main__":  # test_hostports.py imports the helpers
    units()
    scheduling()
    print("%d failed" % len(FAILS))
    sys.exit(1 if FAILS else 0)
