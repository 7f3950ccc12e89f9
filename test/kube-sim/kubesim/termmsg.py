# SPDX-License-Identifier: Apache-2.0
"""termmsg - a container's termination message, as a kubelet keeps it.

Owns: the file a container writes its last words to (spec
terminationMessagePath, default /dev/termination-log) and what the
terminated state says of them. Before a start, prepare() makes an empty
host file for this start of the container, writable by the container's
user, which pod.py bind-mounts at the path (so it is writable even under
readOnlyRootFilesystem, as a kubelet's bind mount is). At exit, message()
reads it: at most MAX_BYTES (the kubelet's limit for one container), and
with terminationMessagePolicy FallbackToLogsOnError, when the file is
empty and the container failed, the last MAX_LOG_LINES lines of its log
(at most MAX_BYTES of them). An empty message is no message. Leaves the
mount itself to chroot_exec.py and the state to pod.py.
"""
import os

DEFAULT_PATH = "/dev/termination-log"
MAX_BYTES = 4096
MAX_LOG_LINES = 80


def host_file(pod_dir, name):
    """The host file behind container name's termination message."""
    return os.path.join(pod_dir, "termination", name)


def prepare(pod_dir, spec, uid, gid):
    """An empty file for container spec's message, owned by uid:gid (the
    container's user), and the mount that puts it at the container's
    terminationMessagePath: {"src", "dst", "ro": False}."""
    path = host_file(pod_dir, spec["name"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w"):
        pass
    try:
        os.chown(path, uid, gid)
    except (PermissionError, OverflowError):
        os.chmod(path, 0o666)  # kube-sim without root: anyone may write
    return {"src": path, "ro": False,
            "dst": spec.get("terminationMessagePath") or DEFAULT_PATH}


def _tail(log_path):
    try:
        with open(log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * MAX_BYTES))
            data = f.read()
    except OSError:
        return b""
    lines = data.splitlines(keepends=True)[-MAX_LOG_LINES:]
    return b"".join(lines)[-MAX_BYTES:]


def message(pod_dir, spec, exit_code, log_path=None):
    """The terminated state's message of container spec, or None."""
    data = b""
    try:
        with open(host_file(pod_dir, spec["name"]), "rb") as f:
            data = f.read(MAX_BYTES)
    except OSError:
        pass
    policy = spec.get("terminationMessagePolicy") or "File"
    if not data and exit_code != 0 and policy == "FallbackToLogsOnError" \
            and log_path:
        data = _tail(log_path)
    text = data.decode("utf-8", "replace")
    return text or None
