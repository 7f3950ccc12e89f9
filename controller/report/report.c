/* SPDX-License-Identifier: Apache-2.0 */
/* report.c - the report model: rows built from agent documents, skips and errors, JSON in and
 * out, and dispatch to the renderers. Aggregation lives in report_aggregate.c, validation in
 * report_validate.c, formats in render_text.c and render_html.c. */
#include "controller/report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/result.h"
#include "base/testkind.h"
#include "controller/report/outlier.h"
#include "controller/report/render_html.h"
#include "controller/report/render_openmetrics.h"
#include "controller/report/render_text.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_file.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_load.h"
#include "controller/report/report_pack.h"
#include "controller/report/report_validate.h"
#include "controller/report/stats.h"
#include "controller/report/urlcred.h"

struct report {
    json_t *metadata;         /* object, ours */
    json_t *rows;             /* array of results[] objects, ours; a loaded row is its text until it
                               * is changed (report_lazy.h): read rows with report_row() */
    struct report_lazy *lazy; /* ours: the trees of stored rows being read */
    struct report_row_info *info; /* ours, strings ours: of each row stored as text, by index
                                   * (n_info entries); unused once rows are trees again */
    size_t n_info;
    json_t *skipped; /* array of {scenario, placement, reason}, ours */
    json_t *errors;  /* array of {scenario, placement, error}, ours */
    double noisy_cv_pct;
    struct report_place **places; /* ours, each ours: the places report_group_get made */
    size_t n_places;
};

static void info_of(const json_t *row, struct report_row_info *out)
{
    const json_t *ip = json_object_get(row, "ip_family");
    const json_t *skip = json_object_get(row, "skip_reason");

    out->scenario = json_string_value(json_object_get(row, "scenario"));
    out->placement = json_string_value(json_object_get(row, "placement"));
    out->test = json_string_value(json_object_get(row, "test"));
    out->kind = json_string_value(json_object_get(row, "kind"));
    out->status = json_string_value(json_object_get(row, "status"));
    out->ip_family = json_string_value(ip);
    out->skip_reason = json_string_value(skip);
    out->reverse = json_is_true(json_object_get(row, "reverse"));
    out->noisy = json_is_true(json_object_get(row, "noisy"));
    out->n_samples = json_array_size(json_object_get(row, "samples"));
    out->n_errors = json_array_size(json_object_get(row, "errors"));
}

/* info_of with the strings copied (for a row about to be stored as text). */
static void info_copy(const json_t *row, struct report_row_info *out)
{
    info_of(row, out);
    out->scenario = kp_xstrdup(out->scenario);
    out->placement = kp_xstrdup(out->placement);
    out->test = kp_xstrdup(out->test);
    out->kind = kp_xstrdup(out->kind);
    out->status = kp_xstrdup(out->status);
    out->ip_family = kp_xstrdup(out->ip_family);
    out->skip_reason = kp_xstrdup(out->skip_reason);
}

static void infos_free(struct report_row_info *info, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)info[i].scenario);
        free((char *)info[i].placement);
        free((char *)info[i].test);
        free((char *)info[i].kind);
        free((char *)info[i].status);
        free((char *)info[i].ip_family);
        free((char *)info[i].skip_reason);
    }
    free(info);
}

/* Before rows change: every row stored as text becomes its tree again (report_lazy.h). */
static void rows_as_trees(struct report *rep)
{
    if (rep->n_info == 0)
        return; /* none stored: a report built by the runner */
    report_lazy_expand_all(rep->lazy, rep->rows);
    infos_free(rep->info, rep->n_info);
    rep->info = NULL;
    rep->n_info = 0;
}

/* A handle of report_group_get: a place in one direction. */
struct report_group {
    struct report_place *place; /* borrowed: owned by the report */
    bool reverse;
};

/* One (scenario, placement) and its rows, addressed by [reverse][test kind]. A row pointer is
 * borrowed from rep->rows (a row object stays put while the array grows) and NULL until the
 * row is first touched. The two directions' handles live here, so they share the rows. */
struct report_place {
    struct report *rep;          /* borrowed: the owner */
    char *scenario;              /* ours */
    char *placement;             /* ours */
    char *ip_family;             /* ours; NULL = rows carry no ip_family */
    json_t *rows[2][TEST_COUNT]; /* borrowed from rep->rows; NULL until touched */
    struct report_group dir[2];  /* [reverse]: the handles given out */
};

