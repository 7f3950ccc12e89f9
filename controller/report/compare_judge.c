/* SPDX-License-Identifier: Apache-2.0 */
/* compare_judge.c - the verdict of one metric of a matched row (compare_judge.h): against one
 * earlier run from the samples (Mann-Whitney U, Welch interval, the one-sample rule), or
 * against several from the spread between runs. */
#include "controller/report/compare_judge.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_pack.h"
#include "controller/report/stats.h"

/* In-run spread (CV %) of a row for the one-sample rule: across samples when there are
 * several, else across the sample's per-interval values of the key metric; 0 if unknown. */
static double in_run_cv(const json_t *row, const struct cmp_metric *m)
{
    const char *kind = json_string_value(json_object_get(row, "kind"));
    const char *key = strcmp(kind, "latency") == 0 ? "ops_per_sec" : "throughput_mbps";
    const json_t *s, *iv;
    size_t i, k, n = 0, cap = 0;
    double *v = NULL, cv = 0;

    n = cmp_sample_values(row, m, &v);
    if (n < 2) {
        free(v);
        v = NULL;
        n = 0;
        json_array_foreach(json_object_get(row, "samples"), i, s)
        {
            json_t *ivs = report_unpacked(s, "intervals"); /* ours */
            json_array_foreach(ivs, k, iv)
            {
                if (n == cap) {
                    cap = cap ? cap * 2 : 64;
                    v = kp_xrealloc(v, cap * sizeof(*v));
                }
                if (report_get_number(iv, key, NULL, &v[n]))
                    n++;
            }
            json_decref(ivs);
        }
    }
    if (n >= 2 && stats_mean(v, n) != 0)
        cv = 100.0 * stats_stddev(v, n) / fabs(stats_mean(v, n));
    free(v);
    return cv;
}

/* The summed events and trials of m over row's samples (cmp_metric.sample_counts). */
static void row_counts(const json_t *row, const struct cmp_metric *m, double *k, double *n)
{
    size_t i;
    const json_t *s;
    double sk, sn;

    *k = *n = 0;
    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        if (m->sample_counts(s, &sk, &sn)) {
            *k += sk;
            *n += sn;
        }
    }
}

/* A pod-to-dns row (base/dnsresult.h): one sample of lookups has no per-interval series, so
 * the in-run spread of its latency is unknown (not 0): its latency needs samples. */
static bool dns_row(const json_t *row)
{
    return json_object_get(json_array_get(json_object_get(row, "samples"), 0), "dns") != NULL;
}

/* A rate of events among trials: the two-proportion z test on the rows' summed counts. */
static bool significant_counts(const json_t *rb, const json_t *rn, const struct cmp_metric *m,
                               double delta, const struct compare_opts *o, json_t *out)
{
    double ka, na, kb, nb, pool, se, z, p;

    row_counts(rb, m, &ka, &na);
    row_counts(rn, m, &kb, &nb);
    pool = na + nb > 0 ? (ka + kb) / (na + nb) : 0;
    se = na > 0 && nb > 0 ? sqrt(pool * (1 - pool) * (1 / na + 1 / nb)) : 0;
    z = se > 0 ? (kb / nb - ka / na) / se : 0;
    p = erfc(fabs(z) / sqrt(2.0));
    json_object_set_new(out, "method", json_string("two-proportion"));
    json_object_set_new(out, "p_value", json_real(p));
    json_object_set_new(out, "confidence", json_string("normal"));
    return se > 0 && p < o->alpha && z * delta > 0;
}

/* Decides whether the samples show a real shift in the direction of delta (NEW - BASE);
 * delta_pct is the relative change, for the one-sample rule. */
