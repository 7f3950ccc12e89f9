#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_hostports - kube-sim's scheduler honours host ports
(kubesim/hostports.py in the scheduler of kubesim/ctrl.py) without root, on
a real store: two hostNetwork pods pinned to one node that declare the same
port, the second stays Pending with PodScheduled False / Unschedulable and
the scheduler's words ("didn't have free ports"); another port, another
protocol or another node binds; the holder finishing (Succeeded) frees the
port. No timing is asserted."""
import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import ctrl, faults, fit, hostports, store  # noqa: E402
from test_fit import Cfg, check, cond, FAILS  # noqa: E402


def hostpod(name, node, port, proto="TCP", host_network=True):
    p = {"name": "p", "containerPort": port, "protocol": proto}
    if not host_network:
        p["hostPort"] = port
    spec = {"hostNetwork": host_network, "containers": [
        {"name": "c", "image": "x", "ports": [p]}],
        "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{
                    "key": "metadata.name", "operator": "In",
                    "values": [node]}]}]}}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "default"}, "spec": spec,
        "status": {"phase": "Pending"}}


def main():
    d = tempfile.mkdtemp(prefix="kubesim-hostports-")
    atexit.register(shutil.rmtree, d, True)
    cfg = Cfg(d)
    st = store.Store()
    fl = faults.Faults(cfg)
    fl.store = st
    cm = ctrl.Controllers(cfg, st, None, None, fl)
    for i in (1, 2):
        st.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": "node-%d" % i}, "spec": {}, "status": {
                "capacity": dict(fit.DEFAULT_ALLOCATABLE),
                "allocatable": dict(fit.DEFAULT_ALLOCATABLE)}})
    check("a hostNetwork pod's container ports are host ports",
          hostports.wanted(hostpod("x", "n", 5201)["spec"]) ==
          [("TCP", "0.0.0.0", 5201)])
    st.create("pods", hostpod("first", "node-1", 5201))
    cm.schedule()
    check("the first holder of 5201/TCP binds", cond(st, "first")[0] ==
          "node-1", cond(st, "first"))
    st.create("pods", hostpod("second", "node-1", 5201))
    st.create("pods", hostpod("udp", "node-1", 5201, proto="UDP"))
    st.create("pods", hostpod("other-port", "node-1", 5202))
    st.create("pods", hostpod("other-node", "node-2", 5201))
    st.create("pods", hostpod("declared", "node-1", 5201, host_network=False))
    cm.schedule()
    node, c = cond(st, "second")
    check("a second pod wanting 5201/TCP on node-1 stays Pending, "
          "Unschedulable, in the scheduler's words", node is None and
          c["status"] == "False" and c["reason"] == "Unschedulable" and
          "1 node(s) didn't have free ports for the requested pod ports"
          in c["message"], (node, c))
    node, c = cond(st, "declared")
    check("so does a pod network pod declaring hostPort 5201",
          node is None and c["reason"] == "Unschedulable", (node, c))
    check("5201/UDP, 5202/TCP and node-2's 5201 bind",
          [cond(st, n)[0] for n in ("udp", "other-port", "other-node")] ==
          ["node-1", "node-1", "node-2"])
    st.mutate("pods", "default", "first",
              lambda x: x["status"].update(phase="Succeeded"))
    st.delete("pods", "default", "declared")
    cm.schedule()
    check("the holder done: the waiting pod binds",
          cond(st, "second")[0] == "node-1", cond(st, "second"))


main()
print("%d failed" % len(FAILS))
sys.exit(1 if FAILS else 0)
