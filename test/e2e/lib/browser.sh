# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# browser.sh - helpers for the e2e tests that render kperf's HTML pages in a real browser
# (Debian's chromium, headless; sourced). Needs KPERF_BIN. Sets KPERF, GEN (test_compare, whose
# KPERF_WRITE_FIXTURES writes the synthetic reports), D (a temporary folder, removed on exit),
# and the checks of harness.sh. Provides browse ARGS... (chromium, bounded, quiet) and
# probe PAGE [ARGS...] < JS (PAGE with JS appended, which fills out{}, rendered with chromium's
# extra ARGS such as --window-size=1280,800: prints out's JSON).
# The pages themselves have no scripts; the probe runs in a copy.
KPERF="$KPERF_BIN/kperf"
GEN="$KPERF_BIN/../test/unit/test_compare"
[ -x "$KPERF" ] && [ -x "$GEN" ] || { echo "skip: kperf or test_compare not built"; exit 77; }
command -v chromium >/dev/null || { echo "FAIL: chromium missing (scripts/test.sh installs it)"; exit 1; }
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
h_tmpdir D "${BROWSER_TEST_NAME:-html}"
browse() {
    timeout 90 chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
        --user-data-dir="$D/profile" "$@" 2>>"$D/chromium.err"
}
probe() {
    cp "$1" "$D/probe.html"
    { echo "<script>const out = {};"; cat; echo "const pre = document.createElement('pre');"
      echo "pre.id = 'probe'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);</script>"
    } >>"$D/probe.html"
    browse --dump-dom "${@:2}" "file://$D/probe.html" >"$D/dom.html"
    python3 -c 'import re,sys,html; m=re.search(r"<pre id=\"probe\">(.*?)</pre>", open(sys.argv[1]).read(), re.S); print(html.unescape(m.group(1)) if m else "{}")' "$D/dom.html"
}
