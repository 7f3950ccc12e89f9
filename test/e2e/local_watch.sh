#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_watch.sh - `kperf watch --local` end to end, as root with network namespaces:
#  1. with a command that takes node 2's underlay link down for 2 s (through the namespace
#     names kperf exports to it): every other-node path reports one UDP outage as long as the link
#     was down (2 s, and what the `ip` commands add on a loaded machine) +/- 0.2 s, that starts
#     within 0.5 s of the injection, TCP and connect probes see it too, the
#     same-node and external paths see none, the exit code is 3 and nothing is left behind;
#  2. without injection, on a terminal (script(1)): the live per-path status, no outage
#     anywhere, exit 0, --output-dir writes watch.{json,md,html} (one timeline lane per path).
#  3. SIGTERM in the middle: the report of what was probed, exit 143, nothing left behind.
# Runtime about 40 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
local_preconditions
h_tmpdir D watch-e2e

# --- 0. usage errors: one line, exit 2, before anything is built -----------------------------
for args in "--local -o csv" "--local --rate 0" "--local --settle x" "--local --kubeconfig x" \
    "--rate 0" "-o csv" "--services 0,20 --scenarios pod-to-service"; do
    # shellcheck disable=SC2086
    "$KPERF" watch $args > /dev/null 2> "$D/u.err"
    rc=$?
    [ "$rc" = 2 ] || fail "kperf watch $args exited $rc, want 2"
    [ "$(wc -l < "$D/u.err")" = 1 ] && grep -q "^kperf: error: .*kperf watch --help" "$D/u.err" ||
        fail "kperf watch $args: not one error line: $(cat "$D/u.err")"
done

# --- 1. a 2 s blackhole of node 2 ------------------------------------------------------------
cat > "$D/inject.sh" <<'SH'
#!/bin/bash
set -eu
[ -n "${KPERF_LOCAL_RUN_ID:-}" ] && [ -n "${KPERF_LOCAL_NS_UNDERLAY:-}" ] || exit 9
echo "$KPERF_LOCAL_RUN_ID" > "$1/run_id"
echo "the command's stdout must not reach kperf's"
sleep 1
date +%s.%N > "$1/down"
ip netns exec "$KPERF_LOCAL_NS_UNDERLAY" ip link set node2 down
date +%s.%N > "$1/down_done"
sleep 2
ip netns exec "$KPERF_LOCAL_NS_UNDERLAY" ip link set node2 up
date +%s.%N > "$1/up"
SH
chmod +x "$D/inject.sh"
"$KPERF" watch --local --duration 8s -o json -- "$D/inject.sh" "$D" > "$D/w.json" 2> "$D/w.err"
rc=$?
[ "$rc" = 3 ] || fail "watch with a 2 s blackhole exited $rc, want 3: $(tail -3 "$D/w.err")"
[ -s "$D/down" ] && [ -s "$D/up" ] || fail "the injection did not run (no namespace names?)"
python3 - "$D/w.json" "$D/down" "$D/up" "$D/down_done" <<'PY' || fail "outages do not match the injection"
import json, sys
doc = json.load(open(sys.argv[1]))
down = float(open(sys.argv[2]).read()); up = float(open(sys.argv[3]).read())
down_done = float(open(sys.argv[4]).read())
# the link is down from between down and down_done (the `ip` commands' own time, which a loaded
# machine stretches) to before up: at least the 2 s sleep, at most `injected`
injected = up - down
bad = []
assert doc["schema"] == "kperf.watch/v1"
assert doc["command"]["exit_code"] == 0, doc["command"]
paths = {p["path"]: p for p in doc["paths"]}
want = {"pod-to-pod/same-node", "pod-to-pod/other-node", "host-to-host/same-node",
        "host-to-host/other-node", "pod-to-service/same-node", "pod-to-service/other-node",
        "pod-to-external/external"}
if set(paths) != want:
    bad.append("paths %s" % sorted(paths))
