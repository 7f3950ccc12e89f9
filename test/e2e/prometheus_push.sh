#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# prometheus_push.sh - kperf's metrics in the real Prometheus stack (Debian's
# prometheus-pushgateway and prometheus, on 127.0.0.1 with free ports, temp config and data;
# both killed by PID at exit):
#  1. `kperf run --local ... --push-gateway URL --cluster-name NAME` (a NAME with a quote, a
#     backslash and a slash) measures TCP_RR and UDP_STREAM, prints and writes the report and
#     pushes; Prometheus scrapes the gateway, and /api/v1/query gives back the report's JSON
#     values (ops/s, p99 latency, throughput) and the cluster label byte for byte.
#  2. `kperf report -o openmetrics` of the saved report passes `promtool check metrics` and
#     ends with "# EOF".
#     The run's kperf_run_status is 0; kperf compare --push-gateway's kperf_verdict 3 comes back
#     and the shipped manifests/prometheus/kperf-alerts.yaml (loaded) fires KperfRegression.
#  3. a push to a closed port and to a URL that answers 404: exit 1, a one-line error naming
#     the URL, the report still printed and written; a bad --push-gateway is a usage error (2).
# Every wait is a bounded poll. Runtime about 15 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
for t in prometheus prometheus-pushgateway promtool curl jq python3; do
    command -v "$t" >/dev/null || { echo "FAIL: $t missing (scripts/test.sh installs it)"; exit 1; }
done
h_tmpdir D prom-e2e
pids=()
stop_daemons() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    return 0
}
on_exit stop_daemons

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_http URL SECONDS: polls until URL answers 2xx; 0 or 1 (60 s: bounds a hang, ~2 s normally)
wait_http() { wait_for "$2" "$1 to answer" curl -fsS -o /dev/null --max-time 1 "$1"; }

# two distinct free ports, both held at once while chosen (two free_port calls can return the
# same port when the first daemon has not bound it yet)
read -r PG_PORT PROM_PORT < <(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
prometheus-pushgateway --web.listen-address="127.0.0.1:$PG_PORT" >"$D/pushgw.log" 2>&1 &
pids+=($!)
cat >"$D/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $KPERF_SRC/manifests/prometheus/kperf-alerts.yaml
scrape_configs:
  - job_name: pushgateway
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:$PG_PORT"]
YML
prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/data" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$D/prometheus.log" 2>&1 &
pids+=($!)
PG="http://127.0.0.1:$PG_PORT"
PROM="http://127.0.0.1:$PROM_PORT"
wait_http "$PG/-/ready" 60 || { echo "FAIL: pushgateway not ready"; tail -5 "$D/pushgw.log"; exit 1; }
wait_http "$PROM/-/ready" 60 || { echo "FAIL: prometheus not ready"; tail -5 "$D/prometheus.log"; exit 1; }
# the daemons answering are ours: a daemon that lost its port to another process exits, and
# a ready check would then be answered by the other one (its data would not be this run's)
owns_port() { ss -Hltnp "sport = :$2" | grep -q "pid=$1,"; }
owns_port "${pids[0]}" "$PG_PORT" || { echo "FAIL: port $PG_PORT is not our pushgateway's"; tail -5 "$D/pushgw.log"; exit 1; }
owns_port "${pids[1]}" "$PROM_PORT" || { echo "FAIL: port $PROM_PORT is not our prometheus's"; tail -5 "$D/prometheus.log"; exit 1; }

# 1. run, push, query back
CLUSTER='e2e "blue"\cluster/1'
"$KPERF" run --local --scenarios pod-to-pod --same-node --tests TCP_RR,UDP_STREAM --duration 1s \
    --udp-rate 100M --output-dir "$D/out" --cluster-name "$CLUSTER" --push-gateway "$PG/" \
    >"$D/run.out" 2>"$D/run.err"
rc=$?
[ "$rc" = 0 ] || fail "run + push: exit $rc: $(head -c 400 "$D/run.err")"
grep -q "TCP_RR" "$D/run.out" || fail "run printed no table"
REP="$D/out/report.json"
[ -s "$REP" ] || { echo "FAIL: no report.json"; exit 1; }

# query EXPR: the first result's value (empty when none yet); the full answer in $D/q.json
query() {
    curl -fsS --max-time 5 -G "$PROM/api/v1/query" --data-urlencode "query=$1" >"$D/q.json" 2>/dev/null || return 0
    jq -r '.data.result[0].value[1] // empty' "$D/q.json"
}
# poll_query EXPR: query until a value comes back (at most 30 s); prints it
poll_query() {
    local i v
    for ((i = 0; i < 300; i++)); do
        v=$(query "$1")
        [ -n "$v" ] && { echo "$v"; return 0; }
        sleep 0.1
    done
    return 1
}
# same A B: equal to 1e-9 relative
same() { python3 -c 'import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b) <= 1e-9*max(abs(a),abs(b),1e-300) else 1)' "$1" "$2"; }

sel='scenario="pod-to-pod",placement="same-node",direction="forward",job="kperf"'
got=$(poll_query "kperf_ops_per_second{$sel,test=\"TCP_RR\"}") || fail "ops/s never reached Prometheus"
want=$(jq -r '.results[] | select(.test=="TCP_RR") | .aggregate.ops_per_sec' "$REP")
same "$got" "$want" || fail "ops/s: Prometheus $got, report $want"
echo "ops/s: Prometheus $got, report.json $want"

got=$(poll_query "kperf_latency_seconds{$sel,test=\"TCP_RR\",stat=\"p99\"}") || fail "p99 missing"
want=$(jq -r '.results[] | select(.test=="TCP_RR") | .aggregate.latency_us.p99 / 1e6' "$REP")
same "$got" "$want" || fail "p99: Prometheus $got s, report $want s"

got=$(poll_query "kperf_throughput_bytes_per_second{$sel,test=\"UDP_STREAM\"}") || fail "throughput missing"
want=$(jq -r '.results[] | select(.test=="UDP_STREAM") | .aggregate.throughput_mbps * 125000' "$REP")
same "$got" "$want" || fail "throughput: Prometheus $got B/s, report $want B/s"

poll_query 'kperf_run_info{job="kperf"}' >/dev/null || fail "kperf_run_info missing"
n=$(jq '.data.result | length' "$D/q.json")
[ "$n" = 1 ] || fail "kperf_run_info: $n series, want 1 (run ids: $(jq -c '[.data.result[].metric.run_id]' "$D/q.json"))"
label=$(jq -r '.data.result[0].metric.cluster' "$D/q.json")
[ "$label" = "$CLUSTER" ] || fail "cluster label came back as [$label], want [$CLUSTER]"
inst=$(jq -r '.data.result[0].metric.instance' "$D/q.json")
[ "$inst" = "$CLUSTER" ] || fail "instance (Pushgateway grouping) is [$inst], want [$CLUSTER]"
rid=$(jq -r '.data.result[0].metric.run_id' "$D/q.json")
[ "$rid" = "$(jq -r .metadata.run_id "$REP")" ] || fail "run_id label [$rid] is not the report's"

got=$(poll_query "kperf_run_status{job=\"kperf\"}") && [ "$got" = 0 ] || fail "kperf_run_status: [$got], want 0"

# the verdict: kperf compare pushes kperf_verdict to job kperf_verdict; the shipped alert rules
# (loaded by this Prometheus) fire on the regressed row
mkdir -p "$D/fx"
KPERF_WRITE_FIXTURES="$D/fx" "$KPERF_BIN/../test/unit/test_compare" >/dev/null 2>&1 || fail "test_compare fixtures"
"$KPERF" compare "$D/fx/base.json" "$D/fx/regressed.json" --push-gateway "$PG" \
    --termination-message-path '' >/dev/null 2>"$D/cmp.err"
rc=$?
[ "$rc" = 3 ] || fail "compare --push-gateway: exit $rc: $(cat "$D/cmp.err")"
got=$(poll_query 'kperf_verdict{job="kperf_verdict",test="TCP_STREAM"}') && [ "$got" = 3 ] ||
    fail "kperf_verdict of the regressed row: [$got], want 3"
firing() {
    curl -fsS --max-time 5 "$PROM/api/v1/alerts" 2>/dev/null | jq -e '[.data.alerts[] |
        select(.labels.alertname == "KperfRegression" and .state == "firing" and
               .labels.test == "TCP_STREAM")] | length == 1' >/dev/null
}
# 30 s bounds a hang (rules are evaluated every second here)
wait_for 30 "KperfRegression to fire" firing &&
    echo "ok: kperf_verdict 3 reached Prometheus; the shipped KperfRegression alert fires" ||
    fail "KperfRegression did not fire: $(curl -fsS "$PROM/api/v1/alerts" | head -c 400)"

