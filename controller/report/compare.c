/* SPDX-License-Identifier: Apache-2.0 */
/* compare.c - row matching, per-metric verdicts, provenance differences and rendering of a
 * comparison of two reports. The result is kept as its JSON form (kperf.compare/v1). */
#include "controller/report/compare.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/textsafe.h"
#include "controller/report/provenance.h"
#include "controller/report/readiness.h"
#include "controller/report/render_compare_html.h"
#include "controller/report/render_text.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_pack.h"
#include "controller/report/stats.h"

struct compare {
    json_t *doc; /* kperf.compare/v1, ours */
    size_t regressions;
    size_t improvements;
    size_t failed_in_new;                                 /* measured in BASE, failed in NEW */
    size_t readiness_regressions, readiness_improvements; /* readiness.h */
};

void compare_opts_init(struct compare_opts *opts)
{
    cmp_thresholds_default(opts->th);
    opts->history_z = COMPARE_HISTORY_Z;
    opts->history_min_spread_pct = COMPARE_HISTORY_MIN_SPREAD;
    opts->alpha = COMPARE_DEFAULT_ALPHA;
}

/* True when every node has a distinct "role": nodes are then matched by role, not by order. */
static bool roles_unique(const json_t *nodes)
{
    const json_t *a, *b;
    size_t i, k;

    json_array_foreach(nodes, i, a)
    {
        const char *ra = json_string_value(json_object_get(a, "role"));
        if (!ra)
            return false;
        for (k = 0; k < i; k++) {
            b = json_array_get(nodes, k);
            if (strcmp(ra, json_string_value(json_object_get(b, "role"))) == 0)
                return false;
        }
    }
    return true;
}

/* Flattens metadata into {"path": "value as text"}; run-specific keys are left out because
 * they always differ and explain nothing. */
static void flatten(const json_t *v, const char *path, json_t *out)
{
    static const char *const skip[] = {"start_time", "end_time",  "run_id",
                                       "arguments",  "readiness", NULL};
    const char *key;
    const json_t *item;
    size_t i;
    char sub[256];

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            bool skipped = false;
            for (size_t k = 0; skip[k] && !*path; k++)
                skipped = skipped || strcmp(key, skip[k]) == 0;
            /* the local backend names a node's namespace after the run */
            skipped = skipped || (strncmp(path, "nodes[", 6) == 0 && strcmp(key, "namespace") == 0);
            if (skipped)
                continue;
            snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
            flatten(item, sub, out);
        }
    } else if (json_is_array(v)) {
        bool by_role = strcmp(path, "nodes") == 0 && roles_unique(v);
        json_array_foreach(v, i, item)
        {
            if (by_role)
                snprintf(sub, sizeof(sub), "%s[%s]", path,
                         json_string_value(json_object_get(item, "role")));
            else
                snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            flatten(item, sub, out);
        }
    } else {
        char *text = json_is_string(v) ? kp_xstrdup(json_string_value(v))
                                       : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        json_object_set_new(out, path, json_string(text ? text : "?"));
        free(text);
    }
}

/* Adds to acc (an object keyed by field, base and new value) each value of the agent's
 * placement (the first sample's `placement`: same kernel, client threads, write size,
 * low-unsent, the client's CPUs and CPU quota) that differs between the matched rows rb and
 * rn, as {field: "samples.placement.F", base, new, rows: how many rows changed so}. A
 * stream rate measured under another placement (a CPU limit that appeared, fewer CPUs) is a
 * likelier explanation of a change than the CNI. A field only one side reports (an older
 * agent) is not a change of placement: kperf_version tells that. */
static void placement_diff(json_t *acc, const json_t *rb, const json_t *rn)
{
    const json_t *pb =
        json_object_get(json_array_get(json_object_get(rb, "samples"), 0), "placement");
    const json_t *pn =
        json_object_get(json_array_get(json_object_get(rn, "samples"), 0), "placement");
    json_t *fb, *fn, *v, *w, *e;
    const char *key;

    if (!json_is_object(pb) || !json_is_object(pn))
        return;
    fb = json_object();
    fn = json_object();
    flatten(pb, "samples.placement", fb);
    flatten(pn, "samples.placement", fn);
    json_object_foreach(fb, key, v)
    {
        const char *b = json_string_value(v), *n;
        char *k;
        if (!(w = json_object_get(fn, key)) || !(n = json_string_value(w)) || !b ||
            strcmp(b, n) == 0)
            continue;
        k = kp_xasprintf("%s\x1f%s\x1f%s", key, b, n);
        e = json_object_get(acc, k);
        if (!e) {
            e = json_pack("{s:s, s:s, s:s, s:I}", "field", key, "base", b, "new", n, "rows",
                          (json_int_t)0);
            json_object_set_new(acc, k, e);
        }
        json_object_set_new(e, "rows",
                            json_integer(json_integer_value(json_object_get(e, "rows")) + 1));
        free(k);
    }
    json_decref(fb);
    json_decref(fn);
}

