#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_cni.sh - `kperf run --local --cni-conf FILE`: the pods' network by real CNI plugins
# (Debian's containernetworking-plugins), as root with network namespaces:
#  1. a bridge+portmap conflist (dual-stack host-local) and a ptp+bandwidth one each measure
#     every scenario (both placements, external both ways) with status ok; the report's
#     metadata.cni names the list, its plugins with their VERSION answer and sha256; the
#     readiness pods got their network by the plugins too; after each run the host-local data
#     directory holds no reservation (DEL ran for every pod) and nothing else is left behind.
#  2. `kperf compare` of the two names the CNI change as the likely explanation.
#  3. a plugin returning an error (IP exhaustion: a /30 range for three pods) and a plugin type
#     that does not exist: one error line naming the plugin and its message, exit 1, no
#     namespace, state or reservation left.
#  4. SIGKILL mid-run: the next run DELs the killed run's pods (its reservations go) and
#     removes its namespaces.
# Runtime about 50 to 65 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
CNI_DIR=/usr/lib/cni
for p in bridge ptp host-local portmap bandwidth; do
    [ -x "$CNI_DIR/$p" ] || { echo "skip: needs $CNI_DIR/$p (apt-get install containernetworking-plugins)"; exit 77; }
done
h_tmpdir D local-cni
pid=
on_exit '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null'
# The bounds below only stop a hang: what they wait for normally comes within a few seconds.

# conflist NAME MAIN SUBNET4 SUBNET6 CHAINED [IPAM_EXTRA]: a list of MAIN (with host-local in
# $D/ipam) then CHAINED
conflist() {
    local main r6="" rt6=""
    if [ -n "$4" ]; then
        r6=",[{\"subnet\":\"$4\"}]"
        rt6=',{"dst":"::/0"}'
    fi
    case $2 in
    bridge) main='"type":"bridge","bridge":"cni0","isGateway":true,"hairpinMode":true' ;;
    *) main="\"type\":\"$2\"" ;;
    esac
    cat <<EOF
{"cniVersion":"1.0.0","name":"$1","plugins":[
 {$main,"ipMasq":false,
  "ipam":{"type":"host-local","dataDir":"$D/ipam",
          "ranges":[[{"subnet":"$3"}]$r6],
          "routes":[{"dst":"0.0.0.0/0"}$rt6]}},
 {"type":"$5","capabilities":{"portMappings":true,"bandwidth":true}}]}
EOF
}
conflist kperf-e2e-bridge bridge 198.18.16.0/24 2001:2:0:10::/64 portmap >"$D/bridge.conflist"
conflist kperf-e2e-ptp ptp 198.18.17.0/24 2001:2:0:11::/64 bandwidth >"$D/ptp.conflist"
conflist kperf-e2e-tiny bridge 198.18.18.0/30 "" portmap >"$D/tiny.conflist"
conflist kperf-e2e-missing bridge 198.18.19.0/24 "" kperf-no-such-plugin >"$D/missing.conflist"

# reservations NAME: the addresses host-local holds for network NAME (files named after IPs)
reservations() {
    local f
    for f in "$D/ipam/$1"/*; do
        case ${f##*/} in
        '*' | last_reserved_ip.* | lock) ;;
        *) echo "${f##*/}" ;;
        esac
    done
}

# check_cni_run REPORT.json LIST TYPES: every row ok and the expected ones there; metadata.cni
check_cni_run() {
    if ! python3 - "$@" <<'PY'; then
import json, re, sys
rep = json.load(open(sys.argv[1]))
name, types = sys.argv[2], sys.argv[3].split("+")
want = set()
for s in ("pod-to-pod", "host-to-host", "pod-to-service"):
    for p in ("same-node", "other-node"):
        for t in ("TCP_RR", "TCP_STREAM"):
            want.add("%s/%s/%s" % (s, p, t))
want |= {"pod-to-external/external/TCP_RR", "pod-to-external/external/TCP_STREAM",
         "pod-to-external/external/TCP_STREAM/reverse"}
got, bad = set(), []
for r in rep["results"]:
    k = "%s/%s/%s%s" % (r["scenario"], r["placement"], r["test"], "/reverse" if r.get("reverse") else "")
    got.add(k)
    if r.get("status") != "ok":
        bad.append("%s: %s %s" % (k, r.get("status"), r.get("errors")))
bad += ["missing row " + k for k in sorted(want - got)]
cni = rep["metadata"]["cni"]
if cni.get("name") != "%s (%s)" % (name, "+".join(types)):
    bad.append("cni.name %r" % cni.get("name"))
plugins = {p["type"]: p for p in cni.get("plugins", [])}
for t in types + ["host-local"]:
    p = plugins.get(t)
    if not p or not re.fullmatch(r"[0-9a-f]{64}", p.get("sha256", "")) or \
            "1.0.0" not in p.get("supportedVersions", "") or p.get("cniVersion") != "1.0.0":
        bad.append("plugin %s: %r" % (t, p))
if cni.get("settings", {}).get("conflist", {}).get("name") != name:
    bad.append("settings.conflist")
pods = rep["metadata"].get("readiness", {}).get("pods", [])
if len(pods) != 6 or any("total_s" not in p for p in pods):
    bad.append("readiness pods through the CNI: %r" % pods)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
        fail "report of $2"
        return 1
    fi
}

