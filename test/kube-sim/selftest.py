#!/usr/bin/env -S python3 -S
# SPDX-License-Identifier: Apache-2.0
"""selftest - API-level checks of a running kube-sim (run by
test/e2e/kubesim_api.sh): answers are compared with what a real apiserver
sends (API-NOTES.md). Usage: selftest.py STATE_DIR [GROUP...]
Prints one line per check; exits 1 if any failed.
"""
import http.client
import json
import os
import ssl
import subprocess
import sys
import time

D = sys.argv[1]
FAILS = []
KS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kube-sim")


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       "" if cond else ": " + str(detail)[:600]))
    if not cond:
        FAILS.append(name)


with open(os.path.join(D, "ready")) as f:
    SERVER = json.load(f)["server"]
PORT = int(SERVER.rsplit(":", 1)[1])
with open(os.path.join(D, "tokens")) as f:
    USER_TOK, ADMIN_TOK = f.read().split()[:2]
CTX = ssl.create_default_context(cafile=os.path.join(D, "pki", "ca.crt"))


class Resp:
    def __init__(self, r, body):
        self.status, self.headers, self.raw = r.status, r.getheaders(), body
        self.ctype = r.getheader("Content-Type", "")
        try:
            self.json = json.loads(body) if "json" in self.ctype else None
        except ValueError:
            self.json = None

    def header(self, k):
        return [v for h, v in self.headers if h.lower() == k.lower()]


def call(method, path, body=None, token=None, ctype="application/json",
         timeout=30):
    c = http.client.HTTPSConnection("127.0.0.1", PORT, context=CTX,
                                    timeout=timeout)
    h = {"Authorization": "Bearer " + (token or ADMIN_TOK),
         "Accept": "application/json"}
    if body is not None:
        h["Content-Type"] = ctype
        body = body if isinstance(body, (bytes, str)) else json.dumps(body)
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    out = Resp(r, r.read())
    c.close()
    return out


def watch(path, seconds, token=None):
    """Open a watch, read events for up to `seconds`; returns (status,
    events, ended_cleanly)."""
    c = http.client.HTTPSConnection("127.0.0.1", PORT, context=CTX,
                                    timeout=seconds + 5)
    c.request("GET", path, headers={"Authorization": "Bearer " +
                                    (token or ADMIN_TOK)})
    r = c.getresponse()
    evs, clean = [], False
    if r.status != 200:
        return r.status, json.loads(r.read() or b"null"), True
    buf = b""
    end = time.time() + seconds
    try:
        while time.time() < end:
            chunk = r.read1(65536) if hasattr(r, "read1") else r.read(1)
            if not chunk:
                clean = True
                break
            buf += chunk
            while b"\n" in buf:
                ln, buf = buf.split(b"\n", 1)
                if ln.strip():
                    evs.append(json.loads(ln))
    except (http.client.IncompleteRead, ConnectionError, OSError):
        clean = False
    c.close()
    return 200, evs, clean


def wait(fn, secs=20, step=0.2):
    end = time.time() + secs
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()


def is_status(r, code, reason):
    j = r.json or {}
    return (r.status == code and j.get("kind") == "Status" and
            j.get("apiVersion") == "v1" and j.get("status") == "Failure" and
            j.get("reason") == reason and j.get("code") == code and
            j.get("metadata") == {})


def pod(name, cmd, **spec):
    s = {"restartPolicy": "Never", "containers": [
        {"name": "c", "image": "kube-sim/host", "command": cmd}]}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": name}}, "spec": s}


NS = "/api/v1/namespaces/st"


def t_basics():
    r = call("GET", "/version", token="bogus")
    check("version readable", r.status == 200 and r.json["major"] == "1")
    r = call("GET", "/api/v1/pods", token="bogus")
    check("401 Unauthorized Status", is_status(r, 401, "Unauthorized") and
          r.json["message"] == "Unauthorized", r.raw)
    r = call("GET", "/nope")
    check("unknown path plain 404", r.status == 404 and
          r.raw == b"404 page not found\n" and "text/plain" in r.ctype)
    r = call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind":
                                            "Namespace", "metadata": {
                                                "name": "st"}})
    check("create ns 201", r.status == 201 and
          r.json["status"]["phase"] == "Active", r.raw)
    r = call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind":
                                            "Namespace", "metadata": {
                                                "name": "st"}})
    check("409 AlreadyExists", is_status(r, 409, "AlreadyExists") and
          r.json["message"] == 'namespaces "st" already exists' and
          r.json["details"] == {"name": "st", "group": "", "kind":
                                "namespaces"}, r.raw)
    r = call("GET", NS + "/pods/nope")
    check("404 NotFound Status", is_status(r, 404, "NotFound") and
          r.json["message"] == 'pods "nope" not found' and
          r.json["details"]["kind"] == "pods", r.raw)
    r = call("GET", "/api/v1/namespaces/nope/pods/x")
    check("404 in missing ns", r.status == 404)
    r = call("POST", "/api/v1/namespaces/nope/pods", pod("x", ["true"]))
    check("create in missing ns 404", is_status(r, 404, "NotFound") and
          r.json["message"] == 'namespaces "nope" not found', r.raw)


