# SPDX-License-Identifier: Apache-2.0
"""resources - what kube-sim serves: the resource table, discovery
documents, field selector support and server-side Table printing (what
`kubectl get` shows). Knows nothing of storage or HTTP.
"""
import time

from .util import get_path, parse_iso

V = "io.k8s.api.core.v1."
_RW = ["create", "delete", "deletecollection", "get", "list", "patch",
       "update", "watch"]


class Res:
    def __init__(self, name, group, kind, namespaced, schema, short=(),
                 verbs=None, subs=(), singular=None, categories=()):
        self.name, self.group, self.kind = name, group, kind
        self.version = "v1"
        self.namespaced, self.schema = namespaced, schema
        self.short = list(short)
        self.verbs = verbs or _RW
        self.subs = subs
        self.singular = singular or kind.lower()
        self.categories = list(categories)

    @property
    def api_version(self):
        return self.group + "/v1" if self.group else "v1"


_R = "io.k8s.api.rbac.v1."
RESOURCES = [
    Res("namespaces", "", "Namespace", False, V + "Namespace", ["ns"],
        ["create", "delete", "get", "list", "patch", "update", "watch"],
        ["status", "finalize"]),
    Res("nodes", "", "Node", False, V + "Node", ["no"], subs=["status"]),
    Res("pods", "", "Pod", True, V + "Pod", ["po"], subs=["log", "status"],
        categories=["all"]),
    Res("services", "", "Service", True, V + "Service", ["svc"],
        ["create", "delete", "deletecollection", "get", "list", "patch",
         "update", "watch"], ["status"], categories=["all"]),
    Res("endpoints", "", "Endpoints", True, None, ["ep"],
        ["get", "list", "watch"]),
    Res("secrets", "", "Secret", True, V + "Secret"),
    Res("configmaps", "", "ConfigMap", True, V + "ConfigMap", ["cm"]),
    Res("serviceaccounts", "", "ServiceAccount", True, V + "ServiceAccount",
        ["sa"]),
    Res("events", "", "Event", True, V + "Event", ["ev"]),
    Res("daemonsets", "apps", "DaemonSet", True,
        "io.k8s.api.apps.v1.DaemonSet", ["ds"], subs=["status"],
        categories=["all"]),
    Res("jobs", "batch", "Job", True, "io.k8s.api.batch.v1.Job",
        subs=["status"], categories=["all"]),
    Res("cronjobs", "batch", "CronJob", True, "io.k8s.api.batch.v1.CronJob",
        ["cj"], subs=["status"], categories=["all"]),
    Res("persistentvolumeclaims", "", "PersistentVolumeClaim", True,
        V + "PersistentVolumeClaim", ["pvc"], subs=["status"]),
    # made by the provisioner only (storage.py): no schema of our own
    Res("persistentvolumes", "", "PersistentVolume", False, None, ["pv"],
        ["get", "list", "watch"]),
    # seeded at start (storage.seed_storage_classes): read-only, no schema of our own
    Res("storageclasses", "storage.k8s.io", "StorageClass", False, None,
        ["sc"], ["get", "list", "watch"]),
    Res("leases", "coordination.k8s.io", "Lease", True,
        "io.k8s.api.coordination.v1.Lease"),
    Res("selfsubjectaccessreviews", "authorization.k8s.io",
        "SelfSubjectAccessReview", False,
        "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
        verbs=["create"]),
    # enforced by netpol.py (nftables in each pod's namespace)
    Res("networkpolicies", "networking.k8s.io", "NetworkPolicy", True,
        "io.k8s.api.networking.v1.NetworkPolicy", ["netpol"]),
    Res("roles", "rbac.authorization.k8s.io", "Role", True, _R + "Role"),
    Res("rolebindings", "rbac.authorization.k8s.io", "RoleBinding", True,
        _R + "RoleBinding"),
    Res("clusterroles", "rbac.authorization.k8s.io", "ClusterRole", False,
        _R + "ClusterRole"),
    Res("clusterrolebindings", "rbac.authorization.k8s.io",
        "ClusterRoleBinding", False, _R + "ClusterRoleBinding"),
    # evaluated by vap.py (CEL in @bufbuild/cel); no schema of our own
    Res("validatingadmissionpolicies", "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicy", False, None, subs=["status"]),
    Res("validatingadmissionpolicybindings", "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding", False, None),
]
BY_GR = {(r.group, r.name): r for r in RESOURCES}
GROUPS = ["apps", "batch", "coordination.k8s.io", "authorization.k8s.io",
          "rbac.authorization.k8s.io", "storage.k8s.io",
          "admissionregistration.k8s.io", "networking.k8s.io"]