int report_format_parse(const char *s, enum report_format *fmt, struct kp_err *err)
{
    static const struct {
        const char *name;
        enum report_format fmt;
    } formats[] = {{"table", REPORT_TABLE},
                   {"markdown", REPORT_MARKDOWN},
                   {"md", REPORT_MARKDOWN},
                   {"json", REPORT_JSON},
                   {"csv", REPORT_CSV},
                   {"html", REPORT_HTML},
                   {"openmetrics", REPORT_OPENMETRICS}};

    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (strcmp(s, formats[i].name) == 0) {
            *fmt = formats[i].fmt;
            return 0;
        }
    }
    return kp_err_set(
        err, "unknown output format '%s' (table, markdown, json, csv, html, openmetrics)", s);
}

struct report *report_new(void)
{
    struct report *rep = kp_xcalloc(1, sizeof(*rep));

    rep->metadata = json_object();
    rep->rows = json_array();
    rep->lazy = report_lazy_new();
    rep->skipped = json_array();
    rep->errors = json_array();
    rep->noisy_cv_pct = REPORT_DEFAULT_CV_PCT;
    return rep;
}

void report_free(struct report *rep)
{
    if (!rep)
        return;
    json_decref(rep->metadata);
    json_decref(rep->rows);
    report_lazy_free(rep->lazy);
    infos_free(rep->info, rep->n_info);
    json_decref(rep->skipped);
    json_decref(rep->errors);
    for (size_t i = 0; i < rep->n_places; i++) {
        free(rep->places[i]->scenario);
        free(rep->places[i]->placement);
        free(rep->places[i]->ip_family);
        free(rep->places[i]);
    }
    free(rep->places);
    free(rep);
}

json_t *report_metadata(struct report *rep)
{
    return rep->metadata;
}

const json_t *report_metadata_const(const struct report *rep)
{
    return rep->metadata;
}

void report_set_noisy_cv_pct(struct report *rep, double cv_pct)
{
    rep->noisy_cv_pct = cv_pct;
}

double report_noisy_cv_pct(const struct report *rep)
{
    return rep->noisy_cv_pct;
}

/* The report's row of a known (scenario, placement, test, reverse), or NULL. For a place made
 * after rows were loaded (report_from_json), and for error entries that name no known test. */
static bool same_family(const json_t *row, const char *ip_family)
{
    const char *f = json_string_value(json_object_get(row, "ip_family"));

    return ip_family ? f && strcmp(f, ip_family) == 0 : !f;
}

static json_t *find_row(const struct report *rep, const char *scenario, const char *placement,
                        const char *ip_family, const char *test, bool reverse)
{
    size_t i;
    json_t *row;

    json_array_foreach(rep->rows, i, row)
    {
        if (same_family(row, ip_family) &&
            strcmp(json_string_value(json_object_get(row, "scenario")), scenario) == 0 &&
            strcmp(json_string_value(json_object_get(row, "placement")), placement) == 0 &&
            strcmp(json_string_value(json_object_get(row, "test")), test) == 0 &&
            json_is_true(json_object_get(row, "reverse")) == reverse)
            return row;
    }
    return NULL;
}

/* Appends a new row (so rows keep the order in which they are first touched). Borrowed. */
static json_t *new_row(const struct report_place *pl, const char *test, const char *kind,
                       bool reverse)
{
    json_t *row =
        json_pack("{s:s, s:s, s:s, s:b, s:s, s:s, s:b, s:[], s:[]}", "scenario", pl->scenario,
                  "placement", pl->placement, "test", test, "reverse", reverse, "kind", kind,
                  "status", "failed", "noisy", 0, "samples", "errors");

    if (pl->ip_family)
        json_object_set_new(row, "ip_family", json_string(pl->ip_family));
    json_array_append_new(pl->rep->rows, row);
    return row;
}

/* The row of test t in one direction: one index, created when missing. Borrowed. */
static json_t *kind_row(struct report_place *pl, enum test_kind t, bool reverse)
{
    const struct testkind *tk = testkind_get(t);
    json_t **slot = &pl->rows[reverse][t];

    if (!*slot)
        *slot = new_row(pl, tk->name, tk->latency ? "latency" : "throughput", reverse);
    return *slot;
}

