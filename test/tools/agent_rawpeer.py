#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""agent_rawpeer.py - a raw peer of kperf-agent speaking wire protocol version 7 by hand
(the framing, HELLO/CHALLENGE/AUTH and the HMAC proofs written again from docs/protocol.md,
independently of the agent's C code), for test/e2e/agent_badinput.sh.

Usage: agent_rawpeer.py PORT MODE [ARG...]; prints how the server treated it. Modes:
kernel-tag, garbage, oversized, bad-type, v1-client, truncated, idle, skip-auth,
auth-good TOKEN, auth-bad-req TOKEN, overrun TOKEN, udp-closed TOKEN, udp-silent TOKEN,
hold SRC N SECS, impostor, flood N, deaf-listener SECS.
"""
import hashlib, hmac, os, socket, struct, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
MAGIC, V = 0x4B505246, 7
def conn(src="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
def msg(t, payload=b"", v=V):
    return struct.pack(">IBBHI", MAGIC, v, t, 0, len(payload)) + payload
HELLO = msg(1, struct.pack(">HH", 7, 7), v=1)  # HELLO is always framed as version 1
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
def is_closed(s):
    # without waiting: the server closed s (anything it sent first is read and dropped)
    s.setblocking(False)
    try:
        while True:
            if not s.recv(4096):
                return True
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
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
    # the server's handshake deadline is 1 s: not closed before it; 10 s bounds a hang (10x)
    s = conn(); s.sendall(struct.pack(">IBBHI", MAGIC, 1, 1, 0, 4)[:7])
    t = closed_within(s, 10)
    print("closed-after-timeout" if t is not None and 0.8 < t < 10 else "wrong %r" % t)
elif mode == "idle":
    s = conn()
    t = closed_within(s, 10)
    print("closed-after-timeout" if t is not None and 0.8 < t < 10 else "wrong %r" % t)
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
    # the ones above --max-conns are closed at once, well before the 1 s handshake deadline
    # (counted until 0.3 s after the last connect); the rest by that deadline (polled; 10 s
    # bounds a hang)
    def closed():
        return sum(1 for s in socks if is_closed(s))
    t0 = time.time()
    early = closed()
    while time.time() - t0 < 0.3:
        early = closed()
        time.sleep(0.01)
    late = closed()
    while late < len(socks) and time.time() - t0 < 10:
        time.sleep(0.05)
        late = closed()
    print("early=%d late=%d refused=%d" % (early, late, refused))
elif mode == "deaf-listener":
    # a port that accepts TCP (kernel backlog) but never speaks
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(16)
    print(l.getsockname()[1], flush=True)
    time.sleep(float(sys.argv[3]))
