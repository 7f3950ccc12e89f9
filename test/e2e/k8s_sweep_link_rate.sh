#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sweep verdict holds on a small noisy group (issue 31): on a 5-node kube-sim, node-3's
# links at 1 Gbit/s both ways (fault link-rate: tbf on each end of its veth) against about
# 10 Gbit/s for the others, whose TCP_STREAM figures spread up to 2x (pairs of a round share the
# machine's CPUs), `kperf run --all-nodes --parallel 2 --tests TCP_STREAM --duration 2s` flags
# exactly node-3 (the floor: at or below half the median); with no limit it flags none. One
# sweep of each: test/bench/sweep_verdict.sh RUNS repeats them (5 + 5 in docs/sweep-scale.md).
exec bash "${KPERF_SRC:?}/test/bench/sweep_verdict.sh" 1
