#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_badinput.sh - the server under bad input: garbage, truncated and oversized hellos, a
# wrong or missing token, idle half-open connections, a connection flood, clients vanishing
# mid-test, over-limit requests. Each costs one log line and that connection only; the server
# keeps serving. A client that cannot reach its server fails fast, naming host:port and why.
. "$(dirname "$0")/agent_common.inc"
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }

printf '  s3cret-token\n' > "$WORK/token"
printf 'wrong-token' > "$WORK/wrong"
start_server --token-file "$WORK/token" --handshake-timeout 1s --idle-timeout 2s \
    --max-conns 40 --max-streams 4 --max-duration 5s

# raw PORT MODE [ARG]: a raw TCP peer; prints how the server treated it
raw() {
    python3 - "$PORT" "$@" <<'PY'
import socket, struct, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s
def closed_within(s, secs):
    s.settimeout(secs)
    t0 = time.time()
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return time.time() - t0
    except ConnectionResetError:
        return time.time() - t0
    except socket.timeout:
        return None
MAGIC = 0x4B505246
if mode == "garbage":
    s = conn(); s.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"\x00" * 64)
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode == "oversized":
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 1, 0, 0xFFFFFFFF))
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode == "bad-type":
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 13, 0, 100) + b"\x00" * 100)
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode == "truncated":
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 1, 0, 4)[:7])
    t = closed_within(s, 4)
    print("closed-after-timeout" if t is not None and 0.8 < t < 3 else "wrong %r" % t)
elif mode == "idle":
    s = conn()
    t = closed_within(s, 4)
    print("closed-after-timeout" if t is not None and 0.8 < t < 3 else "wrong %r" % t)
elif mode == "skip-auth":
    # HELLO, then a TEST_REQ instead of AUTH: must be dropped before any test state
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 1, 0, 4) + struct.pack(">HH", 1, 1))
    s.recv(12 + 36)
    req = struct.pack(">BBHIIIQ", 1, 0, 1, 1, 1000, 0, 0)
    s.sendall(struct.pack(">IBBHI", MAGIC, 1, 4, 0, len(req)) + req)
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode in ("auth-good", "auth-bad-req"):
    # an independent HMAC-SHA256 (Python's) must be accepted; a bad request gets a reason
    import hashlib, hmac
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 1, 0, 4) + struct.pack(">HH", 1, 1))
    ch = b""
    while len(ch) < 48:
        ch += s.recv(48 - len(ch))
    mac = hmac.new(sys.argv[3].encode(), b"kperf-auth-v1" + ch[12:44], hashlib.sha256).digest()
    streams = 1 if mode == "auth-good" else 0
    req = struct.pack(">BBHIIIQ", 1, 0, streams, 1, 1000, 0, 0)
    s.sendall(struct.pack(">IBBHI", MAGIC, 1, 3, 0, 32) + mac +
              struct.pack(">IBBHI", MAGIC, 1, 4, 0, len(req)) + req)
    s.settimeout(3)
    resp = s.recv(512)
    t = resp[5]
    if t == 5:
        print("accepted")
    elif t == 6:
        print("refused: " + resp[16:].decode())
    else:
        print("type %d" % t)
elif mode == "flood":
    n, socks, refused = int(sys.argv[3]), [], 0
    for _ in range(n):
        try:
            socks.append(conn())
        except OSError:
            refused += 1
    time.sleep(0.3)
    # the ones above --max-conns are closed at once; the rest by the handshake deadline
    early = sum(1 for s in socks if closed_within(s, 0.01) is not None)
    time.sleep(1.5)
    late = sum(1 for s in socks if closed_within(s, 0.01) is not None)
    print("early=%d late=%d refused=%d" % (early, late, refused))
elif mode == "deaf-listener":
    # a port that accepts TCP (kernel backlog) but never speaks
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(16)
    print(l.getsockname()[1], flush=True)
    time.sleep(float(sys.argv[3]))
PY
}

count() { grep -c "$1" "$WORK/server.log"; }
went_away_count_is() { [ "$(count 'client went away during')" -eq "$1" ]; }
serves() { # a real client still gets results
    client --token-file "$WORK/token" --tests TCP_RR --duration 200ms --json > "$WORK/ok.json" 2>&1 &&
        jqt "$WORK/ok.json" '(.results|length) == 1'
}

