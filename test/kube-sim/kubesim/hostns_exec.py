# SPDX-License-Identifier: Apache-2.0
"""hostns_exec - the last step of starting a host-filesystem container
that mounts a volume at a path a program opens by a built-in name (the
service-account directory /var/run/secrets/kubernetes.io/serviceaccount,
which kube-sim cannot rewrite in argv): run as `unshare --mount
--propagation private python3 -I hostns_exec.py SPEC.json` inside the pod's
network namespace.

Owns: that container's mount namespace. For each mount, if the mountPath
does not exist on the host, its deepest existing ancestor (e.g. /run) is
covered by a tmpfs in which every entry of the original is bind-mounted
back (so the rest of /run looks the same), and the missing directories are
made in the tmpfs; then the volume is bind-mounted at the mountPath
(read-only when asked). Nothing changes outside the private namespace, and
nothing is written to the host. Then it execs argv with env.

SPEC.json: {"argv", "env", "mounts": [{"src", "dst", "ro"}], "stash": a
directory of the pod (an empty mount point, made here)}.
Python 3 standard library only (ctypes for mount(2)).
"""
import ctypes
import json
import os
import sys

MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384
MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def die(msg):
    sys.stderr.write("kube-sim: container start: %s\n" % msg)
    sys.exit(128)


def mount(src, dst, fstype, flags, data=None):
    if _libc.mount(src.encode() if src else None, dst.encode(),
                   fstype.encode() if fstype else None, flags,
                   data.encode() if data else None) != 0:
        e = ctypes.get_errno()
        die("mount %s on %s: %s" % (src, dst, os.strerror(e)))


def shadow(top, stash):
    """Cover directory top with a tmpfs that shows the same entries
    (each bind-mounted back from the original), so directories can be
    made under it without touching the host."""
    os.makedirs(stash, exist_ok=True)
    mount(top, stash, None, MS_BIND | MS_REC)
    mount("tmpfs", top, "tmpfs", 0, "mode=0755")
    for name in os.listdir(stash):
        src, dst = os.path.join(stash, name), os.path.join(top, name)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
            continue
        if os.path.isdir(src):
            os.mkdir(dst)
        else:
            open(dst, "w").close()
        mount(src, dst, None, MS_BIND | MS_REC)
    _libc.umount2(stash.encode(), MNT_DETACH)


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    for k, m in enumerate(spec.get("mounts") or []):
        dst = os.path.realpath(m["dst"])
        if os.path.isfile(dst):
            pass  # a file over a file (/etc/resolv.conf)
        elif not os.path.isdir(dst):
            top = dst
            while not os.path.exists(top):
                top = os.path.dirname(top)
            if not os.path.isdir(top):
                die("mount path %s: %s is not a directory" % (m["dst"], top))
            shadow(top, os.path.join(spec["stash"], str(k)))
            os.makedirs(dst)
        mount(m["src"], dst, None, MS_BIND | MS_REC)
        if m.get("ro"):
            mount("none", dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    argv, env = spec["argv"], spec.get("env") or {}
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        die('exec: "%s": %s' % (argv[0], e.strerror))


if __name__ == "__main__":
    main()
