#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kube_creds_diff.py - the credentials differential test: for each kubeconfig set-up of the
table below, a real kubectl and kperf's client (the driver mode of test_kube_creds) each make one
request to the same recording API double (test/tools/kube_api_double.py). They must present the
same credentials to the same server (listener, path, Host, Authorization, Impersonate-*
headers, client certificate, SNI, proxy tunnels, exec plugin runs and their
KUBERNETES_EXEC_INFO), or both fail; kperf must
fail within FAIL_FAST_S when kubectl fails, and never print a secret.
Usage: kube_creds_diff.py KUBECTL DRIVER [CASE...]"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from string import Template

KUBECTL, DRIVER = sys.argv[1], sys.argv[2]
ONLY = sys.argv[3:]
FAIL_FAST_S = 5.0
DISCOVERY = {"/api", "/apis", "/api/v1"}

PLUGIN = r'''#!/usr/bin/env python3
import json, os, sys
info = json.loads(os.environ.get("KUBERNETES_EXEC_INFO") or "{}")
with open(sys.argv[1], "a") as f:
    f.write(json.dumps({"plugin": info.get("spec", {}), "args": sys.argv[2:]}, sort_keys=True) + "\n")
print(json.dumps({"apiVersion": info.get("apiVersion", "client.authentication.k8s.io/v1beta1"),
                  "kind": "ExecCredential", "status": {"token": "exec-token"}}))
'''

CTX = """apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: k, user: u}
"""


def cluster(extra="certificate-authority: $CA", server="$HTTPS"):
    return "clusters:\n- name: k\n  cluster:\n    server: %s\n    %s\n" % (server, extra)


def user(body):
    return "users:\n- name: u\n  user:\n" + "".join("    %s\n" % l for l in body.split("\n"))


EXEC_B1 = "exec:\n  apiVersion: client.authentication.k8s.io/v1beta1\n  command: $PLUGIN\n  args: [$LOG]"
EXEC_V1 = ("exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: $PLUGIN\n"
           "  args: [$LOG]\n  interactiveMode: Never")

OIDC = ("auth-provider:\n  name: oidc\n  config:\n    client-id: kperf\n"
        "    idp-issuer-url: https://issuer.double.test\n    id-token: %s")
CERT = "client-certificate: $D/alice.crt\nclient-key: $D/alice.key"

