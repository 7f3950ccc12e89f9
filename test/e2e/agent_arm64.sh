#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_arm64.sh - the wire protocol across architectures: the static arm64 agent, cross-built
# by scripts/build-agent-arch.sh and run under qemu-user, measures TCP_RR and TCP_STREAM over
# loopback with the native amd64 agent, each side once the client and once the server, forward
# and reverse. Every result validates (with both binaries), counts operations and bytes, says
# which machine measured (agent.machine) and which served (server_facts.machine); a wrong token
# is refused across architectures too. Installs nothing: scripts/test.sh installs
# crossbuild-essential-arm64, qemu-user-static and the arm64 -dev libraries, and the test is
# skipped (77) only when they are missing. qemu is slow: short tests, no speed assertions, and
# every wait is bounded generously (docs/images.md, "arm64").
set -u
BIN="${KPERF_BIN:-$(dirname "$0")/../../build/bin}"
SRC="${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}"
NATIVE="$BIN/kperf-agent"
# shellcheck source=SCRIPTDIR/lib/agent_port.sh
. "$(dirname "$0")/lib/agent_port.sh"
[ -x "$NATIVE" ] || { echo "SKIP: $NATIVE not built"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || { echo "SKIP: needs an amd64 host"; exit 77; }
missing=""
command -v aarch64-linux-gnu-gcc >/dev/null || missing="$missing crossbuild-essential-arm64"
command -v qemu-aarch64-static >/dev/null || missing="$missing qemu-user-static"
for lib in libuv_a.a:libuv1-dev libjansson.a:libjansson-dev libyaml.a:libyaml-dev; do
    [ -e "/usr/lib/aarch64-linux-gnu/${lib%%:*}" ] || missing="$missing ${lib#*:}:arm64"
done
if [ -n "$missing" ]; then
    echo "SKIP: cross toolchain missing: dpkg --add-architecture arm64; apt-get install$missing"
    exit 77
fi

WORK=$(mktemp -d /tmp/kpa-arm64.XXXXXX)
SRV_PID=""
FAILS=0
PASSES=0
cleanup() {
    [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
ok() { PASSES=$((PASSES + 1)); echo "ok - $*"; }
not_ok() { FAILS=$((FAILS + 1)); echo "not ok - $*"; }
check() { # check "description" command...
    local what="$1"; shift
    if "$@"; then ok "$what"; else not_ok "$what"; fi
}
jqt() { [ "$(jq -r "$2" "$1")" = "true" ]; }

# --- the arm64 agent, built into the build dir (a second run only relinks what changed) -----
OUT="$BIN/../agent-arm64"
t0=$(date +%s)
if ! bash "$SRC/scripts/build-agent-arch.sh" arm64 "$OUT" > "$WORK/build.log" 2>&1; then
    echo "not ok - cross build of the arm64 agent:"; cat "$WORK/build.log"; exit 1
fi
echo "# arm64 agent built in $(( $(date +%s) - t0 )) s"
ARM="$OUT/bin/kperf-agent"
check "the arm64 agent is an ARM aarch64 static executable ($(file -b "$ARM" | cut -c1-80))" \
    bash -c "file -b '$ARM' | grep -q 'ARM aarch64.*statically linked'"

# run_agent amd64|arm64 ARGS...: the agent of that architecture (arm64: explicitly under
# qemu-user, whether or not binfmt_misc is registered; qemu-user runs it in its own process)
run_agent() {
    local arch=$1
    shift
    if [ "$arch" = arm64 ]; then qemu-aarch64-static "$ARM" "$@"; else "$NATIVE" "$@"; fi
}
machine() { if [ "$1" = arm64 ]; then echo aarch64; else uname -m; fi; }

printf 'arm64-interop-token\n' > "$WORK/token"
printf 'not-the-token\n' > "$WORK/wrong"
chmod 600 "$WORK/token" "$WORK/wrong"

# start_server ARCH: sets SRV_PID (the agent's own, so that SIGTERM reaches it) and PORT (the
# kernel picks a free port)
start_server() {
    local args=(server --port 0 --bind 127.0.0.1 --token-file "$WORK/token")
    if [ "$1" = arm64 ]; then
        qemu-aarch64-static "$ARM" "${args[@]}" > "$WORK/server.out" 2> "$WORK/server.log" &
    else
        "$NATIVE" "${args[@]}" > "$WORK/server.out" 2> "$WORK/server.log" &
    fi
    SRV_PID=$!
    PORT=$(announced_port "$WORK/server.log" "$SRV_PID") ||
        { echo "not ok - $1 server did not start:"; cat "$WORK/server.log"; exit 1; }
}

# stop_server ARCH: SIGTERM, exit 0 within 30 s (3 s natively; qemu is far slower)
stop_server() {
    local rc
    kill -TERM "$SRV_PID"
    for _ in $(seq 1 300); do
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.1 # bounded wait for the exit, not a timing assertion
    done
    kill -0 "$SRV_PID" 2>/dev/null && kill -9 "$SRV_PID"
    wait "$SRV_PID"; rc=$?
    check "$1 server exits 0 on SIGTERM (rc $rc)" [ "$rc" -eq 0 ]
    SRV_PID=""
}

# pair CLIENT_ARCH SERVER_ARCH: forward TCP_RR + TCP_STREAM and reverse TCP_STREAM, checked
pair() {
    local c=$1 s=$2 f r rc name
    name="$c client -> $s server"
    f="$WORK/$c-$s.json" r="$WORK/$c-$s-rev.json"
    start_server "$s"
    run_agent "$c" client --server "127.0.0.1:$PORT" --token-file "$WORK/token" \
        --tests TCP_RR,TCP_STREAM --duration 500ms --server-facts --json > "$f" 2> "$WORK/client.err"
    rc=$?
    check "$name: exit 0 (rc $rc: $(head -c 300 "$WORK/client.err"))" [ "$rc" -eq 0 ]
    check "$name: validates (amd64 validator)" "$NATIVE" validate "$f"
    check "$name: validates (arm64 validator)" qemu-aarch64-static "$ARM" validate "$f"
    check "$name: TCP_RR then TCP_STREAM, no errors" jqt "$f" \
        '[.results[].test] == ["TCP_RR","TCP_STREAM"] and (.errors | length) == 0'
    check "$name: TCP_RR ops > 0, histogram count = ops" jqt "$f" \
        '.results[0] | .ops > 0 and .ops_per_sec > 0 and .histogram.count == .ops'
    check "$name: TCP_STREAM bytes received = sent > 0, throughput > 0" jqt "$f" \
        '.results[1] | .bytes > 0 and .bytes == .bytes_sent and .throughput_mbps > 0'
    check "$name: measured by $(machine "$c"), served by $(machine "$s")" jqt "$f" \
        ".agent.machine == \"$(machine "$c")\" and .server_facts.machine == \"$(machine "$s")\""
    check "$name: client and server share this kernel (kernel tags agree)" jqt "$f" \
        '.results[1].placement.same_kernel'

    run_agent "$c" client --server "127.0.0.1:$PORT" --token-file "$WORK/token" \
        --tests TCP_STREAM --reverse --duration 500ms --json > "$r" 2> "$WORK/client.err"
    rc=$?
    check "$name reverse: exit 0 (rc $rc: $(head -c 300 "$WORK/client.err"))" [ "$rc" -eq 0 ]
    check "$name reverse: validates" "$NATIVE" validate "$r"
    check "$name reverse: the server sent, bytes received = sent > 0" jqt "$r" \
        '(.errors | length) == 0 and (.results | length) == 1 and .results[0].reverse and .results[0].bytes > 0 and .results[0].bytes == .results[0].bytes_sent'

    run_agent "$c" client --server "127.0.0.1:$PORT" --token-file "$WORK/wrong" \
        --tests TCP_RR --duration 200ms --json > "$WORK/wrong.json" 2> "$WORK/wrong.err"
    rc=$?
    check "$name: a wrong token is refused (rc $rc: $(head -c 200 "$WORK/wrong.err"))" \
        [ "$rc" -ne 0 ]
    stop_server "$s"
}

pair arm64 amd64
pair amd64 arm64
echo "# $(( $(date +%s) - t0 )) s in all"
echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
