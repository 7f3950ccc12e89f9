# SPDX-License-Identifier: Apache-2.0
"""cpulimit - a container's resources.limits.cpu enforced as a kubelet
enforces it: a CFS quota on a cgroup of the container's own (cgroup v2
cpu.max, or v1 cpu.cfs_quota_us over a 100 ms period), so a process in it
both runs throttled and reads its limit as a pod does.

Owns: the groups kube-sim makes, named <prefix>cpu-<pod uid>-<container>-
<start> under the cpu controller's root and listed in STATE/cgroups.list;
each is removed (by that exact name) when its container has exited, and
`kube-sim down` removes any still listed (release_listed). Without a
writable cpu controller (not root, no cgroup) limits are not enforced, and
kube-sim says so once on stderr.
"""
import os
import re
import sys
import threading
import time

PERIOD_US = 100000


def millis(quantity):
    """CPU quantity ("500m", "1", "1.5") -> thousandths of a CPU; None
    when it is not one."""
    m = re.match(r"^([0-9]+)m$", quantity or "")
    if m:
        return int(m.group(1))
    m = re.match(r"^([0-9]+)(\.[0-9]+)?$", quantity or "")
    if m:
        return int(round(float(quantity) * 1000))
    return None


def _controller():
    """(kind, root) of a writable cpu controller, or (None, None)."""
    v1 = "/sys/fs/cgroup/cpu"
    if os.path.isfile(os.path.join(v1, "cpu.cfs_period_us")) and \
            os.access(v1, os.W_OK):
        return "v1", v1
    try:
        with open("/sys/fs/cgroup/cgroup.subtree_control") as f:
            if "cpu" in f.read().split() and \
                    os.access("/sys/fs/cgroup", os.W_OK):
                return "v2", "/sys/fs/cgroup"
    except OSError:
        pass
    return None, None


LIST = "cgroups.list"


def release_listed(state_dir):
    """`kube-sim down`: removes the groups a kube-sim of state_dir made and
    did not remove (their processes are gone by then)."""
    try:
        with open(os.path.join(state_dir, LIST)) as f:
            paths = [p.strip() for p in f if p.strip()]
    except OSError:
        return
    lim = CpuLimits("", None)
    for p in paths:
        lim.release(p)


class CpuLimits:
    def __init__(self, prefix, state_dir):
        self.prefix = prefix or "kubesim-"
        self.listing = os.path.join(state_dir, LIST) if state_dir else None
        self.kind, self.root = _controller()
        self.made = set()
        self.lock = threading.Lock()
        self.warned = False

    def apply(self, name, pid, quantity):
        """Puts process pid in a new group `name` limited to quantity; the
        group's path, or None when not enforced."""
        m = millis(quantity)
        if not m:
            return None
        if not self.kind:
            if not self.warned:
                self.warned = True
                sys.stderr.write("kube-sim: no writable cgroup cpu "
                                 "controller: resources.limits.cpu is not "
                                 "enforced\n")
            return None
        path = os.path.join(self.root, self.prefix + "cpu-" + name)
        quota = max(1000, m * PERIOD_US // 1000)
        try:
            os.mkdir(path)
            with self.lock:
                self.made.add(path)
                if self.listing:
                    with open(self.listing, "a") as f:
                        f.write(path + "\n")
            if self.kind == "v1":
                with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
                    f.write(str(PERIOD_US))
                with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
                    f.write(str(quota))
            else:
                with open(os.path.join(path, "cpu.max"), "w") as f:
                    f.write("%d %d" % (quota, PERIOD_US))
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write(str(pid))
        except OSError as e:
            sys.stderr.write("kube-sim: cpu limit %s for %s: %s\n" % (
                quantity, name, e))
            self.release(path)
            return None
        return path

    def release(self, path):
        """Removes group path (its processes have exited; a moment for the
        kernel to see it empty)."""
        if not path:
            return
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
        with self.lock:
            self.made.discard(path)

    def release_all(self):
        with self.lock:
            left = list(self.made)
        for p in left:
            self.release(p)