# name -> (kubeconfig text, extra environment, request, extra files)
CASES = {
    "token": (CTX + cluster() + user("token: tok-static"), {}, "get", {}),
    "token-ca-data": (CTX + cluster("certificate-authority-data: $CA_B64") + user("token: t2"), {},
                      "get", {}),
    "token-file": (CTX + cluster() + user("tokenFile: $D/tok"), {}, "get", {"tok": "tok-file\n"}),
    # a user with no credential at all makes kubectl prompt for a username (kperf is never
    # interactive), so these users also hold a client certificate: the point is the header
    "token-file-empty": (CTX + cluster() + user("tokenFile: $D/empty\n" + CERT), {}, "get",
                         {"empty": ""}),
    "token-null": (CTX + cluster() + user("token: null\n" + CERT), {}, "get", {}),
    "token-tilde": (CTX + cluster() + user("token: ~\n" + CERT), {}, "get", {}),
    "token-number": (CTX + cluster() + user("token: 12345"), {}, "get", {}),
    "cert-files": (CTX + cluster() + user("client-certificate: $D/alice.crt\nclient-key: $D/alice.key"),
                   {}, "get", {}),
    "cert-data": (CTX + cluster() + user("client-certificate-data: $ALICE_CRT_B64\n"
                                         "client-key-data: $ALICE_KEY_B64"), {}, "get", {}),
    "cert-relative": (CTX + cluster("certificate-authority: ca.crt") +
                      user("client-certificate: alice.crt\nclient-key: ./alice.key"), {}, "get", {}),
    "exec-v1beta1": (CTX + cluster() + user(EXEC_B1), {}, "get", {}),
    "exec-v1": (CTX + cluster() + user(EXEC_V1), {}, "get", {}),
    "exec-cluster-info-ca-file": (
        CTX + "clusters:\n- name: k\n  cluster:\n    server: $HTTPS\n    certificate-authority: $CA\n"
        "    extensions:\n    - name: client.authentication.k8s.io/exec\n      extension:\n"
        "        audience: x\n        port: 8443\n        enabled: true\n        ratio: 1.5\n"
        "        none: null\n        quoted: \"42\"\n"
        + user(EXEC_B1 + "\n  provideClusterInfo: true"), {}, "get", {}),
    "exec-cluster-info-ca-data": (CTX + cluster("certificate-authority-data: $CA_B64") +
                                  user(EXEC_B1 + "\n  provideClusterInfo: true"), {}, "get", {}),
    "exec-and-token": (CTX + cluster() + user("token: tok-static\n" + EXEC_B1), {}, "get", {}),
    "exec-and-token-file": (CTX + cluster() + user("tokenFile: $D/tok\n" + EXEC_B1), {}, "get",
                            {"tok": "tok-file\n"}),
    "exec-and-cert": (CTX + cluster() + user("client-certificate: $D/alice.crt\n"
                                             "client-key: $D/alice.key\n" + EXEC_B1), {}, "get", {}),
    "http-token": (CTX + cluster("{}", "$HTTP").replace("    {}\n", "") + user("token: tok-static"),
                   {}, "get", {}),
    "http-token-file": (CTX + cluster("{}", "$HTTP").replace("    {}\n", "") +
                        user("tokenFile: $D/tok"), {}, "get", {"tok": "tok-file\n"}),
    "http-exec": (CTX + cluster("{}", "$HTTP").replace("    {}\n", "") + user(EXEC_B1), {}, "get",
                  {}),
    "insecure-bool": (CTX + cluster("insecure-skip-tls-verify: true") + user("token: t"), {}, "get",
                      {}),
    "insecure-string": (CTX + cluster("insecure-skip-tls-verify: \"true\"") + user("token: t"), {},
                        "get", {}),
    "namespace-set": (CTX.replace("user: u}", "user: u, namespace: team-a}") + cluster() +
                      user("token: t"), {}, "pods", {}),
    "namespace-tilde": (CTX.replace("user: u}", "user: u, namespace: ~}") + cluster() +
                        user("token: t"), {}, "pods", {}),
    "namespace-default": (CTX + cluster() + user("token: t"), {}, "pods", {}),
    "dup-cluster": (CTX + cluster() + "- name: k\n  cluster:\n    server: $HTTPS\n"
                    "    insecure-skip-tls-verify: true\n" + user("token: t"), {}, "get", {}),
    "dup-user": (CTX + cluster() + user("token: t1") + "- name: u\n  user:\n    token: t2\n", {},
                 "get", {}),
    "dup-context": (CTX + "- name: c\n  context: {cluster: k}\n" + cluster() + user("token: t"), {},
                    "get", {}),
    "context-second": (CTX.replace("current-context: c", "current-context: c2") +
                       "- name: c2\n  context: {cluster: k, user: u2}\n" + cluster() +
                       user("token: t1") + "- name: u2\n  user:\n    token: t2\n", {}, "get", {}),
    "kubeconfig-merge": (None, {"KUBECONFIG": "$D/a.yaml:$D/b.yaml"}, "get", {
        "a.yaml": "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: from-a\n",
        "b.yaml": CTX + cluster() + user("token: from-b")}),
    "https-proxy-loopback": (CTX + cluster() + user("token: t"), {"HTTPS_PROXY": "$PROXY"}, "get",
                             {}),
    "proxy-url": (CTX + cluster("certificate-authority: $CA\n    proxy-url: $PROXY") +
                  user("token: t"), {}, "get", {}),
    "tls-server-name": (CTX + cluster("certificate-authority: $CA\n    tls-server-name: localhost",
                                      "$HTTPS_OTHER") + user("token: t"), {}, "get", {}),
    "tls-server-name-same-ip": (CTX + cluster("certificate-authority: $CA\n"
                                              "    tls-server-name: api.double.test") +
                                user("token: t"), {}, "get", {}),
    "wrong-ca": (CTX + cluster("certificate-authority: $D/wrong-ca.crt") + user("token: t"), {},
                 "get", {}),
    "hostname-mismatch": (CTX + cluster("certificate-authority: $CA", "$HTTPS_OTHER") +
                          user("token: t"), {}, "get", {}),
    "missing-cert-file": (CTX + cluster() + user("client-certificate: $D/nope.crt\n"
                                                 "client-key: $D/alice.key"), {}, "get", {}),
    "missing-ca-file": (CTX + cluster("certificate-authority: $D/nope-ca.crt") + user("token: t"), {},
                        "get", {}),
    "bad-pem-ca": (CTX + cluster("certificate-authority: $D/bad.pem") + user("token: t"), {}, "get",
                   {"bad.pem": "-----BEGIN CERTIFICATE-----\nnot base64 at all\n"
                                "-----END CERTIFICATE-----\n"}),
    "not-found-404": (CTX + cluster() + user("token: t"), {}, "get /nope", {}),
    "password-in-url": (CTX + cluster("certificate-authority: $D/wrong-ca.crt",
                                      "https://me:s3cretpw@127.0.0.1:$PORT") + user("token: t"),
                        {}, "get", {}),
    # issue 31 part 3: the differences found by later probes, each now matched or documented
    "http-impersonate": (CTX + cluster("{}", "$HTTP").replace("    {}\n", "") +
                         user("token: tok-static\nas: jane\nas-groups: [dev, ops]"), {}, "get", {}),
    "impersonate-all": (CTX + cluster() + user("token: t\nas: jane\nas-groups: [dev, ops]\n"
                                               "as-uid: uid-7\nas-user-extra:\n"
                                               "  scopes: [view, edit]\n  Reason/x%y: [a b]"),
                        {}, "get", {}),
    "impersonate-uid-only": (CTX + cluster() + user("token: t\nas-uid: uid-7"), {}, "get", {}),
    "noproxy-not-tls-server-name": (CTX + cluster("certificate-authority: $CA\n"
                                                  "    tls-server-name: localhost", "$HTTPS_NAMED")
                                    + user("token: t"),
                                    {"HTTPS_PROXY": "$PROXY", "NO_PROXY": "localhost"}, "get", {}),
    "noproxy-host-port": (CTX + cluster(server="$HTTPS_NAMED") + user("token: t"),
                          {"HTTPS_PROXY": "$PROXY", "NO_PROXY": "x.test, API.double.test:$PORT"},
                          "get", {}),
    "noproxy-other-port": (CTX + cluster(server="$HTTPS_NAMED") + user("token: t"),
                           {"HTTPS_PROXY": "$PROXY", "no_proxy": "api.double.test:1"}, "get", {}),
    "noproxy-suffix": (CTX + cluster(server="$HTTPS_NAMED") + user("token: t"),
                       {"HTTPS_PROXY": "$PROXY", "NO_PROXY": "*.double.test"}, "get", {}),
    "noproxy-not-suffix": (CTX + cluster(server="$HTTPS_NAMED") + user("token: t"),
                           {"HTTPS_PROXY": "$PROXY", "NO_PROXY": "ble.test,127.0.0.0/8"}, "get",
                           {}),
    "token-hex": (CTX + cluster() + user("token: 0x1F"), {}, "get", {}),
    "token-octal-underscore": (CTX + cluster() + user("token: 0o1_7"), {}, "get", {}),
    "token-date": (CTX + cluster() + user("token: 2024-01-02"), {}, "get", {}),
    "userinfo-and-token": (CTX + cluster(server="https://me:s3cretpw@127.0.0.1:$PORT") +
                           user("token: tok-static"), {}, "get", {}),
    "token-file-whitespace": (CTX + cluster() + user("tokenFile: $D/tok"), {}, "get",
                              {"tok": " \t tok-file \t\r\n\n"}),
    "token-file-missing-static": (CTX + cluster() + user("token: tok-static\ntokenFile: $D/nope"),
                                  {}, "get", {}),
    "token-file-empty-static": (CTX + cluster() + user("token: tok-static\ntokenFile: $D/empty"),
                                {}, "get", {"empty": "\n"}),
    "token-file-missing": (CTX + cluster() + user("tokenFile: $D/nope"), {}, "get", {}),
    "context-without-user": (CTX.replace("{cluster: k, user: u}", "{cluster: k}") + cluster() +
                             user("token: t"), {}, "get", {}),
    "lone-client-key": (CTX + cluster() + user("token: t\nclient-key: $D/alice.key"), {}, "get",
                        {}),
    "upper-case-scheme": (CTX + cluster(server="HTTPS://127.0.0.1:$PORT") + user("token: t"), {},
                          "get", {}),
    "oidc-valid": (CTX + cluster() + user(OIDC % "$JWT_NEW"), {}, "get", {}),
    "oidc-expired": (CTX + cluster() + user(OIDC % "$JWT_OLD"), {}, "get", {}),
    "oidc-not-jwt": (CTX + cluster() + user(OIDC % "opaque-token"), {}, "get", {}),
    "oidc-no-issuer": (CTX + cluster() + user((OIDC % "$JWT_NEW").replace("idp-issuer-url", "x")),
                       {}, "get", {}),
    "oidc-no-client-id": (CTX + cluster() + user((OIDC % "$JWT_NEW").replace("client-id", "x")),
                          {}, "get", {}),
    "oidc-expired-refresh": (CTX + cluster() +
                             user(OIDC % "$JWT_OLD" + "\n    refresh-token: r1"), {}, "get", {}),
    "user-without-credentials": (CTX + cluster() + user("as: jane"), {}, "get", {}),
}
SECRETS = ["s3cretpw", "tok-static", "tok-file", "exec-token", "from-a", "from-b", "opaque-token"]