/* The row of a test named in an agent document: a table lookup, then kind_row. A name that is
 * no test (errors[] entries are not held to the test table) keeps a row of its own, found by
 * name. Borrowed. */
static json_t *named_row(struct report_place *pl, const char *test, bool reverse)
{
    const struct testkind *tk = testkind_by_name(test);
    json_t *row;

    if (tk)
        return kind_row(pl, tk->kind, reverse);
    row = find_row(pl->rep, pl->scenario, pl->placement, pl->ip_family, test, reverse);
    return row ? row : new_row(pl, test, report_kind_of_test(test), reverse);
}

struct report_group *report_group_get(struct report *rep, const char *scenario,
                                      const char *placement, bool reverse)
{
    return report_group_get_family(rep, scenario, placement, NULL, reverse);
}

struct report_group *report_group_get_family(struct report *rep, const char *scenario,
                                             const char *placement, const char *ip_family,
                                             bool reverse)
{
    struct report_place *pl;

    rows_as_trees(rep); /* rows are about to change */
    for (size_t i = 0; i < rep->n_places; i++) {
        pl = rep->places[i];
        if (strcmp(pl->scenario, scenario) == 0 && strcmp(pl->placement, placement) == 0 &&
            (ip_family ? pl->ip_family && strcmp(pl->ip_family, ip_family) == 0 : !pl->ip_family))
            return &pl->dir[reverse];
    }
    pl = kp_xcalloc(1, sizeof(*pl));
    pl->rep = rep;
    pl->scenario = kp_xstrdup(scenario);
    pl->placement = kp_xstrdup(placement);
    pl->ip_family = ip_family ? kp_xstrdup(ip_family) : NULL;
    for (int d = 0; d < 2; d++) {
        pl->dir[d].place = pl;
        pl->dir[d].reverse = d;
        for (int t = 0; t < TEST_COUNT; t++) /* rows a loaded report already has */
            pl->rows[d][t] = find_row(rep, scenario, placement, ip_family, testkind_name(t), d);
    }
    rep->places = kp_xrealloc(rep->places, (rep->n_places + 1) * sizeof(*rep->places));
    rep->places[rep->n_places++] = pl;
    return &pl->dir[reverse];
}

/* Error messages may quote names and values from the input; keep them on one line whatever
 * the input holds (a JSON key can contain a newline). */
static int one_line(struct kp_err *err)
{
    if (err)
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
    return -1;
}

int report_group_add_doc(struct report_group *rg, const json_t *agent_doc, struct kp_err *err)
{
    struct report_place *pl = rg->place;
    const json_t *v;
    size_t i;

    /* the agent's own contract (base/result.h): every field, types, consistency, and the
     * histograms that merging needs */
    if (result_validate(agent_doc, err) != 0) {
        kp_err_prefix(err, "agent document for %s %s", pl->scenario, pl->placement);
        return one_line(err);
    }
    json_array_foreach(json_object_get(agent_doc, "results"), i, v)
    {
        json_t *row = named_row(pl, json_string_value(json_object_get(v, "test")),
                                json_is_true(json_object_get(v, "reverse")));
        json_t *sample = json_deep_copy(v);
        /* the MTUs the agents saw (pod side and host side) stay with each sample */
        if (!json_object_get(sample, "mtu") && json_object_get(agent_doc, "mtu"))
            json_object_set_new(sample, "mtu", json_deep_copy(json_object_get(agent_doc, "mtu")));
        json_array_append_new(json_object_get(row, "samples"), sample);
    }
    json_array_foreach(json_object_get(agent_doc, "errors"), i, v)
    {
        const json_t *test = json_object_get(v, "test");
        if (!test) {
            report_group_error(rg, json_string_value(json_object_get(v, "error")));
            continue;
        }
        /* errors carry no direction; a client run with --reverse measured only reverse */
        bool reverse =
            json_is_true(json_object_get(v, "reverse")) ||
            json_is_true(json_object_get(json_object_get(agent_doc, "params"), "reverse"));
        json_t *row = named_row(pl, json_string_value(test), reverse);
        json_array_append_new(json_object_get(row, "errors"), json_deep_copy(v));
    }
    return 0;
}

