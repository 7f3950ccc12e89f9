/* SPDX-License-Identifier: Apache-2.0 */
/* test_watch_readiness.c - readiness in the kperf.watch/v1 document: records grouped into one
 * series per node (sorted by node and time, at_s from the watch's start, failures kept with
 * their reason), p50/max over the measured totals only; the table and Markdown (a '|' in a
 * reason cannot split a cell); the HTML marker rows (a dot per pod, a cross per failure, names
 * escaped); nothing when the document has no readiness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/report/watch_readiness.h"
#include "controller/report/watch_render.h"

/* node-b first and out of time order on purpose; node-a has a failure */
static const char records_text[] =
    "["
    "{\"node\":\"node-b\",\"created_unix_s\":1006.0,\"pod\":\"p4\",\"scheduling_s\":0.1,"
    " \"network_s\":2.1,\"first_packet_s\":0.3,\"total_s\":2.5},"
    "{\"node\":\"node-b\",\"created_unix_s\":1001.0,\"pod\":\"p2\",\"scheduling_s\":0.1,"
    " \"network_s\":2.0,\"first_packet_s\":0.2,\"total_s\":2.3},"
    "{\"node\":\"node-a\",\"created_unix_s\":1000.5,\"pod\":\"p1\",\"scheduling_s\":0.1,"
    " \"network_s\":0.2,\"first_packet_s\":0.2,\"total_s\":0.5},"
    "{\"node\":\"node-a\",\"created_unix_s\":1004.0,\"error\":\"no network | within 60 "
    "s\",\"cause\":\"cni-plugin-error\"},"
    "{\"node\":\"node-a\",\"created_unix_s\":1008.0,\"pod\":\"p5\",\"scheduling_s\":0.1,"
    " \"network_s\":0.4,\"first_packet_s\":0.2,\"total_s\":0.7},"
    "{\"node\":\"node-a\",\"created_unix_s\":1011.0,\"pod\":\"p6\",\"scheduling_s\":0.1,"
    " \"network_s\":0.3,\"first_packet_s\":0.5,\"total_s\":0.9}"
    "]";

static json_t *build(void)
{
    json_error_t e;
    json_t *recs = json_loads(records_text, 0, &e), *rd;

    if (!recs)
        fail_msg("fixture: %s at %d", e.text, e.position);
    rd = watch_readiness_build(recs, 1000.0, 3.0, 60.0);
    json_decref(recs);
    return rd;
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void series_per_node(void **state)
{
    json_t *rd = build();
    const json_t *nodes = json_object_get(rd, "nodes");
    const json_t *a = json_array_get(nodes, 0), *b = json_array_get(nodes, 1);
    const json_t *sa = json_object_get(a, "series"), *sb = json_object_get(b, "series");
    (void)state;

    assert_true(num(rd, "every_s") == 3.0 && num(rd, "bound_s") == 60.0);
    assert_int_equal(json_array_size(nodes), 2);
    assert_string_equal(json_string_value(json_object_get(a, "node")), "node-a");
    assert_string_equal(json_string_value(json_object_get(b, "node")), "node-b");
    /* node-a: 3 measured, 1 failed, in time order; p50/max over the 3 totals only */
    assert_int_equal(json_integer_value(json_object_get(a, "measured")), 3);
    assert_int_equal(json_integer_value(json_object_get(a, "failed")), 1);
    assert_int_equal(json_array_size(sa), 4);
    assert_true(num(json_array_get(sa, 0), "at_s") == 0.5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(sa, 1), "error")),
                        "no network | within 60 s");
    assert_null(json_object_get(json_array_get(sa, 1), "total_s"));
    assert_true(num(json_array_get(sa, 3), "at_s") == 11.0);
    assert_string_equal(json_string_value(json_object_get(json_array_get(sa, 3), "pod")), "p6");
    assert_true(num(json_object_get(a, "total_s"), "p50") == 0.7);
    assert_true(num(json_object_get(a, "total_s"), "max") == 0.9);
    /* node-b: sorted by time although given the other way round */
    assert_true(num(json_array_get(sb, 0), "at_s") == 1.0);
    assert_true(num(json_array_get(sb, 1), "network_s") == 2.1);
    assert_true(num(json_object_get(b, "total_s"), "p50") == 2.4);
    assert_int_equal(json_integer_value(json_object_get(b, "failed")), 0);
    json_decref(rd);
}

