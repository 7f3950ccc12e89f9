#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_netpol.sh - NetworkPolicy datapath cost (issue 33 part 2, --netpol-rules) on the local
# cluster: `--netpol-rules 0,1000` measures the pod rows as always, then again with a policy of
# 1000 rules selecting the server pods (controller/local/local_netpol.h: an nftables table on
# each node whose forward hook sends every flow to a server through the 999 rules that admit
# nothing of kperf's, then the one that admits its clients).
#  * the rows of both sizes are measured, the policy ones as placements "<p>/netpol-1000", and
#    the run's parameters list the sizes;
#  * the text report sets each policy row beside the same row without a policy;
#  * kperf's new flows met the rules on both nodes (the policy's counters, read back when it is
#    removed after the last row) and none of its packets was dropped;
#  * a run without the flag has no policy rows; bad sizes are refused in one line;
#  * nothing is left behind (local_run checks).
# Runtime: 16 rows (TCP_CRR, UDP_RR; pod-to-pod and pod-to-service; two placements; two sizes)
# at --duration 1s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-netpol
# shellcheck disable=SC2034 # read by local_run (lib/local_common.sh)
COMMON=(--local --scenarios pod-to-pod,pod-to-service --tests TCP_CRR,UDP_RR --duration 1s
    --pod-churn 0 -o json -v)

local_run np --netpol-rules 1000,0
validate "$D/np.json"
assert_json "16 rows, all measured" "$D/np.json" \
    '[.results[] | select(.status == "ok")] | length == 16'
assert_json "8 rows under the 1000-rule policy, both placements of both scenarios" "$D/np.json" \
    '[.results[] | select(.placement | endswith("/netpol-1000")) | .scenario + " " + .placement] | unique == ["pod-to-pod other-node/netpol-1000", "pod-to-pod same-node/netpol-1000", "pod-to-service other-node/netpol-1000", "pod-to-service same-node/netpol-1000"]'
assert_json "the sizes in the run's parameters, ascending" "$D/np.json" \
    '.metadata.params.netpol_rules == [0, 1000]'
# the report sets each policy row beside the same row without a policy (netpol_cost.h): one
# line per row and metric, the 1000-rule figure and its change after the policy-free one
"$KPERF" report "$D/np.json" >"$D/np.txt" 2>&1
check "report: a NetworkPolicy datapath cost section" grep -q '^NetworkPolicy datapath cost' "$D/np.txt"
for row in "pod-to-pod same-node TCP_CRR conn/s" "pod-to-pod other-node TCP_CRR p50 us" \
    "pod-to-service other-node UDP_RR ops/s"; do
    check "report: $row without and with 1000 rules ($(grep -F "  $row:" "$D/np.txt"))" \
        grep -qE "^  $row: [0-9.]+ \| 1000 rules [0-9.]+ \([+-][0-9.]+%\)$" "$D/np.txt"
done
for node in node1 node2; do
    line=$(grep -E "netpol: $node: [0-9]+ packets to the servers, [0-9]+ new flows met the rules, [0-9]+ packets dropped" "$D/np.err" | tail -1)
    flows=$(sed -E 's/.* ([0-9]+) new flows met.*/\1/' <<<"$line")
    dropped=$(sed -E 's/.* ([0-9]+) packets dropped.*/\1/' <<<"$line")
    check "$node: kperf's new flows met the 1000 rules ($line)" test "${flows:-0}" -gt 0
    assert_eq "$node: none of kperf's packets dropped" 0 "${dropped:-x}"
done

local_run plain --tests UDP_RR --same-node
assert_json "without --netpol-rules: no policy rows" "$D/plain.json" \
    '[.results[] | select(.placement | contains("netpol"))] | length == 0'
if grep -q "new flows met the rules" "$D/plain.err"; then
    fail "a run without --netpol-rules put a policy in place: $(grep netpol "$D/plain.err")"
else
    pass "without --netpol-rules: no policy put in place"
fi

out=$("$KPERF" run --local --netpol-rules 100,x 2>&1)
rc=$?
assert_eq "a bad size: usage error" 2 "$rc"
assert_contains "a bad size: one line naming it" "$out" "--netpol-rules: 'x' is not a whole number"
finish
