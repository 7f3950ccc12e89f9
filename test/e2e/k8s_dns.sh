#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pod-to-dns on a 3-node kube-sim with its cluster DNS (up --dns): `kperf run --scenarios
# pod-to-dns` gives one UDP_RR and one TCP_CRR row per node (node:<name>) with lookup counts;
# with dns-drop:node=node-2,pct=30 node-2's rows lose (UDP) or are late (TCP) and the others
# lose nothing; kperf compare of a clean run vs the faulted one exits 3 naming node-2's rows
# only, two clean runs compare clean (latency shown, not judged from one sample: lost% and
# slow% by their counts, docs/compare.md). The DNS Jobs are gone after each run, after Ctrl-C,
# and after kill -9 at the next run (--cleanup-leftovers), which is the second clean run.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
command -v dnsmasq >/dev/null || { echo "SKIP: dnsmasq missing (dnsmasq-base)"; exit 77; }
k8s_up --nodes 3 --dns
ARGS=(--scenarios pod-to-dns --duration 3s --timeout 30s --lease-duration 3s)

# dns_run NAME: a pod-to-dns run into NAME.json, every row ok
dns_run() {
    kperf_k8s "${ARGS[@]}" -o json >"$K8S_DIR/$1.json" 2>"$K8S_DIR/$1.err"
    local rc=$?
    if [ "$rc" = 0 ] && jq -e '(.results | length == 6) and all(.results[]; .status == "ok")' \
        "$K8S_DIR/$1.json" >/dev/null; then
        pass "$1: 6 rows (3 nodes x UDP_RR, TCP_CRR)"
    else
        fail "$1: rc=$rc"; tail -5 "$K8S_DIR/$1.err"; jq -c '.skipped, .errors' "$K8S_DIR/$1.json"
    fi
    jq -r '.results[] | .samples[0] as $s | "\(.placement) \(.test) \($s.dns.proto): sent \($s.dns.sent) lost \($s.dns.lost) slow_1s \($s.dns.slow_1s) p50 \($s.latency_us.p50) us p99 \($s.latency_us.p99) us"' \
        "$K8S_DIR/$1.json"
    k8s_nothing_left "$1"
}

dns_run clean1
jq -e '[.results[] | .samples[0].dns.name] | length == 6 and all(test("^kperf-svc-a\\.kperf-[0-9a-z-]+\\.svc\\.cluster\\.local$"))' \
    "$K8S_DIR/clean1.json" >/dev/null && pass "clean1: looks up kperf's own Service" ||
    fail "clean1: names $(jq -c '[.results[].samples[0].dns.name]' "$K8S_DIR/clean1.json")"
jq -e '[.results[].samples[0].dns] | length == 6 and all(.server == "198.19.240.10" and .rcode_errors == 0)' \
    "$K8S_DIR/clean1.json" >/dev/null && pass "clean1: asked kube-dns, answered without error" ||
    fail "clean1: $(jq -c '[.results[].samples[0].dns | {server, rcode_errors}]' "$K8S_DIR/clean1.json")"

"$KS" fault --state-dir "$K8S_DIR" 'dns-drop:node=node-2,pct=30' >/dev/null || fail "fault dns-drop"
dns_run faulted
"$KS" fault --state-dir "$K8S_DIR" --clear >/dev/null || fail "fault --clear"
jq -e '[.results[] | select(.placement == "node:node-2") | .samples[0].dns | .lost + .slow_1s] | length == 2 and all(. > 0)' \
    "$K8S_DIR/faulted.json" >/dev/null && pass "faulted: node-2 lost or late lookups over UDP and TCP" ||
    fail "faulted: node-2 rows show no loss"
jq -e '[.results[] | select(.placement != "node:node-2") | .samples[0].dns.lost] | length == 4 and all(. == 0)' \
    "$K8S_DIR/faulted.json" >/dev/null && pass "faulted: node-1 and node-3 lost nothing" ||
    fail "faulted: loss on another node"