# field selectors the real server accepts, per resource (besides metadata.*)
FIELDS = {
    "pods": ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
             "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
             "status.podIP", "status.podIPs", "status.nominatedNodeName"],
    "events": ["involvedObject.kind", "involvedObject.namespace",
               "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion",
               "involvedObject.fieldPath", "reason", "reportingComponent",
               "source", "type"],
    "nodes": ["spec.unschedulable"],
    "namespaces": ["status.phase"],
    "jobs": ["status.successful"],
    "secrets": ["type"],
}


def field_value(res, obj, f):
    if f == "metadata.name":
        return obj["metadata"].get("name", "")
    if f == "metadata.namespace":
        return obj["metadata"].get("namespace", "")
    if f == "source" and res == "events":
        return (obj.get("source") or {}).get("component", "")
    if f == "status.podIPs":
        return ",".join(x.get("ip", "") for x in
                        (obj.get("status") or {}).get("podIPs") or [])
    v = get_path(obj, f)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "false" if f in ("spec.hostNetwork",
                                "spec.unschedulable") else ""
    return str(v)


def field_supported(res, f):
    return f in ("metadata.name", "metadata.namespace") or \
        f in FIELDS.get(res, [])


# ---------------------------------------------------------------- discovery
def api_resource_list(group):
    gv = group + "/v1" if group else "v1"
    out = []
    for r in RESOURCES:
        if r.group != group:
            continue
        d = {"name": r.name, "singularName": r.singular,
             "namespaced": r.namespaced, "kind": r.kind, "verbs": r.verbs}
        if r.short:
            d["shortNames"] = r.short
        if r.categories:
            d["categories"] = r.categories
        out.append(d)
        for s in r.subs:
            out.append({"name": r.name + "/" + s, "singularName": "",
                        "namespaced": r.namespaced, "kind": r.kind,
                        "verbs": ["get"] if s == "log" else
                        ["get", "patch", "update"]})
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": gv, "resources": out}


def api_group(g):
    return {"name": g, "versions": [{"groupVersion": g + "/v1",
                                     "version": "v1"}],
            "preferredVersion": {"groupVersion": g + "/v1", "version": "v1"}}


def api_group_list():
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [api_group(g) for g in GROUPS]}


# ---------------------------------------------------------------- tables
def human_age(ts):
    t = parse_iso(ts)
    if t is None:
        return "<unknown>"
    s = max(0, int(time.time() - t))
    if s < 120:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = m // 60
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    d = h // 24
    if d < 8:
        return "%dd%dh" % (d, h % 24) if h % 24 else "%dd" % d
    return "%dd" % d


def _col(name, typ="string", prio=0, fmt=""):
    return {"name": name, "type": typ, "format": fmt, "description": name,
            "priority": prio}


