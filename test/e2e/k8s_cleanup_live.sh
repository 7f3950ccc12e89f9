#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `kperf cleanup` against a run in progress (issue 34): it watches the run's Lease, sees it
# renewed and keeps the run, one line naming it and when it was last renewed; the run goes on.
# `kperf cleanup --force` says what it destroys and removes the run, its Lease first; the live
# run then stops at once (its lease keeper sees the Lease deleted and aborts the run's waits),
# exits 1 naming the cause, long before its measurement or --timeout would end it. The same
# when its namespace is deleted under it (kubectl delete namespace). Nothing of kperf's is left.
# Issue 30, one run at a time (docs/kubernetes.md, "One run at a time"): the cluster's clock runs
# 10 minutes ahead of this machine's (kube-sim --clock-skew 600: every timestamp it writes), and
# still no live run is reaped, since Leases are judged by watching, never by their timestamps. Two
# runs started together: the second waits for the cluster lock (--wait-for-lock), saying so, and
# both reports are clean; a run started while another holds the lock refuses at once (exit 1),
# naming the holder and since when, and leaves the live run alone.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 2 --clock-skew 600
# the run measures for 120 s and waits up to 120 s more: only the lease mechanism ends it early
LIVE=(--scenarios pod-to-pod --same-node --tests TCP_RR --duration 120s --timeout 120s
    --lease-duration 6s)

# shellcheck disable=SC2317 # called through wait_for
client_running() { # (a captured list: `| grep -q .` under pipefail fails when kubectl dies of SIGPIPE)
    grep -q . <<<"$(kadmin get pods -A -l kperf.io/role=client --field-selector status.phase=Running \
        -o name 2>/dev/null)"
}

