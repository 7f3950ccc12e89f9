#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# safe_writes.sh - every file kperf writes goes through base/safefile.h; this probes it as a
# hostile neighbour and an unlucky operator would (issue 34), offline: the reports are the
# synthetic ones test_compare writes, rendered by 'kperf report --output-dir'.
# (a) a user "nobody" who owns the output folder plants links: at the old fixed temporary name
#     (.report.md.tmp -> victim) the write goes on and the victim is untouched; at the target
#     name (report.json -> victim) kperf refuses: exit 1, one line, victim and link untouched,
#     nothing else left. Needs root (runuser); skipped without.
# (b) 30 rounds of two concurrent 'kperf report --output-dir' into one folder (two different
#     reports) and of two concurrent 'kperf history add': every file whole (byte-equal to one of
#     the two writers' outputs), both exit 0, no other file in the folder.
# (c) kill -9 injected by strace at a write, an fsync and a rename of 'kperf report' over an
#     older report, and at a write of 'kperf history add': each visible file is the old or the
#     new one, whole; the next write leaves no stray file.
# (d) a full tmpfs: exit 1, one line "No space left on device", the old files whole, no temporary
#     file. Needs root (mount); skipped without.
# (e) one corrupt run in a history: 'kperf compare --baseline' and 'kperf history report' skip it
#     with a warning naming it and say how many runs the verdict rests on; --strict fails.
# Runtime about 30 s.
set -u
KPERF="$KPERF_BIN/kperf"
GEN="$KPERF_BIN/../test/unit/test_compare"
GH="$KPERF_SRC/test/tools/gen_history.py"
if [ ! -x "$KPERF" ] || [ ! -x "$GEN" ]; then
    echo "skip: kperf or test_compare not built"
    exit 77
fi
if ! command -v jq >/dev/null || ! command -v strace >/dev/null; then
    echo "skip: needs jq and strace"
    exit 77
