/* SPDX-License-Identifier: Apache-2.0 */
/* test_compare_evidence.c - compare and the rows' counters (evidence.h): a row whose drop,
 * shaping or overflow counters moved in NEW keeps its verdict with the counters listed
 * (counters_moved); with strict_evidence it gets "cannot judge", counts as neither regression
 * nor improvement and is counted by compare_refused_count; a clean pair is judged as before.
 * A path MTU black hole on either side (the row's path_mtu) is marked and refused the same way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/report/evidence.h"
#include "test/unit/compare_fixture.h"

/* rep rendered as JSON, each TCP_STREAM row changed by edit, loaded back. Takes rep. */
static struct report *edited(struct report *rep, void (*edit)(json_t *row))
{
    char path[] = "/tmp/kperf-test-evidence-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    struct kp_err err = {{0}};
    json_t *doc, *row;
    size_t i;
    struct report *out;

    assert_non_null(f);
    assert_int_equal(report_render(rep, REPORT_JSON, f, &err), 0);
    fclose(f);
    report_free(rep);
    doc = json_load_file(path, 0, NULL);
    assert_non_null(doc);
    json_array_foreach(json_object_get(doc, "results"), i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "test")), "TCP_STREAM") == 0)
            edit(row);
    }
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_decref(doc);
    out = report_load(path, &err);
    if (!out)
        fail_msg("%s", kp_err_msg(&err));
    unlink(path);
    return out;
}

/* A qdisc counter moved on the client side of every sample (and the row's evidence made
 * again). */
static void qdisc_moved(json_t *row)
{
    json_t *s;
    size_t k;

    json_array_foreach(json_object_get(row, "samples"), k, s)
    {
        json_object_set_new(s, "counters",
                            json_pack("{s:{s:i, s:{s:i}}}", "client", "v", 1, "deltas",
                                      "qdisc.eth0.overlimits", 900));
    }
    json_object_set_new(row, "evidence", evidence_of_row(row));
}

/* The row's path a path MTU black hole (its path_mtu as the probe gives it). */
static void pmtu_black_hole(json_t *row)
{
    json_object_set_new(row, "path_mtu",
                        json_pack("{s:s, s:i, s:i, s:i, s:i, s:b}", "verdict", "black-hole", "path",
                                  1396, "client", 1500, "server", 1500, "icmp", 0, "tcp_full_mss",
                                  0));
}

static struct report *shaped(struct report *rep)
{
    return edited(rep, qdisc_moved);
}

static struct report *black_hole(struct report *rep)
{
    return edited(rep, pmtu_black_hole);
}

/* The text table of cmp (caller frees). */
static char *table_of(const struct compare *cmp)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kp_err err = {{0}};

    assert_non_null(f);
    assert_int_equal(compare_render(cmp, REPORT_TABLE, f, &err), 0);
    fclose(f);
    return buf;
}

static const struct spec base_spec = {
    .seed = 1, .samples = 5, .rr_median_us = 50, .mbps = 9000, .mbps_sd_pct = 1};