static bool significant(const json_t *rb, const json_t *rn, const struct cmp_metric *m,
                        double delta, double delta_pct, const struct compare_opts *o, json_t *out)
{
    double *a, *b, p, lo, hi;
    size_t na = cmp_sample_values(rb, m, &a);
    size_t nb = cmp_sample_values(rn, m, &b);
    bool sig;

    json_object_set_new(out, "n_base", json_integer((json_int_t)na));
    json_object_set_new(out, "n_new", json_integer((json_int_t)nb));
    if (m->sample_counts) {
        sig = significant_counts(rb, rn, m, delta, o, out);
    } else if (na >= 4 && nb >= 4) {
        double shift = stats_hodges_lehmann(a, na, b, nb);
        p = stats_mann_whitney_p(a, na, b, nb);
        sig = p < o->alpha && shift * delta > 0;
        json_object_set_new(out, "method", json_string("mann-whitney-u"));
        json_object_set_new(out, "p_value", json_real(p));
        json_object_set_new(out, "shift", json_real(shift));
        json_object_set_new(out, "confidence", json_string("normal"));
    } else if (na >= 2 && nb >= 2) {
        stats_welch_ci95(a, na, b, nb, &lo, &hi);
        sig = (lo > 0 || hi < 0) && lo * delta > 0;
        json_object_set_new(out, "method", json_string("welch-ci95"));
        json_object_set_new(out, "diff_ci95", json_pack("[f, f]", lo, hi));
        json_object_set_new(out, "confidence", json_string("low"));
    } else if (!m->key || (m->group == CMP_LATENCY && dns_row(rb))) {
        /* One run's p90/p99 moves far more between runs than its per-interval throughput or
         * ops/s do (seen: +-50% p99 between identical runs on a loaded VM with a 5% ops/s
         * spread), so the in-run spread says nothing about it: no verdict without samples.
         * The same holds for loss, jitter, retransmits and CPU, which have no interval series. */
        sig = false;
        json_object_set_new(out, "method", json_string("needs-samples"));
        json_object_set_new(out, "confidence", json_string("none"));
    } else {
        double ca = in_run_cv(rb, m), cb = in_run_cv(rn, m);
        double noise = 2.0 * sqrt(ca * ca + cb * cb);
        sig = fabs(delta_pct) > noise;
        json_object_set_new(out, "method", json_string("in-run-spread"));
        json_object_set_new(out, "noise_pct", json_real(noise));
        json_object_set_new(out, "confidence", json_string("low"));
    }
    free(a);
    free(b);
    return sig;
}

/* Whether out's method estimated the noise (the tail percentiles of one sample have none). */
static bool judged(const json_t *out)
{
    const char *method = json_string_value(json_object_get(out, "method"));

    return method && strcmp(method, "needs-samples") != 0;
}

json_t *compare_judge_pair(const json_t *rb, const json_t *rn, const struct cmp_metric *m,
                           const struct compare_opts *o, json_t *missing, const char **verdict)
{
    const struct cmp_threshold *th = &o->th[m->group];
    double vb, vn, delta, change;
    bool hb = cmp_row_value(rb, m, &vb), hn = cmp_row_value(rn, m, &vn), worse, sig, beyond;
    json_t *out;

    *verdict = "within noise";
    if (hb != hn)
        json_array_append_new(missing, json_pack("{s:s, s:s}", "metric", m->name, "measured_in",
                                                 hb ? "base" : "new"));
    if (!hb || !hn)
        return NULL;
    delta = vb == 0 ? 0 : 100.0 * (vn - vb) / vb;
    change = th->absolute ? vn - vb : delta;
    /* relative threshold from 0: any change is beyond it */
    beyond = !th->absolute && vb == 0 ? vn != 0 : fabs(change) > th->value;
    worse = m->higher_is_better ? vn < vb : vn > vb;
    out = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "metric", m->name, "field", m->field,
                    "group", cmp_group_name(m->group), "base", vb, "new", vn, "delta_pct", delta,
                    "better", m->higher_is_better ? "higher" : "lower");
    if (vb == 0 && vn != 0)
        json_object_set_new(out, "delta_pct", json_null());
    if (th->absolute)
        json_object_set_new(out, "delta_abs", json_real(vn - vb));
    sig = significant(rb, rn, m, vn - vb, delta, o, out);
    if (sig && beyond)
        *verdict = worse ? "regression" : "improvement";
    else if (beyond && worse && judged(out))
        *verdict = "inconclusive"; /* worse beyond the threshold, yet within the noise */
    json_object_set_new(out, "significant", json_boolean(sig));
    json_object_set_new(out, "verdict", json_string(*verdict));
    return out;
}

