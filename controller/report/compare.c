/* SPDX-License-Identifier: Apache-2.0 */
/* compare.c - a comparison of two reports, or of a report against several earlier runs
 * (compare.h): walks the matched rows (compare_match.h), gathers each metric's verdict
 * (compare_judge.h) and the provenance differences (provenance.h) into kperf.compare/v1, and
 * counts the verdicts. Writing it out is compare_render.c's. */
#include "controller/report/compare.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/rowkey.h"
#include "controller/report/compare_int.h"
#include "controller/report/compare_judge.h"
#include "controller/report/compare_match.h"
#include "controller/report/evidence.h"
#include "controller/report/kprofile.h"
#include "controller/report/netpol.h"
#include "controller/report/pathmtu.h"
#include "controller/report/provenance.h"
#include "controller/report/readiness.h"
#include "controller/report/report_lazy.h"

#define CANNOT_JUDGE "cannot judge"

void compare_opts_init(struct compare_opts *opts)
{
    cmp_thresholds_default(opts->th);
    opts->history_z = COMPARE_HISTORY_Z;
    opts->history_min_spread_pct = COMPARE_HISTORY_MIN_SPREAD;
    opts->alpha = COMPARE_DEFAULT_ALPHA;
    opts->strict_evidence = false;
}

/* Counts metric verdict v in cmp and returns the row's verdict so far: a regression anywhere
 * makes the row a regression, else an inconclusive metric makes it inconclusive, else an
 * improvement makes it an improvement. */
static const char *tally_verdict(struct compare *cmp, const char *row_verdict, const char *v)
{
    if (strcmp(v, "regression") == 0) {
        cmp->regressions++;
        return v;
    }
    if (strcmp(v, "inconclusive") == 0) {
        cmp->inconclusive++;
        return strcmp(row_verdict, "regression") == 0 ? row_verdict : v;
    }
    if (strcmp(v, "improvement") == 0) {
        cmp->improvements++;
        if (strcmp(row_verdict, "regression") != 0 && strcmp(row_verdict, "inconclusive") != 0)
            return v;
    }
    return row_verdict;
}

/* The key of row r as the comparison lists it (new reference). */
static json_t *key_json(const json_t *r)
{
    struct rowkey k;

    rowkey_of(r, &k);
    return rowkey_to_json(&k);
}

/* A compared row: its key, verdict, metrics and missing_metrics (new reference). With k == 0
 * rb is BASE's row (one earlier run), else hist[] are the k runs' rows (compare_history). */
