#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cluster that cleans itself (issue 14): `kill -9` of the controller in the middle of a run
# leaves its namespace, DaemonSets, Job, pods, Secret and Lease behind; once the Lease has
# expired (no controller renews it), the next `kperf run` removes all of it, says so, and leaves
# the cluster exactly as it was before the killed run (object lists compared). The same again
# with `kperf cleanup` as the next command. (A run in progress is kept: e2e.k8s_cleanup_live.)
# The first killed run (issue 33) runs in a namespace of the user's (-n kperf-crash, which no
# sweep deletes, so nothing is removed with it) with `--services 50 --netpol-rules 10` and is
# killed once its NetworkPolicy exists (its 50 extra Services and probe Service do by then):
# the next run removes the Services and the policy too.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 2
LEASE=3s
MAX_IDLE=15s
KINDS=namespaces,pods,jobs,daemonsets,services,secrets,serviceaccounts,leases,configmaps,networkpolicies
NS1=kperf-crash # run 1's namespace, the user's
kadmin create namespace "$NS1" >/dev/null || fail "create namespace $NS1"
objects() { kadmin get "$KINDS" -A -o custom-columns=K:.kind,NS:.metadata.namespace,N:.metadata.name --no-headers | sort; }
objects >"$K8S_DIR/before.txt" || fail "listing objects"

# waits (bounded) until a client Job of a kperf run exists and its pod runs
wait_client_running() { wait_for 60 "a running client pod" client_running; }
client_running() { # (captured lists here: `| grep -q` under pipefail fails when the writer dies of SIGPIPE)
    grep -q . <<<"$(kadmin get pods -A -l kperf.io/role=client --field-selector status.phase=Running \
        -o name 2>/dev/null)"
}

# lease_renewed: renewed = the kperf Lease's renewTime once it is past its acquireTime
lease_renewed() {
    renewed=$(kadmin get leases -A -l app.kubernetes.io/managed-by=kperf -o json |
        jq -r '.items[0].spec | select(.renewTime > .acquireTime) | .renewTime')
    [ -n "$renewed" ]
}
# start a long run and kill -9 its controller once a client measures
crash_a_run() {
    # the kperf process itself (not a subshell) gets the SIGKILL
    # run 2: short samples, the host-network server too, servers idle out after 15 s
    # run 1: in the user's namespace, with Services and (after its first row) a NetworkPolicy
    local how=(--scenarios pod-to-pod --duration 3s -n "$NS1" --services 50 --netpol-rules 10)
    [ "$1" = 2 ] && how=(--scenarios pod-to-pod,host-to-host --duration 3s --samples 3
        --agent-max-idle "$MAX_IDLE")
    "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "${how[@]}" \
        --same-node --tests TCP_RR --lease-duration $LEASE -o json \
        >"$K8S_DIR/crash.json" 2>"$K8S_DIR/crash$1.err" &
    local pid=$!
    if ! wait_client_running; then
        fail "run $1: no client pod ran"; kill -9 $pid; wait $pid 2>/dev/null; return 1
    fi
    # the controller renews its Lease while it runs (every third of --lease-duration)
    if [ "$1" = 1 ]; then
        local renewed=
        # every 1 s with a 3 s lease; 30 s bounds a controller that never renews
        wait_for 30 "the running kperf to renew its Lease" lease_renewed
        [ -n "$renewed" ] && pass "the running kperf renews its Lease (renewTime $renewed)" ||
            fail "the Lease was never renewed"
        # its policy comes after the first row (pod-to-pod same-node/netpol-10); 120 s bounds it
        wait_for 120 "run 1's NetworkPolicy" netpol_exists ||
            fail "run 1: no NetworkPolicy appeared: $(tail -3 "$K8S_DIR/crash1.err")"
    fi
    kill -9 $pid
    wait $pid 2>/dev/null
    CRASHED=$(kadmin get leases -A -l app.kubernetes.io/managed-by=kperf \
        -o jsonpath='{.items[0].metadata.labels.kperf\.io/run-id}')
    local left kinds=namespaces,daemonsets,jobs,leases
    [ "$1" = 1 ] && kinds=daemonsets,leases,services,networkpolicies
    left=$(kadmin get "$kinds" -A -l "kperf.io/run-id=$CRASHED" -o name | sort)
    [ -n "$CRASHED" ] && [ "$(wc -l <<<"$left")" -ge 4 ] &&
        pass "run $1: kill -9 left run $CRASHED behind ($(wc -l <<<"$left") $kinds)" ||
        fail "run $1: after kill -9: run '$CRASHED', $(wc -l <<<"$left") objects"
    if [ "$1" = 1 ]; then
        # 50 kperf-svcx-*, the probe Service, the pod-network servers' Service, the policy
        local svcx probe pol
        svcx=$(grep -c "^service/kperf-svcx-" <<<"$left")
        probe=$(grep -c "^service/kperf-svcprobe$" <<<"$left")
        pol=$(grep -c "^networkpolicy.networking.k8s.io/kperf-netpol-" <<<"$left")
        [ "$svcx" = 50 ] && [ "$probe" = 1 ] && [ "$pol" = 1 ] &&
            pass "run 1: kill -9 left 50 kperf-svcx-* Services, kperf-svcprobe and its NetworkPolicy in $NS1" ||
            fail "run 1: after kill -9: $svcx kperf-svcx-*, $probe probe Service, $pol policies"
    fi
}
netpol_exists() {
    grep -q . <<<"$(kadmin get networkpolicies -n "$NS1" -l app.kubernetes.io/managed-by=kperf \
        -o name 2>/dev/null)"
}

