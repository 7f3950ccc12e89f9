// SPDX-License-Identifier: Apache-2.0
// cel_helper.mjs - the CEL evaluator kube-sim runs ValidatingAdmissionPolicies with (vap.py
// starts it once and talks to it over stdin/stdout): @bufbuild/cel, a conformant CEL
// implementation, installed by test/tools/get-cel.sh; the directory holding its node_modules
// is argv[2]. One JSON request per line, one JSON answer per line:
//   {"bindings": {NAME: JSON}, "variables": [[NAME, EXPR], ...], "exprs": [EXPR, ...]}
//   -> {"variables": {NAME: ERROR|null}, "results": [{"value": V} | {"error": TEXT}, ...]}
// JSON maps become CEL maps, integral numbers CEL ints (as in Kubernetes, where the fields are
// int32/int64), {"\u0000float": X} a CEL double (vap.py marks the JSON floats that way).
// Each variable is evaluated in order with the ones before it bound under `variables`; one
// that fails is left unbound (an expression using it then fails), as Kubernetes fails only the
// expressions that read a failing variable. Uses the strings extension (Kubernetes' CEL
// environment has it).
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { join } from "node:path";

const require = createRequire(join(process.argv[2], "package.json"));
const cel = require("@bufbuild/cel");
const { strings } = require("@bufbuild/cel/ext");

const FLOAT = "\u0000float";

function toCel(v) {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === "object") {
    if (Object.keys(v).length === 1 && FLOAT in v) return Number(v[FLOAT]);
    return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  }
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : v;
  return v;
}

function fromCel(v) {
  if (typeof v === "bigint") return Number(v);
  if (cel.isCelUint(v)) return Number(v.value);
  if (cel.isCelList(v)) return Array.from(v, fromCel);
  if (cel.isCelMap(v)) {
    const out = {};
    for (const [k, x] of v) out[String(k)] = fromCel(x);
    return out;
  }
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map) return fromCel(cel.celMap(v));
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  if (cel.isCelType(v)) return String(v);
  return v;
}

function evaluate(expr, bindings) {
  const r = cel.run(expr, bindings, { funcs: strings });
  if (cel.isCelError(r)) return { error: r.message };
  return { value: fromCel(r) };
}

function answer(req) {
  const bindings = {};
  for (const [k, v] of Object.entries(req.bindings || {})) bindings[k] = toCel(v);
  const vars = new Map();
  const varErrors = {};
  bindings.variables = vars;
  for (const [name, expr] of req.variables || []) {
    const r = cel.run(expr, bindings, { funcs: strings });
    if (cel.isCelError(r)) {
      varErrors[name] = r.message;
    } else {
      vars.set(name, r);
      varErrors[name] = null;
    }
  }
  return { variables: varErrors, results: (req.exprs || []).map((e) => evaluate(e, bindings)) };
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let out;
  try {
    out = answer(JSON.parse(line));
  } catch (e) {
    out = { fatal: String(e && e.stack ? e.stack : e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
});
