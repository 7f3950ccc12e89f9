#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""openapi - check Kubernetes objects against the API's OpenAPI v3 schemas
(test/kube-sim/schemas/openapi-subset.json, Kubernetes 1.35), the way the
apiserver decodes a request body.

Owns: loading the schema file, the walk of an object along its schema, and
the findings it yields, each with a field path in the apiserver's style
(spec.template.spec.containers[0].ports[0].containerPort, map entries as
metadata.labels[app]). Checked: JSON types; int32/int64 ranges;
int-or-string; RFC 3339 date-times, base64 (format byte) and resource
quantities as the Go decoder parses them; required fields (missing or
null); unknown and duplicate fields (what fieldValidation=Strict rejects
and Warn reports); $ref/allOf/oneOf/anyOf; enum; apiVersion/kind against
x-kubernetes-group-version-kind, also for embedded objects
(WatchEvent.object); the values of the enumerations the apiserver enforces
that the published schema only describes in prose (APISERVER_ENUMS).
Warnings, not errors: a null optional field (the decoder treats it as
unset), an embedded kind without a schema, duplicate entries in an
x-kubernetes-list-type set/map. Knows nothing of HTTP; kube-sim's
schema.py turns findings into the apiserver's answers.

CLI: openapi.py [--kind NAME] [--ndjson] [--quiet] [--schema-only]
                [--schemas FILE] FILE...
  Each document (a JSON file, - for stdin, or with --ndjson each non-empty
  line) is checked against the schema of its apiVersion/kind, or --kind
  (a schema name or its unique suffix: Pod, v1.WatchEvent, batch.v1.Job).
  --schema-only leaves out APISERVER_ENUMS and the quantity syntax.
  Prints each invalid document with its findings (and, unless --quiet,
  valid ones and warnings). Exit 0 all valid, 1 some invalid, 2 usage.
