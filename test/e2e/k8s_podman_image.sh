#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds both images with podman from the unchanged Dockerfiles (the base image is a cached
# `debootstrap --variant=minbase bookworm` root imported as localhost/debian:bookworm-slim),
# checks their metadata (user 65532, entrypoint, no shell, size budget), exports their root
# filesystems, runs kperf from the controller image's root, and runs the full
# `kperf run --scenarios all` matrix (test/e2e/k8s_run_all.sh) on kube-sim with every agent pod
# chrooted into the exported agent image (kube-sim up --agent-image): the image's user,
# entrypoint and args, read-only root; the host's kperf-agent is made unreachable.
# Running containers with podman is not possible on the CI machines (the OCI runtime cannot set
# rlimits there), so `podman create` + `podman export` gives the root and kube-sim runs it.
# Cost: cold (no debootstrap root today, no podman layer cache) about 15 min (debootstrap
# ~7 min, the build stage's apt-get ~5 min, compiles ~2 min); warm (same day, podman's layer
# cache keyed on the Dockerfile and the build context) about 1 min plus the matrix.
set -uo pipefail
SRC="${KPERF_SRC:?}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (podman, chroot, namespaces)"; exit 77; }
fail=0
pass() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
    echo "installing podman debootstrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        podman debootstrap >/dev/null 2>&1 ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends podman debootstrap >/dev/null; }
fi
command -v podman >/dev/null || { echo "FAIL: podman cannot be installed"; exit 1; }
# podman needs a storage driver on this filesystem; without one nothing here can work
if ! podman info >/dev/null 2>&1; then
    echo "SKIP: podman info fails here: $(podman info 2>&1 | tail -1)"
    exit 77
fi
tmp=$(mktemp -d)
ctrs=()
cleanup() {
    for c in "${ctrs[@]}"; do podman rm -f "$c" >/dev/null 2>&1; done
    rm -rf "$tmp"
}
trap cleanup EXIT
t0=$(date +%s)

# 1. the base image: today's debootstrap root, imported once (test/tools/podman-base.sh)
base=$(bash "$SRC/test/tools/podman-base.sh") || { echo "FAIL: debootstrap root / podman import"; exit 1; }
t1=$(date +%s)

# 2. both images from the Dockerfiles as they are
build() { # NAME DOCKERFILE
    podman build --isolation chroot --build-arg DEBIAN="$base" -f "$SRC/$2" \
        -t "localhost/$1:e2e" "$SRC" >"$tmp/build-$1.log" 2>&1 ||
        { tail -30 "$tmp/build-$1.log"; echo "FAIL: podman build $2"; exit 1; }
    pass "podman build $2 -> localhost/$1:e2e"
}
build kperf-agent Dockerfile.agent
build kperf Dockerfile.controller
t2=$(date +%s)
# podman keeps each build's layers (the cache of the next build, e.g. the apt-get layer of
# today's base image); drop only those older than two days
podman image prune -f --filter until=48h >/dev/null 2>&1

