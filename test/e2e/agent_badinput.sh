#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_badinput.sh - the server under bad input: garbage, truncated and oversized hellos, a
# wrong or missing token, idle half-open connections, a connection flood, one source holding its
# connection limit, clients vanishing mid-test, over-limit requests, a test overrunning its
# deadline, a reverse UDP_STREAM whose receiver is gone. Each costs one log line and that
# connection only; the server keeps serving. The handshake is mutual: a client with a token
# refuses a server without one, or one that cannot prove it. Token files are read exactly (NUL
# bytes and FIFOs refused, loose modes warned about). A client that cannot reach its server
# fails fast, naming host:port and why.
. "$(dirname "$0")/agent_common.inc"
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }

printf 's3cret-token\n' > "$WORK/token"
printf 'wrong-token' > "$WORK/wrong"
chmod 600 "$WORK/token" "$WORK/wrong"
start_server --token-file "$WORK/token" --handshake-timeout 1s --idle-timeout 2s \
    --max-conns 40 --max-streams 4 --max-duration 5s

# raw MODE [ARG...]: a raw peer speaking protocol version 7 by hand (test/tools/agent_rawpeer.py);
# prints how the server treated it
raw() {
    python3 "$KPERF_SRC/test/tools/agent_rawpeer.py" "$PORT" "$@"
}

count() { grep -c "$1" "$WORK/server.log"; }
went_away_count_is() { [ "$(count 'client went away during')" -eq "$1" ]; }
serves() { # a real client still gets results
    client --token-file "$WORK/token" --tests TCP_RR --duration 200ms --json > "$WORK/ok.json" 2>&1 &&
        jqt "$WORK/ok.json" '(.results|length) == 1'
}

# started now, checked at the end of this server's section: it takes omit + duration + 10 s
raw overrun s3cret-token > "$WORK/overrun.out" 2>&1 &
overrun_pid=$!

# --- malformed input ------------------------------------------------------------------------
check "CHALLENGE: 52 bytes, kernel tag over this boot id" [ "$(raw kernel-tag)" = "type 2 len 52 tag-ok" ]
check "garbage: connection dropped" [ "$(raw garbage)" = closed ]
check "garbage: one log line naming the reason" [ "$(count 'protocol error: bad magic')" -eq 1 ]
check "oversized hello: dropped on the header alone" [ "$(raw oversized)" = closed ]
check "oversized hello: one log line" [ "$(count 'bad length 4294967295')" -eq 1 ]
check "server-only message type from a client: dropped" [ "$(raw bad-type)" = closed ]
check "truncated hello: dropped at the handshake deadline" [ "$(raw truncated)" = closed-after-timeout ]
check "idle half-open connection: dropped at the handshake deadline" [ "$(raw idle)" = closed-after-timeout ]
check "handshake deadline: one log line each" [ "$(count 'no progress in time')" -eq 2 ]
check "TEST_REQ before AUTH: dropped" [ "$(raw skip-auth)" = closed ]
out=$(raw v1-client)
check "protocol version 1 client: a REFUSE it can decode, code 5 ($out)" \
    [ "$out" = "v1 type 6 code 5: protocol version 1..1 not supported (this server speaks 7)" ]
check "still serving after malformed input" serves

# --- authentication ---------------------------------------------------------------------------
client --token-file "$WORK/wrong" --tests TCP_RR --duration 200ms --json > "$WORK/wrong.json" 2> "$WORK/wrong.err"
rc=$?
check "wrong token: client exits 1" [ "$rc" -eq 1 ]
check "wrong token: clear error" grep -q 'authentication failed' "$WORK/wrong.err"
check "wrong token: JSON still printed with errors[]" jqt "$WORK/wrong.json" '(.errors|length) == 1 and (.results|length) == 0'
check "wrong token: server logs one line" [ "$(count 'refused: authentication failed')" -eq 1 ]
client --tests TCP_RR --duration 200ms > /dev/null 2> "$WORK/notoken.err"
rc=$?
check "no token: client exits 1 asking for --token-file" \
    bash -c "[ $rc -eq 1 ] && grep -q 'server requires a token: pass --token-file' '$WORK/notoken.err'"
check "HMAC from an independent implementation accepted, server proof verified" \
    [ "$(raw auth-good s3cret-token)" = accepted ]
check "authenticated but out-of-range request refused with the reason" \
    [ "$(raw auth-bad-req s3cret-token)" = "refused: bad test request: streams 0 out of range [1, 128]" ]
check "the token never reaches a log" bash -c "! grep -q s3cret '$WORK/server.log' '$WORK/wrong.err' '$WORK/notoken.err'"

