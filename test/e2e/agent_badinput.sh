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

# raw PORT MODE [ARG...]: a raw peer speaking protocol version 6 by hand; prints how the
# server treated it
raw() {
    python3 - "$PORT" "$@" <<'PY'
import hashlib, hmac, os, socket, struct, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
MAGIC, V = 0x4B505246, 6
def conn(src="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
def msg(t, payload=b"", v=V):
    return struct.pack(">IBBHI", MAGIC, v, t, 0, len(payload)) + payload
HELLO = msg(1, struct.pack(">HH", 6, 6), v=1)  # HELLO is always framed as version 1
def recv_msg(s):
    h = b""
    while len(h) < 12:
        d = s.recv(12 - len(h))
        if not d:
            raise EOFError("closed")
        h += d
    _, _, t, _, n = struct.unpack(">IBBHI", h)
    p = b""
    while len(p) < n:
        p += s.recv(n - len(p))
    return t, p
def handshake(s, token, req):
    # HELLO, CHALLENGE, AUTH (our nonce + MAC) + TEST_REQ, AUTH_OK (the server's proof)
    s.sendall(HELLO)
    t, ch = recv_msg(s)
    sn, cn = ch[:32], os.urandom(32)
    mac = hmac.new(token.encode(), b"kperf-auth-v2-client" + sn + cn, hashlib.sha256).digest()
    s.sendall(msg(3, cn + mac) + msg(4, req))
    t, p = recv_msg(s)
    if t != 14:
        return t, p
    proof = hmac.new(token.encode(), b"kperf-auth-v2-server" + sn + cn, hashlib.sha256).digest()
    if p != proof:
        return -1, b"bad proof"
    return recv_msg(s)
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
if mode == "kernel-tag":
    # CHALLENGE is 52 bytes; its tag is SHA-256("kperf-kernel-v1" || nonce || boot id)[:16],
    # computed here independently of the agent's code
    s = conn(); s.sendall(HELLO)
    t, ch = recv_msg(s)
    boot = open("/proc/sys/kernel/random/boot_id").read().strip().encode()
    want = hashlib.sha256(b"kperf-kernel-v1" + ch[:32] + boot).digest()[:16]
    print("type %d len %d %s" % (t, len(ch), "tag-ok" if ch[36:52] == want else "tag-bad"))
elif mode == "garbage":
    s = conn(); s.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"\x00" * 64)
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode == "oversized":
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 1, 0, 0xFFFFFFFF))
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode == "bad-type":
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, V, 13, 0, 100) + b"\x00" * 100)
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode == "v1-client":
    # a protocol version 1 client: a clear REFUSE (code 5) it can still decode
    s = conn(); s.sendall(msg(1, struct.pack(">HH", 1, 1), v=1))
    h = s.recv(512)
    v, t, code = h[4], h[5], struct.unpack(">H", h[12:14])[0]
    print("v%d type %d code %d: %s" % (v, t, code, h[16:].decode()))
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
    s = conn(); s.sendall(HELLO)
    recv_msg(s)
    req = struct.pack(">BBHIIIQ", 1, 0, 1, 1, 1000, 0, 0)
    s.sendall(msg(4, req))
    print("closed" if closed_within(s, 3) is not None else "open")
elif mode in ("auth-good", "auth-bad-req"):
    # an independent HMAC-SHA256 (Python's) must be accepted, and the server's proof must
    # match it; a bad request gets a reason
    s = conn()
    streams = 1 if mode == "auth-good" else 0
    t, p = handshake(s, sys.argv[3], struct.pack(">BBHIIIQ", 1, 0, streams, 1, 1000, 0, 0))
    if t == 5:
        print("accepted")
    elif t == 6:
        print("refused: " + p[4:].decode())
    else:
        print("type %d %r" % (t, p))
elif mode == "overrun":
    # START, then never STOP: the test's deadline (omit + duration + 10 s) ends it, code 7
    s = conn()
    t, p = handshake(s, sys.argv[3], struct.pack(">BBHIIIQ", 6, 0, 1, 24, 1, 0, 1000))
    s.sendall(msg(10))
    recv_msg(s)  # STARTED
    s.settimeout(20)
    t, p = recv_msg(s)
    code = struct.unpack(">H", p[:2])[0] if t == 6 else -1
    print("type %d code %d: %s" % (t, code, p[4:].decode(errors="replace")))
