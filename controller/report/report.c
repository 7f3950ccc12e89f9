/* SPDX-License-Identifier: Apache-2.0 */
/* report.c - the report model: its life, metadata, row access, report_finish and noise
 * judging, JSON in and out, and report_write_dir. The runner's groups and the rows they fill
 * are report_group.c's, the file loader report_scan.c's, the format switch report_render.c's;
 * aggregation lives in report_aggregate.c, validation in report_validate.c. */
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
#include "base/rowkey.h"
#include "base/safefile.h"
#include "base/testkind.h"
#include "controller/report/outlier.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_file.h"
#include "controller/report/report_int.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_load.h"
#include "controller/report/report_pack.h"
#include "controller/report/report_validate.h"
#include "controller/report/stats.h"

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
void report_info_copy(const json_t *row, struct report_row_info *out)
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

void report_infos_free(struct report_row_info *info, size_t n)
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
void report_rows_as_trees(struct report *rep)
{
    if (rep->n_info == 0)
        return; /* none stored: a report built by the runner */
    report_lazy_expand_all(rep->lazy, rep->rows);
    report_infos_free(rep->info, rep->n_info);
    rep->info = NULL;
    rep->n_info = 0;
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
    report_infos_free(rep->info, rep->n_info);
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

/* The MTU one side of the first sample of (scenario, placement) saw, or 0. */
static json_int_t seen_mtu(const struct report *rep, const char *scenario, const char *placement,
                           const char *side)
{
    size_t i, j;
    const json_t *row, *smp;

    json_array_foreach(rep->rows, i, row)
    {
        struct rowkey k; /* any test, direction and family of the place */
        rowkey_of(row, &k);
        if (!k.scenario || strcmp(k.scenario, scenario) != 0 ||
            (placement && (!k.placement || strcmp(k.placement, placement) != 0)))
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
    json_int_t pod = seen_mtu(rep, ROWKEY_SCENARIO_POD_TO_POD, NULL, "server");
    json_int_t host = seen_mtu(rep, ROWKEY_SCENARIO_HOST_TO_HOST, NULL, "server");
    json_int_t client_host =
        seen_mtu(rep, ROWKEY_SCENARIO_HOST_TO_HOST, ROWKEY_PLACEMENT_OTHER_NODE, "client");
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

    report_rows_as_trees(rep); /* rows are about to change */
    fill_mtus(rep);
    json_array_foreach(rep->rows, i, row)
    {
        struct rowkey k;
        char label[256];
        if (report_aggregate_row(row, rep->noisy_cv_pct, err) != 0) {
            rowkey_of(row, &k);
            return kp_err_prefix(err, "%s", rowkey_label(&k, label, sizeof(label)));
        }
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
        report_one_line(err);
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

/* Error messages may quote names and values from the input; keep them on one line whatever
 * the input holds (a JSON key can contain a newline). */
int report_one_line(struct kp_err *err)
{
    if (err)
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
    return -1;
}

struct report *report_adopt(json_t *top, json_t *rows, struct report_row_info *info, size_t n_info,
                            struct kp_err *err)
{
    struct report *rep = from_json(top, true, err);

    if (!rep) {
        json_decref(rows);
        report_infos_free(info, n_info);
        return NULL;
    }
    json_decref(rep->rows);
    rep->rows = rows ? rows : json_array();
    rep->info = info;
    rep->n_info = n_info;
    return rep;
}

json_t *report_doc_shared(const struct report *rep)
{
    return doc_of(rep, false);
}

struct report *report_from_json(const json_t *doc, struct kp_err *err)
{
    return from_json((json_t *)doc, false, err); /* copied: doc stays the caller's, unchanged */
}

/* Writes one format to dir/name, all or nothing, through the safe writer (base/safefile.h). */
static int write_one(const struct report *rep, const char *dir, const char *name,
                     enum report_format fmt, struct kp_err *err)
{
    char *path = kp_xasprintf("%s/%s", dir, name); /* ours */
    struct safefile *sf = NULL;
    int rc = -1;

    if (safefile_begin(path, NULL, &sf, err) != 0)
        goto out;
    if (report_render(rep, fmt, safefile_stream(sf), err) != 0) {
        kp_err_prefix(err, "%s", path);
        goto out;
    }
    rc = safefile_commit(sf, err);
out:
    safefile_close(sf);
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
