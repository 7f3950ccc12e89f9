/* SPDX-License-Identifier: Apache-2.0 */
/* stats.h - small-sample statistics for reports and compare: median, mean, standard deviation,
 * coefficient of variation, Student-t 95% confidence interval, and the Mann-Whitney U rank test
 * (exact for small samples without ties, normal approximation with tie correction otherwise).
 * Pure functions on arrays of doubles; knows nothing of JSON or reports.
 * Method and formulas: docs/compare.md. */
#ifndef KPERF_REPORT_STATS_H
#define KPERF_REPORT_STATS_H

#include <stdbool.h>
#include <stddef.h>

#define STATS_MWU_EXACT_MAX 50 /* per side */

struct stats_summary {
    size_t n;
    double median;
    double mean;
    double stddev;  /* sample standard deviation (n - 1); 0 when n < 2 */
    double cv_pct;  /* 100 * stddev / |mean|; 0 when n < 2 or mean == 0 */
    double ci95_lo; /* Student-t 95% CI of the mean; equals mean when n < 2 */
    double ci95_hi;
    bool has_ci;   /* false when n < 2 (no interval can be given) */
    bool is_noisy; /* cv_pct > the threshold passed to stats_summarize */
};

/* Median of n values (n > 0; 0 when n == 0). values is not modified. */
double stats_median(const double *values, size_t n);

/* Arithmetic mean (0 when n == 0). */
double stats_mean(const double *values, size_t n);

/* Sample standard deviation with n - 1 (0 when n < 2). */
double stats_stddev(const double *values, size_t n);

/* Two-sided 97.5% quantile of Student's t with df degrees of freedom (df >= 1), from a table
 * up to 30 and a Cornish-Fisher expansion beyond. 0 for df == 0. */
double stats_t975(size_t df);

/* Fills out with every statistic above; noisy_cv_pct is the CV threshold in percent. */
void stats_summarize(const double *values, size_t n, double noisy_cv_pct,
                     struct stats_summary *out);

/* For `--samples auto`: true when n >= 2 and the 95% CI half-width is at most
 * rel_half_width_pct percent of |mean|. A mean of 0 with zero spread counts as narrow. */
bool stats_ci_narrow_enough(const double *values, size_t n, double rel_half_width_pct);

/* Two-sided p-value of the Mann-Whitney U test that a and b come from the same distribution.
 * Exact (null distribution of U counted by dynamic programming) when there are no ties and
 * na, nb <= STATS_MWU_EXACT_MAX; otherwise the normal approximation with tie and continuity
 * correction. Returns 1 when either side is empty or all values are equal. */
double stats_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

/* Hodges-Lehmann estimate of the shift b - a: the median of all na * nb pairwise differences.
 * 0 when either side is empty. */
double stats_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb);

/* Welch 95% confidence interval of mean(b) - mean(a), with Welch-Satterthwaite degrees of
 * freedom rounded down (conservative). Returns false (lo = hi = 0) unless both n >= 2. */
bool stats_welch_ci95(const double *a, size_t na, const double *b, size_t nb, double *lo,
                      double *hi);

#endif