static json_t *compare_row(struct compare *cmp, const json_t *rb, const json_t *const *hist,
                           size_t k, const json_t *rn, const struct compare_opts *o)
{
    size_t count;
    const struct cmp_metric *m = cmp_metrics(&count);
    json_t *row = key_json(rn), *metrics = json_array(), *missing = json_array();
    json_t *moved = evidence_compare(k ? hist[k - 1] : rb, rn);
    json_t *holes = pathmtu_compare(k ? hist[k - 1] : rb, rn), *pdiff;
    bool refuse = o->strict_evidence && (json_array_size(moved) > 0 || json_array_size(holes) > 0);
    const char *row_verdict = refuse ? CANNOT_JUDGE : "within noise", *v;

    for (size_t i = 0; i < count; i++) {
        json_t *mj = k ? compare_judge_history(hist, k, rn, &m[i], o, &v)
                       : compare_judge_pair(rb, rn, &m[i], o, missing, &v);
        if (!mj)
            continue;
        json_array_append_new(metrics, mj);
        if (refuse) /* the counters say the path was shaped or dropped: no verdict */
            json_object_set_new(mj, "verdict", json_string(CANNOT_JUDGE));
        else
            row_verdict = tally_verdict(cmp, row_verdict, v);
    }
    cmp->refused += refuse;
    cmp->refused_pmtu += refuse && json_array_size(holes) > 0;
    if (json_array_size(moved) > 0)
        json_object_set(row, "counters_moved", moved);
    if (json_array_size(holes) > 0)
        json_object_set(row, "path_mtu_black_hole", holes);
    if ((pdiff = kprofile_diff(k ? hist[k - 1] : rb, rn)) != NULL) /* both rows profiled */
        json_object_set_new(row, "profile_diff", pdiff);
    json_decref(moved);
    json_decref(holes);
    json_object_set_new(row, "verdict", json_string(row_verdict));
    json_object_set_new(row, "metrics", metrics);
    json_object_set_new(row, "missing_metrics", missing);
    return row;
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

/* The compared rows of BASE's measured rows that NEW measured too; their placement changes go
 * to placements. */
static json_t *pair_rows(struct compare *cmp, const struct report *base,
                         const struct compare_index *ic, const struct compare_opts *opts,
                         json_t *placements)
{
    json_t *rows = json_array();

    for (size_t i = 0; i < report_row_count(base); i++) {
        struct report_row_info ri;
        struct rowkey k;
        const json_t *rb, *rn;
        long n;
        compare_index_key_at(base, i, &ri, &k);
        n = ri.n_samples > 0 ? compare_index_find(ic, &k, true) : -1;
        if (n < 0 || !(rb = report_row(base, i)) || !(rn = report_row(ic->rep, (size_t)n)))
            continue;
        provenance_placement_diff(placements, rb, rn);
        json_array_append_new(rows, stored(compare_row(cmp, rb, NULL, 0, rn, opts)));
    }
    return rows;
}

struct compare *compare_reports(const struct report *base, const struct report *cur,
                                const struct compare_opts *opts, struct kp_err *err)
{
    struct compare *cmp = kp_xcalloc(1, sizeof(*cmp));
    json_t *rows, *placements = json_object(), *failed, *only_base, *readiness;
    struct compare_index ib, ic;

    compare_index_init(&ib, base);
    compare_index_init(&ic, cur);
    rows = pair_rows(cmp, base, &ic, opts, placements);
    if (json_array_size(rows) == 0) {
        kp_err_set(err,
                   "the reports share no measured row (BASE has %zu measured, NEW has %zu): "
                   "compare runs of the same scenarios and tests",
                   report_ok_count(base), report_ok_count(cur));
        json_decref(rows);
        json_decref(placements);
        compare_index_cleanup(&ib);
        compare_index_cleanup(&ic);
        free(cmp);
        return NULL;
    }
    failed = json_array();
    only_base = compare_unmatched(base, &ic, failed);
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
        compare_unmatched(cur, &ib, NULL), "summary", "regressions", (json_int_t)cmp->regressions,
        "improvements", (json_int_t)cmp->improvements, "failed_in_new",
        (json_int_t)cmp->failed_in_new);
    json_decref(placements);
    json_object_set_new(cmp->doc, "readiness", readiness);
    json_object_set_new(cmp->doc, "netpol",
                        netpol_compare(report_metadata_const(base), report_metadata_const(cur),
                                       &opts->th[CMP_READINESS], &cmp->netpol_regressions,
                                       &cmp->netpol_improvements));
    json_object_set_new(json_object_get(cmp->doc, "summary"), "netpol_regressions",
                        json_integer((json_int_t)cmp->netpol_regressions));
    json_object_set_new(json_object_get(cmp->doc, "summary"), "not_judged",
                        json_integer((json_int_t)cmp->refused));
    json_object_set_new(json_object_get(cmp->doc, "summary"), "readiness_regressions",
                        json_integer((json_int_t)cmp->readiness_regressions));
    json_object_set_new(json_object_get(cmp->doc, "summary"), "inconclusive",
                        json_integer((json_int_t)cmp->inconclusive));
    compare_index_cleanup(&ib);
    compare_index_cleanup(&ic);
    return cmp;
}

/* The runs of a history comparison, indexed once. */
struct history {
    size_t k;                 /* runs, oldest first */
    struct compare_index *ix; /* ours: one per run */
    const json_t **hr;        /* ours: the rows of one key, one per run (NULL: none) */
};

/* The compared rows of cur's measured rows against the runs; rows no run measured go to
 * only_new, placement changes (against the newest run) to placements. */
static json_t *history_rows(struct compare *cmp, const struct history *h, const struct report *cur,
                            const struct compare_opts *opts, json_t *only_new, json_t *placements)
{
    json_t *rows = json_array();

    for (size_t i = 0; i < report_row_count(cur); i++) {
        const json_t *rn = report_row(cur, i);
        size_t found = 0;
        if (json_array_size(json_object_get(rn, "samples")) == 0)
            continue;
        for (size_t j = 0; j < h->k; j++)
            found += (h->hr[j] = compare_index_find_measured(&h->ix[j], rn)) != NULL;
        if (!found) {
            json_array_append_new(only_new, key_json(rn));
            continue;
        }
        if (h->hr[h->k - 1]) /* the placement of the run the provenance is read from */
            provenance_placement_diff(placements, h->hr[h->k - 1], rn);
        json_array_append_new(rows, stored(compare_row(cmp, NULL, h->hr, h->k, rn, opts)));
    }
    return rows;
}