# --- limits -----------------------------------------------------------------------------------
client --token-file "$WORK/token" --tests TCP_STREAM_MULTI --streams 8 --duration 200ms > /dev/null 2> "$WORK/lim.err"
rc=$?
check "over --max-streams: refused with the limit named" \
    bash -c "[ $rc -eq 1 ] && grep -q '8 streams exceed server max 4' '$WORK/lim.err'"
client --token-file "$WORK/token" --tests TCP_RR --duration 6s > /dev/null 2> "$WORK/dur.err"
rc=$?
check "over --max-duration: refused at once" \
    bash -c "[ $rc -eq 1 ] && grep -q 'exceeds server max 5000 ms' '$WORK/dur.err'"

client --token-file "$WORK/token" --tests UDP_STREAM --reverse --udp-rate 20G --duration 1s \
    > /dev/null 2> "$WORK/rate.err"
rc=$?
check "over the default --max-rate (10 Gbit/s): refused at once" \
    bash -c "[ $rc -eq 1 ] && grep -q 'rate 20000000000 bit/s exceeds server max 10000000000' '$WORK/rate.err'"

# --- a flood of connections -------------------------------------------------------------------
# the lines the flood itself costs: the log before it holds ~16 lines already (one per bad input
# above, and more of them get through the limiter's 2 lines/s the slower the machine runs)
before_flood=$(wc -l < "$WORK/server.log")
out=$(raw flood 120)
early=$(echo "$out" | sed -n 's/.*early=\([0-9]*\).*/\1/p')
late=$(echo "$out" | sed -n 's/.*late=\([0-9]*\).*/\1/p')
check "flood: connections over --max-conns closed at once ($out)" [ "${early:-0}" -ge 70 ]
check "flood: the rest dropped by the handshake deadline ($out)" [ "${late:-0}" -eq 120 ]
# 120 connections, 80 refused at accept and 40 dropped at the deadline: ~12 lines (10 of the burst,
# 1 for the refusals), 120 without the limiters
flood_lines=$(( $(wc -l < "$WORK/server.log") - before_flood ))
check "flood: log lines rate-limited ($flood_lines lines for 120 connections)" [ "$flood_lines" -lt 30 ]
check "still serving after the flood" serves

# --- reverse UDP_STREAM to a receiver that is gone ----------------------------------------------
out=$(raw udp-closed s3cret-token)
ms=$(echo "$out" | sed -n 's/.*send_ms=\([0-9]*\).*/\1/p')
check "reverse UDP to a closed port: RESULT says unreachable ($out)" \
    bash -c "echo '$out' | grep -q 'type=13 stop=1 '"
# stop=1 above says it stopped on the ICMP error; before the test's 3 s end says it did not run on
check "reverse UDP to a closed port: sending stopped before the test's end (${ms:-?} ms)" [ "${ms:-9999}" -lt 3000 ]
out=$(raw udp-silent s3cret-token)
ms=$(echo "$out" | sed -n 's/.*send_ms=\([0-9]*\).*/\1/p')
check "reverse UDP without keep-alives: RESULT says silent ($out)" \
    bash -c "echo '$out' | grep -q 'type=13 stop=2 '"
# not before the 1 s keep-alive timeout, and on it (stop=2 above), not at the test's 3 s end
check "reverse UDP without keep-alives: stopped after the 1 s timeout, before the test's end (${ms:-?} ms)" \
    bash -c "[ ${ms:-9999} -ge 900 ] && [ ${ms:-9999} -lt 3000 ]"
check "reverse UDP stops are logged with the reason" \
    bash -c "grep -q 'reverse UDP_STREAM stopped sending after .* ms: the receiver is unreachable (Connection refused)' '$WORK/server.log' &&
             grep -q 'stopped sending after .* ms: no keep-alive from the receiver' '$WORK/server.log'"

# --- clients vanishing mid-test ---------------------------------------------------------------
for t in TCP_STREAM "TCP_STREAM --reverse" UDP_STREAM TCP_RR; do
    before=$(count 'client went away during')
    # shellcheck disable=SC2086
    "$AGENT" client --server "127.0.0.1:$PORT" --token-file "$WORK/token" --tests $t \
        --duration 4s --udp-rate 50M > /dev/null 2>&1 &
    cpid=$!
    # into the 4 s test (its handshake takes ~10 ms; a client killed still in its handshake
    # would be logged "closed during handshake" instead, and not counted here)
    sleep 1
    kill -9 "$cpid"; wait "$cpid" 2>/dev/null
    check "$t: client killed mid-test, server logs one line" \
        eventually went_away_count_is $((before + 1))
done
check "still serving after vanished clients" serves
check "server still running" kill -0 "$SRV_PID"
wait "$overrun_pid"
check "a test past its deadline: REFUSE code 7 (timeout) ($(cat "$WORK/overrun.out"))" \
    grep -q '^type 6 code 7: test exceeded its deadline$' "$WORK/overrun.out"

