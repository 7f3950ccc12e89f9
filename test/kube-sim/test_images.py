# SPDX-License-Identifier: Apache-2.0
"""Unit tests of kube-sim's image pieces without root or a registry:
reference defaults (kubesim/registry.py), the index entry per arch,
pull-secret credentials matched by registry host (kubesim/podimage.py)
and reproducible OCI layouts (kubesim/ocibuild.py)."""
import base64
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import ocibuild, podimage  # noqa: E402
from kubesim.registry import Ref, pick_platform  # noqa: E402

FAILS = []


def check(what, ok, got=None):
    print("%s: %s%s" % ("ok" if ok else "FAIL", what,
                        "" if ok else " (got %r)" % (got,)))
    if not ok:
        FAILS.append(what)


def refs():
    for image, name in (
            ("busybox", "docker.io/library/busybox:latest"),
            ("kperf-agent:e2e", "docker.io/library/kperf-agent:e2e"),
            ("user/x:1", "docker.io/user/x:1"),
            ("ghcr.io/kperf/kperf-agent:0.1.0",
             "ghcr.io/kperf/kperf-agent:0.1.0"),
            ("127.0.0.1:5000/private/a:1", "127.0.0.1:5000/private/a:1"),
            ("localhost/a", "localhost/a:latest"),
            ("ghcr.io/k/a@sha256:" + "0" * 64,
             "ghcr.io/k/a@sha256:" + "0" * 64)):
        check("reference %s -> %s" % (image, name), Ref(image).name() == name,
              Ref(image).name())
    r = Ref("127.0.0.1:5000/private/a:1")
    check("host and repo", (r.host, r.repo, r.tag) == (
        "127.0.0.1:5000", "private/a", "1"), (r.host, r.repo, r.tag))


def platforms():
    idx = {"manifests": [
        {"digest": "a", "platform": {"os": "linux", "architecture": "amd64"}},
        {"digest": "b", "platform": {"os": "linux", "architecture": "arm64"}}]}
    check("arm64 entry", pick_platform(idx, "arm64")["digest"] == "b")
    check("no s390x entry", pick_platform(idx, "s390x") is None)


class FakeWorker:
    def __init__(self, secrets, refs):
        self.secrets, self.events = secrets, []
        self.pod = {"spec": {"imagePullSecrets": [{"name": n} for n in refs]}}

    def secret(self, name):
        return self.secrets.get(name)

    def ev(self, typ, reason, msg, ctr=None):
        self.events.append((typ, reason, msg))


def creds():
    def dcj(auths):
        return {"data": {".dockerconfigjson": base64.b64encode(json.dumps(
            {"auths": auths}).encode()).decode()}}
    auth = base64.b64encode(b"u2:p2").decode()
    w = FakeWorker({"a": dcj({"https://reg.example:5000/v1/": {
        "username": "u1", "password": "p1"}}),
        "b": dcj({"reg.example:5000": {"auth": auth}}),
        "c": dcj({"other.example": {"username": "x", "password": "y"}})},
        ["a", "b", "c", "gone"])
    got = podimage.credentials(w, "reg.example:5000")
    check("credentials matched by host, in order", got == [
        ("u1", "p1"), ("u2", "p2")], got)
    check("missing secret: the kubelet's warning", w.events == [(
        "Warning", "FailedToRetrieveImagePullSecret", "Unable to retrieve "
        "some image pull secrets (gone); attempting to pull the image may "
        "not succeed.")], w.events)


def layouts():
    with tempfile.TemporaryDirectory() as d:
        root = os.path.join(d, "root")
        os.makedirs(os.path.join(root, "usr/local/bin"))
        with open(os.path.join(root, "usr/local/bin/x"), "w") as f:
            f.write("#!/bin/true\n")
        conf = {"Entrypoint": ["/usr/local/bin/x"], "User": "65532:65532"}
        one = ocibuild.build(os.path.join(d, "1"), {"amd64": root}, conf)
        os.utime(os.path.join(root, "usr/local/bin/x"), (1, 1))
        two = ocibuild.build(os.path.join(d, "2"), {"amd64": root}, conf)
        check("the same root gives the same index digest", one == two,
              (one, two))
        with open(os.path.join(d, "1", "index.json")) as f:
            top = json.load(f)["manifests"][0]
        check("index.json names the index", top["digest"] == one and
              top["mediaType"] == ocibuild.OCI_INDEX, top)


refs()
platforms()
creds()
layouts()
print("RESULT: %s" % ("FAILED: " + ", ".join(FAILS) if FAILS else "PASSED"))
sys.exit(1 if FAILS else 0)
