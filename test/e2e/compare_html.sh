#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# compare_html.sh - `kperf compare -o html` rendered in a real browser (Debian's chromium,
# headless): the synthetic base/regressed reports of test_compare give exit 3 and a page
# whose DOM, after layout, has the regressed metric in a red verdict cell (computed style),
# a coloured "new" bar and a grey "base" bar of non-zero width, and one table per compared
# row; a report name holding HTML stays text; the page reads first in a 1280x800 window (the
# verdict and the first table on the first screen, then the provenance card naming the
# changed kube-proxy mode, the thresholds folded in <details>, no number in exponent notation). A probe script is appended to a COPY of the
# page (the page itself has no scripts; the test checks that too). The screenshot is kept as
# build/test/compare_html.png. Runtime about 15 s.
set -u
# shellcheck disable=SC2034 # read by lib/browser.sh
BROWSER_TEST_NAME=compare-html
source "$(dirname "$0")/lib/browser.sh"

KPERF_WRITE_FIXTURES="$D" "$GEN" >/dev/null 2>&1 || fail "test_compare did not run"
# a hostile scenario name on both sides: it must come out as text
# and kube-proxy's mode changed from base to new: a provenance difference (a datapath setting)
for f in base regressed; do
    mode=iptables
    [ "$f" = regressed ] && mode=ipvs
    jq --arg mode "$mode" '(.results[] | select(.test == "TCP_STREAM") | .scenario) = "pod-to-pod<img src=x onerror=alert(1)>" |
        .metadata.kube_proxy_mode = $mode' \
        "$D/$f.json" >"$D/h-$f.json"
done
"$KPERF" compare "$D/h-base.json" "$D/h-regressed.json" -o html >"$D/page.html" 2>"$D/err"
rc=$?
[ "$rc" = 3 ] || fail "compare -o html: exit $rc, want 3: $(cat "$D/err")"
grep -qi "<script" "$D/page.html" && fail "the page has a script"
grep -q "<img" "$D/page.html" && fail "a report field was written as HTML"

probe=$(probe "$D/page.html" --window-size=1280,800 <<'JS'
const reg = [...document.querySelectorAll('tr.metric[data-verdict="regression"]')];
out.regressions = reg.map(r => r.dataset.metric);
if (reg.length) {
  out.verdict_bg = getComputedStyle(reg[0].querySelector('td.verdict')).backgroundColor;
  out.new_fill = getComputedStyle(reg[0].querySelector('rect.bar-new')).fill;
  out.base_fill = getComputedStyle(reg[0].querySelector('rect.bar-base')).fill;
  out.new_w = reg[0].querySelector('rect.bar-new').getBBox().width;
  out.base_w = reg[0].querySelector('rect.bar-base').getBBox().width;
}
out.tables = document.querySelectorAll('table.row').length;
out.summary = document.getElementById('summary').dataset.regressions;
out.hostile_text = [...document.querySelectorAll('h2.row')].some(h => h.textContent.includes('<img src=x'));
out.imgs = document.images.length;
/* the page reads first (1280x800 window): the verdict, then the rows, the provenance card,
 * the thresholds folded at the end */
const before = (a, b) => !!(a && b && (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING));
const sum = document.getElementById('summary'), prov = document.getElementById('provenance');
const settings = document.querySelector('details#settings:not([open])');
out.verdict = sum.dataset.verdict;
out.order = before(document.querySelector('h1'), sum) && before(sum, document.querySelector('table.row')) &&
  before(document.querySelector('table.row'), prov) && before(prov, settings) &&
  [...document.querySelectorAll('table.row')].every(t => before(t, prov));
out.on_screen = sum.getBoundingClientRect().bottom < window.innerHeight &&
  document.querySelector('table.row').getBoundingClientRect().top < window.innerHeight;
out.changed = [...document.querySelectorAll('dl.card dt')].map(d => d.textContent);
out.proxy = [...document.querySelectorAll('dl.card dd')].some(d => d.textContent === 'iptables \u2192 ipvs');
out.thresholds = settings ? settings.querySelectorAll('tr').length : 0;
out.exponent = (document.body.textContent.match(/[0-9]e[+-][0-9]/gi) || []).join(' ');
JS
)
[ "$probe" != "{}" ] || { fail "no probe output in the DOM ($(tail -2 "$D/chromium.err"))"; }
echo "DOM probe: $probe"
rows=$("$KPERF" compare "$D/h-base.json" "$D/h-regressed.json" -o json | jq '.rows | length')
want_reg=$("$KPERF" compare "$D/h-base.json" "$D/h-regressed.json" -o json | jq -c '[.rows[].metrics[] | select(.verdict == "regression") | .metric]')
jq -e --argjson rows "$rows" --argjson reg "$want_reg" '
    .regressions == $reg and (.regressions | length) > 0 and
    .verdict_bg == "rgb(248, 208, 208)" and .new_fill == "rgb(204, 51, 51)" and
    .base_fill == "rgb(170, 170, 170)" and .new_w > 0 and .base_w > 0 and
    .tables == $rows and .summary == "1" and .hostile_text == true and .imgs == 0 and
    .verdict == "regression" and .order and .on_screen and (.changed | index("kube_proxy_mode")) != null and
    .proxy and .thresholds > 1 and .exponent == ""' \
    <<<"$probe" >/dev/null || fail "rendered page: want the verdict first, regressions $want_reg, $rows tables, red verdict, bars, then provenance, settings folded, no exponents"

shot="$KPERF_BIN/../test/compare_html.png"
browse --screenshot="$shot" --window-size=1200,1400 "file://$D/page.html" >/dev/null
[ -s "$shot" ] && echo "screenshot: $shot" || fail "no screenshot"

# a format compare does not have is still a usage error
"$KPERF" compare "$D/base.json" "$D/regressed.json" -o csv >/dev/null 2>"$D/err"
[ $? = 2 ] && grep -q "table, markdown, json or html" "$D/err" || fail "compare -o csv: $(cat "$D/err")"

finish