void report_group_skip(struct report_group *rg, const char *reason)
{
    const struct report_place *pl = rg->place;

    json_t *e = json_pack("{s:s, s:s, s:s}", "scenario", pl->scenario, "placement", pl->placement,
                          "reason", reason);

    if (pl->ip_family)
        json_object_set_new(e, "ip_family", json_string(pl->ip_family));
    json_array_append_new(pl->rep->skipped, e);
}

void report_group_skip_test(struct report_group *rg, enum test_kind t, const char *reason)
{
    json_object_set_new(kind_row(rg->place, t, rg->reverse), "skip_reason", json_string(reason));
}

void report_group_error(struct report_group *rg, const char *message)
{
    const struct report_place *pl = rg->place;

    json_t *e = json_pack("{s:s, s:s, s:s}", "scenario", pl->scenario, "placement", pl->placement,
                          "error", message);

    if (pl->ip_family)
        json_object_set_new(e, "ip_family", json_string(pl->ip_family));
    json_array_append_new(pl->rep->errors, e);
}

void report_group_error_test(struct report_group *rg, enum test_kind t, const char *message)
{
    json_array_append_new(json_object_get(kind_row(rg->place, t, rg->reverse), "errors"),
                          json_pack("{s:s, s:s}", "test", testkind_name(t), "error", message));
}

/* The MTU one side of the first sample of (scenario, placement) saw, or 0. */
static json_int_t seen_mtu(const struct report *rep, const char *scenario, const char *placement,
                           const char *side)
{
    size_t i, j;
    const json_t *row, *smp;

    json_array_foreach(rep->rows, i, row)
    {
        const char *sc = json_string_value(json_object_get(row, "scenario"));
        const char *pl = json_string_value(json_object_get(row, "placement"));
        if (!sc || strcmp(sc, scenario) != 0 || (placement && (!pl || strcmp(pl, placement) != 0)))
            continue;
        json_array_foreach(json_object_get(row, "samples"), j, smp)
        {
            json_int_t v = json_integer_value(json_object_get(json_object_get(smp, "mtu"), side));
            if (v > 0)
                return v;
        }
    }
    return 0;
}

/* What the backend could not tell (a cluster's MTUs are not in its API objects), taken from
 * what the agents saw: metadata.mtu {pod, host} from the pod-to-pod and host-to-host servers,
 * nodes[].mtu from the host-network agents on each node (the server node runs every server,
 * the client node the other-node clients). Values the backend set stay. */
static void fill_mtus(struct report *rep)
{
    json_t *md = rep->metadata, *mtu = json_object_get(md, "mtu"), *n;
    json_int_t pod = seen_mtu(rep, "pod-to-pod", NULL, "server");
    json_int_t host = seen_mtu(rep, "host-to-host", NULL, "server");
    json_int_t client_host = seen_mtu(rep, "host-to-host", "other-node", "client");
    size_t i;

    if (!json_is_object(mtu) && (pod || host)) {
        mtu = json_object();
        json_object_set_new(md, "mtu", mtu);
    }
    if (pod && json_is_object(mtu) && !json_object_get(mtu, "pod"))
        json_object_set_new(mtu, "pod", json_integer(pod));
    if (host && json_is_object(mtu) && !json_object_get(mtu, "host"))
        json_object_set_new(mtu, "host", json_integer(host));
    json_array_foreach(json_object_get(md, "nodes"), i, n)
    {
        const char *role = json_string_value(json_object_get(n, "role"));
        json_int_t v = !role                         ? 0
                       : strcmp(role, "server") == 0 ? host
                       : strcmp(role, "client") == 0 ? client_host
                                                     : 0;
        if (v > 0 && json_is_object(n) && !json_object_get(n, "mtu"))
            json_object_set_new(n, "mtu", json_integer(v));
    }
}

void report_judge_noise(struct report *rep, double cv_pct)
{
    rep->noisy_cv_pct = cv_pct;
    report_lazy_forget(rep->lazy); /* the stored rows change below */
    for (size_t i = 0; i < json_array_size(rep->rows); i++) {
        json_t *v = json_array_get(rep->rows, i), *tree, *stored;
        if (!json_is_string(v)) {
            report_aggregate_judge_noise(v, cv_pct);
            continue;
        }
        tree = report_lazy_expand(v);
        if (!tree) /* text this report wrote, parsed with allocators that abort on failure */
            continue;
        report_aggregate_judge_noise(tree, cv_pct);
        if (i < rep->n_info)
            rep->info[i].noisy = json_is_true(json_object_get(tree, "noisy"));
        stored = report_lazy_store(tree, 0); /* it was text: text again, unless out of memory */
        json_array_set_new(rep->rows, i, stored ? stored : json_incref(tree));
        json_decref(tree);
    }
}