def jwt(exp):
    def part(o):
        return base64.urlsafe_b64encode(json.dumps(o).encode()).decode().rstrip("=")
    return "%s.%s.c2ln" % (part({"alg": "RS256"}), part({"iss": "x", "exp": int(exp)}))


def sh(*cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def pki(d):
    def ossl(*a):
        sh("openssl", *a, cwd=d)
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
         "-days", "2", "-subj", "/CN=double-ca")
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "wrong-ca.key", "-out",
         "wrong-ca.crt", "-days", "2", "-subj", "/CN=wrong-ca")
    with open(os.path.join(d, "san.cnf"), "w") as f:
        f.write("subjectAltName=DNS:localhost,DNS:api.double.test,IP:127.0.0.1\n")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/CN=double")
    ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.cnf")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "alice.key", "-out", "alice.csr",
         "-subj", "/O=system:masters/CN=alice")
    ossl("x509", "-req", "-in", "alice.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "alice.crt", "-days", "2")


def free_port():
    for _ in range(50):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        ok = True
        for q in (p, p + 1, p + 2):
            t = socket.socket()
            try:
                t.bind(("127.0.0.1", q))
            except OSError:
                ok = False
            t.close()
        if ok:
            return p
    raise SystemExit("no free ports")


def read_log(path, mark):
    with open(path) as f:
        f.seek(mark)
        lines = [json.loads(l) for l in f if l.strip()]
    out = []
    for e in lines:
        if e.get("path") in DISCOVERY:
            continue
        if "plugin" in e:
            e = {"plugin": e["plugin"]}
        s = json.dumps(e, sort_keys=True)
        if s not in out:
            out.append(s)
    return sorted(out)


def run(cmd, env, log):
    mark = os.path.getsize(log)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
        rc, out, errout = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, errout = 124, "", "timed out after 30 s"
    dt = time.monotonic() - t0
    # no wait for the double: it writes a request's line before it answers, a tunnel's before it
    # connects, so what a client saw is on file when the client exits
    return rc, out + errout, dt, read_log(log, mark)


def main():
    d = tempfile.mkdtemp(prefix="kube-creds-")
    dbl = None
    try:
        pki(d)
        port = free_port()
        log = os.path.join(d, "requests.log")
        open(log, "w").close()
        dbl = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__),
                                                             "kube_api_double.py"), d, str(port),
                                log], stdout=subprocess.PIPE, text=True)
        if dbl.stdout.readline().strip() != "ready":
            raise SystemExit("the API double did not start")
        plugin = os.path.join(d, "plugin")
        with open(plugin, "w") as f:
            f.write(PLUGIN)
        os.chmod(plugin, 0o755)

        def b64(name):
            with open(os.path.join(d, name), "rb") as f:
                return base64.b64encode(f.read()).decode()
        subst = {"D": d, "CA": os.path.join(d, "ca.crt"), "CA_B64": b64("ca.crt"),
                 "ALICE_CRT_B64": b64("alice.crt"), "ALICE_KEY_B64": b64("alice.key"),
                 "HTTPS": "https://127.0.0.1:%d" % port,
                 "HTTPS_OTHER": "https://127.0.0.2:%d" % port,
                 "HTTPS_NAMED": "https://api.double.test:%d" % port,
                 "JWT_NEW": jwt(time.time() + 3600), "JWT_OLD": jwt(time.time() - 3600),
                 "HTTP": "http://127.0.0.1:%d" % (port + 1),
                 "PROXY": "http://127.0.0.1:%d" % (port + 2), "PORT": str(port),
                 "PLUGIN": plugin, "LOG": log}
        base_env = {k: v for k, v in os.environ.items()
                    if k not in ("KUBECONFIG", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
                                 "https_proxy", "http_proxy", "no_proxy", "ALL_PROXY",
                                 "all_proxy")}
        home = os.path.join(d, "home")
        os.makedirs(home)
        base_env["HOME"] = home
        failed = []
        names = ONLY or list(CASES)
        for name in names:
            text, env_extra, req, files = CASES[name]
            cd = os.path.join(d, name)
            os.makedirs(cd)
            for fn in ("ca.crt", "alice.crt", "alice.key"):
                shutil.copy(os.path.join(d, fn), cd)
            sub = dict(subst, D=cd)
            for fn, body in files.items():
                with open(os.path.join(cd, fn), "w") as f:
                    f.write(Template(body).substitute(sub))
            with open(os.path.join(cd, "wrong-ca.crt"), "w") as f, \
                    open(os.path.join(d, "wrong-ca.crt")) as g:
                f.write(g.read())
            env = dict(base_env)
            for k, v in env_extra.items():
                env[k] = Template(v).substitute(sub)
            kc_args, drv_kc = [], "-"
            if text is not None:
                kc = os.path.join(cd, "kubeconfig")
                with open(kc, "w") as f:
                    f.write(Template(text).substitute(sub))
                kc_args, drv_kc = ["--kubeconfig", kc], kc
            words = req.split()
            if words[0] == "pods":
                kcmd = [KUBECTL] + kc_args + ["get", "pods", "--request-timeout=10s"]
                dcmd = [DRIVER, "pods", drv_kc]
            else:
                path = words[1] if len(words) > 1 else "/version"
                kcmd = [KUBECTL] + kc_args + ["get", "--raw", path, "--request-timeout=10s"]
                dcmd = [DRIVER, "get", drv_kc, path]
            krc, kout, kdt, krec = run(kcmd, env, log)
            # one kperf run, with -v: its output is the plain run's plus the debug log, so the
            # secret scan covers both (a second, plain run cost ~0.2 s a case)
            prc, pout, pdt, prec = run(dcmd + ["-v"], env, log)
            problems = []
            if (krc == 0) != (prc == 0):
                problems.append("kubectl %s, kperf %s" % ("ok" if krc == 0 else "failed",
                                                          "ok" if prc == 0 else "failed"))
            if krec != prec:
                problems.append("different requests:\n    kubectl: %s\n    kperf:   %s" %
                                ("\n             ".join(krec) or "-",
                                 "\n             ".join(prec) or "-"))
            if krc != 0 and prc != 0 and pdt > FAIL_FAST_S:
                problems.append("kperf took %.1f s to fail (kubectl %.2f s)" % (pdt, kdt))
            leaked = [s for s in SECRETS if s in pout]
            if leaked:
                problems.append("kperf printed a secret (%s)" % ", ".join(leaked))
            state = "ok" if krc == 0 else "both fail"
            if problems:
                failed.append(name)
                print("FAIL %s\n  kubectl (rc %d, %.2f s): %s\n  kperf (rc %d, %.2f s): %s\n  %s"
                      % (name, krc, kdt, kout.strip()[-300:], prc, pdt,
                         pout.strip().split("\n")[-1][-300:],
                         "\n  ".join(problems)))
            else:
                print("PASS %s (%s; %d request(s); kubectl %.2f s, kperf %.2f s)"
                      % (name, state, len(krec), kdt, pdt))
        print("%d/%d set-ups agree" % (len(names) - len(failed), len(names)))
        if failed:
            print("differ: " + " ".join(failed))
            return 1
        return 0
    finally:
        if dbl:
            dbl.kill()
            dbl.wait()
        shutil.rmtree(d, ignore_errors=True)


sys.exit(main())