/* [{field, base, new}] for every metadata value that differs (absent = null), and the
 * placement changes gathered in placements (placement_diff; may be NULL). */
static json_t *provenance_diff(const json_t *mb, const json_t *mn, const json_t *placements)
{
    json_t *fb = json_object(), *fn = json_object(), *diff = json_array();
    const char *key;
    json_t *v;

    flatten(mb, "", fb);
    flatten(mn, "", fn);
    json_object_foreach(fb, key, v)
    {
        json_t *w = json_object_get(fn, key);
        if (!w || !json_equal(v, w))
            json_array_append_new(diff,
                                  json_pack("{s:s, s:O, s:O?}", "field", key, "base", v, "new", w));
    }
    json_object_foreach(fn, key, v)
    {
        if (!json_object_get(fb, key))
            json_array_append_new(diff,
                                  json_pack("{s:s, s:n, s:O}", "field", key, "base", "new", v));
    }
    json_decref(fb);
    json_decref(fn);
    json_object_foreach((json_t *)placements, key, v) json_array_append(diff, v);
    provenance_rank(diff); /* changed settings first: the likely explanation */
    return diff;
}

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
    if (na >= 4 && nb >= 4) {
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
    } else if (!m->key) {
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

/* One metric of a matched row; NULL when neither side has it, or only one (then it is added
 * to `missing` with the side that has it). *verdict is set. */
static json_t *compare_metric(const json_t *rb, const json_t *rn, const struct cmp_metric *m,
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
    json_object_set_new(out, "significant", json_boolean(sig));
    json_object_set_new(out, "verdict", json_string(*verdict));
    return out;
}

/* A row's address family; a row without one (reports before dual-stack) was IPv4. */
static const char *row_family(const json_t *r)
{
    const char *f = json_string_value(json_object_get(r, "ip_family"));

    return f ? f : "IPv4";
}

/* Rows of one report by key (scenario, placement, test, reverse): a hash of key text -> row
 * number, built once, so matching n rows costs O(n), not O(n^2). `any` holds the first row of
 * each key, `measured` the first one with samples (a key may repeat in a hand-made file). */
struct row_index {
    const struct report *rep; /* borrowed */
    json_t *any;              /* {key: row number}, ours */
    json_t *measured;         /* {key: row number}, ours */
};

/* The key of a row or key object as text: the two free strings are length-prefixed and the
 * test name is followed by the direction, so distinct keys never give the same text. NULL
 * when a part is missing (such a row matches nothing). Caller frees. */
static char *key_of(const char *sc, const char *pl, const char *t, bool reverse, const char *f)
{
    if (!sc || !pl || !t)
        return NULL;
    return kp_xasprintf("%zu:%s%zu:%s%s|%d|%s", strlen(sc), sc, strlen(pl), pl, t, reverse,
                        f ? f : "IPv4");
}

static char *key_text(const json_t *r)
{
    return key_of(json_string_value(json_object_get(r, "scenario")),
                  json_string_value(json_object_get(r, "placement")),
                  json_string_value(json_object_get(r, "test")),
                  json_is_true(json_object_get(r, "reverse")), row_family(r));
}

/* key_text of row i of rep, without reading the row (report_row_info). */
static char *key_at(const struct report *rep, size_t i, struct report_row_info *ri)
{
    report_row_info(rep, i, ri);
    return key_of(ri->scenario, ri->placement, ri->test, ri->reverse, ri->ip_family);
}

static void index_build(struct row_index *ix, const struct report *rep)
{
    ix->rep = rep;
    ix->any = json_object();
    ix->measured = json_object();
    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        char *k = key_at(rep, i, &ri);
        if (!k)
            continue;
        if (!json_object_get(ix->any, k))
            json_object_set_new(ix->any, k, json_integer((json_int_t)i));
        if (ri.n_samples > 0 && !json_object_get(ix->measured, k))
            json_object_set_new(ix->measured, k, json_integer((json_int_t)i));
        free(k);
    }
}

static void index_free(struct row_index *ix)
{
    json_decref(ix->any);
    json_decref(ix->measured);
}

/* The row of the index's report with the key of `key`; only one with samples when
 * measured_only. NULL when there is none. */
