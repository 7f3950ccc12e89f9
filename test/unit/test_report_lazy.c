/* SPDX-License-Identifier: Apache-2.0 */
/* test_report_lazy.c - rows kept as text and parsed on demand (report_lazy.h): a stored row
 * reads back as the same tree; rows that are mostly packed parts stay trees; the cache keeps
 * the rows a caller holds (up to REPORT_LAZY_SLOTS - 1 others) and evicts the least recently
 * used; expanding all keeps the pointers given out. Through report_load: a loaded report's
 * rows, row infos and outputs are those of the report it was written from, also while many
 * rows are held at once and after report_finish changes the rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_err.h"
#include "controller/report/report.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_pack.h"
#include "test/unit/report_fixture.h"

#define NROWS 150 /* more than REPORT_LAZY_SLOTS: reading them all evicts */

/* A row-like object whose content depends on i (reals at full precision, nesting, escapes). */
static json_t *some_row(size_t i)
{
    char name[32];

    snprintf(name, sizeof(name), "sc\"%zu\"\n\xc3\xa9", i);
    return json_pack("{s:s, s:I, s:f, s:b, s:{s:[f, f, n], s:{s:i}}, s:[]}", "scenario", name, "n",
                     (json_int_t)i, "x", 1.0 / (double)(i + 3), "reverse", (int)(i % 2), "agg", "v",
                     0.1 * (double)i, 1e-300, "deep", "k", (int)i, "samples");
}

/* originals[i] and their stored forms. */
static void make_rows(json_t **originals, json_t **stored)
{
    *originals = json_array();
    *stored = json_array();
    for (size_t i = 0; i < NROWS; i++) {
        json_t *r = some_row(i), *s = report_lazy_store(r, 0);
        assert_true(json_is_string(s));
        json_array_append_new(*originals, r);
        json_array_append_new(*stored, s);
    }
}

static void test_stored_rows_read_back_the_same(void **state)
{
    json_t *orig, *rows;
    struct report_lazy *c = report_lazy_new();
    (void)state;

    make_rows(&orig, &rows);
    for (int pass = 0; pass < 2; pass++) /* in order, then in a scattered order */
        for (size_t k = 0; k < NROWS; k++) {
            size_t i = pass ? (k * 37) % NROWS : k;
            const json_t *t = report_lazy_row(c, rows, i);
            char *a = json_dumps(t, JSON_COMPACT), *b;
            assert_true(json_equal((json_t *)t, json_array_get(orig, i)));
            b = json_dumps(json_array_get(orig, i), JSON_COMPACT); /* same order and digits */
            assert_string_equal(a, b);
            free(a);
            free(b);
        }
    assert_null(report_lazy_row(c, rows, NROWS)); /* out of range */
    {
        json_t *e = report_lazy_expand(json_array_get(rows, 3)), *o = json_array_get(orig, 3);
        assert_true(json_equal(e, o));
        json_decref(e);
        e = report_lazy_expand(o); /* a tree: itself */
        assert_ptr_equal(e, o);
        json_decref(e);
    }
    report_lazy_free(c);
    json_decref(orig);
    json_decref(rows);
}

static void test_tree_rows_are_returned_as_they_are(void **state)
{
    json_t *rows = json_array(), *r = some_row(1);
    struct report_lazy *c = report_lazy_new();
    (void)state;

    json_array_append(rows, r);
    assert_ptr_equal(report_lazy_row(c, rows, 0), r);
    report_lazy_expand_all(c, rows);
    assert_ptr_equal(json_array_get(rows, 0), r);
    json_decref(r);
    json_decref(rows);
    report_lazy_free(c);
}

static void test_mostly_packed_rows_stay_trees(void **state)
{
    json_t *r = some_row(7);
    char *text = json_dumps(r, JSON_COMPACT);
    size_t n = strlen(text);
    json_t *s;
    (void)state;

    /* packed parts 4x the rest or more: kept as a tree */
    assert_null(report_lazy_store(r, n * 4 / 5 + 1));
    s = report_lazy_store(r, n * 4 / 5 - 1); /* the rest just over a quarter: stored */
    assert_true(json_is_string(s));
    json_decref(s);
    free(text);
    json_decref(r);
}

