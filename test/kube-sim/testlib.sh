# SPDX-License-Identifier: Apache-2.0
# testlib.sh - helpers for test/e2e/kubesim_*.sh (sourced, not run).
# Provides: KS (the kube-sim command), ks_need_root, ks_up DIR ARGS...,
# ks_down DIR, ks_cleanup_on_exit DIR, fail MSG, pass MSG, wait_for SECS CMD...
KPERF_SRC=${KPERF_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KS="$KPERF_SRC/test/kube-sim/kube-sim"
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
KS_FAILED=0

ks_need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: needs root (network namespaces)"
        exit 77
    fi
    for t in ip nft openssl python3 nsenter; do
        command -v "$t" >/dev/null || { echo "SKIP: $t missing"; exit 77; }
    done
}

fail() { echo "FAIL: $*"; KS_FAILED=1; }
pass() { echo "ok: $*"; }

# wait_for SECS CMD... : retry CMD every 0.2 s until it succeeds
wait_for() {
    local end=$((SECONDS + $1)); shift
    while ! "$@" >/dev/null 2>&1; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.2
    done
}

ks_dump() {
    local d=$1
    echo "--- kube-sim.log (tail)"; tail -30 "$d/kube-sim.log" 2>/dev/null
}

# ks_cleanup_on_exit DIR: `down` at exit (logs shown when a check failed),
# then remove DIR (the test made it). INT/TERM exit through the same trap.
ks_cleanup_on_exit() {
    KS_DIRS="$KS_DIRS $1"
    trap 'for d in $KS_DIRS; do [ "$KS_FAILED" = 1 ] && ks_dump $d; \
          "$KS" down --state-dir $d >/dev/null 2>&1; rm -rf "$d"; done' EXIT
    trap 'exit 1' INT TERM
}

ks_finish() {
    if [ "$KS_FAILED" = 1 ]; then echo "RESULT: FAILED"; exit 1; fi
    echo "RESULT: PASSED"; exit 0
}
