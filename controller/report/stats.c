/* SPDX-License-Identifier: Apache-2.0 */
/* stats.c - small-sample statistics: summaries, Student-t intervals, Mann-Whitney U,
 * Hodges-Lehmann shift, Welch interval. Pure functions, no I/O. */
#include "controller/report/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double *sorted_copy(const double *values, size_t n)
{
    double *v = kp_xmalloc((n ? n : 1) * sizeof(*v)); /* caller frees */
    if (n)
        memcpy(v, values, n * sizeof(*v));
    qsort(v, n, sizeof(*v), cmp_double);
    return v;
}

double stats_median(const double *values, size_t n)
{
    double *v, m;

    if (n == 0)
        return 0;
    v = sorted_copy(values, n);
    m = (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    free(v);
    return m;
}

double stats_mean(const double *values, size_t n)
{
    double sum = 0;

    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    return sum / (double)n;
}

double stats_stddev(const double *values, size_t n)
{
    double mean, ss = 0;

    if (n < 2)
        return 0;
    mean = stats_mean(values, n);
    for (size_t i = 0; i < n; i++)
        ss += (values[i] - mean) * (values[i] - mean);
    return sqrt(ss / (double)(n - 1));
}

double stats_t975(size_t df)
{
    static const double table[31] = {
        0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
        2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    };
    double z = 1.959963984540054, d;

    if (df <= 30)
        return table[df];
    /* Cornish-Fisher expansion of the t quantile around the normal one; exact to 1e-4 here */
    d = (double)df;
    return z + (pow(z, 3) + z) / (4 * d) + (5 * pow(z, 5) + 16 * pow(z, 3) + 3 * z) / (96 * d * d) +
           (3 * pow(z, 7) + 19 * pow(z, 5) + 17 * pow(z, 3) - 15 * z) / (384 * d * d * d);
}

void stats_summarize(const double *values, size_t n, double noisy_cv_pct, struct stats_summary *out)
{
    double half;

    memset(out, 0, sizeof(*out));
    out->n = n;
    if (n == 0)
        return;
    out->median = stats_median(values, n);
    out->mean = stats_mean(values, n);
    out->stddev = stats_stddev(values, n);
    out->ci95_lo = out->ci95_hi = out->mean;
    if (n < 2)
        return;
    if (out->mean != 0)
        out->cv_pct = 100.0 * out->stddev / fabs(out->mean);
    half = stats_t975(n - 1) * out->stddev / sqrt((double)n);
    out->ci95_lo = out->mean - half;
    out->ci95_hi = out->mean + half;
    out->has_ci = true;
    out->is_noisy = out->cv_pct > noisy_cv_pct;
}

bool stats_ci_narrow_enough(const double *values, size_t n, double rel_half_width_pct)
{
    struct stats_summary s;
    double half;

    if (n < 2)
        return false;
    stats_summarize(values, n, 0, &s);
    half = (s.ci95_hi - s.ci95_lo) / 2.0;
    if (s.mean == 0)
        return half == 0;
    return 100.0 * half / fabs(s.mean) <= rel_half_width_pct;
}

/* Exact two-sided p of U = u for sizes m, n without ties. count[k][x] = number of
 * arrangements of k a-values and j b-values with U = x; built over j (b-values) and k by
 * count(k, j, x) = count(k - 1, j, x - j) + count(k, j - 1, x): the largest value is either
 * an a (beating all j b-values) or a b (beating none). Additions only, so doubles stay exact
 * enough for m, n <= STATS_MWU_EXACT_MAX. */
static double mwu_exact_p(size_t m, size_t n, double u)
{
    size_t umax = m * n, w = umax + 1;
    double *prev = kp_xcalloc((m + 1) * w, sizeof(double)); /* j - 1 layer; ours */
    double *cur = kp_xcalloc((m + 1) * w, sizeof(double));  /* j layer; ours */
    double total = 0, low = 0, high = 0, p;

    for (size_t k = 0; k <= m; k++)
        prev[k * w] = 1; /* j = 0: U is 0 whatever k */
    for (size_t j = 1; j <= n; j++) {
        memset(cur, 0, (m + 1) * w * sizeof(double));
        cur[0] = 1; /* k = 0 */
        for (size_t k = 1; k <= m; k++) {
            for (size_t x = 0; x <= k * j; x++) {
                double c = prev[k * w + x]; /* largest is a b: U unchanged */
                if (x >= j)
                    c += cur[(k - 1) * w + x - j]; /* largest is an a: beats j b-values */
                cur[k * w + x] = c;
            }
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    for (size_t x = 0; x <= umax; x++) {
        double c = prev[m * w + x];
        total += c;
        if ((double)x <= u + 1e-9)
            low += c;
        if ((double)x >= u - 1e-9)
            high += c;
    }
    free(prev);
    free(cur);
    p = 2.0 * fmin(low, high) / total;
    return p > 1 ? 1 : p;
}

struct ranked {
    double v;
    int from_a;
};

static int cmp_ranked(const void *x, const void *y)
{
    return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

double stats_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
    size_t n = na + nb, i = 0;
    struct ranked *r;
    double rank_sum_a = 0, tie_term = 0, u, mu, sigma2, z;
    bool has_ties = false;

    if (na == 0 || nb == 0)
        return 1;
    r = kp_xmalloc(n * sizeof(*r)); /* ours */
    for (size_t k = 0; k < na; k++)
        r[k] = (struct ranked){a[k], 1};
    for (size_t k = 0; k < nb; k++)
        r[na + k] = (struct ranked){b[k], 0};
    qsort(r, n, sizeof(*r), cmp_ranked);
    while (i < n) { /* mid-ranks for tie groups */
        size_t j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        double rank = (double)(i + j + 2) / 2.0, t = (double)(j - i + 1);
        for (size_t k = i; k <= j; k++)
            if (r[k].from_a)
                rank_sum_a += rank;
        if (t > 1) {
            has_ties = true;
            tie_term += t * t * t - t;
        }
        i = j + 1;
    }
    free(r);
    u = rank_sum_a - (double)na * (double)(na + 1) / 2.0;
    if (!has_ties && na <= STATS_MWU_EXACT_MAX && nb <= STATS_MWU_EXACT_MAX)
        return mwu_exact_p(na, nb, u);
    mu = (double)na * (double)nb / 2.0;
    sigma2 = (double)na * (double)nb / 12.0 *
             ((double)(n + 1) - tie_term / ((double)n * (double)(n - 1)));
    if (sigma2 <= 0)
        return 1; /* every value equal */
    z = (fabs(u - mu) - 0.5) / sqrt(sigma2);
    if (z < 0)
        z = 0;
    return erfc(z / sqrt(2.0));
}

double stats_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb)
{
    double *d, m;

    if (na == 0 || nb == 0)
        return 0;
    d = kp_xmalloc(na * nb * sizeof(*d)); /* ours; na, nb are sample counts (small) */
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            d[i * nb + j] = b[j] - a[i];
    m = stats_median(d, na * nb);
    free(d);
    return m;
}

bool stats_welch_ci95(const double *a, size_t na, const double *b, size_t nb, double *lo,
                      double *hi)
{
    double va, vb, se2, df, diff, half;

    *lo = *hi = 0;
    if (na < 2 || nb < 2)
        return false;
    va = pow(stats_stddev(a, na), 2) / (double)na;
    vb = pow(stats_stddev(b, nb), 2) / (double)nb;
    se2 = va + vb;
    diff = stats_mean(b, nb) - stats_mean(a, na);
    if (se2 == 0) {
        *lo = *hi = diff;
        return true;
    }
    df = se2 * se2 / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
    if (df < 1)
        df = 1;
    half = stats_t975((size_t)floor(df)) * sqrt(se2);
    *lo = diff - half;
    *hi = diff + half;
    return true;
}
