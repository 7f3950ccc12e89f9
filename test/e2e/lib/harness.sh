# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# harness.sh - the one library of the e2e tests (sourced; test/e2e/lib/*_common.sh,
# test/e2e/agent_common.inc and test/kube-sim/testlib.sh source it, so every test has it):
# counted checks that fail with one clear line, waiting for a condition with a bound instead of
# a fixed sleep, a temporary folder, cleanup at exit of exactly what the test made, and the
# summary line. It knows nothing of kperf; the *_common.sh files add each family's fixtures.
#
#   pass MSG / fail MSG                 one line "ok: MSG" / "FAIL: MSG", counted
#   check WHAT CMD...                   pass or fail WHAT on CMD's exit status
#   assert_eq WHAT WANT GOT             GOT must equal WANT
#   assert_contains WHAT TEXT NEEDLE    TEXT must contain NEEDLE (a fixed string)
#   assert_json WHAT FILE JQ-EXPR       the jq expression must be true on FILE
#   wait_for BOUND WHAT CMD...          poll CMD (every 0.2 s) until it succeeds, at most BOUND
#                                       seconds; on timeout prints what it waited for, returns 1
#   h_tmpdir VAR NAME                   VAR = a new /tmp/kperf-NAME.XXXXXX, removed at exit
#   on_exit CMD                         run CMD (a string) at exit, the last registered first;
#                                       its output is shown (quiet it in CMD if need be)
#   kill_on_exit PID                    kill PID at exit if it still runs (SIGKILL, then reaped)
#   netns_on_exit NAME                  delete network namespace NAME at exit if it exists
#   finish                              the summary line, exit 0 or 1
#
# A bound is not a budget: it only stops a test that would hang, so it is generous (about 10x
# the normal time on the 2-vCPU VM) and a slow machine does not fail the test. A test asserts
# what happened, in what order and with which values, never how fast.
# Tests never set `trap ... EXIT` themselves (it would replace this one): they use on_exit.

[ -n "${H_HARNESS_LOADED:-}" ] && return 0
H_HARNESS_LOADED=1
H_NAME=$(basename "$0" .sh)
H_FAILS=0
H_PASSES=0
H_CLEANUP=()

pass() {
    H_PASSES=$((H_PASSES + 1))
    echo "ok: $*"
}
fail() {
    H_FAILS=$((H_FAILS + 1))
    echo "FAIL: $*"
}

check() {
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

assert_eq() {
    if [ "$3" = "$2" ]; then pass "$1"; else fail "$1: want '$2', got '$3'"; fi
}

assert_contains() {
    case "$2" in
    *"$3"*) pass "$1" ;;
    *) fail "$1: '$3' not in: $(printf '%s' "$2" | head -c 400 | tr '\n' ' ')" ;;
    esac
}

assert_json() {
    local got
    got=$(jq -r "$3" "$2" 2>&1)
    if [ "$got" = true ]; then pass "$1"; else fail "$1: ($3) is '$got' in $2"; fi
}

# wait_for BOUND WHAT CMD...; the older form wait_for BOUND CMD... (WHAT = the command line) is
# still read: when WHAT names a command, it is taken as the command.
wait_for() {
    local bound=$1 what=$2 end
    shift
    if [ -n "$(type -t "$what" 2>/dev/null)" ]; then
        what="$*"
    else
        shift
    fi
    end=$((SECONDS + bound))
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$end" ]; then
            echo "timeout: waited ${bound} s for $what"
            return 1
        fi
        sleep 0.2 # a poll: often enough, and light on a busy machine (kubectl is ~0.1 s of CPU)
    done
}

h_run_cleanup() {
    local i
    for ((i = ${#H_CLEANUP[@]} - 1; i >= 0; i--)); do
        eval "${H_CLEANUP[i]}" || true
    done
    H_CLEANUP=()
}
on_exit() { H_CLEANUP+=("$1"); }
trap h_run_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

kill_on_exit() { on_exit "kill -KILL $1 2>/dev/null; wait $1 2>/dev/null"; }
netns_on_exit() { on_exit "ip netns del '$1' 2>/dev/null"; }

h_tmpdir() { # (its local has a name no caller uses: printf -v would set the local instead)
    local h_tmpdir_made_
    h_tmpdir_made_=$(mktemp -d "/tmp/kperf-$2.XXXXXX") || { echo "FAIL: cannot make a temporary folder"; exit 1; }
    on_exit "rm -rf '$h_tmpdir_made_'"
    printf -v "$1" '%s' "$h_tmpdir_made_"
}

# failed: true once a check failed (for logs shown only on failure)
failed() { [ "$H_FAILS" -gt 0 ]; }

finish() {
    if [ "$H_FAILS" -gt 0 ]; then
        echo "RESULT: FAILED ($H_NAME: $H_FAILS failed, $H_PASSES passed)"
        exit 1
    fi
    echo "RESULT: PASSED ($H_NAME: $H_PASSES checks)"
    exit 0
}
