#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# local_errors.sh - `kperf run` refusing clearly: usage errors exit 2 with one line, --help
# exits 0 on stdout, and --local without root, without capabilities or without an agent
# exits 1 with one line saying what to do, creating nothing. Runtime about 1 s.
set -u
. "$(dirname "$0")/lib/local_common.sh"
[ -x "$KPERF" ] || { echo "skip: kperf not built"; exit 77; }
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || { echo "skip: needs root and setpriv"; exit 77; }
h_tmpdir D local-err

# expect CODE PATTERN CMD...: exit code CODE, one stderr line matching PATTERN, empty stdout
expect() {
    local want=$1 pattern=$2; shift 2
    "$@" >"$D/out" 2>"$D/err"
    local got=$?
    [ "$got" = "$want" ] || fail "exit $got, want $want: $*"
    grep -q -- "$pattern" "$D/err" || fail "stderr of '$*' lacks '$pattern': $(cat "$D/err")"
    [ "$(grep -c . "$D/err")" = 1 ] || fail "'$*' printed more than one line: $(cat "$D/err")"
    [ ! -s "$D/out" ] || fail "'$*' printed on stdout"
}

expect 2 "kperf: error: unknown flag '--bogus'" "$KPERF" run --bogus
expect 2 "kperf: error: --scenarios: unknown scenario 'pod-to-moon'" "$KPERF" run --scenarios pod-to-moon
expect 2 "kperf: error: --duration needs a value" "$KPERF" run --local --duration
expect 2 "kperf: error: --kubeconfig is a Kubernetes flag" "$KPERF" run --local --kubeconfig x
expect 2 "kperf: error: --mtu applies to --local only" "$KPERF" run --mtu 9001
expect 1 "needs root" setpriv --reuid 65534 --regid 65534 --clear-groups "$KPERF" run --local
expect 1 "needs CAP_NET_ADMIN and CAP_SYS_ADMIN" \
    setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$KPERF" run --local
expect 1 "KPERF_AGENT=/nonexistent is not an executable" env KPERF_AGENT=/nonexistent "$KPERF" run --local

"$KPERF" run --help >"$D/out" 2>"$D/err" || fail "--help exited non-zero"
grep -q -- "--scenarios" "$D/out" || fail "--help not on stdout"
[ ! -s "$D/err" ] || fail "--help wrote to stderr"
finish
