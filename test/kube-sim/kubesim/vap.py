# SPDX-License-Identifier: Apache-2.0
"""vap - ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): the
policies and bindings in the store judge every create and update that they
match, after defaults and Pod Security, like the apiserver's admission
plugin; controllers' pod creations included (a DaemonSet's pods are refused
like a user's).

What is evaluated: the policy's matchConstraints (resourceRules,
excludeResourceRules, namespaceSelector, objectSelector) and the binding's
matchResources, the param (paramKind + the binding's paramRef by name or
selector, parameterNotFoundAction), matchConditions, variables, validations
(expression, message, messageExpression, reason) and failurePolicy; actions
Deny (a refusal) and Warn (a warning header); Audit is accepted and does
nothing. Not evaluated: auditAnnotations, the `authorizer` variable.

CEL itself is not ours: the expressions run in @bufbuild/cel, a conformant
CEL implementation, in one Node helper process (cel_helper.mjs) started at
the first evaluation; its install directory comes from cfg.cel_dir
(--cel-dir or $KUBESIM_CEL_DIR; test/tools/get-cel.sh prints it). Without
one, creating a policy is refused with that advice.
"""
import json
import os
import subprocess
import threading

from .schema import Rejected

GROUP = "admissionregistration.k8s.io"
FLOAT = "\u0000float"
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "cel_helper.mjs")
OPS = {"create": "CREATE", "update": "UPDATE"}


class CelUnavailable(Exception):
    pass


class Evaluator:
    """One `node cel_helper.mjs DIR` process, one request at a time."""

    def __init__(self, cel_dir):
        self.cel_dir = cel_dir
        self.proc = None
        self.lock = threading.Lock()

    def _start(self):
        if not self.cel_dir or not os.path.isfile(os.path.join(
                self.cel_dir, "node_modules", "@bufbuild", "cel",
                "package.json")):
            raise CelUnavailable(
                "no CEL evaluator: start kube-sim with --cel-dir "
                "$(test/tools/get-cel.sh)")
        self.proc = subprocess.Popen(
            ["node", HELPER, self.cel_dir], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, bufsize=1)

    def run(self, bindings, variables, exprs):
        """-> ({variable: error or None}, [{"value": V} | {"error": T}])"""
        line = json.dumps({"bindings": mark_floats(bindings),
                           "variables": variables, "exprs": exprs})
        with self.lock:
            for attempt in (0, 1):
                if self.proc is None or self.proc.poll() is not None:
                    self._start()
                try:
                    self.proc.stdin.write(line + "\n")
                    self.proc.stdin.flush()
                    out = self.proc.stdout.readline()
                except OSError:
                    out = ""
                if out:
                    break
                self.proc = None
            else:
                raise CelUnavailable("the CEL helper exited")
        ans = json.loads(out)
        if "fatal" in ans:
            raise CelUnavailable("CEL helper: " + ans["fatal"])
        return ans["variables"], ans["results"]

    def close(self):
        with self.lock:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.stdin.close()
                self.proc.wait(5)
            self.proc = None


