#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `kperf watch` on a cluster during a CNI rollout: a 2-node kube-sim seeded with aws-node whose
# rollout drops each node's pod traffic for 1.5 s while its CNI pod restarts (2 s per node,
# node by node) and flushes its conntrack table. `kperf watch --scenarios all -- kubectl rollout
# restart ds/aws-node -n kube-system` (the real kubectl) must:
#  1. report, on every pod path, one UDP outage per node the path goes through (its client's
#     and its server's node), in rollout order, each starting within 0.5 s of what kube-sim
#     recorded in cni-rollout.jsonl and as long within 10%; none on host-to-host; exit 3;
#     leave nothing behind;
#  2. with no command (nothing injected) report no outage and exit 0.
# --settle 12s keeps every probe running past 10 s, when the server's first TCP keepalive goes
# out on a control connection idle since the flush: the probe must renew its UDP session before
# that (an agent that does not loses every UDP answer of the pod-to-service paths from then on;
# docs/watch.md "Known problems").
# Runtime about 45 s.
set -uo pipefail
source "${KPERF_SRC:?}/test/e2e/lib/k8s_common.sh"
ks_need_root
KUBECTL=$(bash "$KPERF_SRC/test/tools/get-kubectl.sh") || { fail "no kubectl"; ks_finish; }
export KUBECTL
k8s_up --nodes 2 --cni aws-node --cni-restart-time 2s --cni-restart-outage 1.5s \
    --cni-conntrack-flush
W=(watch --kubeconfig "$K8S_DIR/kubeconfig" --image kperf-agent:e2e --timeout 60s
    --scenarios all -o json)

# --- 1. the rollout ---------------------------------------------------------------------------
"$KPERF" "${W[@]}" --settle 12s -- "$KUBECTL" --kubeconfig "$K8S_DIR/admin.kubeconfig" \
    rollout restart ds/aws-node -n kube-system >"$K8S_DIR/w.json" 2>"$K8S_DIR/w.err"
rc=$?
[ "$rc" = 3 ] && pass "rollout: exit 3" || { fail "rollout: exit $rc, want 3"; tail -5 "$K8S_DIR/w.err"; }
if python3 - "$K8S_DIR/w.json" "$K8S_DIR/cni-rollout.jsonl" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
inj = [json.loads(l) for l in open(sys.argv[2])]
bad = []
if [i["node"] for i in inj] != ["node-1", "node-2"]:
    bad.append("kube-sim restarted %s" % [i["node"] for i in inj])
if not all(i["conntrack_flushed"] for i in inj):
    bad.append("conntrack not flushed: %s" % inj)
if doc["command"]["exit_code"] != 0:
    bad.append("kubectl exited %s" % doc["command"]["exit_code"])
names = sorted(p["path"] for p in doc["paths"])
if names != ["host-to-host/other-node", "host-to-host/same-node", "pod-to-pod/other-node",
             "pod-to-pod/same-node", "pod-to-service/other-node", "pod-to-service/same-node"]:
    bad.append("paths %s" % names)
for p in doc["paths"]:
    name = p["path"]
    if p["error"] is not None:
        bad.append("%s: %s" % (name, p["error"]))
        continue
    u = p["probe"]["probes"]["udp"]
    want = [] if name.startswith("host-to-host") else \
        [i for i in inj if i["node"] in (p["client_node"], p["server_node"])]
    got = [(p["probe"]["start_unix_s"] + o["start_s"], o["length_s"]) for o in u["outages"]]
    if len(got) != len(want):
        bad.append("%s: %d UDP outages, want %d (%s): %s" % (
            name, len(got), len(want), [i["node"] for i in want], u["outages"]))
        continue
    for (at, length), i in zip(got, want):
        print("%s: UDP outage %+.3f s after %s's injection, %.3f s long (injected %.3f s)" % (
            name, at - i["start_unix"], i["node"], length, i["outage_s"]))
        # within 0.5 s of the injection, and not before its nft command began (the outage
        # starts at the first lost probe's send time: a few ms of slack)
        if abs(at - i["start_unix"]) > 0.5 or at < i["before_unix"] - 0.02:
            bad.append("%s: outage at %.3f, %s dropped at %.3f (nft began %.3f)" % (
                name, at, i["node"], i["start_unix"], i["before_unix"]))
        # as long within 10%: the drop holds from between before_unix and start_unix (nft's
        # commit, near the end of its run: a loaded machine stretches that run) to end_unix
        tol = 0.1 * i["outage_s"]
        if not i["outage_s"] - tol <= length <= i["end_unix"] - i["before_unix"] + tol:
            bad.append("%s: outage of %.3f s, %s injected %.3f s (nft began %.3f s before)" % (
                name, length, i["node"], i["outage_s"], i["start_unix"] - i["before_unix"]))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
    pass "rollout: outages per node in rollout order, matching the injection"
else
    fail "rollout: outages do not match the injection"
fi
k8s_nothing_left "rollout"

# --- 2. nothing injected ----------------------------------------------------------------------
"$KPERF" "${W[@]}" --duration 3s >"$K8S_DIR/q.json" 2>"$K8S_DIR/q.err"
rc=$?
[ "$rc" = 0 ] && pass "quiet: exit 0" || { fail "quiet: exit $rc, want 0"; tail -5 "$K8S_DIR/q.err"; }
jq -e '(.paths | length == 6) and all(.paths[]; .error == null and
        ([.probe.probes[] | .outages_total] | add) == 0 and .probe.probes.udp.sent > 100)' \
    "$K8S_DIR/q.json" >/dev/null && pass "quiet: no outage on 6 paths" ||
    fail "quiet: $(jq -c '[.paths[] | {path, error, o: [.probe.probes[]? | {outages_total, outages}], start: .probe.start_unix_s}]' "$K8S_DIR/q.json")"
k8s_nothing_left "quiet"
ks_finish
