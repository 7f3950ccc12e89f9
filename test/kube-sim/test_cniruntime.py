#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_cniruntime - kube-sim's CNI runtime side (kubesim/cniruntime.py), its
CNI faults (kubesim/faults.py) and the kubelet's sandbox texts
(kubesim/sandbox.py), without root: the fault syntax (names, keys, presets,
errors), the conflist each fault writes (host-local ranges per family, the
short range of cni-ipam-size, the fault plugin first), net.d missing or
broken = not initialized, the plugin chain run as a runtime runs it (env,
stdin with name, cniVersion, prevResult and runtimeConfig, DEL in reverse
with the cached result, a failed ADD followed by DEL, the error JSON's msg
in the error), the fault plugin itself (ADD fails with code 999, DEL
succeeds, a hang killed at the timeout), the result parsed into pod IPs, and
the event texts. The plugins here are stand-ins (scripts that log what they
got), so no namespace is touched. No timing is asserted."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import cniruntime, faults, net, sandbox  # noqa: E402

FAILS = []


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       "" if cond else ": " + str(detail)[:400]))
    if not cond:
        FAILS.append(name)


def parse_err(spec):
    try:
        faults.parse(spec)
        return ""
    except faults.FaultError as e:
        return str(e)


def test_syntax():
    r = faults.parse("cni-plugin-fail:node=node-2,msg=vpc-cni,for=3s")[0]
    check("vpc-cni preset", r["type"] == "aws-cni" and r["msg"] ==
          "add cmd: failed to assign an IP address to container" and
          r["for"] == 3.0, r)
    r = faults.parse("cni-plugin-fail:node=node-1,msg=cilium")[0]
    check("cilium preset", r["type"] == "cilium-cni" and r["msg"].startswith(
        "unable to connect to Cilium daemon: ") and
        r["msg"].endswith("connection refused"), r)
    r = faults.parse("cni-plugin-fail:node=node-1,msg=oops here")[0]
    check("a custom text keeps the default type",
          (r["type"], r["msg"]) == ("kube-sim-fail", "oops here"), r)
    r = faults.parse("cni-ipam-size:node=node-1,size=3;cni-add-hang:node=node-2;"
                     "cni-conf-missing:node=node-3;cni-conf-broken:node=node-1")
    check("every CNI kind parses", [x["kind"] for x in r] == [
        "cni-ipam-size", "cni-add-hang", "cni-conf-missing",
        "cni-conf-broken"] and r[0]["size"] == 3, r)
    for spec, want in (("cni-ipam-size:node=node-1", "size=K"),
                       ("cni-ipam-size:node=node-1,size=0", "size=K"),
                       ("cni-plugin-fail:node=node-1", "msg=TEXT"),
                       ("cni-add-hang", "node=node-N"),
                       ("cni-conf-missing:node=node-1,size=2", "takes only"),
                       ("cni-plugin-fail:node=node-1,msg=x,type=A B",
                        "not a plugin name"),
                       ("cni-add-hang:node=node-1,for=soon", "bad duration")):
        check("bad %s says %s" % (spec, want), want in parse_err(spec),
              parse_err(spec))


def test_conflist(rt):
    c = rt.conflist(2, [])
    br = c["plugins"][0]
    check("bridge + portmap, the node's bridge", [p["type"] for p in
                                                 c["plugins"]] ==
          ["bridge", "portmap"] and br["bridge"] == "kst-br" and
          br["isDefaultGateway"] and br["ipam"]["type"] == "host-local", c)
    rg = br["ipam"]["ranges"]
    check("one host-local range per family, the node's CIDRs", rg == [
        [{"subnet": "198.19.18.0/24", "rangeStart": "198.19.18.2",
          "rangeEnd": "198.19.18.254", "gateway": "198.19.18.1"}],
        [{"subnet": "2001:2:0:202::/64", "rangeStart": "2001:2:0:202::2",
          "rangeEnd": "2001:2:0:202::fe", "gateway": "2001:2:0:202::1"}]],
          rg)
    c = rt.conflist(2, faults.parse("cni-ipam-size:node=node-2,size=2;"
                                    "cni-plugin-fail:node=node-2,msg=cilium"))
    rg = c["plugins"][1]["ipam"]["ranges"]
    check("cni-ipam-size: K addresses per range",
          rg[0][0]["rangeEnd"] == "198.19.18.3" and
          rg[1][0]["rangeEnd"] == "2001:2:0:202::3", rg)
    check("cni-plugin-fail: the fault plugin first, under its type",
          c["plugins"][0]["type"] == "cilium-cni" and
          "Cilium" in c["plugins"][0]["kubeSimFail"], c["plugins"][0])