static void only_failures_and_none(void **state)
{
    json_t *recs = json_pack("[{s:s, s:f, s:s}]", "node", "n", "created_unix_s", 5.0, "error",
                             "not scheduled within 60 s");
    json_t *rd = watch_readiness_build(recs, 0, 5, 60);
    json_t *empty = json_array(), *rd0 = watch_readiness_build(empty, 0, 5, 60);
    const json_t *n = json_array_get(json_object_get(rd, "nodes"), 0);
    (void)state;

    assert_true(json_is_null(json_object_get(n, "total_s")));
    assert_int_equal(json_integer_value(json_object_get(n, "failed")), 1);
    assert_int_equal(json_array_size(json_object_get(rd0, "nodes")), 0);
    json_decref(recs);
    json_decref(rd);
    json_decref(empty);
    json_decref(rd0);
}

static char *print(const json_t *doc, bool md)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    watch_readiness_print(doc, md, f);
    fclose(f);
    return buf;
}

static json_t *watch_doc(void)
{
    return json_pack("{s:s, s:f, s:f, s:[], s:o}", "schema", WATCH_SCHEMA, "start_unix_s", 1000.0,
                     "duration_s", 12.0, "paths", "readiness", build());
}

static void table_and_markdown(void **state)
{
    json_t *doc = watch_doc(), *bare = json_pack("{s:[]}", "paths");
    char *t = print(doc, false), *m = print(doc, true), *none = print(bare, false);
    (void)state;

    assert_non_null(strstr(t, "Pod network readiness (a pod per node every 3 s;"));
    /* node-a's failed pod never got a network (its cause is a CNI one): NO_NET counts it */
    assert_non_null(strstr(t, "node-a                        4      1      1    0.700    0.900\n"));
    assert_non_null(strstr(t, "node-b                        2      0      0    2.400    2.500\n"));
    assert_non_null(strstr(t, "  node-a                        4.0  failed: no network | within"));
    assert_non_null(strstr(t, "  node-b                        6.0    2.500    0.100    2.100"));
    assert_non_null(strstr(m, "| node-a | 4 | 1 | 1 | 0.700 | 0.900 |\n"));
    assert_non_null(strstr(m, "| node-a | 4.0 | failed: no network / within 60 s | | | |\n"));
    assert_non_null(strstr(m, "| node-b | 1.0 | 2.300 | 0.100 | 2.000 | 0.200 |\n"));
    assert_string_equal(none, "");
    free(t);
    free(m);
    free(none);
    json_decref(doc);
    json_decref(bare);
}

static void in_the_watch_report(void **state)
{
    json_t *doc = watch_doc();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    assert_non_null(f);
    watch_render(doc, WATCH_TABLE, f);
    fclose(f);
    assert_non_null(strstr(buf, "Pod network readiness"));
    assert_true(strstr(buf, "Pod network readiness") < strstr(buf, "Longest outage"));
    free(buf);
    json_decref(doc);
}

static void html_rows(void **state)
{
    json_t *doc = watch_doc();
    struct watch_readiness_axis ax = {.x0 = 100, .width = 600, .span_s = 12, .label_x = 92};
    char *buf = NULL, *p;
    size_t len = 0, dots = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    json_object_set_new(
        json_array_get(json_object_get(json_object_get(doc, "readiness"), "nodes"), 1), "node",
        json_string("<b>"));
    assert_int_equal(watch_readiness_rows(doc), 2);
    assert_non_null(f);
    watch_readiness_svg(doc, &ax, 50, 20, f);
    fclose(f);
    for (p = buf; (p = strstr(p, "<circle ")) != NULL; p++)
        dots++;
    assert_int_equal(dots, 5);
    /* node-a's first pod at +0.5 s of 12 s: x = 100 + 0.5 / 12 * 600 = 125, row centre 60 */
    assert_non_null(strstr(buf, "<circle cx=\"125.0\" cy=\"60.0\""));
    assert_non_null(strstr(buf, ">ready node-a 0.70/0.90 s</text>"));
    assert_non_null(strstr(buf, "failed: no network | within 60 s</title></path>"));
    assert_non_null(strstr(buf, ">ready &lt;b&gt; 2.40/2.50 s</text>"));
    assert_null(strstr(buf, "<b>"));
    free(buf);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(series_per_node),    cmocka_unit_test(only_failures_and_none),
        cmocka_unit_test(table_and_markdown), cmocka_unit_test(in_the_watch_report),
        cmocka_unit_test(html_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