static void test_held_rows_stay_valid_and_lru_is_evicted(void **state)
{
    json_t *orig, *rows;
    const json_t *held[REPORT_LAZY_SLOTS], *first, *again;
    struct report_lazy *c = report_lazy_new();
    (void)state;

    make_rows(&orig, &rows);
    /* hold SLOTS - 1 rows, then read one more: all held ones still valid (ASan checks) */
    for (size_t i = 0; i < REPORT_LAZY_SLOTS - 1; i++)
        held[i] = report_lazy_row(c, rows, i);
    held[REPORT_LAZY_SLOTS - 1] = report_lazy_row(c, rows, 100);
    for (size_t i = 0; i < REPORT_LAZY_SLOTS - 1; i++)
        assert_true(json_equal((json_t *)held[i], json_array_get(orig, i)));
    /* a row read again is the cached tree, not a new parse */
    first = report_lazy_row(c, rows, 0);
    assert_ptr_equal(first, held[0]);
    /* slots now hold rows 0..62 and 100, row 0 the most recent: reading row 101 evicts row 1
     * (the least recently used), so row 0 stays */
    report_lazy_row(c, rows, 101);
    again = report_lazy_row(c, rows, 0);
    assert_ptr_equal(again, first);
    /* expanding all keeps the trees given out: they become the rows */
    report_lazy_expand_all(c, rows);
    assert_ptr_equal(json_array_get(rows, 0), first);
    assert_ptr_equal(json_array_get(rows, 100), held[REPORT_LAZY_SLOTS - 1]);
    for (size_t i = 0; i < NROWS; i++) {
        assert_true(json_is_object(json_array_get(rows, i)));
        assert_true(json_equal(json_array_get(rows, i), json_array_get(orig, i)));
    }
    report_lazy_free(c);
    json_decref(orig);
    json_decref(rows);
}

/* A report of NROWS scalar-heavy rows (throughput samples), one scenario each, finished under
 * the noisy threshold cv_pct. */
static struct report *build_at(double cv_pct)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};

    for (size_t i = 0; i < NROWS; i++) {
        char sc[32];
        json_t *results = json_array(), *doc;
        snprintf(sc, sizeof(sc), "scenario-%zu", i);
        json_array_append_new(results, fx_stream_sample("TCP_STREAM", 0, false, 9000 + i, 1));
        json_array_append_new(results, fx_stream_sample("TCP_STREAM", 1, false, 9100 + i, 2));
        doc = fx_agent_doc(results, NULL);
        if (report_group_add_doc(report_group_get(rep, sc, "same-node", false), doc, &err) != 0)
            fail_msg("%s", kp_err_msg(&err));
        json_decref(doc);
        if (i % 10 == 0)
            report_group_error_test(report_group_get(rep, sc, "same-node", false), TEST_UDP_RR,
                                    "agent crashed");
    }
    report_set_noisy_cv_pct(rep, cv_pct);
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

static struct report *build(void)
{
    return build_at(REPORT_DEFAULT_CV_PCT);
}

/* The report rendered in fmt, as a string (caller frees). */
static char *rendered(const struct report *rep, enum report_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kp_err err = {{0}};

    assert_non_null(f);
    assert_int_equal(report_render(rep, fmt, f, &err), 0);
    fclose(f);
    return buf;
}

/* rep as `kperf run` writes it, read back by report_load (caller frees) */
static struct report *written_and_loaded(const struct report *rep)
{
    struct kp_err err = {{0}};
    char path[] = "/tmp/kperf-lazy-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    struct report *back;

    assert_non_null(f);
    assert_int_equal(report_render(rep, REPORT_JSON, f, &err), 0);
    fclose(f);
    back = report_load(path, &err);
    unlink(path);
    assert_non_null(back);
    return back;
}

