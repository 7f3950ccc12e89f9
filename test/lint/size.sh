#!/usr/bin/env bash
# lint.size: the size rule of STYLE.md holds on the sources (no .c/.h/.py/.sh file over 800
# lines, no C function over 100; scripts/check-size.py), and the checker refuses a planted oversized file
# and a planted long function in a copy of the tree, naming each.
set -euo pipefail
src=${KPERF_SRC:?}
tmp=$(mktemp -d /tmp/kperf-size.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "-- the tree as it is passes"
python3 "$src/scripts/check-size.py" "$src"

echo "-- a copy of the tree with one file of 801 lines is refused, naming it"
(cd "$src" && git ls-files -z '*.c' '*.h') | (cd "$src" && xargs -0 cp --parents -t "$tmp")
base=$(wc -l < "$tmp/base/hist.c")
for ((i = base; i < 801; i++)); do echo "/* padding */"; done >> "$tmp/base/hist.c"
if python3 "$src/scripts/check-size.py" "$tmp" 2>"$tmp/out"; then
  echo "FAIL: check-size accepted base/hist.c at 801 lines" >&2; exit 1
fi
cat "$tmp/out"
grep -q '^base/hist.c: 801 lines (max 800)' "$tmp/out" || {
  echo "FAIL: the message does not name the file and its length" >&2; exit 1; }
[ "$(grep -c ': [0-9]* lines (max\|is [0-9]* lines' "$tmp/out")" = 1 ] || {
  echo "FAIL: other files flagged" >&2; exit 1; }

echo "-- a Python file (kube-sim) of 801 lines is refused too"
mkdir -p "$tmp/test/kube-sim/kubesim"
for ((i = 0; i < 801; i++)); do echo "# padding"; done > "$tmp/test/kube-sim/kubesim/big.py"
if python3 "$src/scripts/check-size.py" "$tmp" 2>"$tmp/out"; then
  echo "FAIL: check-size accepted an 801-line .py" >&2; exit 1
fi
grep -q '^test/kube-sim/kubesim/big.py: 801 lines (max 800)' "$tmp/out" || {
  cat "$tmp/out" >&2; echo "FAIL: the .py is not named" >&2; exit 1; }
rm "$tmp/test/kube-sim/kubesim/big.py"

echo "-- a function of 101 lines is refused, one of 100 is not"
cp "$src/base/hist.c" "$tmp/base/hist.c"
long_fn() { # long_fn NAME BODY_LINES: a function whose braces and body span BODY_LINES + 2
  printf 'int %s(void);\nint %s(void)\n{\n    int n = 0;\n' "$1" "$1"
  for ((i = 0; i < $2 - 2; i++)); do echo "    n++;"; done
  printf '    return n;\n}\n'
}
long_fn planted_long 99 >> "$tmp/base/hist.c"
long_fn planted_fits 98 >> "$tmp/base/hist.c"
if python3 "$src/scripts/check-size.py" "$tmp" 2>"$tmp/out2"; then
  echo "FAIL: check-size accepted a function of 101 lines" >&2; exit 1
fi
cat "$tmp/out2"
grep -q '^base/hist.c:[0-9]*: function planted_long is 101 lines (max 100)' "$tmp/out2" || {
  echo "FAIL: the long function is not named with its length" >&2; exit 1; }
if grep -q planted_fits "$tmp/out2"; then
  echo "FAIL: a function of exactly 100 lines was flagged" >&2; exit 1
fi
echo "ok"
