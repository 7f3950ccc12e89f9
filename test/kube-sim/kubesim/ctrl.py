# SPDX-License-Identifier: Apache-2.0
"""ctrl - the controller manager and scheduler.

Owns: deletion semantics (propagation policies, finalizers, graceful pod
deletion hand-off to the kubelet), the garbage collector, the namespace
lifecycle controller, the scheduler, the DaemonSet, Job and CronJob
(cron.py) controllers, the volume provisioner (storage.py), the endpoints
controller feeding the per-node nftables Service rules, and
Events. Everything is level-triggered: one loop re-reads the store when it
changes (or every half second) and converges. Pods are created through
admission, so Pod Security rejections become FailedCreate events.
"""
import sys
import threading
import time
import traceback

from . import fit as fit_mod
from . import hostports
from . import netpol
from . import resources as R
from .cron import CronJobs
from .schema import Rejected
from .storage import Storage
from .util import now_iso, wall
from .workloads import Workloads, node_matches, tolerates

JOB_WARNING = ("child pods are preserved by default when jobs are deleted; "
               "set propagationPolicy=Background to remove them or set "
               "propagationPolicy=Orphan to suppress this warning")
def node_ready(node):
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def pod_ready(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def terminal(p):
    return (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class Controllers(Workloads, CronJobs, Storage):
    def __init__(self, cfg, store, adm, net, faults):
        self.cfg, self.store, self.adm, self.net = cfg, store, adm, net
        self.faults = faults
        self.wake = threading.Event()
        self.released = set()       # pod uids the kubelet has let go
        self.backoff = {}           # (kind, uid) -> (next_time, delay)
        self.job_next = {}          # job uid -> earliest next pod create
        self.sched_msg = {}         # pod uid -> last FailedScheduling text
        self.dangling = {}          # uid -> when its owners were first gone
        self.svc_rules = None
        self.netpol = None          # netpol.Programmer, wired by main
        self.netns_of = None        # pod uid -> its netns (the kubelet's)
        self.event_names = {}       # (ns, uid, reason, message) -> event
        self.stop = False
        self.cron_init(cfg)
        # events are written by the controllers and kubelets and read by
        # none of them (as in a real cluster): writing one wakes no pass
        store.subscribers.append(
            lambda typ, res, *a: res == "events" or self.wake.set())

    def start(self):
        threading.Thread(target=self.loop, name="controllers",
                         daemon=True).start()

    def loop(self):
        while not self.stop:
            self.wake.wait(0.5)
            self.wake.clear()
            for fn in (self.namespaces, self.gc, self.daemonsets,
                       self.cronjobs, self.jobs, self.volumes, self.schedule,
                       self.endpoints, self.netpols):
                try:
                    fn()
                except Exception:
                    traceback.print_exc(file=sys.stderr)

    def netpols(self):
        """Every pod's NetworkPolicy rules, to each node's programmer."""
        if self.netpol is not None:
            self.netpol.update(netpol.desired(self.store, self.netns_of))

    def netpol_new_pod(self, uid, node):
        """A pod's sandbox is up, its address in the store (the kubelet,
        before its containers start): its node's programmer may program it
        now (netpol.Programmer.admit)."""
        if self.netpol is not None and \
                self.store.list_refs("networkpolicies"):
            self.netpol.admit(node, self.netns_of(uid),
                              netpol.desired(self.store, self.netns_of))

    # ------------------------------------------------------------ events
    def event(self, obj, typ, reason, msg, component, host=None,
              field_path=None, combine=None):
        """Record an Event, or count an identical one again. combine: a key
        that replaces the message in that identity (the event recorder's
        aggregation of similar events: the one event's message becomes the
        latest)."""
        md = obj["metadata"]
        ns = md.get("namespace") or "default"
        st = self.store
        # (object uid, reason, message) -> event name: the event to count
        # again is found at once, not by scanning the namespace's events
        # (which made a 250-node sweep quadratic); a deleted event is a miss
        key = (ns, md.get("uid"), reason, combine or msg)
        with st.lock:
            name = self.event_names.get(key)
            if name and st.get("events", ns, name) is not None:
                def bump(x):
                    x["count"] = x.get("count", 1) + 1
                    x["lastTimestamp"] = now_iso()
                    x["message"] = msg
                st.mutate("events", ns, name, bump)
                return
            io = {"kind": obj.get("kind"), "namespace": md.get("namespace"),
                  "name": md["name"], "uid": md.get("uid"),
                  "apiVersion": obj.get("apiVersion"),
                  "resourceVersion": md.get("resourceVersion")}
            if field_path:
                io["fieldPath"] = field_path
            if not io["namespace"]:
                io.pop("namespace")
            t = now_iso()
            ev = {"kind": "Event", "apiVersion": "v1", "metadata": {
                "name": "%s.%x" % (md["name"], int(time.time() * 1e9)),
                "namespace": ns}, "involvedObject": io, "reason": reason,
                "message": msg, "type": typ, "count": 1,
                "firstTimestamp": t, "lastTimestamp": t,
                "eventTime": None, "reportingComponent": component,
                "reportingInstance": host or "",
                "source": dict({"component": component},
                               **({"host": host} if host else {}))}
            if ev["eventTime"] is None:
                ev.pop("eventTime")
            try:
                st.create("events", ev)
                self.event_names[key] = ev["metadata"]["name"]
            except Exception:
                pass

    # ------------------------------------------------------------ delete
    def delete(self, res, ns, name, opts, user, warnings, collection=False):
        """The DELETE verb. Returns the object (pending deletion or just
        removed), a Status, or None (not found). Raises Rejected."""
        st = self.store
        o = st.get(res.name, ns, name)
        if o is None:
            return None
        o["kind"], o["apiVersion"] = res.kind, res.api_version
        md = o["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != md["uid"]:
            raise Rejected(409, "Conflict", (
                'Operation cannot be fulfilled on %s "%s": Precondition '
                'failed: UID in precondition: %s, UID in object meta: %s') % (
                    res.name, name, pre["uid"], md["uid"]),
                {"name": name, "group": res.group, "kind": res.name})
        if pre.get("resourceVersion") and pre["resourceVersion"] != \
                md["resourceVersion"]:
            raise Rejected(409, "Conflict", (
                'Operation cannot be fulfilled on %s "%s": Precondition '
                'failed: ResourceVersion in precondition: %s, '
                'ResourceVersion in object meta: %s') % (
                    res.name, name, pre["resourceVersion"],
                    md["resourceVersion"]),
                {"name": name, "group": res.group, "kind": res.name})
        if res.name == "namespaces":
            self.faults.check_ns_delete(self, name)
        pp = opts.get("propagationPolicy")
        if not pp and opts.get("orphanDependents") in (True, "true"):
            pp = "Orphan"
        if res.name == "jobs" and not pp:
            pp = "Orphan"
            if not collection or JOB_WARNING not in warnings:
                warnings.append(JOB_WARNING)
        pp = pp or "Background"
        dry = "All" in (opts.get("dryRun") or [])
        if md.get("deletionTimestamp") and not (
                res.name == "pods" and md.get("deletionGracePeriodSeconds") and
                str(opts.get("gracePeriodSeconds")) == "0"):
            return o  # (a pod's grace period may still be cut to 0: --force)
        if dry:
            md["deletionTimestamp"] = now_iso()
            return o
        if res.name == "namespaces":
            def term(x):
                x["metadata"]["deletionTimestamp"] = now_iso()
                x.setdefault("status", {})["phase"] = "Terminating"
            self.wake.set()
            return st.mutate("namespaces", "", name, term)
        if pp == "Orphan":
            # marked first (as the real API server's "orphan" finalizer does):
            # a controller that sees the dependents without their owner
            # reference then also sees their owner going
            # (a pod's own deletion below sets its timestamp, grace included)
            def going(x):
                x["metadata"]["deletionTimestamp"] = now_iso()
            if res.name != "pods":
                o = st.mutate(res.name, ns, name, going) or o
            self.orphan(md["uid"])
        if pp == "Foreground":
            def fg(x):
                x["metadata"]["deletionTimestamp"] = now_iso()
                f = x["metadata"].setdefault("finalizers", [])
                if "foregroundDeletion" not in f:
                    f.append("foregroundDeletion")
            self.wake.set()
            return st.mutate(res.name, ns, name, fg)
        if res.name == "pods":
            grace = opts.get("gracePeriodSeconds")
            if grace is None:
                grace = o["spec"].get("terminationGracePeriodSeconds", 30)
            grace = int(grace)
            immediate = grace == 0 or not o["spec"].get("nodeName") or \
                md["uid"] in self.released

            def mark(x):
                x["metadata"]["deletionTimestamp"] = now_iso() if \
                    immediate else time.strftime(
                        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall() + grace))
                x["metadata"]["deletionGracePeriodSeconds"] = grace
            out = st.mutate("pods", ns, name, mark)
            if immediate:
                return self.finalize("pods", out, force=True) or out
            return out
        if md.get("finalizers"):
            def mark2(x):
                x["metadata"]["deletionTimestamp"] = now_iso()
            return st.mutate(res.name, ns, name, mark2)
        gone = st.delete(res.name, ns, name)
        self.wake.set()
        if res.name in ("services",):
            gone["kind"], gone["apiVersion"] = res.kind, res.api_version
            return gone
        return {"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Success", "details": {
                    "name": name, "group": res.group, "kind": res.name,
                    "uid": md["uid"]}}

    def finalize(self, res, obj, force=False):
        """Remove an object whose deletion is complete (no finalizers; for
        pods, the kubelet has stopped it). Returns the removed object."""
        md = obj["metadata"]
        if not md.get("deletionTimestamp") or md.get("finalizers"):
            return None
        if res == "pods" and not force and md["uid"] not in self.released \
                and obj["spec"].get("nodeName") and not terminal(obj):
            return None
        gone = self.store.delete(res, md.get("namespace"), md["name"])
        if gone is not None:
            gone["kind"], gone["apiVersion"] = obj.get("kind"), \
                obj.get("apiVersion")
        self.wake.set()
        return gone

    def pod_released(self, pod):
        """Kubelet: the pod's processes are gone (or never ran)."""
        self.released.add(pod["metadata"]["uid"])
        cur = self.store.get("pods", pod["metadata"].get("namespace"),
                             pod["metadata"]["name"])
        if cur and cur["metadata"]["uid"] == pod["metadata"]["uid"]:
            self.finalize("pods", cur)

    def orphan(self, uid):
        st = self.store
        with st.lock:
            deps = [(r, o["metadata"].get("namespace"), o["metadata"]["name"])
                    for (r, _, _), o in st.objs.items()
                    if any(ref.get("uid") == uid for ref in
                           o["metadata"].get("ownerReferences") or [])]
        for r, ns, name in deps:
            def drop(x):
                refs = [ref for ref in x["metadata"].get("ownerReferences")
                        or [] if ref.get("uid") != uid]
                if refs:
                    x["metadata"]["ownerReferences"] = refs
                else:
                    x["metadata"].pop("ownerReferences", None)
            st.mutate(r, ns, name, drop)

    # ------------------------------------------------------------ GC
    def gc(self):
        st = self.store
        with st.lock:
            # events own nothing and have no owners here: not scanned (a
            # long run writes thousands of them)
            objs = [(k, o) for r, m in st.by_res.items() if r != "events"
                    for k, o in m.items()]
            uids = {o["metadata"]["uid"] for _, o in objs}
            dangling, fg = [], []
            for (r, ns, name), o in objs:
                refs = o["metadata"].get("ownerReferences") or []
                if refs and not any(ref.get("uid") in uids for ref in refs) \
                        and not o["metadata"].get("deletionTimestamp"):
                    dangling.append((r, ns, name, o["metadata"]["uid"]))
                if "foregroundDeletion" in (o["metadata"].get("finalizers")
                                            or []):
                    fg.append((r, ns, name, o["metadata"]["uid"]))
        # like the real garbage collector, dependents go some time after
        # their owner (--gc-lag): a deleted Job's pod can outlive it
        now, lag = time.time(), getattr(self.cfg, "gc_lag", 0)
        seen = {}
        due = []
        for r, ns, name, uid in dangling:
            seen[uid] = self.dangling.get(uid, now)
            if now - seen[uid] >= lag:
                due.append((r, ns, name))
        self.dangling = seen
        for r, ns, name in due:
            self.delete(R.BY_GR[(_group(r), r)], ns, name,
                        {"propagationPolicy": "Background"}, None, [])
        for r, ns, name, uid in fg:
            with st.lock:
                deps = [(dr, o["metadata"].get("namespace"),
                         o["metadata"]["name"], o["metadata"].get(
                             "deletionTimestamp"))
                        for (dr, _, _), o in st.objs.items()
                        if any(ref.get("uid") == uid for ref in
                               o["metadata"].get("ownerReferences") or [])]
            for dr, dns, dn, dts in deps:
                if not dts:
                    self.delete(R.BY_GR[(_group(dr), dr)], dns, dn,
                                {"propagationPolicy": "Foreground"}, None, [])
            if not deps:
                def unfin(x):
                    x["metadata"]["finalizers"] = [
                        f for f in x["metadata"].get("finalizers") or []
                        if f != "foregroundDeletion"]
                    if not x["metadata"]["finalizers"]:
                        x["metadata"].pop("finalizers")
                o = st.mutate(r, ns, name, unfin)
                if o:
                    self.finalize(r, o)

    # ------------------------------------------------------------ namespaces
    def namespaces(self):
        st = self.store
        items, _ = st.list("namespaces")
        for n in items:
            if not n["metadata"].get("deletionTimestamp"):
                continue
            name = n["metadata"]["name"]
            left = {}
            with st.lock:
                objs = [(r, o["metadata"]["name"], o["metadata"].get(
                    "deletionTimestamp")) for (r, ns, _), o in
                    st.objs.items() if ns == name and r != "events"]
            for r, on, dts in objs:
                left[r] = left.get(r, 0) + 1
                if not dts:
                    try:
                        self.delete(R.BY_GR[(_group(r), r)], name, on,
                                    {"propagationPolicy": "Background"},
                                    None, [])
                    except Rejected:
                        pass
            if left:
                msg = "Some resources are remaining: %s" % ", ".join(
                    "%s.%s has %d resource instances" % (
                        r, _group(r), c) if _group(r) else
                    "%s. has %d resource instances" % (r, c)
                    for r, c in sorted(left.items()))

                def cond(x):
                    cs = [c for c in x.get("status", {}).get("conditions")
                          or [] if c["type"] != "NamespaceContentRemaining"]
                    cs.append({"type": "NamespaceContentRemaining",
                               "status": "True", "reason":
                               "SomeResourcesRemain", "message": msg,
                               "lastTransitionTime": now_iso()})
                    old = x.get("status", {}).get("conditions") or []
                    if [(c["type"], c.get("message")) for c in old] == \
                            [(c["type"], c.get("message")) for c in cs]:
                        return False
                    x["status"]["conditions"] = cs
                st.mutate("namespaces", "", name, cond)
                continue
            with st.lock:   # only events are left
                for k in [k for k in st.objs if k[1] == name]:
                    st.delete(*k)
                st.delete("namespaces", "", name)

    # ------------------------------------------------------------ scheduler
    def nodes(self):
        """The nodes, sorted by name (read-only refs)."""
        return sorted(self.store.list_refs("nodes"),
                      key=lambda n: n["metadata"]["name"])

    def schedule(self):
        st = self.store
        allpods = st.list_refs("pods")
        pods = sorted((p for p in allpods
                       if not p["spec"].get("nodeName") and
                       not p["metadata"].get("deletionTimestamp")),
                      key=lambda p: (p["metadata"]["namespace"],
                                     p["metadata"]["name"]))
        if not pods:
            return
        nodes = self.nodes()
        by_name = {n["metadata"]["name"]: n for n in nodes}
        used = fit_mod.usage(allpods)
        hostports.note_usage(used, allpods)
        for p in pods:
            fit, why, pre = [], {}, {}
            # like the scheduler's node affinity PreFilter: a pod pinned to
            # named nodes (matchFields metadata.name, as DaemonSet pods are)
            # is checked against those nodes only; all nodes are checked
            # when none of them fits, for the FailedScheduling message
            named = _pinned_names(p["spec"])
            if named is not None:
                fit = [by_name[x] for x in sorted(named) if x in by_name and
                       not self.unfit(p["spec"], by_name[x], used)[0]]
            if not fit:
                for n in nodes:
                    rs, resolvable = self.unfit(p["spec"], n, used)
                    for r in rs:
                        why[r] = why.get(r, 0) + 1
                    if not rs:
                        fit.append(n)
                        continue
                    r = "No preemption victims found for incoming pod" \
                        if resolvable else \
                        "Preemption is not helpful for scheduling"
                    pre[r] = pre.get(r, 0) + 1
            md = p["metadata"]
            if not fit:
                msg = "0/%d nodes are available: %s. preemption: 0/%d " \
                      "nodes are available: %s." % (
                          len(nodes), fit_mod.histogram(why), len(nodes),
                          fit_mod.histogram(pre))
                if self.sched_msg.get(md["uid"]) == msg:
                    continue
                self.sched_msg[md["uid"]] = msg

                def unsched(x):
                    _set_cond(x, "PodScheduled", "False", "Unschedulable",
                              msg)
                st.mutate("pods", md["namespace"], md["name"], unsched)
                self.event(dict(p, kind="Pod", apiVersion="v1"), "Warning",
                           "FailedScheduling", msg, "default-scheduler")
                continue
            fit.sort(key=lambda n: ((used.get(n["metadata"]["name"]) or
                                     {}).get("pods", 0),
                                    n["metadata"]["name"]))
            node = fit[0]["metadata"]["name"]
            fit_mod.add_use(used, node, p["spec"])
            hostports.add(used, node, p["spec"])

            def bind(x):
                if x["spec"].get("nodeName"):
                    return False
                x["spec"]["nodeName"] = node
                _set_cond(x, "PodScheduled", "True", None, None)
            if st.mutate("pods", md["namespace"], md["name"], bind):
                self.sched_msg.pop(md["uid"], None)
                self.event(dict(p, kind="Pod", apiVersion="v1"), "Normal",
                           "Scheduled", "Successfully assigned %s/%s to %s" %
                           (md["namespace"], md["name"], node),
                           "default-scheduler")

    def unfit(self, spec, node, used):
        """(reasons, resolvable): why the node cannot take the pod in the
        scheduler's words ([] when it can), and whether preemption could
        make room (never for taints, cordons or affinity)."""
        for t in (node.get("spec") or {}).get("taints") or []:
            if t.get("effect") in ("NoSchedule", "NoExecute") and \
                    not tolerates(spec.get("tolerations"), t):
                return ["node(s) had untolerated taint {%s: %s}" % (
                    t.get("key"), t.get("value", ""))], False
        if (node.get("spec") or {}).get("unschedulable") and not tolerates(
                spec.get("tolerations"), {
                    "key": "node.kubernetes.io/unschedulable",
                    "effect": "NoSchedule"}):
            return ["node(s) were unschedulable"], False
        if not node_matches(spec, node):
            return ["node(s) didn't match Pod's node affinity/selector"], \
                False
        if hostports.misfit(spec, node, used):  # evicting the holder helps
            return hostports.misfit(spec, node, used), True
        return fit_mod.misfit(spec, node, used)

    # ------------------------------------------------------------ workloads
def _pinned_names(spec):
    """The node names a pod's required node affinity allows, when each of
    its terms has a matchFields metadata.name In requirement (None: any)."""
    terms = ((((spec.get("affinity") or {}).get("nodeAffinity") or {})
              .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
             .get("nodeSelectorTerms") or [])
    if not terms:
        return None
    names = set()
    for t in terms:
        vals = [f.get("values") or [] for f in t.get("matchFields") or []
                if f.get("key") == "metadata.name" and
                f.get("operator") == "In"]
        if not vals:
            return None
        names.update(vals[0])
    return names


def _group(res_name):
    for r in R.RESOURCES:
        if r.name == res_name:
            return r.group
    return ""


def _set_cond(pod, typ, status, reason, msg):
    st = pod.setdefault("status", {})
    cs = st.setdefault("conditions", [])
    for c in cs:
        if c["type"] == typ:
            if c["status"] != status:
                c["lastTransitionTime"] = now_iso()
            c["status"] = status
            c["lastProbeTime"] = None
            for k, v in (("reason", reason), ("message", msg)):
                if v:
                    c[k] = v
                else:
                    c.pop(k, None)
            return
    c = {"type": typ, "status": status, "lastProbeTime": None,
         "lastTransitionTime": now_iso()}
    if reason:
        c["reason"] = reason
    if msg:
        c["message"] = msg
    cs.append(c)


set_cond = _set_cond
