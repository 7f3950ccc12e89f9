#!/usr/bin/env bash
# lint.bench_parsers: the benchmark's parsers read each reference tool's own summary and refuse
# outputs whose figures do not add up (test/bench/refparse_test.py, on recorded real outputs).
set -euo pipefail
exec python3 "${KPERF_SRC:?}/test/bench/refparse_test.py"