/* a and b render the same in fmt */
static void assert_same_output(const struct report *a, const struct report *b,
                               enum report_format fmt)
{
    char *ta = rendered(a, fmt), *tb = rendered(b, fmt);

    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

static void assert_same_info(const struct report_row_info *a, const struct report_row_info *b)
{
    assert_string_equal(a->scenario, b->scenario);
    assert_string_equal(a->placement, b->placement);
    assert_string_equal(a->test, b->test);
    assert_string_equal(a->kind, b->kind);
    assert_string_equal(a->status, b->status);
    assert_true((a->ip_family == NULL) == (b->ip_family == NULL));
    assert_true((a->skip_reason == NULL) == (b->skip_reason == NULL));
    assert_int_equal(a->reverse, b->reverse);
    assert_int_equal(a->noisy, b->noisy);
    assert_int_equal(a->n_samples, b->n_samples);
    assert_int_equal(a->n_errors, b->n_errors);
}

static void test_loaded_report_reads_as_written(void **state)
{
    struct report *rep = build(), *back;
    struct kp_err err = {{0}};
    const json_t *held[REPORT_LAZY_SLOTS - 1];
    static const enum report_format fmts[] = {REPORT_JSON,  REPORT_MARKDOWN, REPORT_CSV,
                                              REPORT_TABLE, REPORT_HTML,     REPORT_OPENMETRICS};
    (void)state;

    { /* these rows are mostly scalars: report_load keeps them as text */
        json_t *row = json_deep_copy(report_row(rep, 0)), *stored;
        stored = report_lazy_store(row, report_pack_row(row));
        assert_true(json_is_string(stored));
        json_decref(stored);
        json_decref(row);
    }
    back = written_and_loaded(rep);
    assert_int_equal(report_row_count(back), report_row_count(rep));
    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info a, b;
        json_t *full = report_row_unpacked(report_row(back, i));
        assert_true(json_equal(full, (json_t *)report_row(rep, i)));
        json_decref(full);
        report_row_info(rep, i, &a);
        report_row_info(back, i, &b);
        assert_same_info(&a, &b);
    }
    /* many rows of the loaded report held at once, then more read: the held ones are intact */
    for (size_t i = 0; i < REPORT_LAZY_SLOTS - 1; i++)
        held[i] = report_row(back, i);
    assert_non_null(report_row(back, NROWS - 1));
    for (size_t i = 0; i < REPORT_LAZY_SLOTS - 1; i++) {
        json_t *full = report_row_unpacked(held[i]);
        assert_true(json_equal(full, (json_t *)report_row(rep, i)));
        json_decref(full);
    }
    for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) /* every output the same */
        assert_same_output(rep, back, fmts[k]);
    assert_int_equal(report_ok_count(back), report_ok_count(rep));
    assert_int_equal(report_error_count(back), report_error_count(rep));
    /* changing the rows (report_finish) turns them back into trees: same result */
    assert_int_equal(report_finish(back, &err), 0);
    assert_same_output(rep, back, REPORT_JSON);
    report_free(back);
    report_free(rep);
}

/* kperf report --noisy-cv on a loaded report: the rows are judged again one at a time and stay
 * text, and the result is the report finished under that threshold from the start. */
static void test_noise_judged_again_rows_stay_text(void **state)
{
    struct report *rep = build(), *strict, *back;
    size_t noisy = 0;
    (void)state;

    back = written_and_loaded(rep);
    assert_int_equal(report_rows_as_text(back), report_row_count(back)); /* all scalars */
    for (size_t i = 0; i < report_row_count(back); i++) { /* none noisy at the default */
        struct report_row_info ri;
        report_row_info(back, i, &ri);
        noisy += ri.noisy;
    }
    assert_int_equal(noisy, 0);
    /* the samples differ by ~1%: at 0.1% every two-sample row is noisy */
    report_judge_noise(back, 0.1);
    assert_int_equal(report_rows_as_text(back), report_row_count(back));
    strict = build_at(0.1);
    for (size_t i = 0; i < report_row_count(back); i++) {
        struct report_row_info a, b;
        report_row_info(strict, i, &a);
        report_row_info(back, i, &b);
        assert_same_info(&a, &b);
        noisy += b.noisy;
    }
    assert_int_equal(noisy, NROWS);
    assert_same_output(strict, back, REPORT_JSON);
    report_free(back);
    report_free(strict);
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stored_rows_read_back_the_same),
        cmocka_unit_test(test_tree_rows_are_returned_as_they_are),
        cmocka_unit_test(test_mostly_packed_rows_stay_trees),
        cmocka_unit_test(test_held_rows_stay_valid_and_lru_is_evicted),
        cmocka_unit_test(test_loaded_report_reads_as_written),
        cmocka_unit_test(test_noise_judged_again_rows_stay_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
