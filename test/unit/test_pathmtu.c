/* SPDX-License-Identifier: Apache-2.0 */
/* test_pathmtu.c - a row's path_mtu from its samples' probe (the worst verdict with its
 * figures), the saved report carrying it and passing the validator (a bad verdict refused),
 * and the table marking exactly the black-hole row, with its legend line; the HTML lists it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "controller/report/pathmtu.h"
#include "controller/report/report.h"
#include "controller/report/report_validate.h"
#include "test/unit/report_fixture.h"

/* An agent document of one TCP_STREAM sample whose probe said verdict (NULL: no probe). */
static json_t *doc_with(const char *verdict, int path, int icmp)
{
    json_t *doc =
        fx_agent_doc(json_pack("[o]", fx_stream_sample("TCP_STREAM", 0, false, 900.0, 0)), NULL);
    json_t *mtu = json_object_get(doc, "mtu");

    if (verdict) {
        json_object_set_new(mtu, "path", json_integer(path));
        json_object_set_new(mtu, "icmp", json_integer(icmp));
        json_object_set_new(mtu, "tcp_full_mss", json_boolean(strcmp(verdict, "ok") == 0));
        json_object_set_new(mtu, "verdict", json_string(verdict));
        json_object_set_new(mtu, "probe_ms", json_integer(12));
    }
    return doc;
}

static void add(struct report *rep, const char *scenario, const char *placement, json_t *doc)
{
    struct kp_err err = {{0}};

    if (report_group_add_doc(report_group_get(rep, scenario, placement, false), doc, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
}

static struct report *three_rows(void)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};

    add(rep, "pod-to-pod", "same-node", doc_with("ok", 1500, 0));
    add(rep, "pod-to-pod", "other-node", doc_with("black-hole", 1396, 0));
    add(rep, "host-to-host", "other-node", doc_with(NULL, 0, 0));
    json_object_set_new(report_metadata(rep), "backend", json_string("local"));
    json_object_set_new(report_metadata(rep), "start_time", json_string("2026-12-04T00:00:00Z"));
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

static const json_t *row_named(const struct report *rep, const char *scenario,
                               const char *placement)
{
    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *r = report_row(rep, i);
        if (r && strcmp(json_string_value(json_object_get(r, "scenario")), scenario) == 0 &&
            strcmp(json_string_value(json_object_get(r, "placement")), placement) == 0)
            return r;
    }
    fail_msg("no row %s %s", scenario, placement);
    return NULL;
}

static void test_pathmtu_worst_sample_wins(void **state)
{
    json_t *row =
        json_pack("{s:[{s:{s:s, s:i, s:i}}, {s:{s:s, s:i, s:i, s:i}}, {s:{s:i}}]}", "samples",
                  "mtu", "verdict", "ok", "path", 1500, "client", 1500, "mtu", "verdict",
                  "black-hole", "path", 1396, "client", 1500, "icmp", 0, "mtu", "client", 1500);
    json_t *p = pathmtu_of_row(row);
    char text[160];

    (void)state;
    assert_non_null(p);
    assert_string_equal(json_string_value(json_object_get(p, "verdict")), "black-hole");
    assert_int_equal(json_integer_value(json_object_get(p, "path")), 1396);
    json_object_set_new(row, "path_mtu", p);
    assert_true(pathmtu_black_hole(row));
    assert_string_equal(pathmtu_text(row, text, sizeof(text)),
                        "path MTU 1396 < 1500, no ICMP: black hole");
    json_decref(row);
    row = json_pack("{s:[{s:{s:i, s:i}}]}", "samples", "mtu", "client", 1500, "server", 1500);
    assert_null(pathmtu_of_row(row)); /* no probe: no path_mtu */
    json_decref(row);
}

static void test_pathmtu_in_the_saved_report(void **state)
{
    struct report *rep = three_rows();
    json_t *doc = report_to_json(rep), *rows, *row;
    struct kp_err err = {{0}};
    size_t i;

    (void)state;
    assert_int_equal(report_validate_doc(doc, &err), 0);
    rows = json_object_get(doc, "results");
    json_array_foreach(rows, i, row)
    {
        const char *sc = json_string_value(json_object_get(row, "scenario"));
        const json_t *p = json_object_get(row, "path_mtu");
        if (strcmp(sc, "host-to-host") == 0)
            assert_null(p);
        else
            assert_non_null(json_object_get(p, "verdict"));
    }
    /* a verdict the probe never gives is refused */
    row = json_array_get(rows, 0);
    json_object_set_new(json_object_get(row, "path_mtu"), "verdict", json_string("meh"));
    assert_int_not_equal(report_validate_doc(doc, &err), 0);
    assert_non_null(strstr(kp_err_msg(&err), "path_mtu.verdict"));
    json_decref(doc);
    report_free(rep);
}

static char *render(const struct report *rep, enum report_format fmt)
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

static void test_pathmtu_table_marks_the_black_hole_row_only(void **state)
{
    struct report *rep = three_rows();
    char *t = render(rep, REPORT_TABLE), *h = render(rep, REPORT_HTML);
    const char *first = strstr(t, "!pmtu-black-hole");

    (void)state;
    assert_true(pathmtu_black_hole(row_named(rep, "pod-to-pod", "other-node")));
    assert_false(pathmtu_black_hole(row_named(rep, "pod-to-pod", "same-node")));
    /* one mark in the table, then the legend and its one line */
    assert_non_null(first);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", t);
    /* the first mark is in the table, on the other-node row */
    while (first > t && first[-1] != '\n')
        first--;
    assert_true(strncmp(first, "pod-to-pod", 10) == 0 || strstr(first, "other-node") != NULL);
    assert_non_null(strstr(strstr(t, "!pmtu-black-hole") + 1, "!pmtu-black-hole:"));
    assert_non_null(strstr(t, "pod-to-pod other-node TCP_STREAM: path MTU 1396 < 1500, no ICMP"));
    assert_null(strstr(t, "same-node TCP_STREAM: path MTU"));
    assert_non_null(strstr(h, "<h2>Path MTU</h2>"));
    assert_non_null(strstr(h, "<li><b>! pod-to-pod other-node TCP_STREAM: path MTU 1396"));
    free(t);
    free(h);
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pathmtu_worst_sample_wins),
        cmocka_unit_test(test_pathmtu_in_the_saved_report),
        cmocka_unit_test(test_pathmtu_table_marks_the_black_hole_row_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