# --- 1: the next `kperf run` removes the crashed run ------------------------------------
crash_a_run 1
# right after the kill the Lease's timestamps still look fresh, but expiry is judged by
# watching: nothing renews it during a whole lease period, so the run counts as dead
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" --dry-run 2>"$K8S_DIR/dry.err"
grep -q "would remove run $CRASHED .*lease expired (not renewed during 3 s of watching" "$K8S_DIR/dry.err" &&
    pass "cleanup --dry-run: the Lease of run $CRASHED, watched for 3 s, expired" ||
    fail "cleanup --dry-run: $(cat "$K8S_DIR/dry.err")"
# the Lease expires LEASE after its last renewal; nothing renews it any more
sleep 3.5
kperf_k8s --scenarios pod-to-pod --same-node --tests TCP_RR --duration 300ms -o json \
    >"$K8S_DIR/next.json" 2>"$K8S_DIR/next.err"
rc=$?
[ "$rc" = 0 ] && pass "next run exits 0" || { fail "next run exit $rc"; tail -5 "$K8S_DIR/next.err"; }
grep -q "removing run $CRASHED in namespace .*lease expired" "$K8S_DIR/next.err" &&
    pass "next run: $(grep -o "removing run $CRASHED.*" "$K8S_DIR/next.err" | head -1)" ||
    fail "next run did not say it removed run $CRASHED: $(head -5 "$K8S_DIR/next.err")"
objects >"$K8S_DIR/after1.txt"
if diff "$K8S_DIR/before.txt" "$K8S_DIR/after1.txt" >"$K8S_DIR/diff1.txt"; then
    pass "after the next run the cluster is as before the killed run ($(wc -l <"$K8S_DIR/before.txt") objects)"
else
    fail "objects differ: $(tr '\n' ' ' <"$K8S_DIR/diff1.txt")"
fi
k8s_nothing_left "next run after kill -9 of a run with --services 50 --netpol-rules 10"

# --- 2: the killed run's servers stop listening by themselves; `kperf cleanup` removes it -----
# server_parked POD: its agent said it stopped listening (--max-idle), and (host network) nothing
# listens on the port in its node's network namespace any more
# shellcheck disable=SC2317 # called through wait_for
server_parked() {
    local pod node
    for pod in $(kadmin get pods -n "$NS2" -l kperf.io/role=server -o name); do
        grep -q "not listening any more" <<<"$(kadmin logs -n "$NS2" "$pod" 2>/dev/null)" || return 1
    done
    node=$(kadmin get pods -n "$NS2" -l kperf.io/network=host -o jsonpath='{.items[0].spec.nodeName}')
    [ -n "$node" ] || return 1
    [ -z "$(ip netns exec "$(jq -r .prefix "$K8S_DIR/config.json")n${node#node-}" \
        ss -Hltn "sport = :5201")" ]
}
crash_a_run 2
t_kill=$(date +%s.%N)
NS2=$(kadmin get leases -A -l "app.kubernetes.io/managed-by=kperf,kperf.io/run-id=$CRASHED" -o jsonpath='{.items[0].metadata.namespace}')
# the bound (docs/kubernetes.md): the client's step ends within its planned 3 x 3 s, then its
# servers idle out after --agent-max-idle 15 s (checked every second): about 25 s. 240 s is ten
# times that, for a loaded machine; the agents' own lines say which rule stopped them.
if wait_for 240 "the killed run's servers to stop listening" server_parked; then
    park_s=$(echo "$(date +%s.%N) - $t_kill" | bc)
    pass "kill -9: the agent servers stopped listening by themselves ${park_s}s after the kill: $(kadmin logs -n "$NS2" "$(kadmin get pods -n "$NS2" -l kperf.io/network=host -o name)" | grep -m1 "not listening")"
else
    park_s=never
    fail "kill -9: a server still listens: $(kadmin get pods -n "$NS2" -o wide)"
fi
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" 2>"$K8S_DIR/cleanup.err"
rc=$?
[ "$rc" = 0 ] && pass "kperf cleanup exits 0" || fail "kperf cleanup exit $rc: $(cat "$K8S_DIR/cleanup.err")"
grep -q "removing run $CRASHED .*lease expired" "$K8S_DIR/cleanup.err" &&
    pass "cleanup: $(grep -o "removing run $CRASHED.*" "$K8S_DIR/cleanup.err" | head -1)" ||
    fail "cleanup did not name the expired lease: $(cat "$K8S_DIR/cleanup.err")"
objects >"$K8S_DIR/after2.txt"
if diff "$K8S_DIR/before.txt" "$K8S_DIR/after2.txt" >"$K8S_DIR/diff2.txt"; then
    pass "after kperf cleanup the cluster is as before"
else
    fail "objects differ: $(tr '\n' ' ' <"$K8S_DIR/diff2.txt")"
fi
k8s_nothing_left "crash"
echo "figures: after kill -9 the servers stopped listening ${park_s}s later (--agent-max-idle $MAX_IDLE)"
ks_finish
