# SPDX-License-Identifier: Apache-2.0
"""patch - PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
and the strategic merge patch kubectl sends (merge keys for the lists of
the kinds kube-sim serves, $patch / $retainKeys / $setElementOrder /
$deleteFromPrimitiveList directives). Server-side apply bodies are treated
as a merge patch. Knows nothing of storage.
"""
from .schema import Rejected
from .util import dcopy

# list field name -> merge key (strategic merge patch)
MERGE_KEYS = {
    "containers": "name", "initContainers": "name",
    "ephemeralContainers": "name", "env": "name", "volumes": "name",
    "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "imagePullSecrets": "name", "conditions": "type",
    "ownerReferences": "uid", "hostAliases": "ip", "addresses": "type",
    "taints": "key", "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name", "schedulingGates": "name",
    "podIPs": "ip", "hostIPs": "ip", "containerStatuses": "name",
    "images": None,
}
PORT_KEYS = {"ports": ("containerPort", "port")}
SET_LISTS = {"finalizers"}


def merge_patch(base, p):
    if not isinstance(p, dict):
        return dcopy(p)
    out = dcopy(base) if isinstance(base, dict) else {}
    for k, v in p.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise Rejected(422, "Invalid", "invalid JSON pointer %r" % path)
    return [t.replace("~1", "/").replace("~0", "~")
            for t in path[1:].split("/")]


def _walk(doc, toks):
    cur = doc
    for t in toks:
        cur = cur[int(t)] if isinstance(cur, list) else cur[t]
    return cur


def json_patch(doc, ops):
    doc = dcopy(doc)
    if not isinstance(ops, list):
        raise Rejected(400, "BadRequest", "json patch must be a list")
    for op in ops:
        try:
            toks = _ptr(op.get("path", ""))
            kind = op.get("op")
            if kind == "test":
                if _walk(doc, toks) != op.get("value"):
                    raise Rejected(422, "Invalid",
                                   "testing value %s failed" % op["path"])
                continue
            if kind in ("move", "copy"):
                src = _ptr(op["from"])
                val = dcopy(_walk(doc, src))
                if kind == "move":
                    par = _walk(doc, src[:-1])
                    if isinstance(par, list):
                        par.pop(int(src[-1]))
                    else:
                        del par[src[-1]]
                op = {"op": "add", "path": op["path"], "value": val}
                kind = "add"
            par = _walk(doc, toks[:-1])
            last = toks[-1]
            if kind == "add":
                if isinstance(par, list):
                    if last == "-":
                        par.append(dcopy(op["value"]))
                    else:
                        par.insert(int(last), dcopy(op["value"]))
                else:
                    par[last] = dcopy(op["value"])
            elif kind == "remove":
                if isinstance(par, list):
                    par.pop(int(last))
                else:
                    del par[last]
            elif kind == "replace":
                if isinstance(par, list):
                    par[int(last)] = dcopy(op["value"])
                else:
                    if last not in par:
                        raise KeyError(last)
                    par[last] = dcopy(op["value"])
            else:
                raise Rejected(400, "BadRequest",
                               "Unexpected kind: %s" % kind)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise Rejected(422, "Invalid", "the server rejected our request "
                           "due to an error in our request: %s" % e)
    return doc


def _merge_key(field, items):
    if field in PORT_KEYS:
        for k in PORT_KEYS[field]:
            if items and all(isinstance(i, dict) and k in i for i in items):
                return k
        return None
    return MERGE_KEYS.get(field)


def strategic(base, p):
    if not isinstance(p, dict):
        return dcopy(p)
    if p.get("$patch") == "replace":
        q = dict(p)
        q.pop("$patch")
        return strategic({}, q)
    if p.get("$patch") == "delete":
        return None
    out = dcopy(base) if isinstance(base, dict) else {}
    retain = p.get("$retainKeys")
    for k, v in p.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys",
                                                       "$patch"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            f = k.split("/", 1)[1]
            out[f] = [x for x in out.get(f) or [] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list):
            out[k] = _merge_list(k, out.get(k), v)
        elif isinstance(v, dict):
            r = strategic(out.get(k), v)
            if r is None:
                out.pop(k, None)
            else:
                out[k] = r
        else:
            out[k] = v
    if retain is not None:
        for k in list(out):
            if k not in retain:
                del out[k]
    return out


def _merge_list(field, cur, v):
    cur = cur if isinstance(cur, list) else []
    if field in SET_LISTS:
        out = list(cur)
        for x in v:
            if x not in out:
                out.append(x)
        return out
    key = _merge_key(field, [x for x in v if isinstance(x, dict)] +
                     [x for x in cur if isinstance(x, dict)])
    if not key or not all(isinstance(x, dict) for x in v):
        return dcopy([x for x in v if not (isinstance(x, dict) and
                                           x.get("$patch"))])
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in v):
        return dcopy([x for x in v if x.get("$patch") != "replace"])
    out = dcopy(cur)
    for item in v:
        idx = next((i for i, c in enumerate(out) if isinstance(c, dict) and
                    c.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic({}, item))
        else:
            out[idx] = strategic(out[idx], item)
    return out


def apply(content_type, base, p):
    if content_type == "application/json-patch+json":
        return json_patch(base, p)
    if content_type == "application/merge-patch+json" or \
            content_type == "application/apply-patch+yaml":
        return merge_patch(base, p)
    if content_type == "application/strategic-merge-patch+json":
        return strategic(base, p)
    raise Rejected(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - "
                   "accepted media types include: "
                   "application/json-patch+json, "
                   "application/merge-patch+json, "
                   "application/apply-patch+yaml")