static void history_cleanup(struct history *h)
{
    for (size_t j = 0; j < h->k; j++)
        compare_index_cleanup(&h->ix[j]);
    free(h->ix);
    free(h->hr);
}

struct compare *compare_history(const struct report *const *hist, size_t k,
                                const struct report *cur, const struct compare_opts *opts,
                                struct kp_err *err)
{
    struct compare *cmp;
    struct history h = {.k = k};
    struct compare_index ic;
    json_t *rows, *failed, *only_new, *placements;

    if (k == 0) {
        kp_err_set(err, "no earlier comparable run to judge against");
        return NULL;
    }
    if (k == 1)
        return compare_reports(hist[0], cur, opts, err);
    cmp = kp_xcalloc(1, sizeof(*cmp));
    h.ix = kp_xcalloc(k, sizeof(*h.ix));
    h.hr = kp_xcalloc(k, sizeof(*h.hr));
    only_new = json_array();
    placements = json_object();
    for (size_t j = 0; j < k; j++)
        compare_index_init(&h.ix[j], hist[j]);
    compare_index_init(&ic, cur);
    rows = history_rows(cmp, &h, cur, opts, only_new, placements);
    if (json_array_size(rows) == 0) {
        kp_err_set(err, "NEW shares no measured row with the %zu earlier runs", k);
        json_decref(rows);
        json_decref(only_new);
        json_decref(placements);
        history_cleanup(&h);
        compare_index_cleanup(&ic);
        free(cmp);
        return NULL;
    }
    failed = json_array();
    cmp->doc = json_pack(
        "{s:s, s:f, s:o, s:f, s:I, s:f, s:o, s:o, s:o, s:o, s:o}", "schema", COMPARE_SCHEMA,
        "threshold_pct", opts->th[CMP_LATENCY].value, "thresholds", thresholds_json(opts), "alpha",
        opts->alpha, "baseline_runs", (json_int_t)k, "history_z", opts->history_z, "provenance",
        provenance_diff(report_metadata_const(hist[k - 1]), report_metadata_const(cur), placements),
        "rows", rows, "only_in_base", compare_unmatched(hist[k - 1], &ic, failed), "only_in_new",
        only_new, "failed_in_new", failed);
    json_decref(placements);
    cmp->failed_in_new = json_array_size(failed);
    json_object_set_new(cmp->doc, "summary",
                        json_pack("{s:I, s:I, s:I}", "regressions", (json_int_t)cmp->regressions,
                                  "improvements", (json_int_t)cmp->improvements, "failed_in_new",
                                  (json_int_t)cmp->failed_in_new));
    json_object_set_new(json_object_get(cmp->doc, "summary"), "not_judged",
                        json_integer((json_int_t)cmp->refused));
    json_object_set_new(json_object_get(cmp->doc, "summary"), "inconclusive",
                        json_integer((json_int_t)cmp->inconclusive));
    history_cleanup(&h);
    compare_index_cleanup(&ic);
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
    return cmp->regressions + cmp->failed_in_new + cmp->readiness_regressions +
           cmp->netpol_regressions;
}

size_t compare_refused_count(const struct compare *cmp)
{
    return cmp->refused;
}

size_t compare_refused_pmtu_count(const struct compare *cmp)
{
    return cmp->refused_pmtu;
}

size_t compare_inconclusive_count(const struct compare *cmp)
{
    return cmp->inconclusive;
}

size_t compare_improvement_count(const struct compare *cmp)
{
    return cmp->improvements + cmp->readiness_improvements + cmp->netpol_improvements;
}

json_t *compare_to_json(const struct compare *cmp)
{
    json_t *doc = json_deep_copy(cmp->doc), *rows = json_object_get(doc, "rows");

    for (size_t i = 0; i < json_array_size(rows); i++) /* stored rows expanded */
        json_array_set_new(rows, i, report_lazy_expand(json_array_get(rows, i)));
    return doc;
}