for name, p in sorted(paths.items()):
    if p["error"] is not None:
        bad.append("%s: %s" % (name, p["error"])); continue
    pr = p["probe"]["probes"]
    if name.endswith("/other-node"):
        u = pr["udp"]
        if u["outages_total"] != 1:
            bad.append("%s udp: %d outages %s" % (name, u["outages_total"], u["outages"])); continue
        o = u["outages"][0]
        if not 2.0 - 0.2 <= o["length_s"] <= injected + 0.2:
            bad.append("%s udp: outage of %.3f s, injected %.3f s" % (name, o["length_s"], injected))
        at = p["probe"]["start_unix_s"] + o["start_s"]
        print("%s: udp outage %.3f s (injected %.3f s), %+.3f s from the link going down; "
              "tcp longest %.3f s, connect longest %.3f s" % (name, o["length_s"], injected,
              at - down, pr["tcp"]["longest_outage_s"], pr["connect"]["longest_outage_s"]))
        # the link goes down after `date` ran: the outage cannot start before (small slack for
        # the clock reads), and starts within 0.5 s of the `ip link set down` returning
        if not (-0.05 <= at - down and at - down_done <= 0.5):
            bad.append("%s udp: outage at %.3f, link down at %.3f..%.3f" % (name, at, down, down_done))
        for k in ("tcp", "connect"):
            if pr[k]["outages_total"] < 1 or pr[k]["longest_outage_s"] < 1.5:
                bad.append("%s %s: no outage seen %s" % (name, k, pr[k]["outages"]))
        if pr["tcp"]["connection"]["resets"] != 0 or not pr["tcp"]["connection"]["survived"]:
            bad.append("%s: the long-lived TCP connection did not survive a 2 s blackhole" % name)
    else:
        for k in ("udp", "tcp", "connect"):
            if pr[k]["outages_total"] != 0:
                bad.append("%s %s: outage on an unaffected path %s" % (name, k, pr[k]["outages"]))
if bad:
    print("\n".join(bad)); sys.exit(1)
PY
id=$(cat "$D/run_id" 2>/dev/null)
[ -n "$id" ] && assert_clean "$id" "watch with a blackhole"

# --- 2. nothing injected, on a terminal (the live status), with --output-dir -----------------
if command -v script >/dev/null; then
    script -qec "$KPERF watch --local --duration 3s --output-dir $D/out" "$D/q.txt" > /dev/null 2>&1
    rc=$?
    grep -q "watching for" "$D/q.txt" || fail "no live status on a terminal: $(head -c 600 "$D/q.txt")"
    grep -Eq "^.*  pod-to-pod/other-node +ok +udp lost 0 of [1-9]" "$D/q.txt" ||
        fail "no per-path status line: $(head -c 600 "$D/q.txt")"
else
    "$KPERF" watch --local --duration 3s --output-dir "$D/out" > "$D/q.txt" 2> "$D/q.err"
    rc=$?
fi
[ "$rc" = 0 ] || fail "quiet watch exited $rc, want 0: $(tail -3 "$D/q.txt")"
grep -q "^No outage.\s*$" "$D/q.txt" || fail "quiet watch reports an outage: $(cat "$D/q.txt")"
[ "$(grep -Ec '^(pod|host)-to-[a-z]+/[a-z-]+ +(udp|tcp|connect) ' "$D/q.txt")" = 21 ] ||
    fail "quiet watch: not 7 paths x 3 kinds: $(cat "$D/q.txt")"
for f in watch.json watch.md watch.html; do
    [ -s "$D/out/$f" ] || fail "--output-dir lacks $f"
done
[ "$(grep -c '<text x="222" [^>]*text-anchor="end">[a-z-]*/[a-z-]*</text>' "$D/out/watch.html")" = 7 ] ||
    fail "watch.html: not one timeline lane per path"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="kperf.watch/v1" and len(d["paths"])==7 and all(p["probe"]["probes"]["udp"]["outages_total"]==0 for p in d["paths"])' "$D/out/watch.json" ||
    fail "watch.json: not 7 paths without outage"

# --- 3. SIGTERM in the middle: the report so far, exit 143, nothing left ----------------------
"$KPERF" watch --local --duration 60s -o json > "$D/i.json" 2> "$D/i.err" &
pid=$!
wait_for 60 "the watch to start probing" grep -q "watching" "$D/i.err" # bounds a hang; ~5 s
sleep 2 # probing time to report (200 probes per path at 100/s), not a wait for an event
kill -TERM "$pid"
wait "$pid"; rc=$?
[ "$rc" = 143 ] || fail "watch after SIGTERM exited $rc, want 143: $(tail -3 "$D/i.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["paths"])==7 and d["duration_s"] < 10 and all(p["probe"]["probes"]["udp"]["sent"] > 100 for p in d["paths"])' "$D/i.json" ||
    fail "watch after SIGTERM: no report of what was probed"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$D/i.json" 2>/dev/null)
[ -n "$id" ] && assert_clean "$id" "watch stopped by SIGTERM"
finish
