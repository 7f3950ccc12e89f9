#!/usr/bin/env bash
# lint.layers: the include rules of docs/architecture.md hold on the sources, and both guards
# (scripts/check-layers.py and the build's per-layer include folders) refuse a forbidden
# include planted in a copy of the tree.
# shellcheck disable=SC2046 # $(pkg-config --cflags ...) gives several flags, split on purpose
set -euo pipefail
src=${KPERF_SRC:?}
build=${KPERF_BIN:?}/..
tmp=$(mktemp -d /tmp/kperf-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "-- the tree as it is passes"
python3 "$src/scripts/check-layers.py" "$src"

echo "-- report/ including the Kubernetes backend is refused, naming the rule"
(cd "$src" && git ls-files -z base agent controller cmd 2>/dev/null || \
  find base agent controller cmd -name '*.[ch]' -print0) | (cd "$src" && xargs -0 cp --parents -t "$tmp")
sed -i '0,/^#include "/s//#include "controller\/k8s\/k8s_objects.h"\n#include "/' \
  "$tmp/controller/report/stats.c"
if python3 "$src/scripts/check-layers.py" "$tmp" 2>"$tmp/out"; then
  echo "FAIL: check-layers accepted controller/report/stats.c including controller/k8s/" >&2
  exit 1
fi
cat "$tmp/out"
grep -q "controller/report/stats.c:.*layer 'report'" "$tmp/out" || {
  echo "FAIL: the message does not name the file and its layer" >&2; exit 1; }
[ "$(grep -c 'stats.c' "$tmp/out")" = 1 ] || { echo "FAIL: other files flagged" >&2; exit 1; }

echo "-- a header internal to a folder is refused elsewhere"
cp "$src/controller/local/backend_local.c" "$tmp/controller/local/backend_local.c"
sed -i '0,/^#include "/s//#include "controller\/k8s\/k8s_backend_int.h"\n#include "/' \
  "$tmp/controller/local/backend_local.c"
if python3 "$src/scripts/check-layers.py" "$tmp" 2>"$tmp/out2"; then
  echo "FAIL: local/ including k8s internals accepted" >&2; exit 1
fi
grep -q "backend_local.c:.*layer 'local'" "$tmp/out2"

echo "-- cmd/ names a backend only in backend_pick.c; k8s_client never includes the sweep"
cp "$src/cmd/kperf/cmd_watch.c" "$tmp/cmd/kperf/cmd_watch.c"
sed -i '0,/^#include "/s//#include "controller\/local\/backend_local.h"\n#include "/' \
  "$tmp/cmd/kperf/cmd_watch.c"
cp "$src/controller/k8s/k8s_client.c" "$tmp/controller/k8s/k8s_client.c"
sed -i '0,/^#include "/s//#include "controller\/k8s\/k8s_sweep.h"\n#include "/' \
  "$tmp/controller/k8s/k8s_client.c"
if python3 "$src/scripts/check-layers.py" "$tmp" 2>"$tmp/out3"; then
  echo "FAIL: check-layers accepted cmd_watch.c naming the local backend" >&2; exit 1
fi
cat "$tmp/out3"
grep -q "cmd_watch.c:.*only cmd/kperf/backend_pick.c names a concrete backend" "$tmp/out3" || {
  echo "FAIL: cmd_watch.c including backend_local.h not refused" >&2; exit 1; }
grep -q "k8s_client.c:.*sits below controller/k8s/k8s_sweep.h" "$tmp/out3" || {
  echo "FAIL: k8s_client.c including the sweep not refused" >&2; exit 1; }
[ "$(grep -c 'check-layers: [a-z].*#include' "$tmp/out3")" = 4 ] || {
  echo "FAIL: other files flagged" >&2; exit 1; }

echo "-- the build refuses the same include: report's include folder has no k8s headers"
inc="$build/layers/kperf_report"
[ -d "$inc/controller/report" ] || { echo "FAIL: $inc missing (configure the build)" >&2; exit 1; }
if cc -fsyntax-only -D_GNU_SOURCE -I "$inc" $(pkg-config --cflags jansson) \
    "$tmp/controller/report/stats.c" 2>"$tmp/cc"; then
  echo "FAIL: stats.c including controller/k8s/ compiled in the report layer" >&2; exit 1
fi
grep -q 'controller/k8s/k8s_objects.h: No such file' "$tmp/cc" || { cat "$tmp/cc" >&2; exit 1; }
echo "-- and the unchanged file compiles there"
cc -fsyntax-only -D_GNU_SOURCE -I "$inc" $(pkg-config --cflags jansson) \
  "$src/controller/report/stats.c"
echo "ok"