def t_validation():
    p = pod("v1", ["true"])
    p["spec"]["foo"] = 1
    p["spec"]["containers"][0]["bar"] = 2
    r = call("POST", NS + "/pods?fieldValidation=Strict", p)
    check("strict unknown fields 400", is_status(r, 400, "BadRequest") and
          r.json["message"] == 'Pod in version "v1" cannot be handled as a '
          'Pod: strict decoding error: unknown field '
          '"spec.containers[0].bar", unknown field "spec.foo"', r.raw)
    r = call("POST", NS + "/pods", p)
    w = r.header("Warning")
    check("warn mode: 201 + Warning headers", r.status == 201 and
          '299 - "unknown field \\"spec.foo\\""' in w and
          "foo" not in r.json["spec"], (r.status, w))
    r = call("POST", NS + "/pods?fieldValidation=Strict",
             '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d",'
             '"name":"e"},"spec":{"containers":[{"name":"c","image":"x"}]}}')
    check("strict duplicate field 400", r.status == 400 and
          'duplicate field "metadata.name"' in r.json["message"], r.raw)
    p = pod("v2", ["true"])
    p["spec"]["containers"][0].pop("image")
    p["spec"]["restartPolicy"] = "Nevr"
    r = call("POST", NS + "/pods", p)
    check("422 Invalid with causes", is_status(r, 422, "Invalid") and
          r.json["details"]["kind"] == "Pod" and
          {c["field"] for c in r.json["details"]["causes"]} == {
              "spec.restartPolicy", "spec.containers[0].image"} and
          r.json["message"].startswith('Pod "v2" is invalid: ['), r.raw)
    p = pod("v3", ["true"])
    p["spec"]["hostNetwork"] = "yes"
    r = call("POST", NS + "/pods", p)
    check("type error 400", r.status == 400 and "cannot unmarshal string "
          "into Go struct field" in r.json["message"], r.raw)
    p = pod("Bad_Name", ["true"])
    r = call("POST", NS + "/pods", p)
    check("bad name 422", r.status == 422 and "RFC 1123" in
          r.json["message"], r.raw)
    p = pod("lab", ["true"])
    p["metadata"]["labels"]["kperf.io/run-id"] = "x" * 64
    r = call("POST", NS + "/pods", p)
    check("label value > 63 chars: 422", r.status == 422 and
          r.json["details"]["causes"][0]["field"] == "metadata.labels" and
          "must be no more than 63 characters" in r.json["message"], r.raw)
    r = call("POST", NS + "/services", {"apiVersion": "v1", "kind":
                                        "Service", "metadata": {
                                            "name": "1svc"}, "spec": {
                                                "ports": [{"port": 80}]}})
    check("service name DNS-1035", r.status == 422 and "DNS-1035" in
          r.json["message"], r.raw)
    r = call("POST", NS + "/secrets", {"apiVersion": "v1", "kind": "Secret",
                                       "metadata": {"name": "b"},
                                       "data": {"k": "no base64!"}})
    check("secret data not base64: 400", r.status == 400 and
          "illegal base64 data at input byte 2" in r.json["message"], r.raw)
    r = call("POST", NS + "/pods?dryRun=All", pod("dry", ["true"]))
    g = call("GET", NS + "/pods/dry")
    check("dryRun=All not persisted", r.status == 201 and g.status == 404,
          (r.status, g.status))
    r = call("POST", NS + "/pods", dict(pod("", ["true"]), metadata={
        "generateName": "gen-"}))
    check("generateName", r.status == 201 and
          r.json["metadata"]["name"].startswith("gen-") and
          len(r.json["metadata"]["name"]) == 9 and
          r.json["metadata"]["uid"] and
          r.json["metadata"]["resourceVersion"] and
          r.json["metadata"]["creationTimestamp"], r.raw)


