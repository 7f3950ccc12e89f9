# SPDX-License-Identifier: Apache-2.0
"""pod - one pod on one node, as a kubelet runs it (used by kubelet.py).

Owns: the pod lifecycle (image "pull", secrets and volumes written under
DIR/pods/<uid>/volumes with container paths rewritten to them, claims
mounted from their volume's host directory, the service-account token,
env, the pod's network namespace or its node's for hostNetwork, init
containers one after another, a real process per container via nsenter,
log capture, readiness probes, restarts with back-off, graceful
termination), pod status and kubelet Events.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback

from . import dns, sandbox
from .podvolumes import PodVolumes, _expand
from . import podimage
from . import termmsg
from .ctrl import set_cond
from .images import EMULATORS, Image, host_arch
from .net import in_netns, node_ip, node_ips
from .util import dcopy, now_iso, rand_token, wall

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# mount paths a program opens by a built-in name (no argument to rewrite):
# bind-mounted in a private mount namespace instead (hostns_exec.py)
HOST_MOUNT_PREFIXES = ("/var/run/secrets/", "/run/secrets/")


class Ctr:
    """One container's runtime state inside a Worker."""

    def __init__(self, spec, init=False):
        self.spec = spec
        self.init = init
        self.name = spec["name"]
        self.proc = None
        self.restarts = 0
        self.state = {"waiting": {"reason": "ContainerCreating"}}
        self.last = {}
        self.ready = False
        self.started = False
        self.readers = []
        self.next_probe = 0
        self.probe_ok = 0
        self.probe_fail = 0
        self.cid = None
        self.backoff_until = 0
        self.backoff = 0
        self.ready_at = 0
        self.cgroup = None  # its cpu limit group (cpulimit.py), if any

    def readers_alive(self):
        return any(t.is_alive() for t in self.readers)


