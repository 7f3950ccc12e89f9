#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_probe.sh - `kperf-agent probe` against an unchanged server on loopback: a quiet run
# loses nothing and keeps its first connections; SIGTERM ends it promptly with the document;
# a server restart in the middle shows as one reset per session kind, an outage on every kind
# and a reconnect time; a wrong token is an error at start, not an outage. (The outage lengths
# of a blackholed link are checked by local_watch.sh.)
. "$(dirname "$0")/agent_common.inc"

printf 'sekret\n' > "$WORK/token"; chmod 600 "$WORK/token"
printf 'other\n' > "$WORK/bad"; chmod 600 "$WORK/bad"
start_server --token-file "$WORK/token"

probe() { "$AGENT" probe --server "127.0.0.1:$PORT" --token-file "$WORK/token" "$@"; }

# --- a quiet run ----------------------------------------------------------------------------
probe --duration 2s > "$WORK/q.json" 2> "$WORK/q.err"
rc=$?
Q="$WORK/q.json"
check "quiet: exit 0 (rc $rc: $(head -c 300 "$WORK/q.err"))" [ "$rc" -eq 0 ]
check "quiet: schema kperf.probe/v1" jqt "$Q" '.schema == "kperf.probe/v1"'
# the schedule's slots, sent or skipped: a slot that fell due while a busy machine stalled the
# prober is skipped (counted, not sent late in a burst), so the count holds on a loaded machine
check "quiet: ~200 udp and tcp slots, ~20 connects (sent or skipped)" jqt "$Q" \
    'def slots(p): p.sent + (p.skipped // 0); (slots(.probes.udp) | . >= 190 and . <= 210) and (slots(.probes.tcp) | . >= 190 and . <= 210) and (slots(.probes.connect) | . >= 18 and . <= 22)'
check "quiet: nothing lost, no outage" jqt "$Q" \
    'all(.probes[]; .lost == 0 and .answered == .sent and .outages_total == 0 and (.outages|length) == 0)'
check "quiet: connections survived, no reset" jqt "$Q" \
    '[.probes.udp, .probes.tcp] | all(.connection.survived and .connection.resets == 0 and .connection.sessions == 1)'
check "quiet: latency of every answer" jqt "$Q" \
    'all(.probes[]; .latency_us.count == .answered and .latency_us.p50 > 0 and .latency_us.p50 <= .latency_us.p99)'
# one period (10 ms, 100 ms for connects) when idle; 10x that bounds a stall without failing
# a busy machine's scheduling delays (an outage would have been counted above)
check "quiet: longest gap within 10 periods" jqt "$Q" \
    '.probes.udp.longest_gap_s < 0.1 and .probes.connect.longest_gap_s < 1.0'

# --- SIGTERM ends it with the document -------------------------------------------------------
# (not through the shell function: $! would be a subshell's pid); launched is read before the
# launch: read after it, a busy machine may run the probe's first milliseconds before `date`
launched=$(date +%s%N)
"$AGENT" probe --server "127.0.0.1:$PORT" --token-file "$WORK/token" \
    > "$WORK/t.json" 2> "$WORK/t.err" &
PP=$!
sleep 1 # probing time to report, not a wait for an event
t0=$(date +%s%N)
kill -TERM "$PP"
wait "$PP"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wall=$(( ($(date +%s%N) - launched) / 1000000 ))
check "SIGTERM: exit 0 (rc $rc: $(head -c 300 "$WORK/t.err"))" [ "$rc" -eq 0 ]
# it stops on the signal, not at a default duration; 20 s bounds a hang (it takes ~10 ms)
check "SIGTERM: ends on the signal (${ms} ms)" [ "$ms" -lt 20000 ]
# the document covers the time it ran (at most the ${wall} ms since launch) at <= 100 probes/s
check "SIGTERM: document printed with the probes of the time it ran" jqt "$WORK/t.json" \
    ".duration_s > 0 and .duration_s <= $wall / 1000 and .probes.udp.sent >= 1 and .probes.udp.sent <= .duration_s * 100 + 2"

