#!/usr/bin/env bash
# Usage (root, needs kube-sim's prerequisites): scripts/sweep-scale.sh NODES
# sweep scale on kube-sim: nodes, kube-sim start-up, sweep wall, API requests (total and per
# node), kperf peak RSS
set -uo pipefail
export KPERF_SRC=${KPERF_SRC:-$(cd "$(dirname "$0")/.." && pwd)} KPERF_BIN=${KPERF_BIN:-$KPERF_SRC/build/bin}
export KUBECTL=${KUBECTL:-$(bash "$KPERF_SRC/test/tools/get-kubectl.sh")}
source "$KPERF_SRC/test/e2e/lib/k8s_common.sh"
N=${1:?usage: sweep-scale.sh NODES}
s=$(date +%s.%N); k8s_up --nodes "$N"; e=$(date +%s.%N)
up=$(echo "$e - $s" | bc)
before=$(k8s_user_requests)
s=$(date +%s.%N)
/usr/bin/time -f '%M' -o "$K8S_DIR/rss" "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e \
  --scenarios pod-to-pod --tests TCP_RR --duration 500ms --omit 0s --all-nodes --parallel 8 -o json >"$K8S_DIR/s.json" 2>"$K8S_DIR/s.err"
rc=$?
e=$(date +%s.%N)
after=$(k8s_user_requests)
req=$((after - before))
echo "nodes=$N rc=$rc kube-sim-up=${up}s wall=$(echo "$e - $s" | bc)s requests=$req per_node=$(echo "scale=1; $req / $N" | bc) peak_rss_kb=$(cat "$K8S_DIR/rss") ok_rows=$(jq '[.results[]|select(.status=="ok")]|length' "$K8S_DIR/s.json") outliers=$(jq -c .metadata.sweep.outliers "$K8S_DIR/s.json")"
[ $rc = 0 ] || tail -3 "$K8S_DIR/s.err"
ks_finish >/dev/null
