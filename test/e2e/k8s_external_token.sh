#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pod-to-external against a token-protected external agent (docs/external.md) on kube-sim: the
# agent on the "external host" runs with --token-file F and the run passes
# --external-token-file F, given as a NAME that only the controller can resolve (a private
# /etc/hosts in a mount namespace: the agent in the pod has no resolver). The client pods get
# that token alone from the run's Secret; the report's provenance carries the external host's
# kernel, CPUs and NIC as its agent reported them; a wrong token fails every row with a clear
# error and leaves nothing behind; a name that does not resolve is a one-line usage error.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
k8s_up --nodes 2
EXT_IP=198.19.0.250
EXT_PORT=5302
EXT_NAME=ext-agent.kperf.test
k8s_external_host "$EXT_IP" node-1 node-2
umask 077
printf 'ext-secret-%s\n' "$RANDOM$RANDOM" >"$K8S_DIR/ext.token"
printf 'not-the-token\n' >"$K8S_DIR/wrong.token"
printf '127.0.0.1 localhost\n%s %s\n' "$EXT_IP" "$EXT_NAME" >"$K8S_DIR/hosts"
k8s_external_start --port $EXT_PORT --bind $EXT_IP --token-file "$K8S_DIR/ext.token"

# kperf with $EXT_NAME in its resolver only (a private /etc/hosts)
kperf_named() {
    unshare --mount -- sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh \
        "$K8S_DIR/hosts" "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "$@"
}

# 1. the right token, the server given by name
k8s_record_pods_start "$K8S_DIR/pods.jsonl"
kperf_named --scenarios pod-to-external --tests TCP_RR,TCP_STREAM --duration 1s \
    --external-server "$EXT_NAME:$EXT_PORT" --external-token-file "$K8S_DIR/ext.token" \
    -o json >"$K8S_DIR/ok.json" 2>"$K8S_DIR/ok.err"
rc=$?
k8s_record_pods_stop
[ "$rc" = 0 ] && pass "token run exits 0" || { fail "token run exit $rc"; tail -5 "$K8S_DIR/ok.err"; }
if jq -e '[.results[] | select(.scenario == "pod-to-external" and .status == "ok") |
          "\(.test)/\(.reverse)"] | sort == ["TCP_RR/false", "TCP_STREAM/false", "TCP_STREAM/true"]' \
    "$K8S_DIR/ok.json" >/dev/null; then
    pass "pod-to-external with a token: TCP_RR, TCP_STREAM both directions"
else
    fail "rows: $(jq -c '[.results[] | {scenario, test, reverse, status, error}]' "$K8S_DIR/ok.json")"
fi
grep -q "authentication failed" "$K8S_DIR/ext.log" &&
    fail "the external agent refused a client: $(grep -m1 'authentication' "$K8S_DIR/ext.log")" ||
    pass "the external agent authenticated every client"
# the client pods: the external token alone, by file, never in args or env
pods=$(jq -s -c '[.[] | select(.metadata.labels["kperf.io/scenario"] == "pod-to-external")] |
                 unique_by(.metadata.name)' "$K8S_DIR/pods.jsonl")
if echo "$pods" | jq -e 'length > 0 and all(.[];
        (.spec.volumes[0].secret.items == [{"key": "external-token", "path": "external-token"}]) and
        (.spec.containers[0].args | index("--token-file") as $i |
            $i != null and .[$i + 1] == "/var/run/kperf/external-token") and
        (.spec.containers[0].args | index("--server") as $i | .[$i + 1] == "198.19.0.250:5302") and
        (.spec.containers[0].env == null))' >/dev/null; then
    pass "client pods: the Secret's external-token key only, --token-file, the resolved address"
else
    fail "client pods: $(echo "$pods" | jq -c '[.[] | {v: .spec.volumes, a: .spec.containers[0].args}]')"
fi
tok=$(head -c 12 "$K8S_DIR/ext.token")
if grep -q "$tok" "$K8S_DIR/pods.jsonl" "$K8S_DIR/ok.json" "$K8S_DIR/ok.err"; then
    fail "the token appears in a pod spec or the report"