# 2. promtool on the exposition of the saved report
"$KPERF" report "$REP" -o openmetrics >"$D/om.txt" || fail "report -o openmetrics"
promtool check metrics <"$D/om.txt" >"$D/promtool.out" 2>&1 || fail "promtool: $(cat "$D/promtool.out")"
[ "$(tail -n 1 "$D/om.txt")" = "# EOF" ] || fail "no '# EOF' at the end"
grep -q '^kperf_run_info{cluster="e2e \\"blue\\"\\\\cluster/1"' "$D/om.txt" || fail "label value not escaped: $(grep kperf_run_info "$D/om.txt" | tail -1)"
# kperf report pushes too: a second instance
"$KPERF" report "$REP" -o json --push-gateway "$PG" >/dev/null 2>"$D/err" || fail "report --push-gateway: $(cat "$D/err")"

# 3. failures: clear one-line error, exit 1, the report still out
DEAD=$(free_port)
rm -rf "$D/out2"
"$KPERF" report "$REP" -o csv --output-dir "$D/out2" --push-gateway "http://127.0.0.1:$DEAD" >"$D/stdout" 2>"$D/err"
rc=$?
[ "$rc" = 1 ] || fail "push to a closed port: exit $rc, want 1"
[ "$(wc -l <"$D/err")" = 1 ] && grep -q "push gateway http://127.0.0.1:$DEAD/metrics/job/kperf" "$D/err" ||
    fail "closed port: unclear error: $(cat "$D/err")"
grep -q "TCP_RR" "$D/stdout" && [ -s "$D/out2/report.json" ] || fail "closed port: report not printed/written"
"$KPERF" report "$REP" -o json --push-gateway "$PROM/nothing-here" >/dev/null 2>"$D/err"
rc=$?
[ "$rc" = 1 ] && grep -q "HTTP 404" "$D/err" || fail "404: exit $rc, $(cat "$D/err")"
"$KPERF" report "$REP" --push-gateway "ftp://x" >/dev/null 2>"$D/err"
rc=$?
[ "$rc" = 2 ] && grep -q "not an http:// or https:// URL" "$D/err" || fail "bad URL: exit $rc, $(cat "$D/err")"
"$KPERF" run --local --push-gateway "" >/dev/null 2>"$D/err"
[ $? = 2 ] || fail "run --push-gateway '': not a usage error: $(cat "$D/err")"

finish
