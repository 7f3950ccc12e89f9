# SPDX-License-Identifier: Apache-2.0
"""registry - a client of the distribution registry API (v2), as a node's
container runtime talks to it: references, hosts (mirrors and CAs like
containerd's hosts.toml), basic credentials, manifests, indexes, blobs;
push for seeding a registry from an OCI layout.

Owns: reference parsing with Docker's defaults (docker.io, library/,
:latest), the HTTP requests and their failures as containerd words them
(PullError.text), choosing an index entry for linux/<arch>.
Python 3 standard library only.
"""
import base64
import hashlib
import http.client
import json
import os
import socket
import ssl
import urllib.parse

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
               "application/vnd.docker.distribution.manifest.list.v2+json")
MANIFEST_TYPES = ("application/vnd.oci.image.manifest.v1+json",
                  "application/vnd.docker.distribution.manifest.v2+json")
ACCEPT = ", ".join(INDEX_TYPES + MANIFEST_TYPES)


class PullError(Exception):
    """A failed pull: code (the CRI's gRPC code name) and text (the
    runtime's words after "desc = "); transient when retrying may help."""

    def __init__(self, code, text, transient=False):
        Exception.__init__(self, text)
        self.code, self.text, self.transient = code, text, transient


class Ref:
    """A parsed image reference: host, repo, tag, digest; name() is the
    fully qualified form containerd prints."""

    def __init__(self, image):
        rest, _, self.digest = image.partition("@")
        first = rest.split("/", 1)[0]
        if "/" in rest and ("." in first or ":" in first or
                            first == "localhost"):
            self.host, self.repo = first, rest.split("/", 1)[1]
        else:
            self.host, self.repo = "docker.io", rest
            if "/" not in rest:
                self.repo = "library/" + rest
        last = self.repo.rsplit("/", 1)[-1]
        self.tag = ""
        if ":" in last:
            self.repo, _, self.tag = self.repo.rpartition(":")
        if not self.tag and not self.digest:
            self.tag = "latest"

    def name(self):
        s = "%s/%s" % (self.host, self.repo)
        if self.tag:
            s += ":" + self.tag
        if self.digest:
            s += "@" + self.digest
        return s

    def repo_name(self):
        return "%s/%s" % (self.host, self.repo)


class Hosts:
    """Where a registry host is reached (server overrides, like
    hosts.toml `server`), which CAs the node trusts, and requests."""

    def __init__(self, mirrors=None, ca_files=(), timeout=30):
        # host -> http(s)://h:p (the same dict: the local registry adds to it)
        self.mirrors = mirrors if mirrors is not None else {}
        self.ctx = ssl.create_default_context()
        for ca in ca_files:
            self.ctx.load_verify_locations(ca)
        self.timeout = timeout

    def base(self, host):
        m = self.mirrors.get(host)
        if m:
            return m.rstrip("/")
        return "https://" + ("registry-1.docker.io" if host == "docker.io"
                             else host)

    def request(self, method, url, headers=None, body=None, auth=None,
                shown=None):
        """(status, headers dict lower-cased, body bytes); raises
        PullError for a connection failure, worded as Go's net/http."""
        u = urllib.parse.urlsplit(url)
        cls = http.client.HTTPSConnection if u.scheme == "https" else \
            http.client.HTTPConnection
        kw = {"context": self.ctx} if u.scheme == "https" else {}
        conn = cls(u.hostname, u.port, timeout=self.timeout, **kw)
        h = dict(headers or {})
        if auth:
            h["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % auth).encode()).decode()
        path = u.path + ("?" + u.query if u.query else "")
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        except (OSError, http.client.HTTPException) as e:
            raise PullError("Unknown", 'failed to do request: %s "%s": %s' % (
                (shown or method).capitalize(), url, _net_err(u, e)),
                transient=True)
        finally:
            conn.close()


def _net_err(u, e):
    port = u.port or (443 if u.scheme == "https" else 80)
    addr = "%s:%d" % (u.hostname, port)
    if isinstance(e, socket.gaierror):
        return "dial tcp: lookup %s: no such host" % u.hostname
    if isinstance(e, ConnectionRefusedError):
        return "dial tcp %s: connect: connection refused" % addr
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "dial tcp %s: i/o timeout" % addr
    if isinstance(e, ssl.SSLCertVerificationError):
        return "tls: failed to verify certificate: x509: %s" % \
            e.verify_message
    return str(e)


def pick_platform(index, arch):
    """The manifest descriptor of index for linux/arch, or None."""
    for m in index.get("manifests") or []:
        p = m.get("platform") or {}
        if p.get("os") == "linux" and p.get("architecture") == arch:
            return m
    return None


class Puller:
    """Resolves and fetches one reference through Hosts with optional
    basic credentials ((user, password) or None)."""

    def __init__(self, hosts, ref, auth=None):
        self.hosts, self.ref, self.auth = hosts, ref, auth
        self.base = hosts.base(ref.host)

    def get(self, kind, what, accept=None, method="GET"):
        url = "%s/v2/%s/%s/%s" % (self.base, self.ref.repo, kind, what)
        hdr = {"Accept": accept} if accept else {}
        # containerd resolves a reference with a HEAD of the manifest
        shown = "HEAD" if kind == "manifests" else method
        resolving = 'failed to resolve reference "%s": ' % self.ref.name()
        try:
            st, h, body = self.hosts.request(method, url, hdr, auth=self.auth,
                                             shown=shown)
        except PullError as e:
            e.text = resolving + e.text if kind == "manifests" else e.text
            raise
        if st == 401:
            raise PullError("Unknown", "%sunexpected status from %s request "
                            "to %s: 401 Unauthorized" % (resolving, shown, url))
        if st == 404:
            raise PullError("NotFound", "failed to resolve reference \"%s\""
                            ": %s: not found" % (self.ref.name(),
                                                 self.ref.name()))
        if st >= 500:
            raise PullError("Unknown", "failed to resolve reference \"%s\": "
                            "unexpected status from %s request to %s: %d" % (
                                self.ref.name(), shown, url, st), True)
        if st != 200:
            raise PullError("Unknown", "unexpected status from %s request "
                            "to %s: %d" % (shown, url, st))
        return h, body

    def manifest(self, what):
        h, body = self.get("manifests", what, ACCEPT)
        digest = h.get("docker-content-digest") or \
            "sha256:" + hashlib.sha256(body).hexdigest()
        doc = json.loads(body)
        return digest, doc.get("mediaType") or h.get("content-type", ""), \
            doc

    def resolve(self, arch):
        """(digest the reference names: the index's or the manifest's,
        the platform manifest, its config) for linux/arch."""
        digest, mt, doc = self.manifest(self.ref.digest or self.ref.tag)
        if mt in INDEX_TYPES or "manifests" in doc:
            d = pick_platform(doc, arch)
            if d is None:
                raise PullError("NotFound", "no match for platform in "
                                "manifest: not found")
            _, _, man = self.manifest(d["digest"])
        else:
            man = doc
            # a single-platform image: the config says its platform
        _, cbody = self.get("blobs", man["config"]["digest"])
        conf = json.loads(cbody)
        if conf.get("architecture") and conf["architecture"] != arch and \
                not (mt in INDEX_TYPES or "manifests" in doc):
            raise PullError("NotFound", "no match for platform in manifest: "
                            "not found")
        return digest, man, conf

    def blob(self, digest, dest):
        """Fetch a blob into dest (checked against its digest)."""
        _, body = self.get("blobs", digest)
        if "sha256:" + hashlib.sha256(body).hexdigest() != digest:
            raise PullError("Unknown", "failed commit on ref \"layer-%s\": "
                            "unexpected commit digest" % digest, True)
        tmp = dest + ".part"
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, dest)


