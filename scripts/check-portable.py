#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check-portable.py BUILD SRC - the controller of a -DKPERF_LOCAL_BACKEND=OFF build uses nothing
that only Linux has, so it builds on macOS (docs/laptop.md).

BUILD is a configured build with CMAKE_EXPORT_COMPILE_COMMANDS=ON. For every translation unit of
the controller in BUILD/compile_commands.json (base/, controller/, cmd/kperf/; the agent is
Linux-only and left out) it
  * refuses a controller/local/ file: that backend must not be in this build;
  * runs the compile command as `-E -H` and refuses a Linux-only header (HEADERS) included by one
    of our files (system headers including each other are the system's business);
  * refuses a Linux-only function, flag or field (NAMES) in the unit and in our headers it
    includes, outside base/portable.c (which spells each call for both systems under #ifdef).
Prints one line per finding; exit 1 if any.
"""
import json
import os
import re
import shlex
import subprocess
import sys

HEADERS = re.compile(r"/(linux|asm|asm-generic|netlink|libmnl|gnu|bits)/|/(sys/(epoll|prctl|sendfile|"
                     r"signalfd|timerfd|eventfd|inotify|sysinfo|vfs|statfs|capability|personality|"
                     r"sysmacros|fsuid|klog|mount)|mntent|endian|byteswap|error|malloc|features|"
                     r"pty|shadow|crypt)\.h$")
NAMES = re.compile(r"\b(pipe2|accept4|dup3|prctl|getrandom|explicit_bzero|epoll_\w+|signalfd|"
                   r"timerfd_\w+|eventfd|inotify_\w+|setns|unshare|clone|sendfile|splice|vmsplice|"
                   r"memfd_create|renameat2|syncfs|statx|gettid|sched_[gs]etaffinity|"
                   r"pthread_condattr_setclock|pthread_setname_np|pthread_\w+_np|secure_getenv|"
                   r"strchrnul|mempcpy|get_nprocs\w*|sysinfo|getauxval|qsort_r|strerror_r|"
                   r"SOCK_CLOEXEC|SOCK_NONBLOCK|MSG_NOSIGNAL|O_TMPFILE|O_PATH|O_NOATIME|"
                   r"SO_BINDTODEVICE|TCP_INFO|CLOCK_BOOTTIME|st_[amc]tim|program_invocation_\w+|"
                   r"fopencookie|ppoll|PR_SET_\w+)\b")
GUARD_FILE = "base/portable.c"


def units(build, src):
    with open(os.path.join(build, "compile_commands.json")) as f:
        cmds = json.load(f)
    for c in cmds:
        rel = os.path.relpath(os.path.realpath(c["file"]), src)
        if rel.startswith(("agent/", "cmd/kperf-agent/", "test/")):
            continue
        yield rel, c


def ours(path, src):
    """A file of the repository (the build's per-layer include folders link to them)."""
    return os.path.realpath(path).startswith(src + os.sep)


def includes(c, rel, src):
    """Yields (includer, header) for every #include the preprocessor follows in the unit."""
    args = c.get("arguments") or shlex.split(c["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    out += ["-E", "-H", "-o", os.devnull]
    p = subprocess.run(out, cwd=c["directory"], capture_output=True, text=True)
    if p.returncode != 0:
        print("check-portable: %s: the preprocessor failed:\n%s" % (rel, p.stderr), file=sys.stderr)
        yield None, None
        return
    stack = [os.path.join(src, rel)]
    for line in p.stderr.splitlines():
        m = re.match(r"^(\.+) (\S+)$", line)
        if not m:
            continue
        depth = len(m.group(1))
        del stack[depth:]
        yield stack[depth - 1], m.group(2)
        stack.append(m.group(2))


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def main(build, src):
    src = os.path.realpath(src)
    bad, seen, n = [], set(), 0
    for rel, c in units(build, src):
        n += 1
        if rel.startswith("controller/local/"):
            bad.append("%s: the local backend is in a -DKPERF_LOCAL_BACKEND=OFF build" % rel)
            continue
        files = {os.path.join(src, rel)}
        for parent, header in includes(c, rel, src):
            if parent is None:
                bad.append("%s: does not preprocess" % rel)
                break
            if ours(header, src):
                files.add(os.path.realpath(header))
            elif ours(parent, src) and HEADERS.search(header) and \
                    os.path.relpath(os.path.realpath(parent), src) != GUARD_FILE:
                bad.append("%s: %s includes %s (Linux only)"
                           % (rel, os.path.relpath(os.path.realpath(parent), src), header))
        for f in files - seen:
            seen.add(f)
            frel = os.path.relpath(f, src)
            if frel == GUARD_FILE:
                continue
            with open(f, encoding="utf-8") as fh:
                for i, line in enumerate(strip_comments(fh.read()).split("\n"), 1):
                    for m in NAMES.finditer(line):
                        bad.append("%s:%d: %s is Linux only (base/portable.h has the portable "
                                   "spelling, or add one there)" % (frel, i, m.group(1)))
    for b in sorted(set(bad)):
        print("check-portable: " + b, file=sys.stderr)
    if n == 0:
        print("check-portable: no controller unit in %s/compile_commands.json" % build,
              file=sys.stderr)
        return 1
    print("check-portable: %d units, %d files of ours: %s" % (n, len(seen),
                                                            "ok" if not bad else "%d findings" % len(set(bad))))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
