#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_static_build.sh - the external host's agent build of docs/external.md ("1. The external
# host") yields a static binary: the test takes the `cmake` lines of that page's first `sh` block
# that holds KPERF_STATIC, runs them as written (only the build folder is moved into this build
# tree, so a second run reuses it; ccache when present), and checks the result with `file`
# (statically linked) and `ldd` (not a dynamic executable), and that it runs. No root, no
# network. Runtime about 20 s cold with a warm ccache, a few seconds after.
. "$(dirname "$0")/lib/harness.sh"
doc="$KPERF_SRC/docs/external.md"
out="$KPERF_BIN/../agent-static-doc"
command -v file >/dev/null && command -v ldd >/dev/null || { echo "skip: needs file and ldd"; exit 77; }

# the cmake lines of the first ```sh block holding KPERF_STATIC, build-agent -> $out
mapfile -t cmds < <(awk '/^```sh$/ { inb = 1; blk = ""; next }
    /^```$/ { if (inb && blk ~ /KPERF_STATIC/) { printf "%s", blk; exit } inb = 0; next }
    inb && /^cmake / { blk = blk $0 "\n" }' "$doc")
assert_eq "docs/external.md holds the two cmake lines of the static agent" 2 "${#cmds[@]}"
[ "${#cmds[@]}" = 2 ] || finish
command -v ccache >/dev/null && export CMAKE_C_COMPILER_LAUNCHER=ccache
for c in "${cmds[@]}"; do
    c=${c//build-agent/$out}
    echo "+ $c"
    (cd "$KPERF_SRC" && bash -c "$c") >"$out.log" 2>&1 || { cat "$out.log"; fail "the documented command failed: $c"; finish; }
done
bin="$out/bin/kperf-agent"
check "the documented build made $bin" [ -x "$bin" ]
f=$(file -L "$bin")
echo "$f"
assert_contains "file says statically linked" "$f" "statically linked"
l=$(ldd "$bin" 2>&1)
echo "ldd: $l"
assert_contains "ldd says not a dynamic executable" "$l" "not a dynamic executable"
check "the static agent runs (version)" "$bin" version
finish