elif mode in ("udp-closed", "udp-silent"):
    # reverse UDP_STREAM at 100 Mbit/s; then the receiving socket is closed (ICMP port
    # unreachable) or stays open without keep-alives: the server must stop sending, and
    # RESULT says when and why
    s = conn()
    req = struct.pack(">BBHIIIQ", 6, 1, 1, 1472, 3000, 0, 100 * 1000 * 1000)
    t, p = handshake(s, sys.argv[3], req)
    session = struct.unpack(">Q", p)[0]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.connect(("127.0.0.1", port))
    s.settimeout(0.1)
    for _ in range(50):  # UDP hellos until UDP_READY
        u.send(struct.pack(">QQQ", session, 2**64 - 1, 0))
        try:
            t, p = recv_msg(s)
            break
        except socket.timeout:
            pass
    if mode == "udp-closed":
        u.close()
    s.settimeout(5)
    s.sendall(msg(10))
    recv_msg(s)  # STARTED
    time.sleep(1.5)  # the test runs; the assertions are on RESULT, not on this wait
    s.sendall(msg(12, struct.pack(">QQ", 0, 0)))
    t, p = recv_msg(s)
    udp_sent = struct.unpack(">Q", p[124:132])[0]
    send_ns, stop = struct.unpack(">QH", p[164:174])
    print("type=%d stop=%d send_ms=%d sent=%d" % (t, stop, send_ns // 10**6, udp_sent))
elif mode == "hold":
    # from source address SRC, keep N connections open (reopening any the server closes) for
    # SECS seconds; count the refusals and their reasons
    src, n, secs = sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    import selectors
    sel, reasons, opened = selectors.DefaultSelector(), {}, 0
    def open_one():
        global opened
        try:
            c = conn(src); c.setblocking(False); sel.register(c, selectors.EVENT_READ)
            opened += 1
        except OSError:
            pass
    for _ in range(n):
        open_one()
    print("holding", flush=True)
    end = time.time() + secs
    while time.time() < end:
        for key, _ in sel.select(0.05):
            c = key.fileobj
            try:
                d = c.recv(4096)
            except OSError:
                d = b""
            if len(d) >= 16 and d[5] == 6:
                r = d[16:16 + struct.unpack(">H", d[14:16])[0]].decode()
                reasons[r] = reasons.get(r, 0) + 1
            if not d or d[5] == 6:
                sel.unregister(c); c.close(); time.sleep(0.001); open_one()
    for r, k in sorted(reasons.items()):
        print("%d x %s" % (k, r))
    print("opened %d" % opened)
elif mode == "impostor":
    # a fake server: claims to hold a token but cannot prove it; prints its port, serves one
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4)
    print(l.getsockname()[1], flush=True)
    c, _ = l.accept()
    c.settimeout(5)
    recv_msg(c)
    c.sendall(msg(2, os.urandom(32) + struct.pack(">I", 1) + bytes(16)))  # no kernel tag
    recv_msg(c); recv_msg(c)  # AUTH, TEST_REQ
    c.sendall(msg(14, os.urandom(32)))
    time.sleep(1)
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
    [ "$out" = "v1 type 6 code 5: protocol version 1..1 not supported (this server speaks 6)" ]
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
out=$(raw flood 120)
early=$(echo "$out" | sed -n 's/.*early=\([0-9]*\).*/\1/p')
late=$(echo "$out" | sed -n 's/.*late=\([0-9]*\).*/\1/p')
check "flood: connections over --max-conns closed at once ($out)" [ "${early:-0}" -ge 70 ]
check "flood: the rest dropped by the handshake deadline ($out)" [ "${late:-0}" -eq 120 ]
check "flood: log lines rate-limited ($(wc -l < "$WORK/server.log") lines)" [ "$(wc -l < "$WORK/server.log")" -lt 30 ]
check "still serving after the flood" serves

# --- reverse UDP_STREAM to a receiver that is gone ----------------------------------------------
out=$(raw udp-closed s3cret-token)
ms=$(echo "$out" | sed -n 's/.*send_ms=\([0-9]*\).*/\1/p')
check "reverse UDP to a closed port: RESULT says unreachable ($out)" \
    bash -c "echo '$out' | grep -q 'type=13 stop=1 '"
check "reverse UDP to a closed port: sending stopped within 1 s (${ms:-?} ms)" [ "${ms:-9999}" -lt 1000 ]
out=$(raw udp-silent s3cret-token)
ms=$(echo "$out" | sed -n 's/.*send_ms=\([0-9]*\).*/\1/p')
check "reverse UDP without keep-alives: RESULT says silent ($out)" \
    bash -c "echo '$out' | grep -q 'type=13 stop=2 '"
check "reverse UDP without keep-alives: stopped about 1 s after the last one (${ms:-?} ms)" \
    bash -c "[ ${ms:-9999} -ge 900 ] && [ ${ms:-9999} -lt 1500 ]"
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
check "a client from a source at its limit: refused at once (${ms} ms) with the reason" \
    bash -c "[ $rc -eq 1 ] && [ $ms -lt 2000 ] && grep -q 'refused by server: server at its connection limit (258 from your address)' '$WORK/limit.err'"
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
check "token file that is a FIFO: refused at once (exit $rc, ${ms} ms), not a hang" \
    bash -c "[ $rc -eq 2 ] && [ $ms -lt 2000 ] && grep -q 'is a FIFO, not a regular file' '$WORK/fifo.err'"
cp "$WORK/token" "$WORK/open.token"; chmod 644 "$WORK/open.token"
start_server --token-file "$WORK/open.token"
check "world-readable token file: served, with a warning naming the file" \
    bash -c "grep -q 'token file $WORK/open.token is readable by everyone (mode 0644)' '$WORK/server.log'"
check "world-readable token file: the token still works" serves
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

# --- mutual authentication: a client with a token and a server that cannot prove it --------------
client --token-file "$WORK/token" --tests TCP_RR --duration 200ms > /dev/null 2> "$WORK/noproof.err"
rc=$?
check "server without a token, client with one: refused by the client" \
    bash -c "[ $rc -eq 1 ] && grep -q 'server did not prove it knows the token; refusing' '$WORK/noproof.err'"
stop_server
raw impostor > "$WORK/impostor.port" &
for _ in $(seq 1 50); do [ -s "$WORK/impostor.port" ] && break; sleep 0.05; done
"$AGENT" client --server "127.0.0.1:$(head -1 "$WORK/impostor.port")" --token-file "$WORK/token" \
    --tests TCP_RR --duration 200ms > /dev/null 2> "$WORK/impostor.err"
rc=$?
check "a server that claims a token but cannot prove it: refused" \
    bash -c "[ $rc -eq 1 ] && grep -q 'server did not prove it knows the token; refusing (its proof does not match our token)' '$WORK/impostor.err'"
finish
