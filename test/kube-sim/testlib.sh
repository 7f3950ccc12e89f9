# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# testlib.sh - helpers for test/e2e/kubesim_*.sh (sourced, not run).
# Provides: KS (the kube-sim command), ks_need_root, ks_up DIR ARGS...,
# ks_down DIR, ks_cleanup_on_exit DIR, ks_finish; fail, pass, wait_for and the rest come from
# test/e2e/lib/harness.sh.
KPERF_SRC=${KPERF_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=test/e2e/lib/harness.sh
. "$KPERF_SRC/test/e2e/lib/harness.sh"
# shellcheck disable=SC2034 # KS and KUBECTL are for the tests that source this
KS="$KPERF_SRC/test/kube-sim/kube-sim"
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
KS_FAILED=0 # a test may still set it to 1 instead of calling fail: ks_finish counts it

# The images every kube-sim's own registry is seeded with (kube-sim up --seed-images, from the
# environment), made once per build from its binaries (test/kube-sim/seed-images.sh; cached in
# the build dir, so a test pays only the push)
if [ -z "${KUBESIM_SEED_IMAGES:-}" ] && [ -x "${KPERF_BIN:-/nonexistent}/kperf" ] &&
    command -v docker-registry >/dev/null; then
    KUBESIM_SEED_IMAGES=$(bash "$KPERF_SRC/test/kube-sim/seed-images.sh" "$KPERF_BIN" \
        "$KPERF_BIN/../kube-sim-images") || { echo "FAIL: test/kube-sim/seed-images.sh"; exit 1; }
    export KUBESIM_SEED_IMAGES
fi

ks_need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: needs root (network namespaces)"
        exit 77
    fi
    for t in ip nft openssl python3 nsenter docker-registry; do
        command -v "$t" >/dev/null || { echo "SKIP: $t missing"; exit 77; }
    done
    # pods get their network from Debian's containernetworking-plugins
    [ -x /usr/lib/cni/bridge ] || [ -x /opt/cni/bin/bridge ] ||
        { echo "SKIP: no CNI plugins (containernetworking-plugins)"; exit 77; }
}

# ks_failed: a check failed (logs are then shown at exit)
ks_failed() { failed || [ "$KS_FAILED" = 1 ]; }

ks_dump() {
    local d=$1
    echo "--- kube-sim.log (tail)"; tail -30 "$d/kube-sim.log" 2>/dev/null
}

# ks_cleanup_on_exit DIR: `down` at exit (logs shown when a check failed),
# then remove DIR (the test made it). INT/TERM exit through the same cleanup.
ks_cleanup_on_exit() {
    on_exit "ks_failed && ks_dump '$1'; \"\$KS\" down --state-dir '$1' >/dev/null 2>&1; rm -rf '$1'"
}

ks_finish() {
    [ "$KS_FAILED" = 1 ] && [ "$H_FAILS" = 0 ] && fail "a step failed (see above)"
    finish
}
