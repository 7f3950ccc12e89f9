# SPDX-License-Identifier: Apache-2.0
"""chroot_exec - the last step of starting a container from an image root
(every pulled image): run as `unshare --mount --propagation private
python3 chroot_exec.py SPEC.json` inside the pod's network namespace.

Owns: the container's filesystem view and identity. In the fresh mount
namespace it bind-mounts the container's root onto itself, mounts /proc,
a sysfs of the pod's network namespace with the host's cgroup tree
(rbind) at /sys/fs/cgroup, a /dev with null, zero, random,
urandom and tty, and each volume at its mountPath (read-only where the
volumeMount says so), then remounts the root read-only when the pod asks
for readOnlyRootFilesystem, chroots, sets the groups, gid and uid, sets
no_new_privs when allowPrivilegeEscalation is false, and execs the
image's entrypoint + args with PATH looked up inside the root.

SPEC.json: {"root", "argv", "env", "cwd", "uid", "gid", "groups",
"read_only", "no_new_privs", "mounts": [{"src", "dst", "ro"}], "emulator"}
(emulator: a qemu-user binary inside the root that runs argv, for a node
of another architecture).
Python 3 standard library only (ctypes for prctl).
"""
import ctypes
import json
import os
import subprocess
import sys

PR_SET_NO_NEW_PRIVS = 38


def die(msg):
    sys.stderr.write("kube-sim: container start: %s\n" % msg)
    sys.exit(128)


def mount(*args):
    r = subprocess.run(["mount"] + list(args), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        die("mount %s: %s" % (" ".join(args),
                              r.stderr.decode(errors="replace").strip()))


def inside(root, path):
    """root + path, refusing paths that climb out of root."""
    p = os.path.normpath(os.path.join(root, path.lstrip("/")))
    if p != root and not p.startswith(root + "/"):
        die("path %s leaves the container root" % path)
    return p


def mountpoint(root, path, is_dir):
    p = inside(root, path)
    if is_dir:
        os.makedirs(p, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if not os.path.exists(p):
            open(p, "a").close()
    return p


def lookup(argv0, env, root):
    if "/" in argv0:
        return argv0
    for d in env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":"):
        cand = os.path.join(d or ".", argv0)
        if os.access(inside(root, cand), os.X_OK):
            return cand
    die('exec: "%s": executable file not found in $PATH' % argv0)
    return None


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    root = os.path.realpath(spec["root"])
    mount("--bind", root, root)
    mount("-t", "proc", "proc", mountpoint(root, "/proc", True))
    mount("-t", "sysfs", "-o", "ro,nosuid,nodev,noexec", "sysfs",
          mountpoint(root, "/sys", True))
    if os.path.isdir("/sys/fs/cgroup") and os.path.isdir(
            os.path.join(root, "sys/fs/cgroup")):
        # the cgroup tree (no cgroup namespace: /proc/self/cgroup paths
        # resolve in it), so a program reads its CPU limit as in a pod
        mount("--rbind", "/sys/fs/cgroup", os.path.join(root, "sys/fs/cgroup"))
    dev = mountpoint(root, "/dev", True)
    mount("-t", "tmpfs", "-o", "nosuid,mode=0755,size=64k", "tmpfs", dev)
    for name in ("null", "zero", "random", "urandom", "tty"):
        mount("--bind", "/dev/" + name, mountpoint(root, "/dev/" + name,
                                                    False))
    for m in spec.get("mounts") or []:
        is_dir = os.path.isdir(m["src"])
        dst = mountpoint(root, m["dst"], is_dir)
        mount("--bind", m["src"], dst)
        if m.get("ro"):
            mount("-o", "remount,bind,ro", dst)
    if spec.get("read_only"):
        mount("-o", "remount,bind,ro", root)
    argv = spec["argv"]
    env = spec.get("env") or {}
    path = lookup(argv[0], env, root)
    if spec.get("emulator"):
        # a foreign architecture: qemu-user (copied into the root) runs it
        argv = [spec["emulator"], "-0", argv[0], path] + list(argv[1:])
        path = spec["emulator"]
    os.chroot(root)
    os.chdir(spec.get("cwd") or "/")
    os.setgroups(spec.get("groups") or [])
    os.setgid(spec.get("gid", 0))
    os.setuid(spec.get("uid", 0))
    if spec.get("no_new_privs"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            die("prctl(NO_NEW_PRIVS): errno %d" % ctypes.get_errno())
    try:
        os.execve(path, argv, env)
    except OSError as e:
        die('exec: "%s": %s' % (argv[0], e.strerror))


if __name__ == "__main__":
    main()
