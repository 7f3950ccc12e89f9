#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# compare_notify.sh - where kperf compare's verdict goes besides stdout (docs/exit-status.md):
# the exit status (3 regression, 5 inconclusive, 0 ok), the one-line termination message
# (--termination-message-path), the kperf_verdict gauges PUT to a Pushgateway (--push-gateway)
# and the Slack-compatible message POSTed to --notify URL. The receivers are
# test/tools/http_receiver.py on 127.0.0.1: one that answers 503 once and then 200 (the retry),
# and a closed port (a receiver that is down: a warning, the exit status unchanged). The
# reports are synthetic (test_compare and test_verdict write them). About 8 s, 6 of them the
# retries' backoff.
set -u
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "$0")/lib/harness.sh"
KPERF="$KPERF_BIN/kperf"
GEN="$KPERF_BIN/../test/unit/test_compare"
GEN2="$KPERF_BIN/../test/unit/test_verdict"
[ -x "$KPERF" ] && [ -x "$GEN" ] && [ -x "$GEN2" ] || { echo "skip: kperf or the unit tests not built"; exit 77; }
h_tmpdir D compare-notify
KPERF_WRITE_FIXTURES="$D" "$GEN" >/dev/null 2>&1 || fail "test_compare did not run"
KPERF_WRITE_FIXTURES="$D" "$GEN2" >/dev/null 2>&1 || fail "test_verdict did not run"

# receiver NAME [--fail-first N]: starts one in $D/NAME; sets PORT
receiver() {
    local dir=$D/$1
    shift
    mkdir -p "$dir"
    python3 "$KPERF_SRC/test/tools/http_receiver.py" "$dir" "$@" &
    kill_on_exit $!
    # 30 s bounds a hang (python starts in well under 1 s)
    wait_for 30 "receiver $dir to listen" test -s "$dir/port" || return 1
    PORT=$(cat "$dir/port")
}
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# 1. a regression, a chat receiver that answers 503 once: exit 3, the message arrives once
receiver chat --fail-first 1
HOOK="http://127.0.0.1:$PORT/services/T0/B0/hook-secret-path"
"$KPERF" compare "$D/base.json" "$D/regressed.json" --notify "$HOOK" \
    --report-url "https://reports.example/nightly/" --termination-message-path "$D/tm1" \
    >"$D/out1" 2>"$D/err1"
rc=$?
line=$(cat "$D/tm1")
[ "$rc" = 3 ] && [[ "$line" == "kperf: regression (exit 3): 1 of 2 rows: pod-to-pod other-node TCP_STREAM Mb/s -"* ]] &&
    [ "$(wc -l <"$D/tm1")" = 1 ] &&
    pass "regression: exit 3, termination message: $line" ||
    fail "regression: exit $rc, termination message [$line], stderr $(cat "$D/err1")"
[ -s "$D/chat/req-2.json" ] && [ ! -e "$D/chat/req-3.json" ] &&
    jq -e --arg line "$line" '.status == 200 and .method == "POST" and
        .path == "/services/T0/B0/hook-secret-path" and .content_type == "application/json" and
        (.body | fromjson | .text == $line and (.blocks | length) == 3 and
         (.blocks[2].elements[0].text | contains("<https://reports.example/nightly/report.html|report>")))' \
        "$D/chat/req-2.json" >/dev/null &&
    jq -e '.status == 503' "$D/chat/req-1.json" >/dev/null && ! grep -q warning "$D/err1" &&
    pass "--notify: 503 then 200, one message delivered (text = the termination line, 3 blocks, links)" ||
    fail "--notify retry: $(cat "$D"/chat/req-*.json 2>/dev/null | head -c 600) stderr: $(cat "$D/err1")"

# 2. the chat receiver is down: the same exit status, one warning that hides the hook's path
"$KPERF" compare "$D/base.json" "$D/regressed.json" --termination-message-path "$D/tm2" \
    --notify "http://127.0.0.1:$DEAD/services/T0/B0/hook-secret-path" >/dev/null 2>"$D/err2"
