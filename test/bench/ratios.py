#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ratios.py - the benchmark's ratio of kperf to a reference tool, with the noise stated.

A ratio is the median of the pair-wise ratios (kperf's run over the reference's run of the same
pair; pairs alternate which tool runs first). On the 2-vCPU guests here one tool's run-to-run
spread is 20-30%, so a median of 5 pairs moves by about 0.15 from one bench run to the next:
a row whose true ratio is 1.2 reads below 1.0 now and then. So beside the median this prints a
distribution-free confidence interval for it (order statistics of the sorted pair ratios: the
k-th smallest and k-th largest, k the largest for which the binomial coverage is at least
90%), and a verdict against the row's target:

  met             the median meets the target
  within noise    the median misses it, but the interval still reaches it (or the pairs are
                  too few for a 90% interval: with 4 or fewer no miss is called)
  missed          the whole interval, of at least 90% coverage, is on the wrong side

Usage: ratios.py "A1 A2 ..." "B1 B2 ..." TARGET
  TARGET is ">= X", "<= X" or "report" (no verdict). Prints "median lo-hi coverage% verdict".
"""
import math
import statistics
import sys

COVERAGE = 0.90


def pair_ratios(a, b):
    """Ratios a[i]/b[i] of the pairs whose reference reading is positive."""
    return [x / y for x, y in zip(a, b) if y > 0]


def median_interval(r):
    """(lo, hi, coverage) for the median of r: the k-th smallest and k-th largest value, k the
    largest whose coverage (the chance that the true median lies between them) is at least
    COVERAGE. With too few values for that, the whole range and its own coverage."""
    s = sorted(r)
    n = len(s)
    if n == 0:
        raise ValueError("no pair ratios")

    def cover(k):  # P(s[k-1] <= median <= s[n-k]) = 1 - 2 P(Bin(n, 1/2) <= k-1)
        tail = sum(math.comb(n, i) for i in range(k)) / 2**n
        return 1 - 2 * tail

    k = 1
    while k + 1 <= (n + 1) // 2 and cover(k + 1) >= COVERAGE:
        k += 1
    return s[k - 1], s[n - k], cover(k)


def verdict(med, lo, hi, cov, target):
    """'met', 'within noise' or 'missed' for target '>= X' / '<= X'; '' for 'report'."""
    parts = target.split()
    if len(parts) != 2 or parts[0] not in (">=", "<="):
        return ""
    x = float(parts[1])
    if (med >= x) if parts[0] == ">=" else (med <= x):
        return "met"
    reaches = hi >= x if parts[0] == ">=" else lo <= x
    return "within noise" if reaches or cov < COVERAGE else "missed"


def summary(a, b, target):
    r = pair_ratios(a, b)
    if not r:
        return "n/a - - -"
    med = statistics.median(r)
    lo, hi, cov = median_interval(r)
    # the verdict reads the rounded figures the table prints, so the table agrees with itself
    med, lo, hi = round(med, 2), round(lo, 2), round(hi, 2)
    v = verdict(med, lo, hi, cov, target) or "-"
    return f"{med:.2f} {lo:.2f}-{hi:.2f} {cov * 100:.0f}% {v.replace(' ', '_')}"


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    a = [float(x) for x in argv[1].split()]
    b = [float(x) for x in argv[2].split()]
    print(summary(a, b, argv[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
