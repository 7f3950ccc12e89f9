#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kubesim_pull.sh - kube-sim pulls like a kubelet, on one cluster (node-3 arm64): kperf's default
# image resolves through the cluster's seeded registry (ghcr.io mirrored to it) and the pod's
# imageID is the index digest the registry serves; the arm64 node pulls the arm64 entry and runs
# it under qemu-user (the agent reports machine aarch64 to an amd64 server); an image without an
# arm64 entry fails there with containerd's words; against a second registry (TLS, basic auth:
# test/tools/registry.sh) a private image without a pull secret fails with the 401, a missing
# secret gives the kubelet's warning, the right secret pulls it; a deleted tag gives
# ErrImagePull then ImagePullBackOff ("not found"); a registry stopped for 5 s during a pod's
# pull (connection refused) is retried with back-off and the pod still runs.
# Waits are bounded at ~10x their normal time on a busy machine.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
for t in jq curl file qemu-aarch64-static; do
    command -v "$t" >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
[ -n "${KUBESIM_SEED_IMAGES:-}" ] || { echo "SKIP: no seed images (KPERF_BIN unset?)"; exit 77; }
grep -q arm64 "$KUBESIM_SEED_IMAGES/kperf-agent/blobs/sha256/"* 2>/dev/null ||
    { echo "SKIP: the seeded agent has no arm64 entry (crossbuild-essential-arm64 missing)"; exit 77; }
V=$(sed -n 's/^project(kperf VERSION \([0-9.]*\).*/\1/p' "$KPERF_SRC/CMakeLists.txt")
D=$(mktemp -d /tmp/kubesim-pull.XXXXXX)
R=$D/reg
ks_cleanup_on_exit "$D"
# (registered last, so it runs first: before DIR and its pid file go)
on_exit "bash '$KPERF_SRC/test/tools/registry.sh' stop '$R' >/dev/null 2>&1"
t0=$(date +%s.%N)
REG=$(bash "$KPERF_SRC/test/tools/registry.sh" start "$R") || { fail "registry.sh start"; ks_finish; }
push() { # REPO:TAG: the seeded agent layout (both architectures) into the private registry
    python3 "$KPERF_SRC/test/kube-sim/kubesim/registry.py" push "$KUBESIM_SEED_IMAGES/kperf-agent" \
        "$REG/$1" "$R/ca.crt" "$R/user" "$R/password" >/dev/null
}
push private/kperf-agent:1 || { fail "push to $REG"; ks_finish; }
echo "# private registry started (registry.sh) and seeded in $(echo "$(date +%s.%N) - $t0" | bc) s"
"$KS" up --nodes 3 --state-dir "$D" --node-arch node-3=arm64 --registry-ca "$R/ca.crt" \
    --image-pull-backoff 2 >"$D/up.log" || { cat "$D/up.log"; fail "kube-sim up"; ks_finish; }
cat "$D/up.log"
k() { "$KUBECTL" --kubeconfig "$D/admin.kubeconfig" "$@"; }
LOCAL=$(cat "$D/registry/url")

pod() { # NAME NODE IMAGE [extra spec lines as YAML flow] [args]
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  nodeName: $2
  restartPolicy: Never
  securityContext: {fsGroup: 65532}
  ${4:-}
  containers:
  - {name: c, image: "$3", imagePullPolicy: Always, args: ${5:-[--version]}}
YAML
}
phase() { k get pod "$1" -o jsonpath='{.status.phase}'; }
waiting() { k get pod "$1" -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}'; }
events() { k get events --field-selector "involvedObject.name=$1" -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}'; }
is_phase() { [ "$(phase "$1")" = "$2" ]; }
is_waiting() { [ "$(waiting "$1")" = "$2" ]; }
has_event() { events "$1" | grep -q -- "$2"; }

# 1. the default image by digest; node-1 amd64 serves, node-3 (arm64, qemu) measures
digest=sha256:$(curl -s -H 'Accept: application/vnd.oci.image.index.v1+json' \
    "$LOCAL/v2/kperf/kperf-agent/manifests/$V" | sha256sum | cut -d' ' -f1)
pod server node-1 "ghcr.io/kperf/kperf-agent:$V" "" '[server, --port, "5201"]'
wait_for 60 "server pod Running" is_phase server Running ||
    fail "server: $(phase server) $(waiting server); $(events server)"
id=$(k get pod server -o jsonpath='{.status.containerStatuses[0].imageID}')
[ "$id" = "ghcr.io/kperf/kperf-agent@$digest" ] && pass "imageID is the index digest ($id)" ||
    fail "imageID $id, the registry serves $digest"
has_event server "Successfully pulled image \"ghcr.io/kperf/kperf-agent:$V\" in " &&
    pass "Pulled event: $(events server | grep Successfully)" || fail "no Pulled event: $(events server)"
ip=$(k get pod server -o jsonpath='{.status.podIP}')
pod client node-3 "ghcr.io/kperf/kperf-agent:$V" "" \
    "[client, --server, \"$ip:5201\", --tests, TCP_RR, --duration, 1s, --server-facts, --json]"