static const json_t *find_key(const struct row_index *ix, const json_t *key, bool measured_only)
{
    char *k = key_text(key);
    const json_t *n = k ? json_object_get(measured_only ? ix->measured : ix->any, k) : NULL;

    free(k);
    return n ? report_row(ix->rep, (size_t)json_integer_value(n)) : NULL;
}

static const json_t *find_measured(const struct row_index *ix, const json_t *key)
{
    return find_key(ix, key, true);
}

/* The number of the row of the index's report with key text k (key_text), or -1. */
static long find_index(const struct row_index *ix, const char *k, bool measured_only)
{
    const json_t *n = k ? json_object_get(measured_only ? ix->measured : ix->any, k) : NULL;

    return n ? (long)json_integer_value(n) : -1;
}

static json_t *row_key(const json_t *r)
{
    json_t *k = json_pack("{s:O, s:O, s:O, s:O}", "scenario", json_object_get(r, "scenario"),
                          "placement", json_object_get(r, "placement"), "test",
                          json_object_get(r, "test"), "reverse", json_object_get(r, "reverse"));

    if (json_object_get(r, "ip_family"))
        json_object_set(k, "ip_family", json_object_get(r, "ip_family"));
    return k;
}

/* Counts metric verdict v in cmp and returns the row's verdict so far: a regression anywhere
 * makes the row a regression, else an improvement makes it an improvement. */
static const char *tally_verdict(struct compare *cmp, const char *row_verdict, const char *v)
{
    if (strcmp(v, "regression") == 0) {
        cmp->regressions++;
        return v;
    }
    if (strcmp(v, "improvement") == 0) {
        cmp->improvements++;
        if (strcmp(row_verdict, "regression") != 0)
            return v;
    }
    return row_verdict;
}

static json_t *compare_row(struct compare *cmp, const json_t *rb, const json_t *rn,
                           const struct compare_opts *o)
{
    size_t count;
    const struct cmp_metric *m = cmp_metrics(&count);
    json_t *row = row_key(rb), *metrics = json_array(), *missing = json_array();
    const char *row_verdict = "within noise", *v;

    for (size_t i = 0; i < count; i++) {
        json_t *mj = compare_metric(rb, rn, &m[i], o, missing, &v);
        if (!mj)
            continue;
        json_array_append_new(metrics, mj);
        row_verdict = tally_verdict(cmp, row_verdict, v);
    }
    json_object_set_new(row, "verdict", json_string(row_verdict));
    json_object_set_new(row, "metrics", metrics);
    json_object_set_new(row, "missing_metrics", missing);
    return row;
}

/* Rows measured in `a` with no measured counterpart in `b`, as keys. When failed is not NULL,
 * rows that `b` has but that failed there (errors, no samples) go to *failed instead, with
 * their first error: a test that stopped working is worse than a slower one. */
static json_t *unmatched(const struct report *a, const struct row_index *b, json_t *failed)
{
    json_t *out = json_array();

    for (size_t i = 0; i < report_row_count(a); i++) {
        struct report_row_info ri, oi;
        char *key = key_at(a, i, &ri);
        long o = find_index(b, key, false);
        const json_t *r, *other;
        bool measured = ri.n_samples > 0 && find_index(b, key, true) >= 0;
        free(key);
        if (ri.n_samples == 0 || measured || !(r = report_row(a, i)))
            continue;
        if (o >= 0)
            report_row_info(b->rep, (size_t)o, &oi);
        if (failed && o >= 0 && strcmp(oi.status, "failed") == 0 &&
            (other = report_row(b->rep, (size_t)o))) {
            json_t *k = row_key(r);
            const json_t *e = json_array_get(json_object_get(other, "errors"), 0);
            json_object_set_new(k, "error",
                                json_string(e && json_string_value(json_object_get(e, "error"))
                                                ? json_string_value(json_object_get(e, "error"))
                                                : "failed"));
            json_array_append_new(failed, k);
            continue;
        }
        json_array_append_new(out, row_key(r));
    }
    return out;
}

/* A finished row of the comparison as its compact text (report_lazy.h): a tree costs ~10x
 * its text, and the rows are read once per output. Readers expand them one at a time
 * (report_lazy_expand). Takes row. */
static json_t *stored(json_t *row)
{
    json_t *s = report_lazy_store(row, 0);

    if (!s)
        return row; /* out of memory: keep the tree */
    json_decref(row);
    return s;
}

/* {"latency": "5%", "loss": "0.1pp", ...} */
static json_t *thresholds_json(const struct compare_opts *o)
{
    json_t *t = json_object();
    char buf[32];

    for (int g = 0; g < CMP_GROUPS; g++)
        json_object_set_new(t, cmp_group_name(g),
                            json_string(cmp_threshold_text(&o->th[g], g, buf, sizeof(buf))));
    return t;
}