size_t report_rows_as_text(const struct report *rep)
{
    size_t n = 0;

    for (size_t i = 0; i < json_array_size(rep->rows); i++)
        n += json_is_string(json_array_get(rep->rows, i));
    return n;
}

int report_finish(struct report *rep, struct kp_err *err)
{
    size_t i;
    json_t *row;

    rows_as_trees(rep); /* rows are about to change */
    fill_mtus(rep);
    json_array_foreach(rep->rows, i, row)
    {
        if (report_aggregate_row(row, rep->noisy_cv_pct, err) != 0)
            return kp_err_prefix(err, "%s %s %s",
                                 json_string_value(json_object_get(row, "scenario")),
                                 json_string_value(json_object_get(row, "placement")),
                                 json_string_value(json_object_get(row, "test")));
    }
    report_load_annotate(rep->rows);            /* latency under load vs idle */
    outlier_annotate(rep->metadata, rep->rows); /* sweep verdicts; no-op otherwise */
    return 0;
}

static json_t *summary_json(const struct report *rep)
{
    size_t i, counts[4] = {0}, noisy = 0;
    static const char *const names[] = {"ok", "partial", "failed", "skipped"};
    json_t *o = json_object();

    for (i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        report_row_info(rep, i, &ri);
        for (size_t k = 0; k < 4; k++)
            if (ri.status && strcmp(ri.status, names[k]) == 0)
                counts[k]++;
        noisy += ri.noisy;
    }
    json_object_set_new(o, "rows", json_integer((json_int_t)json_array_size(rep->rows)));
    for (size_t k = 0; k < 4; k++)
        json_object_set_new(o, names[k], json_integer((json_int_t)counts[k]));
    json_object_set_new(o, "noisy", json_integer((json_int_t)noisy));
    return o;
}

static json_t *share(json_t *v)
{
    return json_incref(v);
}

static json_t *copy_of(json_t *v)
{
    return json_deep_copy(v);
}

/* The kperf.report/v1 document; deep copies the report's parts (for a caller that may modify
 * it) or shares them (to write it out: no second copy of every sample). */
static json_t *doc_of(const struct report *rep, bool copy)
{
    json_t *(*take)(json_t *) = copy ? copy_of : share;

    return json_pack("{s:s, s:o, s:{s:f}, s:o, s:o, s:o, s:o}", "schema", REPORT_SCHEMA, "metadata",
                     take(rep->metadata), "settings", "noisy_cv_pct", rep->noisy_cv_pct, "summary",
                     summary_json(rep), "results", take(rep->rows), "skipped", take(rep->skipped),
                     "errors", take(rep->errors));
}

json_t *report_to_json(const struct report *rep)
{
    json_t *doc = doc_of(rep, true), *rows = json_object_get(doc, "results");

    for (size_t i = 0; i < json_array_size(rows); i++) { /* packed parts expanded */
        json_t *full = report_row_unpacked(report_row(rep, i));
        json_array_set_new(rows, i, json_deep_copy(full));
        json_decref(full);
    }
    return doc;
}

/* report_from_json; with steal, the report takes doc's parts instead of copying them (doc is
 * then the caller's to drop, and must not be changed). */
static struct report *from_json(json_t *doc, bool steal, struct kp_err *err)
{
    json_t *(*take)(json_t *) = steal ? share : copy_of;
    struct report *rep;
    json_t *v;
    double cv;

    if (report_validate_doc(doc, err) != 0) {
        one_line(err);
        return NULL;
    }
    rep = report_new();
    json_decref(rep->metadata);
    rep->metadata = take(json_object_get(doc, "metadata"));
    json_decref(rep->rows);
    rep->rows = take(json_object_get(doc, "results"));
    if ((v = json_object_get(doc, "skipped"))) {
        json_decref(rep->skipped);
        rep->skipped = take(v);
    }
    if ((v = json_object_get(doc, "errors"))) {
        json_decref(rep->errors);
        rep->errors = take(v);
    }
    if (report_get_number(doc, "settings", "noisy_cv_pct", &cv))
        rep->noisy_cv_pct = cv;
    return rep;
}

