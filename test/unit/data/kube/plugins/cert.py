#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Exec credential plugin for tests: returns the client certificate and key PEM files named by
# $KPERF_PLUGIN_CERT and $KPERF_PLUGIN_KEY (v1 protocol).
import json
import os

print(json.dumps({"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1",
                  "status": {"clientCertificateData": open(os.environ["KPERF_PLUGIN_CERT"]).read(),
                             "clientKeyData": open(os.environ["KPERF_PLUGIN_KEY"]).read()}}))