def t_list_watch():
    for i in range(5):
        p = pod("lw%d" % i, ["sleep", "30"])
        p["metadata"]["labels"]["grp"] = "a" if i < 3 else "b"
        call("POST", NS + "/pods", p)
    r = call("GET", NS + "/pods?labelSelector=grp%3Da")
    check("label selector", r.status == 200 and r.json["kind"] == "PodList"
          and len(r.json["items"]) == 3 and "kind" not in r.json["items"][0],
          r.raw[:300])
    r = call("GET", NS + "/pods?labelSelector=grp%20in%20(a%2Cb),grp!%3Da")
    check("set selector", r.status == 200 and len(r.json["items"]) == 2)
    r = call("GET", NS + "/pods?fieldSelector=metadata.name%3Dlw1")
    check("field selector name", [i["metadata"]["name"] for i in
                                  r.json["items"]] == ["lw1"])
    r = call("GET", NS + "/pods?fieldSelector=spec.bogus%3D1")
    check("unsupported field 400", is_status(r, 400, "BadRequest") and
          r.json["message"] == "field label not supported: spec.bogus",
          r.raw)
    got, cont, pages = [], "", 0
    while True:
        r = call("GET", NS + "/pods?labelSelector=grp&limit=2" +
                 ("&continue=" + cont if cont else ""))
        got += [i["metadata"]["name"] for i in r.json["items"]]
        pages += 1
        cont = r.json["metadata"].get("continue")
        if not cont:
            break
    check("pagination", sorted(got) == ["lw%d" % i for i in range(5)] and
          pages == 3, (got, pages))
    rv = r.json["metadata"]["resourceVersion"]
    call("DELETE", NS + "/pods/lw4?gracePeriodSeconds=0")
    st, evs, clean = watch(NS + "/pods?watch=1&resourceVersion=%s&"
                           "allowWatchBookmarks=true&timeoutSeconds=4" % rv,
                           8)
    types = [e["type"] for e in evs]
    check("watch from RV: changes only, bookmark, clean end",
          "DELETED" in types and "ADDED" not in types and
          "BOOKMARK" in types and clean, types)
    st, evs, clean = watch(NS + "/pods?watch=1&labelSelector=grp%3Db&"
                           "timeoutSeconds=1", 4)
    check("watch without RV: synthetic ADDED", [e["type"] for e in evs] ==
          ["ADDED"] and evs[0]["object"]["kind"] == "Pod", evs)
    st, evs, clean = watch(NS + "/pods?watch=1&sendInitialEvents=true&"
                           "resourceVersionMatch=NotOlderThan&"
                           "allowWatchBookmarks=true&labelSelector=grp&"
                           "timeoutSeconds=1", 4)
    check("sendInitialEvents: ADDED... then initial-events-end bookmark",
          [e["type"] for e in evs[:4]] == ["ADDED"] * 4 and
          evs[4]["type"] == "BOOKMARK" and evs[4]["object"]["metadata"][
              "annotations"]["k8s.io/initial-events-end"] == "true",
          [e["type"] for e in evs])
    subprocess.run([KS, "fault", "--state-dir", D, "compact"], check=True,
                   capture_output=True)
    st, evs, clean = watch(NS + "/pods?watch=1&resourceVersion=%s" % rv, 4)
    check("too old RV: ERROR 410 Expired event",
          evs and evs[0]["type"] == "ERROR" and
          evs[0]["object"]["code"] == 410 and
          evs[0]["object"]["reason"] == "Expired" and
          evs[0]["object"]["message"].startswith(
              "too old resource version: %s (" % rv), evs)


def t_delete():
    r = call("POST", "/apis/batch/v1/namespaces/st/jobs", {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{
                                           "name": "c", "image":
                                           "kube-sim/host",
                                           "command": ["sleep", "60"]}]}}}})
    check("job created", r.status == 201 and r.json["spec"]["selector"],
          r.raw[:300])
    uid = r.json["metadata"]["uid"]
    sel = "batch.kubernetes.io%2Fcontroller-uid%3D" + uid
    pods = wait(lambda: call("GET", NS + "/pods?labelSelector=" +
                             sel).json["items"])
    check("job pod created with labels/finalizer/owner", pods and
          pods[0]["metadata"]["finalizers"] == [
              "batch.kubernetes.io/job-tracking"] and
          pods[0]["metadata"]["ownerReferences"][0]["uid"] == uid, pods)
    r = call("DELETE", "/apis/batch/v1/namespaces/st/jobs/j")
    w = r.header("Warning")
    check("job delete w/o policy: Status + orphan warning",
          r.status == 200 and r.json["kind"] == "Status" and
          r.json["status"] == "Success" and r.json["details"] == {
              "name": "j", "group": "batch", "kind": "jobs", "uid": uid} and
          any("child pods are preserved by default" in x for x in w),
          (r.raw, w))
    # the orphaning is asynchronous: wait (10 s bounds a hang) until the pod has lost its owner
    def orphaned():
        items = call("GET", NS + "/pods?labelSelector=" + sel).json["items"]
        return items if items and "ownerReferences" not in items[0]["metadata"] else None

    left = wait(orphaned, 10) or call("GET", NS + "/pods?labelSelector=" + sel).json["items"]
    check("orphaned pod keeps running without owner", left and
          "ownerReferences" not in left[0]["metadata"], left)
    name = left[0]["metadata"]["name"]
    r = call("DELETE", NS + "/pods/" + name)
    check("pod delete returns Pod with deletionTimestamp",
          r.status == 200 and r.json["kind"] == "Pod" and
          r.json["metadata"].get("deletionTimestamp") and
          r.json["metadata"]["deletionGracePeriodSeconds"] == 30, r.raw[:300])
    gone = wait(lambda: call("GET", NS + "/pods/" + name).status == 404, 10)
    check("graceful pod deletion completes (sleep dies on SIGTERM)", gone)
    # background cascade for a DaemonSet
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {
        "name": "d"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
                               "template": {"metadata": {"labels": {
                                   "app": "d"}}, "spec": {"containers": [{
                                       "name": "c", "image": "kube-sim/host",
                                       "command": ["sleep", "60"]}]}}}}
    r = call("POST", "/apis/apps/v1/namespaces/st/daemonsets", ds)
    ok = wait(lambda: (call("GET", "/apis/apps/v1/namespaces/st/daemonsets/d"
                            ).json.get("status") or {}).get("numberReady") ==
              NODES, 20)
    check("daemonset ready on every node", ok)
    r = call("DELETE", "/apis/apps/v1/namespaces/st/daemonsets/d?"
             "propagationPolicy=Foreground")
    check("foreground delete returns DS with finalizer",
          r.json.get("kind") == "DaemonSet" and "foregroundDeletion" in
          r.json["metadata"].get("finalizers", []), r.raw[:300])
    gone = wait(lambda: call("GET", "/apis/apps/v1/namespaces/st/daemonsets/"
                             "d").status == 404 and not call(
        "GET", NS + "/pods?labelSelector=app%3Dd").json["items"], 20)
    check("foreground: pods then owner gone", gone)
    r = call("DELETE", NS + "/pods?labelSelector=grp")
    check("deletecollection returns a PodList", r.status == 200 and
          r.json["kind"] == "PodList" and len(r.json["items"]) >= 3,
          r.raw[:200])


