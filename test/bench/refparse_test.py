#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""refparse_test.py - the benchmark's parsers read what each tool itself summarised, and refuse
outputs they cannot trust. Fixtures in testdata/ are real outputs of the Debian tools and of
kperf-agent on loopback (2026-12-01); the expected figures are the tools' own summary lines."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refparse  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
failures = []


def text(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return f.read()


def expect(kind, body, want, label, *args):
    try:
        got = refparse.KINDS[kind](body, *args)
    except refparse.ParseError as e:
        failures.append(f"{label}: refused a good output: {e}")
        return
    if [round(float(x), 3) for x in got.split()] != [round(float(x), 3) for x in want.split()]:
        failures.append(f"{label}: got {got}, want {want}")


def refuse(kind, body, label, *args):
    try:
        got = refparse.KINDS[kind](body, *args)
    except (refparse.ParseError, KeyError, ValueError):
        return
    failures.append(f"{label}: accepted a bad output, read {got}")


# the tools' own summaries, as printed in the fixtures
expect("iperf2", text("iperf2-P4.txt"), "29011", "iperf2 -P4 = its [SUM] line")
expect("iperf2", text("iperf2-P1.txt"), "11303", "iperf2 -P1 = its only stream")
i3 = json.loads(text("iperf3-P4.json"))
expect("iperf3", text("iperf3-P4.json"),
       str(i3["end"]["sum_received"]["bits_per_second"] / 1e6), "iperf3 = end.sum_received")
expect("sockperf", text("sockperf-tcp.txt"), "15.504 13.86", "sockperf = avg-rtt, percentile 50")
expect("qperf-lat", text("qperf-tcp_lat.txt"), "18.64", "qperf = 2 x latency")
k = json.loads(text("kperf-stream4.json"))["results"][0]
expect("kperf-stream", text("kperf-stream4.json"), str(k["throughput_mbps"]), "kperf stream")
k = json.loads(text("kperf-tcprr.json"))["results"][0]
expect("kperf-rr", text("kperf-tcprr.json"), f"{k['latency_us']['mean']} {k['latency_us']['p50']}",
       "kperf rr")

# more streams than CPUs: the [SUM] line still adds up (iperf 2 -P 8 on 2 vCPUs)
expect("iperf2", text("iperf2-P8.txt"), "7497", "iperf2 -P8 = its [SUM] line", 2)
# 32 streams whose intervals end 0.1 s apart: the [SUM] line is still the figure
expect("iperf2", text("iperf2-P32.txt"), "6113", "iperf2 -P32 = its [SUM] line", 1)
refuse("iperf2", text("iperf2-P32.txt").replace("901 MBytes  6113", "901 MBytes  9113"),
       "iperf2 -P32 SUM rate above its bytes over any stream's interval")
# 128 streams whose [SUM] interval (3.865 s) outlasts every stream's (3.02-3.69 s)
expect("iperf2", text("iperf2-P128-late-sum.txt"), "12286", "iperf2 -P128 = its late [SUM] line", 3)
# UDP at a set rate: the receiver's rate, loss and jitter
u3 = json.loads(text("iperf3-udp-1G.json"))["end"]["sum_received"]
expect("iperf3-udp", text("iperf3-udp-1G.json"),
       f"{u3['bits_per_second'] / 1e6} {u3['lost_percent']} {u3['jitter_ms'] * 1000}",
       "iperf3 -u = end.sum_received (not the sender's sum)", 2)
ku = json.loads(text("kperf-udp-1G.json"))["results"][0]
expect("kperf-udp", text("kperf-udp-1G.json"),
       f"{ku['throughput_mbps']} {ku['udp']['loss_pct']} {ku['udp']['jitter_us']}", "kperf udp", 2)

# plausibility: the run time asked for must be the run time measured
refuse("iperf3", text("iperf3-P4.json"), "iperf3 read as a 30 s run", 30)
refuse("kperf-udp", text("kperf-udp-1G.json"), "kperf udp read as a 10 s run", 10)
refuse("iperf2", text("iperf2-P8.txt"), "iperf2 read as a 1 s run", 1)
bad = json.loads(text("iperf3-udp-1G.json"))
bad["end"]["sum_received"] = bad["end"]["sum_sent"]  # the sender's rate is not the achieved one
bad["end"]["sum_received"]["bytes"] += 1
refuse("iperf3-udp", json.dumps(bad), "iperf3 -u bytes not whole datagrams")
bad = json.loads(text("iperf3-udp-1G.json"))
bad["end"]["sum_received"]["lost_percent"] = 0
refuse("iperf3-udp", json.dumps(bad), "iperf3 -u loss percent vs lost packets")
bad = json.loads(text("iperf3-udp-1G.json"))
bad["end"]["sum_received"]["bits_per_second"] *= 2
refuse("iperf3-udp", json.dumps(bad), "iperf3 -u rate vs bytes over seconds")
bad = json.loads(text("kperf-udp-1G.json"))
bad["results"][0]["udp"]["lost"] = 5
refuse("kperf-udp", json.dumps(bad), "kperf udp lost != sent - received")
bad = json.loads(text("kperf-udp-1G.json"))
bad["results"][0]["throughput_mbps"] *= 5
refuse("kperf-udp", json.dumps(bad), "kperf udp rate 5x its bytes")
refuse("kperf-udp", text("kperf-stream4.json"), "kperf udp given a TCP result")

# the error that once made a published ratio 4x wrong: one stream read as the total
p4 = text("iperf2-P4.txt")
refuse("iperf2", "\n".join(l for l in p4.splitlines() if "[SUM]" not in l), "iperf2 -P4 without SUM")
refuse("iperf2", "19700101000000,127.0.0.1,1,127.0.0.1,5,1,0.0-1.0,272472,21440197316\n",
       "iperf2 CSV (-y C)")
refuse("iperf2", p4.replace("3479 MBytes  29011", "3479 MBytes  7880"), "iperf2 SUM rate wrong")
bad = json.loads(text("iperf3-P4.json"))
bad["end"]["streams"] = bad["end"]["streams"][:1]
refuse("iperf3", json.dumps(bad), "iperf3 with a stream missing")
sp = text("sockperf-tcp.txt")
refuse("sockperf", "\n".join(l for l in sp.splitlines() if "percentile 50" not in l),
       "sockperf without p50")
refuse("sockperf", sp.replace("avg-rtt=15.504", "avg-rtt=1.504"), "sockperf mean off")
refuse("qperf-lat", text("qperf-tcp_lat.txt").replace("msg_rate", "msg_ratx"), "qperf no rate")
bad = json.loads(text("kperf-stream4.json"))
bad["results"][0]["throughput_mbps"] *= 4
refuse("kperf-stream", json.dumps(bad), "kperf stream total 4x its streams")
bad = json.loads(text("kperf-tcprr.json"))
bad["results"][0]["ops_per_sec"] /= 2
refuse("kperf-rr", json.dumps(bad), "kperf rr ops vs mean")

for f in failures:
    print(f"FAIL: {f}", file=sys.stderr)
print(f"refparse: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
sys.exit(1 if failures else 0)
