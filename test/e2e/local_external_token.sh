#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --local pod-to-external with --external-token-file (docs/external.md): kperf starts the
# external host's agent with that token file (as a real external host is started) and its
# pod-to-external clients use the same file, the in-cluster agents keep the run's own token;
# the report's provenance shows the external host's kernel, CPUs and NIC (eth0 of its
# namespace) as its agent reported them. A client holding another token fails with a clear
# error and the run leaves nothing behind. A wrapper (KPERF_AGENT) records every agent command
# line and, for the second run, hands the clients another token.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/local_common.sh"
local_preconditions
dir="" # set by h_tmpdir
h_tmpdir dir local-ext-token
umask 077
printf 'local-ext-%s\n' "$RANDOM$RANDOM" >"$dir/ext.token"
printf 'another-token\n' >"$dir/wrong.token"
cat >"$dir/agent" <<EOS
#!/bin/sh
echo "\$*" >>"$dir/argv.log"
if [ -n "\${SWAP_TOKEN:-}" ] && [ "\$1" = client ]; then
    out=
    for a in "\$@"; do [ "\$a" = "$dir/ext.token" ] && a="$dir/wrong.token"; out="\$out \$a"; done
    set -- \$out
fi
exec "$KPERF_BIN/kperf-agent" "\$@"
EOS
chmod 755 "$dir/agent"

KPERF_AGENT="$dir/agent" "$KPERF" run --local --scenarios pod-to-pod,pod-to-external \
    --same-node --tests TCP_RR,TCP_STREAM --duration 500ms \
    --external-token-file "$dir/ext.token" -o json >"$dir/ok.json" 2>"$dir/ok.err"
rc=$?
[ "$rc" = 0 ] || { fail "token run exit $rc: $(tail -3 "$dir/ok.err")"; }
id=$(run_id_of "$dir/ok.json")
[ -n "$id" ] || { fail "no run id in the report"; finish; }
jq -e '[.results[] | select(.scenario == "pod-to-external" and .status == "ok")] | length == 3' \
    "$dir/ok.json" >/dev/null ||
    fail "pod-to-external rows: $(jq -c '[.results[] | {scenario, test, reverse, status}]' "$dir/ok.json")"
# the external server and its clients hold the external token; the pod server the run's
grep -E "^server .*--bind 198\.18\.4\.2 .*--token-file $dir/ext\.token" "$dir/argv.log" >/dev/null ||
    fail "the external agent did not get --token-file ext.token: $(grep '^server' "$dir/argv.log")"
n=$(grep -c "^client --server 198\.18\.4\.2:.*--token-file $dir/ext\.token --server-facts --json" "$dir/argv.log")
[ "$n" -ge 2 ] || fail "pod-to-external clients without the external token: $(grep '^client' "$dir/argv.log")"
grep '^client ' "$dir/argv.log" | grep -v -- '--server 198\.18\.4\.2:' |
    grep -q -- "--token-file /run/kperf/$id/token --json" ||
    fail "the pod-to-pod client did not keep the run's token: $(grep '^client' "$dir/argv.log")"
jq -e --arg k "$(uname -r)" --argjson n "$(nproc)" '.metadata.external |
        .address == "198.18.4.2" and .kernel == $k and .cpus == $n and .interface == "eth0" and
        .net.nics[0].name == "eth0" and .net.nics[0].mtu == 1500 and .net.nics[0].driver == "veth"' \
    "$dir/ok.json" >/dev/null || fail "metadata.external: $(jq -c '.metadata.external' "$dir/ok.json")"
validate "$dir/ok.json"
grep -q "^external host .*(198.18.4.2, kernel $(uname -r), .*MTU 1500, NIC eth0 veth" <<<"$("$KPERF" report "$dir/ok.json")" ||
    fail "table: $("$KPERF" report "$dir/ok.json" | grep external)"
assert_clean "$id" "token run"

# clients with another token: refused by the external agent, a clear error, nothing left
: >"$dir/argv.log"
SWAP_TOKEN=1 KPERF_AGENT="$dir/agent" "$KPERF" run --local --scenarios pod-to-external \
    --tests TCP_RR --duration 500ms --external-token-file "$dir/ext.token" -o json \
    >"$dir/bad.json" 2>"$dir/bad.err"
rc=$?
[ "$rc" = 1 ] || fail "wrong token: exit $rc"
jq -e '[.results[] | select(.scenario == "pod-to-external")] | length > 0 and
       all(.[]; .status == "failed" and
           (tostring | test("refused by server: authentication failed: wrong or missing token")))' \
    "$dir/bad.json" >/dev/null || fail "wrong token rows: $(jq -c '[.results[] | {status, errors}]' "$dir/bad.json")"
id=$(run_id_of "$dir/bad.json")
[ -n "$id" ] && assert_clean "$id" "wrong-token run" || fail "no run id in the wrong-token report"
for p in /proc/[0-9]*; do
    tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "$dir/" &&
        fail "left running: $(tr '\0' ' ' 2>/dev/null <"$p/cmdline")"
done
finish