struct compare *compare_reports(const struct report *base, const struct report *cur,
                                const struct compare_opts *opts, struct kp_err *err)
{
    struct compare *cmp = kp_xcalloc(1, sizeof(*cmp));
    json_t *rows = json_array(), *placements = json_object(), *failed, *only_base, *readiness;
    struct row_index ib, ic;

    index_build(&ib, base);
    index_build(&ic, cur);
    for (size_t i = 0; i < report_row_count(base); i++) {
        struct report_row_info ri;
        char *key = key_at(base, i, &ri);
        long n = ri.n_samples > 0 ? find_index(&ic, key, true) : -1;
        const json_t *rb, *rn;
        free(key);
        if (n < 0 || !(rb = report_row(base, i)) || !(rn = report_row(cur, (size_t)n)))
            continue;
        placement_diff(placements, rb, rn);
        json_array_append_new(rows, stored(compare_row(cmp, rb, rn, opts)));
    }
    if (json_array_size(rows) == 0) {
        kp_err_set(err,
                   "the reports share no measured row (BASE has %zu measured, NEW has %zu): "
                   "compare runs of the same scenarios and tests",
                   report_ok_count(base), report_ok_count(cur));
        json_decref(rows);
        json_decref(placements);
        index_free(&ib);
        index_free(&ic);
        free(cmp);
        return NULL;
    }
    failed = json_array();
    only_base = unmatched(base, &ic, failed);
    cmp->failed_in_new = json_array_size(failed);
    readiness = readiness_compare(report_metadata_const(base), report_metadata_const(cur),
                                  &opts->th[CMP_READINESS], &cmp->readiness_regressions,
                                  &cmp->readiness_improvements);
    cmp->doc = json_pack(
        "{s:s, s:f, s:o, s:f, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I}}", "schema",
        COMPARE_SCHEMA, "threshold_pct", opts->th[CMP_LATENCY].value, "thresholds",
        thresholds_json(opts), "alpha", opts->alpha, "provenance",
        provenance_diff(report_metadata_const(base), report_metadata_const(cur), placements),
        "rows", rows, "failed_in_new", failed, "only_in_base", only_base, "only_in_new",
        unmatched(cur, &ib, NULL), "summary", "regressions", (json_int_t)cmp->regressions,
        "improvements", (json_int_t)cmp->improvements, "failed_in_new",
        (json_int_t)cmp->failed_in_new);
    json_decref(placements);
    json_object_set_new(cmp->doc, "readiness", readiness);
    json_object_set_new(json_object_get(cmp->doc, "summary"), "readiness_regressions",
                        json_integer((json_int_t)cmp->readiness_regressions));
    index_free(&ib);
    index_free(&ic);
    return cmp;
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

/* One metric of cur's row against the history rows (NULL where a run lacks the row). */
static json_t *history_metric(const json_t *const *rows, size_t k, const json_t *rn,
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

struct compare *compare_history(const struct report *const *hist, size_t k,
                                const struct report *cur, const struct compare_opts *opts,
                                struct kp_err *err)
{
    struct compare *cmp;
    struct row_index *ix, ic;
    json_t *rows, *failed, *only_new, *placements;
    const json_t **hr;
    size_t count;
    const struct cmp_metric *m = cmp_metrics(&count);

    if (k == 0) {
        kp_err_set(err, "no earlier comparable run to judge against");
        return NULL;
    }
    if (k == 1)
        return compare_reports(hist[0], cur, opts, err);
    cmp = kp_xcalloc(1, sizeof(*cmp));
    ix = kp_xcalloc(k, sizeof(*ix));
    hr = kp_xcalloc(k, sizeof(*hr));
    rows = json_array();
    only_new = json_array();
    placements = json_object();
    for (size_t j = 0; j < k; j++)
        index_build(&ix[j], hist[j]);
    index_build(&ic, cur);
    for (size_t i = 0; i < report_row_count(cur); i++) {
        const json_t *rn = report_row(cur, i);
        json_t *row, *metrics;
        const char *row_verdict = "within noise", *v;
        size_t found = 0;
        if (json_array_size(json_object_get(rn, "samples")) == 0)
            continue;
        for (size_t j = 0; j < k; j++)
            found += (hr[j] = find_measured(&ix[j], rn)) != NULL;
        if (!found) {
            json_array_append_new(only_new, row_key(rn));
            continue;
        }
        if (hr[k - 1]) /* the placement of the run the provenance is read from */
            placement_diff(placements, hr[k - 1], rn);
        row = row_key(rn);
        metrics = json_array();
        for (size_t q = 0; q < count; q++) {
            json_t *mj = history_metric(hr, k, rn, &m[q], opts, &v);
            if (!mj)
                continue;
            json_array_append_new(metrics, mj);
            row_verdict = tally_verdict(cmp, row_verdict, v);
        }
        json_object_set_new(row, "verdict", json_string(row_verdict));
        json_object_set_new(row, "metrics", metrics);
        json_object_set_new(row, "missing_metrics", json_array());
        json_array_append_new(rows, stored(row));
    }
    if (json_array_size(rows) == 0) {
        kp_err_set(err, "NEW shares no measured row with the %zu earlier runs", k);
        json_decref(rows);
        json_decref(only_new);
        json_decref(placements);
        for (size_t j = 0; j < k; j++)
            index_free(&ix[j]);
        index_free(&ic);
        free(ix);
        free(hr);
        free(cmp);
        return NULL;
    }
    failed = json_array();
    cmp->doc = json_pack(
        "{s:s, s:f, s:o, s:f, s:I, s:f, s:o, s:o, s:o, s:o, s:o}", "schema", COMPARE_SCHEMA,
        "threshold_pct", opts->th[CMP_LATENCY].value, "thresholds", thresholds_json(opts), "alpha",
        opts->alpha, "baseline_runs", (json_int_t)k, "history_z", opts->history_z, "provenance",
        provenance_diff(report_metadata_const(hist[k - 1]), report_metadata_const(cur), placements),
        "rows", rows, "only_in_base", unmatched(hist[k - 1], &ic, failed), "only_in_new", only_new,
        "failed_in_new", failed);
    json_decref(placements);
    cmp->failed_in_new = json_array_size(failed);
    json_object_set_new(cmp->doc, "summary",
                        json_pack("{s:I, s:I, s:I}", "regressions", (json_int_t)cmp->regressions,
                                  "improvements", (json_int_t)cmp->improvements, "failed_in_new",
                                  (json_int_t)cmp->failed_in_new));
    for (size_t j = 0; j < k; j++)
        index_free(&ix[j]);
    index_free(&ic);
    free(ix);
    free(hr);
    return cmp;
}

void compare_note_baseline(struct compare *cmp, size_t used, size_t skipped)
{
    json_object_set_new(cmp->doc, "history",
                        json_pack("{s:I, s:I}", "runs_used", (json_int_t)used, "runs_skipped",
                                  (json_int_t)skipped));
}

void compare_free(struct compare *cmp)
{
    if (!cmp)
        return;
    json_decref(cmp->doc);
    free(cmp);
}

size_t compare_regression_count(const struct compare *cmp)
{
    return cmp->regressions + cmp->failed_in_new + cmp->readiness_regressions;
}

size_t compare_improvement_count(const struct compare *cmp)
{
    return cmp->improvements + cmp->readiness_improvements;
}

json_t *compare_to_json(const struct compare *cmp)
{
    json_t *doc = json_deep_copy(cmp->doc), *rows = json_object_get(doc, "rows");

    for (size_t i = 0; i < json_array_size(rows); i++) /* stored rows expanded */
        json_array_set_new(rows, i, report_lazy_expand(json_array_get(rows, i)));
    return doc;
}

/* As json_dumpf(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) would, writing rows[] one row
 * at a time (expanded just before it is written). Returns 0 or -1. */
static int write_json(const json_t *doc, FILE *out)
{
    const size_t prec = JSON_REAL_PRECISION(10);
    const char *key;
    const json_t *v;
    bool first = true;
    int rc = 0;

    fputc('{', out);
    json_object_foreach((json_t *)doc, key, v)
    {
        json_t *k = json_string(key);
        fputs(first ? "\n  " : ",\n  ", out);
        first = false;
        rc |= report_dump_flags(k, 1, prec, out);
        json_decref(k);
        fputs(": ", out);
        if (strcmp(key, "rows") != 0 || json_array_size(v) == 0) {
            rc |= report_dump_flags(v, 1, prec, out);
            continue;
        }
        fputc('[', out);
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *row = report_lazy_expand(json_array_get(v, i));
            fputs(i ? ",\n    " : "\n    ", out);
            rc |= row ? report_dump_flags(row, 2, prec, out) : -1;
            json_decref(row);
        }
        fputs("\n  ]", out);
    }
    fputs(first ? "}" : "\n}", out);
    return rc;
}

#define CCELL 96
#define NCOLS 9

static const char *evidence(const json_t *m, char *buf, size_t len)
{
    const char *method = json_string_value(json_object_get(m, "method"));
    long long na = json_integer_value(json_object_get(m, "n_base"));
    /* (history rows carry n_runs instead) */
    long long nb = json_integer_value(json_object_get(m, "n_new"));
    const json_t *ci = json_object_get(m, "diff_ci95");

    if (strcmp(method, "history") == 0 || strcmp(method, "needs-history") == 0)
        snprintf(buf, len, "%lld runs: spread %.3g, z=%+.1f%s",
                 (long long)json_integer_value(json_object_get(m, "n_runs")),
                 json_number_value(json_object_get(m, "spread")),
                 json_number_value(json_object_get(m, "z")),
                 strcmp(method, "history") == 0 ? "" : ", needs 2 runs");
    else if (strcmp(method, "mann-whitney-u") == 0)
        snprintf(buf, len, "U test p=%.3g, n=%lld/%lld",
                 json_number_value(json_object_get(m, "p_value")), na, nb);
    else if (strcmp(method, "welch-ci95") == 0)
        snprintf(buf, len, "Welch 95%% CI [%.4g, %.4g], n=%lld/%lld, low confidence",
                 json_number_value(json_array_get(ci, 0)), json_number_value(json_array_get(ci, 1)),
                 na, nb);
    else if (strcmp(method, "needs-samples") == 0)
        snprintf(buf, len, "tail percentile: no verdict from one sample (use --samples >= 2)");
    else if (json_number_value(json_object_get(m, "noise_pct")) > 0)
        snprintf(buf, len, "in-run spread +-%.1f%%, n=%lld/%lld, low confidence",
                 json_number_value(json_object_get(m, "noise_pct")), na, nb);
    else
        snprintf(buf, len, "threshold only (no spread known), n=%lld/%lld, low confidence", na, nb);
    return buf;
}

static void metric_cells(const json_t *row, const json_t *m, char (*c)[CCELL])
{
    const char *verdict = json_string_value(json_object_get(m, "verdict"));
    char label[CCELL];

    const json_t *abs = json_object_get(m, "delta_abs");
    char scen[CCELL];

    /* IPv4 is every earlier report's family: only IPv6 rows say theirs */
    snprintf(scen, sizeof(scen), "%s%s", json_string_value(json_object_get(row, "scenario")),
             strcmp(row_family(row), "IPv6") == 0 ? "/IPv6" : "");
    textsafe(scen, c[0], CCELL);
    textsafe(json_string_value(json_object_get(row, "placement")), c[1], CCELL);
    textsafe(render_test_label(row, label, sizeof(label)), c[2], CCELL);
    snprintf(c[3], CCELL, "%s", json_string_value(json_object_get(m, "metric")));
    for (int k = 0; k < 2; k++) { /* small values (CPU s/Gbit) keep 4 digits */
        double v = json_number_value(json_object_get(m, k ? "new" : "base"));
        snprintf(c[4 + k], CCELL, fabs(v) < 1 && v != 0 ? "%.4g" : "%.2f", v);
    }
    if (abs)
        snprintf(c[6], CCELL, "%+.2f%s", json_number_value(abs),
                 strcmp(json_string_value(json_object_get(m, "group")), "loss") == 0 ? "pp" : "");
    else if (json_is_null(json_object_get(m, "delta_pct")))
        snprintf(c[6], CCELL, "from 0");
    else
        snprintf(c[6], CCELL, "%+.1f%%", json_number_value(json_object_get(m, "delta_pct")));
    snprintf(c[7], CCELL, "%s", strcmp(verdict, "regression") == 0 ? "REGRESSION" : verdict);
    evidence(m, c[8], CCELL);
}

static void print_cells(char (*c)[CCELL], const size_t *width, bool markdown, FILE *out)
{
    for (size_t k = 0; k < NCOLS; k++) {
        bool right = k >= 4 && k <= 6;
        fputs(markdown ? "| " : k ? " | " : "", out);
        if (right)
            fprintf(out, "%*s", (int)width[k], c[k]);
        else if (markdown || k + 1 < NCOLS)
            fprintf(out, "%-*s", (int)width[k], c[k]);
        else
            fputs(c[k], out);
        if (markdown)
            fputc(' ', out);
    }
    fputs(markdown ? "|\n" : "\n", out);
}

/* Calls fn for the cells of every compared metric, in order, expanding one stored row at a
 * time (report_lazy.h). */
static void each_metric_line(const json_t *rows, void (*fn)(char (*c)[CCELL], void *ctx), void *ctx)
{
    char line[NCOLS][CCELL];
    const json_t *m;
    size_t k;

    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = report_lazy_expand(json_array_get(rows, i));
        json_array_foreach(json_object_get(row, "metrics"), k, m)
        {
            memset(line, 0, sizeof(line));
            metric_cells(row, m, line);
            fn(line, ctx);
        }
        json_decref(row);
    }
}