def push_layout(hosts, layout, ref, auth=None):
    """Push the OCI layout directory's (single) index to ref
    ("host/repo:tag", host as given to Hosts) with basic credentials auth
    ((user, password) or None): blobs, manifests, index. Returns the index
    digest. As a command (tests): python3 registry.py push LAYOUT REF
    [CA_FILE USER_FILE PASSWORD_FILE] (HTTPS with them, plain HTTP
    without)."""
    r = Ref(ref)
    base = hosts.base(r.host)

    def blob_path(d):
        return os.path.join(layout, "blobs", "sha256", d.split(":", 1)[1])

    def push_blob(d):
        url = "%s/v2/%s/blobs/%s" % (base, r.repo, d)
        st, _, _ = hosts.request("HEAD", url, auth=auth)
        if st == 200:
            return
        st, h, _ = hosts.request("POST", "%s/v2/%s/blobs/uploads/" % (
            base, r.repo), auth=auth)
        if st != 202:
            raise PullError("Unknown", "push %s: upload start %d" % (ref, st))
        loc = h["location"]
        if loc.startswith("/"):
            loc = base + loc
        with open(blob_path(d), "rb") as f:
            data = f.read()
        st, _, body = hosts.request("PUT", loc + ("&" if "?" in loc else "?")
                                    + "digest=" + d, {
                                        "Content-Type":
                                        "application/octet-stream"}, data,
                                    auth)
        if st != 201:
            raise PullError("Unknown", "push %s: blob %d %s" % (ref, st, body))

    def push_manifest(d, mt, what):
        with open(blob_path(d), "rb") as f:
            data = f.read()
        st, _, body = hosts.request("PUT", "%s/v2/%s/manifests/%s" % (
            base, r.repo, what), {"Content-Type": mt}, data, auth)
        if st != 201:
            raise PullError("Unknown", "push %s: manifest %d %s" % (
                ref, st, body))

    with open(os.path.join(layout, "index.json")) as f:
        top = json.load(f)["manifests"][0]
    with open(blob_path(top["digest"])) as f:
        index = json.load(f)
    for m in index["manifests"]:
        with open(blob_path(m["digest"])) as f:
            man = json.load(f)
        for d in [man["config"]] + man["layers"]:
            push_blob(d["digest"])
        push_manifest(m["digest"], m["mediaType"], m["digest"])
    push_manifest(top["digest"], top["mediaType"], r.tag or top["digest"])
    return top["digest"]


if __name__ == "__main__":
    import sys
    if len(sys.argv) not in (4, 7) or sys.argv[1] != "push":
        sys.exit("usage: registry.py push LAYOUT HOST/REPO:TAG "
                 "[CA_FILE USER_FILE PASSWORD_FILE]")
    # without credentials: a plain-HTTP test registry (kube-sim's own)
    cas, cred, scheme = [], None, "http://"
    if len(sys.argv) == 7:
        cas, scheme = [sys.argv[4]], "https://"
        cred = tuple(open(f).read().strip() for f in sys.argv[5:7])
    host = Ref(sys.argv[3]).host
    try:
        print(push_layout(Hosts({host: scheme + host}, cas), sys.argv[2],
                          sys.argv[3], cred))
    except PullError as e:
        sys.exit("registry.py: %s" % e.text)
