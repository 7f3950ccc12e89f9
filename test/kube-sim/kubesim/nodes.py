# SPDX-License-Identifier: Apache-2.0
"""nodes - nodes added and removed while kube-sim runs, as a node group
replaces its instances (`kube-sim node add NAME [--like NODE]`, `kube-sim
node remove NAME`, through POST /kube-sim/nodes).

Owns: the order of a node's arrival (network namespace, CNI directories,
then its Node object, Ready, with the labels and taints of its shape copied
from another node) and of its departure (cordoned, its pods deleted as a
drain and the node lifecycle controller delete them, the Node object
deleted, the pods still bound force-deleted as the pod garbage collector
does, its kubelet's pod workers stopped, then its CNI directories and
network namespace removed by exact name). The network is net.py's, the
Node object kubelet.py's, the pod workers pod.py's.
"""
import re
import sys
import time

from . import resources as R
from .schema import Rejected

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# labels a node has of its own (not of its shape): not copied by --like
OWN_LABELS = {"kubernetes.io/hostname"}
# the seconds a removal waits for its pods' graceful end, then for its
# pod workers (a pod's grace is at most --max-grace, 5 s by default)
DRAIN_S = 60.0


def control(app, req):
    """GET: the nodes with their index; POST {"add": NAME, "like": NODE}
    or {"remove": NAME}."""
    import json
    kl = app.kubelet
    if req.method == "GET":
        return app.send(req, 200, {"nodes": [
            {"name": n, "index": i} for n, i in sorted(
                kl.node_index.items(), key=lambda x: x[1])]})
    if req.method != "POST":
        raise Rejected(405, "MethodNotAllowed", "GET or POST")
    try:
        body = json.loads(req.body or b"{}")
    except ValueError:
        raise Rejected(400, "BadRequest", "a JSON object expected")
    if body.get("add"):
        return app.send(req, 201, add(app.ctrl, kl, body["add"],
                                      body.get("like")))
    if body.get("remove"):
        return app.send(req, 200, remove(app.ctrl, kl, body["remove"]))
    raise Rejected(400, "BadRequest", 'POST {"add": NAME, "like": NODE} or '
                   '{"remove": NAME}')


def shape_of(node):
    """(labels, taints, arch) a node added --like `node` gets: every label
    but the node's own, the taints it was given (not those of a fault or of
    the node's state: node.kubernetes.io/*)."""
    md = node["metadata"]
    labels = {k: v for k, v in (md.get("labels") or {}).items()
              if k not in OWN_LABELS}
    taints = [dict(t) for t in (node.get("spec") or {}).get("taints") or []
              if "_fault" not in t and
              not t.get("key", "").startswith("node.kubernetes.io/")]
    return labels, taints, labels.get("kubernetes.io/arch")


def add(cm, kl, name, like=None):
    """A new node NAME, Ready, shaped as node `like` (labels: instance
    type, zone, arch, node group...; taints). Returns its summary."""
    if not isinstance(name, str) or len(name) > 63 or \
            not NAME_RE.match(name):
        raise Rejected(400, "BadRequest", "node add: %r is not a node name "
                       "(lower case letters, digits and '-')" % (name,))
    st = kl.store
    if st.get("nodes", "", name) is not None or name in kl.node_index:
        raise Rejected(409, "AlreadyExists", 'nodes "%s" already exists' %
                       name)
    labels, taints, arch = {}, [], None
    if like:
        ln = st.get("nodes", "", like)
        if ln is None:
            raise Rejected(404, "NotFound", 'node add --like: nodes "%s" '
                           'not found' % like)
        labels, taints, arch = shape_of(ln)
    arch = arch or kl.node_arch(name)
    i = kl.net.add_node(name)
    kl.cni.setup_node(i)
    kl.register_node(i, name, arch, labels, taints)
    node = st.get("nodes", "", name)
    cm.event(node, "Normal", "RegisteredNode", "Node %s event: Registered "
             "Node %s in Controller" % (name, name), "node-controller")
    cm.wake.set()
    kl.wake.set()
    print("kube-sim: node %s added (index %d, like %s)" % (
        name, i, like or "-"), file=sys.stderr, flush=True)
    return {"name": name, "index": i, "like": like,
            "labels": node["metadata"]["labels"],
            "taints": node["spec"].get("taints") or []}


def _bound(st, name):
    return [p for p in st.list_refs("pods")
            if p["spec"].get("nodeName") == name]


def _delete_pods(cm, st, name, grace=None):
    """Delete the pods bound to node NAME; returns their uids."""
    opts = {} if grace is None else {"gracePeriodSeconds": grace}
    uids = set()
    for p in _bound(st, name):
        md = p["metadata"]
        uids.add(md["uid"])
        if md.get("deletionTimestamp") and grace is None:
            continue
        try:
            cm.delete(R.BY_GR[("", "pods")], md["namespace"], md["name"],
                      dict(opts), None, [])
        except Rejected:
            pass
    return uids


def _gone(st, name, uids):
    """None of the pods `uids` is bound to node NAME any more."""
    return lambda: not any(p["metadata"]["uid"] in uids
                           for p in _bound(st, name))


def _wait(cond, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def remove(cm, kl, name):
    """Drain and remove node NAME (see the module comment). Returns how
    many pods were deleted and the index it had."""
    st = kl.store
    i = kl.node_index.get(name)
    if i is None:
        raise Rejected(404, "NotFound", 'nodes "%s" not found' % name)

    def cordon(n):
        spec = n.setdefault("spec", {})
        spec["unschedulable"] = True
        ts = [t for t in spec.get("taints") or []
              if t.get("key") != "node.kubernetes.io/unschedulable"]
        spec["taints"] = ts + [{"key": "node.kubernetes.io/unschedulable",
                                "effect": "NoSchedule"}]
    node = st.mutate("nodes", "", name, cordon)
    # (a DaemonSet's pod tolerates the cordon and comes back: only the pods
    # deleted here are waited for)
    uids = _delete_pods(cm, st, name)
    _wait(_gone(st, name, uids), DRAIN_S)
    if node is not None:
        cm.event(node, "Normal", "RemovingNode", "Node %s event: Removing "
                 "Node %s from Controller" % (name, name), "node-controller")
    cm.delete(R.BY_GR[("", "nodes")], "", name, {}, None, [])
    # what a DaemonSet put back meanwhile, gracefully, then (the pod garbage
    # collector's way with pods of a node that is gone) at once
    more = _delete_pods(cm, st, name)
    if not _wait(_gone(st, name, more), DRAIN_S):
        more |= _delete_pods(cm, st, name, grace=0)
    deleted = len(uids | more)
    # the node's kubelet stops: its workers end (CNI DEL, namespaces)
    kl.node_index.pop(name, None)
    kl.wake.set()

    def idle():
        with kl.lock:
            return not any(w.node_i == i for w in kl.workers.values())
    clean = _wait(idle, DRAIN_S)
    # a pod a controller bound in the last moment, before the Node went
    deleted += len(_delete_pods(cm, st, name, grace=0) - uids - more)
    kl.nodenet.forget(name)
    kl.faults.down_nodes.discard(name)
    kl.cni.remove_node(i)
    kl.net.remove_node(i)
    cm.wake.set()
    print("kube-sim: node %s removed (index %d, %d pod(s) deleted%s)" % (
        name, i, deleted, "" if clean else ", pod workers still running"),
        file=sys.stderr, flush=True)
    return {"name": name, "index": i, "podsDeleted": deleted,
            "workersStopped": clean}