# Ctrl-C while a DNS Job runs, then kill -9 while one runs: nothing left after the first, the
# second's DNS pod is removed by the next run (clean2, --cleanup-leftovers; --lease-duration 3s:
# the next run sees the killed run's Lease expire within 3 s)
dns_pods() { [ -n "$(kadmin get pods -A -l 'app.kubernetes.io/managed-by=kperf,kperf.io/scenario=pod-to-dns' -o name 2>/dev/null)" ]; }
for sig in INT KILL; do
    "$KPERF" run --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e "${ARGS[@]}" -o json \
        >"$K8S_DIR/sig$sig.json" 2>"$K8S_DIR/sig$sig.err" &
    pid=$!
    wait_for 60 "a DNS pod" dns_pods || fail "$sig: no DNS pod appeared"
    kill "-$sig" "$pid"
    wait "$pid"
    rc=$?
    if [ "$sig" = INT ]; then
        [ "$rc" = 130 ] && pass "Ctrl-C: exit 130" || fail "Ctrl-C: exit $rc"
        k8s_nothing_left "Ctrl-C while DNS pods run"
    fi
done
dns_pods && pass "kill -9: its DNS pod is left behind" || fail "kill -9 left no DNS pod to clean"
ARGS+=(--cleanup-leftovers)
dns_run clean2
grep -qE "removing (run|leftovers of run)" "$K8S_DIR/clean2.err" && pass "clean2: removed the killed run first" ||
    fail "clean2: did not remove the killed run: $(grep -i leftover "$K8S_DIR/clean2.err" | head -2)"

"$KPERF" compare "$K8S_DIR/clean1.json" "$K8S_DIR/faulted.json" -o json >"$K8S_DIR/cmp.json" 2>/dev/null
rc=$?
regressed=$(jq -r '[.rows[] | select(any(.metrics[]; .verdict == "regression")) | "\(.placement) \(.test)"] | unique | join(", ")' "$K8S_DIR/cmp.json")
if [ "$rc" = 3 ] && [ -n "$regressed" ] && ! grep -qE 'node-1|node-3' <<<"$regressed"; then
    pass "compare clean vs faulted: exit 3, regressions on $regressed"
else
    fail "compare clean vs faulted: exit $rc, regressions on '$regressed'"
fi
"$KPERF" compare "$K8S_DIR/clean1.json" "$K8S_DIR/faulted.json" 2>/dev/null | grep -E "node-2 .*(lost|slow)%"
"$KPERF" compare "$K8S_DIR/clean1.json" "$K8S_DIR/clean2.json" -o json >"$K8S_DIR/cmp2.json" 2>/dev/null
rc=$?
# exit 0; or 5 (inconclusive), which is the right verdict when the second clean run did lose or
# wait > 1 s for a lookup (1 of 15 TCP lookups is 6.7 pp, not significant; a SYN the loaded
# machine dropped is sent again after 1 s): only for lost%/slow% of rows whose counts say so, and
# never a regression
stray_only() {
    jq -e --slurpfile c2 "$K8S_DIR/clean2.json" '
        def stray($p; $t): [$c2[0].results[] | select(.placement == $p and .test == $t) |
            .samples[].dns | .lost + .slow_1s] | add // 0;
        ([.rows[].metrics[] | select(.verdict == "regression")] | length == 0) and
        ([.rows[] | . as $r | .metrics[] | select(.verdict == "inconclusive") |
            {m: .metric, p: $r.placement, t: $r.test}] as $inc |
         ($inc | length > 0) and all($inc[]; (.m == "lost%" or .m == "slow%") and stray(.p; .t) > 0))' \
        "$K8S_DIR/cmp2.json" >/dev/null
}
if [ "$rc" = 0 ]; then
    pass "compare two clean runs: exit 0"
elif [ "$rc" = 5 ] && stray_only; then
    pass "compare two clean runs: exit 5, inconclusive only on lookups the second run really lost or waited for: $(jq -c '[.results[] | {placement, test, lost: .samples[0].dns.lost, slow: .samples[0].dns.slow_1s}]' "$K8S_DIR/clean2.json")"
else
    fail "compare two clean runs: exit $rc: $(jq -c '[.rows[] | {placement, test, m: [.metrics[] | select(.verdict == "regression" or .verdict == "inconclusive") | "\(.metric) \(.verdict)"]}]' "$K8S_DIR/cmp2.json")"
fi

ks_finish
