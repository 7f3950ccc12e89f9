# SPDX-License-Identifier: Apache-2.0
"""schema - request-body decoding and validation, shaped like the apiserver.

Owns: the schemas kube-sim validates with (test/kube-sim/schemas/
openapi-subset.json, read by openapi.py, plus a few schemas of our own for
ConfigMap, Secret, ServiceAccount, RBAC and access reviews), turning
openapi.py's findings into the apiserver's answers (400 decode errors,
strict decoding errors or Warning headers for unknown/duplicate fields, 422
Invalid with causes) and the semantic checks the OpenAPI document cannot
express (names, images, selectors, restart policies).
Knows nothing of HTTP or storage.
"""
import re

from . import openapi

_O = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
SCHEMAS = openapi.load().components


def _ref(name):
    return {"allOf": [{"$ref": "#/components/schemas/" + name}]}


def _gvk(group, version, kind):
    return [{"group": group, "version": version, "kind": kind}]


def _smap():
    return {"type": "object", "additionalProperties": {"type": "string"}}


def _sarr():
    return {"type": "array", "items": {"type": "string"}}


def _top(group, version, kind, props, required=None):
    p = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
         "metadata": _ref(_O)}
    p.update(props)
    s = {"type": "object", "properties": p,
         "x-kubernetes-group-version-kind": _gvk(group, version, kind)}
    if required:
        s["required"] = required
    return s


_R = "io.k8s.api.rbac.v1."
_A = "io.k8s.api.authorization.v1."
EXTRA = {
    "io.k8s.api.core.v1.ConfigMap": _top("", "v1", "ConfigMap", {
        "data": _smap(), "binaryData": _smap(), "immutable": {
            "type": "boolean"}}),
    "io.k8s.api.core.v1.Secret": _top("", "v1", "Secret", {
        "data": _smap(), "stringData": _smap(), "type": {"type": "string"},
        "immutable": {"type": "boolean"}}),
    "io.k8s.api.core.v1.ServiceAccount": _top("", "v1", "ServiceAccount", {
        "automountServiceAccountToken": {"type": "boolean"},
        "imagePullSecrets": {"type": "array", "items": _ref(
            "io.k8s.api.core.v1.LocalObjectReference")},
        "secrets": {"type": "array", "items": _ref(
            "io.k8s.api.core.v1.ObjectReference")}}),
    _R + "PolicyRule": {"type": "object", "required": ["verbs"],
                        "properties": {"apiGroups": _sarr(),
                                       "resources": _sarr(),
                                       "resourceNames": _sarr(),
                                       "nonResourceURLs": _sarr(),
                                       "verbs": _sarr()}},
    _R + "Subject": {"type": "object", "required": ["kind", "name"],
                     "properties": {"apiGroup": {"type": "string"},
                                    "kind": {"type": "string"},
                                    "name": {"type": "string"},
                                    "namespace": {"type": "string"}}},
    _R + "RoleRef": {"type": "object",
                     "required": ["apiGroup", "kind", "name"],
                     "properties": {"apiGroup": {"type": "string"},
                                    "kind": {"type": "string"},
                                    "name": {"type": "string"}}},
    _R + "AggregationRule": {"type": "object", "properties": {
        "clusterRoleSelectors": {"type": "array", "items": {
            "type": "object"}}}},
    _A + "ResourceAttributes": {"type": "object", "properties": {
        k: {"type": "string"} for k in ("namespace", "verb", "group",
                                        "version", "resource",
                                        "subresource", "name")}},
    _A + "NonResourceAttributes": {"type": "object", "properties": {
        "path": {"type": "string"}, "verb": {"type": "string"}}},
    _A + "SelfSubjectAccessReviewSpec": {"type": "object", "properties": {
        "resourceAttributes": _ref(_A + "ResourceAttributes"),
        "nonResourceAttributes": _ref(_A + "NonResourceAttributes")}},
    _A + "SubjectAccessReviewStatus": {"type": "object", "properties": {
        "allowed": {"type": "boolean"}, "denied": {"type": "boolean"},
        "reason": {"type": "string"}, "evaluationError": {
            "type": "string"}}},
}
for _k, _rules in (("Role", True), ("ClusterRole", True)):
    EXTRA[_R + _k] = _top("rbac.authorization.k8s.io", "v1", _k, {
        "rules": {"type": "array", "items": _ref(_R + "PolicyRule")},
        **({"aggregationRule": _ref(_R + "AggregationRule")}
           if _k == "ClusterRole" else {})})