def pod_status_reason(p):
    st = p.get("status") or {}
    reason = st.get("reason") or st.get("phase") or "Pending"
    ready = running = restarts = 0
    has_running = False
    for cs in reversed(st.get("containerStatuses") or []):
        restarts += cs.get("restartCount", 0)
        s = cs.get("state") or {}
        if s.get("waiting", {}).get("reason"):
            reason = s["waiting"]["reason"]
        elif "terminated" in s and s["terminated"].get("reason"):
            reason = s["terminated"]["reason"]
        elif "terminated" in s:
            t = s["terminated"]
            reason = ("Signal:%d" % t["signal"] if t.get("signal") else
                      "ExitCode:%d" % t.get("exitCode", 0))
        elif cs.get("ready") and "running" in s:
            has_running = True
            ready += 1
        if "running" in s:
            running += 1
    if reason == "Completed" and has_running:
        reason = "Running"
    inits = st.get("initContainerStatuses") or []
    for i, cs in enumerate(inits):
        s = cs.get("state") or {}
        t = s.get("terminated")
        if t and t.get("exitCode") == 0:
            continue
        w = (s.get("waiting") or {}).get("reason")
        if t:
            reason = "Init:" + (t.get("reason") or "Error")
        elif w and w != "PodInitializing":
            reason = "Init:" + w
        else:
            reason = "Init:%d/%d" % (i, len(inits))
        break
    if p["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return reason, ready, restarts


def _pod_row(p):
    st = p.get("status") or {}
    reason, ready, restarts = pod_status_reason(p)
    n = len((p.get("spec") or {}).get("containers") or [])
    return [p["metadata"]["name"], "%d/%d" % (ready, n), reason,
            restarts, human_age(p["metadata"].get("creationTimestamp")),
            st.get("podIP") or "<none>",
            (p.get("spec") or {}).get("nodeName") or "<none>", "<none>",
            "<none>"]


def _node_row(n):
    st = n.get("status") or {}
    ready = "Unknown"
    for c in st.get("conditions") or []:
        if c.get("type") == "Ready":
            ready = {"True": "Ready", "False": "NotReady"}.get(
                c.get("status"), "Unknown")
    if (n.get("spec") or {}).get("unschedulable"):
        ready += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (n["metadata"].get("labels")
                                                or {})
                   if k.startswith("node-role.kubernetes.io/"))
    info = st.get("nodeInfo") or {}
    ip = ext = "<none>"
    for a in st.get("addresses") or []:
        if a.get("type") == "InternalIP":
            ip = a["address"]
        if a.get("type") == "ExternalIP":
            ext = a["address"]
    return [n["metadata"]["name"], ready, ",".join(roles) or "<none>",
            human_age(n["metadata"].get("creationTimestamp")),
            info.get("kubeletVersion", ""), ip, ext, info.get("osImage", ""),
            info.get("kernelVersion", ""),
            info.get("containerRuntimeVersion", "")]


def _svc_row(s):
    sp = s.get("spec") or {}
    ports = ",".join("%s/%s" % (p.get("port"), p.get("protocol", "TCP"))
                     for p in sp.get("ports") or []) or "<none>"
    sel = ",".join("%s=%s" % kv for kv in sorted((sp.get("selector") or
                                                  {}).items())) or "<none>"
    return [s["metadata"]["name"], sp.get("type", "ClusterIP"),
            sp.get("clusterIP") or "<none>", "<none>", ports,
            human_age(s["metadata"].get("creationTimestamp")), sel]


def _ctr_cols(tmpl):
    cs = ((tmpl or {}).get("spec") or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in cs), \
        ",".join(c.get("image", "") for c in cs)


def _sel_str(sel):
    parts = ["%s=%s" % kv for kv in sorted(((sel or {}).get("matchLabels")
                                            or {}).items())]
    return ",".join(parts) or "<none>"


def _ds_row(d):
    st = d.get("status") or {}
    sp = d.get("spec") or {}
    ns = ",".join("%s=%s" % kv for kv in sorted((
        (sp.get("template") or {}).get("spec") or {}).get(
            "nodeSelector", {}).items())) or "<none>"
    c, i = _ctr_cols(sp.get("template"))
    return [d["metadata"]["name"], st.get("desiredNumberScheduled", 0),
            st.get("currentNumberScheduled", 0), st.get("numberReady", 0),
            st.get("updatedNumberScheduled", 0),
            st.get("numberAvailable", 0), ns,
            human_age(d["metadata"].get("creationTimestamp")), c, i,
            _sel_str(sp.get("selector"))]


def _job_row(j):
    st = j.get("status") or {}
    sp = j.get("spec") or {}
    status = "Running"
    for c in st.get("conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Complete",
                                                          "Failed"):
            status = c["type"]
    if sp.get("suspend"):
        status = "Suspended"
    dur = ""
    t0 = parse_iso(st.get("startTime"))
    if t0:
        t1 = parse_iso(st.get("completionTime")) or time.time()
        dur = "%ds" % int(t1 - t0)
    c, i = _ctr_cols(sp.get("template"))
    return [j["metadata"]["name"], status, "%d/%d" % (
        st.get("succeeded", 0), sp.get("completions", 1)), dur,
        human_age(j["metadata"].get("creationTimestamp")), c, i,
        _sel_str(sp.get("selector"))]


def _ev_row(e):
    io = e.get("involvedObject") or {}
    last = e.get("lastTimestamp") or e.get("eventTime") or \
        e["metadata"].get("creationTimestamp")
    return [human_age(last), e.get("type", ""), e.get("reason", ""),
            "%s/%s" % ((io.get("kind") or "").lower(), io.get("name", "")),
            io.get("fieldPath", ""), (e.get("source") or {}).get(
                "component", ""), e.get("message", ""),
            human_age(e.get("firstTimestamp") or last), e.get("count", 1),
            e["metadata"]["name"]]


