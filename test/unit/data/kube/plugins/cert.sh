#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Exec credential plugin for tests: returns the client certificate and key PEM files named by
# $KPERF_PLUGIN_CERT and $KPERF_PLUGIN_KEY (v1 protocol), newlines escaped for JSON.
set -eu
pem() { awk '{ printf "%s\\n", $0 }' "$1"; }
printf '{"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "status": {"clientCertificateData": "%s", "clientKeyData": "%s"}}\n' \
    "$(pem "$KPERF_PLUGIN_CERT")" "$(pem "$KPERF_PLUGIN_KEY")"
