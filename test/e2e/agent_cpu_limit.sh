#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_cpu_limit.sh - a client held to a CPU quota (what a pod's resources.limits.cpu becomes)
# counts the quota, not the CPUs it sees, when it places its streams, and says so in its result
# (placement.client_cpus, placement.client_cpu_quota_millicores; agent/cpuquota.h), and kperf
# run warns about such clients after its report. Real
# cgroups: a group of our own under the cpu controller (cgroup v1 cpu.cfs_quota_us, or v2
# cpu.max), removed by its exact name at the end. Needs root and a writable cpu controller.
. "$(dirname "$0")/agent_common.inc"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (creates a cgroup)"; exit 77; }
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || { echo "SKIP: needs 2 CPUs (a quota of 1 must be fewer than we see)"; exit 77; }

GROUP=""
if [ -f /sys/fs/cgroup/cpu/cpu.cfs_period_us ]; then
    GROUP=/sys/fs/cgroup/cpu/kperf-e2e-$$
    set_quota() { echo "$2" > "$GROUP/cpu.cfs_period_us" && echo "$1" > "$GROUP/cpu.cfs_quota_us"; }
elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
    GROUP=/sys/fs/cgroup/kperf-e2e-$$
    set_quota() { echo "$1 $2" > "$GROUP/cpu.max"; }
fi
[ -n "$GROUP" ] || { echo "SKIP: no writable cgroup cpu controller (v1 cpu or v2 cpu.max)"; exit 77; }
mkdir "$GROUP" || { echo "SKIP: cannot create $GROUP"; exit 77; }
drop_group() {
    # rmdir succeeds once the group's last process has left it (30 s bounds a hang)
    wait_for 30 "cgroup $GROUP to be removable" rmdir "$GROUP" || echo "warning: $GROUP not removed"
}
on_exit drop_group

# limited QUOTA_US PERIOD_US OUT args...: the client in our group under that quota
limited() {
    local quota=$1 period=$2 out=$3
    shift 3
    set_quota "$quota" "$period" || return 1
    sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$GROUP" \
        "$AGENT" client --server "127.0.0.1:$PORT" "$@" > "$out" 2> "$out.err"
}

start_server

# unlimited: what the client sees (our group's parent may limit us too: read it from the result)
client --tests TCP_STREAM_MULTI --streams 3 --duration 300ms --json > "$WORK/free.json" 2>/dev/null
check "no quota of ours: the client counts the CPUs it may use" jqt "$WORK/free.json" \
    ".results[0].placement | .client_cpus >= 1 and .client_cpus <= $ncpu and .client_cpu_quota_millicores >= 0"

limited 100000 100000 "$WORK/q1.json" --tests TCP_STREAM_MULTI --streams 3 --duration 300ms --json
check "quota of 1 CPU on $ncpu CPUs: client_cpus 1, 1000 millicores ($(head -c 200 "$WORK/q1.json.err"))" \
    jqt "$WORK/q1.json" '.results[0].placement | .client_cpus == 1 and .client_cpu_quota_millicores == 1000'
# placed as on one CPU: a thread per stream, no low-unsent mark (as under taskset -c 0)
check "quota of 1 CPU: 3 streams keep a thread each without the low-unsent mark, and deliver" \
    jqt "$WORK/q1.json" '.results[0].placement.client_threads == 0 and .results[0].placement.low_unsent_bytes == 0 and all(.results[0].streams[]; .bytes > 0)'
check "quota of 1 CPU: the result validates" "$AGENT" validate "$WORK/q1.json"

# a period other than 100 ms: 25 ms of every 50 ms is half a CPU, which still allows one
limited 25000 50000 "$WORK/qh.json" --tests TCP_STREAM --duration 300ms --json
check "quota of 25 ms per 50 ms: 500 millicores, 1 CPU" jqt "$WORK/qh.json" \
    '.results[0].placement | .client_cpus == 1 and .client_cpu_quota_millicores == 500'

# a quota of more CPUs than we see changes nothing but the reported quota
over=$(( (ncpu + 1) * 100000 ))
limited "$over" 100000 "$WORK/qo.json" --tests TCP_STREAM_MULTI --streams 3 --duration 300ms --json
check "quota above the CPU count: client_cpus as without it, quota reported" jqt "$WORK/qo.json" \
    ".results[0].placement.client_cpu_quota_millicores == $(( (ncpu + 1) * 1000 )) and .results[0].placement.client_cpus == $(jq '.results[0].placement.client_cpus' "$WORK/free.json")"

stop_server

# The controller says so: a local run (whose agents inherit the cgroup it runs in) under a
# quota of 1 CPU warns once, after its report, naming the smallest quota; the same run without
# a quota of ours does not (unless a group above us limits it too).
KPERF="${AGENT%/*}/kperf"
if [ -x "$KPERF" ] && command -v ip > /dev/null && command -v nft > /dev/null; then
    run_local() { # run_local OUT [in-group]
        local out=$1 where=${2:-}
        set -- "$KPERF" run --local --scenarios pod-to-pod --tests TCP_STREAM --duration 1s \
            --omit 0s -o json
        if [ "$where" = in-group ]; then
            set_quota 100000 100000 || return 1
            sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$GROUP" "$@" \
                > "$out" 2> "$out.err"
        else
            "$@" > "$out" 2> "$out.err"
        fi
    }
    run_local "$WORK/local-q1.json" in-group
    check "kperf run --local under 1 CPU: rows measured under the quota ($(tail -c 300 "$WORK/local-q1.json.err"))" \
        jqt "$WORK/local-q1.json" '[.results[] | select(.status == "ok")] | length >= 1 and
            all(.[].samples[]?; .placement.client_cpu_quota_millicores == 1000)'
    check "kperf run --local under 1 CPU: one warning naming the limit and what to do" \
        sh -c '[ "$(grep -c "held to a CPU limit" "$1")" = 1 ] &&
            grep -Eq "^kperf: warning: [0-9]+ client runs? (was|were) held to a CPU limit \(as low as 1 CPU, .*remove it" "$1"' \
        sh "$WORK/local-q1.json.err"
    if jqt "$WORK/free.json" '.results[0].placement.client_cpu_quota_millicores == 0'; then
        run_local "$WORK/local-free.json"
        check "kperf run --local without a quota: measured, no CPU-limit warning" \
            sh -c 'jq -e "[.results[] | select(.status == \"ok\")] | length >= 1" "$1" > /dev/null &&
                ! grep -q "CPU limit" "$1.err"' sh "$WORK/local-free.json"
    fi
else
    echo "skip: kperf run --local under a quota (needs kperf, ip and nft)"
fi
finish