def _cj_row(c):
    sp, st = c.get("spec") or {}, c.get("status") or {}
    cs, im = _ctr_cols((sp.get("jobTemplate") or {}).get("spec", {}).get(
        "template"))
    last = st.get("lastScheduleTime")
    return [c["metadata"]["name"], sp.get("schedule", ""),
            sp.get("timeZone") or "<none>", bool(sp.get("suspend")),
            len(st.get("active") or []),
            human_age(last) if last else "<none>",
            human_age(c["metadata"].get("creationTimestamp")), cs, im]


def _pvc_row(c):
    sp, st = c.get("spec") or {}, c.get("status") or {}
    return [c["metadata"]["name"], st.get("phase", "Pending"),
            sp.get("volumeName", ""), (st.get("capacity") or {}).get(
                "storage", ""), ",".join(_MODES.get(m, m) for m in
                                         st.get("accessModes") or []),
            sp.get("storageClassName") or "<unset>", "<unset>",
            human_age(c["metadata"].get("creationTimestamp")),
            sp.get("volumeMode", "Filesystem")]


def _pv_row(v):
    sp, st = v.get("spec") or {}, v.get("status") or {}
    ref = sp.get("claimRef") or {}
    return [v["metadata"]["name"], (sp.get("capacity") or {}).get(
        "storage", ""), ",".join(_MODES.get(m, m) for m in
                                 sp.get("accessModes") or []),
            sp.get("persistentVolumeReclaimPolicy", ""),
            st.get("phase", ""), "%s/%s" % (ref.get("namespace"),
                                             ref.get("name")) if ref else "",
            sp.get("storageClassName", ""), "<unset>", st.get("reason", ""),
            human_age(v["metadata"].get("creationTimestamp")),
            sp.get("volumeMode", "Filesystem")]


_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX",
          "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}

TABLES = {
    "cronjobs": ([_col("Name", fmt="name"), _col("Schedule"),
                  _col("Timezone"), _col("Suspend", "boolean"),
                  _col("Active", "integer"), _col("Last Schedule"),
                  _col("Age"), _col("Containers", prio=1),
                  _col("Images", prio=1)], _cj_row),
    "persistentvolumeclaims": ([_col("Name", fmt="name"), _col("Status"),
                                _col("Volume"), _col("Capacity"),
                                _col("Access Modes"), _col("StorageClass"),
                                _col("VolumeAttributesClass"), _col("Age"),
                                _col("VolumeMode", prio=1)], _pvc_row),
    "persistentvolumes": ([_col("Name", fmt="name"), _col("Capacity"),
                           _col("Access Modes"), _col("Reclaim Policy"),
                           _col("Status"), _col("Claim"),
                           _col("StorageClass"),
                           _col("VolumeAttributesClass"), _col("Reason"),
                           _col("Age"), _col("VolumeMode", prio=1)], _pv_row),
    "pods": ([_col("Name", fmt="name"), _col("Ready"), _col("Status"),
              _col("Restarts", "string"), _col("Age"), _col("IP", prio=1),
              _col("Node", prio=1), _col("Nominated Node", prio=1),
              _col("Readiness Gates", prio=1)], _pod_row),
    "nodes": ([_col("Name", fmt="name"), _col("Status"), _col("Roles"),
               _col("Age"), _col("Version"), _col("Internal-IP", prio=1),
               _col("External-IP", prio=1), _col("OS-Image", prio=1),
               _col("Kernel-Version", prio=1),
               _col("Container-Runtime", prio=1)], _node_row),
    "namespaces": ([_col("Name", fmt="name"), _col("Status"), _col("Age")],
                   lambda n: [n["metadata"]["name"],
                              (n.get("status") or {}).get("phase", ""),
                              human_age(n["metadata"].get(
                                  "creationTimestamp"))]),
    "services": ([_col("Name", fmt="name"), _col("Type"), _col("Cluster-IP"),
                  _col("External-IP"), _col("Port(s)"), _col("Age"),
                  _col("Selector", prio=1)], _svc_row),
    "daemonsets": ([_col("Name", fmt="name"), _col("Desired", "integer"),
                    _col("Current", "integer"), _col("Ready", "integer"),
                    _col("Up-to-date", "integer"),
                    _col("Available", "integer"), _col("Node Selector"),
                    _col("Age"), _col("Containers", prio=1),
                    _col("Images", prio=1), _col("Selector", prio=1)],
                   _ds_row),
    "jobs": ([_col("Name", fmt="name"), _col("Status"), _col("Completions"),
              _col("Duration"), _col("Age"), _col("Containers", prio=1),
              _col("Images", prio=1), _col("Selector", prio=1)], _job_row),
    "events": ([_col("Last Seen"), _col("Type"), _col("Reason"),
                _col("Object"), _col("Subobject", prio=1),
                _col("Source", prio=1), _col("Message"),
                _col("First Seen", prio=1), _col("Count", "integer", 1),
                _col("Name", prio=1)], _ev_row),
    "secrets": ([_col("Name", fmt="name"), _col("Type"),
                 _col("Data", "integer"), _col("Age")],
                lambda s: [s["metadata"]["name"], s.get("type", "Opaque"),
                           len(s.get("data") or {}),
                           human_age(s["metadata"].get("creationTimestamp"))]),
    "configmaps": ([_col("Name", fmt="name"), _col("Data", "integer"),
                    _col("Age")],
                   lambda c: [c["metadata"]["name"], len(c.get("data") or {})
                              + len(c.get("binaryData") or {}),
                              human_age(c["metadata"].get(
                                  "creationTimestamp"))]),
}


