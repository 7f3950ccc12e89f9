#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_history.py - a synthetic run history from one kperf report, for 'kperf history' and
'kperf compare --baseline' tests: N copies of BASE.json one day apart, each stream row's
throughput (samples, bytes and aggregate; agent CPU seconds and node system + softirq follow,
so CPU per Gbit/s stays) scaled
by a run factor 1 + SD% x N(0,1) from a seeded RNG, and the last one scaled by --last too
(0.9 = a 10% throughput regression).

    gen_history.py BASE.json OUTDIR --runs 6 --sd 1.5 --last 0.9 --seed 1
writes OUTDIR/run-00.json ... run-05.json."""
import argparse
import copy
import json
import os
import random


def scale_row(row, f):
    for s in row.get("samples", []):
        if "throughput_mbps" in s:
            s["throughput_mbps"] *= f
            s["bytes"] = int(s["bytes"] * f)
            for k in ("client", "server"):
                s["cpu_seconds"][k] *= f
                n = s.get("node_cpu", {}).get(k, {})
                for key in ("system_pct", "softirq_pct"):
                    if key in n:
                        n["idle_pct"] += n[key] - n[key] * f
                        n[key] *= f
    agg = row.get("aggregate", {})
    if "throughput_mbps" in agg:
        agg["throughput_mbps"] *= f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("outdir")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--sd", type=float, default=1.5, help="run-to-run spread, percent")
    ap.add_argument("--last", type=float, default=1.0, help="extra factor of the last run")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    base = json.load(open(a.base))
    os.makedirs(a.outdir, exist_ok=True)
    for i in range(a.runs):
        d = copy.deepcopy(base)
        f = 1 + a.sd / 100 * rng.gauss(0, 1)
        if i == a.runs - 1:
            f *= a.last
        for row in d["results"]:
            scale_row(row, f)
        d["metadata"]["start_time"] = "2026-11-%02dT02:00:00Z" % (1 + i)
        d["metadata"]["cni"] = {"name": "cilium", "version": "1.16.1"}
        d["metadata"]["cluster"] = "e2e"
        with open(os.path.join(a.outdir, "run-%02d.json" % i), "w") as f_out:
            json.dump(d, f_out, indent=2)


if __name__ == "__main__":
    main()
