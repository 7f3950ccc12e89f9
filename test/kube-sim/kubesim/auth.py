# SPDX-License-Identifier: Apache-2.0
"""auth - who is calling and what they may do.

Owns: the CA, server and client certificates (made with the openssl
command), the kubeconfigs written into the state dir (user kubeconfig in
token, cert or exec mode, plus admin.kubeconfig for system:masters), bearer
token and client-certificate authentication, and RBAC evaluation over the
Roles/ClusterRoles/bindings in the store (enforced only with --rbac).
"""
import base64
import os
import random
import subprocess
import threading

from .schema import Rejected
from .util import rand_token

ADMIN_USER = "kube-sim-admin"


class User:
    def __init__(self, name, groups):
        self.name = name
        self.groups = list(groups) + ["system:authenticated"]
        if name.startswith("system:serviceaccount:"):
            ns = name.split(":")[2]
            self.groups += ["system:serviceaccounts",
                            "system:serviceaccounts:" + ns]
        self.admin = "system:masters" in groups

    def __str__(self):
        return self.name


def _openssl(args, cwd):
    p = subprocess.run(["openssl"] + args, cwd=cwd, capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("openssl %s: %s" % (args[0], p.stderr.strip()))


def _issue(d, base, subj, exts):
    """Key and certificate signed by the CA in one openssl call."""
    args = ["req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            base + ".key", "-out", base + ".crt", "-subj", subj, "-days",
            "365", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial",
            str(random.randint(1, 2 ** 62))]
    for e in exts:
        args += ["-addext", e]
    _openssl(args, d)


def make_certs(d, user, groups, ips=()):
    """CA, server (127.0.0.1/localhost, the kubernetes Service's names and
    the addresses in ips), user and admin client certs."""
    os.makedirs(d, exist_ok=True)
    _openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt",
              "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
              "-out", "ca.crt", "-days", "3650", "-subj",
              "/CN=kube-sim-ca", "-addext",
              "basicConstraints=critical,CA:TRUE", "-addext",
              "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"], d)
    client = ["extendedKeyUsage=clientAuth", "basicConstraints=CA:FALSE",
              "keyUsage=critical,digitalSignature"]
    subj = "".join("/O=%s" % g for g in groups) + "/CN=%s" % user
    jobs = [("server", "/CN=kube-apiserver", [
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc,"
        "DNS:kubernetes.default.svc.cluster.local" +
        "".join(",IP:" + ip for ip in ips), "extendedKeyUsage=serverAuth",
        "basicConstraints=CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment"]),
        ("user", subj, client),
        ("admin", "/O=system:masters/CN=%s" % ADMIN_USER, client)]
    ts = [threading.Thread(target=_issue, args=(d,) + j) for j in jobs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for base, _, _ in jobs:
        if not os.path.exists(os.path.join(d, base + ".crt")):
            raise RuntimeError("openssl: could not issue %s.crt" % base)
    for f in os.listdir(d):
        if f.endswith(".key"):
            os.chmod(os.path.join(d, f), 0o600)


def _b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def write_kubeconfig(path, server, ca_path, user_name, user_lines):
    text = """apiVersion: v1
kind: Config
clusters:
- name: kube-sim
  cluster:
    server: %s
    certificate-authority-data: %s
contexts:
- name: kube-sim
  context:
    cluster: kube-sim
    user: %s
current-context: kube-sim
preferences: {}
users:
- name: %s
  user:
%s""" % (server, _b64file(ca_path), user_name, user_name,
         "".join("    %s\n" % ln for ln in user_lines))
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


EXEC_SCRIPT = """#!/bin/sh
# kube-sim exec credential plugin: prints the current token of this
# kube-sim as an ExecCredential (apiVersion taken from KUBERNETES_EXEC_INFO).
dir=$(cd "$(dirname "$0")" && pwd)
api=client.authentication.k8s.io/v1beta1
case "$KUBERNETES_EXEC_INFO" in
*client.authentication.k8s.io/v1\\"*) api=client.authentication.k8s.io/v1 ;;
esac
echo "$(date -u +%FT%TZ) $api" >> "$dir/exec-plugin.calls"
exp=
if [ -s "$dir/exec-expiry" ]; then
    ts=$(( $(stat -c %Y "$dir/exec-token") + $(cat "$dir/exec-expiry") ))
    exp=$(printf ',"expirationTimestamp":"%s"' "$(date -u -d @$ts +%FT%TZ)")
fi
printf '{"kind":"ExecCredential","apiVersion":"%s","spec":{},"status":{"token":"%s"%s}}\\n' \
    "$api" "$(cat "$dir/exec-token")" "$exp"
"""


class Auth:
    def __init__(self, cfg, store):
        self.cfg, self.store = cfg, store
        self.rbac = bool(cfg.rbac_files)
        d = cfg.state_dir
        self.tokens = {}
        self.user = User(cfg.user, cfg.groups)
        self.admin = User(ADMIN_USER, ["system:masters"])
        self.tok_path = os.path.join(d, "tokens")
        self.sa_tokens = {}     # token -> User of a ServiceAccount
        self.sa_lock = threading.Lock()

    def setup(self, port, ips=()):
        """Make certs, tokens and kubeconfigs. Called once by `up`; ips:
        the in-cluster addresses of the API server (certificate SANs)."""
        cfg, d = self.cfg, self.cfg.state_dir
        pki = os.path.join(d, "pki")
        make_certs(pki, cfg.user, cfg.groups, ips)
        server = "https://127.0.0.1:%d" % port
        ca = os.path.join(pki, "ca.crt")
        user_tok, admin_tok = rand_token(), rand_token()
        with open(self.tok_path, "w") as f:
            f.write("%s\n%s\n" % (user_tok, admin_tok))
        os.chmod(self.tok_path, 0o600)
        with open(os.path.join(d, "exec-token"), "w") as f:
            f.write(user_tok + "\n")
        os.chmod(os.path.join(d, "exec-token"), 0o600)
        if cfg.auth == "token":
            lines = ["token: " + user_tok]
        elif cfg.auth == "cert":
            lines = ["client-certificate-data: " + _b64file(
                os.path.join(pki, "user.crt")),
                "client-key-data: " + _b64file(os.path.join(pki,
                                                            "user.key"))]
        else:
            script = os.path.join(d, "exec-credential.sh")
            with open(script, "w") as f:
                f.write(EXEC_SCRIPT)
            os.chmod(script, 0o755)
            if cfg.exec_expiry:
                with open(os.path.join(d, "exec-expiry"), "w") as f:
                    f.write("%d\n" % cfg.exec_expiry)
                threading.Thread(target=self._expire_loop,
                                 daemon=True).start()
            lines = ["exec:", "  apiVersion: client.authentication.k8s.io/v1",
                     "  command: " + script, "  args: []",
                     "  interactiveMode: Never",
                     "  installHint: started by kube-sim up"]
        write_kubeconfig(os.path.join(d, "kubeconfig"), server, ca,
                         cfg.user, lines)
        write_kubeconfig(os.path.join(d, "admin.kubeconfig"), server, ca,
                         ADMIN_USER, [
                             "client-certificate-data: " + _b64file(
                                 os.path.join(pki, "admin.crt")),
                             "client-key-data: " + _b64file(
                                 os.path.join(pki, "admin.key"))])
        self.load_tokens()

    def load_tokens(self):
        with open(self.tok_path) as f:
            user_tok, admin_tok = f.read().split()[:2]
        self.tokens = {admin_tok: self.admin}
        if self.cfg.auth == "exec":
            with open(os.path.join(self.cfg.state_dir, "exec-token")) as f:
                self.tokens[f.read().strip()] = self.user
        else:
            self.tokens[user_tok] = self.user

    def rotate_exec_token(self):
        """Invalidate the exec plugin's token (clients must re-exec)."""
        p = os.path.join(self.cfg.state_dir, "exec-token")
        with open(p + ".tmp", "w") as f:
            f.write(rand_token() + "\n")
        os.rename(p + ".tmp", p)
        self.load_tokens()

    def _expire_loop(self):
        """--exec-expiry: the exec token stops working after N seconds and
        a new one is issued (like EKS tokens, 14 minutes there)."""
        import time
        while True:
            time.sleep(self.cfg.exec_expiry)
            self.rotate_exec_token()

    def sa_token(self, ns, name):
        """The bearer token of ServiceAccount ns/name (what the kubelet
        projects into a pod): one per account, valid while kube-sim runs;
        the user is system:serviceaccount:NS:NAME."""
        user = "system:serviceaccount:%s:%s" % (ns, name)
        with self.sa_lock:
            for t, u in self.sa_tokens.items():
                if u.name == user:
                    return t
            t = rand_token()
            self.sa_tokens[t] = User(user, [])
            return t

    def authenticate(self, h):
        a = h.headers.get("Authorization") or ""
        if a.startswith("Bearer "):
            t = a[7:].strip()
            return self.tokens.get(t) or self.sa_tokens.get(t)
        try:
            cert = h.connection.getpeercert()
        except (AttributeError, ValueError):
            cert = None
        if cert:
            cn, orgs = None, []
            for rdn in cert.get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        cn = v
                    elif k == "organizationName":
                        orgs.append(v)
            if cn:
                return User(cn, orgs)
        return None

    # ---------------------------------------------------------------- RBAC
    def _subject_matches(self, s, user):
        k, n = s.get("kind"), s.get("name")
        if k == "User":
            return n == user.name
        if k == "Group":
            return n in user.groups
        if k == "ServiceAccount":
            return user.name == "system:serviceaccount:%s:%s" % (
                s.get("namespace", ""), n)
        return False

    def _rule_matches(self, rule, verb, group, resource, name):
        if not any(v in ("*", verb) for v in rule.get("verbs") or []):
            return False
        if not any(g in ("*", group) for g in rule.get("apiGroups") or []):
            return False
        if not any(r in ("*", resource) or (
                "/" in resource and r == "*/" + resource.split("/")[1])
                for r in rule.get("resources") or []):
            return False
        rn = rule.get("resourceNames") or []
        if rn and (not name or name not in rn):
            return False
        return True

    def allowed(self, user, verb, group, resource, ns, name):
        """(allowed, reason) under RBAC for one request."""
        if not self.rbac or user.admin:
            return True, ""
        st = self.store
        with st.lock:
            crbs = [o for o in st.list_refs("clusterrolebindings")]
            rbs = [o for o in st.list_refs("rolebindings", ns)] if ns else []
            for b in crbs + rbs:
                if not any(self._subject_matches(s, user)
                           for s in b.get("subjects") or []):
                    continue
                ref = b.get("roleRef") or {}
                if ref.get("kind") == "ClusterRole":
                    role = st.objs.get(("clusterroles", "",
                                        ref.get("name")))
                else:
                    role = st.objs.get(("roles", b["metadata"].get(
                        "namespace", ""), ref.get("name")))
                for rule in (role or {}).get("rules") or []:
                    if self._rule_matches(rule, verb, group, resource, name):
                        return True, 'RBAC: allowed by %s "%s" of %s "%s" ' \
                            'to User "%s"' % (b["kind"] if "kind" in b else
                                              "binding",
                                              b["metadata"]["name"],
                                              ref.get("kind"),
                                              ref.get("name"), user.name)
        return False, ""

    def authorize(self, user, verb, res, ns, name, sub):
        resource = res.name + ("/" + sub if sub else "")
        ok, _ = self.allowed(user, verb, res.group, resource, ns, name)
        if ok:
            return
        what = '%s "%s"' % (res.name, name) if name else res.name
        where = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
        raise Rejected(403, "Forbidden", '%s is forbidden: User "%s" cannot '
                       '%s resource "%s" in API group "%s" %s' % (
                           what, user.name, verb, resource, res.group, where),
                       {"name": name or "", "group": res.group,
                        "kind": res.name})

    def review(self, user, spec):
        ra = spec.get("resourceAttributes")
        if not ra:
            return True, ""
        resource = (ra.get("resource") or "") + (
            "/" + ra["subresource"] if ra.get("subresource") else "")
        return self.allowed(user, ra.get("verb") or "", ra.get("group") or
                            "", resource, ra.get("namespace") or None,
                            ra.get("name") or None)
