#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_ipv6.sh - `kperf run --local --ip-family ipv6`: the dual-stack local cluster measured
# over IPv6 only (2001:2::/48): every scenario (pod, host, service DNAT via nftables ip6, the
# external host behind ip6 masquerade) and both RR and stream tests, TCP and UDP, succeed;
# TCP's MSS shows the IPv6 header (MTU 1500 - 40 - 20 - 12 = 1428; IPv4 gives 1448); the
# provenance says IPv6; nothing is left behind. A bad --ip-family value fails with one line.
# Runtime about 40 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D local-v6

"$KPERF" run --local --ip-family ipv6 --scenarios all --tests TCP_RR,UDP_RR,TCP_STREAM,UDP_STREAM \
    --duration 1s --udp-rate 200M -o json >"$D/v6.json" 2>"$D/v6.err"
rc=$?
[ "$rc" = 0 ] || fail "run --ip-family ipv6 exited $rc: $(tail -3 "$D/v6.err")"
validate "$D/v6.json"
python3 - "$D/v6.json" <<'PY' || fail "IPv6 rows"
import json, sys
rep = json.load(open(sys.argv[1]))
bad = []
want = set()
for s in ("pod-to-pod", "host-to-host", "pod-to-service"):
    for p in ("same-node", "other-node"):
        for t in ("TCP_RR", "UDP_RR", "TCP_STREAM", "UDP_STREAM"):
            want.add((s, p, t, False))
for t in ("TCP_RR", "UDP_RR", "TCP_STREAM", "UDP_STREAM"):
    want.add(("pod-to-external", "external", t, False))
want.add(("pod-to-external", "external", "TCP_STREAM", True))
want.add(("pod-to-external", "external", "UDP_STREAM", True))
got = {(r["scenario"], r["placement"], r["test"], bool(r.get("reverse"))): r for r in rep["results"]}
for k in sorted(want - set(got)):
    bad.append("missing row %s" % (k,))
for k, r in sorted(got.items()):
    if r.get("status") != "ok":
        bad.append("%s: status %s %s" % (k, r.get("status"), r.get("errors")))
    elif k[2] == "TCP_STREAM" and k[1] != "same-node" or k[0] == "pod-to-external" and k[2] == "TCP_STREAM":
        mss = r["aggregate"]["tcp"]["mss"]
        if mss != 1428:
            bad.append("%s: MSS %s, not IPv6's 1428 at MTU 1500" % (k, mss))
md = rep["metadata"]
if md.get("ip_family") != "IPv6":
    bad.append("metadata ip_family %r" % md.get("ip_family"))
if not md.get("external_server", "").startswith("[2001:2:"):
    bad.append("external_server %r" % md.get("external_server"))
for n in md.get("nodes", []):
    if not n.get("internal_ip", "").startswith("2001:2:"):
        bad.append("node address %r" % n.get("internal_ip"))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
id=$(run_id_of "$D/v6.json")
[ -n "$id" ] && assert_clean "$id" "the IPv6 run"

# bad values: one line naming the flag, usage exit code, nothing built
"$KPERF" run --local --ip-family ipv5 >"$D/bad.out" 2>"$D/bad.err"
rc=$?
[ "$rc" = 2 ] && grep -q -- "--ip-family: unknown family 'ipv5'" "$D/bad.err" ||
    fail "--ip-family ipv5: exit $rc, $(head -2 "$D/bad.err")"
finish