# --- 1. the whole matrix with a bridge conflist, then with a ptp one
for kind in bridge ptp; do
    start=$SECONDS
    "$KPERF" run --local --cni-conf "$D/$kind.conflist" --scenarios all --tests TCP_RR,TCP_STREAM \
        --duration 1s -o json >"$D/$kind.json" 2>"$D/$kind.err"
    rc=$?
    echo "run with the $kind conflist: $((SECONDS - start)) s"
    [ "$rc" = 0 ] || fail "run --cni-conf $kind.conflist exited $rc: $(tail -3 "$D/$kind.err")"
    validate "$D/$kind.json"
    if [ "$kind" = bridge ]; then types=bridge+portmap; else types=ptp+bandwidth; fi
    check_cni_run "$D/$kind.json" "kperf-e2e-$kind" "$types" && pass "$kind: every scenario, metadata.cni"
    [ -e "$D/ipam/kperf-e2e-$kind/last_reserved_ip.0" ] || fail "$kind: host-local never reserved (test assumption)"
    left=$(reservations "kperf-e2e-$kind")
    [ -z "$left" ] || fail "$kind: host-local reservations left after the run: $left"
    id=$(run_id_of "$D/$kind.json")
    [ -n "$id" ] && assert_clean "$id" "$kind run"
done

# --- 2. compare names the CNI difference
out=$("$KPERF" compare "$D/bridge.json" "$D/ptp.json" 2>&1)
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "compare exited $rc: $(echo "$out" | tail -2)"
assert_contains "compare names the CNI change" "$out" \
    "Likely explanation: cni.name changed from kperf-e2e-bridge (bridge+portmap) to kperf-e2e-ptp (ptp+bandwidth)"
assert_contains "compare lists the plugin's binary change" "$out" "cni.plugins[0].sha256"

# --- 3. failing conflists: one line, exit 1, nothing left
before=$(ip netns list | grep -c '^kpl')
"$KPERF" run --local --cni-conf "$D/tiny.conflist" --scenarios pod-to-pod --tests TCP_RR \
    --duration 1s >/dev/null 2>"$D/tiny.err"
rc=$?
assert_eq "IP exhaustion: exit status" 1 "$rc"
errline=$(grep '^kperf: error:' "$D/tiny.err")
assert_eq "IP exhaustion: one error line" 1 "$(grep -c '^kperf: error:' "$D/tiny.err")"
assert_contains "IP exhaustion: the plugin and its message" "$errline" \
    'CNI plugin "bridge" failed (add) for pod kpl'
assert_contains "IP exhaustion: host-local's words" "$errline" "no IP addresses available in range set"
id=$(echo "$errline" | grep -o 'kpl[0-9a-f]\{6\}' | head -1)
[ -n "$id" ] && assert_clean "$id" "the IP exhaustion run"
left=$(reservations kperf-e2e-tiny)
[ -z "$left" ] || fail "IP exhaustion: reservations left: $left"
"$KPERF" run --local --cni-conf "$D/missing.conflist" --scenarios pod-to-pod >/dev/null 2>"$D/missing.err"
rc=$?
assert_eq "missing plugin: exit status" 1 "$rc"
assert_eq "missing plugin: the message" \
    "kperf: error: --cni-conf $D/missing.conflist: CNI plugin type \"kperf-no-such-plugin\" not found in /opt/cni/bin:/usr/lib/cni. Install it, or pass --cni-path DIR[:DIR...] where it is" \
    "$(cat "$D/missing.err")"
assert_eq "no namespace left by the failing runs" "$before" "$(ip netns list | grep -c '^kpl')"

# --- 4. SIGKILL: the next run DELs the killed run's pods
"$KPERF" run --local --cni-conf "$D/bridge.conflist" --scenarios pod-to-pod --tests TCP_RR \
    --duration 5s -o json >/dev/null 2>"$D/kill.err" &
pid=$!
wait_for 60 "the progress line of the 1st measurement" grep -qF -- "[1/2]" "$D/kill.err" ||
    fail "no progress before SIGKILL: $(cat "$D/kill.err")"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
[ -n "$(reservations kperf-e2e-bridge)" ] || fail "the killed run held no reservation (test assumption)"
"$KPERF" run --local --cni-conf "$D/ptp.conflist" --scenarios host-to-host --same-node \
    --tests TCP_RR --duration 500ms --pod-churn 0 -o json >"$D/next.json" 2>"$D/next.err"
rc=$?
[ "$rc" = 0 ] || fail "the run after SIGKILL exited $rc: $(tail -3 "$D/next.err")"
grep -q "earlier killed run" "$D/next.err" || fail "no word about removed leftovers: $(head -3 "$D/next.err")"
left=$(reservations kperf-e2e-bridge)
[ -z "$left" ] || fail "the killed run's reservations are still there: $left"
assert_eq "no namespace left after the killed run's cleanup" "$before" "$(ip netns list | grep -c '^kpl')"
finish
