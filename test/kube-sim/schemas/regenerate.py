#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""regenerate - build test/kube-sim/schemas/openapi-subset.json, the
Kubernetes API schemas our validator (kubesim/openapi.py) checks objects
against. See SOURCE.md for where the inputs come from.

Usage: regenerate.py [--check] [--roots NAME,NAME...] INPUT.json...

INPUT: OpenAPI v3 documents (kubernetes/kubernetes
api/openapi-spec/v3/*.json, or a subset already made from them). The union
of their components.schemas is taken (a name defined twice must be defined
identically), then every $ref is followed from the roots: --roots, else the
inputs' x-subset.roots, else the roots of the file we write. Descriptions
are dropped (prose, not data); everything else of each schema is kept as
is. The output is compact JSON with sorted keys: the same inputs always give
the same bytes. --check: do not write, exit 1 if the file would change.
Python 3 standard library only.
"""
import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "openapi-subset.json")
PREFIX = "#/components/schemas/"


def strip(schema):
    """A copy of a schema object without its descriptions. Only schema
    positions are touched: a property *named* description is kept."""
    out = {}
    for k, v in schema.items():
        if k == "description":
            continue
        if k == "properties":
            v = {p: strip(s) for p, s in v.items()}
        elif k in ("items", "additionalProperties", "not") and \
                isinstance(v, dict):
            v = strip(v)
        elif k in ("allOf", "oneOf", "anyOf"):
            v = [strip(s) for s in v]
        out[k] = v
    return out


def refs(o):
    """Every schema name o refers to, anywhere inside it."""
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "$ref" and isinstance(v, str):
                yield v[len(PREFIX):] if v.startswith(PREFIX) else v
            else:
                yield from refs(v)
    elif isinstance(o, list):
        for v in o:
            yield from refs(v)


def build(docs, roots):
    pool = {}
    for path, doc in docs:
        for name, s in doc.get("components", {}).get("schemas", {}).items():
            if name in pool and pool[name] != s:
                sys.exit("%s: %s differs from an earlier input" % (path, name))
            pool[name] = s
    keep, todo = {}, list(roots)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        if name not in pool:
            sys.exit("schema %s is referenced but in no input" % name)
        keep[name] = strip(pool[name])
        todo.extend(refs(keep[name]))
    return keep


def main(argv):
    check, roots, inputs = False, None, []
    it = iter(argv)
    for a in it:
        if a == "--check":
            check = True
        elif a == "--roots":
            roots = [r for r in next(it, "").split(",") if r]
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            inputs.append(a)
    if not inputs:
        print(__doc__, file=sys.stderr)
        return 2
    docs = []
    for path in inputs:
        with open(path, encoding="utf-8") as f:
            docs.append((path, json.load(f)))
    old = None
    if os.path.exists(OUT):
        with open(OUT, encoding="utf-8") as f:
            old = json.load(f)
    meta = next((d["x-subset"] for _, d in docs if "x-subset" in d), None)
    if meta is None and old is not None:
        meta = old["x-subset"]
    if roots is None:
        if meta is None:
            sys.exit("no roots: pass --roots")
        roots = meta["roots"]
    meta = dict(meta or {}, roots=roots)
    meta["stripped"] = "descriptions removed by test/kube-sim/schemas/" \
                       "regenerate.py"
    schemas = build(docs, roots)
    out = {"openapi": "3.0.0",
           "info": {"title": "Kubernetes", "version": "unversioned"},
           "x-subset": meta, "components": {"schemas": schemas}}
    text = json.dumps(out, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False) + "\n"
    if check:
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print("%s: %s" % (OUT, "up to date" if same else "would change"))
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("%s: %d schemas from %d roots, %d bytes" % (
        OUT, len(schemas), len(roots), len(text.encode())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
