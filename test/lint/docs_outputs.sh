#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.docs_outputs: every output block in README.md, docs/*.md, images/README.md and
# deploy/**/README.md is marked as an illustration or names the test that checks it
# (scripts/check-docs.py; the rule is in docs/testing.md, "Output shown in the docs"), and the
# checker refuses planted bad docs: an unmarked output block, a `$ ` session in a sh block, a
# marker naming a test that does not exist or that never checks the doc; and its `check` fails
# on output that drifted from the doc.
set -euo pipefail
src=${KPERF_SRC:?}
chk="$src/scripts/check-docs.py"
tmp=$(mktemp -d /tmp/kperf-docs-outputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "-- the docs as they are pass"
python3 "$chk" lint "$src"

refused() { # refused DOC PATTERN: lint of DOC (under $tmp) fails with a message matching PATTERN
  if python3 "$chk" lint "$tmp" "$1" 2>"$tmp/out"; then
    echo "FAIL: check-docs accepted $1:"; cat "$tmp/$1"; exit 1
  fi
  cat "$tmp/out"
  grep -q "$2" "$tmp/out" || { echo "FAIL: the message does not say '$2'" >&2; exit 1; }
  [ "$(wc -l <"$tmp/out")" = 1 ] || { echo "FAIL: more than the planted block flagged" >&2; exit 1; }
}
mkdir -p "$tmp/test/e2e"
printf '#!/bin/bash\necho no check here\n' >"$tmp/test/e2e/quiet.sh"

echo "-- an unmarked output block is refused, naming file and line"
printf '# t\n\n```sh\nkperf run\n```\n\nOutput:\n\n```\nkperf: done\n```\n' >"$tmp/a.md"
refused a.md '^check-docs: a.md:9: the untagged block shows output'
echo "-- a json block without a marker too; with one it passes"
printf 'x\n\n```json\n{"a": 1}\n```\n' >"$tmp/b.md"
refused b.md 'b.md:3: the json block shows output'
printf 'x\n\n<!-- illustration -->\n```json\n{"a": 1}\n```\n' >"$tmp/b.md"
python3 "$chk" lint "$tmp" b.md
echo "-- a sh block holding a \$ session (output follows) is refused"
printf '```sh\n$ kperf version\nkperf 0.1.0\n```\n' >"$tmp/c.md"
refused c.md 'c.md:1: the sh block shows output'
echo "-- output-of a test that does not exist, or one that never checks this doc"
printf '<!-- output-of: test/e2e/gone.sh -->\n```\nx 1\n```\n' >"$tmp/d.md"
refused d.md 'names test/e2e/gone.sh, which does not exist'
printf '<!-- output-of: test/e2e/quiet.sh -->\n```\nx 1\n```\n' >"$tmp/d.md"
refused d.md 'never runs `check-docs.py check d.md`'

echo "-- check: the same shape with other numbers matches; a changed line or a new row fails"
printf '<!-- output-of: test/e2e/t.sh ignore="^started" -->\n```\n$ kperf run\nstarted 2026\nName | P50  | P99\nrr   | 20.1 | 99.0\n\n2 measured\n```\n' >"$tmp/e.md"
printf 'started 1999 other\nName | P50   | P99\nrr   | 123.4 | 1000.9\n2 measured\n' >"$tmp/good.txt"
python3 "$chk" check "$tmp/e.md" t.sh "$tmp/good.txt"
printf 'Name | P50 | P99 | P99.9\nrr | 1 | 2 | 3\n2 measured\n' >"$tmp/col.txt"
printf 'Name | P50 | P99\nrr | 1 | 2\ncrr | 1 | 2\n2 measured\n' >"$tmp/row.txt"
for f in col row; do
  if python3 "$chk" check "$tmp/e.md" t.sh "$tmp/$f.txt" 2>"$tmp/out"; then
    echo "FAIL: check accepted drifted output ($f.txt)" >&2; exit 1
  fi
  grep -q 'e.md:2 no longer matches what t.sh printed' "$tmp/out" || { cat "$tmp/out"; exit 1; }
done
echo "ok"
