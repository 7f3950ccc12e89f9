#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check-docs.py - every output shown in the docs is checked by a test or marked as an illustration.

  check-docs.py lint SRC [DOC...]      every output block carries a marker (docs/testing.md, "Output
                                       shown in the docs"); DOCs default to README.md, docs/*.md,
                                       images/README.md and deploy/**/README.md under SRC
  check-docs.py check DOC TEST ACTUAL  each block of DOC marked `output-of: TEST` appears in the
                                       file ACTUAL (what the test's command printed), compared
                                       line by line with numbers masked; a drift fails

The rule (lint): a fenced block tagged with a command or configuration language (sh, yaml, ...)
holds input only, unless a line starts with a `$ ` prompt (a session, hence output). Every other
fenced block (untagged, text, console, json, ...) shows output or a made-up example and needs,
on the line just before it, `<!-- illustration -->` or `<!-- output-of: test/e2e/NAME.sh -->`.
An output-of test must exist and call this script's `check` on that doc, so the marker names a
real check. Optional `ignore="REGEX"` in the marker drops lines that differ per machine (kernel,
start time) from both sides; the doc block's `$ ` lines are the command and are not compared.
"""
import glob
import os
import re
import sys

INPUT_LANGS = {"sh", "bash", "shell", "zsh", "yaml", "yml", "c", "python", "dockerfile",
               "cmake", "make", "ini", "toml"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*(illustration\b.*|output-of:\s*(\S+)(.*?))\s*-->\s*$")
IGNORE = re.compile(r'ignore="([^"]*)"')


def blocks(path):
    """Yields (line number of the fence, language, lines, marker line or None) per fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i, prev = 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                prev = lines[i]
            i += 1
            continue
        fence, start, body = m.group(2), i, []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c.group(2)[0] == fence[0] and len(c.group(2)) >= len(fence) and not c.group(3):
                break
            body.append(lines[i])
            i += 1
        yield start + 1, m.group(3).lower(), body, prev
        prev = None
        i += 1


def shows_output(lang, body):
    if lang in INPUT_LANGS:
        return any(line.lstrip().startswith("$ ") for line in body)
    return True


def default_docs(src):
    docs = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=src))
    docs += ["images/README.md"] + sorted(glob.glob("deploy/**/README.md", root_dir=src,
                                                    recursive=True))
    return [d for d in docs if os.path.exists(os.path.join(src, d))]


def lint(src, docs):
    bad = 0
    for doc in docs or default_docs(src):
        for line, lang, body, prev in blocks(os.path.join(src, doc)):
            if not shows_output(lang, body):
                continue
            m = MARKER.match(prev or "")
            where = "%s:%d: the %s block" % (doc, line, lang or "untagged")
            if not m:
                print("check-docs: %s shows output: put <!-- illustration --> or "
                      "<!-- output-of: test/e2e/NAME.sh --> on the line before it" % where,
                      file=sys.stderr)
                bad += 1
            elif m.group(2):
                bad += check_marker(src, doc, where, m.group(2))
    return 1 if bad else 0


def check_marker(src, doc, where, test):
    path = os.path.join(src, test)
    if not os.path.isfile(path):
        print("check-docs: %s names %s, which does not exist" % (where, test), file=sys.stderr)
        return 1
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not re.search(r"check-docs\.py\"?\s+check\s+\"?(\$\w+/)?%s\b" % re.escape(doc), text):
        print("check-docs: %s names %s, which never runs `check-docs.py check %s`"
              % (where, test, doc), file=sys.stderr)
        return 1
    return 0


def mask(line):
    """The stable shape of a line: numbers become #, rules of dashes one ---, spaces one."""
    line = re.sub(r"\d+(\.\d+)?", "#", line)
    line = re.sub(r"-{3,}", "---", line)
    return " ".join(line.split())


def stable(lines, ignore):
    out = []
    for line in lines:
        if not line.strip() or line.lstrip().startswith("$ "):
            continue
        if ignore and re.search(ignore, line):
            continue
        out.append(mask(line))
    return out


def check(doc, test, actual_path):
    with open(actual_path, encoding="utf-8") as f:
        actual = f.read().split("\n")
    found = 0
    for line, _, body, prev in blocks(doc):
        m = MARKER.match(prev or "")
        if not m or not m.group(2) or not (m.group(2) == test or m.group(2).endswith("/" + test)):
            continue
        found += 1
        ig = IGNORE.search(m.group(3))
        want, got = stable(body, ig and ig.group(1)), stable(actual, ig and ig.group(1))
        n = len(want)
        if not any(got[k:k + n] == want for k in range(len(got) - n + 1)):
            print("check-docs: %s:%d no longer matches what %s printed (numbers masked);\n"
                  "--- the doc (masked)\n%s\n--- the output (masked)\n%s\n--- the output\n%s"
                  % (doc, line, test, "\n".join(want), "\n".join(got), "\n".join(actual)),
                  file=sys.stderr)
            return 1
    if not found:
        print("check-docs: %s has no block marked output-of: %s" % (doc, test), file=sys.stderr)
        return 1
    print("check-docs: %s: %d block(s) match what %s printed" % (doc, found, test))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "lint":
        return lint(argv[1], argv[2:])
    if len(argv) == 4 and argv[0] == "check":
        return check(argv[1], argv[2], argv[3])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