# --- a client that cannot reach its server ----------------------------------------------------
free_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
t0=$(date +%s%N)
"$AGENT" client --server "127.0.0.1:$free_port" --tests all --samples 3 --json > "$WORK/unreach.json" 2> "$WORK/unreach.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "unreachable: exit 1" [ "$rc" -eq 1 ]
# the refusal is tried again for 3 s (CLIENT_REFUSED_RETRY_MS), then every later sample is
# skipped: normally ~3 s; 20 s bounds a hang
check "unreachable: fails at once for 18 samples (${ms} ms)" [ "$ms" -lt 20000 ]
check "unreachable: names host:port and the error" grep -q "cannot connect to 127.0.0.1:$free_port (127.0.0.1): Connection refused" "$WORK/unreach.err"
check "unreachable: every sample in errors[]" jqt "$WORK/unreach.json" '(.errors|length) == 18 and (.results|length) == 0'
check "unreachable: document still valid" "$AGENT" validate "$WORK/unreach.json"

# a server that comes up while its client is already trying (as a Service that the client's
# node has not programmed yet refuses for a moment): once the client has been refused, the
# server starts; the refusal is tried again (--connect-retry 120s: a bound, not a budget) and the
# sample measured; without the retry the client fails at its first refusal
late_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$AGENT" client --server "127.0.0.1:$late_port" --tests TCP_RR --duration 1s --connect-retry 120s \
    --json -v -v > "$WORK/late.json" 2> "$WORK/late.err" &
late_client=$!
refused_once() { grep -q "Connection refused; trying again" "$WORK/late.err" || ! kill -0 "$late_client" 2>/dev/null; }
wait_for 60 "the late client's first refusal" refused_once
"$AGENT" server --port "$late_port" --bind 127.0.0.1 2> "$WORK/late-server.log" &
late_srv=$!
wait "$late_client"
rc=$?
kill "$late_srv" 2>/dev/null
wait "$late_srv" 2>/dev/null
check "a server up after its client was refused: the client tries again (rc $rc: $(tail -1 "$WORK/late.err"))" [ "$rc" -eq 0 ]
check "a server up after its client was refused: it was refused first" grep -q "Connection refused; trying again" "$WORK/late.err"
check "a server up after its client was refused: TCP_RR measured" jqt "$WORK/late.json" '(.results|length) == 1 and (.errors|length) == 0'

raw deaf-listener 60 > "$WORK/deaf.port" &
wait_for 30 "the silent listener's port" test -s "$WORK/deaf.port"
deaf=$(head -1 "$WORK/deaf.port")
t0=$(date +%s%N)
"$AGENT" client --server "127.0.0.1:$deaf" --tests TCP_RR > /dev/null 2> "$WORK/deaf.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# the client's 5 s handshake timeout ends it, with the reason; the listener stays 60 s, so 50 s
# bounds a client that would wait forever
check "silent server: exit 1 at the handshake timeout (${ms} ms)" \
    bash -c "[ $rc -eq 1 ] && [ $ms -ge 4900 ] && [ $ms -lt 50000 ]"
check "silent server: says what it waited for" grep -q 'waiting for CHALLENGE' "$WORK/deaf.err"
"$AGENT" client --server "no-such-host.invalid:5201" --tests TCP_RR > /dev/null 2> "$WORK/dns.err"
rc=$?
check "unresolvable host: exit 1 naming it" \
    bash -c "[ $rc -eq 1 ] && grep -q 'cannot resolve no-such-host.invalid' '$WORK/dns.err'"

# --- usage errors -----------------------------------------------------------------------------
"$AGENT" client --tests TCP_RR > /dev/null 2>&1
check "usage: missing --server exits 2" [ $? -eq 2 ]
"$AGENT" client --server 127.0.0.1 --tests TCP_XX > /dev/null 2>&1
check "usage: unknown test exits 2" [ $? -eq 2 ]
"$AGENT" client --server 127.0.0.1 --tests TCP_RR --duration banana > /dev/null 2>&1
check "usage: bad duration exits 2" [ $? -eq 2 ]
"$AGENT" server --port 70000 > /dev/null 2>&1
check "usage: bad port exits 2" [ $? -eq 2 ]

stop_server

# --- one source at its connection limit ---------------------------------------------------------
# 258 connections per source by default, 300 in all; a long handshake deadline so the held
# connections stay held. A second loopback address (127.0.0.2) is a second source.
start_server --token-file "$WORK/token" --max-conns 300 --handshake-timeout 10s
raw hold 127.0.0.2 300 6 > "$WORK/hold2.out" 2>&1 &
hold=$!
eventually grep -q holding "$WORK/hold2.out"
served=0
for _ in 1 2 3 4 5; do serves && served=$((served + 1)); done
check "one source holding its limit: 5 of 5 clients from another address served" [ "$served" -eq 5 ]
wait "$hold"
check "the holding source is refused past 258 with the reason ($(grep -c 'from your address' "$WORK/hold2.out") reasons)" \
    grep -q '^[0-9]* x server at its connection limit (258 from your address)$' "$WORK/hold2.out"
