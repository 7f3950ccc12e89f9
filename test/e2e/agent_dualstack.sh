#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_dualstack: a server with the default bind listens on [::] dual-stack; clients reach it
# on 127.0.0.1 and on [::1], every test forward and reverse; an IPv4 peer is logged, counted
# (--max-conns-per-addr) and matched as 127.0.0.1, never as ::ffff:127.0.0.1; the server finds
# its interface's MTU for either family.
. "$(dirname "$0")/agent_common.inc"
# dual_announced: PORT = the port the server announced on [::] (30 s bounds a hang; ~10 ms)
dual_announced() {
    PORT=$(sed -n 's/^kperf-agent: listening on \[::\]:\([0-9][0-9]*\) (tcp+udp)$/\1/p' "$WORK/server.log")
    [ -n "$PORT" ]
}

if ! ip -6 addr show dev lo 2>/dev/null | grep -q '::1/128'; then
    echo "skip: no IPv6 loopback here"; exit 77
fi
"$AGENT" server --port 0 -v 2> "$WORK/server.log" &
SRV_PID=$!
PORT=""
wait_for 30 "the server to announce its port on [::]" dual_announced
check "default bind is [::] (log: $(head -c 200 "$WORK/server.log"))" [ -n "$PORT" ]
[ -n "$PORT" ] || exit 1

for addr in 127.0.0.1 "[::1]"; do
    tag=${addr//[^0-9a-z]/_}
    "$AGENT" client --server "$addr:$PORT" --tests all --duration 300ms --streams 2 --udp-rate 10M \
        --json > "$WORK/fwd$tag.json" 2> "$WORK/fwd$tag.err"
    rc=$?
    check "$addr: all tests exit 0 (rc $rc: $(head -c 300 "$WORK/fwd$tag.err"))" [ "$rc" -eq 0 ]
    check "$addr: six results" jqt "$WORK/fwd$tag.json" '(.results | length) == 6'
    check "$addr: loopback MTU seen by both sides" jqt "$WORK/fwd$tag.json" \
        '.mtu.client == 65536 and .mtu.server == 65536'
    check "$addr: UDP_RR got answers" jqt "$WORK/fwd$tag.json" \
        '.results[] | select(.test == "UDP_RR") | .ops > 0'
    "$AGENT" client --server "$addr:$PORT" --tests TCP_STREAM,UDP_STREAM --reverse --duration 300ms \
        --udp-rate 10M --json > "$WORK/rev$tag.json" 2> "$WORK/rev$tag.err"
    rc=$?
    check "$addr: reverse TCP_STREAM, UDP_STREAM exit 0 (rc $rc: $(head -c 300 "$WORK/rev$tag.err"))" \
        [ "$rc" -eq 0 ]
    check "$addr: reverse UDP_STREAM received data" jqt "$WORK/rev$tag.json" \
        '.results[] | select(.test == "UDP_STREAM") | .bytes > 0'
done

check "IPv4 peers logged as 127.0.0.1" grep -q '127\.0\.0\.1:[0-9]*: .*accepted' "$WORK/server.log"
check "IPv6 peers logged as [::1]" grep -q '\[::1\]:[0-9]*: .*accepted' "$WORK/server.log"
check "no peer logged as ::ffff:" bash -c "! grep -q 'ffff' '$WORK/server.log'"

stop_server

# per-source cap through the dual-stack socket: 127.0.0.1 is one source, named as such
"$AGENT" server --port 0 --max-conns-per-addr 1 -v 2> "$WORK/server.log" &
# shellcheck disable=SC2034 # stop_server (agent_common.inc) reads it
SRV_PID=$!
PORT=""
wait_for 30 "the server to announce its port on [::]" dual_announced
start=$(date +%s)
"$AGENT" client --server "127.0.0.1:$PORT" --tests TCP_STREAM --duration 300ms \
    > "$WORK/cap.out" 2> "$WORK/cap.err"
rc=$?
check "IPv4 peer held to 1 connection per address (rc $rc, $(($(date +%s) - start)) s)" [ "$rc" -ne 0 ]
check "refusal names 127.0.0.1" grep -q '^kperf-agent: warning: 127\.0\.0\.1:[0-9]*: connection refused: 1 from its address' \
    "$WORK/server.log"
stop_server
finish
