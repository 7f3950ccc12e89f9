#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_run.sh - `kperf run --local` end to end, as root with network namespaces:
#  1. --scenarios all --duration 1s: every expected row (4 scenarios, both placements, the
#     external host in both directions) with plausible figures; the report validates against
#     docs/report-schema.json; --output-dir writes all four files; nothing is left behind; the
#     table printed is the one README.md shows (scripts/check-docs.py, numbers masked).
#  2. every test with --mtu 9001: UDP rows have loss figures, MSS shows the jumbo MTU.
# Runtime about 80 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-e2e

# check_rows REPORT.json EXPECTED...: each "scenario/placement/test[/reverse]" is present with
# status ok and plausible figures, and no other row exists.
check_rows() {
    python3 - "$@" <<'PY' || fail "rows of $1"
import json, sys
rep = json.load(open(sys.argv[1]))
want = set(sys.argv[2:])
got = {}
for r in rep["results"]:
    key = "%s/%s/%s%s" % (r["scenario"], r["placement"], r["test"], "/reverse" if r.get("reverse") else "")
    got[key] = r
bad = []
for k in sorted(want - set(got)):
    bad.append("missing row " + k)
for k in sorted(set(got) - want):
    bad.append("unexpected row " + k)
for k, r in sorted(got.items()):
    if k not in want:
        continue
    if r.get("status") != "ok":
        bad.append("%s: status %s %s" % (k, r.get("status"), r.get("errors")))
        continue
    a = r["aggregate"]
    if r["test"] in ("TCP_RR", "TCP_CRR", "UDP_RR"):
        p50 = a["latency_us"]["p50"]
        if not (1 <= p50 <= 100000) or a["ops_per_sec"] <= 10:
            bad.append("%s: implausible latency p50 %s us, %s op/s" % (k, p50, a["ops_per_sec"]))
        if a["latency_us"]["min"] > p50 or p50 > a["latency_us"]["p99"]:
            bad.append("%s: percentiles out of order" % k)
    else:
        mbps = a["throughput_mbps"]
        if not (10 <= mbps <= 1e6):
            bad.append("%s: implausible throughput %s Mb/s" % (k, mbps))
        if r["test"] == "UDP_STREAM" and not (0 <= a["udp"]["loss_pct"] <= 100):
            bad.append("%s: loss %s%%" % (k, a["udp"]["loss_pct"]))
md = rep["metadata"]
for field in ("kperf_version", "backend", "start_time", "end_time", "nodes", "cni", "run_id"):
    if field not in md:
        bad.append("metadata lacks " + field)
if md.get("backend") != "local":
    bad.append("backend is %r" % md.get("backend"))
for n in md.get("nodes", []):
    if not n.get("kernel") or not n.get("os_image"):
        bad.append("node without kernel/os_image: %r" % n)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

# --- 1. all scenarios, default tests
"$KPERF" run --local --scenarios all --duration 1s --output-dir "$D/out" \
    >"$D/all.txt" 2>"$D/all.err"
rc=$?
[ "$rc" = 0 ] || fail "run --scenarios all exited $rc: $(tail -3 "$D/all.err")"
cp "$D/out/report.json" "$D/all.json" 2>/dev/null || fail "--output-dir lacks report.json"
python3 "$KPERF_SRC/scripts/check-docs.py" check "$KPERF_SRC/README.md" local_run.sh "$D/all.txt" ||
    fail "README.md's local run output drifted from what kperf prints"
validate "$D/all.json"
rows=()
for s in pod-to-pod host-to-host pod-to-service; do
    for p in same-node other-node; do
        for t in TCP_RR TCP_STREAM TCP_STREAM_MULTI; do rows+=("$s/$p/$t"); done
    done
done
rows+=(pod-to-external/external/TCP_RR pod-to-external/external/TCP_STREAM
       pod-to-external/external/TCP_STREAM_MULTI pod-to-external/external/TCP_STREAM/reverse
       pod-to-external/external/TCP_STREAM_MULTI/reverse)
check_rows "$D/all.json" "${rows[@]}"
for f in report.json report.md report.csv report.html; do
    [ -s "$D/out/$f" ] || fail "--output-dir lacks $f"
done
grep -q "23 of 23 measurements" "$D/all.err" || fail "no final progress line: $(tail -2 "$D/all.err")"
id=$(run_id_of "$D/all.json")
[ -n "$id" ] || fail "report has no run_id"
[ -n "$id" ] && assert_clean "$id" "run 1"

# --- 2. every test, jumbo frames, one placement
"$KPERF" run --local --scenarios pod-to-pod,pod-to-external --other-node --tests all \
    --duration 1s --mtu 9001 --udp-rate 200M -o json >"$D/jumbo.json" 2>"$D/jumbo.err"
rc=$?
[ "$rc" = 0 ] || fail "run --tests all --mtu 9001 exited $rc: $(tail -3 "$D/jumbo.err")"
validate "$D/jumbo.json"
rows=()
for t in TCP_RR TCP_CRR UDP_RR TCP_STREAM TCP_STREAM_MULTI UDP_STREAM; do
    rows+=("pod-to-pod/other-node/$t" "pod-to-external/external/$t")
done
rows+=(pod-to-external/external/TCP_STREAM/reverse pod-to-external/external/TCP_STREAM_MULTI/reverse
       pod-to-external/external/UDP_STREAM/reverse)
check_rows "$D/jumbo.json" "${rows[@]}"
python3 - "$D/jumbo.json" <<'PY' || fail "jumbo MTU not visible"
import json, sys
rep = json.load(open(sys.argv[1]))
mss = [r["aggregate"]["tcp"]["mss"] for r in rep["results"]
       if r["test"] == "TCP_STREAM" and r["scenario"] == "pod-to-pod"]
if not mss or mss[0] < 8000:
    print("MSS with --mtu 9001: %r" % mss)
    sys.exit(1)
if rep["metadata"]["cni"]["settings"]["mtu"] != 9001:
    sys.exit(1)
PY
id=$(run_id_of "$D/jumbo.json")
[ -n "$id" ] && assert_clean "$id" "run 2"
finish