def mark_floats(v):
    """JSON floats as {FLOAT: x}: CEL tells int from double, JSON does
    not (the helper makes every other number an int)."""
    if isinstance(v, dict):
        return {k: mark_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [mark_floats(x) for x in v]
    if isinstance(v, float):
        return {FLOAT: v}
    return v


def selector_matches(sel, labels):
    """A metav1.LabelSelector (None or {} matches everything)."""
    labels = labels or {}
    for k, v in ((sel or {}).get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in (sel or {}).get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def _in(values, v):
    return "*" in (values or []) or v in (values or [])


def rule_matches(rules, req):
    """NamedRuleWithOperations list vs the request (main resource only:
    kube-sim evaluates no subresource requests)."""
    for r in rules or []:
        if not (_in(r.get("apiGroups"), req["group"]) and
                _in(r.get("apiVersions"), req["version"]) and
                _in(r.get("operations"), req["operation"])):
            continue
        res = r.get("resources") or []
        if not ("*" in res or "*/*" in res or req["resource"] in res):
            continue
        scope = r.get("scope", "*")
        if scope == "Namespaced" and not req["namespace"] or \
                scope == "Cluster" and req["namespace"]:
            continue
        names = r.get("resourceNames") or []
        if names and req["name"] not in names:
            continue
        return True
    return False


def resources_match(mr, req, rules_required):
    """A MatchResources: namespace and object selectors, resource rules
    (a binding's may be empty: everything its policy matches), and the
    exclusions."""
    mr = mr or {}
    if req["namespace"] and not selector_matches(
            mr.get("namespaceSelector"), req["ns_labels"]):
        return False
    if not selector_matches(mr.get("objectSelector"), req["labels"]):
        return False
    rules = mr.get("resourceRules")
    if (rules or rules_required) and not rule_matches(rules, req):
        return False
    return not rule_matches(mr.get("excludeResourceRules"), req)


class Policies:
    """Called by Admission.create/update with the object as it would be
    stored; raises Rejected for a Deny, appends warnings for a Warn."""

    def __init__(self, cfg, store):
        self.store = store
        self.cel = Evaluator(getattr(cfg, "cel_dir", "") or
                             os.environ.get("KUBESIM_CEL_DIR", ""))

    def check_new_policy(self, res):
        """Refuse a policy kube-sim could not evaluate (no CEL)."""
        if res.name == "validatingadmissionpolicies":
            try:
                self.cel.run({}, [], ["true"])
            except CelUnavailable as e:
                raise Rejected(500, "InternalError", str(e))

    def admit(self, res, operation, obj, old, user, ns_obj, warnings):
        if res.group == GROUP:
            return
        binds, _ = self.store.list("validatingadmissionpolicybindings")
        if not binds:
            return
        md = obj.get("metadata") or {}
        req = {"group": res.group, "version": "v1", "resource": res.name,
               "operation": operation, "namespace": md.get("namespace", ""),
               "name": md.get("name", ""), "labels": md.get("labels"),
               "ns_labels": ((ns_obj or {}).get("metadata") or {}).get(
                   "labels"), "kind": res.kind, "user": user}
        for b in binds:
            spec = b.get("spec") or {}
            pol = self.store.get("validatingadmissionpolicies", "",
                                 spec.get("policyName", ""))
            if pol is None:
                continue
            pspec = pol.get("spec") or {}
            if not resources_match(pspec.get("matchConstraints"), req, True):
                continue
            if not resources_match(spec.get("matchResources"), req, False):
                continue
            for params in self._params(pspec, spec, req):
                self._one(pol, b, obj, old, req, params, ns_obj, warnings)

    def _params(self, pspec, bspec, req):
        """The param objects to evaluate with ([None] without paramKind)."""
        kind = pspec.get("paramKind")
        if not kind:
            return [None]
        ref = bspec.get("paramRef") or {}
        from . import resources as R
        av = kind.get("apiVersion", "v1")
        group = av.split("/")[0] if "/" in av else ""
        pres = next((r for r in R.RESOURCES if r.kind == kind.get("kind")
                     and r.group == group), None)
        found = []
        if pres is not None:
            ns = (ref.get("namespace") or req["namespace"]) \
                if pres.namespaced else None
            if ref.get("name"):
                o = self.store.get(pres.name, ns, ref["name"])
                found = [o] if o is not None else []
            else:
                found = self.store.list(pres.name, ns, lambda o: (
                    selector_matches(ref.get("selector"), (o.get(
                        "metadata") or {}).get("labels"))))[0]
        if found:
            return found
        if ref.get("parameterNotFoundAction") == "Allow":
            return []
        return ["missing"]

    def _bindings(self, obj, old, req, params, ns_obj):
        u = req["user"]
        return {"object": obj, "oldObject": old, "params": params,
                "namespaceObject": ns_obj,
                "request": {
                    "kind": {"group": req["group"], "version": "v1",
                             "kind": req["kind"]},
                    "resource": {"group": req["group"], "version": "v1",
                                 "resource": req["resource"]},
                    "name": req["name"], "namespace": req["namespace"],
                    "operation": req["operation"],
                    "userInfo": {"username": str(u) if u else
                                 "system:kube-controller-manager",
                                 "groups": list(getattr(u, "groups", []))},
                    "dryRun": False}}

    def _one(self, pol, b, obj, old, req, params, ns_obj, warnings):
        pspec, bspec = pol.get("spec") or {}, b.get("spec") or {}
        actions = bspec.get("validationActions") or ["Deny"]
        fail_closed = pspec.get("failurePolicy", "Fail") == "Fail"
        head = "ValidatingAdmissionPolicy '%s' with binding '%s' denied " \
            "request: " % (pol["metadata"]["name"], b["metadata"]["name"])
        if params == "missing":
            return self._deny(req, actions, head + "failed to configure "
                              "binding: no params found for policy binding "
                              "with `Deny` parameterNotFoundAction",
                              "Invalid", warnings)
        conds = pspec.get("matchConditions") or []
        vals = pspec.get("validations") or []
        exprs = [c["expression"] for c in conds] + \
            [v["expression"] for v in vals] + \
            [v.get("messageExpression") or "''" for v in vals]
        variables = [[v["name"], v["expression"]]
                     for v in pspec.get("variables") or []]
        try:
            _, res = self.cel.run(self._bindings(obj, old, req, params,
                                                 ns_obj), variables, exprs)
        except CelUnavailable as e:
            res = [{"error": str(e)}] * len(exprs)
        for c, r in zip(conds, res):
            if "error" in r:
                if fail_closed:
                    return self._deny(req, actions, head + "expression '%s'"
                                      " resulted in error: %s" % (
                                          c["expression"], r["error"]),
                                      "Invalid", warnings)
                return
            if r.get("value") is not True:
                return
        n = len(conds)
        for i, v in enumerate(vals):
            r, m = res[n + i], res[n + len(vals) + i]
            if "error" in r:
                if fail_closed:
                    return self._deny(req, actions, head + "expression '%s'"
                                      " resulted in error: %s" % (
                                          v["expression"], r["error"]),
                                      "Invalid", warnings)
                continue
            if r.get("value") is True:
                continue
            text = m.get("value") if isinstance(m.get("value"), str) and \
                m.get("value").strip() else None
            text = text or v.get("message") or \
                "failed expression: " + v["expression"]
            return self._deny(req, actions, head + text,
                              v.get("reason") or "Invalid", warnings)

    def _deny(self, req, actions, msg, reason, warnings):
        if "Warn" in actions:
            warnings.append("Validation failed for " + msg.split(
                " denied request: ")[0] + ": " + msg.split(
                    " denied request: ", 1)[-1])
        if "Deny" not in actions:
            return
        codes = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422,
                 "RequestEntityTooLarge": 413}
        code = codes.get(reason, 422)
        shown = '%s%s "%s"' % (req["resource"], "." + req["group"] if
                               req["group"] else "", req["name"])
        if reason == "Forbidden":
            text = "%s is forbidden: %s" % (shown, msg)
        else:
            text = "%s is invalid: : %s" % (shown, msg)
        raise Rejected(code, reason, text, {
            "name": req["name"], "group": req["group"],
            "kind": req["resource"],
            "causes": [{"message": msg, "field": ""}]})