def test_netd(rt):
    rt.write_conf(1, [])
    check("a conflist: ready", rt.ready(1) == (True, ""), rt.ready(1))
    rt.write_conf(1, faults.parse("cni-conf-broken:node=node-1"))
    ok, why = rt.ready(1)
    check("broken: not initialized", not ok and why.endswith(
        "cni plugin not initialized"), why)
    rt.write_conf(1, faults.parse("cni-conf-missing:node=node-1"))
    ok, why = rt.ready(1)
    check("missing: net.d empty, not initialized", not ok and
          os.listdir(rt.confdir(1)) == [] and "no network config" in why, why)
    rt.write_conf(1, [])
    check("back", rt.ready(1)[0])


FAKE = """#!/bin/sh
conf=$(cat)
printf '%s %s %s %s %s\\n' "$CNI_COMMAND" "$CNI_CONTAINERID" "$CNI_NETNS" \
"$CNI_IFNAME" "$conf" >>LOG
case "$CNI_COMMAND" in ADD) ;; *) exit 0;; esac
case "$(basename "$0")" in
fake-main) printf '%s' '{"cniVersion":"1.0.0","interfaces":[{"name":"br"},{"name":"eth0","mac":"02:00:00:00:00:01","sandbox":"/run/netns/x"}],"ips":[{"interface":1,"address":"2001:2:0:202::5/64"},{"interface":1,"address":"198.19.18.5/24"},{"interface":0,"address":"198.19.18.1/24"}]}';;
loopback) printf '%s' '{"cniVersion":"1.0.0"}';;
*) printf '%s' "$conf" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["prevResult"]))';;
esac
"""


