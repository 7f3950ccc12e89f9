#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_under_load.sh - `kperf run --local --under-load` end to end: on pod-to-pod same-node and
# other-node, a TCP_RR_LOADED row (TCP_RR while a TCP_STREAM_MULTI fills the same path) beside
# the idle TCP_RR, in JSON (schema-valid; load{}, idle_latency_us, latency_increase_us =
# loaded - idle, latency_ratio), table, Markdown and CSV; `kperf compare` matches the loaded
# rows and judges "+p50 load". Timings are not asserted (loopback latency under load need not
# grow): the structure, and that the stream moved bytes over the whole latency window.
# Runtime about 20 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-load

"$KPERF" run --local --scenarios pod-to-pod --tests TCP_RR --under-load --duration 2s \
    -o json --output-dir "$D/out" >"$D/r.json" 2>"$D/r.err"
rc=$?
[ "$rc" = 0 ] || fail "run --under-load exited $rc: $(tail -3 "$D/r.err")"
validate "$D/r.json"
python3 - "$D/r.json" <<'PY' || fail "loaded rows"
import json, sys
rep = json.load(open(sys.argv[1]))
rows = {(r["placement"], r["test"]): r for r in rep["results"]}
bad = []
want = {(p, t) for p in ("same-node", "other-node") for t in ("TCP_RR", "TCP_RR_LOADED")}
if set(rows) != want:
    bad.append("rows %s, want %s" % (sorted(rows), sorted(want)))
for p in ("same-node", "other-node"):
    idle, ld = rows.get((p, "TCP_RR")), rows.get((p, "TCP_RR_LOADED"))
    if not idle or not ld:
        continue
    if ld["status"] != "ok" or ld["kind"] != "latency" or idle["status"] != "ok":
        bad.append("%s: status %s/%s kind %s" % (p, idle["status"], ld["status"], ld["kind"]))
        continue
    a, ia = ld["aggregate"], idle["aggregate"]
    if not (1 <= a["latency_us"]["p50"] <= 100000) or a["ops_per_sec"] <= 10:
        bad.append("%s: implausible loaded p50 %s us, %s op/s" % (p, a["latency_us"]["p50"], a["ops_per_sec"]))
    for s in ld["samples"]:
        l = s["load"]
        # the stream ran over the whole latency window and moved real traffic in it
        if l["test"] != "TCP_STREAM_MULTI" or l["streams"] != 4:
            bad.append("%s: load %r" % (p, l))
        if l["duration_s"] < s["duration_s"]:
            bad.append("%s: load ran %.3f s, shorter than the latency window %.3f s" % (p, l["duration_s"], s["duration_s"]))
        if l["bytes"] < 10e6 or l["throughput_mbps"] < 10:
            bad.append("%s: load moved %s bytes, %s Mb/s" % (p, l["bytes"], l["throughput_mbps"]))
    if a["load"]["throughput_mbps"] < 10:
        bad.append("%s: aggregate load %r" % (p, a["load"]))
    for k in ("p50", "p90", "p99", "mean"):
        li, ll = ia["latency_us"][k], a["latency_us"][k]
        if abs(a["idle_latency_us"][k] - li) > 1e-6:
            bad.append("%s: idle_latency_us.%s %s is not the idle row's %s" % (p, k, a["idle_latency_us"][k], li))
        if abs(a["latency_increase_us"][k] - (ll - li)) > 1e-6:
            bad.append("%s: latency_increase_us.%s %s != %s - %s" % (p, k, a["latency_increase_us"][k], ll, li))
        if abs(a["latency_ratio"][k] - ll / li) > 1e-6:
            bad.append("%s: latency_ratio.%s" % (p, k))
if "TCP_RR_LOADED" not in rep["metadata"]["params"]["tests"]:
    bad.append("params.tests %r" % rep["metadata"]["params"]["tests"])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# the other renderings
"$KPERF" report "$D/r.json" -o table >"$D/r.txt" 2>&1 || fail "report -o table: $(tail -2 "$D/r.txt")"
grep -q "^Latency under load (microseconds" "$D/r.txt" || fail "table has no under-load section"
for p in same-node other-node; do
    grep -Eq "^pod-to-pod +\| $p +\| +[0-9.]+ \| +[0-9.]+ \| +[-+][0-9.]+ \|" "$D/r.txt" ||
        fail "table: no under-load line for $p: $(grep "$p" "$D/r.txt")"
done
grep -q "### Latency under load" "$D/out/report.md" || fail "markdown has no under-load section"
head -1 "$D/out/report.csv" | grep -q ",load_mbps,idle_p50_us,idle_p99_us,latency_increase_p50_us,latency_increase_p99_us,note,node_verdict$" ||
    fail "CSV header: $(head -1 "$D/out/report.csv")"
grep -Eq "^pod-to-pod,other-node,TCP_RR_LOADED,false,latency,ok,1,.*,[0-9]+\.[0-9]{3},[0-9.]+,[0-9.]+,-?[0-9.]+,-?[0-9.]+,[^,]*,[^,]*$" \
    "$D/out/report.csv" || fail "CSV loaded row: $(grep LOADED "$D/out/report.csv")"

# compare matches the loaded rows and judges their increase
"$KPERF" compare "$D/r.json" "$D/r.json" -o json >"$D/c.json" 2>"$D/c.err" ||
    fail "compare exited $?: $(tail -2 "$D/c.err")"
python3 - "$D/c.json" <<'PY' || fail "compare of loaded rows"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for r in doc["rows"] if r["test"] == "TCP_RR_LOADED"]
names = [{m["metric"] for m in r["metrics"]} for r in rows]
ok = len(rows) == 2 and all({"+p50 load", "+p99 load", "load Mb/s", "p50"} <= n for n in names)
ok = ok and all(r["verdict"] == "within noise" for r in rows)
if not ok:
    print(json.dumps(rows)[:2000])
sys.exit(0 if ok else 1)
PY
id=$(run_id_of "$D/r.json")
[ -n "$id" ] && assert_clean "$id" "the run"
finish