# --- a server restart: resets and an outage --------------------------------------------------
# the server is down for 1 s (measured here: down_ms, from the kill to its port announced
# again); the outage must be at least that second and end within 2 s of the server's return
# (the probe's reconnect), starting no later than the kill; --duration 6s leaves the probe 3 s
# after the return, so a slow restart does not leave the outage open
launched=$(date +%s%N) # before the launch (above)
"$AGENT" probe --server "127.0.0.1:$PORT" --token-file "$WORK/token" --duration 6s \
    > "$WORK/r.json" 2> "$WORK/r.err" &
PP=$!
sleep 1 # probing time before the restart, not a wait for an event
OLDPORT=$PORT
killed=$(date +%s%N)
kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=""
sleep 1 # the outage itself
start_server --token-file "$WORK/token" --port "$OLDPORT"
down_ms=$(( ($(date +%s%N) - killed) / 1000000 ))
kill_ms=$(( (killed - launched) / 1000000 ))
wait "$PP"; rc=$?
R="$WORK/r.json"
check "restart: exit 0 (rc $rc: $(head -c 300 "$WORK/r.err"))" [ "$rc" -eq 0 ]
check "restart: one reset and a new session per kind, reconnected after the ${down_ms} ms down" jqt "$R" \
    "[.probes.udp, .probes.tcp] | all(.connection.resets == 1 and .connection.sessions == 2 and (.connection.survived | not) and .connection.reconnect_s_max > 0.5 and .connection.reconnect_s_max < $down_ms / 1000 + 2)"
check "restart: one closed outage on every kind, as long as the server was down (${down_ms} ms)" jqt "$R" \
    "all(.probes[]; .outages_total == 1 and .outages[0].length_s > 0.7 and .outages[0].length_s < $down_ms / 1000 + 2 and (.outages[0].open | not))"
check "restart: the outage starts by the kill (${kill_ms} ms after launch)" jqt "$R" \
    "all(.probes[]; .outages[0].start_s > 0 and .outages[0].start_s <= $kill_ms / 1000 + 0.1)"
check "restart: lost = sent - answered" jqt "$R" 'all(.probes[]; .lost == .sent - .answered)'

# --- sessions renewed before the server's deadline, memory flat -------------------------------
# 2000 probes/s per kind for 8 s (16000 each: hours at the default rate, time-compressed as
# far as the accounting goes), sessions renewed every 5 s, make before break.
"$AGENT" probe --server "127.0.0.1:$PORT" --token-file "$WORK/token" --rate 2000 \
    --session 5s --duration 8s -o "$WORK/m.json" 2> "$WORK/m.err" &
PP=$!
sleep 1.5
rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$PP/status")
sleep 5.5
rss2=$(awk '/^VmRSS/ {print $2}' "/proc/$PP/status")
wait "$PP"; rc=$?
M="$WORK/m.json"
check "long: exit 0 (rc $rc: $(head -c 300 "$WORK/m.err"))" [ "$rc" -eq 0 ]
check "long: ~16000 probes per kind" jqt "$M" '.probes.udp.sent > 14000 and .probes.tcp.sent > 14000'
check "long: sessions renewed, no reset, no outage" jqt "$M" \
    '[.probes.udp, .probes.tcp] | all(.connection.renewals >= 1 and .connection.resets == 0 and .connection.survived and .outages_total == 0)'
check "long: resident memory flat ($rss1 kB at 1.5 s, $rss2 kB at 7 s)" \
    [ "$((rss2 - rss1))" -lt 512 ]

# --- a wrong token is an error at start ------------------------------------------------------
"$AGENT" probe --server "127.0.0.1:$PORT" --token-file "$WORK/bad" --duration 1s \
    > "$WORK/b.json" 2> "$WORK/b.err"
rc=$?
check "wrong token: exit 1 (rc $rc)" [ "$rc" -eq 1 ]
check "wrong token: says so" grep -q "refused by server" "$WORK/b.err"
"$AGENT" probe --server "127.0.0.1:$PORT" --kinds udp,bogus > /dev/null 2> "$WORK/u.err"
rc=$?
check "bad --kinds: exit 2 (rc $rc)" [ "$rc" -eq 2 ]

stop_server
finish
