#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_cpu_limit.sh - a namespace whose LimitRange gives containers a default CPU limit (kube-sim
# fault limit-range-cpu: the LimitRanger admission plugin's default and annotation, enforced by
# the kubelet as a real CFS quota) imposes a limit kperf's agents never asked for. kperf says so:
#  * one warning when the servers are ready (the limit and the plugin's annotation), recorded as
#    metadata.agent_cpu_limit;
#  * the clients' stream samples carry placement.client_cpu_quota_millicores (the agent reads its
#    own cgroup), and one warning after the report;
#  * kperf compare against a run without the limit names it as the likely explanation and lists
#    the clients' placement changes as settings too;
#  * the groups kube-sim made for the limited containers are gone when the pods are.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 2
RUN=(--scenarios pod-to-pod --tests TCP_STREAM,TCP_RR --duration 1s --omit 0s -o json)
prefix=$(jq -r .prefix "$K8S_DIR/config.json")
groups_left() { # the cpu groups of this kube-sim that still exist
    find /sys/fs/cgroup /sys/fs/cgroup/cpu -maxdepth 1 -name "${prefix}cpu-*" 2>/dev/null
}

kperf_k8s "${RUN[@]}" >"$K8S_DIR/free.json" 2>"$K8S_DIR/free.err" ||
    fail "run without a limit: rc $?: $(tail -3 "$K8S_DIR/free.err")"
if ! grep -q "CPU limit" "$K8S_DIR/free.err" &&
    jq -e '.metadata.agent_cpu_limit == null' "$K8S_DIR/free.json" >/dev/null; then
    pass "no limit: no warning, no agent_cpu_limit"
else
    fail "no limit, yet: $(grep "CPU limit" "$K8S_DIR/free.err")"
fi

"$KS" fault --state-dir "$K8S_DIR" "limit-range-cpu:cpu=500m" >/dev/null || fail "fault"
kperf_k8s "${RUN[@]}" >"$K8S_DIR/lim.json" 2>"$K8S_DIR/lim.err"
rc=$?
[ "$rc" = 0 ] && pass "run under the LimitRange exits 0" || fail "rc $rc: $(tail -3 "$K8S_DIR/lim.err")"
if grep -Eq "^kperf: warning: server pods have a CPU limit of 500m that kperf did not set \(LimitRanger plugin set: cpu limit for container server\): .*remove the LimitRange default of namespace" \
    "$K8S_DIR/lim.err" && [ "$(grep -c "that kperf did not set" "$K8S_DIR/lim.err")" = 1 ]; then
    pass "one warning names the servers' limit and the LimitRanger annotation"
else
    fail "server warning: $(grep -i "limit" "$K8S_DIR/lim.err")"
fi
jq -e '.metadata.agent_cpu_limit == "500m"' "$K8S_DIR/lim.json" >/dev/null &&
    pass "metadata.agent_cpu_limit = 500m" || fail "metadata: $(jq -c .metadata.agent_cpu_limit "$K8S_DIR/lim.json")"
if grep -q "resources.limits.cpu is not enforced" "$K8S_DIR/kube-sim.log" 2>/dev/null; then
    echo "skip: kube-sim cannot enforce CPU limits here (no writable cpu cgroup controller)"
else
    if jq -e '[.results[] | select(.test == "TCP_STREAM" and .status == "ok")] | length == 2 and
            all(.[].samples[]; .placement.client_cpu_quota_millicores == 500 and .placement.client_cpus == 1)' \
        "$K8S_DIR/lim.json" >/dev/null; then
        pass "stream clients read their quota: 500 millicores, 1 CPU"
    else
        fail "placements: $(jq -c '[.results[] | select(.test == "TCP_STREAM") | [.status, .samples[].placement]]' "$K8S_DIR/lim.json")"
    fi
    grep -Eq "^kperf: warning: 2 client runs were held to a CPU limit \(as low as 0.5 CPU" "$K8S_DIR/lim.err" &&
        pass "and the run warns after its report" || fail "client warning: $(grep -i "held to" "$K8S_DIR/lim.err")"
    "$KPERF" compare "$K8S_DIR/free.json" "$K8S_DIR/lim.json" >"$K8S_DIR/cmp.txt" 2>&1
    if grep -q "Likely explanation: agent_cpu_limit changed from (absent) to 500m (and 2 more settings below)" "$K8S_DIR/cmp.txt" &&
        grep -q "samples.placement.client_cpu_quota_millicores: 0 -> 500 (in 2 rows)" "$K8S_DIR/cmp.txt"; then
        pass "compare: the limit is the likely explanation; the placement changes listed as settings"
    else
        fail "compare: $(grep -iE "likely|placement|agent_cpu" "$K8S_DIR/cmp.txt")"
    fi
fi
k8s_nothing_left "cpu limit"
if wait_for 20 sh -c "[ -z \"\$(find /sys/fs/cgroup /sys/fs/cgroup/cpu -maxdepth 1 -name '${prefix}cpu-*' 2>/dev/null)\" ]"; then
    pass "no cpu group of the run's containers is left"
else
    fail "groups left: $(groups_left)"
fi
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
ks_finish