# shellcheck disable=SC2317 # called through wait_for
lock_held() { kadmin get lease kperf-lock -n default >/dev/null 2>&1; }
# shellcheck disable=SC2317
clean_report() {
    jq -e '(.results | length > 0) and ((.errors // []) | length == 0) and
        all(.results[]; (.errors // []) | length == 0)' "$1" >/dev/null
}

# --- 0: two runs at once: the second waits for the lock, both reports clean -------------------
SHORT=(--scenarios pod-to-pod --same-node --tests TCP_RR --duration 2s --samples 2)
t0=$(date +%s.%N)
kperf_k8s "${SHORT[@]}" -o json >"$K8S_DIR/first.json" 2>"$K8S_DIR/first.err" &
p1=$!
wait_for 60 "the first run to take the cluster lock" lock_held ||
    fail "no cluster lock: $(tail -3 "$K8S_DIR/first.err")"
FIRST=$(kadmin get lease kperf-lock -n default -o jsonpath='{.metadata.labels.kperf\.io/run-id}')
kperf_k8s "${SHORT[@]}" --wait-for-lock 120s -o json >"$K8S_DIR/waited.json" 2>"$K8S_DIR/waited.err" &
p2=$!
wait "$p1"
rc1=$?
wait "$p2"
rc2=$?
both_s=$(echo "$(date +%s.%N) - $t0" | bc)
if [ "$rc1" = 0 ] && [ "$rc2" = 0 ]; then pass "two runs at once: both exit 0 (${both_s}s)"; else
    fail "two runs at once: exit $rc1 and $rc2: $(tail -3 "$K8S_DIR/first.err") / $(tail -3 "$K8S_DIR/waited.err")"; fi
if grep -Eq "^kperf: warning: waiting for the cluster lock: the cluster lock default/kperf-lock is held by [^ ]+@[^ ]+ run $FIRST since [0-9T:.-]+Z \([0-9]+ s of 120 s waited\)" \
    "$K8S_DIR/waited.err"; then
    pass "the second run waited, saying so: $(grep -m1 "waiting for the cluster lock" "$K8S_DIR/waited.err")"
else
    fail "the second run did not say it waits for run $FIRST: $(head -5 "$K8S_DIR/waited.err")"
fi
if clean_report "$K8S_DIR/first.json" && clean_report "$K8S_DIR/waited.json"; then
    pass "both reports are clean (results, no errors)"
else
    fail "a report is not clean: $(jq -c '.errors' "$K8S_DIR/first.json" "$K8S_DIR/waited.json")"
fi
if lock_held; then fail "the cluster lock outlived both runs"; else pass "the lock is released"; fi

"$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "${LIVE[@]}" -o json \
    >"$K8S_DIR/live.json" 2>"$K8S_DIR/live.err" &
pid=$!
wait_for 90 client_running || fail "the live run's client never ran: $(tail -3 "$K8S_DIR/live.err")"
RID=$(kadmin get leases -A -l app.kubernetes.io/managed-by=kperf \
    -o jsonpath='{.items[0].metadata.labels.kperf\.io/run-id}')
NS=$(kadmin get leases -A -l app.kubernetes.io/managed-by=kperf \
    -o jsonpath='{.items[0].metadata.namespace}')
if [ -z "$RID" ] || [ -z "$NS" ]; then fail "no Lease of the live run"; fi

# --- 1: cleanup leaves the live run alone and says so ---------------------------------------
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" 2>"$K8S_DIR/cleanup.err"
rc=$?
if [ "$rc" = 0 ]; then pass "cleanup exits 0"; else fail "cleanup exit $rc: $(cat "$K8S_DIR/cleanup.err")"; fi
if grep -Eq "^keeping run $RID in namespace $NS: its lease was renewed while watched.*last renewed at [0-9T:.-]+Z by kperf@" \
    "$K8S_DIR/cleanup.err"; then
    pass "cleanup: $(grep "^keeping run $RID" "$K8S_DIR/cleanup.err")"
else
    fail "cleanup did not keep run $RID: $(cat "$K8S_DIR/cleanup.err")"
fi
[ "$(grep -c "^keeping run" "$K8S_DIR/cleanup.err")" = 1 ] || fail "more than one kept line"
grep -q "^removing run $RID" "$K8S_DIR/cleanup.err" && fail "cleanup removed the live run"
if kill -0 "$pid" 2>/dev/null && kadmin get namespace "$NS" >/dev/null 2>&1 &&
    kadmin get lease "kperf-run-$RID" -n "$NS" >/dev/null 2>&1; then
    pass "the live run goes on: kperf runs, its namespace and Lease are there"
else
    fail "the live run was disturbed: $(tail -3 "$K8S_DIR/live.err")"
fi

# the cluster's clock is 10 minutes ahead of ours: its timestamps say so
created=$(kadmin get namespace "$NS" -o jsonpath='{.metadata.creationTimestamp}')
ahead_s=$(($(date -d "$created" +%s) - $(date +%s)))
if [ "$ahead_s" -ge 300 ] && [ "$ahead_s" -le 700 ]; then # a slow machine only lowers it
    pass "the cluster's clock runs ${ahead_s}s ahead (namespace created at $created)"
else
    fail "the cluster's clock is ${ahead_s}s off, want about 600"
fi

# --- 1b: a second kperf run refuses at once, naming the holder; the live run goes on ----------
t0=$(date +%s.%N)
kperf_k8s --scenarios pod-to-pod --same-node --tests TCP_RR --duration 1s -o json \
    >"$K8S_DIR/second.json" 2>"$K8S_DIR/second.err"
rc=$?
refuse_s=$(echo "$(date +%s.%N) - $t0" | bc)
if [ "$rc" = 1 ] && grep -Eq "^kperf: error: .*the cluster lock default/kperf-lock is held by [^ ]+@[^ ]+ run $RID since [0-9T:.-]+Z \(renewed while watched: that run is in progress\); one run at a time per cluster: wait for it with --wait-for-lock DUR" \
    "$K8S_DIR/second.err"; then
    pass "a second run refuses (exit 1, ${refuse_s}s): $(grep -m1 "^kperf: error" "$K8S_DIR/second.err")"
else
    fail "a second run: exit $rc: $(tail -3 "$K8S_DIR/second.err")"
fi
grep -q "removing run $RID" "$K8S_DIR/second.err" && fail "the second run reaped the live run"
if kill -0 "$pid" 2>/dev/null && kadmin get lease "kperf-run-$RID" -n "$NS" >/dev/null 2>&1; then
    pass "the live run goes on after the refused run (clock 10 min ahead)"
else
    fail "the live run was disturbed by the refused run: $(tail -3 "$K8S_DIR/live.err")"
fi

# --- 2: cleanup --force removes it; the live run stops at once, naming the cause ------------
t0=$(date +%s.%N)
"$KPERF" cleanup --kubeconfig "$K8S_DIR/kubeconfig" --force 2>"$K8S_DIR/force.err"
frc=$?
wait "$pid"
rc=$?
t1=$(date +%s.%N)
stop_s=$(echo "$t1 - $t0" | bc)
if [ "$frc" = 0 ]; then pass "cleanup --force exits 0"; else fail "cleanup --force exit $frc: $(cat "$K8S_DIR/force.err")"; fi
if grep -Eq "^--force: removing run $RID in namespace $NS \(and the namespace\), its lease first, although a kperf may be running it \(lease held by kperf@" \
    "$K8S_DIR/force.err"; then
    pass "cleanup --force says what it destroys: $(grep "^--force" "$K8S_DIR/force.err" | head -1)"
else
    fail "cleanup --force did not say what it destroys: $(cat "$K8S_DIR/force.err")"
fi
if [ "$rc" = 1 ]; then pass "the live run exits 1"; else fail "the live run exit $rc, want 1"; fi
if grep -Eq "kperf: error: the run stopped: .*(lease kperf-run-$RID in namespace $NS|namespace $NS) was deleted \(by kperf cleanup --force\?\)" \
    "$K8S_DIR/live.err"; then
    pass "the live run names the cause: $(grep -o "the run stopped: .*" "$K8S_DIR/live.err" | head -1)"
else
    fail "the live run did not name the cause: $(tail -5 "$K8S_DIR/live.err")"
fi
# the run would otherwise wait for its 120 s measurement (and 120 s --timeout); the lease keeper
# stops it within about a second of the Lease's deletion. The bound (30 s) is generous for a
# loaded machine, and still far below 120 s.
if [ "$(echo "$stop_s < 30" | bc)" = 1 ]; then
    pass "the live run stopped ${stop_s}s after cleanup --force began (cleanup included)"
else
    fail "the live run took ${stop_s}s to stop"
fi
if jq -e '.results | length >= 0' "$K8S_DIR/live.json" >/dev/null; then
    pass "the live run still printed its (partial) report"
else
    fail "no report from the live run"
fi
# --- 3: a namespace deleted under a live run (kubectl delete namespace) ------------------------
"$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "${LIVE[@]}" -o json \
    >"$K8S_DIR/live2.json" 2>"$K8S_DIR/live2.err" &
pid=$!
wait_for 90 client_running || fail "the second run's client never ran: $(tail -3 "$K8S_DIR/live2.err")"
NS2=$(kadmin get leases -A -l app.kubernetes.io/managed-by=kperf -o jsonpath='{.items[0].metadata.namespace}')
t0=$(date +%s.%N)
kadmin delete namespace "$NS2" --wait=false >/dev/null || fail "deleting namespace $NS2"
wait "$pid"
rc=$?
stop2_s=$(echo "$(date +%s.%N) - $t0" | bc)
if [ "$rc" = 1 ] && grep -q "kperf: error: the run stopped: namespace $NS2 was deleted (by kperf cleanup --force?)" \
    "$K8S_DIR/live2.err"; then
    pass "namespace deleted: the run exits 1: $(grep -o "the run stopped: .*" "$K8S_DIR/live2.err" | head -1)"
else
    fail "namespace deleted: exit $rc: $(tail -3 "$K8S_DIR/live2.err")"
fi
if [ "$(echo "$stop2_s < 30" | bc)" = 1 ]; then
    pass "namespace deleted: the run stopped ${stop2_s}s after the delete"
else
    fail "namespace deleted: the run took ${stop2_s}s to stop"
fi
wait_for 60 bash -c "! $KUBECTL --kubeconfig $K8S_DIR/admin.kubeconfig get namespace $NS2" ||
    fail "namespace $NS2 never went"

left=$(kadmin get namespaces,leases -A -l app.kubernetes.io/managed-by=kperf -o name)
if [ -z "$left" ]; then pass "no namespace or Lease left"; else fail "left: $left"; fi
if lock_held; then fail "the cluster lock was left behind"; else pass "no cluster lock left"; fi
k8s_nothing_left "cleanup_live"
echo "figures: the live run stopped ${stop_s}s after kperf cleanup --force began, ${stop2_s}s after its namespace was deleted; two short runs at once took ${both_s}s; a run refused in ${refuse_s}s"
ks_finish