def test_run(rt, d):
    log = os.path.join(d, "log")
    for name in ("fake-main", "fake-chain", "loopback"):
        with open(os.path.join(rt.bindir, name), "w") as f:
            f.write(FAKE.replace("LOG", log))
        os.chmod(os.path.join(rt.bindir, name), 0o755)
    rt.cni_path = [rt.bindir]
    cniruntime.LOOPBACK["plugins"][0]["type"] = "loopback"
    lst = {"cniVersion": "1.0.0", "name": "kube-sim", "plugins": [
        {"type": "fake-main"},
        {"type": "fake-chain", "capabilities": {"portMappings": True}}]}
    rt.load = lambda i: lst
    rt._node_ns = lambda i: None
    exec_plugin = rt.exec_plugin
    rt.exec_plugin = lambda i, *a: exec_plugin(0, *a)  # no nsenter
    pod = {"metadata": {"namespace": "ns", "name": "p", "uid": "u1"}}
    res = rt.add(2, "c" * 64, "/run/netns/x", pod)
    with open(log) as f:
        lines = [ln.split(" ", 4) for ln in f.read().splitlines()]
    check("ADD: loopback on lo, then the list in order",
          [(x[0], x[3], json.loads(x[4])["type"]) for x in lines] == [
              ("ADD", "lo", "loopback"), ("ADD", "eth0", "fake-main"),
              ("ADD", "eth0", "fake-chain")], lines)
    first, second = json.loads(lines[1][4]), json.loads(lines[2][4])
    check("stdin: name, cniVersion; no prevResult for the first",
          first["name"] == "kube-sim" and first["cniVersion"] == "1.0.0" and
          "prevResult" not in first and "runtimeConfig" not in first, first)
    check("stdin: prevResult chained, runtimeConfig by capability",
          second["prevResult"]["ips"][0]["address"] == "2001:2:0:202::5/64"
          and second["runtimeConfig"] == {"portMappings": []}, second)
    check("CNI_CONTAINERID and CNI_NETNS", lines[1][1] == "c" * 64 and
          lines[1][2] == "/run/netns/x", lines[1])
    check("result parsed: the pod's addresses, primary family first",
          cniruntime.result_ips(res, "/run/netns/x") ==
          ["198.19.18.5", "2001:2:0:202::5"], res)
    check("the pod's MAC", cniruntime.pod_mac(res, "/run/netns/x") ==
          "02:00:00:00:00:01")
    open(log, "w").close()
    rt.delete(2, "c" * 64, "")
    with open(log) as f:
        lines = [ln.split(" ", 4) for ln in f.read().splitlines()]
    check("DEL: the list in reverse with the cached result as prevResult",
          [(x[0], json.loads(x[4])["type"]) for x in lines] ==
          [("DEL", "fake-chain"), ("DEL", "fake-main")] and
          json.loads(lines[0][4])["prevResult"] == res, lines)
    check("DEL drops the cache", rt.cached() == [], rt.cached())
    # a failing plugin: its error JSON; DEL follows
    os.symlink(cniruntime.FAULT_PLUGIN, os.path.join(rt.bindir, "aws-cni"))
    lst["plugins"].insert(0, {"type": "aws-cni", "kubeSimFail": "no IPs"})
    open(log, "w").close()
    try:
        rt.add(2, "d" * 64, "/run/netns/x", pod)
        err = None
    except cniruntime.CniError as e:
        err = e
    check("a failed ADD: the plugin's type and msg",
          err is not None and str(err) == 'plugin type="aws-cni" failed '
          '(add): no IPs' and err.code == 999, err)
    with open(log) as f:
        cmds = [ln.split(" ", 1)[0] for ln in f.read().splitlines()]
    check("then a DEL, as containerd tears a failed sandbox down",
          "DEL" in cmds and rt.cached() == [], cmds)
    msg = sandbox.sandbox_error("d" * 64, err)
    check("the kubelet's event text", msg == 'Failed to create pod sandbox: '
          'rpc error: code = Unknown desc = failed to setup network for '
          'sandbox "%s": plugin type="aws-cni" failed (add): no IPs' %
          ("d" * 64), msg)
    # a hang: killed at the timeout
    os.symlink(cniruntime.FAULT_PLUGIN, os.path.join(rt.bindir,
                                                     "kube-sim-hang2"))
    lst["plugins"][0] = {"type": "kube-sim-hang2", "kubeSimHang": True}
    rt.timeout = 1
    try:
        rt.add(2, "e" * 64, "/run/netns/x", pod)
        err = None
    except cniruntime.CniError as e:
        err = e
    check("a hanging plugin times out", err is not None and err.timeout, err)
    check("DeadlineExceeded", sandbox.sandbox_error("e" * 64, err).endswith(
        "code = DeadlineExceeded desc = context deadline exceeded"))
    p = subprocess.run([cniruntime.FAULT_PLUGIN], input='{"cniVersion":'
                       '"1.0.0"}', env={"CNI_COMMAND": "VERSION"},
                       capture_output=True, text=True)
    check("the fault plugin answers VERSION", p.returncode == 0 and
          "1.0.0" in json.loads(p.stdout)["supportedVersions"], p.stdout)


def main():
    net.configure("dual")
    d = tempfile.mkdtemp(prefix="kubesim-cnirt-")
    rt = cniruntime.CniRuntime(d, "kst-", 3, timeout=10)
    rt.setup()
    test_syntax()
    test_conflist(rt)
    test_netd(rt)
    test_run(rt, d)
    subprocess.run(["rm", "-rf", d])
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