# --- malformed input ------------------------------------------------------------------------
check "garbage: connection dropped" [ "$(raw garbage)" = closed ]
check "garbage: one log line naming the reason" [ "$(count 'protocol error: bad magic')" -eq 1 ]
check "oversized hello: dropped on the header alone" [ "$(raw oversized)" = closed ]
check "oversized hello: one log line" [ "$(count 'bad length 4294967295')" -eq 1 ]
check "server-only message type from a client: dropped" [ "$(raw bad-type)" = closed ]
check "truncated hello: dropped at the handshake deadline" [ "$(raw truncated)" = closed-after-timeout ]
check "idle half-open connection: dropped at the handshake deadline" [ "$(raw idle)" = closed-after-timeout ]
check "handshake deadline: one log line each" [ "$(count 'no progress in time')" -eq 2 ]
check "TEST_REQ before AUTH: dropped" [ "$(raw skip-auth)" = closed ]
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
check "HMAC from an independent implementation accepted" [ "$(raw auth-good s3cret-token)" = accepted ]
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

# --- a flood of connections -------------------------------------------------------------------
out=$(raw flood 120)
early=$(echo "$out" | sed -n 's/.*early=\([0-9]*\).*/\1/p')
late=$(echo "$out" | sed -n 's/.*late=\([0-9]*\).*/\1/p')
check "flood: connections over --max-conns closed at once ($out)" [ "${early:-0}" -ge 70 ]
check "flood: the rest dropped by the handshake deadline ($out)" [ "${late:-0}" -eq 120 ]
check "flood: log lines rate-limited ($(wc -l < "$WORK/server.log") lines)" [ "$(wc -l < "$WORK/server.log")" -lt 30 ]
check "still serving after the flood" serves

# --- clients vanishing mid-test ---------------------------------------------------------------
for t in TCP_STREAM "TCP_STREAM --reverse" UDP_STREAM TCP_RR; do
    before=$(count 'client went away during')
    # shellcheck disable=SC2086
    "$AGENT" client --server "127.0.0.1:$PORT" --token-file "$WORK/token" --tests $t \
        --duration 4s --udp-rate 50M > /dev/null 2>&1 &
    cpid=$!
    sleep 1
    kill -9 "$cpid"; wait "$cpid" 2>/dev/null
    check "$t: client killed mid-test, server logs one line" \
        eventually went_away_count_is $((before + 1))
done
check "still serving after vanished clients" serves
check "server still running" kill -0 "$SRV_PID"

# --- a client that cannot reach its server ----------------------------------------------------
free_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
t0=$(date +%s%N)
"$AGENT" client --server "127.0.0.1:$free_port" --tests all --samples 3 --json > "$WORK/unreach.json" 2> "$WORK/unreach.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "unreachable: exit 1" [ "$rc" -eq 1 ]
check "unreachable: fails within 2 s for 18 samples (${ms} ms)" [ "$ms" -lt 2000 ]
check "unreachable: names host:port and the error" grep -q "cannot connect to 127.0.0.1:$free_port (127.0.0.1): Connection refused" "$WORK/unreach.err"
check "unreachable: every sample in errors[]" jqt "$WORK/unreach.json" '(.errors|length) == 18 and (.results|length) == 0'
check "unreachable: document still valid" "$AGENT" validate "$WORK/unreach.json"

raw deaf-listener 10 > "$WORK/deaf.port" &
for _ in $(seq 1 50); do [ -s "$WORK/deaf.port" ] && break; sleep 0.05; done
deaf=$(head -1 "$WORK/deaf.port")
t0=$(date +%s%N)
"$AGENT" client --server "127.0.0.1:$deaf" --tests TCP_RR > /dev/null 2> "$WORK/deaf.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "silent server: exit 1 within the handshake timeout (${ms} ms)" \
    bash -c "[ $rc -eq 1 ] && [ $ms -lt 7000 ]"
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

# --- busy: one test at a time -----------------------------------------------------------------
start_server --max-tests 1
client --tests TCP_STREAM --duration 2s > /dev/null 2> "$WORK/first.err" &
first=$!
sleep 0.7
t0=$(date +%s%N)
client --tests TCP_RR --duration 1s > /dev/null 2> "$WORK/busy.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "busy: a second test is refused at once (${ms} ms)" \
    bash -c "[ $rc -eq 1 ] && [ $ms -lt 1000 ] && grep -q 'busy: 1 tests running (max 1)' '$WORK/busy.err'"
wait "$first"
check "busy: the running test is unaffected" [ $? -eq 0 ]
quiet_client() { client "$@" > /dev/null 2>&1; }
check "busy: free again afterwards" quiet_client --tests TCP_RR --duration 200ms
stop_server
finish