wait_for 120 "arm64 client finished" sh -c "k() { \"$KUBECTL\" --kubeconfig '$D/admin.kubeconfig' \"\$@\"; };
    k get pod client -o jsonpath='{.status.phase}' | grep -qE 'Succeeded|Failed'"
k logs client >"$D/client.json" 2>&1
if jq -e '.agent.machine == "aarch64" and .server_facts.machine == "x86_64"' "$D/client.json" >/dev/null; then
    pass "the arm64 node's agent measured as aarch64 (under qemu) against the amd64 server"
else
    fail "arm64 client: $(phase client); $(head -c 600 "$D/client.json")"
fi
root=$(ls -d "$D"/images/node-3/roots/*/ | head -1)
file -b "$root/usr/local/bin/kperf-agent" | grep -q 'ARM aarch64' &&
    pass "node-3's image root holds the arm64 binary" || fail "node-3 root: $(file -b "$root/usr/local/bin/kperf-agent")"

# 2. no arm64 entry: the amd64-only controller image on the arm64 node
pod noarch node-3 "ghcr.io/kperf/kperf:$V"
wait_for 30 "noarch ErrImagePull" has_event noarch "no match for platform in manifest: not found" &&
    pass "no arm64 entry: $(events noarch | grep -m1 'Failed to pull')" || fail "noarch: $(events noarch)"

# 3. private image: no secret -> 401; a missing secret -> warning + 401; the secret -> runs
pod nosecret node-1 "$REG/private/kperf-agent:1"
wait_for 30 "401 without secret" has_event nosecret "401 Unauthorized" &&
    pass "private image without a secret: $(events nosecret | grep -m1 '401')" || fail "nosecret: $(events nosecret)"
pod missing node-1 "$REG/private/kperf-agent:1" "imagePullSecrets: [{name: nosuch}]"
wait_for 30 "missing secret warning" has_event missing \
    "FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (nosuch); attempting to pull the image may not succeed." &&
    has_event missing "401 Unauthorized" && pass "a missing pull secret: the kubelet's warning, then 401" ||
    fail "missing: $(events missing)"
k create secret docker-registry regcred --docker-server="$REG" --docker-username="$(cat "$R/user")" \
    --docker-password="$(cat "$R/password")" >/dev/null || fail "create regcred"
pod private node-1 "$REG/private/kperf-agent:1" "imagePullSecrets: [{name: regcred}]"
wait_for 60 "private pod Succeeded" is_phase private Succeeded &&
    [ "$(k logs private)" = "kperf-agent $V" ] && pass "private image with the secret runs" ||
    fail "private: $(phase private); $(events private)"

# 4. a deleted tag (in the cluster's registry, ghcr.io's mirror): ErrImagePull, then
# ImagePullBackOff, with containerd's words
dd=$(python3 "$KPERF_SRC/test/kube-sim/kubesim/registry.py" push "$KUBESIM_SEED_IMAGES/kperf-agent" \
    "${LOCAL#http://}/kperf/doomed:1") &&
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$LOCAL/v2/kperf/doomed/manifests/$dd")" = 202 ] ||
    fail "push and delete of kperf/doomed:1"
pod doomed node-2 "ghcr.io/kperf/doomed:1"
wait_for 30 "doomed ErrImagePull" has_event doomed "failed to resolve reference \"ghcr.io/kperf/doomed:1\": ghcr.io/kperf/doomed:1: not found" &&
    pass "deleted tag: $(events doomed | grep -m1 'Failed to pull')" || fail "doomed: $(events doomed)"
wait_for 30 "doomed ImagePullBackOff" is_waiting doomed ImagePullBackOff &&
    has_event doomed 'BackOff: Back-off pulling image' && has_event doomed 'Failed: Error: ErrImagePull' &&
    pass "deleted tag: ErrImagePull then ImagePullBackOff" || fail "doomed: $(waiting doomed); $(events doomed)"

# 5. the registry stopped for 5 s while a pod pulls (connection refused): retried, it runs
bash "$KPERF_SRC/test/tools/registry.sh" pause "$R" || fail "registry.sh pause"
p0=$(date +%s.%N)
pod paused node-2 "$REG/private/kperf-agent:1" "imagePullSecrets: [{name: regcred}]"
wait_for 30 "connection refused while paused" has_event paused "connect: connection refused" &&
    pass "stopped registry: $(events paused | grep -m1 'refused' | cut -c1-200)" || fail "paused: $(events paused)"
# the outage lasts 5 s from the pause: a fault window, not a wait for a condition
sleep "$(echo "5 - ($(date +%s.%N) - $p0)" | bc | sed 's/^-.*/0/')"
bash "$KPERF_SRC/test/tools/registry.sh" resume "$R" || fail "registry.sh resume"
wait_for 120 "paused pod Succeeded after resume" is_phase paused Succeeded &&
    pass "after a 5 s outage the pod runs ($(echo "$(date +%s.%N) - $p0" | bc | cut -c1-5) s after the stop)" ||
    fail "paused: $(phase paused) $(waiting paused); $(events paused)"
ks_finish
