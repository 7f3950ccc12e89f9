#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""validate_report.py - checks JSON documents against a JSON Schema, Python standard library only.

Implements the subset of JSON Schema (draft 2020-12) that docs/report-schema.json uses:
type (name or list), const, enum, properties, required, additionalProperties (bool or schema),
items (schema), minItems, maxItems, minLength, pattern, minimum, maximum, $ref to "#/...".
Keywords outside the subset make the validator fail loudly instead of passing silently.

Usage: validate_report.py SCHEMA.json DOC.json [DOC.json ...]
Exit 0 when every document is valid, 1 with one line per problem otherwise, 2 on usage errors.
"""
import json
import re
import sys

KNOWN = {
    "$schema", "$id", "$defs", "title", "description", "type", "const", "enum", "properties",
    "required", "additionalProperties", "items", "minItems", "maxItems", "minLength", "pattern",
    "minimum", "maximum", "$ref",
}

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class Validator:
    def __init__(self, schema):
        self.root = schema
        self.errors = []

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError("only local $ref supported: " + ref)
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def fail(self, path, msg):
        self.errors.append("%s: %s" % (path or "$", msg))

    def check(self, schema, value, path):
        unknown = set(schema) - KNOWN
        if unknown:
            raise ValueError("schema keyword(s) not supported: %s" % ", ".join(sorted(unknown)))
        if "$ref" in schema:
            self.check(self.resolve(schema["$ref"]), value, path)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(TYPES[t](value) for t in types):
                self.fail(path, "expected %s, got %s" % ("/".join(types), type(value).__name__))
                return
        if "const" in schema and value != schema["const"]:
            self.fail(path, "expected %r, got %r" % (schema["const"], value))
        if "enum" in schema and value not in schema["enum"]:
            self.fail(path, "%r is not one of %r" % (value, schema["enum"]))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                self.fail(path, "%r is below the minimum %r" % (value, schema["minimum"]))
            if "maximum" in schema and value > schema["maximum"]:
                self.fail(path, "%r is above the maximum %r" % (value, schema["maximum"]))
        if isinstance(value, str):
            if len(value) < schema.get("minLength", 0):
                self.fail(path, "shorter than %d" % schema["minLength"])
            if "pattern" in schema and not re.search(schema["pattern"], value):
                self.fail(path, "%r does not match %s" % (value, schema["pattern"]))
        if isinstance(value, list):
            if len(value) < schema.get("minItems", 0):
                self.fail(path, "fewer than %d items" % schema["minItems"])
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                self.fail(path, "more than %d items" % schema["maxItems"])
            if "items" in schema:
                for i, item in enumerate(value):
                    self.check(schema["items"], item, "%s[%d]" % (path, i))
        if isinstance(value, dict):
            for key in schema.get("required", []):
                if key not in value:
                    self.fail(path, "missing required %r" % key)
            props = schema.get("properties", {})
            extra = schema.get("additionalProperties", True)
            for key, item in value.items():
                sub = "%s.%s" % (path, key) if path else key
                if key in props:
                    self.check(props[key], item, sub)
                elif extra is False:
                    self.fail(sub, "unexpected property")
                elif isinstance(extra, dict):
                    self.check(extra, item, sub)


def main(argv):
    if len(argv) < 3:
        print("usage: validate_report.py SCHEMA.json DOC.json [DOC.json ...]", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    bad = 0
    for name in argv[2:]:
        try:
            with open(name) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: cannot read: %s" % (name, e), file=sys.stderr)
            bad += 1
            continue
        v = Validator(schema)
        v.check(schema, doc, "")
        for e in v.errors:
            print("%s: %s" % (name, e), file=sys.stderr)
        bad += bool(v.errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
