#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Object identity on a cluster with a real cluster's timing (issue 14): kube-sim's garbage
# collector removes a deleted Job's pod only --gc-lag seconds later, as a real one does, so the
# pod of the forward pod-to-external Job is still there (Succeeded, same run id) when the
# reverse Job starts. With Job names that are not unique per run step, or a wait that does not
# check the pod's owner UID, the reverse step reads the forward pod's log: the reverse rows are
# then missing or wrong. Checked: every client Job of the run has its own name, every client
# pod's owner is a distinct Job, both directions are measured and the reverse rows come from a
# reverse document; --samples auto repeats get their own Jobs too.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
k8s_up --nodes 2 --gc-lag 6
EXT_IP=198.19.0.251
EXT_PORT=5302
k8s_external_host "$EXT_IP" node-1 node-2
k8s_external_start --port $EXT_PORT --bind $EXT_IP

# kperf manifests: the forward and reverse Jobs have distinct names
names=$("$KPERF" manifests --scenarios pod-to-external --external-server "$EXT_IP:$EXT_PORT" \
    --nodes node-1,node-2 2>/dev/null | awk '$1 == "kind:" {k = $2} $1 == "name:" && k == "Job" {print $2; k = ""}')
if [ "$(echo "$names" | sort -u | grep -c .)" = 2 ]; then
    pass "manifests: forward and reverse Jobs have distinct names (${names//$'\n'/ })"
else
    fail "manifests: Job names not distinct: ${names//$'\n'/ }"
fi

k8s_record_pods_start "$K8S_DIR/pods.jsonl"
kperf_k8s --scenarios pod-to-external --tests TCP_STREAM --duration 1s \
    --external-server "$EXT_IP:$EXT_PORT" -o json >"$K8S_DIR/ext.json" 2>"$K8S_DIR/ext.err"
rc=$?
[ "$rc" = 0 ] && pass "pod-to-external run exits 0" || { fail "run exit $rc"; tail -5 "$K8S_DIR/ext.err"; }
if jq -e '[.results[] | select(.scenario == "pod-to-external" and .status == "ok") |
          "\(.test)/\(.reverse)"] | sort == ["TCP_STREAM/false", "TCP_STREAM/true"]' \
    "$K8S_DIR/ext.json" >/dev/null; then
    pass "both directions measured, each from its own document"
else
    fail "rows: $(jq -c '[.results[] | {test, reverse, status, error}]' "$K8S_DIR/ext.json")"
fi
# each direction's samples carry that direction (a forward document read for the reverse step
# would put reverse=false samples in the reverse row)
if jq -e '[.results[] | select(.scenario == "pod-to-external") | . as $r |
          (.samples // [])[] | select(.reverse != $r.reverse)] | length == 0' \
    "$K8S_DIR/ext.json" >/dev/null; then
    pass "every sample is in its row's direction"
else
    fail "a sample of the other direction: $(jq -c '[.results[] | {reverse, s: [(.samples // [])[] | .reverse]}]' "$K8S_DIR/ext.json")"
fi
k8s_nothing_left "pod-to-external"

# --samples auto: every repeat of the group is its own Job
kperf_k8s --scenarios pod-to-pod --same-node --tests TCP_RR --duration 300ms \
    --samples auto -o json >"$K8S_DIR/auto.json" 2>"$K8S_DIR/auto.err"
rc=$?
k8s_record_pods_stop
[ "$rc" = 0 ] && pass "--samples auto run exits 0" || { fail "auto run exit $rc"; tail -5 "$K8S_DIR/auto.err"; }
jobs=$(jq -r 'select(.metadata.labels["kperf.io/role"] == "client") |
              .metadata.labels["kperf.io/job"]' "$K8S_DIR/pods.jsonl" | sort -u | grep -c .)
owners=$(jq -r 'select(.metadata.labels["kperf.io/role"] == "client") |
                .metadata.ownerReferences[0].uid' "$K8S_DIR/pods.jsonl" | sort -u | grep -c .)
pods=$(jq -r 'select(.metadata.labels["kperf.io/role"] == "client") | .metadata.name' \
    "$K8S_DIR/pods.jsonl" | sort -u | grep -c .)
samples=$(jq '[.results[] | select(.scenario == "pod-to-pod") | (.samples // [])[]] | length' \
    "$K8S_DIR/auto.json")
if [ "$pods" -ge 5 ] && [ "$jobs" = "$pods" ] && [ "$owners" = "$pods" ]; then
    pass "$pods client pods, $jobs distinct Job names, $owners distinct owner UIDs"
else
    fail "client pods $pods, distinct Job names $jobs, distinct owners $owners"
fi
# a log read twice would give two samples with the same agent document: the same operation
# count, the same duration to the nanosecond and the same latency summary (two client runs can
# share an operation count by chance; not all three)
if jq -e '[.results[] | select(.scenario == "pod-to-pod") | (.samples // [])[] |
           [.ops, .duration_s, .latency_us]] |
          (length >= 3) and (length == (unique | length))' "$K8S_DIR/auto.json" >/dev/null; then
    pass "--samples auto: $samples samples, each from its own client run"
else
    fail "--samples auto samples repeat: $(jq -c '[.results[] | {test, s: [(.samples // [])[] | [.ops, .duration_s]]}]' "$K8S_DIR/auto.json")"
fi
k8s_nothing_left "samples auto"
ks_finish
