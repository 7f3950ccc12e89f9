#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check-size.py - the size rule of STYLE.md: no tracked .c/.h/.py/.sh file over 800 lines and
no C function over 100 lines (test code included). Owns the counting only; which files it reads is
git's list (or, outside a checkout, every .c/.h under the tree).

A function is what clang-format's Linux brace style makes of it: a line that is exactly "{"
opens a function body and the next line that is exactly "}" closes it; its length is the body
from "{" to "}" inclusive. The name is the identifier before the first "(" of the signature
lines above the brace.

Usage: check-size.py [SRC_DIR]   exit 0 when everything fits, 1 with one line per offence.
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FUNC_LINES = 100

# Generated or vendored files, which the rule does not cover: path -> why. None today; a file
# listed here must say where it comes from.
EXEMPT = {}

NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def tracked_files(src):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "*.c", "*.h", "*.py", "*.sh"],
                             check=True, capture_output=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if names:
        return sorted(names)
    found = []
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        for f in files:
            if f.endswith((".c", ".h", ".py", ".sh")):
                found.append(os.path.relpath(os.path.join(root, f), src))
    return sorted(found)


def function_name(lines, brace):
    """The name of the function whose body opens at lines[brace] ("?" if not found)."""
    sig = []
    for i in range(brace - 1, max(brace - 8, -1), -1):
        line = lines[i]
        if not line.strip() or line.rstrip().endswith((";", "}")) or line.startswith("#"):
            break
        sig.insert(0, line)
    m = NAME.search(" ".join(sig))
    return m.group(1) if m else "?"


def check_file(src, rel):
    """One line per offence of the file src/rel."""
    with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    bad = []
    if len(lines) > MAX_FILE_LINES:
        bad.append("%s: %d lines (max %d): split it along its seams"
                   % (rel, len(lines), MAX_FILE_LINES))
    start = None
    if not rel.endswith((".c", ".h")):
        return bad  # the function rule is C's (clang-format's brace lines)
    for i, line in enumerate(lines):
        if line == "{" and start is None:
            start = i
        elif line == "}" and start is not None:
            n = i - start + 1
            if n > MAX_FUNC_LINES:
                bad.append("%s:%d: function %s is %d lines (max %d)"
                           % (rel, start + 1, function_name(lines, start), n, MAX_FUNC_LINES))
            start = None
    return bad


def main(argv):
    src = argv[1] if len(argv) > 1 else os.getcwd()
    bad = []
    files = [f for f in tracked_files(src) if f not in EXEMPT]
    for rel in files:
        bad.extend(check_file(src, rel))
    for line in bad:
        print(line, file=sys.stderr)
    if bad:
        print("check-size: %d offence(s) in %d files checked" % (len(bad), len(files)),
              file=sys.stderr)
        return 1
    print("check-size: %d files, none over %d lines, no function over %d"
          % (len(files), MAX_FILE_LINES, MAX_FUNC_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
