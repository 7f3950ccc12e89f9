/* SPDX-License-Identifier: Apache-2.0 */
/* report_int.h - the report object, shared by the files of report.h only: report.c (the model:
 * life, metadata, finish, JSON in and out, row access), report_group.c (the runner's groups and
 * the rows they fill), report_scan.c (the file loader) and report_render.c (the formats). Nobody
 * else includes this. */
#ifndef KPERF_REPORT_REPORT_INT_H
#define KPERF_REPORT_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "base/testkind.h"
#include "controller/report/report.h"

struct report_lazy;

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

/* Before rows change: every row stored as text becomes its tree again (report_lazy.h). */
void report_rows_as_trees(struct report *rep);

/* The report_row_info of row with its strings copied (for a row about to be stored as text);
 * report_infos_free frees n entries and the array (NULL is a no-op). */
void report_info_copy(const json_t *row, struct report_row_info *out);
void report_infos_free(struct report_row_info *info, size_t n);

/* Makes err's message one line (names and values quoted from the input may hold line breaks).
 * Returns -1. */
int report_one_line(struct kp_err *err);

/* A report of a loaded document: top is the document without its rows (validated here; the
 * report shares its parts, so the caller drops it and must not change it), rows the rows
 * checked one by one (taken), info the report_row_info of the rows kept as text (n_info
 * entries; taken). Returns the report or NULL with err (rows and info then freed). */
struct report *report_adopt(json_t *top, json_t *rows, struct report_row_info *info, size_t n_info,
                            struct kp_err *err);

/* The kperf.report/v1 document sharing the report's parts (new reference to a new object whose
 * members are the report's: do not change it; rows may be text, read them with report_row). */
json_t *report_doc_shared(const struct report *rep);

#endif
