#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# seed-images.sh BIN OUT - the images kube-sim's per-cluster registry is seeded with
# (kube-sim up --seed-images OUT), made from the build's binaries without a Dockerfile or a
# container engine (kubesim/ocibuild.py: one reproducible layer per architecture):
#   kperf-agent: the static agent for amd64 and arm64 (scripts/build-agent-arch.sh, built into
#                BIN/../agent-ARCH), user 65532, entrypoint /usr/local/bin/kperf-agent, as
#                Dockerfile.agent; pushed as ghcr.io/kperf/kperf-agent:VERSION (kperf's default
#                --image) and docker.io/library/kperf-agent:e2e (the tests' --image)
#   kperf:       BIN/kperf with its shared libraries (images/stage-rootfs.sh), amd64 only, as
#                Dockerfile.controller; pushed as ghcr.io/kperf/kperf:VERSION
# OUT/seed.json lists them. Cached: nothing is rebuilt while every input is older than
# OUT/seed.json (a static agent is rebuilt when BIN/kperf-agent is newer than it). Prints OUT.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 BIN OUT" >&2; exit 2; }
bin=$(cd "$1" && pwd) out=$2
version=$(sed -n 's/^project(kperf VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
archs=(amd64)
command -v aarch64-linux-gnu-gcc >/dev/null && archs+=(arm64)
stale=0
[ -f "$out/seed.json" ] || stale=1
for a in "${archs[@]}"; do
    agent="$bin/../agent-$a/bin/kperf-agent"
    if [ ! -x "$agent" ] || [ "$bin/kperf-agent" -nt "$agent" ]; then
        bash "$src/scripts/build-agent-arch.sh" "$a" "$bin/../agent-$a" >/dev/null
        stale=1
    fi
    [ "$agent" -nt "$out/seed.json" ] && stale=1
done
for f in "$bin/kperf" "$src/test/kube-sim/kubesim/ocibuild.py" "$0"; do
    [ "$f" -nt "$out/seed.json" ] && stale=1
done
if [ "$stale" = 1 ]; then
    tmp="$out.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    roots=()
    for a in "${archs[@]}"; do
        sh "$src/images/stage-rootfs.sh" "$tmp/root-agent-$a" "$bin/../agent-$a/bin/kperf-agent"
        roots+=(--root "$a=$tmp/root-agent-$a")
    done
    py="$src/test/kube-sim/kubesim/ocibuild.py"
    python3 "$py" "$tmp/kperf-agent" "${roots[@]}" --entrypoint /usr/local/bin/kperf-agent \
        --cmd=server --cmd=--port --cmd=5201 --env PATH=/usr/local/bin --user 65532:65532 >/dev/null
    sh "$src/images/stage-rootfs.sh" "$tmp/root-kperf" "$bin/kperf"
    python3 "$py" "$tmp/kperf" --root "amd64=$tmp/root-kperf" --entrypoint /usr/local/bin/kperf \
        --cmd=--help --env PATH=/usr/local/bin --user 65532:65532 >/dev/null
    rm -rf "$tmp"/root-*
    cat >"$tmp/seed.json" <<JSON
[{"layout": "kperf-agent", "refs": ["ghcr.io/kperf/kperf-agent:$version", "docker.io/library/kperf-agent:e2e"]},
 {"layout": "kperf", "refs": ["ghcr.io/kperf/kperf:$version"]}]
JSON
    rm -rf "$out"
    mv "$tmp" "$out"
fi
echo "$out"