for _k in ("RoleBinding", "ClusterRoleBinding"):
    EXTRA[_R + _k] = _top("rbac.authorization.k8s.io", "v1", _k, {
        "subjects": {"type": "array", "items": _ref(_R + "Subject")},
        "roleRef": _ref(_R + "RoleRef")}, ["roleRef"])
EXTRA[_A + "SelfSubjectAccessReview"] = _top(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", {
        "spec": _ref(_A + "SelfSubjectAccessReviewSpec"),
        "status": _ref(_A + "SubjectAccessReviewStatus")}, ["spec"])
ALL = dict(SCHEMAS)
ALL.update(EXTRA)
_VALIDATOR = openapi.Schemas(ALL)


class Rejected(Exception):
    """An error answer: code, reason, message, details (dict or None)."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details


def parse_body(raw):
    """JSON text -> object with duplicate-key tracking (ValueError)."""
    return openapi.decode(raw)


_GO = {"integer": "number", "number": "number", "string": "string",
       "boolean": "bool", "array": "array", "object": "object"}
_GO_WANT = {"boolean": "bool", "integer": "int32",
            "object": "map[string]interface {}", "array": "[]interface {}"}


def _dotted(parts):
    """The path as the Go decoder names fields: map keys with dots too."""
    out = ""
    for p in parts:
        out += "[%d]" % p if isinstance(p, int) else ("." + p if out else p)
    return out


def _decode_msg(f, kind):
    """What the apiserver's decoder says about a finding that makes the
    body undecodable (the text after "cannot be handled as a Kind: ")."""
    path = _dotted(f.parts)
    field = "%s.%s" % (kind, re.sub(r"\[\d+\]", "", path))
    if f.code == openapi.TYPE:
        return "json: cannot unmarshal %s into Go struct field %s of type %s" \
            % (_GO.get(f.got, f.got), field, _GO_WANT.get(f.want, f.want))
    if f.code == openapi.RANGE:
        return "json: cannot unmarshal number %d into Go struct field %s " \
            "of type %s" % (f.value, field, f.want)
    if f.code == openapi.DATE_TIME:
        return 'parsing time "%s" as "2006-01-02T15:04:05Z07:00": cannot ' \
            'parse "%s" as "2006"' % (f.value, f.value)
    if f.code == openapi.QUANTITY:
        return "quantities must match the regular expression " \
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    if f.code == openapi.ONE_OF:
        return "json: cannot unmarshal value into Go struct field %s.%s" % (
            kind, path)
    if f.code == openapi.BYTE:
        return "illegal base64 data at input byte %d" % \
            openapi.base64_error_at(f.value)
    return "%s: %s" % (path, f.text()) if path else f.text()


def cause(reason, field, message):
    return {"reason": reason, "message": message, "field": field}


def invalid(kind, group, name, causes):
    """422 Invalid exactly like the apiserver's (one or a bracketed list)."""
    parts = ["%s: %s" % (c["field"], c["message"]) if c["field"] else
             c["message"] for c in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return Rejected(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name,
                                                                 text),
                    {"name": name, "group": group, "kind": kind,
                     "causes": causes})


def check(obj, schema_name, kind, api_version, mode, name_for_errors):
    """Validate a decoded body. mode: Strict|Warn|Ignore.
    Returns (warnings, causes): Warning texts and the 422 causes found by
    the schema (the caller adds its own and raises). Raises Rejected for
    400 answers. Drops unknown fields from obj unless Strict."""
    found = _VALIDATOR.check(obj, schema_name, check_kind=False)
    decode, strict, semantic, unknown = [], [], [], []
    for f in found:
        path = _dotted(f.parts)
        if f.warning or f.code == openapi.KIND:
            continue
        if f.code in (openapi.UNKNOWN, openapi.DUPLICATE):
            if f.code == openapi.UNKNOWN:
                strict.append('unknown field "%s"' % path)
                unknown.append(f)
            else:
                strict.append('duplicate field "%s"' % path)
        elif f.code == openapi.REQUIRED:
            semantic.append(cause("FieldValueRequired", path,
                                  "Required value"))
        elif f.code in (openapi.NOT_SUPPORTED, openapi.ENUM):
            semantic.append(cause(
                "FieldValueNotSupported", path,
                'Unsupported value: "%s": supported values: %s' % (
                    f.value, ", ".join('"%s"' % v
                                       for v in sorted(f.allowed)))))
        else:
            decode.append(_decode_msg(f, kind))
    prefix = '%s in version "%s" cannot be handled as a %s: ' % (
        kind, api_version.split("/")[-1], kind)
    if decode:
        raise Rejected(400, "BadRequest", prefix + decode[0])
    warnings = []
    if strict:
        if mode == "Strict":
            raise Rejected(400, "BadRequest", prefix +
                           "strict decoding error: " + ", ".join(strict))
        if mode != "Ignore":
            warnings = strict
        for f in unknown:
            f.container.pop(f.key, None)
    return warnings, semantic