static void widen(char (*c)[CCELL], void *ctx)
{
    size_t *width = ctx;

    for (size_t k = 0; k < NCOLS; k++)
        if (strlen(c[k]) > width[k])
            width[k] = strlen(c[k]);
}

struct print_ctx {
    const size_t *width;
    bool markdown;
    FILE *out;
};

static void print_line_cb(char (*c)[CCELL], void *ctx)
{
    const struct print_ctx *p = ctx;

    print_cells(c, p->width, p->markdown, p->out);
}

/* The table of metrics, in two passes over the rows (widths, then lines) so that it costs one
 * line of cells, not all of them. */
static void print_metrics_table(const json_t *doc, bool markdown, FILE *out)
{
    static const char *const head[NCOLS] = {"Scenario", "Node",  "Test",    "Metric",  "Base",
                                            "New",      "Delta", "Verdict", "Evidence"};
    const json_t *rows = json_object_get(doc, "rows");
    size_t k, width[NCOLS];
    char header[NCOLS][CCELL];
    struct print_ctx pc = {.width = width, .markdown = markdown, .out = out};

    for (k = 0; k < NCOLS; k++) {
        snprintf(header[k], CCELL, "%s", head[k]);
        width[k] = 0;
    }
    widen(header, width);
    each_metric_line(rows, widen, width);
    fputc('\n', out);
    print_cells(header, width, markdown, out);
    if (markdown) {
        for (k = 0; k < NCOLS; k++)
            fprintf(out, "|%.*s%s", (int)width[k] + 1,
                    "----------------------------------------------------------------------"
                    "--------------------------",
                    k >= 4 && k <= 6 ? ":" : "-");
        fputs("|\n", out);
    } else {
        size_t total = 0;
        for (k = 0; k < NCOLS; k++)
            total += width[k] + 3;
        for (k = 0; k + 3 < total; k++)
            fputc('-', out);
        fputc('\n', out);
    }
    each_metric_line(rows, print_line_cb, &pc);
}

