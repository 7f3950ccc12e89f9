#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# compare_cli.sh - 'kperf compare' and 'kperf report' end to end: exit codes (0 no regression,
# 3 regression, 1 invalid or mismatched files, 2 usage), one-line errors, every output format,
# --output-dir, a path MTU black hole's mark and --strict-evidence refusal, the evidence gauges
# of -o openmetrics, and the JSON Schema check of the reports. The reports are synthetic: the
# unit-test binary test_compare writes them (seeded RNG, real histograms) into a temp dir.
# shellcheck disable=SC2010 # ls | grep on names kperf itself writes (no spaces, no newlines)
set -u
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
KPERF="$KPERF_BIN/kperf"
GEN="$KPERF_BIN/../test/unit/test_compare"
SCHEMA="$KPERF_SRC/docs/report-schema.json"
VALIDATE="$KPERF_SRC/test/tools/validate_report.py"
[ -x "$KPERF" ] && [ -x "$GEN" ] || { echo "skip: kperf or test_compare not built"; exit 77; }
h_tmpdir D compare-e2e

KPERF_WRITE_FIXTURES="$D" "$GEN" >/dev/null 2>&1 || fail "test_compare did not run"
for f in base regressed improved noise one-base one-regressed; do
    [ -s "$D/$f.json" ] || fail "fixture $f.json missing"
done

# expect CODE CMD...: runs CMD, checks its exit code, keeps stdout/stderr in $D/out, $D/err
expect() {
    local want=$1; shift
    "$@" >"$D/out" 2>"$D/err"
    local got=$?
    [ "$got" = "$want" ] || fail "exit $got, want $want: $* ($(head -c 300 "$D/err"))"
}

expect 3 "$KPERF" compare "$D/base.json" "$D/regressed.json"
grep -q "REGRESSION" "$D/out" || fail "regression not shown"
python3 "$KPERF_SRC/scripts/check-docs.py" check "$KPERF_SRC/docs/compare.md" compare_cli.sh "$D/out" ||
    fail "docs/compare.md's example drifted from what kperf compare prints"
expect 0 "$KPERF" compare "$D/base.json" "$D/improved.json" -o markdown
grep -q "| improvement" "$D/out" || fail "improvement not shown in markdown"
expect 0 "$KPERF" compare "$D/base.json" "$D/noise.json"
grep -q "REGRESSION\|improvement " "$D/out" && fail "noise classified as a change"
expect 3 "$KPERF" compare "$D/one-base.json" "$D/one-regressed.json" -o json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="kperf.compare/v1"; assert d["summary"]["regressions"]==1' "$D/out" || fail "compare json"
# a 20% threshold swallows the 10% regression
expect 0 "$KPERF" compare --threshold 20% "$D/base.json" "$D/regressed.json"

# invalid and mismatched files: exit 1 with one line
echo '{"schema": "kperf.report/v1"' >"$D/broken.json"
expect 1 "$KPERF" compare "$D/base.json" "$D/broken.json"
[ "$(wc -l <"$D/err")" = 1 ] || fail "error is not one line: $(cat "$D/err")"
grep -q "^kperf: error: .*broken.json.*invalid JSON" "$D/err" || fail "unclear error: $(cat "$D/err")"
echo '{"schema": "kperf.result/v1", "results": []}' >"$D/agent.json"
expect 1 "$KPERF" compare "$D/agent.json" "$D/base.json"
grep -q 'expected "kperf.report/v1"' "$D/err" || fail "agent doc not refused clearly"
python3 - "$D/base.json" "$D/other.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r["scenario"] = "host-to-host"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 1 "$KPERF" compare "$D/base.json" "$D/other.json"
grep -q "share no measured row" "$D/err" || fail "mismatch not explained"
expect 1 "$KPERF" compare "$D/base.json" "$D/missing.json"

