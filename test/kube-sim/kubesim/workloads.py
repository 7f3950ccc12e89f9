# SPDX-License-Identifier: Apache-2.0
"""workloads - the DaemonSet, Job and endpoints controllers (a mixin of
ctrl.Controllers, which owns the loop, deletion, events and scheduling).

Owns: one pod per eligible node for DaemonSets (with rolling updates), Job
pods, counting, conditions, back-off, deadlines, pod failure policy and
TTL, Endpoints objects and the per-node nftables Service rules. Pods are
created through admission, so Pod Security rejections become FailedCreate
events on the owner.
"""
import hashlib
import json
import sys
import time

from . import resources as R
from .net import API_PORT, api_ips
from .schema import Rejected
from .util import dcopy, label_match, now_iso, parse_iso, selector_to_reqs

DS_TOLERATIONS = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
]


def owner_ref(o, controller=True):
    return {"apiVersion": o["apiVersion"], "kind": o["kind"],
            "name": o["metadata"]["name"], "uid": o["metadata"]["uid"],
            "controller": controller, "blockOwnerDeletion": True}


def _ready(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _terminal(p):
    return (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def tolerates(tols, taint):
    for t in tols or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and \
                (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _expr_match(e, labels, fields):
    src = fields if e.get("_field") else labels
    k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
    v = src.get(k)
    if op == "In":
        return v is not None and v in vals
    if op == "NotIn":
        return v is None or v not in vals
    if op == "Exists":
        return v is not None
    if op == "DoesNotExist":
        return v is None
    if op in ("Gt", "Lt") and v is not None and vals:
        try:
            return int(v) > int(vals[0]) if op == "Gt" else \
                int(v) < int(vals[0])
        except ValueError:
            return False
    return False


def node_matches(spec, node):
    """nodeSelector + required node affinity of a pod spec against a node."""
    labels = node["metadata"].get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = req.get("nodeSelectorTerms")
    if terms:
        fields = {"metadata.name": node["metadata"]["name"]}
        ok = False
        for t in terms:
            exprs = list(t.get("matchExpressions") or []) + \
                [dict(e, _field=True) for e in t.get("matchFields") or []]
            if exprs and all(_expr_match(e, labels, fields) for e in exprs):
                ok = True
                break
        if not ok:
            return False
    return True


class Workloads:
    def pods_by_owner(self):
        """The stored pods (read-only refs) by the uid of their controller
        owner: one pass over the pods for all DaemonSets or Jobs, like an
        informer's index, instead of a scan of every pod per owner."""
        out = {}
        for p in self.store.list_refs("pods"):
            for r in p["metadata"].get("ownerReferences") or []:
                if r.get("controller"):
                    out.setdefault(r.get("uid"), []).append(p)
        return out

    def owned(self, uid, ns, index=None):
        """uid's pods (read-only refs), from index (pods_by_owner) if given."""
        if index is None:
            index = self.pods_by_owner()
        return sorted((p for p in index.get(uid, ())
                       if p["metadata"].get("namespace") == ns), key=_key)

    def ds_nodes(self, ds, tspec, nodes):
        """Names of the nodes the DaemonSet's pods belong on and the hash of
        its template. Both depend only on its spec (generation) and on the
        nodes, so they are computed again only when one of those changed
        (a sweep's DaemonSet names hundreds of nodes in its affinity: per
        controller pass and node that was quadratic)."""
        md = ds["metadata"]
        key = (md.get("uid"), md.get("generation"), self.store.res_rv(
            "nodes"), len(nodes))
        cache = self.__dict__.setdefault("_ds_cache", {})
        hit = cache.get(md.get("uid"))
        if hit and hit[0] == key:
            return hit[1], hit[2], hit[3]
        tols = tspec["tolerations"]
        want, keep = [], set()
        for n in nodes:
            if not node_matches(tspec, n):
                continue
            bad = {t.get("effect") for t in (n.get("spec") or {}).get(
                "taints") or [] if not tolerates(tols, t)}
            # as the DaemonSet controller: a new pod needs every NoSchedule
            # and NoExecute taint tolerated, a running one only NoExecute
            # (a node gone NotReady for its CNI keeps its pods)
            if "NoExecute" not in bad:
                keep.add(n["metadata"]["name"])
                if "NoSchedule" not in bad:
                    want.append(n["metadata"]["name"])
        h = hashlib.sha1(json.dumps(spec_template(ds), sort_keys=True)
                         .encode()).hexdigest()[:10]
        cache[md.get("uid")] = (key, want, keep, h)
        return want, keep, h

    def create_pod(self, owner, tmpl, extra_labels, name_prefix, patch_spec,
                   component, finalizers=None):
        """Create a pod for a controller through admission. Returns the pod
        or None after a FailedCreate event."""
        key = (owner["kind"], owner["metadata"]["uid"])
        nt = self.backoff.get(key)
        if nt and time.time() < nt[0]:
            return None
        md = dcopy(tmpl.get("metadata") or {})
        labels = dict(md.get("labels") or {})
        labels.update(extra_labels)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": name_prefix, "namespace":
            owner["metadata"]["namespace"], "labels": labels,
            "ownerReferences": [owner_ref(owner)]},
            "spec": dcopy(tmpl.get("spec") or {})}
        if md.get("annotations"):
            pod["metadata"]["annotations"] = md["annotations"]
        if finalizers:
            pod["metadata"]["finalizers"] = finalizers
        patch_spec(pod["spec"])
        try:
            out = self.adm.create(R.BY_GR[("", "pods")], pod, None, False, [],
                                  controller=True)
        except Rejected as e:
            d = nt[1] * 2 if nt else 1
            self.backoff[key] = (time.time() + min(d, 30), d)
            self.event(owner, "Warning", "FailedCreate",
                       "Error creating: %s" % e.message, component)
            return None
        self.backoff.pop(key, None)
        self.event(owner, "Normal", "SuccessfulCreate", "Created pod: %s" %
                   out["metadata"]["name"], component)
        return out

    def daemonsets(self):
        st = self.store
        nodes = sorted(st.list_refs("nodes"),
                       key=lambda n: n["metadata"]["name"])
        index = None
        for ds in sorted(st.list_refs("daemonsets"), key=_key):
            ds = dict(ds, kind="DaemonSet", apiVersion="apps/v1")
            md, spec = ds["metadata"], ds["spec"]
            if md.get("deletionTimestamp") or (md.get("annotations") or {}
                                               ).get("kube-sim.io/static"):
                continue
            tmpl = spec.get("template") or {}
            tspec = dict(tmpl.get("spec") or {})
            tols = list(tspec.get("tolerations") or []) + [
                {"key": k, "operator": "Exists", "effect": e}
                for k, e in DS_TOLERATIONS]
            if tspec.get("hostNetwork"):
                tols.append({"key": "node.kubernetes.io/network-unavailable",
                             "operator": "Exists", "effect": "NoSchedule"})
            tspec["tolerations"] = tols
            want, keep, h = self.ds_nodes(ds, tspec, nodes)
            if index is None:
                index = self.pods_by_owner()
            pods = self.owned(md["uid"], md["namespace"], index)
            by_node = {}
            for p in pods:
                if p["metadata"].get("deletionTimestamp"):
                    continue
                n = _pinned(p)
                if p["status"].get("phase") == "Failed" or n not in keep:
                    self.delete(R.BY_GR[("", "pods")], md["namespace"],
                                p["metadata"]["name"], {}, None, [])
                    continue
                by_node.setdefault(n, []).append(p)
            self.roll(ds, by_node, h, len(want))
            for n in want:
                if n in by_node:
                    continue

                def pin(s, node=n, tols=tols):
                    s["tolerations"] = tols
                    aff = s.setdefault("affinity", {})
                    aff["nodeAffinity"] = {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchFields": [{
                                "key": "metadata.name", "operator": "In",
                                "values": [node]}]}]}}
                p = self.create_pod(ds, tmpl, {
                    "controller-revision-hash": h,
                    "pod-template-generation": str(md.get("generation", 1))},
                    md["name"] + "-", pin, "daemonset-controller")
                if p is None:
                    break
                by_node[n] = [p]
            cur = [p for ps in by_node.values() for p in ps]
            ready = sum(1 for p in cur if _ready(p))
            updated = sum(1 for p in cur if p["metadata"].get("labels", {}).get(
                "controller-revision-hash") == h)
            status = {"currentNumberScheduled": len(cur),
                      "desiredNumberScheduled": len(want),
                      "numberMisscheduled": 0,
                      "numberReady": ready,
                      "numberAvailable": ready,
                      "updatedNumberScheduled": updated,
                      "observedGeneration": md.get("generation", 1)}
            if len(want) > ready:
                status["numberUnavailable"] = len(want) - ready

            def setst(x):
                if x.get("status") == status:
                    return False
                x["status"] = status
            st.mutate("daemonsets", md["namespace"], md["name"], setst)

    def roll(self, ds, by_node, h, desired):
        """RollingUpdate: replace pods of an old template revision, at most
        maxUnavailable at a time (OnDelete: leave them)."""
        us = ds["spec"].get("updateStrategy") or {}
        if us.get("type", "RollingUpdate") != "RollingUpdate":
            return
        mu = (us.get("rollingUpdate") or {}).get("maxUnavailable", 1)
        if isinstance(mu, str) and mu.endswith("%"):
            mu = max(1, int(desired * int(mu[:-1]) // 100))
        mu = int(mu) if str(mu).isdigit() else 1
        pods = [p for ps in by_node.values() for p in ps]
        unavailable = sum(1 for p in pods if not _ready(p)) + \
            max(0, desired - len(pods))
        for node, ps in list(by_node.items()):
            p = ps[0]
            if p["metadata"].get("labels", {}).get(
                    "controller-revision-hash") == h:
                continue
            if _ready(p) and unavailable >= mu:
                continue
            self.delete(R.BY_GR[("", "pods")], p["metadata"]["namespace"],
                        p["metadata"]["name"], {}, None, [])
            del by_node[node]
            if _ready(p):
                unavailable += 1

    def jobs(self):
        st = self.store
        jobs = {j["metadata"]["uid"] for j in st.list_refs("jobs")}
        for p in st.list_refs("pods"):
            # the job controller drops tracking finalizers of orphans
            if "batch.kubernetes.io/job-tracking" not in (
                    p["metadata"].get("finalizers") or []):
                continue
            if any(r.get("uid") in jobs for r in
                   p["metadata"].get("ownerReferences") or []):
                continue

            def unfin(x):
                x["metadata"]["finalizers"] = [
                    f for f in x["metadata"].get("finalizers") or []
                    if f != "batch.kubernetes.io/job-tracking"]
                if not x["metadata"]["finalizers"]:
                    x["metadata"].pop("finalizers")
            o = st.mutate("pods", p["metadata"]["namespace"],
                          p["metadata"]["name"], unfin)
            if o:
                self.finalize("pods", o)
        index = self.pods_by_owner()
        for job in sorted(st.list_refs("jobs"), key=_key):
            job = dict(job, kind="Job", apiVersion="batch/v1")
            try:
                self.job(job, index)
            except Rejected:
                pass

    def _job_live(self, job):
        """True while the Job of this (listed) copy is still there and not
        being deleted. Checked right before creating a pod: a Job deleted
        since the list (kperf deletes its probe Jobs with propagationPolicy
        Orphan, which marks the Job and then drops its pods' owner
        references) has no owned pods, which must not read as "start a new
        one" (a real job controller drops the deleted Job from its queue)."""
        cur = self.store.get("jobs", job["metadata"]["namespace"],
                             job["metadata"]["name"])
        return bool(cur) and cur["metadata"]["uid"] == job["metadata"][
            "uid"] and not cur["metadata"].get("deletionTimestamp")

    def job(self, job, index=None):
        st = self.store
        md, spec = job["metadata"], job["spec"]
        status = dcopy(job.get("status") or {})
        ns, name = md["namespace"], md["name"]
        done = any(c.get("type") in ("Complete", "Failed") and
                   c.get("status") == "True" for c in
                   status.get("conditions") or [])
        pods = self.owned(md["uid"], ns, index)
        pods_res = R.BY_GR[("", "pods")]
        # count finished pods once, dropping the tracking finalizer
        fail_rule = None
        for p in pods:
            fin = p["metadata"].get("finalizers") or []
            if "batch.kubernetes.io/job-tracking" not in fin:
                continue
            if not _terminal(p) and not p["metadata"].get("deletionTimestamp"):
                continue
            ph = p["status"].get("phase")
            if ph == "Succeeded":
                status["succeeded"] = status.get("succeeded", 0) + 1
            else:
                status["failed"] = status.get("failed", 0) + 1
                fail_rule = fail_rule or self.failure_rule(spec, p)

            def unfin(x):
                x["metadata"]["finalizers"] = [
                    f for f in x["metadata"].get("finalizers") or []
                    if f != "batch.kubernetes.io/job-tracking"]
                if not x["metadata"]["finalizers"]:
                    x["metadata"].pop("finalizers")
            o = st.mutate("pods", ns, p["metadata"]["name"], unfin)
            if o:
                self.finalize("pods", o)
        active = [p for p in pods if not _terminal(p) and
                  not p["metadata"].get("deletionTimestamp")]
        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if _ready(p))
        status.setdefault("succeeded", 0)
        status.setdefault("failed", 0)
        status.setdefault("terminating", 0)
        status.setdefault("uncountedTerminatedPods", {})
        if not status.get("startTime") and not spec.get("suspend"):
            status["startTime"] = now_iso()
        now = time.time()
        if not done:
            fail = None
            if fail_rule:
                fail = ("PodFailurePolicy", fail_rule)
            elif status["failed"] > spec.get("backoffLimit", 6):
                fail = ("BackoffLimitExceeded",
                        "Job has reached the specified backoff limit")
            elif spec.get("activeDeadlineSeconds") and status.get(
                    "startTime") and now - parse_iso(status["startTime"]) >= \
                    spec["activeDeadlineSeconds"]:
                fail = ("DeadlineExceeded",
                        "Job was active longer than specified deadline")
            if fail:
                for p in active:
                    self.delete(pods_res, ns, p["metadata"]["name"], {}, None,
                                [])
                t = now_iso()
                status["conditions"] = (status.get("conditions") or []) + [
                    {"type": "FailureTarget", "status": "True",
                     "reason": fail[0], "message": fail[1],
                     "lastProbeTime": t, "lastTransitionTime": t},
                    {"type": "Failed", "status": "True", "reason": fail[0],
                     "message": fail[1], "lastProbeTime": t,
                     "lastTransitionTime": t}]
                status["active"] = 0
                status["ready"] = 0
                self.event(job, "Warning", fail[0], fail[1], "job-controller")
                done = True
            elif status["succeeded"] >= spec.get("completions", 1):
                t = now_iso()
                status["conditions"] = (status.get("conditions") or []) + [
                    {"type": "SuccessCriteriaMet", "status": "True",
                     "reason": "CompletionsReached",
                     "message": "Reached expected number of succeeded pods",
                     "lastProbeTime": t, "lastTransitionTime": t},
                    {"type": "Complete", "status": "True",
                     "reason": "CompletionsReached",
                     "message": "Reached expected number of succeeded pods",
                     "lastProbeTime": t, "lastTransitionTime": t}]
                status["completionTime"] = t
                self.event(job, "Normal", "Completed", "Job completed",
                           "job-controller")
                done = True
            elif not spec.get("suspend"):
                want = min(spec.get("parallelism", 1),
                           spec.get("completions", 1) - status["succeeded"])
                if len(active) < want and now >= self.job_next.get(
                        md["uid"], 0) and self._job_live(job):
                    if status["failed"]:
                        d = min(self.cfg.job_backoff * 2 ** (
                            status["failed"] - 1), 360)
                        last = self.job_next.get(("f", md["uid"]))
                        if last != status["failed"]:
                            self.job_next[("f", md["uid"])] = status["failed"]
                            self.job_next[md["uid"]] = now + d
                            st.mutate("jobs", ns, name, lambda x: x.update(
                                status=status) if x.get("status") != status
                                else False)
                            self.wake.set()
                            return
                    p = self.create_pod(
                        job, spec.get("template") or {}, {}, name + "-",
                        lambda s: None, "job-controller",
                        ["batch.kubernetes.io/job-tracking"])
                    if p is not None:
                        status["active"] += 1
        ttl = spec.get("ttlSecondsAfterFinished")
        if done and ttl is not None:
            fin = [parse_iso(c.get("lastTransitionTime")) for c in
                   status.get("conditions") or [] if c["type"] in
                   ("Complete", "Failed")]
            if fin and fin[0] and now >= fin[0] + ttl:
                self.delete(R.BY_GR[("batch", "jobs")], ns, name,
                            {"propagationPolicy": "Background"}, None, [])
                return

        def setst(x):
            if x.get("status") == status:
                return False
            x["status"] = status
        st.mutate("jobs", ns, name, setst)

    def failure_rule(self, spec, pod):
        pfp = spec.get("podFailurePolicy") or {}
        for i, rule in enumerate(pfp.get("rules") or []):
            oe = rule.get("onExitCodes")
            if not oe:
                continue
            for cs in pod["status"].get("containerStatuses") or []:
                if oe.get("containerName") and cs["name"] != \
                        oe["containerName"]:
                    continue
                t = (cs.get("state") or {}).get("terminated")
                if not t or t.get("exitCode", 0) == 0:
                    continue
                hit = (t["exitCode"] in oe.get("values", [])) == \
                    (oe.get("operator") == "In")
                if hit and rule.get("action") == "FailJob":
                    return ("Container %s for pod %s/%s failed with exit code"
                            " %d matching FailJob rule at index %d" % (
                                cs["name"], pod["metadata"]["namespace"],
                                pod["metadata"]["name"], t["exitCode"], i))
                if hit:
                    return None
        return None

    # ------------------------------------------------------------ services
    def endpoints(self):
        st = self.store
        rules, records = [], []
        dns = getattr(self, "dns", None)
        svcs = sorted(st.list_refs("services"), key=_key)
        pods = sorted(st.list_refs("pods"), key=_key) if any(
            s["spec"].get("selector") for s in svcs) else []
        # the pods of a (namespace, selector), found once a pass: 10k
        # Services with one selector cost one scan of the pods, not 10k
        by_ns, picked = {}, {}
        # the Endpoints as stored (references, read only): no copy of each
        # per pass (10k Services)
        eps_now = {(e["metadata"]["namespace"], e["metadata"]["name"]): e
                   for e in st.list_refs("endpoints")}
        for p in pods:
            by_ns.setdefault(p["metadata"].get("namespace"), []).append(p)
        for s in svcs:
            sp, md = s["spec"], s["metadata"]
            sel = sp.get("selector")
            ready, notready = [], []
            if sel:
                k = (md["namespace"], tuple(sorted(sel.items())))
                if k not in picked:
                    picked[k] = _select(by_ns.get(md["namespace"], []), sel)
                ready, notready = picked[k]
            subsets = []
            ep_ports = []
            api_svc = (md["namespace"], md["name"]) == ("default",
                                                         "kubernetes")
            dns_svc = dns is not None and (md["namespace"], md["name"]) == (
                "kube-system", "kube-dns")
            fqdn = "%s.%s.svc.cluster.local" % (md["name"], md["namespace"])
            cips = [c for c in sp.get("clusterIPs") or [sp.get("clusterIP")]
                    if c not in (None, "", "None")]
            # the cluster DNS's records: the ClusterIPs, or a headless
            # Service's ready pods
            records.append((fqdn, cips or [_ip_of_family(p, v6) for p in ready
                                           for v6 in (False, True)]))
            for port in sp.get("ports") or []:
                ep_ports.append({"name": port.get("name"), "port": port.get(
                    "targetPort"), "protocol": port.get("protocol", "TCP")})
                # one rule per clusterIP, to the pods' addresses of its family
                for cip in sp.get("clusterIPs") or [sp.get("clusterIP")]:
                    if cip in (None, "", "None"):
                        continue
                    eps = []
                    for p in ready:
                        tp = _target_port(p, port.get("targetPort"))
                        ip = _ip_of_family(p, ":" in cip)
                        if tp and ip:
                            eps.append((ip, tp))
                    if api_svc:
                        # the API server's in-cluster address (net.py)
                        eps = [(ip, API_PORT) for ip in api_ips()
                               if (":" in ip) == (":" in cip)]
                    if dns_svc:  # dnsmasq on the underlay (dns.py)
                        eps = [(ip, 53) for ip in dns.server_ips()
                               if (":" in ip) == (":" in cip)]
                    rules.append((cip, port.get("protocol", "TCP"),
                                  port["port"], eps))
            if sel and (ready or notready):
                def addr(p):
                    return {"ip": p["status"]["podIP"], "nodeName":
                            p["spec"].get("nodeName"), "targetRef": {
                                "kind": "Pod", "name": p["metadata"]["name"],
                                "namespace": md["namespace"],
                                "uid": p["metadata"]["uid"]}}
                sub = {"ports": []}
                for e in ep_ports:
                    tp = _target_port((ready + notready)[0], e["port"])
                    q = {"port": tp, "protocol": e["protocol"]}
                    if e.get("name"):
                        q["name"] = e["name"]
                    if tp:
                        sub["ports"].append(q)
                if ready:
                    sub["addresses"] = [addr(p) for p in ready]
                if notready:
                    sub["notReadyAddresses"] = [addr(p) for p in notready]
                subsets = [sub]
            if api_svc:
                subsets = [{"addresses": [{"ip": ip} for ip in api_ips()[:1]],
                            "ports": [{"name": "https", "port": API_PORT,
                                       "protocol": "TCP"}]}]
            if sel or api_svc:
                ep = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {
                    "name": md["name"], "namespace": md["namespace"],
                    "labels": md.get("labels") or {}}, "subsets": subsets}
                cur = eps_now.get((md["namespace"], md["name"]))
                if cur is None:
                    try:
                        st.create("endpoints", ep)
                    except Exception:
                        pass
                elif cur.get("subsets") != subsets:
                    def upd(x):
                        x["subsets"] = subsets
                    st.mutate("endpoints", md["namespace"], md["name"], upd)
        names = {(s["metadata"]["namespace"], s["metadata"]["name"])
                 for s in svcs}
        for (ns, name) in eps_now:
            if (ns, name) not in names:
                st.delete("endpoints", ns, name)
        if dns is not None:
            try:
                dns.set_records(records)
            except OSError as e:
                print("kube-sim: dns records: %s" % e, file=sys.stderr)
        rules.sort()
        if rules != self.svc_rules and self.net is not None:
            try:
                self.net.set_services(rules)
                self.svc_rules = rules
            except Exception as e:
                print("kube-sim: service rules: %s" % e, file=sys.stderr)
                self.svc_rules = rules



