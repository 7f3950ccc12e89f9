# SPDX-License-Identifier: Apache-2.0
"""admission - what happens to an object between a valid body and the
store: generateName, namespace lifecycle checks, defaults (the ones clients
see in real answers), Pod Security Admission (enforce on pods, warn on
pods and workload templates), ClusterIP allocation, status handling on
update, immutable fields, 409s.

Used by the API for user requests and by controllers for the pods they
create (so PSA rejects a DaemonSet's pods exactly like a user's).
"""
import base64
import ipaddress
import threading

from . import cpulimit, schema, vap
from .schema import Rejected, cause, invalid
from .store import Conflict
from .util import dcopy, now_iso, rand_suffix

SERVICE_FIRST = ipaddress.ip_address("198.19.240.10")
SERVICE_LAST = ipaddress.ip_address("198.19.255.254")
# per family: (first allocated, last, the range named in errors)
SERVICE_RANGES = {
    "IPv4": (SERVICE_FIRST, SERVICE_LAST, "198.19.240.0/20"),
    "IPv6": (ipaddress.ip_address("2001:2:0:f00::10"),
             ipaddress.ip_address("2001:2:0:f00::f:fffe"),
             "2001:2:0:f00::/108")}
# IPv4 addresses once the /20 is full (~4k Services; kperf --services 10000):
# a second range, as a cluster with a second ServiceCIDR (net.py routes both)
SERVICE_EXTRA = {"IPv4": (ipaddress.ip_address("198.18.192.1"),
                          ipaddress.ip_address("198.18.255.254"))}
POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
PSA = "pod-security.kubernetes.io/"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
LEVELS = {"privileged": 0, "baseline": 1, "restricted": 2}
BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID",
                 "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID",
                 "SETPCAP", "SETUID", "SYS_CHROOT"}
RESTRICTED_VOLS = {"configMap", "csi", "downwardAPI", "emptyDir",
                   "ephemeral", "persistentVolumeClaim", "projected",
                   "secret"}


def _quoted(names):
    return ", ".join('"%s"' % n for n in names)


def _ctrs(spec):
    return (spec.get("initContainers") or []) + \
        (spec.get("containers") or [])


def _who(kind, names):
    return '%s %s' % (kind if len(names) == 1 else kind + "s",
                      _quoted(names))


def psa_violations(spec, level):
    """PodSecurity findings for a pod spec at baseline or restricted, in the
    order the real admission plugin reports them."""
    out = []
    if level < 1:
        return out
    psc = spec.get("securityContext") or {}
    ctrs = _ctrs(spec)

    def sc(c):
        return c.get("securityContext") or {}
    if level >= 2:
        bad = [c["name"] for c in ctrs
               if sc(c).get("allowPrivilegeEscalation") is not False]
        if bad:
            out.append("allowPrivilegeEscalation != false (%s must set "
                       "securityContext.allowPrivilegeEscalation=false)" %
                       _who("container", bad))
    adds = []
    for c in ctrs:
        for cap in (sc(c).get("capabilities") or {}).get("add") or []:
            if cap not in BASELINE_CAPS:
                adds.append((c["name"], cap))
    if adds:
        out.append("non-default capabilities (%s)" % "; ".join(
            'container "%s" must not include "%s" in securityContext.'
            'capabilities.add' % a for a in adds))
    if level >= 2:
        parts = []
        nodrop = [c["name"] for c in ctrs if "ALL" not in (
            (sc(c).get("capabilities") or {}).get("drop") or [])]
        if nodrop:
            parts.append('%s must set securityContext.capabilities.drop='
                         '["ALL"]' % _who("container", nodrop))
        for c in ctrs:
            bad = [x for x in (sc(c).get("capabilities") or {}).get(
                "add") or [] if x != "NET_BIND_SERVICE"]
            if bad:
                parts.append('container "%s" must not include %s in '
                             'securityContext.capabilities.add' % (
                                 c["name"], _quoted(bad)))
        if parts:
            out.append("unrestricted capabilities (%s)" % "; ".join(parts))
    hn = [k + "=true" for k in ("hostNetwork", "hostPID", "hostIPC")
          if spec.get(k)]
    if hn:
        out.append("host namespaces (%s)" % ", ".join(hn))
    hp = [v["name"] for v in spec.get("volumes") or [] if "hostPath" in v]
    if hp:
        out.append("hostPath volumes (%s)" % _who("volume", hp))
    ports = []
    for c in ctrs:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                ports.append('%s uses hostPort %d' % (
                    _who("container", [c["name"]]), p["hostPort"]))
    if ports:
        out.append("hostPort (%s)" % "; ".join(ports))
    priv = [c["name"] for c in ctrs if sc(c).get("privileged")]
    if priv:
        out.append("privileged (%s must not set securityContext.privileged"
                   "=true)" % _who("container", priv))
    if level >= 2:
        rv = []
        for v in spec.get("volumes") or []:
            t = [k for k in v if k != "name"]
            if t and t[0] not in RESTRICTED_VOLS:
                rv.append('volume "%s" uses restricted volume type "%s"' % (
                    v["name"], t[0]))
        if rv:
            out.append("restricted volume types (%s)" % "; ".join(rv))
        if psc.get("runAsNonRoot") is not True:
            bad = [c["name"] for c in ctrs
                   if sc(c).get("runAsNonRoot") is not True]
            if bad:
                out.append("runAsNonRoot != true (pod or %s must set "
                           "securityContext.runAsNonRoot=true)" %
                           _who("container", bad))
        ok_t = ("RuntimeDefault", "Localhost")
        if (psc.get("seccompProfile") or {}).get("type") not in ok_t:
            bad = [c["name"] for c in ctrs if (sc(c).get(
                "seccompProfile") or {}).get("type") not in ok_t]
            if bad:
                out.append('seccompProfile (pod or %s must set securityContext'
                           '.seccompProfile.type to "RuntimeDefault" or '
                           '"Localhost")' % _who("container", bad))
    return out


