#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_watch_rollout.sh - `kperf watch --local --local-fault rollout:down=2s,gap=2s,flush=1`
# (issue 13, docs/local-backend.md): a CNI rollout played on the local cluster, node1 then node2,
# each node's pod traffic dropped for 2 s (nftables in the node's namespace) and its conntrack
# flushed. Asserted against what kperf logged it injected ("rollout: nodeN: pod traffic dropped
# for L s from T"):
#  * both nodes were rolled, in that order, conntrack flushed, each drop about 2 s;
#  * pod-to-pod other-node (client pod on node1, server pod on node2): two UDP outages, the
#    first node1's, the second node2's: each starts within 0.5 s of its drop and lasts its
#    length within 10%; pod-to-pod same-node (both on node1): node1's outage only;
#  * host-to-host paths (no pod involved): no outage; exit 3; nothing left behind.
# Runtime about 20 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D watch-rollout

"$KPERF" watch --local --duration 11s --local-fault rollout:down=2s,gap=2s,flush=1 -o json \
    >"$D/w.json" 2>"$D/w.err"
rc=$?
[ "$rc" = 3 ] || fail "watch with a rollout exited $rc, want 3: $(tail -3 "$D/w.err")"
grep "rollout:" "$D/w.err"
python3 - "$D/w.json" "$D/w.err" <<'PY' || fail "outages do not match the rollout"
import json, re, sys
doc = json.load(open(sys.argv[1]))
inj = [(m.group(1), float(m.group(2)), float(m.group(3)), m.group(4))
       for m in re.finditer(r"rollout: (node\d): pod traffic dropped for ([\d.]+) s from ([\d.]+)(.*)",
                            open(sys.argv[2]).read())]
bad = []
if [i[0] for i in inj] != ["node1", "node2"]:
    print("rolled nodes: %s" % inj); sys.exit(1)
for node, length, start, rest in inj:
    if "conntrack flushed" not in rest:
        bad.append("%s: conntrack not flushed (%s)" % (node, rest.strip()))
    if not 1.9 <= length <= 2.6:
        bad.append("%s: dropped for %.3f s, asked 2 s" % (node, length))
paths = {p["path"]: p for p in doc["paths"]}
want = {"pod-to-pod/same-node": ["node1"], "pod-to-pod/other-node": ["node1", "node2"],
        "host-to-host/same-node": [], "host-to-host/other-node": []}
for name, nodes in want.items():
    p = paths.get(name)
    if not p or p["error"] is not None:
        bad.append("%s: %s" % (name, p and p["error"])); continue
    u = p["probe"]["probes"]["udp"]
    got = u["outages"]
    if len(got) != len(nodes):
        bad.append("%s: %d UDP outages %s, want %d" % (name, len(got), got, len(nodes))); continue
    for o, node in zip(got, nodes):
        _, length, start, _ = [i for i in inj if i[0] == node][0]
        at = p["probe"]["start_unix_s"] + o["start_s"]
        print("%s: UDP outage %.3f s at %+.3f s from %s's drop (%.3f s)" %
              (name, o["length_s"], at - start, node, length))
        # the drop is in place from before nft returns (start): a little before is fine
        if not -0.3 <= at - start <= 0.5:
            bad.append("%s: outage at %.3f, %s dropped at %.3f" % (name, at, node, start))
        if abs(o["length_s"] - length) > 0.1 * length:
            bad.append("%s: outage %.3f s, %s dropped %.3f s (10%%)" % (name, o["length_s"], node, length))
if bad:
    print("\n".join(bad)); sys.exit(1)
PY
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("run_id",""))' "$D/w.json" 2>/dev/null)
[ -n "$id" ] || fail "no run id in the watch document"
[ -n "$id" ] && assert_clean "$id" "watch with a rollout" 2>/dev/null
finish