struct report *report_from_json(const json_t *doc, struct kp_err *err)
{
    return from_json((json_t *)doc, false, err); /* copied: doc stays the caller's, unchanged */
}

/* The loader walks the top-level object and its results[] by hand and hands every other value
 * to jansson (JSON_DISABLE_EOF_CHECK parses one value and says where it ended). Each row is
 * validated and packed (report_pack.h) as soon as it is parsed, so memory holds the file's
 * bytes, the packed rows, and one row's full tree at a time, never the whole document as a
 * tree (15-20x the file for histograms). */
struct scan {
    const char *path;
    const char *b;
    size_t len, i;
    struct kp_err *err;
    struct report_row_info *info; /* ours: report_row_info of each row, by index */
    size_t n_info, cap_info;      /* entries used (the rest zero), allocated */
};

static void skip_ws(struct scan *sc)
{
    while (sc->i < sc->len && strchr(" \t\r\n", sc->b[sc->i]) && sc->b[sc->i])
        sc->i++;
}

static int line_at(const struct scan *sc, size_t pos)
{
    int line = 1;

    for (size_t k = 0; k < pos && k < sc->len; k++)
        line += sc->b[k] == '\n';
    return line;
}

static int scan_fail(struct scan *sc, const char *what)
{
    kp_err_set(sc->err, "%s: invalid JSON at line %d: %s", sc->path, line_at(sc, sc->i), what);
    return one_line(sc->err);
}

/* Parses one JSON value at the cursor and moves past it. NULL with err. */
static json_t *scan_value(struct scan *sc)
{
    json_error_t jerr;
    json_t *v;

    skip_ws(sc);
    v = json_loadb(sc->b + sc->i, sc->len - sc->i,
                   JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!v) {
        kp_err_set(sc->err, "%s: invalid JSON at line %d: %s", sc->path,
                   line_at(sc, sc->i) + jerr.line - 1, jerr.text);
        one_line(sc->err);
        return NULL;
    }
    sc->i += (size_t)jerr.position;
    return v;
}

/* Expects one of `chars` (after white space) and returns it, or 0 with err. */
static char scan_punct(struct scan *sc, const char *chars, const char *what)
{
    skip_ws(sc);
    if (sc->i < sc->len && sc->b[sc->i] && strchr(chars, sc->b[sc->i]))
        return sc->b[sc->i++];
    scan_fail(sc, what);
    return 0;
}