def t_ssar():
    r = call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
             {"apiVersion": "authorization.k8s.io/v1", "kind":
              "SelfSubjectAccessReview", "spec": {"resourceAttributes": {
                  "verb": "create", "resource": "pods", "namespace": "st"}}},
             token=USER_TOK)
    check("SSAR answers", r.status == 201 and r.json["status"]["allowed"] is
          True, r.raw)


def t_faults():
    def fault(spec):
        subprocess.run([KS, "fault", "--state-dir", D, spec], check=True,
                       capture_output=True)

    def clear():
        subprocess.run([KS, "fault", "--state-dir", D, "--clear"],
                       check=True, capture_output=True)
    fault("429:count=1,retry-after=2,path=/api/v1/nodes")
    r = call("GET", "/api/v1/nodes")
    check("429 plain text + Retry-After", r.status == 429 and
          r.raw == b"Too many requests, please try again later.\n" and
          r.header("Retry-After") == ["2"] and "text/plain" in r.ctype,
          (r.status, r.raw, r.headers))
    check("429 count exhausted", call("GET", "/api/v1/nodes").status == 200)
    fault("503:count=1,retry-after=1")
    r = call("GET", "/api/v1/nodes")
    check("503 Status", is_status(r, 503, "ServiceUnavailable") and
          r.header("Retry-After") == ["1"], r.raw)
    fault("500:count=1")
    check("500 Status", is_status(call("GET", "/api/v1/nodes"), 500,
                                  "InternalError"))
    fault("slow:delay=1s,count=1")
    t = time.time()
    call("GET", "/api/v1/nodes")
    check("slow response", time.time() - t >= 1.0)
    fault("drop-watch:after=1s,count=1")
    st, evs, clean = watch("/api/v1/nodes?watch=1&timeoutSeconds=10", 6)
    check("dropped watch (no clean end)", not clean and
          sum(e["type"] == "ADDED" for e in evs) == NODES,
          (clean, [e["type"] for e in evs]))
    fault("gone-watch:count=1,mode=http")
    st, body, _ = watch("/api/v1/nodes?watch=1&resourceVersion=1", 3)
    check("HTTP 410 on watch", st == 410 and body["reason"] == "Expired",
          (st, body))
    fault("ns-delete-guard")
    call("POST", NS + "/pods", pod("guard", ["sleep", "60"]))
    r = call("DELETE", "/api/v1/namespaces/st")
    check("gatekeeper-like ns delete denial", is_status(r, 403, "Forbidden")
          and r.json["message"].startswith(
              'admission webhook "validation.gatekeeper.sh" denied the '
              'request: '), r.raw)
    clear()
    fault("node-notready:node=node-%d" % NODES)
    n = call("GET", "/api/v1/nodes/node-%d" % NODES).json
    ready = [c for c in n["status"]["conditions"] if c["type"] == "Ready"][0]
    check("node NotReady + unreachable taint", ready["status"] == "Unknown"
          and any(t["key"] == "node.kubernetes.io/unreachable"
                  for t in n["spec"].get("taints", [])), n["status"])
    p = pod("sel", ["true"], nodeSelector={"kubernetes.io/hostname":
                                           "node-%d" % NODES})
    call("POST", NS + "/pods", p)
    r = wait(lambda: [c for c in call("GET", NS + "/pods/sel").json[
        "status"].get("conditions", []) if c["type"] == "PodScheduled" and
        c["status"] == "False"])
    check("unschedulable pod: PodScheduled False Unschedulable", r and
          r[0]["reason"] == "Unschedulable" and "untolerated taint "
          "{node.kubernetes.io/unreachable: }" in r[0]["message"], r)
    clear()
    ok = wait(lambda: call("GET", NS + "/pods/sel").json["status"].get(
        "phase") == "Succeeded")
    check("pod runs once the node is back", ok)
    call("POST", NS + "/pods", dict(pod("img", ["true"]), spec={
        "containers": [{"name": "c", "image": "example.com/nope:1"}]}))
    r = wait(lambda: ((call("GET", NS + "/pods/img").json["status"].get(
        "containerStatuses") or [{}])[0].get("state", {}).get(
            "waiting", {}).get("reason") == "ImagePullBackOff"), 15)
    check("unknown image: ImagePullBackOff", r)
    evs = call("GET", NS + "/events?fieldSelector=involvedObject.name%3Dimg"
               ).json["items"]
    reasons = {(e["reason"], e["message"]) for e in evs}
    check("image events", ("Failed", "Error: ErrImagePull") in reasons and
          ("Failed", "Error: ImagePullBackOff") in reasons, reasons)
    r = call("GET", NS + "/pods/img/log")
    check("log of waiting container 400", is_status(r, 400, "BadRequest")
          and 'is waiting to start: ' in r.json["message"], r.raw)
    clear()
    # a LimitRange default CPU limit: LimitRanger's default, request and
    # annotation; a request above the limit it gives is refused
    fault("limit-range-cpu:cpu=250m,namespace=st")
    p = pod("lim", ["cat", "/proc/self/cgroup"])
    p["spec"]["containers"].append({"name": "own", "image": "kube-sim/host",
                                    "command": ["true"], "resources": {
                                        "limits": {"cpu": "2"}}})
    r = call("POST", NS + "/pods", p)
    c = r.json["spec"]["containers"]
    check("limit-range-cpu: default limit and request, annotation",
          r.status == 201 and c[0]["resources"] == {
              "limits": {"cpu": "250m"}, "requests": {"cpu": "250m"}} and
          c[1]["resources"]["limits"] == {"cpu": "2"} and
          r.json["metadata"]["annotations"]["kubernetes.io/limit-ranger"] ==
          "LimitRanger plugin set: cpu limit for container c", r.raw)
    p = pod("lim2", ["true"])
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500m"}}
    r = call("POST", NS + "/pods", p)
    check("limit-range-cpu: request above the default limit is invalid",
          is_status(r, 422, "Invalid") and r.json["message"] ==
          'Pod "lim2" is invalid: spec.containers[0].resources.requests: '
          'Invalid value: "500m": must be less than or equal to cpu limit '
          'of 250m', r.raw)
    r = call("POST", "/api/v1/namespaces/default/pods", pod("lim3", ["true"]))
    check("limit-range-cpu: other namespaces untouched", r.status == 201 and
          not r.json["spec"]["containers"][0]["resources"], r.raw)
    call("DELETE", "/api/v1/namespaces/default/pods/lim3?gracePeriodSeconds=0")
    call("DELETE", NS + "/pods/lim?gracePeriodSeconds=0")
    clear()



