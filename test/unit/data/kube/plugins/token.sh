#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Exec credential plugin for tests: prints token "exec-token-<n>" where n counts runs in
# $KPERF_PLUGIN_STATE/count, echoes the apiVersion asked in KUBERNETES_EXEC_INFO (as aws does),
# saves that variable to $KPERF_PLUGIN_STATE/exec-info, and uses $KPERF_PLUGIN_EXPIRY if set.
# POSIX sh, not Python: tests run it many times and an interpreter start costs ~1 s on CI.
set -eu
state=$KPERF_PLUGIN_STATE
n=1
[ -f "$state/count" ] && n=$(($(cat "$state/count") + 1))
printf '%s' "$n" >"$state/count"
info=${KUBERNETES_EXEC_INFO:-}
printf '%s' "$info" >"$state/exec-info"
# the top-level apiVersion comes before "spec", so before any nested object
api=$(expr "$info" : '{[^{]*"apiVersion":"\([^"]*\)"' || true)
[ -n "$api" ] || api=client.authentication.k8s.io/v1beta1
exp=
[ -n "${KPERF_PLUGIN_EXPIRY:-}" ] && exp=", \"expirationTimestamp\": \"$KPERF_PLUGIN_EXPIRY\""
printf '{"kind": "ExecCredential", "apiVersion": "%s", "spec": {}, "status": {"token": "exec-token-%s"%s}}\n' \
    "$api" "$n" "$exp"
