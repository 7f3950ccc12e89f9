#!/usr/bin/env bash
# lint.bench_parsers: the benchmark's parsers read each reference tool's own summary and refuse
# outputs whose figures do not add up (test/bench/refparse_test.py, on recorded real outputs),
# and its ratios carry their interval and verdict (test/bench/ratios_test.py).
set -euo pipefail
python3 "${KPERF_SRC:?}/test/bench/refparse_test.py"
python3 "${KPERF_SRC:?}/test/bench/ratios_test.py"
