#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_report.py - writes a large, valid synthetic kperf.report/v1 file, to measure what
`kperf report` and `kperf compare` cost in memory and time on big inputs (docs/report.md,
"Limits and cost").

Usage: gen_report.py OUT.json [--rows N] [--samples S] [--buckets B] [--intervals I]
                     [--scale F] [--seed K] [--indent]
  --rows       result rows (default 600); keys (scenario, placement, test) are all distinct,
               scenario "scenario-<n>", so any row count is possible
  --samples    samples per row (default 5)
  --buckets    non-empty histogram buckets per latency sample (default 800)
  --intervals  per-interval entries per sample (default 60)
  --scale      multiplies throughput and ops/s by F (and latencies by 1/F): the NEW side of a
               compare pair
  --seed       random seed (default 1): the same arguments give the same file
  --indent     indent by 2 as `kperf run` writes report.json (default: compact, the worst
               case for memory per file byte)

Rows cycle through TCP_RR, UDP_RR, TCP_CRR (latency: histogram + intervals) and TCP_STREAM,
TCP_STREAM_MULTI, UDP_STREAM (throughput: intervals, streams). Every sample passes the agent's
own validation (base/result.c); aggregates and stats are plausible, not recomputed.
Prints the file size in bytes.
"""
import argparse
import json
import random
import sys

LAT_TESTS = ["TCP_RR", "UDP_RR", "TCP_CRR"]
TESTS = ["TCP_RR", "UDP_RR", "TCP_CRR", "TCP_STREAM", "TCP_STREAM_MULTI", "UDP_STREAM"]


def bucket_low(index):
    """Lowest value (ns) of a loglin128-ns bucket (base/hist.c)."""
    if index < 256:
        return index
    shift = (index - 256) // 128 + 1
    return ((index - 256) % 128 + 128) << shift


def histogram(rng, nbuckets, first):
    idx = list(range(first, first + nbuckets))
    counts = [rng.randint(1, 5000) for _ in idx]
    total = sum(counts)
    lo, hi = bucket_low(idx[0]), bucket_low(idx[-1])
    s = sum(bucket_low(i) * c for i, c in zip(idx, counts))
    return {"layout": "loglin128-ns", "count": total, "sum_ns": float(s), "min_ns": lo,
            "max_ns": hi, "buckets": [[i, c] for i, c in zip(idx, counts)]}, total


def latency_summary(h, scale):
    lo, hi = h["min_ns"] / 1e3, h["max_ns"] / 1e3
    mean = h["sum_ns"] / h["count"] / 1e3
    span = hi - lo
    return {"min": lo, "mean": mean, "p50": lo + span * 0.3, "p90": lo + span * 0.6,
            "p99": lo + span * 0.8, "p999": lo + span * 0.9, "max": hi,
            "stddev": span / 5 / scale}


def node_cpu():
    side = {"user_pct": 5.0, "system_pct": 30.0, "softirq_pct": 8.0, "irq_pct": 0.0,
            "steal_pct": 0.0, "iowait_pct": 0.0, "idle_pct": 57.0}
    return {"client": dict(side), "server": dict(side)}


def sample(rng, test, k, a):
    lat = test in LAT_TESTS
    dur = 10.0 + rng.random() * 0.01
    s = {"test": test, "sample": k, "reverse": False, "start_time": "2026-11-30T09:00:00Z",
         "duration_s": dur}
    key = "ops_per_sec" if lat else "throughput_mbps"
    base = (12000.0 if lat else 9000.0) * a.scale * (1 + rng.gauss(0, 0.01))
    if lat:
        # lower latency when faster: shift the histogram down a little with scale > 1
        first = 1036 - (8 if a.scale > 1.05 else 0) + (8 if a.scale < 0.95 else 0)
        h, ops = histogram(rng, a.buckets, first)
        s.update({"ops": ops, "ops_per_sec": ops / dur, "latency_us": latency_summary(h, a.scale),
                  "histogram": h})
        if test == "TCP_RR":
            s["tcp"] = {"retransmits": 0, "rtt_us": 30.0, "mss": 65483}
        if test == "UDP_RR":
            s["udp"] = {"sent": ops, "received": ops, "lost": 0, "loss_pct": 0.0}
    else:
        nbytes = int(base * 1e6 / 8 * dur)
        s.update({"bytes": nbytes, "bytes_sent": nbytes, "throughput_mbps": nbytes * 8 / dur / 1e6})
        if test != "UDP_STREAM":
            n = 4 if test == "TCP_STREAM_MULTI" else 1
            s["streams"] = [{"bytes": nbytes // n, "throughput_mbps": base / n, "retransmits": 3,
                             "rtt_us": 52, "mss": 8949} for _ in range(n)]
            s["tcp"] = {"retransmits": 3 * n, "rtt_us": 52.0, "mss": 8949}
        else:
            sent = nbytes // 1472
            s["udp"] = {"sent": sent, "received": sent, "lost": 0, "loss_pct": 0.0,
                        "jitter_us": 3.5, "out_of_order": 0, "rcvbuf_errors": 0}
    s["cpu_seconds"] = {"client": 1.2, "server": 1.1}
    s["node_cpu"] = node_cpu()
    step = dur / max(a.intervals, 1)
    s["intervals"] = [{"start_s": i * step, "end_s": (i + 1) * step,
                       key: base * (1 + rng.gauss(0, 0.02))} for i in range(a.intervals)]
    s["mtu"] = {"client": 1500, "server": 1500}
    return s


def stats(values):
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    sd = var ** 0.5
    med = sorted(values)[n // 2]
    return {"n": n, "median": med, "mean": mean, "stddev": sd,
            "cv_pct": 100 * sd / mean if mean else 0.0, "noisy": False,
            "ci95": [mean - 2 * sd, mean + 2 * sd] if n > 1 else None}


def row(rng, i, a):
    test = TESTS[i % len(TESTS)]
    lat = test in LAT_TESTS
    smp = [sample(rng, test, k, a) for k in range(a.samples)]
    key = "ops_per_sec" if lat else "throughput_mbps"
    agg = {"duration_s": smp[0]["duration_s"], key: stats([s[key] for s in smp])["median"]}
    st = {key: stats([s[key] for s in smp])}
    for k in ("tcp", "udp", "cpu_seconds"):
        if k in smp[0]:
            agg[k] = dict(smp[0][k])
    if lat:
        merged = {}
        for s in smp:
            for b, c in s["histogram"]["buckets"]:
                merged[b] = merged.get(b, 0) + c
        idx = sorted(merged)
        h = {"layout": "loglin128-ns", "count": sum(merged.values()),
             "sum_ns": sum(s["histogram"]["sum_ns"] for s in smp),
             "min_ns": bucket_low(idx[0]), "max_ns": bucket_low(idx[-1]),
             "buckets": [[b, merged[b]] for b in idx]}
        agg["latency_us"] = smp[0]["latency_us"]
        agg["histogram"] = h
        st["latency_us"] = {p: stats([s["latency_us"][p] for s in smp])
                            for p in ("p50", "p90", "p99", "mean")}
    return {"scenario": "scenario-%d" % (i // 12),
            "placement": "same-node" if (i // 6) % 2 == 0 else "other-node",
            "test": test, "reverse": False, "kind": "latency" if lat else "throughput",
            "status": "ok", "noisy": False, "samples": smp, "errors": [],
            "aggregate": agg, "stats": st}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--rows", type=int, default=600)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--buckets", type=int, default=800)
    p.add_argument("--intervals", type=int, default=60)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--indent", action="store_true")
    a = p.parse_args()
    if a.rows < 1 or a.samples < 1 or not 1 <= a.buckets <= 4000 or a.intervals < 0:
        sys.exit("gen_report.py: --rows, --samples >= 1, --buckets 1..4000, --intervals >= 0")
    rng = random.Random(a.seed)
    rows = [row(rng, i, a) for i in range(a.rows)]
    doc = {"schema": "kperf.report/v1",
           "metadata": {"backend": "synthetic", "kperf_version": "0.1.0",
                        "nodes": [{"name": "node-a", "role": "server", "kernel": "6.1.0"},
                                  {"name": "node-b", "role": "client", "kernel": "6.1.0"}]},
           "settings": {"noisy_cv_pct": 10.0},
           "summary": {"rows": a.rows, "ok": a.rows, "partial": 0, "failed": 0, "skipped": 0,
                       "noisy": 0},
           "results": rows, "skipped": [], "errors": []}
    with open(a.out, "w") as f:
        if a.indent:
            json.dump(doc, f, indent=2)
        else:
            json.dump(doc, f, separators=(",", ":"))
        size = f.tell()
    print(size)


if __name__ == "__main__":
    main()
