#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A loopback HTTP receiver for tests of kperf's outgoing messages (--notify, --push-gateway).

http_receiver.py DIR [--fail-first N] [--bind ADDR]: listens on ADDR (127.0.0.1) on a free
port, writes the port to
DIR/port, and keeps every request as DIR/req-<n>.json ({"method", "path", "content_type",
"body"}). The first N requests are answered 503 (a receiver that is restarting), the others
200. Runs until killed.
"""
import argparse
import http.server
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--bind", default="127.0.0.1")
    args = ap.parse_args()
    state = {"n": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def handle_one(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace")
            state["n"] += 1
            n = state["n"]
            status = 503 if n <= args.fail_first else 200
            rec = {"method": self.command, "path": self.path, "status": status,
                   "content_type": self.headers.get("Content-Type"), "body": body}
            tmp = os.path.join(args.dir, ".req-%d.json" % n)
            with open(tmp, "w") as f:
                json.dump(rec, f)
            os.rename(tmp, os.path.join(args.dir, "req-%d.json" % n))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        do_POST = handle_one
        do_PUT = handle_one

        def log_message(self, fmt, *a):
            pass

    srv = http.server.HTTPServer((args.bind, 0), Handler)
    tmp = os.path.join(args.dir, ".port")
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, os.path.join(args.dir, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
