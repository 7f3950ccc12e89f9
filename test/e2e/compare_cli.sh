#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# compare_cli.sh - 'kperf compare' and 'kperf report' end to end: exit codes (0 no regression,
# 3 regression, 1 invalid or mismatched files, 2 usage), one-line errors, every output format,
# --output-dir, and the JSON Schema check of the reports. The reports are synthetic: the
# unit-test binary test_compare writes them (seeded RNG, real histograms) into a temp dir.
set -u
KPERF="$KPERF_BIN/kperf"
GEN="$KPERF_BIN/../test/unit/test_compare"
SCHEMA="$KPERF_SRC/docs/report-schema.json"
VALIDATE="$KPERF_SRC/test/tools/validate_report.py"
[ -x "$KPERF" ] && [ -x "$GEN" ] || { echo "skip: kperf or test_compare not built"; exit 77; }
D=$(mktemp -d /tmp/kperf-compare-e2e.XXXXXX)
trap 'rm -rf "$D"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

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

# every report validates against the JSON Schema
if command -v python3 >/dev/null; then
    python3 "$VALIDATE" "$SCHEMA" "$D"/base.json "$D"/regressed.json "$D"/one-base.json \
        "$D/site/report.json" || fail "schema validation"
    python3 "$VALIDATE" "$SCHEMA" "$D/other.json" || fail "schema validation (edited copy)"
    python3 "$VALIDATE" "$SCHEMA" "$D/agent.json" 2>/dev/null && fail "validator accepted an agent doc"
fi

[ "$fails" = 0 ] && echo "compare_cli: all checks passed"
[ "$fails" = 0 ]
