#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""auth_listener.py - a loopback HTTP listener for test/e2e/secret_scan.sh: a Pushgateway
stand-in, an API server and a proxy, that checks which credentials arrive.

Usage: auth_listener.py DIR      (the expected user and password in $EXPECT_USER and
                                  $EXPECT_PASS, so that they are on no command line)

Writes DIR/port once listening. Every request appends one JSON line to DIR/requests.jsonl:
method, path, and whether Authorization and Proxy-Authorization carried exactly
basic(EXPECT_USER:EXPECT_PASS) ("ok"), other credentials ("wrong") or none ("none"); the
header values themselves are never written. A PUT with the right Authorization gets 200 and
its body is kept as DIR/pushed/N.txt (the metrics as the gateway received them); a wrong or
missing one gets 401. Anything else (GET through the proxy, CONNECT) gets a 403 Status.
Runs until killed.
"""
import base64
import http.server
import json
import os
import sys
import threading

DIR = sys.argv[1]
WANT = "Basic " + base64.b64encode(
    (os.environ["EXPECT_USER"] + ":" + os.environ["EXPECT_PASS"]).encode()).decode()
LOCK = threading.Lock()
COUNT = [0]


def judge(value):
    if value is None:
        return "none"
    return "ok" if value == WANT else "wrong"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        auth = judge(self.headers.get("Authorization"))
        entry = {"method": self.command, "path": self.path, "auth": auth,
                 "proxy_auth": judge(self.headers.get("Proxy-Authorization"))}
        with LOCK:
            with open(os.path.join(DIR, "requests.jsonl"), "a") as f:
                f.write(json.dumps(entry) + "\n")
        return auth

    def answer(self, code, body, ctype="application/json"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        auth = self.record()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if auth != "ok":
            self.answer(401, "Unauthorized\n", "text/plain")
            return
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        with open(os.path.join(DIR, "pushed", "%d.txt" % n), "wb") as f:
            f.write(body)
        self.answer(200, "")

    def forbid(self):
        self.record()
        self.answer(403, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                     "reason": "Forbidden", "code": 403,
                                     "message": "the auth listener forbids this"}))

    do_GET = forbid
    do_POST = forbid
    do_DELETE = forbid
    do_CONNECT = forbid


def main():
    os.makedirs(os.path.join(DIR, "pushed"), exist_ok=True)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(os.path.join(DIR, "port.tmp"), "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
    srv.serve_forever()


main()
