#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sweep_verdict.sh [RUNS] - issue 31's Done-when for the sweep verdict, repeated: on one 5-node
# kube-sim, RUNS sweeps (default 5) with node-3's links at 1 Gbit/s both ways (kube-sim fault
# link-rate: tbf on each end of its veth) and RUNS with no limit, each
# `kperf run --all-nodes --parallel 2 --tests TCP_STREAM --duration 2s`; prints one line per
# sweep (outliers, suspects, node values in Mb/s, the spread) and the counts:
# "limited: N/RUNS flagged exactly node-3; clean: M/RUNS flagged none". Root; exit 0 when both
# are RUNS/RUNS. docs/sweep-scale.md records its output. e2e.k8s_sweep_link_rate runs one of each.
set -uo pipefail
export KPERF_SRC=${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export KPERF_BIN=${KPERF_BIN:-$KPERF_SRC/build/bin}
export KUBECTL=${KUBECTL:-$(bash "$KPERF_SRC/test/tools/get-kubectl.sh")}
RUNS=${1:-5}
source "$KPERF_SRC/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v tc >/dev/null || { echo "SKIP: no tc"; exit 77; }
k8s_up --nodes 5

# one sweep; prints its line; returns 0 when the outliers are exactly $1 (a JSON array)
sweep() {
    local want=$1 label=$2 rc
    kperf_k8s --scenarios pod-to-pod --tests TCP_STREAM --duration 2s --all-nodes \
        --parallel 2 -o json >"$K8S_DIR/s.json" 2>"$K8S_DIR/s.err"
    rc=$?
    echo "$label rc=$rc $(jq -c '.metadata.sweep | {outliers, suspects, confirmed,
        mbps: [.nodes[] | .metrics | to_entries[0].value.value | floor],
        spread: (.spread[0] | {median: (.median | floor), p10: (.p10 | floor), p90: (.p90 | floor)})}' \
        "$K8S_DIR/s.json" 2>&1 | cut -c1-400)"
    [ "$rc" = 0 ] && jq -e --argjson w "$want" '.metadata.sweep.outliers == $w' \
        "$K8S_DIR/s.json" >/dev/null
}

limited=0 clean=0
"$KS" fault --state-dir "$K8S_DIR" "link-rate:node=node-3,rate=1gbit" >/dev/null ||
    { echo "FAIL: kube-sim fault link-rate"; ks_finish; }
for i in $(seq 1 "$RUNS"); do
    sweep '["node-3"]' "limited $i:" && limited=$((limited + 1))
done
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null
for i in $(seq 1 "$RUNS"); do
    sweep '[]' "clean $i:" && clean=$((clean + 1))
done
echo "limited: $limited/$RUNS flagged exactly node-3; clean: $clean/$RUNS flagged none"
if [ "$limited" = "$RUNS" ] && [ "$clean" = "$RUNS" ]; then
    pass "sweep verdict $limited/$RUNS and $clean/$RUNS"
else
    fail "sweep verdict: limited $limited/$RUNS, clean $clean/$RUNS"
fi
k8s_nothing_left "sweep"
ks_finish
