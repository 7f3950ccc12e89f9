#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_registry_run.sh - issue 28's "Done when", end to end on one kube-sim cluster: the images
# scripts/images.sh builds (amd64 + arm64) and pushes to a real registry (test/tools/registry.sh:
# TLS, basic auth) are what `kperf run --scenarios all` deploys, by digest, on 3 nodes whose
# node-3 is arm64 (qemu-user): --arch mixed pairs an amd64 and the arm64 node, the report names
# each node's arch, the arm64 pod's imageID is the index digest and its agent ran as aarch64,
# --image-pull-secret NS/NAME (no -n) is copied into the run namespace and goes with it.
# Without the secret the run fails (exit 4) naming the 401 and the image; a deleted tag fails
# (exit 4) naming the image; a registry stopped for 5 s while the pods pull does not fail the
# run. Times to failure are printed; bounds are generous (the issue's 10 s is printed, not
# asserted: a busy machine must not fail the test).
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
for t in podman skopeo docker-registry qemu-aarch64-static openssl; do
    command -v "$t" >/dev/null || { echo "SKIP: $t missing (scripts/test.sh installs it)"; exit 77; }
done
podman info >/dev/null 2>&1 || { echo "SKIP: podman info fails here"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: needs an amd64 host"; exit 77; }
T0=$SECONDS
R=$K8S_DIR/reg
REG=$(bash "$KPERF_SRC/test/tools/registry.sh" start "$R") || { fail "registry.sh start"; ks_finish; }
# registered after k8s_common's cleanup, so it runs first (before K8S_DIR goes)
on_exit "bash '$KPERF_SRC/test/tools/registry.sh' stop '$R' >/dev/null 2>&1"
on_exit "podman manifest rm localhost/kperf-images/kperf-agent:regrun >/dev/null 2>&1; podman manifest rm localhost/kperf-images/kperf:regrun >/dev/null 2>&1"
auth=(--cert-dir "$R" --authfile "$R/auth.json")

# 1. publish with the one command; the agent is an index with amd64 and arm64
base=$(bash "$KPERF_SRC/test/tools/podman-base.sh") || { fail "podman-base.sh"; ks_finish; }
t=$SECONDS
if ! bash "$KPERF_SRC/scripts/images.sh" push --registry "$REG/kperf" "${auth[@]}" --base "$base" \
    --tag regrun --quiet >"$K8S_DIR/push.out" 2>"$K8S_DIR/push.err"; then
    cat "$K8S_DIR/push.err"
    fail "images.sh push"
    ks_finish
fi
echo "# images.sh push took $((SECONDS - t)) s"
IMAGE=$(sed -n 's/^--image //p' "$K8S_DIR/push.out")
DIGEST=${IMAGE##*@}
assert_contains "images.sh prints a digest-pinned --image" "$IMAGE" "$REG/kperf/kperf-agent@sha256:"
skopeo inspect --raw "${auth[@]}" "docker://$REG/kperf/kperf-agent:regrun" >"$K8S_DIR/index.json" ||
    fail "skopeo inspect --raw"
assert_json "the agent index holds linux/amd64 and linux/arm64" "$K8S_DIR/index.json" \
    '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort == ["linux/amd64", "linux/arm64"]'
assert_eq "the printed digest is the index's" "sha256:$(sha256sum <"$K8S_DIR/index.json" | cut -d' ' -f1)" "$DIGEST"

# 2. kube-sim, node-3 arm64, trusting the test CA; the pull secret in team-r, run without -n
k8s_up --nodes 3 --zones 1 --node-arch node-3=arm64 --registry-ca "$R/ca.crt" --image-pull-backoff 2
kadmin create namespace team-r >/dev/null || fail "create namespace team-r"
kadmin -n team-r create secret docker-registry regcred --docker-server="$REG" \
    --docker-username="$(cat "$R/user")" --docker-password="$(cat "$R/password")" >/dev/null ||
    fail "create team-r/regcred"
RUN=(--kubeconfig "$K8S_DIR/kubeconfig" --tests TCP_RR --duration 1s --omit 0s --arch mixed --timeout 120s)
SECRET=(--image-pull-secret team-r/regcred)

k8s_record_pods_start "$K8S_DIR/pods.ndjson"
t=$SECONDS
"$KPERF" run "${RUN[@]}" --scenarios all --image "$IMAGE" "${SECRET[@]}" -o json \
    >"$K8S_DIR/all.json" 2>"$K8S_DIR/all.err"
rc=$?
echo "# kperf run --scenarios all took $((SECONDS - t)) s"
k8s_record_pods_stop
[ "$rc" = 0 ] && pass "--scenarios all from the registry by digest, --image-pull-secret without -n: exit 0" ||
    fail "run: rc $rc: $(tail -5 "$K8S_DIR/all.err")"
assert_json "every row measured" "$K8S_DIR/all.json" \
    '(.results | length) > 0 and all(.results[]; .status == "ok")'
assert_eq "nodes[].arch: an amd64 server and the arm64 client" "node-1=server/amd64 node-3=client/arm64" \
    "$(jq -r '[.metadata.nodes[] | "\(.name)=\(.role)/\(.arch)"] | join(" ")' "$K8S_DIR/all.json")"
ids=$(jq -r 'select(.spec.nodeName == "node-3") | .status.containerStatuses[]?.imageID // empty |
    select(. != "")' "$K8S_DIR/pods.ndjson" | sort -u)
assert_eq "the arm64 node's pods' imageID is the index digest" "$REG/kperf/kperf-agent@$DIGEST" "$ids"
# the client Jobs' logs (kube-sim keeps each pod's log under STATE/pods/UID/logs, in the CRI
# format: "TIME STREAM F|P TEXT")
uids=$(jq -r 'select(.spec.nodeName == "node-3") | .metadata.uid' "$K8S_DIR/pods.ndjson" | sort -u)
n=0
for u in $uids; do
    for f in "$K8S_DIR/pods/$u/logs/"*.log; do
        [ "$(sed 's/^[^ ]* [^ ]* [^ ]* //' "$f" | jq -r '.agent.machine? // empty' 2>/dev/null |
            sort -u)" = aarch64 ] && n=$((n + 1))
    done
done
[ "$n" -gt 0 ] && pass "the arm64 node's agent reported machine aarch64 (qemu) in $n client documents" ||
    fail "no aarch64 client document among node-3's pods: $(head -c 300 "$K8S_DIR"/pods/*/logs/*.log)"
root=$(ls -d "$K8S_DIR"/images/node-3/roots/*/ | head -1)
assert_contains "node-3 runs the arm64 binary from the pulled image" \
    "$(file -b "$root/usr/local/bin/kperf-agent")" "ARM aarch64"
ns=$(jq -r .metadata.namespace "$K8S_DIR/all.json")
kadmin get namespace "$ns" >/dev/null 2>&1 && fail "namespace $ns still there" ||
    pass "the run namespace $ns is gone (with the copied secret)"
k8s_nothing_left "after the run"

# 3. without the pull secret: the registry's 401, exit 4, naming the image
t=$(date +%s.%N)
# (Always: the nodes hold the image already, and IfNotPresent would not ask the registry)
"$KPERF" run "${RUN[@]}" --scenarios pod-to-pod --image "$IMAGE" --image-pull-policy Always -o json \
    >/dev/null 2>"$K8S_DIR/nosecret.err"
rc=$?
s=$(echo "$(date +%s.%N) - $t" | bc)
echo "# no pull secret: failed after $s s (--timeout 120s)"
assert_eq "no pull secret: exit 4" 4 "$rc"
assert_contains "no pull secret: names the 401" "$(cat "$K8S_DIR/nosecret.err")" "401 Unauthorized"
assert_contains "no pull secret: names the image" "$(cat "$K8S_DIR/nosecret.err")" "$IMAGE"
[ "$(echo "$s < 60" | bc)" = 1 ] && pass "no pull secret: failed in $s s (< 60, half of --timeout)" ||
    fail "no pull secret took $s s"
k8s_nothing_left "after the 401"

# 4. a deleted tag (its own repository: deleting the manifest deletes it by digest)
GONE=$REG/kperf/gone/kperf-agent:doomed
skopeo copy -q --all --src-cert-dir "$R" --dest-cert-dir "$R" --src-authfile "$R/auth.json" \
    --dest-authfile "$R/auth.json" "docker://$REG/kperf/kperf-agent@$DIGEST" "docker://$GONE" &&
    skopeo delete "${auth[@]}" "docker://$GONE" || fail "push and delete $GONE"
t=$(date +%s.%N)
"$KPERF" run "${RUN[@]}" --scenarios pod-to-pod --image "$GONE" "${SECRET[@]}" -o json >/dev/null \
    2>"$K8S_DIR/gone.err"
rc=$?
s=$(echo "$(date +%s.%N) - $t" | bc)
echo "# deleted tag: failed after $s s (issue 28 wants 10 s; --timeout 120s)"
assert_eq "deleted tag: exit 4" 4 "$rc"
assert_contains "deleted tag: names the image" "$(cat "$K8S_DIR/gone.err")" "$GONE"
grep -m1 'kperf: error' "$K8S_DIR/gone.err" | cut -c1-200 | sed 's/^/# /'
[ "$(echo "$s < 60" | bc)" = 1 ] && pass "deleted tag: failed in $s s (< 60, half of --timeout)" ||
    fail "deleted tag took $s s"
k8s_nothing_left "after the deleted tag"

# 5. the registry stopped for 5 s as the run starts (pods pull again: Always): exit 0
bash "$KPERF_SRC/test/tools/registry.sh" pause "$R" || fail "registry.sh pause"
# the outage lasts 5 s from the first pull it refused (a fault window, not a wait for a
# condition): 5 s from the pause could pass before a loaded machine's run got to its pulls
(wait_for 120 "a pull to meet the stopped registry" grep -q "connection refused" \
    "$K8S_DIR/paused.ndjson.raw"; sleep 5 && bash "$KPERF_SRC/test/tools/registry.sh" resume "$R") \
    >"$K8S_DIR/resume.log" 2>&1 &
rpid=$!
t=$SECONDS
k8s_record_pods_start "$K8S_DIR/paused.ndjson"
"$KPERF" run "${RUN[@]}" --scenarios pod-to-pod --image "$IMAGE" --image-pull-policy Always \
    "${SECRET[@]}" -o json >"$K8S_DIR/paused.json" 2>"$K8S_DIR/paused.err"
rc=$?
k8s_record_pods_stop
wait "$rpid" || fail "registry.sh resume: $(cat "$K8S_DIR/resume.log")"
echo "# run across the 5 s outage took $((SECONDS - t)) s"
[ "$rc" = 0 ] && pass "registry stopped 5 s during pod start-up: the run exits 0" ||
    fail "paused: rc $rc: $(tail -5 "$K8S_DIR/paused.err")"
met=$(jq -r '.status.containerStatuses[]?.state.waiting // empty | select(.message // "" |
    test("connection refused")) | .reason' "$K8S_DIR/paused.ndjson" | sort -u | tr '\n' ' ')
[ -n "$met" ] && pass "the pods' pulls met the outage (connection refused: $met) and recovered" ||
    fail "no pod's pull met the outage: the check proved nothing"
k8s_nothing_left "after the outage run"
echo "# the whole test took $((SECONDS - T0)) s"
ks_finish
