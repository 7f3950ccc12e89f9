#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fixture_server.py - a tiny HTTPS API server for the kube client's transport tests.

Not a Kubernetes simulator (that is test/kube-sim): just enough REST to exercise the client,
plus scripted faults. Standard library only; certificates come from the openssl CLI.

    fixture_server.py --dir DIR     # writes DIR/{ca,server,client,other-ca}.{crt,key}
                                     # prints "READY <port>" on stdout once listening

Control endpoints (no auth):
  POST /_fixture/reset                    empty store, queue and log; default config
  POST /_fixture/config  {"tokens": [...], "nodes": N, "node_bytes": B}
  POST /_fixture/queue   {"method": "GET", "path": "/api/...", "query_has": "watch=1",
                          "responses": [{"status": 429, "headers": {...}, "body": ... ,
                                         "apply": true,    # run the real handler first
                                         "effects": [{"op": "create"|"delete", "path", "body"}],
                                         "stream": [event, ...], "drop": true, "hold": true,
                                         "reset": true}]}   # close without an answer
  GET  /_fixture/log                      {"requests": [{method, path, auth, cert_cn}]}
"""
import argparse
import json
import socket
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LOCK = threading.Lock()
STATE = {}


def reset():
    STATE.clear()
    STATE.update(store={}, rv=1, queue=[], log=[],
                 config={"tokens": ["good-token"], "nodes": 0, "node_bytes": 2000})


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def gen_certs(d):
    def key_and_csr(name, cn):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", f"/CN={cn}")

    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", f"{d}/{ca}.key", "-out", f"{d}/{ca}.crt", "-days", "2",
                "-subj", f"/CN=fixture-{ca}")
    with open(f"{d}/server.ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kube-fixture.test\n")
    with open(f"{d}/client.ext", "w") as f:
        f.write("extendedKeyUsage=clientAuth\n")
    for name, cn in (("server", "kube-fixture"), ("client", "fixture-user")):
        key_and_csr(name, cn)
        openssl("x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.crt", "-CAkey",
                f"{d}/ca.key", "-CAcreateserial", "-out", f"{d}/{name}.crt", "-days", "2",
                "-extfile", f"{d}/{name}.ext")


def status(code, reason, message, causes=None):
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": message, "reason": reason, "code": code}
    if causes:
        st["details"] = {"causes": causes}
    return st


def next_rv():
    STATE["rv"] += 1
    return str(STATE["rv"])


def node(i, size):
    pad = "x" * max(0, size - 600)
    return {"metadata": {"name": f"node-{i:05d}", "resourceVersion": str(1000 + i),
                         "labels": {"kubernetes.io/hostname": f"node-{i:05d}",
                                    "topology.kubernetes.io/zone": f"zone-{i % 3}"},
                         "annotations": {"fixture/padding": pad}},
            "spec": {"podCIDR": f"10.{i // 250}.{i % 250}.0/24"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kernelVersion": "6.1.0", "osImage": "Debian"}}}


def label_match(obj, selector):
    if not selector:
        return True
    labels = obj.get("metadata", {}).get("labels", {}) or {}
    for term in selector.split(","):
        k, _, v = term.partition("=")
        if labels.get(k) != v:
            return False
    return True


def split_path(path):
    """-> (collection, name, subresource) for /api/v1/... and /apis/g/v/... paths."""
    parts = path.strip("/").split("/")
    base = 2 if parts[0] == "api" else 3
    rest = parts[base:]
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) > 2:
        coll = "/".join(parts[:base] + rest[:3])
        rest = rest[3:]
    else:
        coll = "/".join(parts[:base] + rest[:1])
        rest = rest[1:]
    name = rest[0] if rest else None
    sub = rest[1] if len(rest) > 1 else None
    return "/" + coll, name, sub


def store_create(coll, body):
    name = body.get("metadata", {}).get("name")
    objs = STATE["store"].setdefault(coll, {})
    if name in objs:
        plural = coll.rsplit("/", 1)[1]
        return 409, status(409, "AlreadyExists", f'{plural} "{name}" already exists')
    obj = json.loads(json.dumps(body))
    obj.setdefault("metadata", {})["resourceVersion"] = next_rv()
    if "/namespaces/" in coll:
        obj["metadata"]["namespace"] = coll.split("/namespaces/")[1].split("/")[0]
    obj["metadata"]["uid"] = f"uid-{STATE['rv']}"
    objs[name] = obj
    return 201, obj


def store_delete(coll, name):
    objs = STATE["store"].get(coll, {})
    if name not in objs:
        plural = coll.rsplit("/", 1)[1]
        return 404, status(404, "NotFound", f'{plural} "{name}" not found')
    del objs[name]
    next_rv()
    return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success",
                 "details": {"name": name}}


def run_effects(effects):
    for e in effects or []:
        coll, name, _ = split_path(e["path"])
        if e["op"] == "create":
            store_create(coll, e["body"])
        elif e["op"] == "delete":
            store_delete(coll, name)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing --------------------------------------------------------------------------
    def send(self, code, body, headers=None, ctype="application/json"):
        data = body if isinstance(body, bytes) else (
            body.encode() if isinstance(body, str) else json.dumps(body).encode())
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            for one in v if isinstance(v, list) else [v]:
                self.send_header(k, one)
        self.end_headers()
        self.wfile.write(data)

    def stream(self, events, drop, hold):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for ev in events:
            line = (json.dumps(ev) + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
        if hold:
            # keep the stream open without data until the client goes away
            self.connection.settimeout(30)
            try:
                self.connection.recv(1)
            except (OSError, socket.timeout):
                pass
            self.close_connection = True
            return
        if drop:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")

    def body_json(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return json.loads(raw) if raw else None

    def cert_cn(self):
        try:
            cert = self.connection.getpeercert()
        except (AttributeError, ValueError):
            return None
        for rdn in (cert or {}).get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return v
        return None

    # -- dispatch --------------------------------------------------------------------------
    def handle_any(self):
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        body = self.body_json() if self.command in ("POST", "PUT", "PATCH") else None
        if path.startswith("/_fixture/"):
            return self.control(path, body)
        auth = self.headers.get("Authorization", "")
        cn = self.cert_cn()
        with LOCK:
            STATE["log"].append({"method": self.command, "path": self.path, "auth": auth,
                                 "cert_cn": cn, "peer_port": self.client_address[1],
                                 "as": self.headers.get("Impersonate-User"),
                                 "as_groups": self.headers.get_all("Impersonate-Group") or []})
            ok = cn is not None or auth[7:] in STATE["config"]["tokens"]
            scripted = self.pop_queue(path, url.query)
        if scripted is not None and not scripted.get("apply"):
            with LOCK:
                run_effects(scripted.get("effects"))
            return self.scripted(scripted)
        if not ok:
            return self.send(401, status(401, "Unauthorized", "Unauthorized"))
        with LOCK:
            code, out, ctype = self.real(path, query, body)
            if scripted is not None:
                run_effects(scripted.get("effects"))
        if scripted is not None:
            return self.scripted(scripted)
        self.send(code, out, ctype=ctype)

    def pop_queue(self, path, query):
        for q in STATE["queue"]:
            if q["method"] == self.command and q["path"] == path and \
                    q.get("query_has", "") in query and q["responses"]:
                return q["responses"].pop(0)
        return None

    def scripted(self, r):
        if r.get("reset"):
            # close without answering, like a load balancer dropping the connection
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return None
        if "stream" in r:
            return self.stream(r["stream"], r.get("drop"), r.get("hold"))
        body = r.get("body", "")
        ctype = r.get("content_type") or ("application/json" if not isinstance(body, str)
                                          else "text/plain; charset=utf-8")
        self.send(r.get("status", 200), body, r.get("headers"), ctype)

    def control(self, path, body):
        with LOCK:
            if path == "/_fixture/reset":
                reset()
            elif path == "/_fixture/config":
                STATE["config"].update(body or {})
            elif path == "/_fixture/queue":
                STATE["queue"].append(body)
            elif path == "/_fixture/log":
                return self.send(200, {"requests": STATE["log"]})
            else:
                return self.send(404, status(404, "NotFound", "no such control"))
        self.send(200, {})

    def real(self, path, query, body):
        """The built-in API. Returns (code, body, content type)."""
        if path == "/version":
            return 200, {"major": "1", "minor": "30+", "gitVersion": "v1.30.4-eks-fixture",
                         "platform": "linux/amd64"}, "application/json"
        if path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
            attrs = body["spec"]["resourceAttributes"]
            allowed = attrs.get("resource") != "secrets"
            body["status"] = {"allowed": allowed,
                              "reason": "" if allowed else "no RBAC rule for secrets"}
            return 201, body, "application/json"
        if path == "/api/v1/nodes" and STATE["config"]["nodes"]:
            return self.list_nodes(query)
        if not (path.startswith("/api/") or path.startswith("/apis/")):
            return 404, "404 page not found", "text/plain"
        coll, name, sub = split_path(path)
        if sub == "log":
            lines = [f"log line {i}" for i in range(1, 6)]
            tail = int(query.get("tailLines", ["0"])[0])
            if tail:
                lines = lines[-tail:]
            return 200, "".join(line + "\n" for line in lines), "text/plain"
        objs = STATE["store"].setdefault(coll, {})
        if self.command == "POST" and name is None:
            code, out = store_create(coll, body)
            return code, out, "application/json"
        if self.command == "GET" and name is None:
            return self.list_store(coll, objs, query)
        if self.command == "GET":
            if name in objs:
                return 200, objs[name], "application/json"
            return 404, status(404, "NotFound", f'{coll.rsplit("/", 1)[1]} "{name}" not found'), \
                "application/json"
        if self.command == "DELETE" and name is None:
            sel = query.get("labelSelector", [""])[0]
            gone = [o for o in objs.values() if label_match(o, sel)]
            for o in gone:
                store_delete(coll, o["metadata"]["name"])
            return 200, {"kind": "List", "items": gone}, "application/json"
        if self.command == "DELETE":
            code, out = store_delete(coll, name)
            return code, out, "application/json"
        return 405, status(405, "MethodNotAllowed", "not supported"), "application/json"

    def list_store(self, coll, objs, query):
        if query.get("watch"):
            return 200, "", "application/json"  # an empty stream that ends at once
        sel = query.get("labelSelector", [""])[0]
        items = [o for o in objs.values() if label_match(o, sel)]
        return 200, {"kind": "List", "metadata": {"resourceVersion": str(STATE["rv"])},
                     "items": items}, "application/json"

    def list_nodes(self, query):
        total = STATE["config"]["nodes"]
        limit = int(query.get("limit", ["0"])[0]) or total
        start = int(query.get("continue", ["0"])[0])
        end = min(total, start + limit)
        size = STATE["config"]["node_bytes"]
        meta = {"resourceVersion": "5000"}
        if end < total:
            meta["continue"] = str(end)
        return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": meta,
                     "items": [node(i, size) for i in range(start, end)]}, "application/json"

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def proxy_conn(c):
    """One HTTP CONNECT tunnel (proxy-url tests); targets must be on 127.0.0.1."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 8192:
        chunk = c.recv(1024)
        if not chunk:
            c.close()
            return
        head += chunk
    parts = head.split(b"\r\n", 1)[0].decode().split()
    host, _, port = parts[1].rpartition(":") if len(parts) == 3 else ("", "", "")
    if parts[0] != "CONNECT" or host != "127.0.0.1":
        c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        c.close()
        return
    with LOCK:
        STATE["log"].append({"method": "CONNECT", "path": parts[1], "auth": "", "cert_cn": None})
    up = socket.create_connection((host, int(port)))
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(up, c), daemon=True).start()
    pipe(c, up)


def proxy_serve(ls):
    while True:
        c, _ = ls.accept()
        threading.Thread(target=proxy_conn, args=(c,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    args = ap.parse_args()
    gen_certs(args.dir)
    reset()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(f"{args.dir}/server.crt", f"{args.dir}/server.key")
    ctx.load_verify_locations(f"{args.dir}/ca.crt")
    ctx.verify_mode = ssl.CERT_OPTIONAL
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    threading.Thread(target=proxy_serve, args=(ls,), daemon=True).start()
    print(f"READY {srv.server_address[1]} {ls.getsockname()[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
