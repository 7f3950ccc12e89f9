/* SPDX-License-Identifier: Apache-2.0 */
/* test_outlier.c - the sweep outlier rule on synthetic data: median and MAD per instance type,
 * only the worse side, a minimum relative gap, small groups not judged, and attribution of a slow
 * node in ring pairs (its neighbours, each with one slow pair, are not flagged). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/report/outlier.h"

static void test_outlier_flags_the_slow_one_per_type(void **state)
{
    /* six m5 nodes around 100 us, one at 180; two c5 nodes (too few to judge) */
    const double v[] = {100, 102, 98, 101, 180, 99, 500, 90};
    const char *g[] = {"m5", "m5", "m5", "m5", "m5", "m5", "c5", "c5"};
    int verdict[8];
    double z[8];
    (void)state;

    outlier_judge(v, g, 8, false, verdict, z);
    for (int i = 0; i < 6; i++)
        assert_int_equal(verdict[i], i == 4 ? OUTLIER_YES : OUTLIER_OK);
    assert_true(z[4] > OUTLIER_Z);
    assert_int_equal(verdict[6], OUTLIER_NOT_JUDGED);
    assert_int_equal(verdict[7], OUTLIER_NOT_JUDGED);
}

static void test_outlier_only_the_worse_side_and_a_real_gap(void **state)
{
    /* throughput: a faster node is not an outlier; a node 3% slower with a tiny MAD is not
     * either (identical nodes jitter), one 40% slower is */
    const double tp[] = {1000, 1001, 999, 1000, 1600, 970, 600};
    const char *g[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int verdict[7];
    double z[7];
    (void)state;

    outlier_judge(tp, g, 7, true, verdict, z);
    assert_int_equal(verdict[4], OUTLIER_OK); /* faster */
    assert_true(z[4] < 0);
    assert_int_equal(verdict[5], OUTLIER_OK); /* 3% slower: z is large, the gap is not */
    assert_true(z[5] > OUTLIER_Z);
    assert_int_equal(verdict[6], OUTLIER_YES);
}

static void test_outlier_zero_mad(void **state)
{
    const double v[] = {50, 50, 50, 50, 80};
    const char *g[] = {"t", "t", "t", "t", "t"};
    int verdict[5];
    double z[5];
    (void)state;

    outlier_judge(v, g, 5, false, verdict, z);
    assert_int_equal(verdict[0], OUTLIER_OK);
    assert_true(z[0] == 0);
    assert_int_equal(verdict[4], OUTLIER_YES);
    assert_true(isinf(z[4]));
}

static json_t *rr_row(const char *client, double p50)
{
    char pl[64];

    snprintf(pl, sizeof(pl), "node:%s", client);
    return json_pack("{s:s, s:s, s:s, s:b, s:s, s:{s:{s:f}}}", "scenario", "pod-to-pod",
                     "placement", pl, "test", "TCP_RR", "reverse", 0, "status", "ok", "aggregate",
                     "latency_us", "p50", p50);
}

static void test_outlier_ring_attributes_the_slow_node(void **state)
{
    /* ring n1->n2->...->n6->n1; n4 slow: pairs n3->n4 and n4->n5 are slow */
    const char *names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
    json_t *md = json_object(), *nodes = json_array(), *pairs = json_array(), *rows = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;

    for (int i = 0; i < 6; i++) {
        json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "name", names[i], "instance_type",
                                               "m5.large", "zone", "z1"));
        json_array_append_new(
            pairs, json_pack("{s:s, s:s}", "client", names[i], "server", names[(i + 1) % 6]));
        json_array_append_new(rows, rr_row(names[i], i == 2 || i == 3 ? 900.0 : 100.0 + i));
    }
    json_object_set_new(
        md, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    outlier_annotate(md, rows);
    for (int i = 0; i < 6; i++) {
        const json_t *n = json_array_get(nodes, (size_t)i);
        assert_string_equal(json_string_value(json_object_get(n, "verdict")),
                            i == 3 ? "outlier" : "ok");
    }
    assert_int_equal(json_array_size(json_object_get(json_object_get(md, "sweep"), "outliers")), 1);
    f = open_memstream(&buf, &len);
    outlier_print(md, false, f);
    fclose(f);
    assert_non_null(strstr(buf, "1 outlier "));
    assert_non_null(strstr(buf, "outlier    n4"));
    assert_non_null(strstr(buf, "pod-to-pod TCP_RR p50 us 900.0"));
    free(buf);
    /* the heat map: one row marked, its cell red and flagged */
    buf = NULL;
    f = open_memstream(&buf, &len);
    outlier_html(md, f);
    fclose(f);
    assert_non_null(strstr(buf, "<tr class=\"outlier\"><td>n4</td><td><b>outlier</b>"));
    assert_null(strstr(strstr(buf, "class=\"outlier\"") + 1, "class=\"outlier\""));
    assert_non_null(strstr(buf, "background:rgb(255,80,120)\" title=\"outlier\"><b>&#9888; 900.0"));
    free(buf);
    json_decref(rows);
    json_decref(md);
}

static void test_outlier_skipped_node_keeps_its_reason(void **state)
{
    /* n4 went NotReady: its verdict is "skipped" (not an outlier, even with slow figures) */
    const char *names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
    json_t *md = json_object(), *nodes = json_array(), *pairs = json_array(), *rows = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;

    for (int i = 0; i < 6; i++) {
        json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "name", names[i], "instance_type",
                                               "m5.large", "zone", "z1"));
        json_array_append_new(
            pairs, json_pack("{s:s, s:s}", "client", names[i], "server", names[(i + 1) % 6]));
        json_array_append_new(rows, rr_row(names[i], i == 3 ? 900.0 : 100.0 + i));
    }
    json_object_set_new(json_array_get(nodes, 3), "skipped",
                        json_string("node n4 is NotReady: Ready=Unknown"));
    json_object_set_new(
        md, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    outlier_annotate(md, rows);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 3), "verdict")),
                        "skipped");
    assert_int_equal(json_array_size(json_object_get(json_object_get(md, "sweep"), "outliers")), 0);
    f = open_memstream(&buf, &len);
    outlier_print(md, false, f);
    fclose(f);
    assert_non_null(strstr(buf, "skipped    n4"));
    assert_non_null(strstr(buf, "; node n4 is NotReady: Ready=Unknown"));
    free(buf);
    json_decref(rows);
    json_decref(md);
}

static void test_outlier_no_sweep_is_a_no_op(void **state)
{
    json_t *md = json_pack("{s:s}", "backend", "local"), *rows = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    outlier_annotate(md, rows);
    assert_int_equal(json_object_size(md), 1);
    outlier_print(md, false, f);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
    json_decref(rows);
    json_decref(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outlier_flags_the_slow_one_per_type),
        cmocka_unit_test(test_outlier_only_the_worse_side_and_a_real_gap),
        cmocka_unit_test(test_outlier_zero_mad),
        cmocka_unit_test(test_outlier_ring_attributes_the_slow_node),
        cmocka_unit_test(test_outlier_no_sweep_is_a_no_op),
        cmocka_unit_test(test_outlier_skipped_node_keeps_its_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