# usage errors: exit 2
one_line() { [ "$(wc -l <"$D/err")" = 1 ] || fail "$1: error is not one line: $(cat "$D/err")"; }
expect 2 "$KPERF" compare "$D/base.json"
one_line "compare with one file"
expect 2 "$KPERF" compare --threshold lots "$D/base.json" "$D/regressed.json"
one_line "--threshold lots"
grep -q "^kperf: error: --threshold: .*'lots'" "$D/err" || fail "unclear: $(cat "$D/err")"
expect 2 "$KPERF" compare -o csv "$D/base.json" "$D/regressed.json"
one_line "compare -o csv"
expect 2 "$KPERF" report "$D/base.json" --bogus
one_line "report --bogus"
expect 2 "$KPERF" report
one_line "report without a file"
expect 0 "$KPERF" compare --help

# kperf report re-renders every format; --output-dir writes all four files
for fmt in table markdown csv html json; do
    expect 0 "$KPERF" report "$D/base.json" -o "$fmt"
    [ -s "$D/out" ] || fail "report -o $fmt printed nothing"
done
expect 0 "$KPERF" report "$D/base.json" --output-dir "$D/site"
for f in report.json report.md report.csv report.html; do
    [ -s "$D/site/$f" ] || fail "--output-dir did not write $f"
done
# --noisy-cv re-flags from the samples: 15% spread is noisy at 10%, not at 50%
expect 0 "$KPERF" report "$D/noise.json" --noisy-cv 10
grep -q "noisy: Mb/s" "$D/out" || fail "--noisy-cv 10 did not flag the noisy row"
expect 0 "$KPERF" report "$D/noise.json" --noisy-cv 50% -o json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["settings"]["noisy_cv_pct"]==50; assert not any(r["noisy"] for r in d["results"] if r["kind"]=="throughput")' "$D/out" || fail "--noisy-cv 50%"
expect 2 "$KPERF" report "$D/noise.json" --noisy-cv much
expect 2 "$KPERF" report
expect 2 "$KPERF" report -o xml "$D/base.json"
expect 1 "$KPERF" report "$D/broken.json"

# every metric a CNI change moves: identical reports pass, an injected regression names its
# metric, per-metric thresholds (flag and YAML file) decide
expect 0 "$KPERF" compare "$D/base.json" "$D/base.json"
grep -q "0 regressions, 0 improvements" "$D/out" || fail "identical reports: $(tail -1 "$D/out")"
python3 - "$D/base.json" "$D/cpu.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    for s in r["samples"]:
        if "throughput_mbps" in s:  # 40% more agent CPU for the same traffic
            s["cpu_seconds"] = {k: v * 1.4 for k, v in s["cpu_seconds"].items()}
json.dump(d, open(sys.argv[2], "w"))
PY
expect 3 "$KPERF" compare "$D/base.json" "$D/cpu.json"
grep -q "TCP_STREAM | agent CPU/Gbit .*| REGRESSION" "$D/out" || fail "CPU regression not named"
grep -q "1 regression," "$D/out" || fail "CPU-only: other metrics moved: $(tail -1 "$D/out")"
expect 0 "$KPERF" compare --threshold agent_cpu=50% "$D/base.json" "$D/cpu.json"
printf 'agent_cpu: 50%%\nloss: 0.2pp\n' >"$D/thresholds.yaml"
expect 0 "$KPERF" compare --thresholds "$D/thresholds.yaml" "$D/base.json" "$D/cpu.json"
expect 3 "$KPERF" compare --thresholds "$D/thresholds.yaml" --threshold agent_cpu=10% "$D/base.json" "$D/cpu.json"
printf 'agent_cpu: [1]\n' >"$D/bad.yaml"
expect 2 "$KPERF" compare --thresholds "$D/bad.yaml" "$D/base.json" "$D/cpu.json"
one_line "--thresholds bad.yaml"
expect 2 "$KPERF" compare --threshold latncy=5% "$D/base.json" "$D/cpu.json"
grep -q "unknown threshold 'latncy'" "$D/err" || fail "unclear: $(cat "$D/err")"

