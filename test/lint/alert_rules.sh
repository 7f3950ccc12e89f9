#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.alert_rules: the shipped Prometheus alert rules (manifests/prometheus/kperf-alerts.yaml)
# pass `promtool check rules`, and `promtool test rules` shows each alert firing on the series a
# nightly pushes (kperf_verdict 3, kperf_compare_status 5, kperf_run_status 4, a night that did
# not push) and quiet on a good night. Then a copy whose regression rule matches the wrong value
# fails the same test: the test can fail. promtool comes with Debian's prometheus (scripts/test.sh).
set -uo pipefail
SRC=${KPERF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v promtool >/dev/null || { echo "FAIL: promtool missing (apt-get install prometheus)"; exit 1; }
cd "$SRC/manifests/prometheus" || exit 1
promtool check rules kperf-alerts.yaml || { echo "FAIL: promtool check rules"; exit 1; }
promtool test rules kperf-alerts.test.yaml || { echo "FAIL: promtool test rules"; exit 1; }
echo "ok: kperf-alerts.yaml: rules valid, every alert fires in promtool test rules"
T=$(mktemp -d /tmp/kperf-alerts.XXXXXX)
trap 'rm -rf "$T"' EXIT
sed 's/(kperf_verdict{job="kperf_verdict"}) == 3/(kperf_verdict{job="kperf_verdict"}) == 5/' \
    kperf-alerts.yaml >"$T/kperf-alerts.yaml"
cp kperf-alerts.test.yaml "$T/"
if (cd "$T" && promtool test rules kperf-alerts.test.yaml >/dev/null 2>&1); then
    echo "FAIL: a regression rule that matches 5 instead of 3 passed the test"
    exit 1
fi
echo "ok: a planted wrong regression rule fails promtool test rules"
