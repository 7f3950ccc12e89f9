#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SIGINT at several points of a kperf run on kube-sim (while servers start, while a client Job
# runs, during cleanup) and SIGTERM: the run stops, cleans up, exits 130/143, and nothing of
# kperf's is left; the same with SIGINT while the run's NetworkPolicy (--netpol-rules) is in
# place. Also --keep (exactly what was kept stays, and `kperf cleanup` removes it)
# and --cleanup-leftovers.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 3
ARGS=(--scenarios pod-to-pod,host-to-host --tests TCP_RR,TCP_STREAM --duration 3s --timeout 30s)

has_pods() { # has_pods SELECTOR: some kperf pod matching SELECTOR exists
    [ -n "$(kadmin get pods -A -l "app.kubernetes.io/managed-by=kperf,$1" -o name 2>/dev/null)" ]
}

# interrupt NAME SIGNAL WAIT-CMD...: start a run (RUN_ARGS), wait for WAIT-CMD, send SIGNAL,
# expect exit 130/143 and nothing left
RUN_ARGS=("${ARGS[@]}")
interrupt() {
    local name=$1 sig=$2; shift 2
    # the binary itself, not a shell function: the signal must reach kperf
    "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "${RUN_ARGS[@]}" -o json \
        >"$K8S_DIR/$name.json" 2>"$K8S_DIR/$name.err" &
    local pid=$!
    if ! wait_for 60 "$@"; then
        fail "$name: the run never reached the point to interrupt"
    fi
    kill "-$sig" "$pid"
    wait "$pid"
    local rc=$?
    local want=143
    [ "$sig" = INT ] && want=130
    [ "$rc" = "$want" ] && pass "$name: exit $rc" || { fail "$name: exit $rc, want $want"; tail -5 "$K8S_DIR/$name.err"; }
    k8s_nothing_left "$name"
}

interrupt "sigint-servers-starting" INT has_pods "kperf.io/role=server"
interrupt "sigint-client-running" INT has_pods "kperf.io/role=client"
interrupt "sigterm-client-running" TERM has_pods "kperf.io/role=client,kperf.io/network=host"
interrupt "sigint-cleanup" INT grep -q "cleaning up" "$K8S_DIR/sigint-cleanup.err"
# --netpol-rules: the policy comes after the first row; SIGINT while it is in place. In a
# namespace of the user's, which the run's cleanup keeps: its policy must be deleted by name
kadmin create namespace kperf-int >/dev/null || fail "create namespace kperf-int"
has_netpol() { # (no `| grep -q`: under pipefail kubectl's SIGPIPE, once grep has quit, is a "no")
    [ -n "$(kadmin get networkpolicies -A -l app.kubernetes.io/managed-by=kperf -o name 2>/dev/null)" ]
}
RUN_ARGS=(-n kperf-int --scenarios pod-to-pod --same-node --tests TCP_RR --duration 1s --timeout 30s
    --netpol-rules 10)
interrupt "sigint-netpol-in-place" INT has_netpol

# --keep leaves exactly the run's objects and says how to remove them
kperf_k8s --scenarios pod-to-pod --tests TCP_RR --duration 1s --keep -o json \
    >"$K8S_DIR/keep.json" 2>"$K8S_DIR/keep.err"
run_id=$(jq -r '.metadata.run_id' "$K8S_DIR/keep.json")
kept=$(kadmin get namespaces,daemonsets,services,secrets,serviceaccounts -A \
    -l "kperf.io/run-id=$run_id" -o name | sort | tr '\n' ' ')
if grep -q "kperf cleanup --run-id $run_id" "$K8S_DIR/keep.err" && [ -n "$kept" ]; then
    pass "keep: kept $kept"
else
    fail "keep: kept '$kept'"; tail -3 "$K8S_DIR/keep.err"
fi
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" --dry-run 2>"$K8S_DIR/dry.err"
grep -q "would remove run $run_id" "$K8S_DIR/dry.err" && pass "cleanup --dry-run lists the run" ||
    fail "cleanup --dry-run: $(cat "$K8S_DIR/dry.err")"
# --cleanup-leftovers at the start of the next run removes it; that run (host-to-host) is kept
# in turn, for kperf cleanup below
kperf_k8s --scenarios host-to-host --tests TCP_RR --duration 1s --cleanup-leftovers --keep -o json \
    >"$K8S_DIR/left.json" 2>"$K8S_DIR/left.err" && pass "cleanup-leftovers: run ok" ||
    fail "cleanup-leftovers: $(tail -2 "$K8S_DIR/left.err")"
left=$(kadmin get namespaces,pods,jobs,daemonsets,services,secrets,serviceaccounts,networkpolicies -A \
    -l "kperf.io/run-id=$run_id" -o name 2>&1)
[ -n "$run_id" ] && [ -z "$left" ] && pass "cleanup-leftovers: nothing of run $run_id left" ||
    fail "cleanup-leftovers: run '$run_id' left $(echo "$left" | tr '\n' ' ')"
# kperf cleanup removes a kept run
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" 2>"$K8S_DIR/cleanup.err" &&
    pass "kperf cleanup: $(tail -1 "$K8S_DIR/cleanup.err")" || fail "kperf cleanup: $(cat "$K8S_DIR/cleanup.err")"
k8s_nothing_left "kperf cleanup"
ks_finish