fi
D=$(mktemp -d /tmp/kperf-safe-writes.XXXXXX)
FULL=""
cleanup() {
    [ -n "$FULL" ] && umount "$FULL" 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
FILES="report.csv report.html report.json report.md"
# entries DIR: every name in DIR (dot files too), sorted, on one line
entries() { (cd "$1" && find . -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' '); }
# one_line FILE WHAT: FILE is exactly one line
one_line() { [ "$(wc -l <"$1")" = 1 ] || fail "$2: error is not one line: $(cat "$1")"; }

KPERF_WRITE_FIXTURES="$D" "$GEN" >/dev/null 2>&1 || fail "test_compare did not run"
for v in base regressed; do # the two reports' outputs, to tell a whole file from a torn one
    "$KPERF" report "$D/$v.json" --output-dir "$D/ref-$v" >/dev/null || fail "report $v"
done
# whole_or DIR A B: each report file of DIR is byte-equal to A's or B's (absent allowed if A is -)
whole_or() {
    local f ok=0
    for f in $FILES; do
        if [ ! -e "$1/$f" ]; then
            [ "$2" = - ] || { fail "$1/$f missing"; ok=1; }
        elif [ -L "$1/$f" ] || ! { { [ "$2" != - ] && cmp -s "$1/$f" "$D/ref-$2/$f"; } ||
            cmp -s "$1/$f" "$D/ref-$3/$f"; }; then
            fail "$1/$f is neither the $2 nor the $3 output, whole"
            ok=1
        fi
    done
    return $ok
}

# --- (a) the planted link
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    chmod 755 "$D"
    echo precious >"$D/victim"
    mkdir "$D/pub" && chown nobody "$D/pub"
    runuser -u nobody -- ln -s "$D/victim" "$D/pub/.report.md.tmp" || fail "nobody cannot plant"
    "$KPERF" report "$D/base.json" --output-dir "$D/pub" >/dev/null 2>"$D/err" ||
        fail "a link at the old temporary name stopped the write: $(cat "$D/err")"
    if [ "$(cat "$D/victim")" = precious ] && [ ! -L "$D/pub/report.md" ] && whole_or "$D/pub" base base; then
        pass "(a) link at .report.md.tmp: report written, victim untouched"
    else
        fail "(a) victim overwritten or report.md a link: $(ls -l "$D/pub")"
    fi
    rm -rf "$D/pub" && mkdir "$D/pub" && chown nobody "$D/pub"
    runuser -u nobody -- ln -s "$D/victim" "$D/pub/report.json"
    "$KPERF" report "$D/base.json" --output-dir "$D/pub" >/dev/null 2>"$D/err"
    rc=$?
    one_line "$D/err" "(a) planted report.json"
    if [ $rc = 1 ] && grep -q "refusing to replace $D/pub/report.json: it is a symbolic link" "$D/err" &&
        [ "$(cat "$D/victim")" = precious ] && [ -L "$D/pub/report.json" ] &&
        [ "$(entries "$D/pub")" = "report.json " ]; then
        pass "(a) link at report.json refused: $(cat "$D/err")"
    else
        fail "(a) planted report.json: exit $rc, $(cat "$D/err"), victim '$(cat "$D/victim")', left: $(entries "$D/pub")"
    fi
else
    echo "skip (a): needs root and the user nobody"
fi

# --- (b) two writers at once, 30 rounds
torn=0
for i in $(seq 30); do
    "$KPERF" report "$D/base.json" --output-dir "$D/race" >/dev/null 2>"$D/err1" &
    p1=$!
    "$KPERF" report "$D/regressed.json" --output-dir "$D/race" >/dev/null 2>"$D/err2" &
    p2=$!
    wait $p1 || fail "(b) round $i: writer 1 failed: $(cat "$D/err1")"
    wait $p2 || fail "(b) round $i: writer 2 failed: $(cat "$D/err2")"
    whole_or "$D/race" base regressed || torn=$((torn + 1))
    jq -e .schema "$D/race/report.json" >/dev/null || fail "(b) round $i: report.json not JSON"
    [ "$(entries "$D/race")" = "$FILES " ] || fail "(b) round $i: left $(entries "$D/race")"
done
[ $torn = 0 ] && pass "(b) 30 rounds of two concurrent report writers: every file whole"
python3 "$GH" "$D/base.json" "$D/g" --runs 6 --last 0.9 --seed 1 || fail "gen_history"
HF="$D/h/e2e/node-b_node-a/cilium/1.16.1"
for i in $(seq 30); do
    "$KPERF" history add "$D/h" "$D/g/run-00.json" >/dev/null 2>"$D/err1" &
    p1=$!
    "$KPERF" history add "$D/h" "$D/g/run-01.json" >/dev/null 2>"$D/err2" &
    p2=$!
    wait $p1 || fail "(b) history round $i: $(cat "$D/err1")"
    wait $p2 || fail "(b) history round $i: $(cat "$D/err2")"
done
if [ "$(entries "$HF")" = "2026-11-01T02-00-00Z.json 2026-11-02T02-00-00Z.json " ] &&
    jq -e .schema "$HF"/*.json >/dev/null; then
    pass "(b) 30 rounds of two concurrent history adds: both runs whole, nothing else"
else
    fail "(b) history: $(entries "$HF")"
fi

# --- (c) kill -9 at a write, an fsync and a rename (strace -e inject), over an older report
# (46 writes, 8 fsyncs (4 files, 4 folder), 4 renameat for the four files: strace -c)
for spec in write:1 write:10 write:30 fsync:1 fsync:2 fsync:5 renameat:1 renameat:3; do
    sc=${spec%:*} n=${spec#*:}
    rm -rf "$D/k" && cp -r "$D/ref-regressed" "$D/k"
    ( # a subshell: the shell's "Killed" note goes to /dev/null with it
        strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when="$n" \
            "$KPERF" report "$D/base.json" --output-dir "$D/k" >/dev/null 2>&1
        exit $? # not exec'd: this subshell, not its parent, notes the kill
    ) 2>/dev/null
    rc=$?
    [ $rc = 137 ] || fail "(c) $spec: not killed (exit $rc)"
    whole_or "$D/k" regressed base || fail "(c) $spec: a partial file is visible"
    stray=$(entries "$D/k")
    "$KPERF" report "$D/base.json" --output-dir "$D/k" >/dev/null 2>"$D/err" || fail "(c) $spec: next write: $(cat "$D/err")"
    if [ "$(entries "$D/k")" = "$FILES " ] && whole_or "$D/k" base base; then
        pass "(c) kill -9 at $spec: old or new files, whole; left [$stray], none after the next write"
    else
        fail "(c) $spec: after the next write: $(entries "$D/k")"
    fi
done
rm -rf "$D/hk"
"$KPERF" history add "$D/hk" "$D/g/run-00.json" >/dev/null || fail "(c) history add"
(
    strace -f -qq -o /dev/null -e trace=write -e inject=write:signal=KILL:when=5 \
        "$KPERF" history add "$D/hk" "$D/g/run-01.json" >/dev/null 2>&1
    exit $?
) 2>/dev/null
HK="$D/hk/e2e/node-b_node-a/cilium/1.16.1"
left=$(entries "$HK")
case "$left" in *.kperf-*.tmp*) ;; *) fail "(c) history add killed at a write left no temporary file: $left" ;; esac
"$KPERF" history list "$D/hk" >"$D/out"
grep -q "^1 run in" "$D/out" || fail "(c) list counts a partial run: $(cat "$D/out")"
"$KPERF" history add "$D/hk" "$D/g/run-02.json" >/dev/null || fail "(c) next history add"
if [ "$(entries "$HK")" = "2026-11-01T02-00-00Z.json 2026-11-03T02-00-00Z.json " ]; then
    pass "(c) kill -9 during history add: left [$left], gone after the next add"
else
    fail "(c) history after the next add: $(entries "$HK")"
fi

# --- (d) a full tmpfs
if [ "$(id -u)" = 0 ] && mkdir "$D/full" && mount -t tmpfs -o size=512k tmpfs "$D/full" 2>/dev/null; then
    FULL="$D/full"
    mkdir "$FULL/out" && cp "$D"/ref-regressed/report.* "$FULL/out/"
    dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null # until the disk is full
    "$KPERF" report "$D/base.json" --output-dir "$FULL/out" >/dev/null 2>"$D/err"
    rc=$?
    one_line "$D/err" "(d) full disk"
    if [ $rc = 1 ] && grep -q "^kperf: error: $FULL/out/report\.[a-z]*: .*No space left on device" "$D/err" &&
        whole_or "$FULL/out" regressed base && [ "$(entries "$FULL/out")" = "$FILES " ]; then
        pass "(d) full tmpfs: $(cat "$D/err")"
    else
        fail "(d) full tmpfs: exit $rc, $(cat "$D/err"), left $(entries "$FULL/out")"
    fi
    umount "$FULL" && FULL=""
else
    echo "skip (d): needs root and a tmpfs mount"
fi

# --- (e) one corrupt run in a history
for i in 0 1 2 3 4; do
    "$KPERF" history add "$D/he" "$D/g/run-0$i.json" >/dev/null || fail "(e) history add $i"
done
HE="$D/he/e2e/node-b_node-a/cilium/1.16.1"
head -c 300 "$HE/2026-11-03T02-00-00Z.json" >"$D/part" && mv "$D/part" "$HE/2026-11-03T02-00-00Z.json"
"$KPERF" compare --baseline "$D/he" "$D/g/run-05.json" >"$D/out" 2>"$D/err"
rc=$?
if [ $rc = 3 ] && grep -q "^kperf: warning: skipping unreadable run $HE/2026-11-03T02-00-00Z.json: " "$D/err" &&
    grep -q "against 4 earlier runs of e2e/node-b_node-a/cilium in $D/he (1 unreadable skipped):" "$D/err" &&
    grep -q "Rests on 4 runs of the history; 1 unreadable run(s) skipped" "$D/out" &&
    grep -q "TCP_STREAM | Mb/s .*| REGRESSION" "$D/out"; then
    pass "(e) compare --baseline: $(grep warning "$D/err")"
else
    fail "(e) compare --baseline: exit $rc: $(cat "$D/err") $(head -3 "$D/out")"
fi
"$KPERF" compare --baseline "$D/he" "$D/g/run-05.json" -o json >"$D/out" 2>/dev/null
jq -e '.history.runs_used == 4 and .history.runs_skipped == 1' "$D/out" >/dev/null ||
    fail "(e) compare JSON: $(jq -c .history "$D/out")"
"$KPERF" compare --baseline "$D/he" --strict "$D/g/run-05.json" >"$D/out" 2>"$D/err"
rc=$?
one_line "$D/err" "(e) --strict"
if [ $rc = 1 ] && grep -q "^kperf: error: --baseline: a run of $D/he cannot be read (--strict): .*2026-11-03T02-00-00Z.json" "$D/err"; then
    pass "(e) compare --strict: $(cat "$D/err")"
else
    fail "(e) --strict: exit $rc: $(cat "$D/err")"
fi
"$KPERF" history report "$D/he" -o html >"$D/trend.html" 2>"$D/err"
rc=$?
if [ $rc = 0 ] && grep -q "skipping unreadable run $HE/2026-11-03T02-00-00Z.json" "$D/err" &&
    grep -q 'data-runs="4" .*data-skipped="1"' "$D/trend.html"; then
    pass "(e) history report: 4 runs drawn, 1 skipped and named"
else
    fail "(e) history report: exit $rc: $(cat "$D/err")"
fi
"$KPERF" history report "$D/he" -o html --strict >/dev/null 2>"$D/err"
rc=$?
if [ $rc = 1 ] && grep -q "2026-11-03T02-00-00Z.json" "$D/err"; then
    pass "(e) history report --strict fails: $(cat "$D/err")"
else
    fail "(e) history report --strict: exit $rc: $(cat "$D/err")"
fi

echo "safe_writes: $fails failure(s)"
[ $fails = 0 ]
