#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""refparse.py - reads one figure from a tool's saved output, and checks the reading first.

The benchmark (agent-vs-reference.sh) prints ratios of kperf to the reference tools. A ratio is
only as good as the parsing behind it: a published figure was once 4x wrong because iperf 2's
CSV output has no sum line for -P 4 and the harness read one stream's rate. So every parser
here takes the figure from the tool's own summary AND checks it against a second reading of the
same output (the sum of the per-stream figures, bytes over time, operations over time). When
the two disagree, it prints why and exits 1, and the harness stops instead of printing a ratio.

Every reading is also checked for plausibility: the rate must equal the bytes the receiver
counted over the receiver's duration, and with SECONDS given, that duration must be close to
the requested run time (a tool that stopped early, or a window that swallowed a warm-up, would
otherwise turn into a ratio).

Usage: refparse.py KIND FILE [SECONDS]    prints the figure(s) on one line
  kperf-stream   kperf-agent --json            -> Mb/s (throughput_mbps)
  kperf-udp      kperf-agent --json UDP_STREAM -> "Mb/s loss_pct jitter_us" (receiver's)
  iperf3-udp     iperf3 -u -J                  -> "Mb/s loss_pct jitter_us" (sum_received)
  kperf-rr       kperf-agent --json            -> "mean_us p50_us"
  kperf-crr      kperf-agent --json            -> conn/s (ops_per_sec)
  iperf3         iperf3 -J                     -> Mb/s received (end.sum_received)
  iperf2         iperf -f m (human output)     -> Mb/s ([SUM] line, or the only stream)
  sockperf       sockperf pp --full-rtt        -> "mean_us p50_us"
  qperf-lat      qperf -vv tcp_lat             -> round-trip us (2 x one-way latency)
"""
import json
import re
import sys


class ParseError(Exception):
    pass


def agree(what, a, b, rel):
    """Raises ParseError when a and b differ by more than rel (a fraction of the larger)."""
    if a <= 0 or b <= 0 or abs(a - b) > rel * max(a, b):
        raise ParseError(f"{what}: {a:.6g} vs {b:.6g} (differ by more than {rel:.0%})")


def plausible_duration(what, secs, want):
    """With want (the requested run time), raises ParseError unless secs is close to it."""
    if want is not None and not 0.8 * want <= secs <= 1.6 * want:
        raise ParseError(f"{what} {secs:.3f} s for a {want:g} s run")


def kperf_result(text):
    doc = json.loads(text)
    if doc.get("errors"):
        raise ParseError(f"kperf reported errors: {doc['errors']}")
    results = doc.get("results") or []
    if len(results) != 1:
        raise ParseError(f"expected one result, found {len(results)}")
    return results[0]


def kperf_stream(text, want_secs=None):
    r = kperf_result(text)
    mbps = r["throughput_mbps"]
    plausible_duration("duration_s", r["duration_s"], want_secs)
    agree("throughput_mbps vs bytes*8/duration_s", mbps, r["bytes"] * 8 / r["duration_s"] / 1e6,
          0.01)
    streams = r.get("streams") or []
    if streams:
        agree("throughput_mbps vs sum of streams", mbps, sum(s["throughput_mbps"] for s in streams),
              0.02)
    return f"{mbps}"


def kperf_udp(text, want_secs=None):
    r = kperf_result(text)
    if r.get("test") != "UDP_STREAM":
        raise ParseError(f"expected a UDP_STREAM result, found {r.get('test')}")
    mbps, u = r["throughput_mbps"], r["udp"]
    plausible_duration("duration_s", r["duration_s"], want_secs)
    agree("throughput_mbps vs bytes*8/duration_s", mbps, r["bytes"] * 8 / r["duration_s"] / 1e6,
          0.01)
    # the receiver's bytes are whole datagrams: received x datagram size
    size = r["bytes"] / u["received"]
    if size != int(size) or not 24 <= size <= 65507:
        raise ParseError(f"bytes {r['bytes']} is not a whole number of datagrams ({u['received']})")
    if u["lost"] != max(u["sent"] - u["received"], 0):
        raise ParseError(f"lost {u['lost']} != sent {u['sent']} - received {u['received']}")
    loss = 100.0 * u["lost"] / u["sent"] if u["sent"] else 0.0
    if abs(loss - u["loss_pct"]) > 0.01:
        raise ParseError(f"loss_pct {u['loss_pct']} vs 100*lost/sent {loss:.4f}")
    return f"{mbps} {u['loss_pct']} {u['jitter_us']}"


def iperf3_udp(text, want_secs=None):
    end = json.loads(text)["end"]
    if "sum_received" not in end:
        raise ParseError("no end.sum_received (iperf3 older than 3.x, or not run with -u -J)")
    rx = end["sum_received"]
    plausible_duration("sum_received.seconds", rx["seconds"], want_secs)
    mbps = rx["bits_per_second"] / 1e6
    agree("sum_received rate vs bytes*8/seconds", mbps, rx["bytes"] * 8 / rx["seconds"] / 1e6,
          0.01)
    got = rx["packets"] - rx["lost_packets"]
    if got <= 0:
        raise ParseError(f"no datagram received ({rx['packets']} counted, {rx['lost_packets']} lost)")
    size = rx["bytes"] / got
    if size != int(size) or not 16 <= size <= 65507:
        raise ParseError(f"bytes {rx['bytes']} is not (packets - lost) = {got} whole datagrams")
    # iperf3 3.12: sum_received.packets is the highest sequence number seen, lost_percent is
    # lost over what the sender sent (sum_sent.packets), and the sender sent at least what
    # arrived
    sent = end.get("sum_sent", {}).get("packets", 0)
    if sent < got:
        raise ParseError(f"sender sent {sent} datagrams, receiver got {got}")
    loss = 100.0 * rx["lost_packets"] / sent
    if abs(loss - rx["lost_percent"]) > 0.01:
        raise ParseError(f"lost_percent {rx['lost_percent']} vs 100*lost/sent {loss:.4f}")
    return f"{mbps} {rx['lost_percent']} {rx['jitter_ms'] * 1000}"


def kperf_rr(text):
    r = kperf_result(text)
    lat = r["latency_us"]
    # one transaction outstanding: operations per second is 1 / mean round trip
    agree("latency mean vs 1e6/ops_per_sec", lat["mean"], 1e6 / r["ops_per_sec"], 0.05)
    if not lat["min"] <= lat["p50"] <= lat["max"]:
        raise ParseError(f"p50 {lat['p50']} outside [min {lat['min']}, max {lat['max']}]")
    return f"{lat['mean']} {lat['p50']}"


def kperf_crr(text):
    r = kperf_result(text)
    agree("ops_per_sec vs ops/duration_s", r["ops_per_sec"], r["ops"] / r["duration_s"], 0.01)
    return f"{r['ops_per_sec']}"


def iperf3(text, want_secs=None):
    end = json.loads(text)["end"]
    total = end["sum_received"]["bits_per_second"]
    plausible_duration("sum_received.seconds", end["sum_received"]["seconds"], want_secs)
    agree("sum_received vs bytes*8/seconds", total,
          end["sum_received"]["bytes"] * 8 / end["sum_received"]["seconds"], 0.01)
    per_stream = [s["receiver"]["bits_per_second"] for s in end["streams"]]
    agree("sum_received vs sum of streams", total, sum(per_stream), 0.03)
    return f"{total / 1e6}"


# "[  1] 0.0000-1.0047 sec   944 MBytes  7880 Mbits/sec" and "[SUM] ..." (iperf 2, -f m)
IPERF2_LINE = re.compile(r"^\[\s*(\d+|SUM)\]\s+([\d.]+)-([\d.]+)\s+sec\s+([\d.]+)\s+MBytes\s+"
                         r"([\d.]+)\s+Mbits/sec")


def iperf2(text, want_secs=None):
    streams, total = [], None
    for line in text.splitlines():
        m = IPERF2_LINE.match(line.strip())
        if not m:
            continue
        start, end, mbytes, mbps = (float(m.group(i)) for i in range(2, 6))
        entry = (end - start, mbytes, mbps)
        if m.group(1) == "SUM":
            total = entry
        else:
            streams.append(entry)
    if not streams:
        raise ParseError("no per-stream result line (run iperf with -f m, not -y C)")
    if total is None:
        if len(streams) > 1:
            raise ParseError(f"{len(streams)} streams but no [SUM] line")
        total = streams[0]
    secs, mbytes, mbps = total
    plausible_duration("interval", secs, want_secs)
    agree("rate vs MBytes*8/interval", mbps, mbytes * 8 * 1.048576 / secs, 0.02)
    if len(streams) > 1:
        # transfers add up exactly (each rounded to 1 MByte); rates only nearly (own intervals)
        if abs(sum(s[1] for s in streams) - mbytes) > len(streams):
            raise ParseError(f"[SUM] {mbytes} MBytes vs streams {sum(s[1] for s in streams)}")
        # each stream's rate is over its own interval; with many streams those end up to a few
        # tenths of a second apart (iperf 2 -P 32 on 2 vCPUs: 1.21 s to 1.32 s for a 1 s run)
        # and the [SUM] interval is one of them or longer (-P 128: streams 3.02-3.69 s, [SUM]
        # 3.87 s), so the sum of the rates is only a bound
        lo = min(s[0] for s in streams)
        hi = max(max(s[0] for s in streams), secs)
        if hi - lo <= 0.02 * secs:
            agree("[SUM] rate vs sum of stream rates", mbps, sum(s[2] for s in streams), 0.03)
        elif not mbytes * 8 * 1.048576 / hi * 0.98 <= mbps <= mbytes * 8 * 1.048576 / lo * 1.02:
            raise ParseError(f"[SUM] rate {mbps} outside the bytes over the streams' intervals "
                             f"({lo:.3f} s to {hi:.3f} s)")
    return f"{mbps}"


def sockperf(text):
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colour codes around some lines

    def one(pattern, what):
        m = re.search(pattern, text)
        if not m:
            raise ParseError(f"no {what} in sockperf's output")
        return m

    mean = float(one(r"avg-rtt=([\d.]+)", "avg-rtt").group(1))
    p50 = float(one(r"percentile 50\.000 =\s*([\d.]+)", "percentile 50").group(1))
    valid = one(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); "
                r"ReceivedMessages=(\d+)", "valid-duration line")
    runtime, received = float(valid.group(1)), int(valid.group(3))
    # ping-pong: one message in flight, so the valid window holds runtime / mean round trips
    agree("avg-rtt vs RunTime/ReceivedMessages", mean, runtime * 1e6 / received, 0.05)
    lo = float(one(r"<MIN> observation =\s*([\d.]+)", "MIN").group(1))
    hi = float(one(r"<MAX> observation =\s*([\d.]+)", "MAX").group(1))
    if not lo <= p50 <= hi:
        raise ParseError(f"p50 {p50} outside [{lo}, {hi}]")
    return f"{mean} {p50}"


def qperf_lat(text):
    def value(key):
        m = re.search(rf"^\s*{key}\s*=\s*([\d.,]+)\s*(\S*)", text, re.M)
        if not m:
            raise ParseError(f"no {key} in qperf's output (run it with -vv)")
        return float(m.group(1).replace(",", "")), m.group(2)

    lat, unit = value("latency")
    lat *= {"ns": 1e-3, "us": 1.0, "ms": 1e3, "sec": 1e6}.get(unit, float("nan"))
    rate, runit = value("msg_rate")
    rate *= {"/sec": 1.0, "K/sec": 1e3, "M/sec": 1e6}.get(runit, float("nan"))
    # qperf's latency is one way (half a round trip); msg_rate counts both directions' messages,
    # so a round trip takes 2 / msg_rate seconds. msg_rate is printed to 3 digits.
    agree("2 x latency vs 2/msg_rate", 2 * lat, 2e6 / rate, 0.05)
    return f"{2 * lat}"


KINDS = {
    "kperf-stream": kperf_stream,
    "kperf-udp": kperf_udp,
    "iperf3-udp": iperf3_udp,
    "kperf-rr": kperf_rr,
    "kperf-crr": kperf_crr,
    "iperf3": iperf3,
    "iperf2": iperf2,
    "sockperf": sockperf,
    "qperf-lat": qperf_lat,
}


# the parsers of rates take the requested run time for the duration check
TIMED = {"kperf-stream", "kperf-udp", "iperf3-udp", "iperf3", "iperf2"}


def main(argv):
    if len(argv) not in (3, 4) or argv[1] not in KINDS:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[2], encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        if len(argv) == 4 and argv[1] in TIMED:
            print(KINDS[argv[1]](text, float(argv[3])))
        else:
            print(KINDS[argv[1]](text))
    except (ParseError, KeyError, ValueError, TypeError, ZeroDivisionError) as e:
        print(f"refparse: {argv[1]} {argv[2]}: cannot trust this reading: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