# ------------------------------------------------------ semantic validation
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                         r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUB_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case "
           "alphanumeric characters, '-' or '.', and must start and end with"
           " an alphanumeric character (e.g. 'example.com', regex used for "
           "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
           "([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case "
             "alphanumeric characters or '-', and must start and end with an "
             "alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
             "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def check_name(name, label_only, field="metadata.name"):
    if label_only:
        if not DNS1123_LABEL.match(name) or len(name) > 63:
            return [cause("FieldValueInvalid", field,
                          'Invalid value: "%s": %s' % (name, LABEL_MSG))]
    elif not DNS1123_SUB.match(name) or len(name) > 253:
        return [cause("FieldValueInvalid", field,
                      'Invalid value: "%s": %s' % (name, SUB_MSG))]
    return []


DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric "
               "characters or '-', start with an alphabetic character, and "
               "end with an alphanumeric character (e.g. 'my-name',  or "
               "'abc-123', regex used for validation is "
               "'[a-z]([-a-z0-9]*[a-z0-9])?')")
QNAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' "
             "or '.', and must start and end with an alphanumeric character"
             " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
             "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LVALUE_MSG = ("a valid label must be an empty string or consist of "
              "alphanumeric characters, '-', '_' or '.', and must start and "
              "end with an alphanumeric character (e.g. 'MyValue',  or "
              "'my_value',  or '12345', regex used for validation is "
              "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def check_labels(labels, field):
    """Label keys and values, with the apiserver's messages."""
    cs = []
    for k, v in (labels or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            continue
        prefix, _, name = k.rpartition("/")
        if prefix and (not DNS1123_SUB.match(prefix) or len(prefix) > 253):
            cs.append(cause("FieldValueInvalid", field,
                            'Invalid value: "%s": prefix part %s' % (
                                k, SUB_MSG)))
        if not name or len(name) > 63:
            cs.append(cause("FieldValueInvalid", field,
                            'Invalid value: "%s": name part must be no more '
                            'than 63 characters' % k if name else
                            'Invalid value: "%s": name part must be '
                            'non-empty' % k))
        elif not QNAME.match(name):
            cs.append(cause("FieldValueInvalid", field,
                            'Invalid value: "%s": %s' % (k, QNAME_MSG)))
        if len(v) > 63:
            cs.append(cause("FieldValueInvalid", field,
                            'Invalid value: "%s": must be no more than 63 '
                            'characters' % v))
        elif v and not QNAME.match(v):
            cs.append(cause("FieldValueInvalid", field,
                            'Invalid value: "%s": %s' % (v, LVALUE_MSG)))
    return cs


def check_pod_spec(spec, path, restart_allowed=None):
    cs = []
    ctrs = spec.get("containers")
    if not ctrs:
        cs.append(cause("FieldValueRequired", path + ".containers",
                        "Required value"))
        ctrs = []
    seen = set()
    for i, c in enumerate(ctrs):
        p = "%s.containers[%d]" % (path, i)
        n = c.get("name") or ""
        if n:
            cs += check_name(n, True, p + ".name")
            if n in seen:
                cs.append(cause("FieldValueDuplicate", p + ".name",
                                'Duplicate value: "%s"' % n))
            seen.add(n)
        if not c.get("image"):
            cs.append(cause("FieldValueRequired", p + ".image",
                            "Required value"))
        for j, port in enumerate(c.get("ports") or []):
            v = port.get("containerPort")
            if isinstance(v, int) and not 1 <= v <= 65535:
                cs.append(cause("FieldValueInvalid",
                                "%s.ports[%d].containerPort" % (p, j),
                                "Invalid value: %d: must be between 1 and "
                                "65535, inclusive" % v))
    rp = spec.get("restartPolicy")
    if restart_allowed and (rp or "Always") not in restart_allowed:
        if rp:
            cs.append(cause("FieldValueNotSupported", path + ".restartPolicy",
                            'Unsupported value: "%s": supported values: %s'
                            % (rp, ", ".join('"%s"' % x
                                             for x in restart_allowed))))
        else:
            cs.append(cause("FieldValueRequired", path + ".restartPolicy",
                            "Required value: valid values: %s" % ", ".join(
                                '"%s"' % x for x in restart_allowed)))
    return cs


def _selector_matches(sel, labels):
    from .util import label_match, selector_to_reqs
    return label_match(selector_to_reqs(sel), labels)


def semantic(res, obj):
    """Checks beyond the schema; returns a list of causes (empty = fine)."""
    md = obj.get("metadata") or {}
    cs = []
    name = md.get("name")
    if name and res == "services":
        if not DNS1035.match(name) or len(name) > 63:
            cs.append(cause("FieldValueInvalid", "metadata.name",
                            'Invalid value: "%s": %s' % (name, DNS1035_MSG)))
    elif name:
        cs += check_name(name, res == "namespaces")
    if name and res == "jobs" and len(name) > 63:
        cs.append(cause("FieldValueInvalid", "metadata.name",
                        'Invalid value: "%s": must be no more than 63 '
                        'characters' % name))
    if isinstance(md.get("labels"), dict):
        cs += check_labels(md["labels"], "metadata.labels")
    spec = obj.get("spec") or {}
    if res in ("daemonsets", "jobs") and isinstance(spec, dict):
        tl = ((spec.get("template") or {}).get("metadata") or {}).get(
            "labels")
        if isinstance(tl, dict):
            cs += check_labels(tl, "spec.template.metadata.labels")
    if res == "secrets":
        import base64
        import binascii
        for k, v in (obj.get("data") or {}).items():
            try:
                base64.b64decode(v, validate=True)
            except (binascii.Error, ValueError, TypeError):
                raise Rejected(400, "BadRequest",
                               'Secret in version "v1" cannot be handled as '
                               'a Secret: illegal base64 data at input byte '
                               '%d' % _bad_b64_pos(v))
    if res == "pods":
        cs += check_pod_spec(spec, "spec")
    elif res in ("daemonsets", "jobs"):
        tmpl = spec.get("template") or {}
        tl = (tmpl.get("metadata") or {}).get("labels") or {}
        sel = spec.get("selector")
        if res == "daemonsets":
            if not sel:
                cs.append(cause("FieldValueRequired", "spec.selector",
                                "Required value"))
            elif not _selector_matches(sel, tl):
                cs.append(cause(
                    "FieldValueInvalid", "spec.template.metadata.labels",
                    "Invalid value: map[string]string{%s}: `selector` does "
                    "not match template `labels`" % ", ".join(
                        '"%s":"%s"' % kv for kv in sorted(tl.items()))))
        cs += check_pod_spec(tmpl.get("spec") or {}, "spec.template.spec",
                             ["Always"] if res == "daemonsets" else
                             ["OnFailure", "Never"])
    elif res == "cronjobs" and isinstance(spec, dict):
        from . import cron
        if name and len(name) > 52:
            cs.append(cause("FieldValueInvalid", "metadata.name",
                            'Invalid value: "%s": must be no more than 52 '
                            'characters' % name))
        if not spec.get("schedule"):
            cs.append(cause("FieldValueRequired", "spec.schedule",
                            "Required value"))
        for field, msg in cron.validate(spec):
            cs.append(cause("FieldValueNotSupported" if "Unsupported" in msg
                            else "FieldValueInvalid", field, msg))
        tmpl = ((spec.get("jobTemplate") or {}).get("spec") or {}).get(
            "template") or {}
        tl = (tmpl.get("metadata") or {}).get("labels")
        if isinstance(tl, dict):
            cs += check_labels(tl, "spec.jobTemplate.spec.template.metadata."
                               "labels")
        cs += check_pod_spec(tmpl.get("spec") or {},
                             "spec.jobTemplate.spec.template.spec",
                             ["OnFailure", "Never"])
    elif res == "persistentvolumeclaims" and isinstance(spec, dict):
        if not spec.get("accessModes"):
            cs.append(cause("FieldValueRequired", "spec.accessModes",
                            "Required value: at least 1 access mode is "
                            "required"))
        req = (spec.get("resources") or {}).get("requests") or {}
        if "storage" not in req:
            cs.append(cause("FieldValueRequired", "spec.resources[storage]",
                            "Required value"))
    elif res == "services":
        st = spec.get("type") or "ClusterIP"
        if st != "ExternalName" and not spec.get("ports"):
            cs.append(cause("FieldValueRequired", "spec.ports",
                            "Required value"))
        for i, p in enumerate(spec.get("ports") or []):
            v = p.get("port")
            if isinstance(v, int) and not 1 <= v <= 65535:
                cs.append(cause("FieldValueInvalid", "spec.ports[%d].port" % i,
                                "Invalid value: %d: must be between 1 and "
                                "65535, inclusive" % v))
    return cs


def _bad_b64_pos(v):
    ok = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    for i, ch in enumerate(str(v)):
        if ch not in ok:
            return i
    return max(0, len(str(v)) - 1)