static void test_compare_evidence_marks_and_strict_refuses(void **state)
{
    struct spec slow = base_spec;
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *cmp;
    struct report *rb, *rn;
    json_t *doc, *row;
    size_t i, marked = 0;
    (void)state;

    slow.seed = 2;
    slow.mbps = 4500; /* a regression, explained by the bucket */
    rb = make(&base_spec, NULL);
    rn = shaped(make(&slow, NULL));
    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    assert_true(compare_regression_count(cmp) >= 1);
    assert_int_equal(compare_refused_count(cmp), 0);
    doc = compare_to_json(cmp);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        const json_t *m = json_array_get(json_object_get(row, "counters_moved"), 0);
        if (!m)
            continue;
        marked++;
        assert_string_equal(json_string_value(json_object_get(row, "test")), "TCP_STREAM");
        assert_string_equal(json_string_value(json_object_get(m, "counter")),
                            "qdisc.eth0.overlimits");
        assert_string_equal(json_string_value(json_object_get(m, "report")), "new");
        assert_string_equal(json_string_value(json_object_get(row, "verdict")), "regression");
    }
    assert_int_equal(marked, 1);
    json_decref(doc);
    compare_free(cmp);

    o.strict_evidence = true;
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    assert_int_equal(compare_refused_count(cmp), 1);
    assert_int_equal(compare_regression_count(cmp), 0); /* TCP_RR is unchanged */
    doc = compare_to_json(cmp);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        const json_t *m;
        size_t k;
        if (!json_object_get(row, "counters_moved"))
            continue;
        assert_string_equal(json_string_value(json_object_get(row, "verdict")), "cannot judge");
        json_array_foreach(json_object_get(row, "metrics"), k, m)
        {
            assert_string_equal(json_string_value(json_object_get(m, "verdict")), "cannot judge");
        }
    }
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "summary"), "not_judged")), 1);
    json_decref(doc);
    compare_free(cmp);

    cmp = compare_reports(rb, rb, &o, &err); /* clean on both sides: judged */
    assert_int_equal(compare_refused_count(cmp), 0);
    compare_free(cmp);
    report_free(rb);
    report_free(rn);
}

/* A black hole on the path in BASE only: the row's verdicts carry "!", the JSON names the report
 * (path_mtu_black_hole: ["base"]) and the table lists it; with strict_evidence the row gets no
 * verdict and is counted as refused for a black hole. */
static void test_compare_black_hole_marks_and_strict_refuses(void **state)
{
    struct spec slow = base_spec;
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *cmp;
    struct report *rb, *rn;
    json_t *doc, *row;
    size_t i, marked = 0;
    char *text;
    (void)state;

    slow.seed = 2;
    slow.mbps = 4500;
    rb = black_hole(make(&base_spec, NULL));
    rn = make(&slow, NULL);
    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    assert_true(compare_regression_count(cmp) >= 1);
    assert_int_equal(compare_refused_count(cmp), 0);
    doc = compare_to_json(cmp);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        const json_t *h = json_object_get(row, "path_mtu_black_hole");
        if (!h)
            continue;
        marked++;
        assert_string_equal(json_string_value(json_object_get(row, "test")), "TCP_STREAM");
        assert_int_equal(json_array_size(h), 1);
        assert_string_equal(json_string_value(json_array_get(h, 0)), "base");
        assert_null(json_object_get(row, "counters_moved")); /* no counter moved */
    }
    assert_int_equal(marked, 1);
    json_decref(doc);
    text = table_of(cmp);
    if (getenv("KPERF_TEST_SHOW"))
        fputs(text, stderr);
    assert_non_null(strstr(text, "REGRESSION !"));
    assert_non_null(strstr(text, "! path MTU black hole"));
    assert_non_null(strstr(text, "TCP_STREAM: black hole in BASE\n"));
    free(text);
    compare_free(cmp);

    o.strict_evidence = true;
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    assert_int_equal(compare_refused_count(cmp), 1);
    assert_int_equal(compare_refused_pmtu_count(cmp), 1);
    assert_int_equal(compare_regression_count(cmp), 0);
    doc = compare_to_json(cmp);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        if (json_object_get(row, "path_mtu_black_hole"))
            assert_string_equal(json_string_value(json_object_get(row, "verdict")), "cannot judge");
    }
    json_decref(doc);
    compare_free(cmp);

    cmp = compare_reports(rn, rn, &o, &err); /* no black hole on either side: judged */
    assert_int_equal(compare_refused_count(cmp), 0);
    assert_int_equal(compare_refused_pmtu_count(cmp), 0);
    compare_free(cmp);
    report_free(rb);
    report_free(rn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_evidence_marks_and_strict_refuses),
        cmocka_unit_test(test_compare_black_hole_marks_and_strict_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