static void print_keys(const json_t *keys, const char *title, const char *bullet, FILE *out)
{
    const json_t *key;
    size_t i;
    char label[CCELL];

    if (json_array_size(keys) == 0)
        return;
    fprintf(out, "\n%s\n", title);
    json_array_foreach(keys, i, key)
    {
        textsafe_line(out, "%s%s %s %s", bullet,
                      json_string_value(json_object_get(key, "scenario")),
                      json_string_value(json_object_get(key, "placement")),
                      render_test_label(key, label, sizeof(label)));
    }
}

static void print_failed(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *r;
    size_t i;
    char label[CCELL];

    if (json_array_size(rows) == 0)
        return;
    fprintf(out, "\nFAILED in NEW (measured in BASE; counted as regressions):\n");
    json_array_foreach(rows, i, r)
    {
        textsafe_line(out, "%s%s %s %s: %s", bullet,
                      json_string_value(json_object_get(r, "scenario")),
                      json_string_value(json_object_get(r, "placement")),
                      render_test_label(r, label, sizeof(label)),
                      json_string_value(json_object_get(r, "error")));
    }
}

/* Metrics of a compared row that only one side measured (e.g. node CPU unreadable in NEW). */
static void print_missing(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *m;
    size_t i, k;
    bool title = false;
    char label[CCELL];

    for (i = 0; i < json_array_size(rows); i++) {
        json_t *r = report_lazy_expand(json_array_get(rows, i));
        json_array_foreach(json_object_get(r, "missing_metrics"), k, m)
        {
            if (!title)
                fprintf(out, "\nMetrics measured on one side only (not compared):\n");
            title = true;
            textsafe_line(out, "%s%s %s %s: %s only in %s", bullet,
                          json_string_value(json_object_get(r, "scenario")),
                          json_string_value(json_object_get(r, "placement")),
                          render_test_label(r, label, sizeof(label)),
                          json_string_value(json_object_get(m, "metric")),
                          strcmp(json_string_value(json_object_get(m, "measured_in")), "base") == 0
                              ? "BASE"
                              : "NEW");
        }
        json_decref(r);
    }
}