/* results[]: each row parsed, validated and packed in turn. */
static int scan_rows(struct scan *sc, json_t *rows)
{
    char c, path[48];
    json_t *stored;

    if (!scan_punct(sc, "[", "results: expected an array"))
        return -1;
    skip_ws(sc);
    if (sc->i < sc->len && sc->b[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    do {
        json_t *row = scan_value(sc);
        if (!row)
            return -1;
        snprintf(path, sizeof(path), "results[%zu]", json_array_size(rows));
        if (json_array_size(rows) >= REPORT_MAX_ENTRIES) {
            json_decref(row);
            return kp_err_set(sc->err, "%s: more than %d results", sc->path, REPORT_MAX_ENTRIES);
        }
        if (report_validate_row(row, path, sc->err) != 0) {
            json_decref(row);
            one_line(sc->err);
            return kp_err_prefix(sc->err, "%s", sc->path);
        }
        /* as text until read, unless mostly packed parts (report_lazy.h) */
        stored = report_lazy_store(row, report_pack_row(row));
        if (stored) {
            size_t at = json_array_size(rows);
            if (at >= sc->cap_info) { /* entries of rows kept as trees stay zero */
                size_t cap = sc->cap_info ? 2 * sc->cap_info : 64;
                while (cap <= at)
                    cap *= 2;
                sc->info = kp_xrealloc(sc->info, cap * sizeof(*sc->info));
                memset(&sc->info[sc->cap_info], 0, (cap - sc->cap_info) * sizeof(*sc->info));
                sc->cap_info = cap;
            }
            info_copy(row, &sc->info[at]);
            sc->n_info = at + 1;
        }
        json_array_append_new(rows, stored ? stored : json_incref(row));
        json_decref(row);
    } while ((c = scan_punct(sc, ",]", "expected ',' or ']' after a result")) == ',');
    return c ? 0 : -1;
}

/* The whole document: {key: value, ...} with "results" walked by scan_rows. The top-level
 * fields (all but results) are then validated as a document with no rows. */
static struct report *scan_report(struct scan *sc)
{
    json_t *top = json_object(), *rows = NULL, *key;
    struct report *rep = NULL;
    char c;

    skip_ws(sc);
    if (sc->i >= sc->len || sc->b[sc->i] != '{') {
        kp_err_set(sc->err, "%s: expected a JSON object, not a kperf report", sc->path);
        goto out;
    }
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->len && sc->b[sc->i] == '}') {
        sc->i++;
        goto end;
    }
    do {
        json_t *v;
        skip_ws(sc);
        if (sc->i >= sc->len || sc->b[sc->i] != '"') {
            scan_fail(sc, "expected a string as object key");
            goto out;
        }
        if (!(key = scan_value(sc)))
            goto out;
        if (json_object_get(top, json_string_value(key)) ||
            (rows && strcmp(json_string_value(key), "results") == 0)) {
            kp_err_set(sc->err, "%s: invalid JSON at line %d: duplicate object key", sc->path,
                       line_at(sc, sc->i));
            json_decref(key);
            goto out;
        }
        if (!scan_punct(sc, ":", "':' expected")) {
            json_decref(key);
            goto out;
        }
        if (strcmp(json_string_value(key), "results") == 0) {
            rows = json_array();
            json_decref(key);
            if (scan_rows(sc, rows) != 0)
                goto out;
            continue;
        }
        v = scan_value(sc);
        if (!v) {
            json_decref(key);
            goto out;
        }
        json_object_set_new(top, json_string_value(key), v);
        json_decref(key);
    } while ((c = scan_punct(sc, ",}", "expected ',' or '}'")) == ',');
    if (!c)
        goto out;
end:
    skip_ws(sc);
    if (sc->i < sc->len) {
        scan_fail(sc, "end of file expected");
        goto out;
    }
    /* the document without its rows (already checked one by one) */
    if (rows)
        json_object_set_new(top, "results", json_array());
    rep = from_json(top, true, sc->err);
    if (!rep)
        kp_err_prefix(sc->err, "%s", sc->path);
    if (rep) {
        json_decref(rep->rows);
        rep->rows = rows;
        rows = NULL;
        rep->info = sc->info;
        rep->n_info = sc->n_info;
        sc->info = NULL;
        sc->n_info = sc->cap_info = 0;
    }
out:
    json_decref(rows);
    json_decref(top);
    return rep;
}

struct report *report_load(const char *path, struct kp_err *err)
{
    struct scan sc = {.path = path, .err = err};
    struct report *rep;
    char *buf;

    if (report_file_read(path, REPORT_MAX_FILE_BYTES, &buf, &sc.len, err) != 0)
        return NULL;
    if (sc.len == 0) {
        free(buf);
        kp_err_set(err, "%s: empty file, not a kperf report", path);
        return NULL;
    }
    sc.b = buf;
    rep = scan_report(&sc);
    free(buf);
    infos_free(sc.info, sc.cap_info); /* NULL unless the load failed */
    if (rep) /* a file from before URLs lost their user-info: it is not rendered again */
        urlcred_redact_strings(json_object_get(report_metadata(rep), "arguments"));
    return rep;
}

/* The report as JSON_INDENT(2) would print report_to_json's document, written one row at a
 * time: each row is expanded (report_pack.h) just before it is written and dropped after, so
 * the output costs one row's tree, not a copy of the report. Full precision: samples stay
 * verbatim. Returns 0 or -1. */
static int write_json(const struct report *rep, FILE *out)
{
    json_t *doc = doc_of(rep, false), *v, *row;
    const char *key;
    bool first = true;
    int rc = 0;

    fputc('{', out);
    json_object_foreach(doc, key, v)
    {
        json_t *k = json_string(key);
        fputs(first ? "\n  " : ",\n  ", out);
        first = false;
        rc |= report_dump_at(k, 1, out);
        json_decref(k);
        fputs(": ", out);
        if (strcmp(key, "results") != 0 || json_array_size(v) == 0) {
            rc |= report_dump_at(v, 1, out);
            continue;
        }
        fputc('[', out);
        for (size_t i = 0; i < json_array_size(v); i++) {
            row = report_row_unpacked(report_row(rep, i));
            fputs(i ? ",\n    " : "\n    ", out);
            rc |= report_dump_at(row, 2, out);
            json_decref(row);
        }
        fputs("\n  ]", out);
    }
    fputs(first ? "}\n" : "\n}\n", out);
    json_decref(doc);
    return rc;
}

int report_render(const struct report *rep, enum report_format fmt, FILE *out, struct kp_err *err)
{
    int rc = 0;

    switch (fmt) {
    case REPORT_TABLE:
        render_text_table(rep, out);
        break;
    case REPORT_MARKDOWN:
        render_text_markdown(rep, out);
        break;
    case REPORT_CSV:
        render_text_csv(rep, out);
        break;
    case REPORT_HTML:
        render_html(rep, out);
        break;
    case REPORT_OPENMETRICS:
        render_openmetrics(rep, out);
        break;
    case REPORT_JSON:
        rc = write_json(rep, out);
        break;
    }
    /* flushed here: a full disk or a closed pipe often shows only when the buffer goes out */
    if (rc != 0 || fflush(out) != 0 || ferror(out))
        return kp_err_set(err, "cannot write the report: %s", strerror(errno ? errno : EIO));
    return 0;
}

/* Writes one format to dir/name through dir/.name.tmp and rename. */
static int write_one(const struct report *rep, const char *dir, const char *name,
                     enum report_format fmt, struct kp_err *err)
{
    char *path = kp_xasprintf("%s/%s", dir, name);     /* ours */
    char *tmp = kp_xasprintf("%s/.%s.tmp", dir, name); /* ours */
    FILE *f = NULL;
    int rc = -1;

    f = fopen(tmp, "w");
    if (!f) {
        kp_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (report_render(rep, fmt, f, err) != 0) {
        kp_err_prefix(err, "%s", tmp);
        goto out;
    }
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        kp_err_set(err, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (fclose(f) != 0) {
        f = NULL;
        kp_err_set(err, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    f = NULL;
    if (rename(tmp, path) != 0) {
        kp_err_set(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (f)
        fclose(f);
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    free(path);
    return rc;
}

int report_write_dir(const struct report *rep, const char *dir, struct kp_err *err)
{
    static const struct {
        const char *name;
        enum report_format fmt;
    } files[] = {{"report.json", REPORT_JSON},
                 {"report.md", REPORT_MARKDOWN},
                 {"report.csv", REPORT_CSV},
                 {"report.html", REPORT_HTML}};

    if (!*dir || report_make_dirs(dir, err) != 0)
        return *dir ? -1 : kp_err_set(err, "cannot create directory ''");
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (write_one(rep, dir, files[i].name, files[i].fmt, err) != 0)
            return -1;
    return 0;
}

size_t report_row_count(const struct report *rep)
{
    return json_array_size(rep->rows);
}

const json_t *report_row(const struct report *rep, size_t i)
{
    return report_lazy_row(rep->lazy, rep->rows, i);
}

void report_row_info(const struct report *rep, size_t i, struct report_row_info *out)
{
    const json_t *v = json_array_get(rep->rows, i);

    if (json_is_string(v) && i < rep->n_info)
        *out = rep->info[i];
    else
        info_of(v, out);
}

const json_t *report_skipped(const struct report *rep)
{
    return rep->skipped;
}

const json_t *report_errors(const struct report *rep)
{
    return rep->errors;
}

bool report_group_ci_narrow_enough(const struct report_group *rg, enum test_kind t,
                                   double rel_half_width_pct)
{
    const json_t *row = rg->place->rows[rg->reverse][t];
    double *v;
    size_t n;
    bool narrow;

    if (!row)
        return false;
    n = report_sample_values(row, testkind_get(t)->latency ? "ops_per_sec" : "throughput_mbps",
                             NULL, &v);
    narrow = stats_ci_narrow_enough(v, n, rel_half_width_pct);
    free(v);
    return narrow;
}

size_t report_ok_count(const struct report *rep)
{
    size_t n = 0;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        report_row_info(rep, i, &ri);
        n += ri.n_samples > 0;
    }
    return n;
}

size_t report_error_count(const struct report *rep)
{
    size_t n = json_array_size(rep->errors);

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        report_row_info(rep, i, &ri);
        n += ri.n_errors > 0;
    }
    return n;
}
