#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-sim API semantics checked over raw HTTPS (test/kube-sim/selftest.py):
# Status shapes, validation, selectors, pagination, watch (RV, bookmarks,
# 410), delete semantics, logs, PSA, faults.
. "$(dirname "$0")/../kube-sim/testlib.sh"
ks_need_root
D=$(mktemp -d /tmp/kubesim-api.XXXXXX)
ks_cleanup_on_exit "$D"
"$KS" up --nodes 3 --state-dir "$D" --job-backoff 1 || { fail "kube-sim up"; ks_finish; }
python3 "$KPERF_SRC/test/kube-sim/selftest.py" "$D" 3 || fail "kube-sim selftest"
ks_finish
