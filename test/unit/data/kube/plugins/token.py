#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Exec credential plugin for tests: prints token "exec-token-<n>" where n counts runs in
# $KPERF_PLUGIN_STATE/count, echoes the apiVersion asked in KUBERNETES_EXEC_INFO (as aws does),
# saves that variable to $KPERF_PLUGIN_STATE/exec-info, and uses $KPERF_PLUGIN_EXPIRY if set.
import json
import os

state = os.environ["KPERF_PLUGIN_STATE"]
path = os.path.join(state, "count")
n = int(open(path).read()) + 1 if os.path.exists(path) else 1
open(path, "w").write(str(n))
info = os.environ.get("KUBERNETES_EXEC_INFO", "")
open(os.path.join(state, "exec-info"), "w").write(info)
api = json.loads(info)["apiVersion"] if info else "client.authentication.k8s.io/v1beta1"
status = {"token": f"exec-token-{n}"}
if os.environ.get("KPERF_PLUGIN_EXPIRY"):
    status["expirationTimestamp"] = os.environ["KPERF_PLUGIN_EXPIRY"]
print(json.dumps({"kind": "ExecCredential", "apiVersion": api, "spec": {}, "status": status}))
