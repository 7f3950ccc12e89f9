# SPDX-License-Identifier: Apache-2.0
"""sandbox - a pod's sandbox network as the kubelet and containerd make it,
and each node's network readiness.

Owns: creating a pod's sandbox network (a network namespace, then CNI ADD of
the node's conflist through cniruntime.py; the pod's IPs are the result's),
retrying a failed sandbox creation with the kubelet pod worker's back-off
(--sandbox-backoff, 10 s + up to 50 % jitter like the kubelet's
backOffPeriod), the kubelet's Events for it with their real reasons and
texts (FailedCreatePodSandBox, NetworkNotReady; after 10 different messages
of one reason on a pod the event recorder combines them into one event
"(combined from similar events): ..." that counts on), tearing the network
down (CNI DEL: the addresses go back to the pool), and NodeNetworks: a
node's runtime network readiness (the conflist in its net.d loads) turned
into its Ready condition (False, KubeletNotReady, "container runtime network
not ready: ...") and the node.kubernetes.io/not-ready:NoSchedule taint the
node lifecycle controller adds, both undone when the network is back.
"""
import random
import secrets
import sys
import threading

from .cniruntime import CniError, NotInitialized, pod_mac, result_ips
from .net import NetError
from .util import now_iso

NOT_READY = ("container runtime network not ready: NetworkReady=false "
             "reason:NetworkPluginNotReady message:Network plugin returns "
             "error: cni plugin not initialized")
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
SANDBOX_PREFIX = "Failed to create pod sandbox: rpc error: code = "
# the event recorder combines an object's events of one reason after this
# many different messages within 10 minutes (EventAggregator's maxEvents)
AGGREGATE_AFTER = 10


def sandbox_error(sid, e):
    """The text the kubelet puts in FailedCreatePodSandBox for error e."""
    if isinstance(e, CniError) and e.timeout:
        # the CRI call ran out of the kubelet's time first
        return SANDBOX_PREFIX + "DeadlineExceeded desc = context deadline " \
            "exceeded"
    if isinstance(e, NotInitialized):
        why = "cni plugin not initialized"
    else:
        why = str(e)
    return SANDBOX_PREFIX + 'Unknown desc = failed to setup network for ' \
        'sandbox "%s": %s' % (sid, why)


def _event(w, reason, msg):
    """A Warning event of the pod's kubelet, combined as the recorder
    combines similar ones."""
    seen = w.__dict__.setdefault("_ev_msgs", {}).setdefault(reason, set())
    seen.add(msg)
    p = dict(w.pod, kind="Pod", apiVersion="v1")
    if len(seen) > AGGREGATE_AFTER:
        w.kl.ctrl.event(p, "Warning", reason, "(combined from similar "
                        "events): " + msg, "kubelet", w.node,
                        combine="(combined)")
    else:
        w.kl.ctrl.event(p, "Warning", reason, msg, "kubelet", w.node)


def _backoff(w):
    b = float(getattr(w.kl.cfg, "sandbox_backoff", 10.0))
    return b * (1 + 0.5 * random.random())


def create(w):
    """Set up worker w's pod network, retrying until it works or the pod is
    deleted. Returns True when w.netns, w.ips and w.ip are set."""
    kl = w.kl
    while not w.deleting.is_set():
        if not kl.nodenet.is_ready(w.node):
            # the kubelet starts no sandbox while the runtime's network is
            # not ready (syncPod), and says so on the pod
            _event(w, "NetworkNotReady", "network is not ready: " +
                   NOT_READY)
            if w.deleting.wait(_backoff(w)):
                return False
            continue
        # a slow CNI ADD (fault cni-add-delay): the sandbox has no network
        # yet, so the pod stays ContainerCreating until the delay passes
        delay = kl.faults.cni_add_delay(w.node)
        if delay > 0 and w.deleting.wait(delay):
            return False
        sid = secrets.token_hex(32)
        try:
            ns = kl.net.new_pod_ns()
        except NetError as e:
            _event(w, "FailedCreatePodSandBox", SANDBOX_PREFIX +
                   "Unknown desc = failed to create network namespace for "
                   'sandbox "%s": %s' % (sid, e))
            if w.deleting.wait(_backoff(w)):
                return False
            continue
        path = "/run/netns/" + ns
        try:
            res = kl.cni.add(w.node_i, sid, path, w.pod)
            ips = result_ips(res or {}, path)
            if not ips:
                kl.cni.delete(w.node_i, sid, path)
                raise CniError("bridge", "ADD", "no IP addresses in the "
                               "result")
            kl.net.pod_neigh(w.node_i, ns, ips, pod_mac(res, path))
        except (CniError, NotInitialized, NetError, OSError) as e:
            kl.net.del_pod_ns(ns)
            if isinstance(e, NotInitialized):
                kl.nodenet.check(w.node)
            _event(w, "FailedCreatePodSandBox", sandbox_error(sid, e))
            if w.deleting.wait(_backoff(w)):
                return False
            continue
        w.netns, w.ips, w.ip, w.sandbox_id = ns, ips, ips[0], sid
        return True
    return False


def destroy(w):
    """CNI DEL of worker w's sandbox, then its namespace."""
    try:
        w.kl.cni.delete(w.node_i, w.sandbox_id, "/run/netns/" + w.netns)
    except (CniError, OSError) as e:
        sys.stderr.write("kube-sim: CNI DEL of pod %s/%s: %s\n" % (
            w.ns, w.name, e))
    w.kl.net.del_pod_ns(w.netns)


class NodeNetworks:
    """Each node's runtime network status, as the kubelet reports it."""

    def __init__(self, kl):
        self.kl = kl
        self.lock = threading.Lock()
        self.not_ready = set()   # node names

    def is_ready(self, node):
        with self.lock:
            return node not in self.not_ready

    def forget(self, node):
        """A removed node (kubesim/nodes.py)."""
        with self.lock:
            self.not_ready.discard(node)

    def fault_changed(self, node):
        """A CNI fault of node changed: rewrite its net.d, check it."""
        i = self.kl.node_index.get(node)
        if i is None:
            return
        self.kl.cni.write_conf(i, self.kl.faults.cni_rules(node))
        self.check(node)

    def check(self, node):
        i = self.kl.node_index.get(node)
        if i is None:
            return
        ok, _ = self.kl.cni.ready(i)
        with self.lock:
            if ok == (node not in self.not_ready):
                return
            (self.not_ready.discard if ok else self.not_ready.add)(node)
        self.kl.store.mutate("nodes", "", node,
                             lambda n: _node_network(n, ok))


def _node_network(n, ok):
    t = now_iso()
    for c in n["status"]["conditions"]:
        if c["type"] != "Ready" or c["status"] == "Unknown":
            continue
        c["lastTransitionTime"] = t
        c["lastHeartbeatTime"] = t
        if ok:
            c["status"], c["reason"] = "True", "KubeletReady"
            c["message"] = "kubelet is posting ready status"
        else:
            c["status"], c["reason"] = "False", "KubeletNotReady"
            c["message"] = NOT_READY
    spec = n.setdefault("spec", {})
    taints = [x for x in spec.get("taints") or []
              if (x.get("key"), x.get("effect")) !=
              (NOT_READY_TAINT, "NoSchedule")]
    if not ok:
        taints.append({"key": NOT_READY_TAINT, "effect": "NoSchedule",
                       "timeAdded": t})
    if taints:
        spec["taints"] = taints
    else:
        spec.pop("taints", None)
