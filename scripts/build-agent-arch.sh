#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-agent-arch.sh ARCH OUTDIR - builds the static kperf-agent for ARCH (amd64 or arm64, the
# Debian and OCI names) in OUTDIR and prints the binary's path (OUTDIR/bin/kperf-agent). Only
# the agent is built (-DKPERF_AGENT_ONLY=ON: no libcurl, no controller). A foreign ARCH uses
# Debian's cross toolchain and multiarch libraries through cmake/toolchain-<triplet>.cmake;
# images/README.md ("arm64") says what to install. A second run reuses OUTDIR's build.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: $0 amd64|arm64 OUTDIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
arch=$1 out=$2
case "$arch" in
amd64) triplet=x86_64-linux-gnu ;;
arm64) triplet=aarch64-linux-gnu ;;
*) echo "build-agent-arch: unknown architecture '$arch': use amd64 or arm64" >&2; exit 2 ;;
esac

args=(-DCMAKE_BUILD_TYPE=Release -DKPERF_STATIC=ON -DKPERF_TESTS=OFF -DKPERF_AGENT_ONLY=ON)
if [ "$(dpkg --print-architecture)" != "$arch" ]; then
    if ! command -v "$triplet-gcc" >/dev/null; then
        echo "build-agent-arch: $triplet-gcc not found: apt-get install crossbuild-essential-$arch" >&2
        exit 1
    fi
    args+=(--toolchain "$src/cmake/toolchain-$triplet.cmake")
fi
cmake -S "$src" -B "$out" "${args[@]}" >/dev/null
cmake --build "$out" -j"$(nproc)" --target kperf-agent >/dev/null
echo "$out/bin/kperf-agent"
