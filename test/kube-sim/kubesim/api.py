# SPDX-License-Identifier: Apache-2.0
"""api - the HTTPS API server: routing, authentication hook, faults hook,
REST verbs with the apiserver's semantics (list/watch/get/create/update/
patch/delete/deletecollection, pods/log, discovery, Status errors).

Owns: request parsing, response shapes and headers (Warning, Retry-After,
chunked watch streams), the access log. Leaves admission and defaults to
admission.py, object lifecycles to ctrl.py and kubelet.py, users and RBAC
to auth.py, fault decisions to faults.py.
"""
import base64
import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import patch as patchmod
from . import resources as R
from . import schema
from .schema import Rejected
from .store import Conflict
from .util import (SelectorError, dcopy, jdump, label_match, now_iso,
                   parse_field_selector, parse_label_selector)

VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.0",
           "gitCommit": "66452049f3d692768c39c797b21b793dce80314e",
           "gitTreeState": "clean", "buildDate": "2025-12-17T12:32:06Z",
           "goVersion": "go1.25.5", "compiler": "gc",
           "platform": "linux/amd64"}
FLOWSCHEMA_UID = "7c1e2a4b-5d6f-4a8b-9c0d-1e2f3a4b5c6d"
PRIORITY_UID = "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"


def status_obj(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {},
         "status": "Failure", "message": message, "reason": reason,
         "code": code}
    if details:
        s["details"] = details
    return s


def not_found(res, name):
    return Rejected(404, "NotFound", '%s "%s" not found' % (
        _gr(res), name), {"name": name, "group": res.group,
                          "kind": res.name})


def _gr(res):
    return res.name + ("." + res.group if res.group else "")


class Req:
    """One parsed request."""

    def __init__(self, h):
        self.h = h
        u = urllib.parse.urlsplit(h.path)
        self.path = u.path
        self.q = {k: v[-1] for k, v in urllib.parse.parse_qs(
            u.query, keep_blank_values=True).items()}
        self.method = h.command
        self.warnings = []
        self.user = None
        self.body = b""

    def qbool(self, k):
        return self.q.get(k, "") in ("1", "true", "True")


