#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# report_html.sh - the run page's latency CDFs and the history trend page rendered in a real
# browser (Debian's chromium, headless), asserting on the DOM after layout:
# * run page (kperf report -o html) of the synthetic reports of test_compare: one CDF chart
#   (svg.cdf with one path.line of non-zero length, rising left to right) per latency row
#   with a merged histogram, counted from the JSON with jq; provenance objects as key/value
#   tables, no cell that holds raw JSON text; in a 1280x800 window the page reads first: the
#   verdict, the summary table on the first screen, then the provenance card (with the
#   kernel), the readiness chart, and the raw metadata last, folded in <details>; no number
#   in exponent notation ([0-9]e[+-][0-9] absent from the text), dates as dates;
# * trend page (kperf history report DIR -o html) of six runs whose last has 20% less Mb/s:
#   svg.trend path.line count = rows x metrics as 'kperf compare --baseline' judges the
#   last run, the regressed metrics marked (red circle at the newest run) exactly as that
#   compare calls them, nothing marked on the runs before; the verdict line first, on screen.
# A probe script is appended to a COPY of each page (the pages have no scripts; checked).
# Screenshots are kept as build/test/report_html_run.png and build/test/report_html_trend.png.
# Runtime about 20 s.
set -u
# shellcheck disable=SC2034 # read by lib/browser.sh
BROWSER_TEST_NAME=report-html
source "$(dirname "$0")/lib/browser.sh"
shot() { # PAGE NAME
    local png="$KPERF_BIN/../test/report_html_$2.png"
    browse --screenshot="$png" --window-size=1200,1600 "file://$1" >/dev/null
    [ -s "$png" ] && echo "screenshot: $png" || fail "no screenshot of the $2 page"
}

KPERF_WRITE_FIXTURES="$D" "$GEN" >/dev/null 2>&1 || fail "test_compare did not run"

# --- the run page: CDFs and readable provenance
jq '.metadata.cni = {"name": "cilium", "version": "1.16.1", "settings": {"routing": "native"}} |
    .metadata.nodes = [{"name": "node-1", "role": "client", "kernel": "6.8.0-kperf"},
                       {"name": "node-2", "role": "server", "kernel": "6.8.0-kperf"}] |
    .metadata.parameters = {"bytes_sent": 123456789012345, "tiny": 0.0000125, "wait_ms": 1500} |
    .metadata.readiness = {"pods": [{"pod": "c-0", "node": "node-2", "kind": "client",
                                     "created_unix_s": 1796310000.25, "total_s": 1.5}],
                           "nodes": [{"node": "node-1", "kind": "client", "pods": 1,
                                      "total_s": {"p50": 1.5, "max": 1.5}},
                                     {"node": "node-2", "kind": "churn", "pods": 3,
                                      "total_s": {"p50": 2, "max": 4.5}}]}' \
    "$D/base.json" >"$D/run.json"