def t_psa():
    call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind":
                                        "Namespace", "metadata": {
                                            "name": "psa", "labels": {
                                                "pod-security.kubernetes.io/"
                                                "enforce": "restricted"}}})
    p = pod("h", ["true"], hostNetwork=True)
    r = call("POST", "/api/v1/namespaces/psa/pods", p)
    check("PSA restricted rejects hostNetwork pod",
          is_status(r, 403, "Forbidden") and r.json["message"].startswith(
              'pods "h" is forbidden: violates PodSecurity '
              '"restricted:latest": allowPrivilegeEscalation != false') and
          "host namespaces (hostNetwork=true)" in r.json["message"], r.raw)
    r = call("DELETE", "/api/v1/namespaces/psa")
    check("ns delete returns Namespace Terminating", r.json["kind"] ==
          "Namespace" and r.json["status"]["phase"] == "Terminating", r.raw)


def t_logs():
    call("POST", NS + "/pods", pod("lg", ["sh", "-c", "for i in 1 2 3 4 5; "
                                          "do echo line$i; done; sleep 1"]))
    ok = wait(lambda: call("GET", NS + "/pods/lg").json["status"].get(
        "phase") == "Succeeded", 15)
    r = call("GET", NS + "/pods/lg/log")
    check("log text", ok and r.raw == b"line1\nline2\nline3\nline4\nline5\n"
          and "text/plain" in r.ctype, r.raw)
    r = call("GET", NS + "/pods/lg/log?tailLines=2")
    check("log tailLines", r.raw == b"line4\nline5\n", r.raw)
    r = call("GET", NS + "/pods/lg/log?limitBytes=8")
    check("log limitBytes", r.raw == b"line1\nli", r.raw)
    call("POST", NS + "/pods", pod("lf", ["sh", "-c", "echo a; sleep 1; "
                                          "echo b"]))
    wait(lambda: call("GET", NS + "/pods/lf").json["status"].get(
        "phase") == "Running")
    t = time.time()
    r = call("GET", NS + "/pods/lf/log?follow=true")
    check("log follow until exit", r.raw == b"a\nb\n" and
          time.time() - t > 0.5, r.raw)