# run history: add, list, retention, --baseline against the spread between runs
GH="$KPERF_SRC/test/tools/gen_history.py"
python3 "$GH" "$D/base.json" "$D/g" --runs 6 --last 0.9 --seed 1 || fail "gen_history"
python3 "$GH" "$D/base.json" "$D/s" --runs 6 --last 1.0 --seed 1 || fail "gen_history"
for i in 0 1 2 3 4; do
    expect 0 "$KPERF" history add "$D/h" "$D/g/run-0$i.json"
done
expect 0 "$KPERF" history list "$D/h"
grep -q "^5 runs in" "$D/out" || fail "history list: $(head -1 "$D/out")"
grep -q "^e2e/node-b_node-a/cilium/1.16.1/2026-11-05T02-00-00Z.json$" "$D/out" || fail "layout: $(cat "$D/out")"
ls -A "$D/h/e2e/node-b_node-a/cilium/1.16.1" | grep -q "^\." && fail "temporary file left"
expect 3 "$KPERF" compare --baseline "$D/h" "$D/g/run-05.json"
grep -q "TCP_STREAM | Mb/s .*| REGRESSION .*5 runs" "$D/out" || fail "10% drop against history not named"
# stderr names the runs judged against, oldest first
grep -q "against 5 earlier runs of e2e/node-b_node-a/cilium in $D/h: 2026-11-01T02-00-00Z.json .* 2026-11-05T02-00-00Z.json$" "$D/err" ||
    fail "runs not named: $(cat "$D/err")"
# the first night of a new history: --first-run-ok passes with a note, without it exit 1
mkdir -p "$D/empty-h"
expect 0 "$KPERF" compare --baseline "$D/empty-h" --first-run-ok "$D/g/run-05.json"
grep -q "has no earlier run comparable with .* yet (e2e/node-b_node-a/cilium): the first run, nothing to judge" "$D/err" &&
    [ ! -s "$D/out" ] || fail "--first-run-ok: $(cat "$D/err")"
expect 1 "$KPERF" compare --baseline "$D/empty-h" "$D/g/run-05.json"
expect 2 "$KPERF" compare --first-run-ok "$D/base.json" "$D/base.json"
grep -q "first-run-ok applies to --baseline DIR only" "$D/err" || fail "unclear: $(cat "$D/err")"
expect 0 "$KPERF" compare --baseline "$D/h" "$D/s/run-05.json"
expect 0 "$KPERF" compare --baseline "$D/h" --runs 2 "$D/s/run-05.json" -o json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["baseline_runs"]==2, d["baseline_runs"]' "$D/out" || fail "--runs 2"
expect 1 "$KPERF" compare --baseline "$D/h" "$D/base.json" # another cluster and CNI
grep -q "no earlier run comparable" "$D/err" || fail "unclear: $(cat "$D/err")"
python3 - "$D/s/run-05.json" "$D/s/other.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r["scenario"] = "host-to-host"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 1 "$KPERF" compare --baseline "$D/h" "$D/s/other.json"
grep -q "shares no measured row" "$D/err" || fail "unclear: $(cat "$D/err")"
expect 2 "$KPERF" compare --baseline "$D/h" "$D/base.json" "$D/base.json"
expect 2 "$KPERF" compare --baseline "$D/h" --runs 0 "$D/base.json"
expect 0 "$KPERF" history add "$D/h" "$D/g/run-05.json" --keep 3
expect 0 "$KPERF" history list "$D/h"
grep -q "^3 runs in" "$D/out" || fail "retention --keep 3: $(cat "$D/out")"
expect 1 "$KPERF" history list "$D/nonexistent"
expect 2 "$KPERF" history frob "$D/h"
one_line "history frob"