class Worker(PodVolumes):
    """Runs one pod on one node until it is deleted."""

    def __init__(self, kl, pod, node_i):
        self.kl, self.pod, self.node_i = kl, pod, node_i
        self.uid = pod["metadata"]["uid"]
        self.ns, self.name = pod["metadata"]["namespace"], \
            pod["metadata"]["name"]
        self.node = pod["spec"]["nodeName"]
        self.deleting = threading.Event()
        self.containers = {c["name"]: Ctr(c)
                           for c in pod["spec"].get("containers") or []}
        self.inits = {c["name"]: Ctr(c, True)
                      for c in pod["spec"].get("initContainers") or []}
        if self.inits:
            for c in self.containers.values():
                c.state = {"waiting": {"reason": "PodInitializing"}}
        self.netns = None
        self.ip = None  # the primary address (podIP)
        self.ips = []  # one per cluster family (podIPs)
        self.sandbox_id = None  # of the sandbox whose network is up
        self.dir = os.path.join(kl.cfg.state_dir, "pods", self.uid)
        self.log_lock = threading.Lock()
        self.phase = "Pending"
        self.images = {}  # container name -> images.Image (True: host)

    # ------------------------------------------------------------ helpers
    def ev(self, typ, reason, msg, ctr=None):
        p = dict(self.pod, kind="Pod", apiVersion="v1")
        self.kl.ctrl.event(p, typ, reason, msg, "kubelet", self.node,
                           'spec.containers{%s}' % ctr if ctr else None)

    def cur(self):
        return self.kl.store.get("pods", self.ns, self.name)

    def push(self):
        """Write pod status from the containers' state."""
        hostip = node_ip(self.node_i)
        cstat, istat = [], []
        all_ready = True
        for c in list(self.inits.values()) + list(self.containers.values()):
            img = c.spec.get("image", "")
            image = self.images.get(c.name)
            s = {"name": c.name, "state": dcopy(c.state),
                 "lastState": dcopy(c.last), "ready": c.ready,
                 "restartCount": c.restarts, "image": img,
                 "imageID": "", "started": c.started}
            if c.cid:
                s["containerID"] = "containerd://" + c.cid
            if isinstance(image, Image):
                # as containerd reports them: the full name, the repo digest
                s["image"] = image.ref.name()
                s["imageID"] = image.image_id()
            if c.init:
                istat.append(s)
                continue
            cstat.append(s)
            all_ready = all_ready and c.ready
        pending = [c.name for c in self.inits.values() if not (
            "terminated" in c.state and
            c.state["terminated"].get("exitCode") == 0)]
        phase = self.phase

        def upd(x):
            if x["metadata"]["uid"] != self.uid:
                return False
            st = x.setdefault("status", {})
            st["phase"] = phase
            st["hostIP"] = hostip
            st["hostIPs"] = [{"ip": a} for a in node_ips(self.node_i)]
            st.setdefault("startTime", now_iso())
            if self.ip:
                st["podIP"] = self.ip
                st["podIPs"] = [{"ip": a} for a in self.ips]
            st["containerStatuses"] = cstat
            if istat:
                st["initContainerStatuses"] = istat
            set_cond(x, "PodReadyToStartContainers",
                     "True" if self.ip else "False", None, None)
            if pending:
                set_cond(x, "Initialized", "False", "ContainersNotInitialized",
                         "containers with incomplete status: [%s]" %
                         " ".join(pending))
            else:
                set_cond(x, "Initialized", "True", None, None)
            if phase in ("Succeeded", "Failed"):
                r = "PodCompleted"
                set_cond(x, "ContainersReady", "False", r, None)
                set_cond(x, "Ready", "False", r, None)
            elif all_ready:
                set_cond(x, "ContainersReady", "True", None, None)
                set_cond(x, "Ready", "True", None, None)
            else:
                un = "[%s]" % " ".join(c.name for c in
                                       self.containers.values()
                                       if not c.ready)
                set_cond(x, "ContainersReady", "False", "ContainersNotReady",
                         "containers with unready status: " + un)
                set_cond(x, "Ready", "False", "ContainersNotReady",
                         "containers with unready status: " + un)
            order = ["PodReadyToStartContainers", "Initialized", "Ready",
                     "ContainersReady", "PodScheduled"]
            st["conditions"].sort(key=lambda c: order.index(c["type"]) if
                                  c["type"] in order else 9)
        o = self.kl.store.mutate("pods", self.ns, self.name, upd)
        if o is not None:
            self.pod = o

    # ------------------------------------------------------------ main
    def run(self):
        try:
            self._run()
        except Exception:
            traceback.print_exc(file=sys.stderr)
        finally:
            self.cleanup()

    def _run(self):
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        if self.deleting.is_set():
            return
        self.push()
        # the sandbox and its network first, then the images, as the kubelet
        # does (RunPodSandbox before any pull)
        if self.pod["spec"].get("hostNetwork"):
            self.netns = self.kl.net.node_ns(self.node_i)
            self.ips = node_ips(self.node_i)
            self.ip = self.ips[0]
        elif not sandbox.create(self):
            return   # deleted before its network was up
        self.push()
        if not self.pod["spec"].get("hostNetwork"):
            # the policies that select it, before its containers start
            self.kl.ctrl.netpol_new_pod(self.uid, self.node)
        if not self.pull_images():
            return
        while not self.deleting.is_set():
            err = self.prepare()
            if not err:
                break
            for c in self.containers.values():
                c.state = {"waiting": {"reason": "CreateContainerConfigError",
                                       "message": err}}
            self.ev("Warning", "Failed", "Error: " + err)
            self.push()
            if self.deleting.wait(2):
                return
        if self.deleting.is_set():
            return
        self.push()
        if self.inits and not self.run_inits():
            if self.phase == "Failed":
                self.deleting.wait()   # keep the pod; wait for its deletion
            return
        for c in self.containers.values():
            self.start(c)
        self.push()
        while not self.deleting.wait(0.2):
            if self.kl.faults.node_down(self.node):
                continue
            changed = False
            for c in self.containers.values():
                changed |= self.tick(c)
            if changed:
                self.push()
            if self.phase in ("Succeeded", "Failed"):
                # keep the pod object; wait for its deletion
                self.deleting.wait()
                return

    def run_inits(self):
        """Init containers one after another, each to completion. Returns
        True when all succeeded; False on deletion or when one failed and
        restartPolicy Never made the pod Failed (others restart it with
        back-off)."""
        for c in self.inits.values():
            while True:
                self.start(c)
                self.push()
                while c.proc is not None and not self.deleting.wait(0.2):
                    rc = c.proc.poll()
                    if rc is not None:
                        for t in c.readers:
                            t.join(2)
                        self.term_state(c, rc)
                if self.deleting.is_set():
                    return False
                code = c.state["terminated"]["exitCode"]
                if code == 0:
                    break
                if self.pod["spec"].get("restartPolicy", "Always") == "Never":
                    self.phase = "Failed"
                    self.push()
                    return False
                c.backoff = min(c.backoff * 2 if c.backoff else 10, 300) \
                    if c.restarts else self.kl.cfg.crash_backoff
                c.last = {"terminated": c.state["terminated"]}
                c.state = {"waiting": {"reason": "CrashLoopBackOff", "message": (
                    "back-off %ds restarting failed container=%s pod=%s_%s(%s)"
                    % (c.backoff, c.name, self.name, self.ns, self.uid))}}
                self.ev("Warning", "BackOff", "Back-off restarting failed "
                        "container %s in pod %s_%s(%s)" % (
                            c.name, self.name, self.ns, self.uid), c.name)
                self.push()
                if self.deleting.wait(c.backoff):
                    return False
                c.restarts += 1
        return True

    # ------------------------------------------------------------ images
    def pull_images(self):
        return podimage.pull_images(self)

    # ------------------------------------------------------------ volumes
    def argv(self, c):
        spec = c.spec
        cmd, args = list(spec.get("command") or []), list(spec.get("args")
                                                          or [])
        env = self.envs.get(c.name, {})
        cmd = [_expand(x, env) for x in cmd]
        args = [_expand(x, env) for x in args]
        if self.from_image(c):
            # the image's ENTRYPOINT/CMD, as a runtime combines them with
            # command/args; paths stay container paths (volumes are mounted)
            conf = self.images[c.name].config
            if cmd:
                return cmd + args, None
            full = list(conf.get("Entrypoint") or []) + (
                args or list(conf.get("Cmd") or []))
            return (full, None) if full else (None, "no command specified")
        # a --host-images container: its command from the host's files
        if not cmd:
            if not args:
                return None, "no command specified"
            cmd, args = args[:1], args[1:]
        argv = [self.map_path(c, a) for a in cmd + args]
        return argv, None

    def start(self, c):
        argv, err = self.argv(c)
        n = c.restarts
        logp = os.path.join(self.dir, "logs", "%s.%d.log" % (c.name, n))
        open(logp, "ab").close()
        wd = c.spec.get("workingDir")
        cwd = self.map_path(c, wd) if wd else self.dir
        if not os.path.isdir(cwd):
            cwd = self.dir
        if err is None and self.from_image(c):
            argv, err = self.image_exec(c, argv)
            cwd = self.dir
        elif err is None:
            argv = self.host_mounts(c, argv)
        if err is None:
            try:
                proc = subprocess.Popen(
                    ["nsenter", "--net=/run/netns/" + self.netns, "--"] +
                    self.uts_prefix() + argv, env=self.envs.get(c.name),
                    cwd=cwd,
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True)
            except OSError as e:
                err = str(e)
        self.ev("Normal", "Created", "Created container: %s" % c.name,
                c.name)
        c.cid = rand_token(64).lower()[:64]
        if err:
            t = now_iso()
            c.state = {"terminated": {
                "exitCode": 128, "reason": "StartError", "message":
                "failed to create containerd task: failed to create shim "
                "task: OCI runtime create failed: runc create failed: "
                "unable to start container process: %s" % err,
                "startedAt": "1970-01-01T00:00:00Z", "finishedAt": t,
                "containerID": "containerd://" + c.cid}}
            c.proc = None
            self.ev("Warning", "Failed", "Error: %s" % err, c.name)
            return
        lim = ((c.spec.get("resources") or {}).get("limits") or {}).get("cpu")
        c.cgroup = self.kl.cpulimits.apply("%s-%s-%d" % (
            self.uid[:13], c.name, c.restarts), proc.pid, lim) \
            if lim else None
        self.kl.pids.add(proc.pid, "pod %s/%s %s" % (self.ns, self.name,
                                                    c.name))
        c.proc = proc
        c.readers = []
        for stream, fh in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            t = threading.Thread(target=self.pump, args=(fh, stream, logp),
                                 daemon=True)
            t.start()
            c.readers.append(t)
        c.state = {"running": {"startedAt": now_iso()}}
        c.started = True
        c.ready = False  # Running first; Ready by probe or after --ready-lag
        c.ready_at = time.time() + max(getattr(self.kl.cfg, "ready_lag", 0),
                                       self.kl.faults.ready_delay(self.node))
        pr = c.spec.get("readinessProbe")
        c.next_probe = time.time() + (pr or {}).get("initialDelaySeconds", 0)
        c.probe_ok = c.probe_fail = 0
        if not c.init:   # a pod is Pending while it initializes
            self.phase = "Running"
        self.ev("Normal", "Started", "Started container %s" % c.name, c.name)

    def from_image(self, c):
        """True when the container runs from its pulled image's root
        (every image but --host-images)."""
        return isinstance(self.images.get(c.name), Image)

    def image_exec(self, c, argv):
        """A fresh copy of the image root for this start of container c
        (its writable layer) and the chroot_exec.py command line that runs
        argv in it; returns (argv, error)."""
        image = self.images[c.name]
        conf = image.config
        root = os.path.join(self.dir, "rootfs", c.name)
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(os.path.dirname(root), exist_ok=True)
        r = subprocess.run(["cp", "-a", image.root, root],
                           stderr=subprocess.PIPE)
        if r.returncode != 0:
            return None, "copy of the image root: " + r.stderr.decode(
                errors="replace").strip()
        emulator = None
        arch = self.kl.node_arch(self.node)
        if arch != host_arch():
            # a foreign node: its binaries run under qemu-user, copied
            # into the container's root (no binfmt_misc needed)
            emulator = shutil.which(EMULATORS.get(arch, ""))
            if not emulator:
                return None, "exec format error (node arch %s: %s not " \
                    "installed)" % (arch, EMULATORS.get(arch))
            shutil.copy(emulator, os.path.join(root, ".kube-sim-qemu"))
            emulator = "/.kube-sim-qemu"
        psc = self.pod["spec"].get("securityContext") or {}
        csc = c.spec.get("securityContext") or {}
        iuser, _, igroup = (conf.get("User") or "0").partition(":")
        uid = csc.get("runAsUser", psc.get("runAsUser"))
        gid = csc.get("runAsGroup", psc.get("runAsGroup"))
        if uid is None:
            if not iuser.isdigit():
                return None, ("image has non-numeric user (%s), cannot "
                              "verify user is non-root" % iuser)
            uid = int(iuser)
        if gid is None:
            gid = int(igroup) if igroup.isdigit() else 0
        if csc.get("runAsNonRoot", psc.get("runAsNonRoot")) and uid == 0:
            return None, "container has runAsNonRoot and image will run " \
                "as root"
        groups = list(psc.get("supplementalGroups") or [])
        if psc.get("fsGroup") is not None:
            groups.append(psc["fsGroup"])
        env = {}
        for kv in conf.get("Env") or []:
            k, _, v = kv.partition("=")
            env[k] = v
        explicit = {e.get("name") for e in c.spec.get("env") or []}
        for k, v in self.envs.get(c.name, {}).items():
            if k in ("PATH", "HOME") and k in env and k not in explicit:
                continue  # kube-sim's host defaults; the image's win
            if k == "HOME" and k not in explicit:
                v = "/root"   # the host-side pod home is not in the image
            env[k] = v
        mounts = []
        for m in c.spec.get("volumeMounts") or []:
            src = self.mounts.get(m.get("name"))
            if not src:
                continue
            if m.get("subPath"):
                src = os.path.join(src, m["subPath"])
            mounts.append({"src": src, "dst": m["mountPath"],
                           "ro": bool(m.get("readOnly"))})
        mounts.append(termmsg.prepare(self.dir, c.spec, uid, gid))
        resolv = dns.pod_resolv(self.kl.cfg, self.pod, self.dir)
        if resolv:
            mounts.append({"src": resolv, "dst": "/etc/resolv.conf"})
        c.log_path = os.path.join(self.dir, "logs",
                                  "%s.%d.log" % (c.name, c.restarts))
        spec = {"root": root, "argv": argv, "env": env,
                "cwd": c.spec.get("workingDir") or conf.get("WorkingDir")
                or "/", "uid": uid, "gid": gid, "groups": groups,
                "read_only": bool(csc.get("readOnlyRootFilesystem")),
                "no_new_privs": csc.get("allowPrivilegeEscalation") is False,
                "mounts": mounts, "emulator": emulator}
        sp = os.path.join(self.dir, "rootfs", c.name + ".json")
        with open(sp, "w") as f:
            json.dump(spec, f)
        helper = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "chroot_exec.py")
        return ["unshare", "--mount", "--propagation", "private",
                sys.executable, helper, sp], None

    def host_mounts(self, c, argv):
        """argv, prefixed to run in a private mount namespace where the
        volumes mounted at HOST_MOUNT_PREFIXES paths (the service-account
        token) appear at their mountPath (hostns_exec.py); argv itself when
        there are none."""
        mounts = []
        for m in c.spec.get("volumeMounts") or []:
            src = self.mounts.get(m.get("name"))
            mp = m.get("mountPath", "")
            if not src or not mp.startswith(HOST_MOUNT_PREFIXES) and \
                    mp.rstrip("/") + "/" not in HOST_MOUNT_PREFIXES:
                continue
            if m.get("subPath"):
                src = os.path.join(src, m["subPath"])
            mounts.append({"src": src, "dst": mp,
                           "ro": bool(m.get("readOnly"))})
        resolv = dns.pod_resolv(self.kl.cfg, self.pod, self.dir)
        if resolv:
            mounts.append({"src": resolv, "dst": "/etc/resolv.conf"})
        if not mounts or not shutil.which("unshare"):
            return argv
        spec = {"argv": argv, "env": self.envs.get(c.name) or {},
                "mounts": mounts, "stash": os.path.join(self.dir, "stash")}
        sp = os.path.join(self.dir, "hostns-%s.json" % c.name)
        with open(sp, "w") as f:
            json.dump(spec, f)
        helper = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "hostns_exec.py")
        return ["unshare", "--mount", "--propagation", "private",
                sys.executable, "-I", helper, sp]

    def uts_prefix(self):
        """Own UTS namespace with the pod's hostname (the node's name for
        hostNetwork pods), as in a real pod; skipped without the tools."""
        if not (shutil.which("unshare") and shutil.which("hostname")):
            return []
        name = self.node if self.pod["spec"].get("hostNetwork") else \
            (self.pod["spec"].get("hostname") or self.name)
        return ["unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', name[:63]]

    def pump(self, fh, stream, logp):
        sb = stream.encode()
        with open(logp, "ab") as out:
            partial = b""
            while True:
                try:
                    data = os.read(fh.fileno(), 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                data = partial + data
                lines = data.split(b"\n")
                partial = lines.pop()
                ts = _ts().encode()
                with self.log_lock:
                    for ln in lines:
                        out.write(b"%s %s F %s\n" % (ts, sb, ln))
                    if partial and len(partial) > 16384:
                        out.write(b"%s %s P %s\n" % (ts, sb, partial))
                        partial = b""
                    out.flush()
            if partial:
                with self.log_lock:
                    out.write(b"%s %s P %s\n" % (_ts().encode(), sb,
                                                 partial))
        fh.close()

    def tick(self, c):
        """Advance one container; returns True when status changed."""
        now = time.time()
        if c.proc is None:
            if "terminated" in c.state and c.backoff_until == 0:
                return self.exited(c, c.state["terminated"]["exitCode"],
                                   already=True)
            if c.backoff_until > 0 and now >= c.backoff_until:  # -1: never again
                c.backoff_until = 0
                c.last = {"terminated": c.state.get("terminated")} if \
                    "terminated" in c.state else c.last
                c.restarts += 1
                self.start(c)
                return True
            return False
        rc = c.proc.poll()
        if rc is not None:
            for t in c.readers:
                t.join(2)
            return self.exited(c, rc)
        pr = c.spec.get("readinessProbe")
        if not pr and not c.ready and now >= c.ready_at:
            c.ready = True
            return True
        if pr and now >= c.next_probe:
            c.next_probe = now + pr.get("periodSeconds", 10)
            ok = self.probe(c, pr)
            if ok:
                c.probe_ok += 1
                c.probe_fail = 0
            else:
                c.probe_fail += 1
                c.probe_ok = 0
            was = c.ready
            if ok and c.probe_ok >= pr.get("successThreshold", 1):
                c.ready = True
            if not ok and c.probe_fail >= pr.get("failureThreshold", 3):
                c.ready = False
            if not ok and was is False and c.probe_fail == 1:
                self.ev("Warning", "Unhealthy", "Readiness probe failed: "
                        "connection refused", c.name)
            return c.ready != was
        return False

    def term_state(self, c, rc):
        """c exited with status rc (negative: killed by a signal)."""
        t = now_iso()
        sig = -rc if rc < 0 else 0
        code = 128 + sig if sig else rc
        term = {"exitCode": code, "reason": "Completed" if code == 0
                else "Error", "startedAt": c.state.get("running", {}).get(
                    "startedAt", t), "finishedAt": t,
                "containerID": "containerd://" + (c.cid or "")}
        if sig:
            term["signal"] = sig
        if self.from_image(c):
            msg = termmsg.message(self.dir, c.spec, code,
                                  getattr(c, "log_path", None))
            if msg:
                term["message"] = msg
        c.state = {"terminated": term}
        c.proc = None
        self.kl.cpulimits.release(getattr(c, "cgroup", None))
        c.cgroup = None

    def exited(self, c, rc, already=False):
        if not already:
            self.term_state(c, rc)
        code = c.state["terminated"]["exitCode"]
        c.ready = False
        rp = self.pod["spec"].get("restartPolicy", "Always")
        if rp == "Always" or (rp == "OnFailure" and code != 0):
            c.backoff = min(c.backoff * 2 if c.backoff else 10, 300) \
                if c.restarts else self.kl.cfg.crash_backoff
            c.backoff_until = time.time() + c.backoff
            c.last = {"terminated": c.state["terminated"]}
            c.state = {"waiting": {"reason": "CrashLoopBackOff", "message": (
                "back-off %ds restarting failed container=%s pod=%s_%s(%s)"
                % (c.backoff, c.name, self.name, self.ns, self.uid))}}
            self.ev("Warning", "BackOff", "Back-off restarting failed "
                    "container %s in pod %s_%s(%s)" % (c.name, self.name,
                                                       self.ns, self.uid),
                    c.name)
            return True
        c.backoff_until = -1
        done = [x for x in self.containers.values()
                if "terminated" in x.state and x.proc is None]
        if len(done) == len(self.containers):
            ok = all(x.state["terminated"]["exitCode"] == 0 for x in done)
            self.phase = "Succeeded" if ok else "Failed"
        return True

    def probe(self, c, pr):
        to = pr.get("timeoutSeconds", 1)
        try:
            if "tcpSocket" in pr:
                port = self.port(c, pr["tcpSocket"].get("port"))
                host = pr["tcpSocket"].get("host") or self.ip

                def conn():
                    s = socket.create_connection((host, port), timeout=to)
                    s.close()
                    return True
                return in_netns(self.kl.net.node_ns(self.node_i), conn)
            if "httpGet" in pr:
                hg = pr["httpGet"]
                port = self.port(c, hg.get("port"))

                def get():
                    s = socket.create_connection((hg.get("host") or self.ip,
                                                  port), timeout=to)
                    s.sendall(("GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" % (
                        hg.get("path", "/"), self.ip)).encode())
                    line = s.recv(64).split(b" ")
                    s.close()
                    return len(line) > 1 and 200 <= int(line[1]) < 400
                return in_netns(self.kl.net.node_ns(self.node_i), get)
            if "exec" in pr:
                cmd = [self.map_path(c, a) for a in pr["exec"].get(
                    "command") or []]
                p = subprocess.run(["nsenter", "--net=/run/netns/" +
                                    self.netns, "--"] + cmd,
                                   env=self.envs.get(c.name), timeout=to,
                                   capture_output=True, cwd=self.dir)
                return p.returncode == 0
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return False
        return True

    def port(self, c, p):
        if isinstance(p, int):
            return p
        for q in c.spec.get("ports") or []:
            if q.get("name") == p:
                return q["containerPort"]
        return int(p)

    # ------------------------------------------------------------ teardown
    def kill_all(self):
        grace = self.pod["metadata"].get("deletionGracePeriodSeconds")
        if grace is None:
            grace = self.pod["spec"].get("terminationGracePeriodSeconds", 30)
        grace = min(grace, getattr(self.kl.cfg, "max_grace", grace))
        live = [c for c in list(self.inits.values()) +
                list(self.containers.values()) if c.proc]
        if live:
            for c in live:
                self.ev("Normal", "Killing", "Stopping container %s" %
                        c.name, c.name)
                _signal(c.proc, signal.SIGTERM)
            t0 = time.time()
            end = t0 + grace
            while time.time() < end and any(c.proc.poll() is None
                                              for c in live):
                time.sleep(0.05)
            for c in live:
                if c.proc.poll() is None:
                    # in kube-sim.log: a container that ignored its SIGTERM
                    sys.stderr.write(
                        "kube-sim: pod %s/%s container %s still running "
                        "%.1f s after SIGTERM (grace %ss): SIGKILL\n" % (
                            self.ns, self.name, c.name, time.time() - t0,
                            grace))
                    _signal(c.proc, signal.SIGKILL)
                    c.proc.wait()
                _signal(c.proc, signal.SIGKILL)  # stragglers in the group
                self.exited(c, c.proc.returncode)
                c.backoff_until = -1
        # processes that outlive their leader are killed with the netns

    def cleanup(self):
        try:
            self.kill_all()
            if self.netns and not self.pod["spec"].get("hostNetwork"):
                sandbox.destroy(self)
        finally:
            with self.kl.lock:
                self.kl.workers.pop(self.uid, None)
            self.kl.ctrl.pod_released(self.pod)


def _signal(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except OSError:
        try:
            proc.send_signal(sig)
        except OSError:
            pass


def _ts():
    t = wall()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + \
        ".%09dZ" % int((t % 1) * 1e9)