# 3. metadata and contents. Budgets: agent image <= 4 MB (one static binary + /etc), controller
# <= 40 MB (kperf + its ldd closure + CA certificates; distroless/base is ~20 MB)
check_image() { # NAME ENTRYPOINT BUDGET_BYTES
    local conf size
    conf=$(podman image inspect "localhost/$1:e2e" --format '{{json .Config}}')
    size=$(podman image inspect "localhost/$1:e2e" --format '{{.Size}}')
    echo "$conf" >"$tmp/$1.config.json"
    jq -e --arg ep "$2" '.User == "65532:65532" and .Entrypoint == [$ep] and
        (.Env | index("PATH=/usr/local/bin") != null)' <<<"$conf" >/dev/null &&
        pass "$1: user 65532:65532, entrypoint $2" || bad "$1 config: $conf"
    [ "$size" -le "$3" ] && pass "$1: $size bytes (budget $3)" || bad "$1: $size bytes > $3"
    mkdir -p "$tmp/$1/rootfs"
    local c
    c=$(podman create "localhost/$1:e2e") || { bad "podman create $1"; return; }
    ctrs+=("$c")
    podman export "$c" | tar -C "$tmp/$1/rootfs" -x || bad "podman export $1"
    cp "$tmp/$1.config.json" "$tmp/$1/config.json"
    for sh in bin/sh bin/bash usr/bin/sh bin/busybox; do
        [ ! -e "$tmp/$1/rootfs/$sh" ] || bad "$1: /$sh in the image"
    done
    [ -x "$tmp/$1/rootfs$2" ] && pass "$1: no shell; $(find "$tmp/$1/rootfs" -type f | wc -l) files" ||
        bad "$1: no $2 in the exported root"
}
check_image kperf-agent /usr/local/bin/kperf-agent 4000000
check_image kperf /usr/local/bin/kperf 40000000
jq -e '.Cmd == ["server", "--port", "5201"] and (.ExposedPorts | has("5201/tcp"))' \
    "$tmp/kperf-agent.config.json" >/dev/null && pass "kperf-agent: CMD server --port 5201" ||
    bad "kperf-agent CMD/ports: $(cat "$tmp/kperf-agent.config.json")"
# (grep reads a captured list: `find | grep -q .` under pipefail is false when find, with more
# to write, dies of SIGPIPE after grep's first match: the very case this looks for)
if grep -q . <<<"$(find "$tmp/kperf-agent/rootfs" -name '*.so*')"; then
    bad "kperf-agent image has shared libraries (not static)"
fi
# the controller image runs: its entrypoint, as its user, in its root
out=$(chroot --userspec=65532:65532 "$tmp/kperf/rootfs" /usr/local/bin/kperf version 2>&1) &&
    pass "kperf image: $out" || bad "kperf image: kperf version: $out"

# 4. the full matrix with agent pods from the agent image; meanwhile, every kperf-agent process
# of the run is checked: chrooted into a copy of the image root, uid 65532, root read-only
echo "== k8s_run_all.sh with agents from localhost/kperf-agent:e2e"
K8S_AGENT_IMAGE="$tmp/kperf-agent" bash "$SRC/test/e2e/k8s_run_all.sh" >"$tmp/matrix.log" 2>&1 &
mpid=$!
seen=0 wrong=
while kill -0 "$mpid" 2>/dev/null; do
    for p in $(pgrep -x kperf-agent); do
        r=$(readlink "/proc/$p/root" 2>/dev/null) || continue
        case "$r" in
        /tmp/kperf-k8s-e2e.*/pods/*/rootfs/*) ;;
        *) continue ;; # another test's agent (not under a kube-sim pod of this run)
        esac
        uid=$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
        rootopt=$(awk '$5 == "/" {print $6}' "/proc/$p/mountinfo" 2>/dev/null | tail -1)
        [ -n "$rootopt" ] || continue # exited between the reads
        if [ "$uid" = 65532 ] && [[ "$rootopt" == ro* ]]; then
            seen=$((seen + 1))
        elif [ -n "$uid" ]; then
            wrong="pid $p uid $uid root $r mount $rootopt"
        fi
    done
    sleep 0.2 # sampling while the matrix runs; the assertions do not depend on timing
done
wait "$mpid"
mrc=$?
sed 's/^/  matrix: /' "$tmp/matrix.log"
[ "$mrc" = 0 ] && pass "kperf run --scenarios all: every row, agents from the image" ||
    bad "the matrix with the image's agents failed (rc $mrc)"
[ "$seen" -gt 0 ] && pass "$seen samples of agent processes chrooted in the image root, uid 65532, root read-only" ||
    bad "no kperf-agent process seen chrooted in the image root"
[ -z "$wrong" ] || bad "an agent process not as the pod asked: $wrong"
t3=$(date +%s)
echo "figures: debootstrap root + import $((t1 - t0))s, podman builds $((t2 - t1))s, checks + matrix $((t3 - t2))s, total $((t3 - t0))s"
[ "$fail" = 0 ] && echo "RESULT: PASSED" || echo "RESULT: FAILED"
exit "$fail"