# Reports come through pipes and FIFOs too, and the size cap (256 MiB) holds whatever the input
# is: a pipe says nothing of its size, so the reader counts bytes and stops at the cap. The
# timeout only turns a hang into a failure; the check is the error and the exit code. (Input
# comes by process substitution: `expect` in a pipeline would count failures in a subshell.)
expect 0 "$KPERF" report /dev/stdin < <(cat "$D/base.json") # a pipe, not the file
grep -q "measured" "$D/out" || fail "report through a pipe printed no table"
mkfifo "$D/fifo"
cat "$D/base.json" >"$D/fifo" &
expect 0 timeout 120 "$KPERF" report "$D/fifo" -o json
wait
cmp -s "$D/out" "$D/site/report.json" || fail "report through a FIFO differs from the file's"
expect 1 timeout 120 "$KPERF" report /dev/stdin < <(head -c 300000000 /dev/zero)
one_line "report of 300 MB through a pipe"
grep -q "^kperf: error: /dev/stdin: more than 256 MiB" "$D/err" || fail "large pipe: $(cat "$D/err")"
expect 1 timeout 120 "$KPERF" compare "$D/base.json" /dev/stdin < <(head -c 300000000 /dev/zero)
grep -q "more than 256 MiB" "$D/err" || fail "compare, large pipe: $(cat "$D/err")"
: >"$D/empty.json"
expect 1 "$KPERF" report "$D/empty.json"
grep -q "empty file" "$D/err" || fail "empty file: $(cat "$D/err")"
# what a report writes, it reads back and writes the same (rows are kept packed in memory)
expect 0 "$KPERF" report "$D/site/report.json" -o json
cmp -s "$D/out" "$D/site/report.json" || fail "report -o json of report.json is not the same"

# a path MTU black hole on a row of BASE (its path_mtu as the probe writes it): the verdicts
# carry "!", --strict-evidence refuses the row naming the cause; OpenMetrics has the gauges
python3 - "$D/base.json" "$D/holed.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
row = next(r for r in d["results"] if r["test"] == "TCP_STREAM" and r["samples"])
row["path_mtu"] = {"verdict": "black-hole", "path": 1396, "client": 1500, "server": 1500,
                   "icmp": 0, "tcp_full_mss": False}
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "$KPERF" compare "$D/holed.json" "$D/noise.json"
grep -q "^! path MTU black hole" "$D/out" || fail "black hole not listed: $(cat "$D/out")"
grep -q "TCP_STREAM: black hole in BASE" "$D/out" || fail "black hole row not named"
expect 1 "$KPERF" compare --strict-evidence "$D/holed.json" "$D/noise.json"
grep -q "^kperf: error: 1 row cannot be judged: path MTU black hole" "$D/err" ||
    fail "--strict-evidence: $(cat "$D/err")"
grep -q "cannot judge !" "$D/out" || fail "--strict-evidence: the row is judged"
expect 0 "$KPERF" report "$D/holed.json" -o openmetrics
grep -q '^kperf_path_mtu_black_hole{.*test="TCP_STREAM".*} 1$' "$D/out" || fail "no black-hole gauge"
grep -q '^kperf_path_mtu_bytes{.*} 1396$' "$D/out" || fail "no path MTU gauge"
grep -q '^kperf_node_cpu_ratio_per_gbps{.*side="server",mode="softirq"} ' "$D/out" ||
    fail "no node CPU per Gbit/s gauge"
if command -v promtool >/dev/null; then
    promtool check metrics <"$D/out" >/dev/null 2>&1 ||
        fail "promtool: $(promtool check metrics <"$D/out" 2>&1 | head -3)"
fi

# every report validates against the JSON Schema
if command -v python3 >/dev/null; then
    python3 "$VALIDATE" "$SCHEMA" "$D"/base.json "$D"/regressed.json "$D"/one-base.json \
        "$D/site/report.json" "$D/holed.json" || fail "schema validation"
    python3 "$VALIDATE" "$SCHEMA" "$D/other.json" || fail "schema validation (edited copy)"
    python3 "$VALIDATE" "$SCHEMA" "$D/agent.json" 2>/dev/null && fail "validator accepted an agent doc"
fi

finish