raw hold 127.0.0.1 258 4 > "$WORK/hold1.out" 2>&1 &
hold=$!
eventually grep -q holding "$WORK/hold1.out"
t0=$(date +%s%N)
client --token-file "$WORK/token" --tests TCP_RR --duration 200ms > /dev/null 2> "$WORK/limit.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# refused with the reason; 20 s (10x) bounds a client left waiting
check "a client from a source at its limit: refused (${ms} ms) with the reason" \
    bash -c "[ $rc -eq 1 ] && [ $ms -lt 20000 ] && grep -q 'refused by server: server at its connection limit (258 from your address)' '$WORK/limit.err'"
wait "$hold"
check "served again once the source lets go" serves
check "refusals at accept are rate-limited in the log ($(wc -l < "$WORK/server.log") lines)" \
    [ "$(wc -l < "$WORK/server.log")" -lt 40 ]
stop_server

# --- token files --------------------------------------------------------------------------------
printf 'AB\0CD\n' > "$WORK/nul.token"; chmod 600 "$WORK/nul.token"
"$AGENT" server --port 0 --bind 127.0.0.1 --token-file "$WORK/nul.token" > /dev/null 2> "$WORK/nul.err"
rc=$?
check "token with a NUL byte: refused (exit $rc)" \
    bash -c "[ $rc -eq 2 ] && grep -q 'has a NUL byte at offset 2' '$WORK/nul.err'"
mkfifo "$WORK/fifo.token"
t0=$(date +%s%N)
timeout 10 "$AGENT" server --port 0 --bind 127.0.0.1 --token-file "$WORK/fifo.token" > /dev/null 2> "$WORK/fifo.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# exit 2 with the reason, not the `timeout 10` kill (124): the FIFO was not opened
check "token file that is a FIFO: refused (exit $rc, ${ms} ms), not a hang" \
    bash -c "[ $rc -eq 2 ] && grep -q 'is a FIFO, not a regular file' '$WORK/fifo.err'"
cp "$WORK/token" "$WORK/open.token"; chmod 644 "$WORK/open.token"
start_server --token-file "$WORK/open.token"
check "world-readable token file: served, with a warning naming the file" \
    bash -c "grep -q 'token file $WORK/open.token is readable by everyone (mode 0644)' '$WORK/server.log'"
check "world-readable token file: the token still works" serves
stop_server

# --- busy: one test at a time -----------------------------------------------------------------
start_server --max-tests 1 -v
client --tests TCP_STREAM --duration 4s > /dev/null 2> "$WORK/first.err" &
first=$!
# the first test runs from when the server accepts it (logged with -v) for 4 s
wait_for 30 "the first test to be accepted" grep -q 'TCP_STREAM accepted' "$WORK/server.log"
t0=$(date +%s%N)
client --tests TCP_RR --duration 1s > /dev/null 2> "$WORK/busy.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "busy: a second test is refused (${ms} ms, not after the first one ended)" \
    bash -c "[ $rc -eq 1 ] && grep -q 'busy: 1 tests running (max 1)' '$WORK/busy.err'"
wait "$first"
check "busy: the running test is unaffected" [ $? -eq 0 ]
quiet_client() { client "$@" > /dev/null 2>&1; }
check "busy: free again afterwards" quiet_client --tests TCP_RR --duration 200ms

# --- mutual authentication: a client with a token and a server that cannot prove it --------------
client --token-file "$WORK/token" --tests TCP_RR --duration 200ms > /dev/null 2> "$WORK/noproof.err"
rc=$?
check "server without a token, client with one: refused by the client" \
    bash -c "[ $rc -eq 1 ] && grep -q 'server did not prove it knows the token; refusing' '$WORK/noproof.err'"
stop_server
raw impostor > "$WORK/impostor.port" &
wait_for 30 "the impostor's port" test -s "$WORK/impostor.port"
"$AGENT" client --server "127.0.0.1:$(head -1 "$WORK/impostor.port")" --token-file "$WORK/token" \
    --tests TCP_RR --duration 200ms > /dev/null 2> "$WORK/impostor.err"
rc=$?
check "a server that claims a token but cannot prove it: refused" \
    bash -c "[ $rc -eq 1 ] && grep -q 'server did not prove it knows the token; refusing (its proof does not match our token)' '$WORK/impostor.err'"
finish
