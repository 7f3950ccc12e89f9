# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# local_common.sh - shared by the test/e2e/local_*.sh tests (sourced, not a test itself):
# preconditions (root, network namespaces, ip, nft; exit 77 = skipped otherwise) and the checks
# that a run left nothing behind; checks, waiting and cleanup come from harness.sh.
# shellcheck source=test/e2e/lib/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
KPERF="$KPERF_BIN/kperf"
SCHEMA="$KPERF_SRC/docs/report-schema.json"
VALIDATE="$KPERF_SRC/test/tools/validate_report.py"

local_preconditions() {
    [ -x "$KPERF" ] && [ -x "$KPERF_BIN/kperf-agent" ] || { echo "skip: kperf or kperf-agent not built"; exit 77; }
    [ "$(id -u)" = 0 ] || { echo "skip: needs root (network namespaces)"; exit 77; }
    command -v ip >/dev/null && command -v nft >/dev/null || { echo "skip: needs ip and nft"; exit 77; }
    local probe="kplprobe$$"
    ip netns add "$probe" 2>/dev/null || { echo "skip: cannot create network namespaces"; exit 77; }
    ip netns del "$probe"
}

# leftovers ID: prints what run ID left behind (namespaces, state, processes); empty = nothing
leftovers() {
    local id=$1
    ip netns list 2>/dev/null | grep -o "^${id}[^ ]*"
    [ -e "/run/kperf/$id.state" ] && echo "state file /run/kperf/$id.state"
    [ -e "/run/kperf/$id" ] && echo "run dir /run/kperf/$id"
    nft list tables 2>/dev/null | grep -F "$id"
    # agents carry the run directory in their --token-file argument
    local p
    for p in /proc/[0-9]*; do
        tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF "/run/kperf/$id/" && echo "process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline")"
    done
    return 0
}

# assert_clean ID WHAT: fails when run ID left anything behind
assert_clean() {
    local left
    left=$(leftovers "$1")
    [ -z "$left" ] || fail "$2 left behind: $left"
}

# run_id_of REPORT.json
run_id_of() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"].get("run_id",""))' "$1" 2>/dev/null
}

# local_run NAME ARGS...: `kperf run "${COMMON[@]}" ARGS` into $D/NAME.json (stderr in
# $D/NAME.err); it must exit 0 and leave nothing behind. Sets RUN_ID to the run's id.
local_run() {
    local name=$1 rc
    shift
    "$KPERF" run "${COMMON[@]}" "$@" >"$D/$name.json" 2>"$D/$name.err"
    rc=$?
    [ "$rc" = 0 ] || fail "run $name exited $rc: $(tail -n 3 "$D/$name.err")"
    RUN_ID=$(run_id_of "$D/$name.json")
    [ -n "$RUN_ID" ] && assert_clean "$RUN_ID" "run $name" 2>/dev/null
}

# validate REPORT.json: JSON Schema of kperf.report/v1
validate() {
    python3 "$VALIDATE" "$SCHEMA" "$1" || fail "$1 does not validate against the report schema"
}
