#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kube_api_double.py - a recording Kubernetes API double for the credentials differential test
(test/e2e/kube_creds_vs_kubectl.sh). One process serves:
  https on 127.0.0.1:PORT  and on 127.0.0.2:PORT (same certificate; 127.0.0.2 is not in it)
  http  on 127.0.0.1:PORT+1
  an HTTP CONNECT proxy on 127.0.0.1:PORT+2
Every request is appended to LOG as one JSON line: listener, method, path (no query), Host,
Authorization, client certificate CN, SNI and the impersonation headers (Impersonate-User,
-Group, -Uid, -Extra-*: names lower-cased and sorted, values of one name in the order sent); every proxy tunnel as
{"proxy": "host:port"}. The proxy connects names under double.test to 127.0.0.1, so a server
named api.double.test:PORT is reached through it (direct, the name does not resolve).
Answers /version, minimal discovery (/api, /apis, /api/v1) and empty pod lists.
Usage: kube_api_double.py DIR PORT LOG   (DIR holds ca.crt, server.crt, server.key)"""
import json
import os
import select
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR, PORT, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()


def record(entry):
    with lock, open(LOG, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.0-double", "platform": "linux/amd64"}
API = {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
APIS = {"kind": "APIGroupList", "apiVersion": "v1", "groups": []}
V1 = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
    {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
     "verbs": ["get", "list"], "shortNames": ["po"]}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        conn = self.connection
        cn = sni = ""
        if isinstance(conn, ssl.SSLSocket):
            sni = getattr(conn, "kp_sni", None) or ""
            cert = conn.getpeercert()
            for rdn in (cert or {}).get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        cn = v
        path = self.path.split("?")[0]
        entry = {"listener": self.server.kp_name, "method": "GET", "path": path,
                 "host": self.headers.get("Host", ""),
                 "auth": self.headers.get("Authorization", "<none>"), "cert": cn, "sni": sni}
        imp = sorted(([k.lower(), v] for k, v in self.headers.items()
                      if k.lower().startswith("impersonate-")), key=lambda kv: kv[0])
        if imp:
            entry["impersonate"] = imp
        record(entry)
        if path == "/version":
            body = VERSION
        elif path == "/api":
            body = API
        elif path == "/apis":
            body = APIS
        elif path == "/api/v1":
            body = V1
        elif path.endswith("/pods"):
            body = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                    "items": []}
        else:
            self.send_response(404)
            b = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "NotFound", "code": 404}).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
            return
        b = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)


class TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, name, ctx):
        super().__init__(addr, Handler)
        self.kp_name = name
        self.ctx = ctx

    def get_request(self):
        sock, addr = self.socket.accept()
        return sock, addr

    def finish_request(self, request, client_address):
        try:
            request.settimeout(10)
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # the client refused our certificate (or we refused its): nothing recorded
        try:
            Handler(tls, client_address, self)
        except OSError:
            pass
        finally:
            try:
                tls.close()
            except OSError:
                pass


class PlainServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, name):
        super().__init__(addr, Handler)
        self.kp_name = name


def pipe(a, b):
    socks = [a, b]
    while True:
        r, _, _ = select.select(socks, [], [], 30)
        if not r:
            return
        for s in r:
            d = s.recv(65536)
            if not d:
                return
            (b if s is a else a).sendall(d)


def proxy_conn(c):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            d = c.recv(4096)
            if not d:
                return
            data += d
        line = data.split(b"\r\n")[0].decode()
        method, target = line.split()[:2]
        record({"proxy": target, "method": method})
        if method != "CONNECT":
            c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        host, port = target.rsplit(":", 1)
        host = host.strip("[]")
        if host == "double.test" or host.endswith(".double.test"):
            host = "127.0.0.1"
        up = socket.create_connection((host, int(port)), timeout=10)
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        pipe(c, up)
        up.close()
    except (OSError, ValueError):
        pass
    finally:
        c.close()


def proxy_loop(ls):
    while True:
        c, _ = ls.accept()
        threading.Thread(target=proxy_conn, args=(c,), daemon=True).start()


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(DIR, "server.crt"), os.path.join(DIR, "server.key"))
    ctx.load_verify_locations(os.path.join(DIR, "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL

    def on_sni(sock, name, c):
        try:
            sock.kp_sni = name
        except AttributeError:
            pass

    ctx.sni_callback = on_sni
    servers = [TLSServer(("127.0.0.1", PORT), "https", ctx),
               TLSServer(("127.0.0.2", PORT), "https-other-ip", ctx),
               PlainServer(("127.0.0.1", PORT + 1), "http")]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", PORT + 2))
    ls.listen(16)
    threading.Thread(target=proxy_loop, args=(ls,), daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


main()