else
    pass "the token is in no pod spec, report or log"
fi
if jq -e --arg k "$(uname -r)" --arg br "$BR" --argjson n "$(nproc)" '.metadata.external |
        .name == "ext-agent.kperf.test" and .address == "198.19.0.250" and .kernel == $k and
        .cpus == $n and .interface == $br and .net.nics[0].name == $br and
        (.net.nics[0].mtu | type == "number")' "$K8S_DIR/ok.json" >/dev/null; then
    pass "provenance: the external host's name, address, kernel, CPUs and NIC ($BR)"
else
    fail "metadata.external: $(jq -c '.metadata.external' "$K8S_DIR/ok.json")"
fi
python3 "$KPERF_SRC/test/tools/validate_report.py" "$KPERF_SRC/docs/report-schema.json" \
    "$K8S_DIR/ok.json" >/dev/null && pass "report matches docs/report-schema.json" ||
    fail "report does not match docs/report-schema.json"
"$KPERF" report "$K8S_DIR/ok.json" >"$K8S_DIR/ok.txt" 2>&1
grep -q "^external host ext-agent.kperf.test (198.19.0.250, kernel $(uname -r), .*NIC $BR" \
    "$K8S_DIR/ok.txt" && pass "the table shows the external host" ||
    fail "table: $(grep -m1 'external' "$K8S_DIR/ok.txt")"
grep -q "^- external host ext-agent.kperf.test" <<<"$("$KPERF" report -o markdown "$K8S_DIR/ok.json")" &&
    pass "the Markdown shows the external host" || fail "markdown has no external host line"
k8s_nothing_left "token run"

# 2. a wrong token: every row fails with the reason, nothing left behind
kperf_named --scenarios pod-to-external --tests TCP_RR --duration 1s \
    --external-server "$EXT_NAME:$EXT_PORT" --external-token-file "$K8S_DIR/wrong.token" \
    -o json >"$K8S_DIR/bad.json" 2>"$K8S_DIR/bad.err"
rc=$?
[ "$rc" = 1 ] && pass "wrong token: exit 1" || fail "wrong token: exit $rc"
if jq -e '[.results[] | select(.scenario == "pod-to-external")] | length > 0 and
          all(.[]; .status == "failed" and (tostring | test("authentication failed")))' \
    "$K8S_DIR/bad.json" >/dev/null; then
    pass "wrong token: every row failed, saying authentication failed"
else
    fail "wrong token rows: $(jq -c '[.results[] | {status, errors}], .errors' "$K8S_DIR/bad.json")"
fi
k8s_nothing_left "wrong token"

# 3. a name that does not resolve: one line, exit 2, before anything is created
n0=$(k8s_user_requests)
kperf_k8s --scenarios pod-to-external --external-server no-such-host.invalid:5302 \
    --external-token-file "$K8S_DIR/ext.token" >/dev/null 2>"$K8S_DIR/nores.err"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$K8S_DIR/nores.err")" = 1 ] &&
    grep -q "^kperf: error: --external-server: 'no-such-host.invalid' " "$K8S_DIR/nores.err" &&
    pass "unresolvable name: one line, exit 2" || fail "unresolvable: rc $rc: $(cat "$K8S_DIR/nores.err")"
[ "$(k8s_user_requests)" = "$n0" ] && pass "unresolvable name: no API request" ||
    fail "unresolvable name: API requests were sent"
# a token file the agent would refuse is refused here too, before anything runs
mkfifo "$K8S_DIR/fifo.token"
kperf_k8s --scenarios pod-to-external --external-server "$EXT_IP:$EXT_PORT" \
    --external-token-file "$K8S_DIR/fifo.token" >/dev/null 2>"$K8S_DIR/fifo.err"
rc=$?
[ "$rc" = 2 ] && grep -q "external-token-file.*FIFO" "$K8S_DIR/fifo.err" &&
    pass "a FIFO as the token file: refused at once" || fail "fifo: rc $rc: $(cat "$K8S_DIR/fifo.err")"
ks_finish