def _select(pods, sel):
    """(ready, not ready) of the pods the selector picks that have an
    address and are not ending."""
    reqs = selector_to_reqs({"matchLabels": sel})
    ready, notready = [], []
    for p in pods:
        if not label_match(reqs, p["metadata"].get("labels")) or \
                not p["status"].get("podIP") or _terminal(p) or \
                p["metadata"].get("deletionTimestamp"):
            continue
        (ready if _ready(p) else notready).append(p)
    return ready, notready


def _key(o):
    """The order of a list: namespace, then name."""
    return (o["metadata"].get("namespace", ""), o["metadata"]["name"])


def spec_template(ds):
    return (ds.get("spec") or {}).get("template") or {}


def _ip_of_family(p, v6):
    """The pod's address of one family (podIPs), or None."""
    for e in p["status"].get("podIPs") or [{"ip": p["status"].get("podIP")}]:
        ip = e.get("ip") or ""
        if ip and (":" in ip) == v6:
            return ip
    return None


def _target_port(pod, tp):
    if isinstance(tp, int):
        return tp
    if isinstance(tp, str) and tp.isdigit():
        return int(tp)
    for c in pod["spec"].get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == tp:
                return p.get("containerPort")
    return None


def _pinned(p):
    n = p["spec"].get("nodeName")
    if n:
        return n
    terms = ((((p["spec"].get("affinity") or {}).get("nodeAffinity") or {})
              .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
             .get("nodeSelectorTerms") or [])
    for t in terms:
        for f in t.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("values"):
                return f["values"][0]
    return None
