#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ratios_test.py - the benchmark's ratio, its interval and its verdict (test/bench/ratios.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ratios  # noqa: E402

failures = []


def check(label, got, want):
    if got != want:
        failures.append(f"{label}: got {got!r}, want {want!r}")


# pairs, not medians of each side: kperf's slow run meets the reference's slow run
check("pair-wise", ratios.pair_ratios([10, 30], [5, 10]), [2.0, 3.0])
check("a zero reference is left out", ratios.pair_ratios([10, 30], [0, 10]), [3.0])

# coverage of the order statistics: n=5 needs the whole range (1 - 2/32 = 93.75%); n=9 the
# 2nd from each end (1 - 2*10/512 = 96.1%; the 3rd would be 82%); n=2 cannot reach 90%
lo, hi, cov = ratios.median_interval([1.3, 0.9, 1.1, 1.0, 1.2])
check("n=5 interval", (lo, hi, round(cov, 4)), (0.9, 1.3, 0.9375))
lo, hi, cov = ratios.median_interval([9, 1, 8, 2, 7, 3, 6, 4, 5])
check("n=9 interval", (lo, hi, round(cov, 4)), (2, 8, 0.9609))
lo, hi, cov = ratios.median_interval([2, 1])
check("n=2 interval", (lo, hi, cov), (1, 2, 0.5))

check(">= met", ratios.verdict(1.00, 0.8, 1.3, 0.94, ">= 1.00"), "met")
check(">= within noise", ratios.verdict(0.92, 0.8, 1.3, 0.94, ">= 1.00"), "within noise")
check(">= missed", ratios.verdict(0.92, 0.8, 0.99, 0.94, ">= 1.00"), "missed")
check("<= met", ratios.verdict(1.05, 1.0, 1.2, 0.94, "<= 1.05"), "met")
check("<= within noise", ratios.verdict(1.08, 1.0, 1.2, 0.94, "<= 1.05"), "within noise")
check("<= missed", ratios.verdict(1.08, 1.06, 1.2, 0.94, "<= 1.05"), "missed")
check("too few pairs to call a miss", ratios.verdict(0.92, 0.9, 0.95, 0.5, ">= 1.00"), "within noise")
check("report has no verdict", ratios.verdict(0.5, 0.4, 0.6, 0.94, "report"), "")

# the line the harness prints; the verdict reads the rounded figures the table shows
check("summary", ratios.summary([12, 9, 11, 10, 13], [10, 10, 10, 10, 10], ">= 1.00"),
      "1.10 0.90-1.30 94% met")
# one pair: a point, no coverage at all
check("summary rounds first", ratios.summary([0.996], [1.0], ">= 1.00"), "1.00 1.00-1.00 0% met")
check("summary missed", ratios.summary([9, 8, 9, 9.5, 8.5], [10] * 5, ">= 1.00"),
      "0.90 0.80-0.95 94% missed")
check("summary, 3 pairs: no miss called", ratios.summary([9, 8, 9], [10, 10, 10], ">= 1.00"),
      "0.90 0.80-0.90 75% within_noise")
check("summary no pairs", ratios.summary([1], [0], ">= 1.00"), "n/a - - -")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ratios: all checks passed")