Python 3 standard library only.
"""
import base64
import binascii
import calendar
import json
import os
import re
import sys

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           os.pardir, "schemas", "openapi-subset.json")

# finding codes; the first ones are errors, the last three warnings
TYPE = "type"                  # wrong JSON type
RANGE = "range"                # integer outside its int32/int64 format
DATE_TIME = "date-time"        # string that time.Parse(RFC3339) rejects
BYTE = "byte"                  # string that is not standard base64
QUANTITY = "quantity"          # string that resource.ParseQuantity rejects
ONE_OF = "one-of"              # matches none of oneOf/anyOf
ENUM = "enum"                  # not in the schema's enum
NOT_SUPPORTED = "not-supported"  # not in APISERVER_ENUMS
REQUIRED = "required"          # required field missing or null
UNKNOWN = "unknown"            # field the schema does not have
DUPLICATE = "duplicate"        # key twice in one JSON object
KIND = "kind"                  # apiVersion/kind not the schema's
REF = "ref"                    # $ref to a schema the file lacks
NULL = "null"                  # warning: null for an optional field
EMBEDDED = "embedded"          # warning: embedded kind without schema
LIST_DUP = "list-dup"          # warning: repeated key in a list set/map
WARNINGS = (NULL, EMBEDDED, LIST_DUP)

_CORE = "io.k8s.api.core.v1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_RAW = "io.k8s.apimachinery.pkg.runtime.RawExtension"
_CONDITION = ("True", "False", "Unknown")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROTOCOLS = ("TCP", "UDP", "SCTP")

# Enumerations the apiserver's validation enforces (k8s.io/api constants)
# that the OpenAPI documents only name in descriptions. An empty string is
# left alone: the server defaults it.
APISERVER_ENUMS = {
    _CORE + "PodSpec": {
        "restartPolicy": ("Always", "OnFailure", "Never"),
        "dnsPolicy": ("ClusterFirstWithHostNet", "ClusterFirst", "Default",
                      "None"),
        "preemptionPolicy": ("PreemptLowerPriority", "Never")},
    _CORE + "Container": {
        "imagePullPolicy": ("Always", "Never", "IfNotPresent"),
        "terminationMessagePolicy": ("File", "FallbackToLogsOnError"),
        "restartPolicy": ("Always",)},
    _CORE + "ContainerPort": {"protocol": _PROTOCOLS},
    _CORE + "ServicePort": {"protocol": _PROTOCOLS},
    _CORE + "ServiceSpec": {"type": ("ClusterIP", "NodePort", "LoadBalancer",
                                     "ExternalName")},
    _CORE + "Toleration": {"operator": ("Exists", "Equal"),
                           "effect": _EFFECTS},
    _CORE + "Taint": {"effect": _EFFECTS},
    _CORE + "NodeSelectorRequirement": {
        "operator": ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")},
    _META + "LabelSelectorRequirement": {
        "operator": ("In", "NotIn", "Exists", "DoesNotExist")},
    _CORE + "PodStatus": {"phase": ("Pending", "Running", "Succeeded",
                                    "Failed", "Unknown")},
    _CORE + "NamespaceStatus": {"phase": ("Active", "Terminating")},
    _CORE + "PodCondition": {"status": _CONDITION},
    _CORE + "NodeCondition": {"status": _CONDITION},
    _CORE + "NamespaceCondition": {"status": _CONDITION},
    "io.k8s.api.batch.v1.JobCondition": {"status": _CONDITION},
    "io.k8s.api.apps.v1.DaemonSetCondition": {"status": _CONDITION},
    "io.k8s.api.apps.v1.DaemonSetUpdateStrategy": {
        "type": ("RollingUpdate", "OnDelete")},
    "io.k8s.api.batch.v1.JobSpec": {
        "completionMode": ("NonIndexed", "Indexed"),
        "podReplacementPolicy": ("TerminatingOrFailed", "Failed")},
    "io.k8s.api.batch.v1.PodFailurePolicyRule": {
        "action": ("FailJob", "FailIndex", "Ignore", "Count")},
    "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement": {
        "operator": ("In", "NotIn")},
    _META + "DeleteOptions": {
        "propagationPolicy": ("Orphan", "Background", "Foreground")},
    _META + "Status": {"status": ("Success", "Failure")},
    _META + "WatchEvent": {"type": ("ADDED", "MODIFIED", "DELETED",
                                    "BOOKMARK", "ERROR")},
}

_INT_BITS = {"int32": 32, "int64": 64}
# time.Parse(time.RFC3339, s): upper-case T and Z, any number of fraction
# digits, then the calendar ranges (month, day of that month, 24:60:60)
_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?"
                      r"(?:Z|[+-](\d\d):(\d\d))\Z")
# resource.ParseQuantity: sign, digits with an optional point, then one
# suffix: binary (Ki..Ei), decimal SI (n u m k M G T P E) or an exponent
_QUANTITY_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
                          r"(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?\Z")


class MapKey(str):
    """A path part that is a key of a map (additionalProperties)."""


def format_path(parts):
    """Field path in the apiserver's style: a.b[0].c, map keys as a[key]."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        elif isinstance(p, MapKey):
            out += "[%s]" % p
        else:
            out += "." + p if out else p
    return out


class Finding:
    """One thing the walk found. parts: the path as a tuple of property
    names (str), indices (int) and map keys (MapKey); path: the same
    formatted. For UNKNOWN, container and key name the dict entry so a
    caller can drop it."""

    def __init__(self, code, parts, value=None, **more):
        self.code, self.parts, self.value = code, tuple(parts), value
        self.want = more.get("want")        # type, format or alternatives
        self.got = more.get("got")          # JSON type of the value
        self.allowed = more.get("allowed")  # enum values
        self.null = more.get("null", False)  # REQUIRED: present but null
        self.container = more.get("container")
        self.key = more.get("key")

    @property
    def path(self):
        return format_path(self.parts)

    @property
    def warning(self):
        return self.code in WARNINGS

    def text(self):
        """What is wrong, without the path."""
        c, v = self.code, self.value
        if c == TYPE:
            return "expected %s, got %s" % (self.want, self.got)
        if c == RANGE:
            return "%d is out of the %s range" % (v, self.want)
        if c == DATE_TIME:
            return "%s is not an RFC 3339 date-time" % json.dumps(v)
        if c == BYTE:
            return "%s is not base64 (illegal data at input byte %d)" % (
                json.dumps(v), base64_error_at(v))
        if c == QUANTITY:
            return "%s is not a resource quantity" % json.dumps(v)
        if c == ONE_OF:
            return "expected %s, got %s" % (" or ".join(self.want), self.got)
        if c in (ENUM, NOT_SUPPORTED):
            return "Unsupported value: %s: supported values: %s" % (
                json.dumps(v), ", ".join(json.dumps(a)
                                         for a in sorted(self.allowed)))
        if c == REQUIRED:
            return "Required value" + (" (null)" if self.null else "")
        if c == UNKNOWN:
            return 'unknown field "%s"' % self.path
        if c == DUPLICATE:
            return 'duplicate field "%s"' % self.path
        if c == KIND:
            return "apiVersion/kind %s/%s is not %s" % (
                v[0], v[1], " or ".join(self.want))
        if c == REF:
            return "%s is not in the schema file" % v
        if c == NULL:
            return "null (treated as unset)"
        if c == EMBEDDED:
            return "embedded %s/%s has no schema here: not checked" % v
        if c == LIST_DUP:
            return "Duplicate value: %s" % json.dumps(v, sort_keys=True)
        return c

    def __str__(self):
        if self.code in (UNKNOWN, DUPLICATE) or not self.parts:
            return self.text()
        return "%s: %s" % (self.path, self.text())

    def __repr__(self):
        return "Finding(%s, %s)" % (self.code, self)


