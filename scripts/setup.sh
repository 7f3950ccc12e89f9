#!/usr/bin/env bash
# Installs what a fresh Debian bookworm machine lacks to build kperf (test-only tools, e.g.
# podman and debootstrap for the image and package tests, are in scripts/test.sh) and builds
# kperf into build/.
# Run as root (apt-get). Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(build-essential cmake pkg-config libuv1-dev libjansson-dev libyaml-dev
      libcurl4-openssl-dev libcmocka-dev iproute2 nftables openssl python3 procps)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# shellcheck disable=SC2086 # KPERF_CMAKE_ARGS holds several arguments
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo ${KPERF_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"
