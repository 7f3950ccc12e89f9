#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim against a real client (kubectl): nodes, apply of a manifest with
# a Namespace, Secret, DaemonSet, Service and Job, pods -A -o wide, logs,
# Service ClusterIP reachable from a pod (nftables DNAT), wrong objects
# rejected with the apiserver's messages, PSA, delete ns, cert and exec
# kubeconfigs.
# kubectl: $KUBECTL, else the pinned 1.35 fetched (once, cached) by test/tools/get-kubectl.sh
KUBECTL=${KUBECTL:-$(bash "$(dirname "$0")/../tools/get-kubectl.sh")} || exit 1
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
[ -x "$KUBECTL" ] || { echo "SKIP: no kubectl at $KUBECTL"; exit 77; }
D=$(mktemp -d /tmp/kubesim-kubectl.XXXXXX)
ks_cleanup_on_exit "$D"
"$KS" up --nodes 3 --state-dir "$D" || { fail "kube-sim up"; ks_finish; }
export KUBECONFIG=$D/kubeconfig
k() { "$KUBECTL" "$@"; }

out=$(k get nodes)
echo "$out"
[ "$(echo "$out" | grep -c ' Ready ')" = 3 ] && pass "3 nodes Ready" || fail "nodes: $out"
out=$(k get nodes -o wide)
echo "$out" | grep -q "198.19.0.11.*containerd://" && pass "node wide columns" || fail "wide: $out"
zone=$(k get node node-2 -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')
[ -n "$zone" ] && pass "zone label $zone" || fail "no zone label"

cat > "$D/app.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata:
  name: kt
  labels:
    pod-security.kubernetes.io/enforce: baseline
---
apiVersion: v1
kind: Secret
metadata: {name: tok, namespace: kt}
stringData: {token: s3cret}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: web, namespace: kt}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      volumes: [{name: t, secret: {secretName: tok}}]
      containers:
      - name: s
        image: kube-sim/host
        command: ["sh", "-c", "cd /srv/tok && exec python3 -m http.server 8080"]
        volumeMounts: [{name: t, mountPath: /srv/tok}]
        ports: [{containerPort: 8080, name: http}]
        readinessProbe: {tcpSocket: {port: http}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: kt}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
YAML
k apply -f "$D/app.yaml" && pass "apply -f" || fail "apply"
wait_for 20 sh -c "\"$KUBECTL\" get ds -n kt web -o jsonpath='{.status.numberReady}' | grep -qx 3" \
    && pass "DaemonSet ready on 3 nodes" || fail "ds not ready: $(k get ds -n kt -o wide)"
cip=$(k get svc -n kt web -o jsonpath='{.spec.clusterIP}')
case $cip in 198.19.24[0-9].*|198.19.25[0-5].*) pass "ClusterIP $cip";; *) fail "ClusterIP $cip";; esac
cat > "$D/job.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: fetch, namespace: kt}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: node-2}
      containers:
      - name: c
        image: kube-sim/host
        command: ["python3", "-c", "import urllib.request as u; print('svc', u.urlopen('http://$cip/token').read().decode())"]
YAML
k apply -f "$D/job.yaml" >/dev/null
wait_for 20 sh -c "\"$KUBECTL\" get job -n kt fetch -o jsonpath='{.status.succeeded}' | grep -qx 1" \
    && pass "Job complete" || fail "job: $(k get job,pods -n kt -o wide)"
out=$(k logs -n kt job/fetch)
[ "$out" = "svc s3cret" ] && pass "pod -> Service ClusterIP -> pod (secret file served): $out" || fail "logs: $out"
out=$(k get pods -A -o wide)
echo "$out"
echo "$out" | grep -q "fetch-.*Completed.*node-2" && pass "pods -A -o wide" || fail "pods wide"
[ "$(echo "$out" | grep -c 'web-.*1/1.*Running')" = 3 ] || fail "3 running web pods"

# wrong objects: strict validation by kubectl apply (fieldValidation=Strict)
cat > "$D/bad.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: kt}
spec:
  containers:
  - {name: c, image: kube-sim/host, command: ["true"], imagee: x}
YAML
out=$(k apply -f "$D/bad.yaml" 2>&1)
echo "$out"
echo "$out" | grep -q 'strict decoding error: unknown field "spec.containers\[0\].imagee"' \
    && pass "unknown field rejected (strict)" || fail "strict: $out"
cat > "$D/bad2.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: bad2, namespace: kt}
spec:
  containers:
  - {name: c, command: ["true"]}
YAML
out=$(k apply -f "$D/bad2.yaml" 2>&1)
echo "$out"
echo "$out" | grep -q 'The Pod "bad2" is invalid: spec.containers\[0\].image: Required value' \
    && pass "missing image: 422 Invalid" || fail "422: $out"
out=$(k run -n kt hostpod --image=kube-sim/host --overrides='{"spec":{"hostNetwork":true}}' -- true 2>&1)
echo "$out"
echo "$out" | grep -q 'pods "hostpod" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)' \
    && pass "PSA rejects hostNetwork pod" || fail "psa: $out"

out=$(k delete ns kt 2>&1)
echo "$out"
wait_for 40 sh -c "! \"$KUBECTL\" get ns kt" && pass "delete ns (gone)" || fail "ns still there: $(k get ns kt -o yaml)"
[ -z "$(k get pods -A --no-headers 2>/dev/null)" ] && pass "no pods left" || fail "pods left"

# client certificate and exec-plugin kubeconfigs
"$KS" down --state-dir "$D" >/dev/null
for mode in cert exec; do
    "$KS" up --nodes 1 --state-dir "$D" --auth $mode >/dev/null || fail "up --auth $mode"
    out=$(k auth whoami -o jsonpath='{.status.userInfo.username}' 2>/dev/null || k get nodes --no-headers 2>&1)
    k get nodes --no-headers | grep -q node-1 && pass "--auth $mode: kubectl works" || fail "--auth $mode: $out"
    if [ $mode = exec ]; then
        [ -s "$D/exec-plugin.calls" ] && pass "exec plugin called" || fail "exec plugin not called"
        "$KS" fault --state-dir "$D" rotate-token >/dev/null
        k get nodes --no-headers | grep -q node-1 && pass "token rotated: kubectl re-execs the plugin" \
            || fail "after rotation"
    fi
    "$KS" down --state-dir "$D" >/dev/null
done
"$KS" up --nodes 1 --state-dir "$D" --auth exec --exec-expiry 2 >/dev/null || fail "up --exec-expiry"
k get nodes --no-headers >/dev/null || fail "exec-expiry first call"
sleep 3 # the 2 s exec token expires: time is the condition here
k get nodes --no-headers | grep -q node-1 && [ "$(wc -l < "$D/exec-plugin.calls")" -ge 2 ] \
    && pass "expired exec token: kubectl runs the plugin again" || fail "exec expiry"
ks_finish
