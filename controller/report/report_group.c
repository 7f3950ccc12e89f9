/* SPDX-License-Identifier: Apache-2.0 */
/* report_group.c - the runner's side of the report (report.h, report_group_*): a group is a
 * place (scenario, placement, family) in one direction; its rows are found by their key
 * (base/rowkey.h) once, then addressed by test kind, and filled with agent documents, skips
 * and errors. Aggregation and the rest of the model are report.c's. */
#include "controller/report/report.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/result.h"
#include "base/rowkey.h"
#include "base/testkind.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_int.h"
#include "controller/report/stats.h"

/* The report's row with key k (base/rowkey.h: a row without ip_family is IPv4's), or NULL.
 * For a place made after rows were loaded (report_from_json), and for error entries that name
 * no known test. */
static json_t *find_row(const struct report *rep, const struct rowkey *k)
{
    struct rowkey rk;
    size_t i;
    json_t *row;

    json_array_foreach(rep->rows, i, row)
    {
        rowkey_of(row, &rk);
        if (rowkey_equal(&rk, k))
            return row;
    }
    return NULL;
}

/* The key of test `test` of place pl in one direction. */
static void place_key(const struct report_place *pl, const char *test, bool reverse,
                      struct rowkey *k)
{
    rowkey_make(k, pl->scenario, pl->placement, test, reverse, pl->ip_family);
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
    struct rowkey k;
    json_t *row;

    if (tk)
        return kind_row(pl, tk->kind, reverse);
    place_key(pl, test, reverse, &k);
    row = find_row(pl->rep, &k);
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
    struct rowkey want, k;

    report_rows_as_trees(rep); /* rows are about to change */
    /* a place is a row key without the test: same rule for a missing ip_family (rowkey.h) */
    rowkey_make(&want, scenario, placement, "", false, ip_family);
    for (size_t i = 0; i < rep->n_places; i++) {
        pl = rep->places[i];
        place_key(pl, "", false, &k);
        if (rowkey_equal(&k, &want))
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
        for (int t = 0; t < TEST_COUNT; t++) { /* rows a loaded report already has */
            place_key(pl, testkind_name(t), d, &k);
            pl->rows[d][t] = find_row(rep, &k);
        }
    }
    rep->places = kp_xrealloc(rep->places, (rep->n_places + 1) * sizeof(*rep->places));
    rep->places[rep->n_places++] = pl;
    return &pl->dir[reverse];
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
        return report_one_line(err);
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

void report_group_set_capacity(struct report_group *rg, enum test_kind t, json_t *capacity)
{
    json_object_set_new(kind_row(rg->place, t, rg->reverse), "capacity", capacity);
}

void report_group_error(struct report_group *rg, const char *message)
{
    report_group_error_cause(rg, message, NULL);
}

void report_group_error_test(struct report_group *rg, enum test_kind t, const char *message)
{
    report_group_error_test_cause(rg, t, message, NULL);
}

void report_group_error_cause(struct report_group *rg, const char *message, const char *cause)
{
    const struct report_place *pl = rg->place;

    json_t *e = json_pack("{s:s, s:s, s:s}", "scenario", pl->scenario, "placement", pl->placement,
                          "error", message);

    if (pl->ip_family)
        json_object_set_new(e, "ip_family", json_string(pl->ip_family));
    if (cause)
        json_object_set_new(e, "cause", json_string(cause));
    json_array_append_new(pl->rep->errors, e);
}

void report_group_tag_cause(struct report_group *rg, enum test_kind t, const char *cause)
{
    const json_t *row = rg->place->rows[rg->reverse][t];
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(row, "errors"), i, e)
    {
        if (!json_object_get(e, "cause"))
            json_object_set_new(e, "cause", json_string(cause));
    }
}

void report_group_error_test_cause(struct report_group *rg, enum test_kind t, const char *message,
                                   const char *cause)
{
    json_t *e = json_pack("{s:s, s:s}", "test", testkind_name(t), "error", message);

    if (cause)
        json_object_set_new(e, "cause", json_string(cause));
    json_array_append_new(json_object_get(kind_row(rg->place, t, rg->reverse), "errors"), e);
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