rc=$?
[ "$rc" = 3 ] && [ "$(cat "$D/err2")" = "kperf: warning: --notify http://127.0.0.1:$DEAD: no answer after 3 attempts (exit status unchanged)" ] &&
    [ "$(cat "$D/tm2")" = "$line" ] &&
    pass "--notify to a receiver that is down: exit 3 unchanged, $(cat "$D/err2")" ||
    fail "receiver down: exit $rc, stderr $(cat "$D/err2")"

# 3. the gauges: a gateway that answers 503 once, then takes the PUT
receiver gw --fail-first 1
"$KPERF" compare "$D/base.json" "$D/regressed.json" --push-gateway "http://127.0.0.1:$PORT" \
    --termination-message-path '' >/dev/null 2>"$D/err3"
rc=$?
jq -r .body "$D/gw/req-2.json" >"$D/verdict.prom" 2>/dev/null
[ "$rc" = 3 ] && [ ! -e "$D/gw/req-3.json" ] &&
    jq -e '.method == "PUT" and (.path | startswith("/metrics/job/kperf_verdict/instance@base64/"))' \
        "$D/gw/req-2.json" >/dev/null &&
    grep -qx 'kperf_verdict{scenario="pod-to-pod",placement="other-node",test="TCP_STREAM",direction="forward",ip_family="IPv4",cluster="local"} 3' "$D/verdict.prom" &&
    grep -qx 'kperf_compare_status{cluster="local"} 3' "$D/verdict.prom" &&
    pass "--push-gateway: 503 then 200, kperf_verdict 3 for the regressed row and kperf_compare_status 3" ||
    fail "push: exit $rc, $(head -c 600 "$D/verdict.prom"), stderr $(cat "$D/err3")"
if command -v promtool >/dev/null; then
    promtool check metrics <"$D/verdict.prom" >/dev/null 2>&1 &&
        pass "promtool check metrics accepts the verdict gauges" ||
        fail "promtool: $(promtool check metrics <"$D/verdict.prom" 2>&1 | head -3)"
fi
"$KPERF" compare "$D/base.json" "$D/regressed.json" --push-gateway "http://127.0.0.1:$DEAD" \
    --termination-message-path '' >/dev/null 2>"$D/err4"
rc=$?
[ "$rc" = 3 ] && grep -q "^kperf: warning: the verdict was not pushed: 3 attempts: push gateway http://127.0.0.1:$DEAD/metrics/job/kperf_verdict/.*(exit status unchanged)$" "$D/err4" &&
    pass "a Pushgateway that is down: exit 3 unchanged, one warning" ||
    fail "gateway down: exit $rc, stderr $(cat "$D/err4")"

# 4. inconclusive and ok
"$KPERF" compare "$D/noisy-base.json" "$D/noisy-worse.json" --termination-message-path "$D/tm5" >"$D/out5" 2>&1
rc=$?
[ "$rc" = 5 ] && grep -q "^kperf: inconclusive (exit 5): 1 of 2 rows: " "$D/tm5" && grep -q "inconclusive" "$D/out5" &&
    pass "noise wider than the threshold: exit 5, $(cat "$D/tm5")" ||
    fail "inconclusive: exit $rc, $(cat "$D/tm5") $(tail -2 "$D/out5")"
"$KPERF" compare "$D/base.json" "$D/noise.json" --termination-message-path "$D/tm0" >/dev/null 2>&1
rc=$?
[ "$rc" = 0 ] && [ "$(cat "$D/tm0")" = "kperf: ok (exit 0): no regression in 2 rows compared" ] &&
    pass "no change: exit 0, $(cat "$D/tm0")" || fail "ok: exit $rc, $(cat "$D/tm0")"

# 5. usage
"$KPERF" compare "$D/base.json" "$D/noise.json" --report-url https://x >/dev/null 2>"$D/err6"
[ $? = 2 ] && grep -q "report-url applies to --notify URL only" "$D/err6" &&
    pass "--report-url without --notify: usage error" || fail "report-url: $(cat "$D/err6")"
"$KPERF" compare "$D/base.json" "$D/noise.json" --notify ftp://x >/dev/null 2>"$D/err7"
[ $? = 2 ] && grep -q "not an http:// or https:// URL" "$D/err7" &&
    pass "--notify ftp://: usage error" || fail "notify ftp: $(cat "$D/err7")"
echo "e2e.compare_notify: $SECONDS s"
finish