class Admission:
    def __init__(self, cfg, store, faults):
        self.cfg, self.store, self.faults = cfg, store, faults
        self.ip_lock = threading.Lock()
        self.ctrl = None  # set by main (for finalize-on-update)
        self.vap = vap.Policies(cfg, store)

    # ------------------------------------------------------------ PSA
    def psa_level(self, ns_obj, mode):
        labels = (ns_obj or {}).get("metadata", {}).get("labels") or {}
        v = labels.get(PSA + mode)
        if v is None and mode == "enforce":
            v = self.faults.psa_default or "privileged"
        return LEVELS.get(v, 0), v

    def psa(self, ns_obj, spec, kind, name, warnings, enforce):
        lvl, lname = self.psa_level(ns_obj, "enforce")
        if enforce and lvl:
            v = psa_violations(spec, lvl)
            if v:
                raise Rejected(403, "Forbidden", '%s "%s" is forbidden: '
                               'violates PodSecurity "%s:latest": %s' % (
                                   kind, name, lname, ", ".join(v)),
                               {"name": name, "kind": kind})
        wl, wname = self.psa_level(ns_obj, "warn")
        if wl:
            v = psa_violations(spec, wl)
            if v:
                warnings.append('would violate PodSecurity "%s:latest": %s' %
                                (wname, ", ".join(v)))

    # ------------------------------------------------------------ defaults
    def default_pod_spec(self, spec):
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("securityContext", {})
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("enableServiceLinks", True)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        spec.setdefault("priority", 0)
        if "serviceAccountName" not in spec:
            spec["serviceAccountName"] = spec.get("serviceAccount",
                                                  "default")
        spec["serviceAccount"] = spec["serviceAccountName"]
        for c in _ctrs(spec):
            img = c.get("image") or ""
            tagged = ":" in img.rsplit("/", 1)[-1] or "@" in img
            c.setdefault("imagePullPolicy", "IfNotPresent" if tagged and
                         not img.endswith(":latest") else "Always")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})
            for p in c.get("ports") or []:
                p.setdefault("protocol", "TCP")
            for pr in ("readinessProbe", "livenessProbe", "startupProbe"):
                if pr in c:
                    for k, v in (("timeoutSeconds", 1), ("periodSeconds", 10),
                                 ("successThreshold", 1),
                                 ("failureThreshold", 3)):
                        c[pr].setdefault(k, v)
        if spec.get("hostNetwork"):
            for c in _ctrs(spec):
                for p in c.get("ports") or []:
                    p.setdefault("hostPort", p.get("containerPort"))

    def limit_ranger(self, ns, pod):
        """The LimitRanger admission plugin for a LimitRange whose only item
        is a Container default CPU limit (the limit-range-cpu fault; kube-sim
        serves no LimitRange objects): each container without
        resources.limits.cpu gets it, and the pod the annotation the plugin
        writes. A LimitRange default adds the request too, equal to the
        limit, where the container has none."""
        cpu = self.faults.limit_range_cpu(ns)
        if not cpu:
            return
        spec = pod["spec"]
        names, bad = [], []
        for kind, lst in (("initContainers", spec.get("initContainers")),
                          ("containers", spec.get("containers"))):
            for i, c in enumerate(lst or []):
                r = c.setdefault("resources", {})
                if "cpu" in (r.get("limits") or {}):
                    continue
                r.setdefault("limits", {})["cpu"] = cpu
                req = r.setdefault("requests", {}).setdefault("cpu", cpu)
                names.append(c.get("name", ""))
                # validation then refuses a request above the limit it got
                if (cpulimit.millis(req) or 0) > (cpulimit.millis(cpu) or 0):
                    bad.append(cause(
                        "FieldValueInvalid",
                        "spec.%s[%d].resources.requests" % (kind, i),
                        'Invalid value: "%s": must be less than or equal to '
                        'cpu limit of %s' % (req, cpu)))
        if bad:
            md = pod["metadata"]
            raise invalid("Pod", "", md.get("name") or md.get("generateName"),
                          bad)
        if names:
            pod["metadata"].setdefault("annotations", {})[
                "kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + \
                "; ".join("cpu limit for container %s" % n for n in names)

    def automount_token(self, spec, sa_obj):
        """The ServiceAccount admission plugin: unless the pod or (when
        the pod does not say) its ServiceAccount sets
        automountServiceAccountToken false, a projected volume
        kube-api-access-<5 chars> (token, ca.crt, namespace) mounted
        read-only at SA_DIR in every container and init container."""
        auto = spec.get("automountServiceAccountToken")
        if auto is None:
            auto = sa_obj.get("automountServiceAccountToken")
        if auto is False:
            return
        ctrs = _ctrs(spec)
        if any(m.get("mountPath") == SA_DIR for c in ctrs
               for m in c.get("volumeMounts") or []):
            return
        name = "kube-api-access-" + rand_suffix()
        spec.setdefault("volumes", []).append({"name": name, "projected": {
            "defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607,
                                         "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [
                    {"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"fieldRef": {
                    "apiVersion": "v1", "fieldPath": "metadata.namespace"},
                    "path": "namespace"}]}}]}})
        for c in ctrs:
            c.setdefault("volumeMounts", []).append({
                "name": name, "readOnly": True, "mountPath": SA_DIR})

    def default_tolerations(self, spec):
        tol = spec.setdefault("tolerations", [])
        keys = {(t.get("key"), t.get("effect")) for t in tol}
        for k in ("node.kubernetes.io/not-ready",
                  "node.kubernetes.io/unreachable"):
            if (k, "NoExecute") not in keys and not any(
                    t.get("operator") == "Exists" and not t.get("key")
                    for t in tol):
                tol.append({"key": k, "operator": "Exists",
                            "effect": "NoExecute", "tolerationSeconds": 300})

    def defaults(self, res, obj):
        md = obj["metadata"]
        spec = obj.get("spec")
        if res == "pods":
            self.default_pod_spec(spec)
            self.default_tolerations(spec)
            obj["status"] = {"phase": "Pending", "qosClass": _qos(spec)}
        elif res in ("daemonsets", "jobs"):
            t = spec.setdefault("template", {})
            t.setdefault("metadata", {})
            self.default_pod_spec(t.setdefault("spec", {}))
            if res == "daemonsets":
                spec.setdefault("revisionHistoryLimit", 10)
                spec.setdefault("updateStrategy", {
                    "type": "RollingUpdate", "rollingUpdate": {
                        "maxUnavailable": 1, "maxSurge": 0}})
                obj["status"] = {"currentNumberScheduled": 0,
                                 "numberMisscheduled": 0,
                                 "desiredNumberScheduled": 0,
                                 "numberReady": 0}
            else:
                for k, v in (("parallelism", 1), ("completions", 1),
                             ("backoffLimit", 6), ("suspend", False),
                             ("completionMode", "NonIndexed"),
                             ("podReplacementPolicy", "TerminatingOrFailed"),
                             ("manualSelector", None)):
                    if v is not None:
                        spec.setdefault(k, v)
                if not spec.get("manualSelector"):
                    uid = md["uid"]
                    lab = {"batch.kubernetes.io/controller-uid": uid,
                           "batch.kubernetes.io/job-name": md["name"],
                           "controller-uid": uid, "job-name": md["name"]}
                    spec["selector"] = {"matchLabels": {
                        "batch.kubernetes.io/controller-uid": uid}}
                    t["metadata"].setdefault("labels", {}).update(lab)
                    md.setdefault("labels", {}).update(lab)
                obj["status"] = {}
        elif res == "cronjobs":
            for k, v in (("concurrencyPolicy", "Allow"), ("suspend", False),
                         ("successfulJobsHistoryLimit", 3),
                         ("failedJobsHistoryLimit", 1)):
                spec.setdefault(k, v)
            js = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
            t = js.setdefault("template", {})
            t.setdefault("metadata", {})
            self.default_pod_spec(t.setdefault("spec", {}))
            obj["status"] = {}
        elif res == "persistentvolumeclaims":
            spec.setdefault("volumeMode", "Filesystem")
            md.setdefault("finalizers", []).append(
                "kubernetes.io/pvc-protection")
            obj["status"] = {"phase": "Pending"}
        elif res == "namespaces":
            obj["spec"] = {"finalizers": ["kubernetes"]}
            obj["status"] = {"phase": "Active"}
            md.setdefault("labels", {})["kubernetes.io/metadata.name"] = \
                md["name"]
        elif res == "services":
            spec.setdefault("type", "ClusterIP")
            spec.setdefault("sessionAffinity", "None")
            spec.setdefault("internalTrafficPolicy", "Cluster")
            for p in spec.get("ports") or []:
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
            obj["status"] = {"loadBalancer": {}}
        elif res == "secrets":
            obj.setdefault("type", "Opaque")
            sd = obj.pop("stringData", None) or {}
            if sd:
                d = obj.setdefault("data", {})
                for k, v in sd.items():
                    d[k] = base64.b64encode(str(v).encode()).decode()

    def service_families(self, spec, name):
        """spec.ipFamilyPolicy and spec.ipFamilies defaulted and checked as
        the API server does for this cluster's families (net.FAMILIES, the
        first one primary)."""
        from .net import FAMILIES, family_of

        def bad(field, msg, reason="FieldValueInvalid"):
            return invalid("Service", "", name, [cause(reason, field, msg)])
        pol = spec.get("ipFamilyPolicy")
        fams = list(spec.get("ipFamilies") or [])
        ips = [x for x in spec.get("clusterIPs") or
               ([spec["clusterIP"]] if spec.get("clusterIP") else [])
               if x and x != "None"]
        if pol is not None and pol not in POLICIES:
            raise bad("spec.ipFamilyPolicy", 'Unsupported value: "%s": '
                      'supported values: "%s"' % (pol, '", "'.join(POLICIES)),
                      "FieldValueNotSupported")
        for k, f in enumerate(fams):
            if f not in ("IPv4", "IPv6"):
                raise bad("spec.ipFamilies[%d]" % k, 'Unsupported value: '
                          '"%s": supported values: "IPv4", "IPv6"' % f,
                          "FieldValueNotSupported")
            if f in fams[:k]:
                raise bad("spec.ipFamilies[%d]" % k, 'Duplicate value: "%s"'
                          % f, "FieldValueDuplicate")
        if len(fams) > 2:
            raise bad("spec.ipFamilies", "Too many: %d: must have at most 2 "
                      "items" % len(fams), "FieldValueTooMany")
        for k, ip in enumerate(ips):
            if k < len(fams) and fams[k] != family_of(ip):
                raise bad("spec.clusterIPs[%d]" % k, 'Invalid value: "%s": '
                          'expected an %s address' % (ip, fams[k]))
            if k >= len(fams):
                fams.append(family_of(ip))
        if pol is None:
            pol = "RequireDualStack" if len(fams) == 2 else "SingleStack"
        if pol == "SingleStack" and len(fams) > 1:
            raise bad("spec.ipFamilyPolicy", 'Invalid value: "SingleStack": '
                      'must be RequireDualStack or PreferDualStack when '
                      'multiple IP families are specified')
        if pol == "RequireDualStack" and len(FAMILIES) < 2:
            raise bad("spec.ipFamilyPolicy", 'Invalid value: '
                      '"RequireDualStack": this cluster is not configured '
                      'for dual-stack services')
        for k, f in enumerate(fams):
            if f not in FAMILIES:
                raise bad("spec.ipFamilies[%d]" % k, 'Invalid value: "%s": '
                          'not configured on this cluster' % f)
        if not fams:
            fams = [FAMILIES[0]]
        if pol != "SingleStack" and len(FAMILIES) == 2 and len(fams) == 1:
            fams.append([f for f in FAMILIES if f != fams[0]][0])
        spec["ipFamilyPolicy"] = pol
        spec["ipFamilies"] = fams
        return ips

    def _next_free(self, fam, first, last, used):
        """The first free address at or after the one allocated last (then
        from the start of the range), None when the range is full: with 10k
        Services, not a walk over every used one from the start each time."""
        cur = getattr(self, "ip_cursor", {})
        self.ip_cursor = cur
        a = cur.get(fam, first)
        size = int(last) - int(first) + 1
        for _ in range(size):
            if a > last:
                a = first
            if str(a) not in used:
                cur[fam] = a + 1
                return str(a)
            a += 1
        return None

    def alloc_cluster_ip(self, spec, name):
        want_ips = self.service_families(spec, name)
        if spec.get("clusterIP") == "None":
            spec["clusterIPs"] = ["None"]
            return
        got = []
        with self.store.lock, self.ip_lock:
            used = set()
            for o in self.store.list_refs("services"):
                used.update(o["spec"].get("clusterIPs") or
                            [o["spec"].get("clusterIP")])
            for k, fam in enumerate(spec["ipFamilies"]):
                first, last, cidr = SERVICE_RANGES[fam]
                want = want_ips[k] if k < len(want_ips) else None
                if want:
                    try:
                        a = ipaddress.ip_address(want)
                    except ValueError:
                        a = None
                    extra = SERVICE_EXTRA.get(fam)
                    if a is None or a.version != first.version or \
                            not (first <= a <= last or (
                                extra and extra[0] <= a <= extra[1])):
                        raise invalid("Service", "", name, [cause(
                            "FieldValueInvalid", "spec.clusterIPs",
                            'Invalid value: ["%s"]: failed to allocate IP %s: '
                            'the provided IP (%s) is not in the valid range. '
                            'The range of valid IPs is %s' % (
                                want, want, want, cidr))])
                    if want in used:
                        raise invalid("Service", "", name, [cause(
                            "FieldValueInvalid", "spec.clusterIPs",
                            'Invalid value: ["%s"]: failed to allocate IP %s: '
                            'provided IP is already allocated' % (want, want))])
                else:
                    want = self._next_free(fam, first, last, used)
                    if want is None and fam in SERVICE_EXTRA:
                        want = self._next_free(fam + "+", *SERVICE_EXTRA[fam],
                                               used)
                    if want is None:
                        raise invalid("Service", "", name, [cause(
                            "FieldValueInvalid", "spec.clusterIPs",
                            "failed to allocate IP: range is full")])
                got.append(want)
        spec["clusterIP"] = got[0]
        spec["clusterIPs"] = got

    # ------------------------------------------------------------ create
    def check_namespace(self, ns, res_kind):
        n = self.store.get("namespaces", "", ns)
        if n is None:
            raise Rejected(404, "NotFound", 'namespaces "%s" not found' % ns,
                           {"name": ns, "kind": "namespaces"})
        if n["metadata"].get("deletionTimestamp"):
            raise Rejected(403, "Forbidden",
                           "unable to create new content in namespace %s "
                           "because it is being terminated" % ns,
                {"name": ns, "kind": res_kind, "causes": [{
                    "reason": "NamespaceTerminating", "message":
                    'namespace %s is being terminated' % ns,
                    "field": "metadata.namespace"}]})
        return n

    def create(self, res, obj, user, dry, warnings, controller=False):
        """Admit and store (unless dry). Returns the stored object."""
        md = obj.setdefault("metadata", {})
        if md.get("resourceVersion"):
            raise Rejected(500, "InternalError", "Internal error occurred: "
                           "resourceVersion should not be set on objects to "
                           "be created")
        for k in ("uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "selfLink", "generation"):
            md.pop(k, None)
        gen = False
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + rand_suffix()
                gen = True
            else:
                raise invalid(res.kind, res.group, "", [cause(
                    "FieldValueRequired", "metadata.name",
                    "Required value: name or generateName is required")])
        if controller:
            cs = schema.semantic(res.name, obj)
            if cs:
                raise invalid(res.kind, res.group, md["name"], cs)
        ns_obj = None
        if res.namespaced:
            ns_obj = self.check_namespace(md["namespace"], res.name)
        md["uid"] = __import__("uuid").uuid4().__str__()
        self.defaults(res.name, obj)
        if res.name == "pods":
            self.limit_ranger(md["namespace"], obj)
            shown = md["generateName"] if gen else md["name"]
            self.psa(ns_obj, obj["spec"], "pods", shown, warnings, True)
        elif res.name in ("daemonsets", "jobs"):
            self.psa(ns_obj, obj["spec"]["template"]["spec"], res.name,
                     md["name"], warnings, False)
        elif res.name == "cronjobs":
            self.psa(ns_obj, obj["spec"]["jobTemplate"]["spec"]["template"][
                "spec"], res.name, md["name"], warnings, False)
        elif res.name == "services" and obj["spec"].get("type") != \
                "ExternalName":
            exists = self.store.get(res.name, md.get("namespace"),
                                    md["name"])
            if exists is None:
                self.alloc_cluster_ip(obj["spec"], md["name"])
        self.vap.check_new_policy(res)
        self.vap.admit(res, "CREATE", obj, None, user, ns_obj, warnings)
        if dry:
            if self.store.get(res.name, md.get("namespace"), md["name"]):
                raise self.exists(res, md)
            md["creationTimestamp"] = now_iso()
            return obj
        if res.name == "pods":
            sa = obj["spec"].get("serviceAccountName") or "default"
            sa_obj = self.store.get("serviceaccounts", md["namespace"], sa)
            if sa_obj is None:
                shown = md["generateName"] if gen else md["name"]
                raise Rejected(403, "Forbidden", 'pods "%s" is forbidden: '
                               'error looking up service account %s/%s: '
                               'serviceaccount "%s" not found' % (
                                   shown, md["namespace"], sa, sa),
                               {"name": shown, "kind": "pods"})
            self.automount_token(obj["spec"], sa_obj)
        for _ in range(5):
            try:
                out = self.store.create(res.name, obj)
                if res.name == "namespaces":
                    self.namespace_content(out["metadata"]["name"])
                return out
            except Conflict:
                if not gen:
                    raise self.exists(res, md)
                md["name"] = md["generateName"] + rand_suffix()
        raise self.exists(res, md)

    def namespace_content(self, ns):
        """What the ServiceAccount and root-CA controllers put in every new
        namespace (done at once here, so clients never race them)."""
        import os
        try:
            self.store.create("serviceaccounts", {
                "apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "default", "namespace": ns}})
        except Conflict:
            pass
        ca = os.path.join(self.cfg.state_dir, "pki", "ca.crt")
        try:
            with open(ca) as f:
                data = {"ca.crt": f.read()}
        except OSError:
            data = {}
        try:
            self.store.create("configmaps", {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                    "name": "kube-root-ca.crt", "namespace": ns,
                    "annotations": {"kubernetes.io/description": (
                        "Contains a CA bundle that can be used to verify the"
                        " kube-apiserver when using internal endpoints such "
                        "as the internal service IP or kubernetes.default."
                        "svc. No other usage is guaranteed across "
                        "distributions of Kubernetes clusters.")}},
                "data": data})
        except Conflict:
            pass

    def exists(self, res, md):
        cur = self.store.get(res.name, md.get("namespace"), md["name"])
        pre = "object is being deleted: " if cur and cur["metadata"].get(
            "deletionTimestamp") else ""
        return Rejected(409, "AlreadyExists", '%s%s "%s" already exists' % (
            pre, res.name + ("." + res.group if res.group else ""),
            md["name"]), {"name": md["name"], "group": res.group,
                          "kind": res.name})

    # ------------------------------------------------------------ update
    def update(self, res, cur, obj, sub, user, dry, warnings):
        md = obj["metadata"]
        cmd = cur["metadata"]
        for k in ("uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation"):
            if k in cmd:
                md[k] = cmd[k]
            else:
                md.pop(k, None)
        if sub == "status":
            new = dcopy(cur)
            new["status"] = obj.get("status") or {}
            obj = new
        elif res.name not in ("configmaps", "secrets", "serviceaccounts",
                              "events", "roles", "rolebindings",
                              "clusterroles", "clusterrolebindings"):
            if "status" in cur:
                obj["status"] = cur["status"]
            if res.name == "pods":
                self._pod_immutable(cur, obj)
            if res.name == "jobs":
                self.defaults_keep(cur, obj)
            if res.name == "services":
                obj["spec"]["clusterIP"] = cur["spec"].get("clusterIP")
                obj["spec"]["clusterIPs"] = cur["spec"].get("clusterIPs")
                for k in ("ipFamilies", "ipFamilyPolicy"):
                    if k in cur["spec"]:
                        obj["spec"][k] = cur["spec"][k]
                for p in obj["spec"].get("ports") or []:
                    p.setdefault("protocol", "TCP")
                    p.setdefault("targetPort", p.get("port"))
            if res.name == "namespaces":
                obj["spec"] = cur.get("spec", {})
                lab = md.setdefault("labels", {})
                lab["kubernetes.io/metadata.name"] = md["name"]
            if res.name in ("pods", "daemonsets"):
                spec = obj["spec"] if res.name == "pods" else \
                    obj["spec"].setdefault("template", {}).setdefault(
                        "spec", {})
                self.default_pod_spec(spec)
        if sub is None:
            ns_obj = self.store.get("namespaces", "", cmd.get("namespace")) \
                if res.namespaced else None
            self.vap.admit(res, "UPDATE", obj, cur, user, ns_obj, warnings)
        if dry:
            return obj
        bump = sub != "status" and obj.get("spec") != cur.get("spec")
        stored = self.store.update(res.name, obj,
                                   bump_generation=bump)
        if stored["metadata"].get("deletionTimestamp") and not \
                stored["metadata"].get("finalizers") and self.ctrl:
            self.ctrl.finalize(res.name, stored)
        return stored

    def defaults_keep(self, cur, obj):
        sp, cs = obj.setdefault("spec", {}), cur.get("spec", {})
        for k in ("selector", "completions", "parallelism", "backoffLimit",
                  "completionMode", "podReplacementPolicy", "suspend"):
            if k in cs and k not in sp:
                sp[k] = cs[k]
        if sp.get("template") != cs.get("template"):
            t = sp.get("template") or {}
            tl = dict((t.get("metadata") or {}).get("labels") or {})
            ctl = dict(((cs.get("template") or {}).get("metadata") or {})
                       .get("labels") or {})
            tl.update({k: v for k, v in ctl.items() if "job-name" in k or
                       "controller-uid" in k})
            t.setdefault("metadata", {})["labels"] = tl
            self.default_pod_spec(t.setdefault("spec", {}))
            if t != cs.get("template"):
                raise invalid("Job", "batch", obj["metadata"]["name"], [cause(
                    "FieldValueInvalid", "spec.template",
                    "Invalid value: core.PodTemplateSpec{...}: field is "
                    "immutable")])

    def _pod_immutable(self, cur, obj):
        a, b = dcopy(cur.get("spec") or {}), dcopy(obj.get("spec") or {})
        self.default_pod_spec(b)
        for s in (a, b):
            for c in _ctrs(s):
                c.pop("image", None)
            s.pop("activeDeadlineSeconds", None)
            s.pop("tolerations", None)
        if a != b:
            raise invalid("Pod", "", obj["metadata"]["name"], [cause(
                "FieldValueForbidden", "spec",
                "Forbidden: pod updates may not change fields other than "
                "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                "`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
                "additions to existing tolerations),`spec."
                "terminationGracePeriodSeconds` (allow it to be set to 1 if "
                "it was previously negative)")])


def _qos(spec):
    req = lim = False
    for c in spec.get("containers") or []:
        r = c.get("resources") or {}
        req = req or bool(r.get("requests"))
        lim = lim or bool(r.get("limits"))
    if not req and not lim:
        return "BestEffort"
    return "Burstable"
