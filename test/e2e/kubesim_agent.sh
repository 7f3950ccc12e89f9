#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A kperf-agent server pod on node-1 and a kperf-agent client Job on node-2
# measure TCP_RR and TCP_STREAM across the kube-sim underlay; the result is
# read through pods/log. The token reaches both through a Secret volume.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
AGENT=${KPERF_BIN:-}/kperf-agent
if [ ! -x "$AGENT" ]; then
    echo "SKIP: no agent binary at $AGENT (build kperf-agent, set KPERF_BIN)"
    exit 77
fi
# kperf's default image: pulled from the cluster's registry (seeded by testlib.sh)
V=$(sed -n 's/^project(kperf VERSION \([0-9.]*\).*/\1/p' "$KPERF_SRC/CMakeLists.txt")
D=$(mktemp -d /tmp/kubesim-agent.XXXXXX)
ks_cleanup_on_exit "$D"
"$KS" up --nodes 3 --state-dir "$D" || { fail "kube-sim up"; ks_finish; }
export KUBECONFIG=$D/kubeconfig
k() { "$KUBECTL" "$@"; }
cat > "$D/server.yaml" <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: perf}
---
apiVersion: v1
kind: Secret
metadata: {name: run-token, namespace: perf}
stringData: {token: 0123456789abcdef0123456789abcdef}
---
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: perf, labels: {app: kperf-server}}
spec:
  nodeSelector: {kubernetes.io/hostname: node-1}
  securityContext: {fsGroup: 65532}  # the image's user reads the token by group
  volumes: [{name: tok, secret: {secretName: run-token, defaultMode: 0440}}]
  containers:
  - name: server
    image: ghcr.io/kperf/kperf-agent:$V
    args: ["server", "--port", "5201", "--token-file", "/var/run/kperf/token"]
    volumeMounts: [{name: tok, mountPath: /var/run/kperf, readOnly: true}]
    ports: [{containerPort: 5201, name: kperf}]
    readinessProbe: {tcpSocket: {port: 5201}, periodSeconds: 1}
YAML
k apply -f "$D/server.yaml" >/dev/null || fail "apply server"
wait_for 20 sh -c "\"$KUBECTL\" get pod -n perf server -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" \
    && pass "server pod Ready (tcpSocket probe)" || fail "server not ready: $(k get pod -n perf -o wide; k logs -n perf server)"
ip=$(k get pod -n perf server -o jsonpath='{.status.podIP}')
cat > "$D/client.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: client, namespace: perf}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: node-2}
      securityContext: {fsGroup: 65532}
      volumes: [{name: tok, secret: {secretName: run-token, defaultMode: 0440}}]
      containers:
      - name: client
        image: ghcr.io/kperf/kperf-agent:$V
        command: ["/usr/local/bin/kperf-agent"]
        args: ["client", "--server", "$ip:5201", "--tests", "TCP_RR,TCP_STREAM",
               "--duration", "2s", "--json", "--token-file=/var/run/kperf/token"]
        volumeMounts: [{name: tok, mountPath: /var/run/kperf, readOnly: true}]
YAML
k apply -f "$D/client.yaml" >/dev/null || fail "apply client"
wait_for 40 sh -c "\"$KUBECTL\" get job -n perf client -o jsonpath='{.status.conditions[*].type}' | grep -qE 'Complete|Failed'" \
    || fail "client job did not finish"
k get pods -n perf -o wide
st=$(k get job -n perf client -o jsonpath='{.status.conditions[?(@.status=="True")].type}')
echo "job conditions: $st"
k logs -n perf job/client > "$D/result.json"
python3 - "$D/result.json" "$ip" <<'PY' && pass "measurement across the underlay read via pods/log" || fail "result: $(head -c 2000 "$D/result.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
text = json.dumps(doc)
print(text[:1500])
def find(o, key):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == key:
                yield v
            yield from find(v, key)
    elif isinstance(o, list):
        for v in o:
            yield from find(v, key)
assert not doc.get("errors"), doc.get("errors")
assert sys.argv[2] in text, "server address missing from the result"
nums = [v for k in ("throughput_mbps", "ops_per_sec", "transactions_per_sec")
        for v in find(doc, k) if isinstance(v, (int, float))]
assert nums and max(nums) > 0, "no positive throughput/rate in the result"
PY
echo "$st" | grep -q Complete && pass "client Job Complete" || fail "client job: $st"
ks_finish
