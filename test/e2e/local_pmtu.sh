#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_pmtu.sh - the path MTU probe (issue 32 part 2, docs/report.md "Path MTU") on the
# dual-stack local cluster with a path-MTU black hole: --local-fault mtu-hop:link=node2,mtu=1400
# lowers the MTU of node 2's port on the underlay bridge (which drops larger frames without a
# word) and drops ICMP "fragmentation needed" and "packet too big" in the underlay namespace.
#  * every row that crosses node 2's link (the other-node rows, IPv4 and IPv6) says black-hole
#    with a path MTU of 1400 found from below within the probe's 8-byte step, no ICMP, and
#    the transfer at full MSS stalled; every same-node row says ok at 1500;
#  * the table marks exactly those rows !pmtu-black-hole and names them under its legend; the
#    report validates (JSON Schema and kperf's own validator through kperf report);
#  * nothing is left behind.
# The clean runs of e2e.local_dualstack (both families, every scenario) and e2e.local_counters
# assert that no row is a black hole there.
# Runtime: one run of 8 TCP_RR rows at --duration 1s; each black-hole row's probe costs about
# 2 s (its lost sizes wait 100 ms twice, the stalled transfer 1 s).
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-pmtu
# shellcheck disable=SC2034 # read by local_run (lib/local_common.sh)
COMMON=(--local --ip-family both --scenarios pod-to-pod,host-to-host --tests TCP_RR
    --duration 1s --pod-churn 0 -o json)

local_run hole --local-fault 'mtu-hop:link=node2,mtu=1400'
validate "$D/hole.json"

assert_json "8 rows, all measured" "$D/hole.json" \
    '[.results[] | select(.status == "ok")] | length == 8'
assert_json "other-node rows (IPv4, IPv6): black hole at 1400 without ICMP" "$D/hole.json" \
    '[.results[] | select(.placement == "other-node") | .path_mtu | .verdict == "black-hole" and .path <= 1400 and .path >= 1392 and .icmp == 0 and .tcp_full_mss == false] | all and length == 4'
assert_json "both families among the black holes" "$D/hole.json" \
    '[.results[] | select(.path_mtu.verdict == "black-hole") | .ip_family // "IPv4"] | unique == ["IPv4", "IPv6"]'
assert_json "same-node rows: ok at 1500" "$D/hole.json" \
    '[.results[] | select(.placement == "same-node") | .path_mtu | .verdict == "ok" and .path == 1500 and .tcp_full_mss == true] | all and length == 4'

"$KPERF" report "$D/hole.json" -o table >"$D/hole.txt" 2>"$D/report.err" ||
    fail "kperf report refused the report: $(tail -2 "$D/report.err")"
marked=$(grep -c '| !pmtu-black-hole' "$D/hole.txt")
assert_eq "table: exactly the 4 other-node rows marked" 4 "$marked"
other=$(grep '| !pmtu-black-hole' "$D/hole.txt" | grep -vc 'other-node')
assert_eq "table: no same-node row marked" 0 "$other"
legend=$(grep -c 'other-node TCP_RR.*: path MTU 1[34][0-9][0-9] < 1500, no ICMP, full-MSS TCP stalled: black hole' "$D/hole.txt")
assert_eq "table: the legend names the 4 rows" 4 "$legend"
finish
