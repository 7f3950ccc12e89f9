#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_termmsg - kube-sim's termination messages (kubesim/termmsg.py)
without root: the file made for a start (empty, mounted at the container's
terminationMessagePath or /dev/termination-log, writable), the message read
at exit (cut at 4096 bytes, an empty file is no message), and the
FallbackToLogsOnError policy (the log's last lines, only for a failed
container with an empty file)."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kubesim import termmsg  # noqa: E402

FAILS = []


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name,
                       (": " + detail) if detail and not cond else ""))
    if not cond:
        FAILS.append(name)


def main():
    d = tempfile.mkdtemp(prefix="kperf-termmsg.")
    try:
        return checks(d)
    finally:
        shutil.rmtree(d)


def checks(d):
    spec = {"name": "compare"}
    m = termmsg.prepare(d, spec, os.getuid(), os.getgid())
    check("default path, writable mount", m["dst"] == "/dev/termination-log"
          and m["ro"] is False and os.path.getsize(m["src"]) == 0, str(m))
    check("an empty file is no message",
          termmsg.message(d, spec, 3) is None)
    with open(m["src"], "w") as f:
        f.write("kperf: regression (exit 3): 1 of 6 rows\n")
    got = termmsg.message(d, spec, 3)
    check("the file is the message",
          got == "kperf: regression (exit 3): 1 of 6 rows\n", repr(got))
    with open(m["src"], "w") as f:
        f.write("x" * 10000)
    check("cut at 4096 bytes", len(termmsg.message(d, spec, 0)) == 4096)
    m = termmsg.prepare(d, spec, os.getuid(), os.getgid())
    check("a new start begins empty", os.path.getsize(m["src"]) == 0)

    spec2 = {"name": "run", "terminationMessagePath": "/tmp/last-words",
             "terminationMessagePolicy": "FallbackToLogsOnError"}
    m2 = termmsg.prepare(d, spec2, os.getuid(), os.getgid())
    check("the spec's path", m2["dst"] == "/tmp/last-words", str(m2))
    log = os.path.join(d, "run.0.log")
    with open(log, "w") as f:
        f.write("".join("line %d\n" % i for i in range(200)))
    got = termmsg.message(d, spec2, 1, log) or ""
    check("FallbackToLogsOnError: a failed container's last 80 log lines",
          got.startswith("line 120\n") and got.endswith("line 199\n"),
          repr(got[:40]))
    check("FallbackToLogsOnError: not for a container that succeeded",
          termmsg.message(d, spec2, 0, log) is None)
    with open(m2["src"], "w") as f:
        f.write("own words")
    check("FallbackToLogsOnError: the file wins when written",
          termmsg.message(d, spec2, 1, log) == "own words")
    check("File policy: no log fallback",
          termmsg.message(d, {"name": "other"}, 1, log) is None)
    if FAILS:
        print("FAILED: %s" % ", ".join(FAILS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