def t_jobs():
    def job(name, cmd, **spec):
        j = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": name}, "spec": dict({"template": {"spec": {
                "restartPolicy": "Never", "containers": [{
                    "name": "c", "image": "kube-sim/host",
                    "command": cmd}]}}}, **spec)}
        r = call("POST", "/apis/batch/v1/namespaces/st/jobs", j)
        check("create job " + name, r.status == 201, r.raw[:300])

    def cond(name):
        r = call("GET", "/apis/batch/v1/namespaces/st/jobs/" + name)
        st = (r.json.get("status") if r.status == 200 else None) or {}
        return {c["type"]: c for c in st.get("conditions") or []
                if c["status"] == "True"}, st
    job("bl", ["sh", "-c", "exit 3"], backoffLimit=1)
    c = wait(lambda: cond("bl")[0].get("Failed"), 40)
    st = cond("bl")[1]
    check("backoffLimit: Failed BackoffLimitExceeded after 2 pods",
          c and c["reason"] == "BackoffLimitExceeded" and st["failed"] == 2,
          (c, st))
    job("dl", ["sleep", "60"], activeDeadlineSeconds=2)
    c = wait(lambda: cond("dl")[0].get("Failed"), 20)
    check("activeDeadlineSeconds: DeadlineExceeded", c and c["reason"] ==
          "DeadlineExceeded" and c["message"] ==
          "Job was active longer than specified deadline", c)
    job("pf", ["sh", "-c", "exit 42"], backoffLimit=6, podFailurePolicy={
        "rules": [{"action": "FailJob", "onExitCodes": {
            "operator": "In", "values": [42]}}]})
    c = wait(lambda: cond("pf")[0].get("Failed"), 20)
    check("podFailurePolicy FailJob", c and c["reason"] ==
          "PodFailurePolicy" and "exit code 42" in c["message"], c)
    # TTL long enough for the Complete condition to be seen on a loaded host
    job("ok", ["true"], ttlSecondsAfterFinished=3)
    c = wait(lambda: cond("ok")[0].get("Complete"), 20)
    check("Complete condition", c and c["reason"] == "CompletionsReached", c)
    gone = wait(lambda: call("GET", "/apis/batch/v1/namespaces/st/jobs/ok"
                             ).status == 404, 10)
    check("ttlSecondsAfterFinished deletes the job", gone)
    p = pod("crash", ["sh", "-c", "echo run; exit 1"],
            restartPolicy="Always")
    call("POST", NS + "/pods", p)
    seen = set()

    def crashed():
        cs = (call("GET", NS + "/pods/crash").json["status"].get(
            "containerStatuses") or [{}])[0]
        seen.add(cs.get("state", {}).get("waiting", {}).get("reason"))
        return cs.get("restartCount", 0) >= 1 and cs
    cs = wait(crashed, 30)
    check("CrashLoopBackOff, restartCount, lastState", cs and
          "CrashLoopBackOff" in seen and cs["lastState"]["terminated"][
              "exitCode"] == 1 and cs["lastState"]["terminated"]["reason"] ==
          "Error", (seen, cs))
    r = call("GET", NS + "/pods/crash/log?previous=true")
    check("log previous=true", r.raw == b"run\n", r.raw)
    p = pod("probe", ["sh", "-c", "sleep 1; touch ready; sleep 30"])
    p["spec"]["containers"][0]["readinessProbe"] = {
        "exec": {"command": ["test", "-e", "ready"]}, "periodSeconds": 1}
    call("POST", NS + "/pods", p)
    r = wait(lambda: [c for c in call("GET", NS + "/pods/probe").json[
        "status"].get("conditions", []) if c["type"] == "Ready" and
        c["status"] == "True"], 15)
    check("exec readiness probe", r)


