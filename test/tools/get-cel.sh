#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# get-cel.sh - prints the directory of a pinned install of the npm package @bufbuild/cel (the
# CEL evaluator kube-sim runs ValidatingAdmissionPolicies with: kubesim/vap.py) and installs it
# when it is not cached yet. Pinned by test/tools/cel/package-lock.json (versions and sha512
# integrity of every package, checked by `npm ci`); nothing is fetched after the first install.
# Cache: $KPERF_CACHE (default ~/.cache/kperf)/cel-<sha256 of the lock, 12 hex>/node_modules.
# Usage: KUBESIM_CEL_DIR=$(test/tools/get-cel.sh) || exit 1
set -euo pipefail
src=$(cd "$(dirname "$0")/cel" && pwd)
cache=${KPERF_CACHE:-${HOME:-/root}/.cache/kperf}
sum=$(sha256sum "$src/package-lock.json" | cut -c1-12)
dir=$cache/cel-$sum
marker=node_modules/@bufbuild/cel/package.json
if [ -f "$dir/.installed" ] && [ -f "$dir/$marker" ]; then
  echo "$dir"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "get-cel: npm not found (apt-get install npm)" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.cel.lock"
flock 9
if [ -f "$dir/.installed" ] && [ -f "$dir/$marker" ]; then
  echo "$dir"
  exit 0
fi
work=$(mktemp -d "$cache/.cel.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$src/package.json" "$src/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1) ||
  { cat "$work/npm.log" >&2; echo "get-cel: npm ci of test/tools/cel failed" >&2; exit 1; }
touch "$work/.installed"
rm -f "$work/npm.log"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "$dir"