"$KPERF" report "$D/run.json" -o html >"$D/run.html" 2>"$D/err" || fail "report -o html: $(cat "$D/err")"
grep -qi "<script" "$D/run.html" && fail "the run page has a script"
want_cdf=$(jq '[.results[] | select(.kind == "latency" and .aggregate.histogram != null)] | length' "$D/run.json")
p=$(probe "$D/run.html" --window-size=1280,800 <<'JS'
const cdfs = [...document.querySelectorAll('svg.cdf')];
out.cdf = cdfs.length;
out.lines = document.querySelectorAll('svg.cdf path.line').length;
out.rising = cdfs.every(s => {
  const path = s.querySelector('path.line'), len = path.getTotalLength();
  const a = path.getPointAtLength(0), b = path.getPointAtLength(len);
  return len > 50 && b.x > a.x && b.y < a.y; /* SVG y grows downwards */
});
out.kv = document.querySelectorAll('table.meta table.kv').length;
out.raw_json = [...document.querySelectorAll('table.meta td')].some(td => /^\s*[{\[]"/.test(td.textContent));
out.routing = [...document.querySelectorAll('table.kv th')].some(th => th.textContent === 'routing');
/* the page reads first (1280x800 window): the verdict, then the summary table on the first
 * screen, then the provenance card, the raw metadata folded away at the end */
const sum = document.getElementById('summary');
const before = (a, b) => !!(a && b && (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING));
const meta = document.querySelector('details#metadata');
out.first_h2 = document.querySelector('h2').id;
out.screen = window.innerHeight; /* the 1280x800 window: about 650 px of page in headless Chromium */
out.summary_top = sum.nextElementSibling.getBoundingClientRect().top;
out.summary_on_screen = sum.getBoundingClientRect().top < window.innerHeight &&
  sum.nextElementSibling.getBoundingClientRect().top < window.innerHeight;
out.order = before(document.getElementById('verdict'), sum) &&
  before(sum, document.getElementById('provenance')) &&
  before(document.querySelector('svg.readiness'), meta) &&
  before(document.getElementById('provenance'), meta) && !meta.nextElementSibling.matches('h2, table, svg');
out.verdict = document.getElementById('verdict').dataset.measured;
out.kernel = document.querySelector('dl.card').textContent.includes('kernel 6.8.0-kperf');
out.folded = !!document.querySelector('details#metadata:not([open]) table.meta') &&
  !document.querySelector('table.meta:not(details#metadata table.meta)');
out.exponent = (document.body.textContent.match(/[0-9]e[+-][0-9]/gi) || []).join(' ');
out.date = document.body.textContent.includes('2026-12-03 15:00:00 UTC');
out.ready_bars = [...document.querySelectorAll('svg.readiness rect.p50')].map(r => r.getBBox().width);
JS
)
echo "run page probe: $p"
jq -e --argjson n "$want_cdf" '.cdf == $n and .lines == $n and $n > 0 and .rising == true and
    .kv > 0 and .raw_json == false and .routing == true' <<<"$p" >/dev/null ||
    fail "run page: want $want_cdf rising CDFs and provenance as fields"
want_rows=$(jq '[.results[] | select((.samples | length) > 0)] | length' "$D/run.json")
jq -e --arg rows "$want_rows" '.first_h2 == "summary" and .screen > 600 and .summary_on_screen and
    .order and .verdict == $rows and .kernel and .folded and .exponent == "" and .date and
    (.ready_bars | length == 2 and .[0] > 0 and .[1] > .[0])' \
    <<<"$p" >/dev/null || fail "run page: want the verdict and the summary table first, on the first screen, then provenance, a readiness bar per node, the metadata folded at the end, dates, no exponents"
shot "$D/run.html" run

# --- the trend page: six runs, the last with 20% less Mb/s
i=0
for f in 1.00 1.01 0.99 1.005 0.995 0.80; do
    i=$((i + 1))
    jq --arg t "2026-11-0${i}T02:00:00Z" --argjson f "$f" '.metadata.start_time = $t |
        (.results[] | select(.test == "TCP_STREAM") | .samples[].throughput_mbps) |= . * $f |
        (.results[] | select(.test == "TCP_STREAM") | .aggregate.throughput_mbps) |= . * $f' \
        "$D/base.json" >"$D/r$i.json"
    "$KPERF" history add "$D/h" "$D/r$i.json" >/dev/null 2>"$D/err" || fail "history add: $(cat "$D/err")"
done
"$KPERF" history report "$D/h" -o html >"$D/trend.html" 2>"$D/err" || fail "history report: $(cat "$D/err")"
grep -qi "<script" "$D/trend.html" && fail "the trend page has a script"
grep -Eq '(src|href)=' "$D/trend.html" && fail "the trend page loads something"
"$KPERF" compare --baseline "$D/h" --runs 5 "$D/r6.json" -o json >"$D/cmp.json" 2>/dev/null
[ $? = 3 ] || fail "compare --baseline: want exit 3 (the regression)"
# the trend page judges r6 against the five before it, like the compare above (r6 is in the
# history, compare leaves a run named like itself out)
want_charts=$(jq '[.rows[].metrics | length] | add' "$D/cmp.json")
want_rows=$(jq '.rows | length' "$D/cmp.json")
want_reg=$(jq -c '[.rows[].metrics[] | select(.verdict == "regression") | .metric] | sort' "$D/cmp.json")
p=$(probe "$D/trend.html" --window-size=1280,800 <<'JS'
out.rows = document.querySelectorAll('section.row').length;
out.lines = document.querySelectorAll('svg.trend path.line').length;
out.charts = document.querySelectorAll('figure.metric').length;
out.regressed = [...document.querySelectorAll('figure.regressed')].map(f => f.dataset.metric).sort();
const marks = [...document.querySelectorAll('svg.trend circle.mark')];
out.marks = marks.length;
out.mark_fill = marks.length ? getComputedStyle(marks[0]).fill : '';
/* every mark sits on the newest run: the right end of its frame */
out.at_newest = marks.every(c => {
  const fr = c.ownerSVGElement.querySelector('rect.frame').getBBox();
  return Math.abs(c.cx.baseVal.value - (fr.x + fr.width)) < 1;
});
out.summary = document.getElementById('summary').dataset.charts;
/* the verdict leads: before the first series, on the first screen (1280x800) */
const sum = document.getElementById('summary');
out.summary_first = !!(sum.compareDocumentPosition(document.querySelector('h2.series')) & Node.DOCUMENT_POSITION_FOLLOWING);
out.summary_on_screen = sum.getBoundingClientRect().bottom < window.innerHeight;
out.exponent = (document.body.textContent.match(/[0-9]e[+-][0-9]/gi) || []).join(' ');
JS
)
echo "trend page probe: $p"
jq -e --argjson rows "$want_rows" --argjson charts "$want_charts" --argjson reg "$want_reg" '
    .rows == $rows and .lines == $charts and .charts == $charts and .summary == ($charts | tostring) and
    .regressed == $reg and ($reg | length) > 0 and .marks == ($reg | length) and
    .mark_fill == "rgb(204, 51, 51)" and .at_newest == true and .summary_first and
    .summary_on_screen and .exponent == ""' <<<"$p" >/dev/null ||
    fail "trend page: want the verdict first, $want_rows rows, $want_charts charts, regressions $want_reg marked at the newest run"
shot "$D/trend.html" trend

"$KPERF" history report "$D/h" -o csv >/dev/null 2>"$D/err"
[ $? = 2 ] && grep -q "prints html" "$D/err" || fail "history report -o csv: $(cat "$D/err")"
"$KPERF" history report "$D/empty" -o html >/dev/null 2>"$D/err"
[ $? = 1 ] || fail "history report of a missing dir: want exit 1: $(cat "$D/err")"

finish