def to_table(res, items, list_meta, include="Metadata"):
    cols, fn = TABLES.get(res, ([_col("Name", fmt="name"), _col("Age")],
                                lambda o: [o["metadata"]["name"], human_age(
                                    o["metadata"].get("creationTimestamp"))]))
    rows = []
    for o in items:
        if include == "Object":
            obj = o
        elif include == "None":
            obj = None
        else:
            obj = {"kind": "PartialObjectMetadata",
                   "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}
        row = {"cells": fn(o)}
        if obj is not None:
            row["object"] = obj
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "metadata": list_meta, "columnDefinitions": cols, "rows": rows}


# ---------------------------------------------------------------- OpenAPI v3
_OPENAPI_CACHE = {}


def openapi_index():
    paths = {}
    for gv in ["api/v1"] + ["apis/%s/v1" % g for g in GROUPS]:
        paths[gv] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (
            gv, "0" * 16)}
    return {"paths": paths}


def openapi_doc(gv_path, schemas):
    """A per group-version OpenAPI v3 document: the paths kubectl inspects
    (PATCH with fieldValidation, per GVK) plus every schema we validate
    with."""
    if gv_path in _OPENAPI_CACHE:
        return _OPENAPI_CACHE[gv_path]
    group = "" if gv_path == "api/v1" else gv_path.split("/")[1]
    params = [{"name": n, "in": "query", "schema": {"type": "string"},
               "uniqueItems": True} for n in
              ("dryRun", "fieldManager", "fieldValidation", "force")]
    paths = {}
    for r in RESOURCES:
        if r.group != group:
            continue
        base = "/" + gv_path + ("/namespaces/{namespace}" if r.namespaced
                                else "") + "/" + r.name
        gvk = {"group": group, "version": "v1", "kind": r.kind}
        ref = {"$ref": "#/components/schemas/" + r.schema} if r.schema \
            else {"type": "object"}
        resp = {"200": {"description": "OK", "content": {
            "application/json": {"schema": ref}}}}
        one = {"get": {"x-kubernetes-action": "get",
                       "x-kubernetes-group-version-kind": gvk,
                       "responses": resp}}
        if "patch" in r.verbs:
            one["patch"] = {"x-kubernetes-action": "patch",
                            "x-kubernetes-group-version-kind": gvk,
                            "parameters": params, "responses": resp}
        if "update" in r.verbs:
            one["put"] = {"x-kubernetes-action": "put",
                          "x-kubernetes-group-version-kind": gvk,
                          "parameters": params, "responses": resp}
        paths[base + "/{name}"] = one
        coll = {}
        if "create" in r.verbs:
            coll["post"] = {"x-kubernetes-action": "post",
                            "x-kubernetes-group-version-kind": gvk,
                            "parameters": params, "responses": resp}
        paths[base] = coll
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes",
                                        "version": "v1.35.0"},
           "paths": paths, "components": {"schemas": schemas}}
    _OPENAPI_CACHE[gv_path] = doc
    return doc
