# SPDX-License-Identifier: Apache-2.0
"""main - the kube-sim command: up (daemonize, wait until ready), serve (the
daemon itself), down (remove everything recorded in the state dir, also
after SIGKILL), fault (change faults at runtime), cron (the CronJob clock),
node (add or remove nodes at runtime), status.
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import ssl
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
STATE_FILES = ["pki", "kubeconfig", "admin.kubeconfig", "tokens",
               "exec-token", "exec-token.tmp", "exec-credential.sh",
               "exec-expiry",
               "exec-plugin.calls", "pods", "pids", "netns.list",
               "config.json", "ready", "requests.log", "kube-sim.log",
               "cni-rollout.jsonl", "volumes", "cgroups.list", "cni", "images",
               "registry", "dns"]


class Cfg:
    def __init__(self, d):
        self.__dict__.update(d)


def prefix_for(state_dir):
    h = hashlib.sha1(os.path.realpath(state_dir).encode()).hexdigest()
    return "ks%s-" % h[:4]


def read_pids(d):
    out = []
    try:
        with open(os.path.join(d, "pids")) as f:
            for ln in f:
                p = ln.split(None, 2)
                if len(p) >= 2 and p[0].isdigit():
                    out.append((int(p[0]), p[1], p[2].strip() if len(p) > 2
                                else ""))
    except OSError:
        pass
    return out


def alive(pid, start):
    from .kubelet import proc_starttime
    st = proc_starttime(pid)
    return st is not None and (start == "0" or st == start)


def daemon_pid(d):
    for pid, st, role in read_pids(d):
        if role == "kube-sim" and alive(pid, st):
            return pid
    return None


# ---------------------------------------------------------------- up
def cmd_up(a):
    if os.geteuid() != 0:
        print("kube-sim: up needs root (network namespaces)",
              file=sys.stderr)
        return 1
    d = os.path.abspath(a.state_dir)
    if daemon_pid(d):
        print("kube-sim: already running in %s (kube-sim down first)" % d,
              file=sys.stderr)
        return 1
    if not 1 <= a.nodes <= 500:
        print("kube-sim: --nodes must be 1..500", file=sys.stderr)
        return 2
    created = not os.path.exists(d)
    if not created and any(os.path.exists(os.path.join(d, f))
                           for f in ("pids", "netns.list")):
        # leftovers of a kube-sim that died without `down`: remove them
        # first, or their names would be forgotten
        try:
            with open(os.path.join(d, "config.json")) as f:
                created = json.load(f).get("created_dir", False)
        except (OSError, ValueError):
            pass
        down(d, keep_logs=True)
    os.makedirs(d, exist_ok=True)
    if os.path.exists(os.path.join(d, "ready")):
        os.unlink(os.path.join(d, "ready"))
    if a.cron_minute_seconds <= 0:
        print("kube-sim: --cron-minute-seconds must be > 0", file=sys.stderr)
        return 2
    if a.cron_start:
        from .util import parse_iso
        if parse_iso(a.cron_start) is None:
            print("kube-sim: --cron-start: an RFC 3339 time expected "
                  "(2026-12-01T02:00:00Z), got %r" % a.cron_start,
                  file=sys.stderr)
            return 2
    if a.agent_image and not (
            os.path.isdir(os.path.join(a.agent_image, "rootfs")) and
            os.path.isfile(os.path.join(a.agent_image, "config.json"))):
        print("kube-sim: --agent-image %s: needs rootfs/ and config.json" %
              a.agent_image, file=sys.stderr)
        return 2
    from .images import cfg_from_args
    icfg, ierr = cfg_from_args(a)
    if ierr:
        print("kube-sim: " + ierr, file=sys.stderr)
        return 2
    if a.agent_image and not icfg["seed_images"]:
        print("kube-sim: --agent-image needs --seed-images (the registry it "
              "is pushed to)", file=sys.stderr)
        return 2
    taints = {}
    for t in a.taint or []:
        # node-2=key=value:NoSchedule or node-2=key:NoExecute
        node, _, rest = t.partition("=")
        kv, _, eff = rest.rpartition(":")
        k, _, v = kv.partition("=")
        tt = {"key": k, "effect": eff or "NoSchedule"}
        if v:
            tt["value"] = v
        taints.setdefault(node, []).append(tt)
    labels = {}
    for lab in a.label or []:
        node, _, kv = lab.partition("=")
        k, eq, v = kv.partition("=")
        if not eq:
            print("kube-sim: --label NODE=KEY=VALUE", file=sys.stderr)
            return 2
        labels.setdefault(node, {})[k] = v
    node_arch = {}
    for na in a.node_arch or []:
        node, _, arch = na.partition("=")
        if arch not in ("amd64", "arm64") or node not in [
                "node-%d" % i for i in range(1, a.nodes + 1)]:
            print("kube-sim: --node-arch NODE=amd64|arm64 (NODE one of node-1"
                  "..node-%d), got %r" % (a.nodes, na),
                  file=sys.stderr)
            return 2
        node_arch[node] = arch
    from .seed import CNIS
    if a.cni and a.cni.split(":")[0] not in CNIS:
        print("kube-sim: --cni: one of %s" % ", ".join(sorted(CNIS)),
              file=sys.stderr)
        return 2
    try:
        from .faults import _dur
        cni_restart = _dur(a.cni_restart_time)
        cni_outage = _dur(a.cni_restart_outage)
    except ValueError as e:
        print("kube-sim: --cni-restart-time/--cni-restart-outage: %s" % e,
              file=sys.stderr)
        return 2
    if cni_outage > cni_restart:
        cni_restart = cni_outage
    if a.dns and not shutil.which("dnsmasq"):
        print("kube-sim: --dns needs dnsmasq (apt-get install dnsmasq-base)",
              file=sys.stderr)
        return 2
    if a.faults:
        from . import faults
        try:
            faults.parse(a.faults)
        except faults.FaultError as e:
            print("kube-sim: --faults: %s" % e, file=sys.stderr)
            return 2
    cfg = {"state_dir": d, "nodes": a.nodes, "auth": a.auth,
           "user": a.user, "groups": a.group or [],
           "rbac_files": [os.path.abspath(x) for x in a.rbac or []],
           "cron_minute_seconds": a.cron_minute_seconds,
           "cron_start": a.cron_start or "",
           "agent_image": os.path.abspath(a.agent_image) if a.agent_image
           else "",
           "host_images": (a.host_images or "kube-sim/host").split(","),
           "taints": taints, "faults": a.faults or "",
           "port": a.port, "prefix": prefix_for(d), "cni": a.cni,
           "zones": max(1, min(a.zones, 26)), "labels": labels,
           "node_arch": node_arch,
           "exec_expiry": a.exec_expiry, "ip_family": a.ip_family,
           "watch_timeout": 1800, "bookmark_seconds": 3,
           "job_backoff": a.job_backoff, "crash_backoff": 10,
           "gc_lag": max(0.0, a.gc_lag), "max_grace": max(0.0, a.max_grace),
           "ready_lag": max(0.0, a.ready_lag), "clock_skew": a.clock_skew,
           "cni_restart_time": cni_restart, "cni_restart_outage": cni_outage,
           "cni_conntrack_flush": a.cni_conntrack_flush,
           "cni_timeout": a.cni_timeout, "sandbox_backoff": a.sandbox_backoff,
           "created_dir": created, "storage_class": a.storage_class,
           "dns": a.dns,
           "cel_dir": os.path.abspath(a.cel_dir) if a.cel_dir else ""}
    cfg.update(icfg)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    t0 = time.time()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()   # no threads yet: the child becomes the daemon
    if pid == 0:
        os.setsid()
        fd = os.open(os.path.join(d, "kube-sim.log"),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        nul = os.open(os.devnull, os.O_RDONLY)
        os.dup2(nul, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.close(nul)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        try:
            serve(d)
        except BaseException:
            import traceback
            traceback.print_exc()
        os._exit(1)
    with open(os.path.join(d, "pids"), "a") as f:
        from .kubelet import proc_starttime
        f.write("%d %s kube-sim\n" % (pid, proc_starttime(pid) or "0"))

    class P:
        @staticmethod
        def poll():
            try:
                r, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return 1
            return None if r == 0 else 1
    p = P()
    ready = os.path.join(d, "ready")
    while time.time() - t0 < a.timeout:
        if os.path.exists(ready):
            with open(ready) as f:
                info = json.load(f)
            print("kube-sim ready in %.2fs: %d nodes, %s, kubeconfig %s "
                  "(admin: %s)" % (time.time() - t0, a.nodes, info["server"],
                                   os.path.join(d, "kubeconfig"),
                                   os.path.join(d, "admin.kubeconfig")))
            sys.stdout.flush()
            return 0
        if p.poll() is not None:
            break
        time.sleep(0.02)
    print("kube-sim: failed to start (see %s/kube-sim.log):" % d,
          file=sys.stderr)
    try:
        with open(os.path.join(d, "kube-sim.log")) as f:
            sys.stderr.write("".join(f.readlines()[-15:]))
    except OSError:
        pass
    down(d, keep_logs=True)
    return 1


# ---------------------------------------------------------------- serve
def cmd_serve(a):
    return serve(os.path.abspath(a.state_dir))


def serve(d):
    """The daemon: build the cluster, write DIR/ready, serve forever."""
    with open(os.path.join(d, "config.json")) as f:
        cfg = Cfg(json.load(f))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    from . import (admission, api, auth, cni, ctrl, faults, kubelet, net,
                   netpol, seed, storage, store, util)
    util.SKEW_S = float(getattr(cfg, "clock_skew", 0) or 0)
    # a request thread waiting on the GIL behind a busy controller pass waits
    # a switch interval per socket read or write (5 ms by default): with 10k
    # Services each API call took ~50 ms; 1 ms hands it over sooner
    sys.setswitchinterval(0.001)
    t0 = time.time()
    st = store.Store()
    fl = faults.Faults(cfg)
    net.configure(getattr(cfg, "ip_family", "ipv4"))
    network = net.Network(d, cfg.prefix, cfg.nodes)
    network.proxy_delay_of = fl.proxy_delay
    au = auth.Auth(cfg, st)
    sock_srv = [None]

    # network and certificates are independent: build them in parallel
    err = []

    def build_net():
        try:
            network.build()
        except Exception as e:
            err.append(e)
    tn = threading.Thread(target=build_net)
    tn.start()
    treg = None
    if cfg.seed_images:
        from . import images

        def build_registry():
            try:
                images.start_registry(cfg, kubelet.PidFile(os.path.join(
                    d, "pids")), cfg.agent_image)
            except Exception as e:
                err.append(e)
        treg = threading.Thread(target=build_registry)
        treg.start()
    adm = admission.Admission(cfg, st, fl)
    cm = ctrl.Controllers(cfg, st, adm, network, fl)
    adm.ctrl = cm
    pids = kubelet.PidFile(os.path.join(d, "pids"))
    kl = kubelet.Kubelet(cfg, st, cm, network, fl, pids)
    app = api.App(cfg, st, adm, cm, kl, au, fl)
    fl.store, fl.auth = st, au
    # bind first (port 0 = any), then write certs and kubeconfig
    srv = api.Server(app, cfg.port or 0, None)
    cfg.port = srv.server_address[1]
    au.setup(cfg.port, sorted(set(net.api_ips() + net.kube_service_ips() + [
        "198.19.0.1", "198.19.240.1", "2001:2:0:100::1", "2001:2:0:f00::1"])))
    kl.auth = au
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    pki = os.path.join(d, "pki")
    ctx.load_cert_chain(os.path.join(pki, "server.crt"),
                        os.path.join(pki, "server.key"))
    ctx.load_verify_locations(os.path.join(pki, "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    srv.sslctx = ctx
    sock_srv[0] = srv
    seed.seed(st, adm, cfg)
    storage.seed_storage_classes(st, getattr(cfg, "storage_class", "standard"))
    tn.join()
    if treg:
        treg.join()
    if err:
        raise err[0]
    if getattr(cfg, "dns", False):
        from . import dns
        cm.dns = dns.Server(d, network, pids)
        cm.dns.start()
    # the in-cluster address (default/kubernetes): a listener made inside
    # the underlay namespace, serving the same API
    for ip in net.api_ips():
        isrv = net.in_netns(network.ul, lambda ip=ip: api.Server(
            app, net.API_PORT, ctx, host=ip))
        threading.Thread(target=isrv.serve_forever, daemon=True).start()
    def netns_of(uid):
        w = kl.workers.get(uid)
        return w.netns if w is not None else None

    def node_addrs(name):
        return [a for i in list(network.indices) if
                network.node_name(i) == name for a in
                ([net.pod_gw(i)] if "IPv4" in net.FAMILIES else []) +
                ([net.pod_gw6(i)] if "IPv6" in net.FAMILIES else [])]
    cm.netns_of = netns_of
    cm.netpol = netpol.Programmer(network, fl, node_addrs)
    kl.register_nodes()
    if cfg.faults:
        fl.add(cfg.faults)
    cm.start()
    kl.start()
    cni.Rollout(cfg, st, cm, network,
                lambda m: print(m, file=sys.stderr, flush=True)).start()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(os.path.join(d, "ready.tmp"), "w") as f:
        json.dump({"server": "https://127.0.0.1:%d" % cfg.port,
                   "startup_seconds": round(time.time() - t0, 3)}, f)
    os.rename(os.path.join(d, "ready.tmp"), os.path.join(d, "ready"))
    print("kube-sim serving on 127.0.0.1:%d (%d nodes, %.2fs)" % (
        cfg.port, cfg.nodes, time.time() - t0), flush=True)
    if os.environ.get("KUBESIM_PROFILE"):
        _sample_forever(os.environ["KUBESIM_PROFILE"])
    while True:
        time.sleep(3600)


def _sample_forever(path):
    """The profiler below, which must never end the daemon it runs in."""
    while True:
        try:
            _sample(path)
        except Exception:
            import traceback
            traceback.print_exc()
            time.sleep(1)


def _sample(path):
    """KUBESIM_PROFILE=FILE: a poor man's sampling profiler (no py-spy
    needed). Every 100 ms (more often costs a core with 300 threads), the
    innermost kube-sim line of every thread not waiting in wait/sleep/
    select/read is counted (threads blocked in a read of a container's
    pipe, pod.py:pump, are busy-looking but idle), and every kube-sim
    function on its stack once (inclusive counts: what a function and all
    it calls cost). Every 10 s FILE gets the CPU seconds of the daemon's
    threads by name (digits dropped: "pod-" is every pod worker), the top
    40 lines and the top 40 functions."""
    import collections
    import sys as _sys
    me = threading.get_ident()
    counts, incl, total = collections.Counter(), collections.Counter(), [0]
    cpu = collections.Counter()   # thread name class -> CPU s of dead ones
    seen = {}                     # native id -> (class, last CPU s)
    tick = os.sysconf("SC_CLK_TCK")
    idle = {"wait", "sleep", "select", "accept", "_wait_for_tstate_lock",
            "readinto", "recv_into", "poll", "read", "get", "pump"}
    last = time.time()

    def thread_cpu():
        live = {}
        for t in threading.enumerate():
            try:
                with open("/proc/self/task/%d/stat" % t.native_id) as f:
                    v = f.read().rsplit(")", 1)[1].split()
                live[t.native_id] = (_thread_class(t.name),
                                     (int(v[11]) + int(v[12])) / tick)
            except (OSError, TypeError, IndexError, ValueError):
                pass
        for tid, (cls, s) in seen.items():
            if tid not in live:
                cpu[cls] += s
        seen.clear()
        seen.update(live)
        out = collections.Counter(cpu)
        for cls, s in live.values():
            out[cls] += s
        return out

    while True:
        time.sleep(0.1)
        total[0] += 1
        for tid, f in _sys._current_frames().items():
            if tid == me:
                continue
            if f.f_code.co_name in idle:
                continue
            while f is not None and "kubesim" not in f.f_code.co_filename:
                f = f.f_back
            if f is None:
                continue
            # (f_lineno is None while a frame is between lines)
            counts["%s:%s:%d" % (os.path.basename(f.f_code.co_filename),
                                 f.f_code.co_name, f.f_lineno or 0)] += 1
            fns = set()
            while f is not None:
                if "kubesim" in f.f_code.co_filename:
                    fns.add("%s:%s" % (os.path.basename(
                        f.f_code.co_filename), f.f_code.co_name))
                f = f.f_back
            incl.update(fns)
        if time.time() - last > 10:
            last = time.time()
            by_thread = thread_cpu()
            with open(path + ".tmp", "w") as out:
                out.write("%d samples\nCPU seconds by thread:\n" % total[0])
                for k, v in by_thread.most_common(20):
                    out.write("%8.1f %s\n" % (v, k))
                out.write("lines:\n")
                for k, v in counts.most_common(40):
                    out.write("%6d %s\n" % (v, k))
                out.write("functions (inclusive):\n")
                for k, v in incl.most_common(40):
                    out.write("%6d %s\n" % (v, k))
            os.rename(path + ".tmp", path)


def _thread_class(name):
    """"pod" for every pod worker "pod-NAME", "process_request_thread" for
    "Thread-12 (process_request_thread)", "Thread" for "Thread-3"."""
    if name.startswith("Thread-"):
        return name.split("(")[1].rstrip(")") if "(" in name else "Thread"
    return name.split("-")[0]


def down(d, keep_logs=False):
    from . import cpulimit, net
    from .kubelet import proc_starttime
    report = {"killed": [], "netns": []}
    pids = read_pids(d)
    for pid, st, role in pids:
        if role == "kube-sim" and alive(pid, st):
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if proc_starttime(pid) is None or _zombie(pid):
                    break
                time.sleep(0.02)
            if alive(pid, st) and not _zombie(pid):
                os.kill(pid, signal.SIGKILL)
            report["killed"].append(pid)
    for pid, st, role in pids:
        if role != "kube-sim" and alive(pid, st):
            try:
                if os.getpgid(pid) == pid:
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
                report["killed"].append(pid)
            except OSError:
                pass
    end = time.time() + 3
    while time.time() < end and any(
            alive(p, st) and not _zombie(p) for p, st, _ in pids):
        time.sleep(0.02)
    report["cni_del"] = _cni_teardown(d)
    report["netns"] = net.teardown(d)
    cpulimit.release_listed(d)
    created = False
    try:
        with open(os.path.join(d, "config.json")) as f:
            created = json.load(f).get("created_dir", False)
    except (OSError, ValueError):
        pass
    for f in STATE_FILES:
        if keep_logs and f.endswith(".log"):
            continue
        p = os.path.join(d, f)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.lexists(p):
            os.unlink(p)
    if created and not keep_logs:
        try:
            os.rmdir(d)
        except OSError:
            pass
    return report


def _cni_teardown(d):
    """CNI DEL of every pod network still up (the pods' addresses go back to
    their host-local pools, as when the pods are deleted), before the
    namespaces go."""
    from . import cniruntime
    try:
        with open(os.path.join(d, "config.json")) as f:
            c = json.load(f)
    except (OSError, ValueError):
        return 0
    if not os.path.isdir(os.path.join(d, "cni")):
        return 0
    return cniruntime.teardown(d, c.get("nodes", 0), c.get("prefix", ""))


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def cmd_down(a):
    d = os.path.abspath(a.state_dir)
    if os.geteuid() != 0:
        print("kube-sim: down needs root", file=sys.stderr)
        return 1
    r = down(d, a.keep_logs)
    print("kube-sim down: killed %d process(es), CNI DEL of %d pod "
          "network(s), deleted %d network namespace(s)" % (
              len(r["killed"]), r.get("cni_del", 0), len(r["netns"])))
    return 0


# ---------------------------------------------------------------- fault
def _admin_call(d, method, body=None, path="/kube-sim/faults", timeout=10):
    with open(os.path.join(d, "ready")) as f:
        server = json.load(f)["server"]
    with open(os.path.join(d, "tokens")) as f:
        admin_tok = f.read().split()[1]
    ctx = ssl.create_default_context(cafile=os.path.join(d, "pki",
                                                         "ca.crt"))
    req = urllib.request.Request(server + path, method=method,
                                 data=body.encode() if body else None,
                                 headers={"Authorization":
                                          "Bearer " + admin_tok})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise SystemExit("kube-sim %s: %s" % (
            {"faults": "fault", "nodes": "node"}.get(
                path.rsplit("/", 1)[1], "cron"), e.read().decode()))


def cmd_fault(a):
    d = os.path.abspath(a.state_dir)
    if a.clear:
        _admin_call(d, "DELETE")
    if a.spec:
        out = _admin_call(d, "POST", a.spec)
        print(json.dumps(out["added"]))
    if a.list or not (a.clear or a.spec):
        print(json.dumps(_admin_call(d, "GET"), indent=1))
    return 0


def cmd_cron(a):
    d = os.path.abspath(a.state_dir)
    body = None
    if a.next:
        body = json.dumps({"next": True})
    elif a.set:
        body = json.dumps({"set": a.set})
    out = _admin_call(d, "POST" if body else "GET", body, "/kube-sim/cron")
    print(json.dumps(out))
    return 0


def cmd_node(a):
    """node add NAME [--like NODE] | node remove NAME | node list: the
    daemon does it (kubesim/nodes.py); a removal waits for the drain."""
    d = os.path.abspath(a.state_dir)
    if a.action == "list":
        out = _admin_call(d, "GET", None, "/kube-sim/nodes")
        print(json.dumps(out))
        return 0
    if not a.name:
        print("kube-sim node %s: NAME expected" % a.action, file=sys.stderr)
        return 2
    body = {"add": a.name, "like": a.like} if a.action == "add" else \
        {"remove": a.name}
    out = _admin_call(d, "POST", json.dumps(body), "/kube-sim/nodes",
                      timeout=300)
    print(json.dumps(out))
    return 0


def cmd_status(a):
    d = os.path.abspath(a.state_dir)
    pid = daemon_pid(d)
    if not pid:
        print("kube-sim: not running in %s" % d)
        return 1
    with open(os.path.join(d, "ready")) as f:
        print("kube-sim: pid %d, %s" % (pid, json.load(f)["server"]))
    return 0


def main(argv=None):
    from . import images
    ap = argparse.ArgumentParser(prog="kube-sim", description=(
        "A Kubernetes API server, controllers and kubelets in network "
        "namespaces, for testing kperf. See docs/kube-sim.md."))
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start (daemonizes; prints when ready)")
    up.add_argument("--nodes", type=int, default=3)
    up.add_argument("--state-dir", required=True)
    up.add_argument("--faults", help="fault SPEC (docs/kube-sim.md)")
    up.add_argument("--auth", choices=["token", "cert", "exec"],
                    default="token")
    up.add_argument("--rbac", action="append",
                    help="YAML/JSON file of RBAC objects (repeatable); "
                    "enforce RBAC for the kubeconfig's user")
    up.add_argument("--user", default="kperf-test",
                    help="the kubeconfig's user name (RBAC subject)")
    up.add_argument("--group", action="append",
                    help="extra group of the kubeconfig's user")
    up.add_argument("--agent-image", help="DIR with rootfs/ (an exported "
                    "image) and config.json: pushed as the seeded "
                    "kperf-agent image (needs --seed-images)")
    images.add_args(up)
    up.add_argument("--cron-minute-seconds", type=float, default=60.0,
                    help="real seconds per minute of the CronJob clock "
                    "(default 60: real time; 0.5 = a day in 12 minutes)")
    up.add_argument("--cron-start", help="RFC 3339 time the CronJob clock "
                    "starts at (default: now)")
    up.add_argument("--host-images", help="comma-separated image names "
                    "whose command runs from the host (default "
                    "kube-sim/host)")
    up.add_argument("--taint", action="append",
                    help="NODE=KEY[=VALUE]:EFFECT (repeatable)")
    up.add_argument("--cni", choices=None, help="seed a CNI DaemonSet: "
                    "aws-node|cilium|calico|flannel[:VERSION]")
    up.add_argument("--zones", type=int, default=3,
                    help="spread nodes round-robin over N zones "
                    "(sim-1a, sim-1b, ...; default 3)")
    up.add_argument("--label", action="append",
                    help="NODE=KEY=VALUE extra node label (repeatable)")
    up.add_argument("--node-arch", action="append", metavar="NODE=ARCH",
                    help="node architecture (amd64|arm64; default: this "
                    "machine's): label kubernetes.io/arch, nodeInfo")
    up.add_argument("--exec-expiry", type=int, default=0,
                    help="(--auth exec) token lifetime in seconds: the plugin"
                    " reports expirationTimestamp, the server then rejects "
                    "the old token")
    up.add_argument("--port", type=int, default=0)
    up.add_argument("--job-backoff", type=float, default=10,
                    help="seconds before a Job's first retry pod (doubles)")
    up.add_argument("--storage-class", default="standard",
                    help="the default StorageClass (\"\": none, as on a new EKS"
                    " cluster: a claim naming no class stays Pending)")
    up.add_argument("--gc-lag", type=float, default=2.0,
                    help="seconds the garbage collector lets an object whose "
                    "owner is gone live on (default 2; 0 = at once)")
    up.add_argument("--max-grace", type=float, default=5.0,
                    help="cap on a pod's termination grace period in seconds"
                    " (default 5)")
    up.add_argument("--ready-lag", type=float, default=0.5,
                    help="seconds a started container without readinessProbe"
                    " is Running before it is Ready (default 0.5)")
    up.add_argument("--clock-skew", type=float, default=0.0, help="seconds "
                    "the cluster's clock is ahead (every timestamp it writes)")
    up.add_argument("--ip-family", choices=["ipv4", "ipv6", "dual"],
                    default="ipv4", help="pod, node and Service addresses: "
                    "IPv4, IPv6 (2001:2::/48) or both (IPv4 first)")
    up.add_argument("--cni-restart-time", default="1s",
                    help="with --cni: how long each node's CNI pod takes to "
                    "restart in a rollout (default 1s; at least the outage)")
    up.add_argument("--cni-restart-outage", default="0s",
                    help="with --cni: how long a node's pod traffic is "
                    "dropped while its CNI pod restarts (default 0s)")
    up.add_argument("--cni-conntrack-flush", action="store_true",
                    help="with --cni: flush the node's conntrack table as "
                    "its CNI pod restarts")
    up.add_argument("--cni-timeout", type=float, default=10.0,
                    help="seconds a CNI plugin may take before the runtime "
                    "kills it (default 10; kubelet/containerd allow minutes)")
    up.add_argument("--sandbox-backoff", type=float, default=10.0,
                    help="seconds before the kubelet retries a failed pod "
                    "sandbox (default 10, plus up to 50%% jitter)")
    up.add_argument("--cel-dir", default=os.environ.get("KUBESIM_CEL_DIR"),
                    help="install of @bufbuild/cel (test/tools/get-cel.sh): "
                    "ValidatingAdmissionPolicies are evaluated with it")
    up.add_argument("--dns", action="store_true", help="run the cluster "
                    "DNS: dnsmasq behind kube-system/kube-dns, pods get its "
                    "resolv.conf")
    up.add_argument("--timeout", type=float, default=120)
    dn = sub.add_parser("down", help="remove everything up made")
    dn.add_argument("--state-dir", required=True)
    dn.add_argument("--keep-logs", action="store_true")
    sv = sub.add_parser("serve", help=argparse.SUPPRESS)
    sv.add_argument("--state-dir", required=True)
    fa = sub.add_parser("fault", help="add/list/clear faults at runtime")
    fa.add_argument("--state-dir", required=True)
    fa.add_argument("--clear", action="store_true")
    fa.add_argument("--list", action="store_true")
    fa.add_argument("spec", nargs="?")
    cr = sub.add_parser("cron", help="show or move the CronJob clock")
    cr.add_argument("--state-dir", required=True)
    g = cr.add_mutually_exclusive_group()
    g.add_argument("--next", action="store_true", help="jump to the next "
                   "schedule time of any CronJob (its Jobs start at once)")
    g.add_argument("--set", metavar="TIME", help="set the clock (RFC 3339)")
    no = sub.add_parser("node", help="add a node (shaped as another) or "
                        "drain and remove one, at runtime")
    no.add_argument("--state-dir", required=True)
    no.add_argument("action", choices=["add", "remove", "list"])
    no.add_argument("name", nargs="?")
    no.add_argument("--like", metavar="NODE", help="(add) copy the labels "
                    "and taints of NODE: instance type, zone, arch, node "
                    "group")
    ss = sub.add_parser("status")
    ss.add_argument("--state-dir", required=True)
    a = ap.parse_args(argv)
    return {"up": cmd_up, "down": cmd_down, "serve": cmd_serve,
            "fault": cmd_fault, "cron": cmd_cron, "node": cmd_node,
            "status": cmd_status}[a.cmd](a)