def t_volumes():
    """A claim bound by the provisioner; an init container and the main
    container write to it, a later pod reads both lines; a pod reads its
    service-account directory at the real path (a private mount
    namespace) and calls the API through the kubernetes Service as
    system:serviceaccount:st:default."""
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
        "name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                  "resources": {"requests": {
                                      "storage": "1Gi"}}}}
    r = call("POST", NS + "/persistentvolumeclaims", pvc)
    check("create pvc", r.status == 201, r.raw[:300])
    c = wait(lambda: (call("GET", NS + "/persistentvolumeclaims/data").json.get(
        "status") or {}).get("phase") == "Bound", 10)
    got = call("GET", NS + "/persistentvolumeclaims/data").json
    vol = got["spec"].get("volumeName", "")
    pv = call("GET", "/api/v1/persistentvolumes/" + vol).json or {}
    path = ((pv.get("spec") or {}).get("hostPath") or {}).get("path", "")
    check("pvc Bound to pv-<uid>, a directory in the state dir", c and
          vol == "pvc-" + got["metadata"]["uid"] and
          (pv.get("status") or {}).get("phase") == "Bound" and
          pv["spec"]["claimRef"]["name"] == "data" and
          os.path.realpath(path).startswith(os.path.realpath(D) + "/") and
          os.path.isdir(path),
          (got, pv))
    r = call("POST", NS + "/persistentvolumeclaims", dict(pvc, metadata={
        "name": "nosize"}, spec={"accessModes": ["ReadWriteOnce"]}))
    check("pvc without a storage request: 422", r.status == 422 and
          "spec.resources[storage]: Required value" in r.json["message"],
          r.raw[:300])
    w = pod("writer", ["sh", "-c", "echo main >> /data/log"],
            volumes=[{"name": "d", "persistentVolumeClaim": {
                "claimName": "data"}}])
    w["spec"]["containers"][0]["volumeMounts"] = [{"name": "d",
                                                   "mountPath": "/data"}]
    w["spec"]["initContainers"] = [{
        "name": "first", "image": "kube-sim/host", "command": [
            "sh", "-c", "echo init >> /data/log; sleep 1"],
        "volumeMounts": [{"name": "d", "mountPath": "/data"}]}]
    r = call("POST", NS + "/pods", w)
    check("create pod with an init container and the claim", r.status == 201,
          r.raw[:300])
    seen = set()

    def phase():
        st = call("GET", NS + "/pods/writer").json.get("status") or {}
        seen.add((st.get("phase"), tuple(
            (c["type"], c["status"]) for c in st.get("conditions") or []
            if c["type"] == "Initialized")))
        return st.get("phase") in ("Succeeded", "Failed") and st
    st = wait(phase, 20)
    ist = (st or {}).get("initContainerStatuses") or [{}]
    check("init container first (Pending, Initialized False), then the "
          "container: Succeeded", st and st["phase"] == "Succeeded" and
          ("Pending", (("Initialized", "False"),)) in seen and
          ist[0].get("state", {}).get("terminated", {}).get("reason") ==
          "Completed", (seen, st))
    r = call("GET", NS + "/pods/writer/log?container=first")
    check("log of the init container", r.status == 200, r.raw[:200])
    rd = pod("reader", ["cat", "/data/log"], volumes=[{
        "name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    rd["spec"]["containers"][0]["volumeMounts"] = [{"name": "d",
                                                    "mountPath": "/data"}]
    call("POST", NS + "/pods", rd)
    wait(lambda: (call("GET", NS + "/pods/reader").json.get("status") or
                  {}).get("phase") == "Succeeded", 20)
    r = call("GET", NS + "/pods/reader/log")
    check("a later pod reads what both wrote: the volume persists",
          r.raw == b"init\nmain\n", r.raw)
    fail = pod("initfail", ["true"])
    fail["spec"]["initContainers"] = [{"name": "bad", "image":
                                       "kube-sim/host",
                                       "command": ["sh", "-c", "exit 4"]}]
    call("POST", NS + "/pods", fail)
    st = wait(lambda: (lambda s: s.get("phase") == "Failed" and s)(
        call("GET", NS + "/pods/initfail").json.get("status") or {}), 20)
    check("a failed init container fails a restartPolicy Never pod; the "
          "container never starts", st and
          st["initContainerStatuses"][0]["state"]["terminated"][
              "exitCode"] == 4 and "waiting" in st["containerStatuses"][0][
                  "state"], st)
    r = call("DELETE", NS + "/persistentvolumeclaims/data")
    gone = wait(lambda: call("GET", NS + "/persistentvolumeclaims/data"
                             ).status == 404 and not os.path.exists(path), 10)
    check("claim deleted (no pod running uses it): volume and directory "
          "gone", gone and call("GET", "/api/v1/persistentvolumes/" +
                                vol).status == 404, r.raw[:200])
    # in-cluster access: the path is built at run time, so only the
    # mount namespace (not argv rewriting) can make it work
    code = ("import json,os,ssl,http.client as h\n"
            "d='/var/run/secrets/'+'kubernetes.io/serviceaccount'\n"
            "t=open(d+'/token').read();ns=open(d+'/namespace').read()\n"
            "c=h.HTTPSConnection(os.environ['KUBERNETES_SERVICE_HOST'],"
            "int(os.environ['KUBERNETES_SERVICE_PORT']),context="
            "ssl.create_default_context(cafile=d+'/ca.crt'))\n"
            "c.request('GET','/api/v1/namespaces/'+ns+'/serviceaccounts/"
            "default',headers={'Authorization':'Bearer '+t})\n"
            "r=c.getresponse();print(ns,r.status,json.load(r)['metadata']"
            "['name'])\n")
    call("POST", NS + "/pods", pod("incluster", ["python3", "-c", code]))
    st = wait(lambda: (lambda s: s.get("phase") in ("Succeeded", "Failed")
                       and s)(call("GET", NS + "/pods/incluster").json.get(
                           "status") or {}), 20)
    r = call("GET", NS + "/pods/incluster/log")
    p = call("GET", NS + "/pods/incluster").json
    mounts = p["spec"]["containers"][0].get("volumeMounts") or []
    check("automounted kube-api-access volume at the service-account path",
          [m["mountPath"] for m in mounts] ==
          ["/var/run/secrets/kubernetes.io/serviceaccount"] and
          mounts[0]["name"].startswith("kube-api-access-"), mounts)
    with open(os.path.join(D, "requests.log")) as f:
        sa_lines = [ln for ln in f if "system:serviceaccount:st:default" in ln
                    and "/serviceaccounts/default" in ln]
    check("in a pod: token, ca.crt and namespace at the real path, the API "
          "through KUBERNETES_SERVICE_HOST as the ServiceAccount",
          st and st["phase"] == "Succeeded" and r.raw == b"st 200 default\n"
          and sa_lines, (st and st.get("phase"), r.raw))
    check("the host's /run is untouched",
          not os.path.exists("/run/secrets/kubernetes.io"))


def t_cronjobs():
    """The controller on the running cluster: the clock jumps to the next
    schedule time (kube-sim cron --next), the Job and its pod run, the
    CronJob's status follows; a bad schedule is a 422."""
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {
        "name": "tick"}, "spec": {
        "schedule": "30 4 * * *", "concurrencyPolicy": "Forbid",
        "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{
                "name": "c", "image": "kube-sim/host",
                "command": ["true"]}]}}}}}}
    base = "/apis/batch/v1/namespaces/st/cronjobs"
    r = call("POST", base, cj)
    check("create cronjob", r.status == 201, r.raw[:300])
    bad = json.loads(json.dumps(cj))
    bad["metadata"]["name"] = "bad"
    bad["spec"]["schedule"] = "30 4 * *"
    r = call("POST", base, bad)
    check("bad schedule: 422 with the parser's words", r.status == 422 and
          "spec.schedule: Invalid value: \"30 4 * *\": expected exactly 5 "
          "fields, found 4" in r.json["message"], r.raw[:300])
    out = subprocess.run([KS, "cron", "--state-dir", D, "--next"],
                         capture_output=True, text=True)
    j = json.loads(out.stdout or "{}")
    check("kube-sim cron --next: the clock at 04:30", out.returncode == 0 and
          j.get("now", "").endswith("T04:30:00Z") or
          j.get("now", "")[11:16] == "04:30", (out.stdout, out.stderr))

    def done():
        st = call("GET", base + "/tick").json.get("status") or {}
        return st.get("lastSuccessfulTime") and st
    st = wait(done, 30)
    jobs = call("GET", "/apis/batch/v1/namespaces/st/jobs").json["items"]
    mine = [x for x in jobs if x["metadata"]["name"].startswith("tick-")]
    check("a Job ran to completion; lastScheduleTime 04:30, "
          "lastSuccessfulTime set, nothing active", st and
          st.get("lastScheduleTime", "")[11:] == "04:30:00Z" and
          not st.get("active") and len(mine) == 1 and
          mine[0]["metadata"]["ownerReferences"][0]["kind"] == "CronJob",
          (st, [x["metadata"]["name"] for x in mine]))
    call("DELETE", base + "/tick?propagationPolicy=Background")
    gone = wait(lambda: not [x for x in call(
        "GET", "/apis/batch/v1/namespaces/st/jobs").json["items"]
        if x["metadata"]["name"].startswith("tick-")], 15)
    check("deleting the CronJob removes its Jobs (owner references, GC)",
          gone)


NODES = int(sys.argv[2]) if len(sys.argv) > 2 else 3
GROUPS = [g for g in sys.argv[3:]] or ["basics", "validation", "list_watch",
                                       "delete", "ssar", "logs", "psa",
                                       "jobs", "volumes", "cronjobs",
                                       "faults"]
for g in GROUPS:
    print("== %s" % g)
    globals()["t_" + g]()
print("%d failed" % len(FAILS))
sys.exit(1 if FAILS else 0)
