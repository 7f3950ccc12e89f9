# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# k8s_common.sh - helpers for test/e2e/k8s_*.sh (sourced): a kube-sim cluster per test,
# a pod recorder (kubectl watch of kperf pods during a run), and "nothing left" checks.
# Needs: KPERF_BIN, KPERF_SRC. Provides: K8S_DIR, KPERF, k8s_up ARGS, kperf_k8s ARGS,
# k8s_nothing_left, k8s_record_pods_start FILE, k8s_record_pods_stop, k8s_user_requests,
# k8s_external_host IP NODE... and k8s_external_start ARGS (an agent on the underlay).
source "${KPERF_SRC:?}/test/kube-sim/testlib.sh"
KPERF="${KPERF_BIN:?}/kperf"
export KPERF_BIN
K8S_DIR=$(mktemp -d /tmp/kperf-k8s-e2e.XXXXXX)
K8S_REC_PID=
[ -x "$KPERF" ] || { echo "SKIP: no $KPERF"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }

k8s_on_exit() {
    [ -n "$K8S_REC_PID" ] && kill "$K8S_REC_PID" 2>/dev/null
    if ks_failed; then
        ks_dump "$K8S_DIR"
    fi
    "$KS" down --state-dir "$K8S_DIR" >/dev/null 2>&1
    rm -rf "$K8S_DIR"
}
on_exit k8s_on_exit

# k8s_up ARGS: a kube-sim (3 nodes unless ARGS say otherwise); its registry serves the seeded
# images (testlib.sh). K8S_AGENT_IMAGE=DIR pushes an exported image root there as the agent
# image instead (kube-sim up --agent-image; test/e2e/k8s_podman_image.sh)
k8s_up() {
    "$KS" up --state-dir "$K8S_DIR" \
        ${K8S_AGENT_IMAGE:+--agent-image "$K8S_AGENT_IMAGE"} "$@" \
        >"$K8S_DIR/up.log" 2>&1 ||
        { cat "$K8S_DIR/up.log"; echo "FAIL: kube-sim up"; exit 1; }
}

kperf_k8s() {
    "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "$@"
}

kadmin() {
    "$KUBECTL" --kubeconfig "$K8S_DIR/admin.kubeconfig" "$@"
}

# k8s_nothing_left WHAT: fails unless no kperf object exists anywhere
k8s_nothing_left() {
    local left
    left=$(kadmin get namespaces,pods,jobs,daemonsets,services,secrets,serviceaccounts,networkpolicies -A \
        -l app.kubernetes.io/managed-by=kperf -o name 2>&1)
    if [ -n "$left" ]; then
        fail "$1: left behind: $(echo "$left" | tr '\n' ' ')"
    else
        pass "$1: nothing left behind"
    fi
}

# k8s_record_pods_start FILE: every state of every kperf pod, one JSON object per line
k8s_record_pods_start() {
    local listed
    K8S_REC_OUT=$1
    listed=$(k8s_admin_pod_lists)
    kadmin get pods -A -l app.kubernetes.io/managed-by=kperf -w -o json --output-watch-events \
        >"$1.raw" 2>/dev/null &
    K8S_REC_PID=$!
    # the watch goes on from its first LIST's resourceVersion, so once that LIST is answered no
    # event is missed; 30 s bounds a hang (it normally takes ~0.3 s)
    wait_for 30 "the pod recorder's first LIST" k8s_admin_pod_lists_past "$listed"
}
# the admin's answered LISTs of pods in all namespaces, so far (requests.log, one line each)
k8s_admin_pod_lists() {
    local n
    n=$(grep -c ' kube-sim-admin GET /api/v1/pods?' "$K8S_DIR/requests.log" 2>/dev/null)
    echo "${n:-0}"
}
k8s_admin_pod_lists_past() { [ "$(k8s_admin_pod_lists)" -gt "$1" ]; }

k8s_record_pods_stop() {
    kill "$K8S_REC_PID" 2>/dev/null
    wait "$K8S_REC_PID" 2>/dev/null
    K8S_REC_PID=
    jq -c '.object // .' "$K8S_REC_OUT.raw" >"$K8S_REC_OUT" 2>/dev/null
}

# API requests kperf's user sent (admin/kubectl requests excluded)
k8s_user_requests() {
    grep -vc ' kube-sim-admin ' "$K8S_DIR/requests.log"
}

# k8s_external_host IP NODE...: an "external" host on kube-sim's underlay: IP on the underlay
# bridge (sets UL, the underlay namespace, and BR, its bridge), routes back to each NODE's pod
# CIDR through its InternalIP, and k8s_external_start ARGS... to run a kperf-agent server there
# (its PID in EXT_PID, stopped on exit with the cluster).
EXT_PID=
k8s_external_stop() { [ -n "$EXT_PID" ] && kill "$EXT_PID" 2>/dev/null && wait "$EXT_PID" 2>/dev/null; }
k8s_external_host() {
    local ip=$1 n cidr nip
    shift
    UL=$(grep -- '-ul$' "$K8S_DIR/netns.list")
    BR=$(ip netns exec "$UL" ip -br link | awk '/-ub[ @]/{print $1}')
    [ -n "$UL" ] && [ -n "$BR" ] || { fail "no underlay namespace/bridge"; ks_finish; }
    on_exit k8s_external_stop # runs before k8s_on_exit (registered later)
    ip netns exec "$UL" ip addr add "$ip/24" dev "$BR"
    for n in "$@"; do
        cidr=$(kadmin get node "$n" -o jsonpath='{.spec.podCIDR}')
        nip=$(kadmin get node "$n" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
        ip netns exec "$UL" ip route add "$cidr" via "$nip"
    done
}
k8s_external_start() {
    ip netns exec "$UL" "$KPERF_BIN/kperf-agent" server "$@" >"$K8S_DIR/ext.log" 2>&1 &
    EXT_PID=$!
    # the run that follows may reach it at once: wait for its listening line (it takes ~20 ms;
    # 30 s bounds a hang)
    wait_for 30 "the external agent to listen" grep -q '^kperf-agent: listening on ' "$K8S_DIR/ext.log" ||
        fail "the external agent did not start: $(tail -3 "$K8S_DIR/ext.log")"
}