static void print_text(const struct compare *cmp, bool markdown, FILE *out)
{
    const json_t *doc = cmp->doc, *d;
    const char *bullet = markdown ? "- " : "  ";
    size_t i;

    const char *key;
    const json_t *t;
    int k = 0;

    fprintf(out, "%skperf compare: thresholds ", markdown ? "## " : "");
    json_object_foreach((json_t *)json_object_get(doc, "thresholds"), key, t)
    {
        fprintf(out, "%s%s %s", k++ ? ", " : "", key, json_string_value(t));
    }
    if (json_object_get(doc, "baseline_runs"))
        fprintf(out,
                "; judged against the last %lld comparable runs (BASE = their median; a change "
                "must exceed %g spreads between runs)\n",
                (long long)json_integer_value(json_object_get(doc, "baseline_runs")),
                json_number_value(json_object_get(doc, "history_z")));
    else
        fprintf(out, "; significance level %g\n", json_number_value(json_object_get(doc, "alpha")));
    if ((d = json_object_get(doc, "history")) &&
        json_integer_value(json_object_get(d, "runs_skipped")))
        fprintf(out, "%sRests on %lld runs of the history; %lld unreadable run(s) skipped\n",
                bullet, (long long)json_integer_value(json_object_get(d, "runs_used")),
                (long long)json_integer_value(json_object_get(d, "runs_skipped")));
    if (json_array_size(json_object_get(doc, "provenance")) > 0) {
        fprintf(out,
                "\nProvenance differences (a changed node, kernel or version explains many "
                "regressions):\n%s",
                markdown ? "\n" : "");
        provenance_print_likely(json_object_get(doc, "provenance"), bullet, out);
        json_array_foreach(json_object_get(doc, "provenance"), i, d)
        {
            const char *b = json_string_value(json_object_get(d, "base"));
            const char *n = json_string_value(json_object_get(d, "new"));
            json_int_t rows = json_integer_value(json_object_get(d, "rows"));
            char in_rows[48] = "";
            if (rows > 0) /* a sample placement: in how many matched rows */
                snprintf(in_rows, sizeof(in_rows), " (in %" JSON_INTEGER_FORMAT " row%s)", rows,
                         rows == 1 ? "" : "s");
            textsafe_line(out, "%s%s: %s -> %s%s", bullet,
                          json_string_value(json_object_get(d, "field")), b ? b : "(absent)",
                          n ? n : "(absent)", in_rows);
        }
    } else {
        fprintf(out, "\nSame provenance (nodes, kernel, MTU, CNI, versions).\n");
    }
    print_metrics_table(doc, markdown, out);
    print_failed(json_object_get(doc, "failed_in_new"), bullet, out);
    print_keys(json_object_get(doc, "only_in_base"), "Only in BASE (not compared):", bullet, out);
    print_keys(json_object_get(doc, "only_in_new"), "Only in NEW (not compared):", bullet, out);
    print_missing(json_object_get(doc, "rows"), bullet, out);
    readiness_compare_print(json_object_get(doc, "readiness"), markdown, out);
    if (json_array_size(json_object_get(doc, "readiness")) > 0)
        fprintf(
            out, "\nPod network readiness: %zu regression%s, %zu improvement%s (threshold %s)\n",
            cmp->readiness_regressions, cmp->readiness_regressions == 1 ? "" : "s",
            cmp->readiness_improvements, cmp->readiness_improvements == 1 ? "" : "s",
            json_string_value(json_object_get(json_object_get(doc, "thresholds"), "readiness")));
    fprintf(out, "\n%zu regression%s, %zu improvement%s beyond the thresholds in %zu rows compared",
            cmp->regressions, cmp->regressions == 1 ? "" : "s", cmp->improvements,
            cmp->improvements == 1 ? "" : "s", json_array_size(json_object_get(doc, "rows")));
    if (cmp->failed_in_new)
        fprintf(out, "; %zu row%s failed in NEW", cmp->failed_in_new,
                cmp->failed_in_new == 1 ? "" : "s");
    fputc('\n', out);
}

int compare_render(const struct compare *cmp, enum report_format fmt, FILE *out, struct kp_err *err)
{
    int rc = 0;

    switch (fmt) {
    case REPORT_TABLE:
    case REPORT_MARKDOWN:
        print_text(cmp, fmt == REPORT_MARKDOWN, out);
        break;
    case REPORT_JSON:
        rc = write_json(cmp->doc, out);
        fputc('\n', out);
        break;
    case REPORT_HTML:
        render_compare_html(cmp->doc, out);
        break;
    default:
        return kp_err_set(err, "compare prints table, markdown, json or html only");
    }
    /* flushed here: a full disk or a closed pipe often shows only when the buffer goes out */
    if (rc != 0 || fflush(out) != 0 || ferror(out))
        return kp_err_set(err, "cannot write the comparison: %s", strerror(errno ? errno : EIO));
    return 0;
}
