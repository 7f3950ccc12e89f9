#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves the final image stages work without a Docker engine: builds kperf-agent statically
# (-DKPERF_STATIC=ON), stages both image root filesystems with images/stage-rootfs.sh (what the
# Dockerfiles' last stage copies into FROM scratch), then runs the binaries chrooted into those
# otherwise empty roots as the image's user 65532: an agent server and client measure TCP_RR
# over loopback, and kperf prints its version and the manifests of a run.
set -euo pipefail
SRC="${KPERF_SRC:?}"
KPERF="${KPERF_BIN:?}/kperf"
[ "$(id -u)" = 0 ] || { echo "needs root for chroot"; exit 77; }
command -v chroot >/dev/null && command -v jq >/dev/null || { echo "no chroot/jq"; exit 77; }
[ -x "$KPERF" ] || { echo "no $KPERF"; exit 77; }
# shellcheck source=lib/agent_port.sh
. "$SRC/test/e2e/lib/agent_port.sh"
tmp=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

# 1. static agent (KPERF_STATIC_AGENT=path reuses one already built)
agent=${KPERF_STATIC_AGENT:-$tmp/build/bin/kperf-agent}
if [ -z "${KPERF_STATIC_AGENT:-}" ]; then
    cmake -S "$SRC" -B "$tmp/build" -DKPERF_STATIC=ON -DKPERF_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 &&
        cmake --build "$tmp/build" -j2 --target kperf-agent >>"$tmp/cmake.log" 2>&1 ||
        { tail -20 "$tmp/cmake.log"; echo "FAIL: static kperf-agent does not build"; exit 1; }
fi
if ldd "$agent" >/dev/null 2>&1; then
    echo "FAIL: kperf-agent is dynamically linked:"; ldd "$agent"; fail=1
fi
sh "$SRC/images/stage-rootfs.sh" "$tmp/agent-root" "$agent"
# the agent root holds the binary and /etc only: no library, no shell
# (find's list captured: `find | grep -q .` under pipefail is false, so passes, when find dies of SIGPIPE)
if [ -n "$(find "$tmp/agent-root" -name '*.so*')" ]; then
    echo "FAIL: shared libraries staged for a static agent"; fail=1
fi
[ ! -e "$tmp/agent-root/bin/sh" ] || { echo "FAIL: a shell in the agent root"; fail=1; }

printf 'chroot-test-token' >"$tmp/agent-root/tmp/token"
chmod 0444 "$tmp/agent-root/tmp/token"
chroot --userspec=65532:65532 "$tmp/agent-root" /usr/local/bin/kperf-agent server \
    --port 0 --bind 127.0.0.1 --token-file /tmp/token >"$tmp/server.log" 2>&1 &
server_pid=$!
port=$(announced_port "$tmp/server.log" "$server_pid") || port=""
ok=0
if [ -n "$port" ] && chroot --userspec=65532:65532 "$tmp/agent-root" \
    /usr/local/bin/kperf-agent client \
    --server "127.0.0.1:$port" --tests TCP_RR --duration 1s --samples 1 \
    --token-file /tmp/token --json >"$tmp/result.json" 2>"$tmp/client.log"; then
    ok=1
fi
if [ "$ok" = 1 ] && jq -e '.schema == "kperf.result/v1" and (.results[0].ops > 0)' \
    "$tmp/result.json" >/dev/null; then
    echo "ok: static agent in an empty root: $(jq -r '.results[0].ops_per_sec' "$tmp/result.json") TCP_RR ops/s"
else
    echo "FAIL: agent client in chroot"; cat "$tmp/client.log" "$tmp/server.log"; fail=1
fi

# 2. controller: dynamic kperf with exactly its ldd closure
sh "$SRC/images/stage-rootfs.sh" "$tmp/ctl-root" "$KPERF"
out=$(chroot --userspec=65532:65532 "$tmp/ctl-root" /usr/local/bin/kperf version) ||
    { echo "FAIL: kperf version in chroot"; fail=1; }
echo "ok: $out in an empty root ($(find "$tmp/ctl-root" -name '*.so*' | wc -l) libraries)"
chroot --userspec=65532:65532 "$tmp/ctl-root" /usr/local/bin/kperf manifests --format json \
    --scenarios all --nodes a,b >"$tmp/manifests.ndjson" ||
    { echo "FAIL: kperf manifests in chroot"; fail=1; }
[ "$(wc -l <"$tmp/manifests.ndjson")" -ge 6 ] || { echo "FAIL: manifests output short"; fail=1; }
# libcurl, TLS and the kubeconfig loader work in the root: a refused connection is reported
cat >"$tmp/ctl-root/tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
chmod 0444 "$tmp/ctl-root/tmp/kubeconfig"
set +e
chroot --userspec=65532:65532 "$tmp/ctl-root" /usr/local/bin/kperf cleanup \
    --kubeconfig /tmp/kubeconfig --timeout 5s >"$tmp/cleanup.out" 2>"$tmp/cleanup.err"
rc=$?
set -e
if [ "$rc" = 1 ] && grep -q "kperf: error: .*127.0.0.1" "$tmp/cleanup.err"; then
    echo "ok: kperf reaches libcurl in the root: $(grep -m1 "kperf: error:" "$tmp/cleanup.err" | cut -c1-160)"
else
    echo "FAIL: kperf cleanup against a closed port: rc=$rc"; cat "$tmp/cleanup.err"; fail=1
fi
exit "$fail"
