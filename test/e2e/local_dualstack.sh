#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_dualstack.sh - `kperf run --local --ip-family both`: every row once per family on the
# dual-stack local cluster (servers on ::, clients dialling each family), all ok, rows marked
# IPv4/IPv6, TCP's MSS telling the families apart (1448 over IPv4, 1428 over IPv6 at MTU
# 1500), the path MTU probe saying ok on every row, the table naming the family; nothing left
# behind. Runtime about 40 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-ds

"$KPERF" run --local --ip-family both --scenarios all --tests TCP_RR,UDP_RR,TCP_STREAM \
    --duration 1s -o json >"$D/ds.json" 2>"$D/ds.err"
rc=$?
[ "$rc" = 0 ] || fail "run --ip-family both exited $rc: $(tail -3 "$D/ds.err")"
validate "$D/ds.json"
python3 - "$D/ds.json" <<'PY' || fail "dual-stack rows"
import json, sys
rep = json.load(open(sys.argv[1]))
bad = []
want = set()
for f in ("IPv4", "IPv6"):
    for s in ("pod-to-pod", "host-to-host", "pod-to-service"):
        for p in ("same-node", "other-node"):
            for t in ("TCP_RR", "UDP_RR", "TCP_STREAM"):
                want.add((f, s, p, t, False))
    for t in ("TCP_RR", "UDP_RR", "TCP_STREAM"):
        want.add((f, "pod-to-external", "external", t, False))
    want.add((f, "pod-to-external", "external", "TCP_STREAM", True))
got = {(r.get("ip_family"), r["scenario"], r["placement"], r["test"], bool(r.get("reverse"))): r
       for r in rep["results"]}
for k in sorted(want - set(got), key=str):
    bad.append("missing row %s" % (k,))
for k in sorted(set(got) - want, key=str):
    bad.append("unexpected row %s" % (k,))
for k, r in sorted(got.items(), key=lambda x: str(x[0])):
    if r.get("status") != "ok":
        bad.append("%s: status %s %s" % (k, r.get("status"), r.get("errors")))
        continue
    # a clean cluster: every path carries its interfaces' MTU (the path MTU probe)
    if (r.get("path_mtu") or {}).get("verdict") != "ok":
        bad.append("%s: path MTU %s" % (k, r.get("path_mtu")))
    if k[3] == "TCP_STREAM" and k[2] == "other-node":
        mss = r["aggregate"]["tcp"]["mss"]
        if mss != (1428 if k[0] == "IPv6" else 1448):
            bad.append("%s: MSS %s" % (k, mss))
md = rep["metadata"]
if md.get("ip_families") != ["IPv4", "IPv6"]:
    bad.append("metadata ip_families %r" % md.get("ip_families"))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
id=$(run_id_of "$D/ds.json")
[ -n "$id" ] && assert_clean "$id" "the dual-stack run"
"$KPERF" report "$D/ds.json" -o table >"$D/ds.txt" 2>&1
grep -q '^pod-to-pod/IPv6 ' "$D/ds.txt" && grep -q '^pod-to-pod/IPv4 ' "$D/ds.txt" ||
    fail "table without families: $(head -5 "$D/ds.txt")"
finish