class App:
    def __init__(self, cfg, store, adm, ctrl, kubelet, auth, faults):
        self.cfg, self.store, self.adm = cfg, store, adm
        self.ctrl, self.kubelet, self.auth, self.faults = \
            ctrl, kubelet, auth, faults
        self.log_lock = threading.Lock()
        self.access = open(cfg.state_dir + "/requests.log", "a",
                           buffering=1)

    # ------------------------------------------------------------ plumbing
    def handle(self, h):
        req = Req(h)
        n = int(h.headers.get("Content-Length") or 0)
        if n:
            req.body = h.rfile.read(n)
        elif "chunked" in (h.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip() or b"0",
                           16)
                if size == 0:
                    while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(h.rfile.read(size))
                h.rfile.readline()
            req.body = b"".join(parts)
        code = 0
        try:
            code = self.dispatch(req)
        except Rejected as e:
            code = self.send(req, e.code, status_obj(e.code, e.reason,
                                                     e.message, e.details))
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError,
                socket.timeout):
            code = -1
        except Exception as e:  # report like the apiserver, keep serving
            import traceback
            traceback.print_exc(file=sys.stderr)
            try:
                code = self.send(req, 500, status_obj(
                    500, "InternalError", "Internal error occurred: %s" % e))
            except OSError:
                code = -1
        with self.log_lock:
            self.access.write("%s %s %s %s %s\n" % (
                now_iso(), req.user or "-", req.method, h.path, code))
        return code

    def send(self, req, code, obj, ctype="application/json", headers=()):
        body = obj if isinstance(obj, bytes) else (
            obj.encode() if isinstance(obj, str) else
            (jdump(obj) + "\n").encode())
        h = req.h
        h.send_response(code)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Audit-Id", str(uuid.uuid4()))
        h.send_header("X-Kubernetes-Pf-Flowschema-Uid", FLOWSCHEMA_UID)
        h.send_header("X-Kubernetes-Pf-Prioritylevel-Uid", PRIORITY_UID)
        for w in req.warnings[:20]:
            h.send_header("Warning", '299 - "%s"' % w.replace(
                "\\", "\\\\").replace('"', '\\"')[:256])
        for k, v in headers:
            h.send_header(k, v)
        h.end_headers()
        if req.method != "HEAD":
            h.wfile.write(body)
        return code

    # ------------------------------------------------------------ routing
    def dispatch(self, req):
        p = req.path.rstrip("/") or "/"
        if p.startswith("/kube-sim/"):
            req.user = self.auth.authenticate(req.h)
            if req.user is None or not req.user.admin:
                raise Rejected(401, "Unauthorized", "Unauthorized")
            if p == "/kube-sim/cron":
                return self.ctrl.cron_control(self, req)
            if p == "/kube-sim/nodes":
                from . import nodes
                return nodes.control(self, req)
            return self.faults.control(self, req)
        if p in ("/livez", "/readyz", "/healthz"):
            return self.send(req, 200, "ok", "text/plain; charset=utf-8")
        req.user = self.auth.authenticate(req.h)
        if p == "/version" and req.user is None:
            return self.send(req, 200, VERSION)
        if req.user is None:
            raise Rejected(401, "Unauthorized", "Unauthorized")
        f = self.faults.before(req)
        if f is not None:
            return f(self, req)
        if p == "/version":
            return self.send(req, 200, VERSION)
        if p == "/api":
            return self.send(req, 200, {
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{
                    "clientCIDR": "0.0.0.0/0",
                    "serverAddress": "127.0.0.1:%d" % self.cfg.port}]})
        if p == "/apis":
            return self.send(req, 200, R.api_group_list())
        if p == "/openapi/v3":
            return self.send(req, 200, R.openapi_index())
        if p.startswith("/openapi/v3/"):
            gv = p[len("/openapi/v3/"):]
            if gv in R.openapi_index()["paths"]:
                return self.send(req, 200, R.openapi_doc(gv, schema.ALL))
            return self.notfound_page(req)
        parts = p.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 2:
            if len(parts) == 2:
                if parts[1] in R.GROUPS:
                    return self.send(req, 200, dict(
                        R.api_group(parts[1]), kind="APIGroup",
                        apiVersion="v1"))
                return self.notfound_page(req)
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return self.notfound_page(req)
        if version != "v1" or (group and group not in R.GROUPS):
            return self.notfound_page(req)
        if not rest:
            return self.send(req, 200, R.api_resource_list(group))
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3 and \
                (group, rest[2]) in R.BY_GR and \
                R.BY_GR[(group, rest[2])].namespaced:
            ns, rest = rest[1], rest[2:]
        res = R.BY_GR.get((group, rest[0]))
        if res is None or len(rest) > 3:
            return self.notfound_page(req)
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub and sub not in res.subs:
            return self.notfound_page(req)
        return self.resource(req, res, ns, name, sub)

    def notfound_page(self, req):
        return self.send(req, 404, "404 page not found\n",
                         "text/plain; charset=utf-8")

    def verb_of(self, req, name, sub):
        m = req.method
        if m in ("GET", "HEAD"):
            if req.qbool("watch"):
                return "watch"
            return "get" if name else "list"
        return {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(m)

    def resource(self, req, res, ns, name, sub):
        verb = self.verb_of(req, name, sub)
        if verb is None or (verb == "create" and name) or \
                (verb in ("update", "patch") and not name):
            raise Rejected(405, "MethodNotAllowed",
                           "the server does not allow this method on the "
                           "requested resource")
        if verb not in res.verbs and not sub:
            raise Rejected(405, "MethodNotAllowed",
                           "the server does not allow this method on the "
                           "requested resource")
        if res.namespaced and ns is None and verb not in ("list", "watch"):
            return self.notfound_page(req)
        self.auth.authorize(req.user, verb, res, ns, name, sub)
        if res.name == "selfsubjectaccessreviews":
            return self.ssar(req)
        if sub == "log":
            return self.pod_log(req, ns, name)
        if verb == "list":
            return self.do_list(req, res, ns)
        if verb == "watch":
            return self.do_watch(req, res, ns)
        if verb == "get":
            o = self.store.get(res.name, ns, name)
            if o is None:
                raise not_found(res, name)
            return self.send_obj(req, 200, res, o)
        if verb == "create":
            return self.do_create(req, res, ns)
        if verb in ("update", "patch"):
            return self.do_update(req, res, ns, name, sub, verb)
        if verb == "delete":
            return self.do_delete(req, res, ns, name)
        return self.do_delete_collection(req, res, ns)

    # ------------------------------------------------------------ helpers
    def decorate(self, res, o):
        o["kind"], o["apiVersion"] = res.kind, res.api_version
        return o

    def send_obj(self, req, code, res, o):
        self.decorate(res, o)
        if self.wants_table(req):
            o = R.to_table(res.name, [o], {"resourceVersion": o[
                "metadata"].get("resourceVersion", "")},
                req.q.get("includeObject", "Metadata"))
        return self.send(req, code, o)

    def wants_table(self, req):
        return "as=Table" in (req.h.headers.get("Accept") or "")

    def filters(self, req, res):
        try:
            lab = parse_label_selector(req.q.get("labelSelector", ""))
            fld = parse_field_selector(req.q.get("fieldSelector", ""))
        except SelectorError as e:
            raise Rejected(400, "BadRequest", str(e))
        for f, _, _ in fld:
            if not R.field_supported(res.name, f):
                raise Rejected(400, "BadRequest",
                               "field label not supported: %s" % f)

        def match(o):
            if not label_match(lab, o["metadata"].get("labels")):
                return False
            for f, op, v in fld:
                got = R.field_value(res.name, o, f)
                if (got == v) != (op == "="):
                    return False
            return True
        return match

    def do_list(self, req, res, ns):
        match = self.filters(req, res)
        # selectors are applied to the stored objects: only matches are copied
        items, rv = self.store.list(res.name, ns, match)
        for o in items:
            o.pop("kind", None)
            o.pop("apiVersion", None)
        meta = {"resourceVersion": str(rv)}
        cont = req.q.get("continue")
        if cont:
            try:
                tok = json.loads(base64.urlsafe_b64decode(cont + "==="))
                start, crv = tok["start"], int(tok["rv"])
            except (ValueError, KeyError, TypeError):
                raise Rejected(400, "BadRequest",
                               "continue key is not valid: illegal base64 "
                               "data")
            if crv < self.store.compacted_rv:
                raise Rejected(410, "Expired", (
                    "The provided continue parameter is too old to display "
                    "a consistent list result. You can start a new list "
                    "without the continue parameter, or use the continue "
                    "token in this response to retrieve the remainder of "
                    "the results. Continuing with the provided token results"
                    " in an inconsistent list - objects that were created, "
                    "modified, or deleted between the time the first chunk "
                    "was returned and now may show up in the list."))
            items = [o for o in items if _key(o) > start]
            meta["resourceVersion"] = str(crv)
        limit = int(req.q.get("limit") or 0)
        if limit > 0 and len(items) > limit:
            rest = len(items) - limit
            items = items[:limit]
            meta["continue"] = base64.urlsafe_b64encode(jdump({
                "start": _key(items[-1]), "rv": meta["resourceVersion"]})
                .encode()).decode().rstrip("=")
            meta["remainingItemCount"] = rest
        if self.wants_table(req):
            for o in items:
                self.decorate(res, o)
            return self.send(req, 200, R.to_table(
                res.name, items, meta, req.q.get("includeObject",
                                                 "Metadata")))
        return self.send(req, 200, {"kind": res.kind + "List",
                                    "apiVersion": res.api_version,
                                    "metadata": meta, "items": items})

    # ------------------------------------------------------------ watch
    def do_watch(self, req, res, ns):
        match = self.filters(req, res)
        rv_s = req.q.get("resourceVersion", "")
        timeout = float(req.q.get("timeoutSeconds") or
                        self.cfg.watch_timeout)
        bookmarks = req.qbool("allowWatchBookmarks")
        table = self.wants_table(req)
        gone = self.faults.watch_gone(req)
        h = req.h
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        drop_after = self.faults.watch_drop_after(req)

        def emit(typ, o):
            if typ not in ("ERROR", "BOOKMARK"):
                # o may be the stored object (history entries are shared):
                # a shallow copy takes kind and apiVersion, it is not changed
                o = self.decorate(res, dict(o))
                if table:
                    o = R.to_table(res.name, [o], {
                        "resourceVersion": o["metadata"]["resourceVersion"]})
            data = (jdump({"type": typ, "object": o}) + "\n").encode()
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()

        start = time.time()
        try:
            if gone or (rv_s not in ("", "0") and
                        int(rv_s) < self.store.compacted_rv):
                emit("ERROR", status_obj(410, "Expired",
                                         "too old resource version: %s (%d)"
                                         % (rv_s or "0",
                                            self.store.compacted_rv)))
                h.wfile.write(b"0\r\n\r\n")
                return 200
            initial = req.qbool("sendInitialEvents")
            if rv_s in ("", "0") or initial:
                items, pos = self.store.list(res.name, ns, match)
                for o in items:
                    emit("ADDED", o)
                if initial and bookmarks:
                    emit("BOOKMARK", {
                        "kind": res.kind, "apiVersion": res.api_version,
                        "metadata": {"resourceVersion": str(pos),
                                     "annotations": {
                                         "k8s.io/initial-events-end":
                                         "true"}}})
            else:
                pos = int(rv_s)
            last_bm = time.time()
            while True:
                now = time.time()
                left = start + timeout - now
                if drop_after is not None and now - start >= drop_after:
                    h.close_connection = True
                    h.connection.shutdown(socket.SHUT_RDWR)
                    return -2
                if left <= 0:
                    break
                evs = self.store.wait_events(pos, min(left, 1.0))
                if evs is None:
                    emit("ERROR", status_obj(
                        410, "Expired", "too old resource version: %d (%d)"
                        % (pos, self.store.compacted_rv)))
                    break
                for (erv, typ, r, ens, o, _, old) in evs:
                    pos = erv
                    if r != res.name or (ns is not None and ens != ns):
                        continue
                    m_new = match(o)
                    m_old = old is not None and match(old)
                    if typ == "MODIFIED" and m_new and not m_old and \
                            old is not None:
                        typ = "ADDED"
                    elif typ == "MODIFIED" and m_old and not m_new:
                        typ = "DELETED"
                    elif not m_new:
                        continue
                    emit(typ, o)
                if bookmarks and time.time() - last_bm >= \
                        self.cfg.bookmark_seconds:
                    last_bm = time.time()
                    emit("BOOKMARK", {"kind": res.kind, "apiVersion":
                                      res.api_version,
                                      "metadata": {"resourceVersion":
                                                   str(pos)}})
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError,
                OSError):
            h.close_connection = True
            return -1
        return 200

    # ------------------------------------------------------------ writes
    def read_obj(self, req):
        ct = (req.h.headers.get("Content-Type") or "").split(";")[0].strip()
        if ct and ct not in ("application/json", "*/*",
                             "application/vnd.kubernetes.protobuf") and \
                req.method != "PATCH":
            raise Rejected(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown "
                           "format - accepted media types include: "
                           "application/json, application/yaml, "
                           "application/vnd.kubernetes.protobuf")
        if ct == "application/vnd.kubernetes.protobuf":
            from . import pb
            try:
                return schema.parse_body(jdump(pb.decode(req.body)))
            except pb.PbError as e:
                raise Rejected(415, "UnsupportedMediaType", str(e))
        try:
            return schema.parse_body(req.body.decode("utf-8") or "null")
        except (ValueError, UnicodeDecodeError) as e:
            raise Rejected(400, "BadRequest",
                           "the object provided is unrecognized "
                           "(must be of type %s): couldn't get version/kind; "
                           "json parse error: %s" % ("Object", e))

    def validation_mode(self, req):
        m = req.q.get("fieldValidation", "Warn")
        if m not in ("Strict", "Warn", "Ignore"):
            raise Rejected(400, "BadRequest",
                           "fieldValidation parameter unsupported: %s" % m)
        return m

    def dry_run(self, req):
        d = req.q.get("dryRun")
        if d and d != "All":
            raise Rejected(400, "BadRequest",
                           "Invalid dry run value: %s" % d)
        return d == "All"

    def validate(self, req, res, obj, mode):
        if not isinstance(obj, dict):
            raise Rejected(400, "BadRequest",
                           "Object 'Kind' is missing in '%s'" %
                           jdump(obj))
        av, kind = obj.get("apiVersion"), obj.get("kind")
        if kind and kind != res.kind:
            raise Rejected(400, "BadRequest",
                           "the API version in the data (%s) does not match"
                           " the expected API version (%s)" % (
                               av, res.api_version) if av != res.api_version
                           else "%s in version \"v1\" cannot be handled as a "
                           "%s: no kind \"%s\" is registered for version "
                           "\"%s\"" % (res.kind, res.kind, kind, av))
        if av and av != res.api_version:
            raise Rejected(400, "BadRequest",
                           "the API version in the data (%s) does not match "
                           "the expected API version (%s)" % (
                               av, res.api_version))
        md = obj.get("metadata") if isinstance(obj.get("metadata"),
                                               dict) else {}
        name = md.get("name") or md.get("generateName") or ""
        causes = []
        if res.schema:
            w, causes = schema.check(obj, res.schema, res.kind,
                                     res.api_version, mode, name)
            req.warnings += w
        seen = {(c["field"], c["reason"]) for c in causes}
        causes += [c for c in schema.semantic(res.name, obj)
                   if (c["field"], c["reason"]) not in seen]
        if causes:
            raise schema.invalid(res.kind, res.group, md.get("name") or "",
                                 causes)

    def do_create(self, req, res, ns):
        obj = self.read_obj(req)
        mode = self.validation_mode(req)
        dry = self.dry_run(req)
        self.validate(req, res, obj, mode)
        obj["kind"], obj["apiVersion"] = res.kind, res.api_version
        md = obj.setdefault("metadata", {})
        if res.namespaced:
            if md.get("namespace") and md["namespace"] != ns:
                raise Rejected(400, "BadRequest",
                               "the namespace of the provided object does "
                               "not match the namespace sent on the request")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        stored = self.adm.create(res, obj, req.user, dry, req.warnings)
        return self.send_obj(req, 201, res, stored)

    def do_update(self, req, res, ns, name, sub, verb):
        mode = self.validation_mode(req)
        dry = self.dry_run(req)
        cur = self.store.get(res.name, ns, name)
        if verb == "patch":
            if cur is None:
                raise not_found(res, name)
            ct = (req.h.headers.get("Content-Type") or "").split(";")[0]
            try:
                p = json.loads(req.body.decode() or "null")
            except ValueError as e:
                raise Rejected(400, "BadRequest", "error decoding patch: %s"
                               % e)
            base = self.decorate(res, dcopy(cur))
            obj = patchmod.apply(ct, base, p)
            obj = schema.parse_body(jdump(obj))
            expect = None
        else:
            obj = self.read_obj(req)
            if not isinstance(obj, dict):
                raise Rejected(400, "BadRequest", "invalid object")
            md = obj.get("metadata") or {}
            if md.get("name") and md["name"] != name:
                raise Rejected(400, "BadRequest",
                               "the name of the object (%s) does not match "
                               "the name on the URL (%s)" % (md["name"],
                                                             name))
            if cur is None:
                raise not_found(res, name)
            expect = md.get("resourceVersion") or None
        self.validate(req, res, obj, mode)
        obj["kind"], obj["apiVersion"] = res.kind, res.api_version
        md = obj.setdefault("metadata", {})
        md["name"] = name
        if res.namespaced:
            md["namespace"] = ns
        if expect and expect != cur["metadata"]["resourceVersion"]:
            raise Rejected(409, "Conflict", (
                'Operation cannot be fulfilled on %s "%s": the object has '
                'been modified; please apply your changes to the latest '
                'version and try again') % (_gr(res), name),
                {"name": name, "group": res.group, "kind": res.name})
        try:
            stored = self.adm.update(res, cur, obj, sub, req.user, dry,
                                     req.warnings)
        except Conflict:
            raise Rejected(409, "Conflict", (
                'Operation cannot be fulfilled on %s "%s": the object has '
                'been modified; please apply your changes to the latest '
                'version and try again') % (_gr(res), name),
                {"name": name, "group": res.group, "kind": res.name})
        return self.send_obj(req, 200, res, stored)

    def delete_opts(self, req):
        opts = {}
        if req.body:
            try:
                opts = json.loads(req.body.decode() or "{}") or {}
            except ValueError as e:
                raise Rejected(400, "BadRequest", str(e))
        for k in ("propagationPolicy", "gracePeriodSeconds", "orphanDependents"):
            if k in req.q:
                opts[k] = int(req.q[k]) if k == "gracePeriodSeconds" else \
                    req.q[k]
        if req.q.get("dryRun"):
            opts["dryRun"] = [req.q["dryRun"]]
        pp = opts.get("propagationPolicy")
        if pp and pp not in ("Orphan", "Background", "Foreground"):
            raise Rejected(422, "Invalid", "DeleteOptions.meta.k8s.io \"\" "
                           "is invalid: propagationPolicy: Unsupported value:"
                           " \"%s\": supported values: \"Foreground\", "
                           "\"Background\", \"Orphan\", \"nil\"" % pp)
        return opts

    def do_delete(self, req, res, ns, name):
        opts = self.delete_opts(req)
        out = self.ctrl.delete(res, ns, name, opts, req.user, req.warnings)
        if out is None:
            raise not_found(res, name)
        if out.get("kind") == "Status":
            return self.send(req, 200, out)
        return self.send_obj(req, 200, res, out)

    def do_delete_collection(self, req, res, ns):
        opts = self.delete_opts(req)
        match = self.filters(req, res)
        items, rv = self.store.list(res.name, ns)
        gone = []
        for o in items:
            if match(o):
                r = self.ctrl.delete(res, o["metadata"].get("namespace"),
                                     o["metadata"]["name"], opts, req.user,
                                     req.warnings, collection=True)
                if r is not None:
                    r = r if r.get("kind") != "Status" else o
                    r.pop("kind", None)
                    r.pop("apiVersion", None)
                    gone.append(r)
        return self.send(req, 200, {"kind": res.kind + "List",
                                    "apiVersion": res.api_version,
                                    "metadata": {"resourceVersion":
                                                 str(self.store.rv)},
                                    "items": gone})

    # ------------------------------------------------------------ special
    def ssar(self, req):
        obj = self.read_obj(req)
        self.validate(req, R.BY_GR[("authorization.k8s.io",
                                    "selfsubjectaccessreviews")], obj,
                      self.validation_mode(req))
        spec = obj.get("spec") or {}
        ok, reason = self.auth.review(req.user, spec)
        obj["status"] = {"allowed": ok}
        if reason:
            obj["status"]["reason"] = reason
        obj.setdefault("metadata", {})["creationTimestamp"] = None
        obj["kind"] = "SelfSubjectAccessReview"
        obj["apiVersion"] = "authorization.k8s.io/v1"
        return self.send(req, 201, obj)

    def pod_log(self, req, ns, name):
        pod = self.store.get("pods", ns, name)
        if pod is None:
            raise not_found(R.BY_GR[("", "pods")], name)
        ctrs = [c["name"] for c in pod["spec"].get("containers") or []]
        inits = [c["name"] for c in pod["spec"].get("initContainers") or []]
        c = req.q.get("container")
        if not c:
            if len(ctrs) != 1:
                raise Rejected(400, "BadRequest",
                               "a container name must be specified for pod "
                               "%s, choose one of: [%s]%s" % (
                                   name, " ".join(ctrs),
                                   " or one of the init containers: [%s]" %
                                   " ".join(inits) if inits else ""))
            c = ctrs[0]
        elif c not in ctrs + inits:
            raise Rejected(400, "BadRequest",
                           "container %s is not valid for pod %s" % (c, name))
        src = self.kubelet.log_source(pod, c, req.qbool("previous"))
        if isinstance(src, str):
            raise Rejected(400, "BadRequest", src)
        follow = req.qbool("follow")
        tail = req.q.get("tailLines")
        limit = int(req.q.get("limitBytes") or 0)
        ts = req.qbool("timestamps")
        since = req.q.get("sinceSeconds")
        h = req.h
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        sent = 0
        try:
            for chunk in src.read(follow=follow,
                                  tail=int(tail) if tail else None,
                                  timestamps=ts,
                                  since=float(since) if since else None):
                if limit and sent + len(chunk) > limit:
                    chunk = chunk[:limit - sent]
                if chunk:
                    h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    h.wfile.flush()
                    sent += len(chunk)
                if limit and sent >= limit:
                    break
            h.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, OSError):
            h.close_connection = True
            return -1
        return 200


def _key(o):
    return "%s/%s" % (o["metadata"].get("namespace", ""),
                      o["metadata"]["name"])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-sim"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def send_response(self, code, message=None):
        # like Go's net/http: no Server header
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())
        self.send_header("Cache-Control", "no-cache, private")

    def _go(self):
        self.server.app.handle(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _go


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, app, port, sslctx, host="127.0.0.1"):
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), Handler)
        self.app = app
        self.sslctx = sslctx

    def get_request(self):
        sock, addr = self.socket.accept()
        return sock, addr

    def finish_request(self, request, client_address):
        try:
            request.settimeout(30)
            tls = self.sslctx.wrap_socket(request, server_side=True)
            tls.settimeout(None)
        except (ssl.SSLError, OSError):
            try:
                request.close()
            except OSError:
                pass
            return
        self.RequestHandlerClass(tls, client_address, self)
