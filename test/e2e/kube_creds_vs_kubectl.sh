#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Credentials exactly like kubectl: for each kubeconfig set-up of test/tools/kube_creds_diff.py
# (tokens, token files, client certificates, exec plugins, types, duplicates, contexts, KUBECONFIG
# merging, proxies and NO_PROXY, tls-server-name, impersonation, oidc, TLS and file errors),
# a pinned real kubectl 1.35 and kperf's client make one request to the same recording API
# double on loopback; they must present the same credentials (and Impersonate-* headers) to
# the same server or both fail (kperf at once). Never skips: kubectl is
# fetched by test/tools/get-kubectl.sh when $KUBECTL is unset.
set -euo pipefail
src=${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${KPERF_BIN:-$src/build/bin}
driver=$bin/../test/unit/test_kube_creds
[ -x "$driver" ] || { echo "FAIL: $driver not built"; exit 1; }
kubectl=${KUBECTL:-$(bash "$src/test/tools/get-kubectl.sh")}
echo "kubectl: $kubectl ($("$kubectl" version --client 2>/dev/null | head -1))"
exec python3 "$src/test/tools/kube_creds_diff.py" "$kubectl" "$driver"
