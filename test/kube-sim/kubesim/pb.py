# SPDX-License-Identifier: Apache-2.0
"""pb - just enough Kubernetes protobuf (application/vnd.kubernetes.protobuf)
to accept what kubectl's typed clients send for small kinds: `kubectl auth
can-i` (SelfSubjectAccessReview), `kubectl create namespace|secret|
configmap`. Decodes the "k8s\\0" envelope (runtime.Unknown) and maps field
numbers from k8s.io/api generated.proto to JSON names. Other kinds are
answered with 415 by the caller. Answers are always JSON.
"""


class PbError(ValueError):
    pass


def _varint(b, i):
    x = s = 0
    while True:
        if i >= len(b):
            raise PbError("truncated varint")
        c = b[i]
        i += 1
        x |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return x, i


def fields(b):
    """bytes -> list of (field number, wire type, value)."""
    out, i = [], 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise PbError("unsupported wire type %d" % wt)
        out.append((num, wt, v))
    return out


S, I, B, BYTES = "s", "i", "b", "y"
# message schemas: {field: (json name, type, repeated)}; type is S/I/B/BYTES,
# a nested schema dict, or ("map", valuetype)
META = {1: ("name", S, 0), 2: ("generateName", S, 0),
        3: ("namespace", S, 0), 5: ("uid", S, 0),
        6: ("resourceVersion", S, 0), 11: ("labels", ("map", S), 0),
        12: ("annotations", ("map", S), 0), 14: ("finalizers", S, 1)}
RES_ATTR = {1: ("namespace", S, 0), 2: ("verb", S, 0), 3: ("group", S, 0),
            4: ("version", S, 0), 5: ("resource", S, 0),
            6: ("subresource", S, 0), 7: ("name", S, 0)}
NONRES_ATTR = {1: ("path", S, 0), 2: ("verb", S, 0)}
KINDS = {
    "SelfSubjectAccessReview": {
        1: ("metadata", META, 0), 2: ("spec", {
            1: ("resourceAttributes", RES_ATTR, 0),
            2: ("nonResourceAttributes", NONRES_ATTR, 0)}, 0)},
    "Namespace": {1: ("metadata", META, 0),
                  2: ("spec", {1: ("finalizers", S, 1)}, 0)},
    "Secret": {1: ("metadata", META, 0), 2: ("data", ("map", BYTES), 0),
               3: ("type", S, 0), 4: ("stringData", ("map", S), 0),
               5: ("immutable", B, 0)},
    "ConfigMap": {1: ("metadata", META, 0), 2: ("data", ("map", S), 0),
                  3: ("binaryData", ("map", BYTES), 0),
                  4: ("immutable", B, 0)},
}


def _conv(v, typ):
    import base64
    if typ == S:
        return v.decode("utf-8")
    if typ == BYTES:
        return base64.b64encode(v).decode()
    if typ == B:
        return bool(v)
    if typ == I:
        return v
    return decode_msg(v, typ)


def decode_msg(b, schema):
    out = {}
    for num, _, v in fields(b):
        if num not in schema:
            continue
        name, typ, rep = schema[num]
        if isinstance(typ, tuple):
            kv = dict((n, x) for n, _, x in fields(v))
            out.setdefault(name, {})[kv.get(1, b"").decode()] = _conv(
                kv.get(2, b""), typ[1])
        elif rep:
            out.setdefault(name, []).append(_conv(v, typ))
        else:
            out[name] = _conv(v, typ)
    return out


def decode(body):
    """Envelope bytes -> JSON-shaped dict. Raises PbError if the kind is not
    one kube-sim understands in protobuf."""
    if body[:4] != b"k8s\x00":
        raise PbError("missing protobuf envelope")
    unk = {n: v for n, _, v in fields(body[4:])}
    tm = {n: v.decode() for n, _, v in fields(unk.get(1, b""))}
    av, kind = tm.get(1, ""), tm.get(2, "")
    if kind not in KINDS:
        raise PbError("protobuf for %s is not supported by kube-sim; send "
                      "JSON" % (kind or "this kind"))
    obj = decode_msg(unk.get(2, b""), KINDS[kind])
    obj["apiVersion"], obj["kind"] = av, kind
    return obj
