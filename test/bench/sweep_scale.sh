#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Usage (root, kube-sim's prerequisites, a built tree): test/bench/sweep_scale.sh [N...]
#   (default: 100 250 500)
# Sweep scale on kube-sim, one line per node count: kube-sim start-up time and its peak memory
# (VmHWM of the daemon), the sweep's wall time, API requests of kperf's user (kube-sim's request
# log; kperf's own count from its log agrees), requests per node, kperf's peak RSS
# (/usr/bin/time), kube-sim's CPU seconds during the sweep (utime + stime of the daemon, which
# runs the API server, controllers and kubelets), the 1-minute load average at the end, rows
# measured, outliers and suspects (names) and the spread of the first metric. Time-compressed: TCP_RR of 300 ms per pair, --parallel 8.
# Then the linear fit of requests over nodes (least squares) and the largest relative residual.
# Not part of the CI test command (500 nodes take minutes); docs/sweep-scale.md has the figures.
# SWEEP_SCALE_BOUND_S (default 900): fail when one sweep takes longer. SWEEP_SCALE_TIMEOUT
# (default 600s): kperf --timeout (500 server pods start in minutes on 2 loaded CPUs). SWEEP_SCALE_UP_ONLY=1:
# kube-sim's start-up time and memory only (no sweep).
set -uo pipefail
export KPERF_SRC=${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export KPERF_BIN=${KPERF_BIN:-$KPERF_SRC/build/bin}
export KUBECTL=${KUBECTL:-$(bash "$KPERF_SRC/test/tools/get-kubectl.sh")}
BOUND=${SWEEP_SCALE_BOUND_S:-900}
[ $# -gt 0 ] || set -- 100 250 500
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 2; }
OUT=$(mktemp /tmp/kperf-sweep-scale.XXXXXX)
# CPU seconds (user + system) a process has used
ks_cpu_s() {
    awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.1f", ($12 + $13) / t }' "/proc/$1/stat"
}
status=0
for N in "$@"; do
    (
        source "$KPERF_SRC/test/e2e/lib/k8s_common.sh"
        ks_need_root
        s=$(date +%s.%N)
        k8s_up --nodes "$N"
        e=$(date +%s.%N)
        up=$(echo "$e - $s" | bc)
        ks_pid=$(awk '$3 == "kube-sim" {print $1}' "$K8S_DIR/pids" | tail -1)
        ks_up_mb=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$ks_pid/status")
        if [ -n "${SWEEP_SCALE_UP_ONLY:-}" ]; then
            echo "nodes=$N kube_sim_up_s=$up kube_sim_rss_up_mib=$ks_up_mb" \
                "netns=$(wc -l <"$K8S_DIR/netns.list")"
            ks_finish >/dev/null
        fi
        before=$(k8s_user_requests)
        cpu0=$(ks_cpu_s "$ks_pid")
        s=$(date +%s.%N)
        /usr/bin/time -f '%M' -o "$K8S_DIR/rss" "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" \
            --image kperf-agent:e2e --scenarios pod-to-pod --tests TCP_RR --duration 300ms \
            --omit 0s --all-nodes --parallel 8 --timeout "${SWEEP_SCALE_TIMEOUT:-600s}" -o json -v >"$K8S_DIR/s.json" 2>"$K8S_DIR/s.err"
        rc=$?
        e=$(date +%s.%N)
        after=$(k8s_user_requests)
        cpu1=$(ks_cpu_s "$ks_pid")
        ks_peak_mb=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$ks_pid/status")
        wall=$(echo "$e - $s" | bc)
        req=$((after - before))
        own=$(grep -o '[0-9]* API requests in all' "$K8S_DIR/s.err" | tail -1 | cut -d' ' -f1)
        echo "nodes=$N rc=$rc kube_sim_up_s=$up kube_sim_rss_up_mib=$ks_up_mb" \
            "kube_sim_peak_mib=$ks_peak_mb wall_s=$wall requests=$req kperf_count=${own:-?}" \
            "per_node=$(echo "scale=2; $req / $N" | bc)" \
            "kperf_peak_rss_mib=$(( $(tail -1 "$K8S_DIR/rss") / 1024 ))" \
            "kube_sim_cpu_s=$(echo "$cpu1 - $cpu0" | bc)" "load1=$(cut -d' ' -f1 /proc/loadavg)" \
            "ok_rows=$(jq '[.results[]|select(.status=="ok")]|length' "$K8S_DIR/s.json")" \
            "outliers=$(jq -c '.metadata.sweep.outliers' "$K8S_DIR/s.json")" \
            "suspects=$(jq -c '.metadata.sweep.suspects' "$K8S_DIR/s.json")" \
            "spread=$(jq -c '.metadata.sweep.spread[0] | {median, p10, p90, min, max}' "$K8S_DIR/s.json")" | tee -a "$OUT"
        cp "$K8S_DIR/s.json" "/tmp/kperf-sweep-scale-$N.json" # the verdict, to explain each flagged node
        [ "$rc" = 0 ] || { tail -3 "$K8S_DIR/s.err"; cp "$K8S_DIR/s.err" "/tmp/kperf-sweep-scale-$N.err"; }
        ok=$(echo "$wall <= $BOUND" | bc)
        [ "$rc" = 0 ] && [ "$ok" = 1 ] || exit 1
        ks_finish >/dev/null
    ) || status=1
done
# requests = a + b * nodes, least squares; the worst residual relative to the count
awk '{for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      x[NR] = v["nodes"]; y[NR] = v["requests"] }
     END { if (NR < 2) exit; for (i = 1; i <= NR; i++) { sx += x[i]; sy += y[i];
           sxx += x[i] * x[i]; sxy += x[i] * y[i] }
           b = (NR * sxy - sx * sy) / (NR * sxx - sx * sx); a = (sy - b * sx) / NR
           for (i = 1; i <= NR; i++) { r = (y[i] - a - b * x[i]) / y[i]; r = r < 0 ? -r : r
                                       if (r > w) w = r }
           printf "requests = %.1f + %.2f * nodes; largest residual %.1f%%\n", a, b, 100 * w }' "$OUT"
rm -f "$OUT"
exit $status