def base64_error_at(s):
    """Roughly where base64.StdEncoding gives up: the first byte outside
    the alphabet, else the first padding byte, else the incomplete last
    quantum."""
    ok = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    s = s.replace("\r", "").replace("\n", "")
    for i, ch in enumerate(s):
        if ch not in ok:
            return i
    return len(s) - len(s) % 4


def _base64_ok(s):
    try:
        base64.b64decode(s.replace("\r", "").replace("\n", ""), validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def _date_time_ok(s):
    m = _RFC3339.match(s)
    if not m:
        return False
    y, mo, d, h, mi, sec = (int(x) for x in m.groups()[:6])
    if not 1 <= mo <= 12 or not 1 <= d <= calendar.monthrange(y, mo)[1]:
        return False
    if h > 23 or mi > 59 or sec > 59:
        return False
    return m.group(7) is None or (int(m.group(7)) < 24 and
                                  int(m.group(8)) < 60)


def json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


class JSONObject(dict):
    """A decoded JSON object that remembers the keys it saw twice (the
    last value wins, as in Go)."""
    dups = ()


def _object_pairs(pairs):
    d, dups = JSONObject(), []
    for k, v in pairs:
        if k in d:
            dups.append(k)
        d[k] = v
    if dups:
        d.dups = tuple(dups)
    return d


def decode(text):
    """JSON text -> value whose objects are JSONObjects (ValueError)."""
    return json.loads(text, object_pairs_hook=_object_pairs)


def api_version(gvk):
    return "%s/%s" % (gvk["group"], gvk["version"]) if gvk["group"] \
        else gvk["version"]


class Schemas:
    """The components.schemas of one OpenAPI document (name -> schema)."""

    def __init__(self, components):
        self.components = components
        self._by_gvk = {}
        for name in sorted(components):
            for g in components[name].get("x-kubernetes-group-version-kind",
                                          ()):
                self._by_gvk.setdefault((api_version(g), g["kind"]), name)

    def for_kind(self, api_ver, kind):
        """Schema name for an apiVersion/kind, or None."""
        if not isinstance(api_ver, str) or not isinstance(kind, str):
            return None
        return self._by_gvk.get((api_ver, kind))

    def find(self, want):
        """Full name, or the names ending in "." + want."""
        if want in self.components:
            return [want]
        return sorted(n for n in self.components if n.endswith("." + want))

    def check(self, obj, name, apiserver=True, check_kind=True):
        """All findings for obj (decoded with decode(), for duplicates)
        against the named schema, errors and warnings in walk order.
        apiserver: also APISERVER_ENUMS and the quantity syntax.
        check_kind: apiVersion/kind at the top must be the schema's."""
        w = _Walk(self, apiserver)
        if check_kind:
            w.kind_of(obj, name, ())
        w.value(obj, self.components[name], (), name, True)
        return w.found


def load(path=SCHEMA_FILE):
    """Schemas of an OpenAPI v3 document (OSError, ValueError)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return Schemas(doc["components"]["schemas"])


class _Walk:
    def __init__(self, schemas, apiserver):
        self.s = schemas
        self.apiserver = apiserver
        self.found = []

    def add(self, code, parts, value=None, **more):
        self.found.append(Finding(code, parts, value, **more))

    def fits(self, v, schema):
        """Whether v has no error findings against schema (alone)."""
        sub = _Walk(self.s, self.apiserver)
        sub.value(v, schema, (), None, False)
        return not any(not f.warning for f in sub.found)

    def value(self, v, schema, parts, comp, required):
        """comp: the component name when schema is a named component."""
        ref = schema.get("$ref")
        if ref is not None:
            target = ref.rsplit("/", 1)[-1]
            if target not in self.s.components:
                self.add(REF, parts, ref)
                return
            self.value(v, self.s.components[target], parts, target, required)
            return
        parts_of = schema.get("allOf") or ()
        for part in parts_of:
            self.value(v, part, parts, None, required)
        if v is None:
            if parts_of:
                pass                # the allOf parts said it
            elif required:
                self.add(REQUIRED, parts, null=True)
            elif schema.get("nullable") is not True:
                self.add(NULL, parts)
            return
        got = json_type(v)
        for key in ("oneOf", "anyOf"):
            alts = schema.get(key)
            if alts and not any(self.fits(v, a) for a in alts):
                self.add(ONE_OF, parts, v, got=got,
                         want=[a.get("type", "?") for a in alts])
        want = schema.get("type")
        fmt = schema.get("format")
        int_or_string = fmt == "int-or-string" or \
            schema.get("x-kubernetes-int-or-string") is True
        if want and want != got and not (want == "number" and
                                         got == "integer") and \
                not (int_or_string and got in ("integer", "string")):
            self.add(TYPE, parts, v, want=want, got=got)
            return
        if "enum" in schema and v not in schema["enum"]:
            self.add(ENUM, parts, v, allowed=schema["enum"])
        self.formats(v, got, fmt, int_or_string, comp, parts)
        if got == "array":
            if "items" in schema:
                for i, item in enumerate(v):
                    self.value(item, schema["items"], parts + (i,), None,
                               False)
                self.list_dups(v, schema, parts)
        elif got == "object" and (want == "object" or comp or
                                  "properties" in schema or
                                  "additionalProperties" in schema):
            self.fields(v, schema, parts, comp)

    def formats(self, v, got, fmt, int_or_string, comp, parts):
        if got == "integer":
            bits = _INT_BITS.get("int32" if int_or_string else fmt)
            if bits and not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
                self.add(RANGE, parts, v, want="int%d" % bits)
        elif got == "string":
            if fmt == "date-time" and not _date_time_ok(v):
                self.add(DATE_TIME, parts, v)
            elif fmt == "byte" and not _base64_ok(v):
                self.add(BYTE, parts, v)
            elif comp == _QUANTITY and self.apiserver and \
                    not _QUANTITY_RE.match(v):
                self.add(QUANTITY, parts, v)

    def fields(self, v, schema, parts, comp):
        for k in getattr(v, "dups", ()):
            self.add(DUPLICATE, parts + (k,), key=k)
        props = schema.get("properties")
        required = schema.get("required", ())
        for k in required:
            if k not in v:
                self.add(REQUIRED, parts + (k,))
        if comp == _RAW or (schema.get("x-kubernetes-embedded-resource") and
                            props is None):
            self.embedded(v, parts)
            return
        extra = schema.get("additionalProperties")
        closed = props is not None and extra is not True and \
            schema.get("x-kubernetes-preserve-unknown-fields") is not True
        enums = APISERVER_ENUMS.get(comp, {}) if self.apiserver else {}
        for k, x in v.items():
            if props is not None and k in props:
                p = parts + (k,)
                allowed = enums.get(k)
                if allowed and isinstance(x, str) and x and x not in allowed:
                    self.add(NOT_SUPPORTED, p, x, allowed=allowed)
                self.value(x, props[k], p, None, k in required)
            elif isinstance(extra, dict):
                self.value(x, extra, parts + (MapKey(k),), None, False)
            elif closed:
                self.add(UNKNOWN, parts + (k,), container=v, key=k)

    def embedded(self, v, parts):
        av, kind = v.get("apiVersion"), v.get("kind")
        name = self.s.for_kind(av, kind)
        if name:
            self.value(v, self.s.components[name], parts, name, False)
        elif av is not None or kind is not None:
            self.add(EMBEDDED, parts, (av, kind))

    def kind_of(self, obj, name, parts):
        gvks = self.s.components[name].get("x-kubernetes-group-version-kind")
        if not gvks or not isinstance(obj, dict):
            return
        av, kind = obj.get("apiVersion"), obj.get("kind")
        if av is None and kind is None:
            return
        if not any((kind is None or g["kind"] == kind) and
                   (av is None or api_version(g) == av) for g in gvks):
            self.add(KIND, parts, (av, kind), want=sorted(
                {"%s %s" % (api_version(g), g["kind"]) for g in gvks}))

    def list_dups(self, items, schema, parts):
        kind = schema.get("x-kubernetes-list-type")
        if kind == "set":
            keys = [json.dumps(x, sort_keys=True) for x in items]
        elif kind == "map":
            names = schema.get("x-kubernetes-list-map-keys") or ()
            keys = [json.dumps({n: x.get(n) for n in names}, sort_keys=True)
                    if isinstance(x, dict) else None for x in items]
        else:
            return
        seen = set()
        for i, key in enumerate(keys):
            if key is None:
                continue
            if key in seen:
                self.add(LIST_DUP, parts + (i,), json.loads(key))
            seen.add(key)


# ---------------------------------------------------------------- CLI
def _documents(path, ndjson):
    text = sys.stdin.read() if path == "-" else open(
        path, encoding="utf-8").read()
    if not ndjson:
        yield path, text
        return
    for i, line in enumerate(text.splitlines()):
        if line.strip():
            yield "%s:%d" % (path, i + 1), line


def _describe(obj):
    if not isinstance(obj, dict):
        return json_type(obj)
    md = obj.get("metadata")
    name = md.get("name") if isinstance(md, dict) else None
    return "%s %s" % (obj.get("kind", "?"), name or "-")


def main(argv):
    kind = None
    ndjson = quiet = schema_only = False
    path = SCHEMA_FILE
    files = []
    it = iter(argv)
    for a in it:
        if a in ("--kind", "--schemas"):
            v = next(it, None)
            if v is None:
                print("%s needs a value" % a, file=sys.stderr)
                return 2
            if a == "--kind":
                kind = v
            else:
                path = v
        elif a == "--ndjson":
            ndjson = True
        elif a == "--quiet":
            quiet = True
        elif a == "--schema-only":
            schema_only = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("--"):
            print("unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        schemas = load(path)
    except (OSError, ValueError, KeyError) as e:
        print("cannot read %s: %s" % (path, e), file=sys.stderr)
        return 2
    forced = None
    if kind:
        names = schemas.find(kind)
        if len(names) != 1:
            print("--kind %s: %s" % (kind, ", ".join(names) if names else
                                     "no such schema"), file=sys.stderr)
            return 2
        forced = names[0]
    bad = 0
    for fn in files:
        try:
            docs = list(_documents(fn, ndjson))
        except OSError as e:
            print("%s: %s" % (fn, e), file=sys.stderr)
            return 2
        for label, text in docs:
            try:
                obj = decode(text)
            except ValueError as e:
                print("INVALID %s: not JSON: %s" % (label, e))
                bad += 1
                continue
            name = forced
            if name is None and isinstance(obj, dict):
                name = schemas.for_kind(obj.get("apiVersion"),
                                        obj.get("kind"))
            if name is None:
                print("INVALID %s: no schema for apiVersion %s, kind %s" % (
                    label, json.dumps(obj.get("apiVersion")) if isinstance(
                        obj, dict) else "-", json.dumps(
                        obj.get("kind")) if isinstance(obj, dict) else "-"))
                bad += 1
                continue
            found = schemas.check(obj, name, apiserver=not schema_only)
            errors = [f for f in found if not f.warning]
            if errors:
                bad += 1
                print("INVALID %s (%s) against %s: %d error(s)" % (
                    label, _describe(obj), name, len(errors)))
                for f in errors:
                    print("  - %s" % f)
            elif not quiet:
                print("VALID %s (%s) against %s" % (label, _describe(obj),
                                                    name))
            if not quiet:
                for f in found:
                    if f.warning:
                        print("  warning: %s" % f)
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(1)