/* Typical in-run standard error of m over the history rows: the median over rows with two or
 * more samples of stddev / sqrt(n); 0 when none has. */
static double in_run_se(const json_t *const *rows, size_t k, const struct cmp_metric *m)
{
    double *se = kp_xcalloc(k ? k : 1, sizeof(*se)), *v, out = 0;
    size_t n = 0, nv;

    for (size_t j = 0; j < k; j++) {
        if (!rows[j])
            continue;
        nv = cmp_sample_values(rows[j], m, &v);
        if (nv >= 2)
            se[n++] = stats_stddev(v, nv) / sqrt((double)nv);
        free(v);
    }
    if (n)
        out = stats_median(se, n);
    free(se);
    return out;
}

json_t *compare_judge_history(const json_t *const *rows, size_t k, const json_t *rn,
                              const struct cmp_metric *m, const struct compare_opts *o,
                              const char **verdict)
{
    const struct cmp_threshold *th = &o->th[m->group];
    double *h = kp_xcalloc(k, sizeof(*h)), *dev, x, med, mad, sd, se, spread, z, delta;
    size_t n = 0;
    bool worse, beyond, sig;
    json_t *out;

    *verdict = "within noise";
    if (!cmp_row_value(rn, m, &x)) {
        free(h);
        return NULL;
    }
    for (size_t j = 0; j < k; j++)
        if (rows[j] && cmp_row_value(rows[j], m, &h[n]))
            n++;
    if (n == 0) {
        free(h);
        return NULL;
    }
    med = stats_median(h, n);
    dev = kp_xcalloc(n, sizeof(*dev));
    for (size_t j = 0; j < n; j++)
        dev[j] = fabs(h[j] - med);
    mad = 1.4826 * stats_median(dev, n);
    sd = n >= 2 ? stats_stddev(h, n) : 0;
    se = in_run_se(rows, k, m);
    spread = fmax(fmax(mad, sd), fmax(se, o->history_min_spread_pct / 100.0 * fabs(med)));
    spread *= sqrt(1.0 + 1.0 / (double)n);
    z = spread > 0 ? (x - med) / spread : x == med ? 0 : copysign(1e9, x - med);
    delta = med == 0 ? 0 : 100.0 * (x - med) / med;
    beyond = th->absolute ? fabs(x - med) > th->value : med == 0 ? x != 0 : fabs(delta) > th->value;
    worse = m->higher_is_better ? x < med : x > med;
    sig = n >= 2 && fabs(z) > o->history_z;
    if (sig && beyond)
        *verdict = worse ? "regression" : "improvement";
    else if (n >= 2 && beyond && worse)
        *verdict = "inconclusive"; /* the spread between runs hides a change this large */
    out = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:s, s:s, s:I, s:I, s:f, s:f, s:s, s:b, s:s}",
                    "metric", m->name, "field", m->field, "group", cmp_group_name(m->group), "base",
                    med, "new", x, "delta_pct", delta, "better",
                    m->higher_is_better ? "higher" : "lower", "method",
                    n >= 2 ? "history" : "needs-history", "n_runs", (json_int_t)n, "n_new",
                    (json_int_t)json_array_size(json_object_get(rn, "samples")), "spread", spread,
                    "z", fmax(-1e9, fmin(1e9, z)), "confidence", n >= 5 ? "normal" : "low",
                    "significant", sig, "verdict", *verdict);
    if (th->absolute)
        json_object_set_new(out, "delta_abs", json_real(x - med));
    free(dev);
    free(h);
    return out;
}
