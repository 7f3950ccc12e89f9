#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.portable_controller: `kperf` builds without its local backend (-DKPERF_LOCAL_BACKEND=OFF,
# the controller for macOS: docs/laptop.md) and then includes
# no Linux-only header and calls no Linux-only function (scripts/check-portable.py, on every
# unit of that build); such a kperf refuses --local with one line and exit 2 and holds none of
# the local backend; and the checker refuses a planted Linux-only header, function and local/
# unit. The build folder sits in this build tree and is reused (cold about 40 s with ccache
# warm, then a few seconds; the check itself about 7 s).
set -euo pipefail
src=${KPERF_SRC:?}
out=${KPERF_BIN:?}/../portable-controller
tmp=$(mktemp -d /tmp/kperf-portable.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "-- the controller builds with -DKPERF_LOCAL_BACKEND=OFF"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DKPERF_WERROR=ON -DKPERF_TESTS=OFF \
  -DKPERF_LOCAL_BACKEND=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${launcher[@]}" >/dev/null
cmake --build "$out" -j2 --target kperf >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }

echo "-- no Linux-only header or function in any unit of it"
python3 "$src/scripts/check-portable.py" "$out" "$src"

echo "-- it refuses --local with one line, exit 2, and holds none of the local backend"
rc=0; "$out/bin/kperf" run --local --duration 1s >"$tmp/o" 2>"$tmp/e" || rc=$?
cat "$tmp/e"
[ "$rc" = 2 ] || { echo "FAIL: kperf run --local exited $rc, want 2" >&2; exit 1; }
[ "$(wc -l <"$tmp/e")" = 1 ] && grep -q -- '--local is not available in this build' "$tmp/e" || {
  echo "FAIL: not the one-line refusal" >&2; exit 1; }
if nm "$out/bin/kperf" | grep -E 'backend_local_new|localnet_'; then
  echo "FAIL: the local backend is linked in" >&2; exit 1
fi

echo "-- the checker refuses a planted Linux-only header, function and local/ unit"
mkdir -p "$tmp/src/controller/k8s" "$tmp/src/controller/local" "$tmp/b"
printf '#include <sys/epoll.h>\n#include <sys/socket.h>\nint f(int s);\nint f(int s) { return accept4(s, 0, 0, SOCK_CLOEXEC); }\n' \
  >"$tmp/src/controller/k8s/planted.c"
printf '#include <stdio.h>\nint g(void);\nint g(void) { return 0; } /* pipe2( in a comment is fine */\n' \
  >"$tmp/src/controller/k8s/fine.c"
printf 'int h(void);\nint h(void) { return 0; }\n' >"$tmp/src/controller/local/l.c"
python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
json.dump([{"directory": t + "/b", "file": t + "/src/" + f, "command": "cc -D_GNU_SOURCE -c %s/src/%s -o x.o" % (t, f)}
           for f in ("controller/k8s/planted.c", "controller/k8s/fine.c", "controller/local/l.c")],
          open(t + "/b/compile_commands.json", "w"))
PY
if python3 "$src/scripts/check-portable.py" "$tmp/b" "$tmp/src" 2>"$tmp/out"; then
  echo "FAIL: check-portable accepted the planted tree" >&2; exit 1
fi
cat "$tmp/out"
for want in 'controller/k8s/planted.c: controller/k8s/planted.c includes .*sys/epoll.h' \
    'controller/k8s/planted.c:4: accept4 is Linux only' 'controller/k8s/planted.c:4: SOCK_CLOEXEC is Linux only' \
    'controller/local/l.c: the local backend is in'; do
  grep -q "$want" "$tmp/out" || { echo "FAIL: no finding '$want'" >&2; exit 1; }
done
if grep -q fine.c "$tmp/out"; then echo "FAIL: fine.c flagged" >&2; exit 1; fi
echo "ok"
