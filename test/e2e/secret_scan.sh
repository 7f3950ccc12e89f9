#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# secret_scan.sh - no password kperf is given reaches any of its outputs, and every one still
# reaches the server it is for. A distinctive marker is the password, given in every way kperf
# accepts one:
#  1. Pushgateway (tests the credentials arrive: test/e2e/lib/auth_listener.py on loopback
#     answers 401 unless Authorization is exactly basic(user:marker)):
#     `kperf run --local` with the password in --push-gateway's URL (also as
#     --push-gateway=URL, with -vv), in --push-gateway-password-file, in
#     $KPERF_PUSHGATEWAY_PASSWORD; each with --output-dir and --history. `kperf report` of the
#     saved report in every format, pushing in the three ways. Failures that name the URL: a
#     wrong password (401), a closed port, refused URLs (usage errors).
#  2. the API client (`kperf cleanup --dry-run -vv`, the listener as proxy and API server): a
#     kubeconfig server URL and proxy-url with user-info (both headers must arrive), an
#     $HTTP_PROXY with user-info, and one libcurl refuses (its error quotes the proxy URL).
# Then every stdout, stderr, report file (JSON, HTML, CSV, Markdown), OpenMetrics text, the
# history folder and the bodies the gateway received are scanned: the marker is nowhere.
# Runtime about 30 s (three short local runs).
set -u
# shellcheck source=lib/local_common.sh
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
D=$(mktemp -d /tmp/kperf-secret-e2e.XXXXXX)
LISTENER=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    [ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null && wait "$LISTENER" 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT
# inputs that hold the secret (never scanned); everything kperf writes goes under $D/out
mkdir -p "$D/in" "$D/out" "$D/srv"
MARK="S3cr3tMarker-$RANDOM$RANDOM"
U=kperf-pusher
umask 077
printf '%s\n' "$MARK" >"$D/in/password"
printf 'not-%s\n' "$MARK" >"$D/in/wrong"

EXPECT_USER=$U EXPECT_PASS=$MARK python3 "$KPERF_SRC/test/e2e/lib/auth_listener.py" "$D/srv" \
    >"$D/srv/listener.log" 2>&1 &
LISTENER=$!
for ((i = 0; i < 100; i++)); do # up to 10 s (it starts in ~0.1 s)
    [ -s "$D/srv/port" ] && break
    sleep 0.1
done
[ -s "$D/srv/port" ] || { echo "FAIL: the auth listener did not start: $(cat "$D/srv/listener.log")"; exit 1; }
PORT=$(cat "$D/srv/port")
GW="127.0.0.1:$PORT"

# count METHOD AUTH PROXY_AUTH: requests the listener saw with those verdicts
count() {
    python3 - "$D/srv/requests.jsonl" "$@" <<'PY'
import json, sys
n = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        n += (r["method"], r["auth"], r["proxy_auth"]) == tuple(sys.argv[2:5])
except FileNotFoundError:
    pass
print(n)
PY
}
# exited RC WANT FILE PATTERN: status RC (pass $?) is WANT and FILE holds PATTERN (grep)
exited() {
    [ "$1" = "$2" ] && grep -q -- "$4" "$3"
}
# expect_pushes N WHAT: N pushes with the right credentials so far
expect_pushes() {
    local got
    got=$(count PUT ok none)
    [ "$got" = "$1" ] || fail "$2: the gateway got $got authenticated pushes, want $1"
}

COMMON=(--local --scenarios pod-to-pod --same-node --tests TCP_RR --duration 1s)
# run NAME ARGS...: kperf run, outputs in $D/out/NAME.*, exit status must be 0
run() {
    local name=$1 rc
    shift
    "$KPERF" run "${COMMON[@]}" --output-dir "$D/out/$name" --history "$D/out/history" "$@" \
        >"$D/out/$name.stdout" 2>"$D/out/$name.stderr"
    rc=$?
    [ "$rc" = 0 ] || fail "run $name: exit $rc: $(tail -n 3 "$D/out/$name.stderr")"
}

# 1. the Pushgateway: three runs, one per way of giving the password
run url -vv -o json "--push-gateway=http://$U:$MARK@$GW/"
expect_pushes 1 "password in the URL"
run file -o openmetrics --push-gateway "http://$U@$GW" --push-gateway-password-file "$D/in/password"
expect_pushes 2 "password file"
KPERF_PUSHGATEWAY_PASSWORD=$MARK run env -o markdown --push-gateway "http://$U@$GW"
expect_pushes 3 "password in the environment"
grep -q -- '"--push-gateway=http://127.0.0.1:' "$D/out/url/report.json" ||
    fail "report.json lost the (redacted) --push-gateway argument"

# every format of each saved report, and kperf report's own pushes
for name in url file env; do
    for fmt in table markdown csv html json openmetrics; do
        "$KPERF" report "$D/out/$name/report.json" -o "$fmt" >"$D/out/report-$name.$fmt" \
            2>"$D/out/report-$name.$fmt.err" || fail "kperf report $name -o $fmt"
    done
done
"$KPERF" report "$D/out/url/report.json" -o csv --push-gateway "http://$U:$MARK@$GW" \
    >"$D/out/rp1.out" 2>"$D/out/rp1.err" || fail "report push, URL: $(cat "$D/out/rp1.err")"
"$KPERF" report "$D/out/url/report.json" -o csv --push-gateway "http://$U@$GW" \
    --push-gateway-password-file "$D/in/password" >"$D/out/rp2.out" 2>"$D/out/rp2.err" ||
    fail "report push, file: $(cat "$D/out/rp2.err")"
KPERF_PUSHGATEWAY_PASSWORD=$MARK "$KPERF" report "$D/out/url/report.json" -o csv \
    --push-gateway "http://$U@$GW" >"$D/out/rp3.out" 2>"$D/out/rp3.err" ||
    fail "report push, environment: $(cat "$D/out/rp3.err")"
expect_pushes 6 "kperf report --push-gateway"
"$KPERF" history list "$D/out/history" >"$D/out/hist-list.out" 2>&1 || fail "history list"
"$KPERF" history report "$D/out/history" -o html >"$D/out/hist-report.html" 2>&1 ||
    fail "history report"

# failures whose messages name the URL: exit status, and the URL shown without its password
# expect_exit RC NAME WANT ARGS...: kperf report ARGS exits RC, stderr holds WANT
expect_exit() {
    local want_rc=$1 name=$2 want=$3 rc
    shift 3
    "$KPERF" report "$D/out/url/report.json" -o json "$@" >/dev/null 2>"$D/out/$name.err"
    rc=$?
    if [ "$rc" != "$want_rc" ] || ! grep -qF -- "$want" "$D/out/$name.err"; then
        fail "$name: exit $rc (want $want_rc), stderr: $(cat "$D/out/$name.err")"
    fi
}
expect_exit 1 wrong-password "push gateway http://$GW/metrics/job/kperf" \
    --push-gateway "http://$U:not-$MARK@$GW"
expect_exit 1 wrong-file-password "HTTP 401" --push-gateway "http://$U:$MARK@$GW" \
    --push-gateway-password-file "$D/in/wrong"
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect_exit 1 closed-port "push gateway http://127.0.0.1:$DEAD/metrics" \
    --push-gateway "http://$U:$MARK@127.0.0.1:$DEAD"
expect_exit 2 bad-scheme "'ftp://h/' is not an http:// or https:// URL" --push-gateway "ftp://$U:$MARK@h"
expect_exit 2 bad-query "'http://h/?x=1' must be a base URL" --push-gateway "http://$U:$MARK@h/?x=1"
expect_exit 2 bad-port "--push-gateway: 'http://REDACTED'" --push-gateway "http://$U:$MARK@h:99999"
expect_exit 2 no-gateway "needs --push-gateway" --push-gateway-password-file "$D/in/password"
"$KPERF" run "${COMMON[@]}" --push-gateway "http://$U:$MARK@h" \
    --push-gateway-password-file "$D/none" >/dev/null 2>"$D/out/no-file.err"
exited $? 2 "$D/out/no-file.err" "push-gateway-password-file: .*$D/none" ||
    fail "missing password file: $(cat "$D/out/no-file.err")"
expect_pushes 6 "after the failures"

# 2. the API client: kubeconfig server and proxy-url with user-info; $HTTP_PROXY
kubeconfig() { # kubeconfig FILE SERVER [PROXY_URL]
    {
        printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n'
        printf '    server: "%s"\n' "$2"
        [ -n "${3:-}" ] && printf '    proxy-url: "%s"\n' "$3"
        printf 'users:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n'
        printf 'current-context: x\n'
    } >"$1"
}
kubeconfig "$D/in/kc-url" "http://$U:$MARK@kperf-secret-api.invalid" "http://$U:$MARK@$GW"
"$KPERF" cleanup --kubeconfig "$D/in/kc-url" --dry-run -vv >"$D/out/kc-url.out" 2>"$D/out/kc-url.err"
exited $? 1 "$D/out/kc-url.err" forbidden || fail "kubeconfig: $(cat "$D/out/kc-url.err")"
[ "$(count GET ok ok)" -ge 1 ] ||
    fail "kubeconfig: server and proxy credentials did not both arrive: $(cat "$D/srv/requests.jsonl")"
kubeconfig "$D/in/kc-env" "http://198.18.0.1:6443"
HTTP_PROXY="http://$U:$MARK@$GW" "$KPERF" cleanup --kubeconfig "$D/in/kc-env" --dry-run -vv \
    >"$D/out/kc-env.out" 2>"$D/out/kc-env.err"
exited $? 1 "$D/out/kc-env.err" forbidden || fail "HTTP_PROXY: $(cat "$D/out/kc-env.err")"
[ "$(count GET none ok)" -ge 1 ] || fail "HTTP_PROXY: the proxy credentials did not arrive"
HTTP_PROXY="foo://$U:$MARK@127.0.0.1:1" "$KPERF" cleanup --kubeconfig "$D/in/kc-env" --dry-run \
    -vv --timeout 5s >"$D/out/kc-bad.out" 2>"$D/out/kc-bad.err"
exited $? 1 "$D/out/kc-bad.err" "Unsupported proxy scheme for 'foo://127.0.0.1:1/'" ||
    fail "unsupported proxy: $(tail -n 2 "$D/out/kc-bad.err")"

# the scan: every file kperf wrote or printed, the history and what the gateway received
n=$(find "$D/out" "$D/srv/pushed" -type f | wc -l)
[ "$n" -ge 60 ] || fail "only $n output files to scan; a step wrote nothing?"
mapfile -t leaks < <(grep -rlF -- "$MARK" "$D/out" "$D/srv/pushed")
if [ "${#leaks[@]}" = 0 ]; then
    echo "scanned $n files for the password: none holds it"
else
    fail "the password is in: ${leaks[*]}"
fi
for f in url/report.json url/report.html url/report.csv url/report.md file.stdout env.stdout; do
    [ -s "$D/out/$f" ] || fail "$f missing or empty"
done
[ -n "$(find "$D/out/history" -name '*.json')" ] || fail "the history kept no run"
# the same scan can fail: the marker in a scanned folder is found
printf 'x%sx\n' "$MARK" >"$D/out/probe"
grep -rqF -- "$MARK" "$D/out" || fail "the scan does not find a planted marker"
finish
