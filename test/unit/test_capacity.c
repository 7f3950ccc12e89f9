/* SPDX-License-Identifier: Apache-2.0 */
/* test_capacity.c - the connection-capacity ramp's figures (report/capacity.h): a step from an
 * agent document, the stop rule (errors above 0.1 %, p99 above twice the first step's, a
 * failed step), the counter that moved first, and the row's capacity section and its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/report/capacity.h"

/* a step as capacity_step_of_doc makes it */
static json_t *step(int parallel, double cps, double p99, double err_pct, const char *counters)
{
    json_error_t e;
    json_t *c = json_loads(counters ? counters : "{}", 0, &e);

    assert_non_null(c);
    return json_pack("{s:i, s:f, s:f, s:i, s:f, s:o}", "parallel", parallel, "conn_per_sec", cps,
                     "p99_us", p99, "conn_errors", err_pct > 0 ? 1 : 0, "error_pct", err_pct,
                     "counters", c);
}

static void test_capacity_step_of_doc(void **state)
{
    json_error_t e;
    json_t *doc =
        json_loads("{\"results\": [{\"test\": \"TCP_CRR\", \"ops\": 999, \"ops_per_sec\": 999.0,"
                   " \"conn_errors\": 1, \"latency_us\": {\"p50\": 50, \"p99\": 120},"
                   " \"counters\": {\"client\": {\"deltas\": {\"Tcp.RetransSegs\": 4,"
                   " \"TcpExt.ListenOverflows\": 0}},"
                   " \"server\": {\"deltas\": {\"Icmp.OutDestUnreachs\": 7, \"conntrack.drop\": 0},"
                   " \"conntrack_count\": 10, \"conntrack_max\": 10}}}], \"errors\": []}",
                   0, &e);
    json_t *s, *none;
    (void)state;

    assert_non_null(doc);
    s = capacity_step_of_doc(doc, 8);
    assert_int_equal(json_integer_value(json_object_get(s, "parallel")), 8);
    assert_true(json_number_value(json_object_get(s, "conn_per_sec")) == 999.0);
    assert_true(json_number_value(json_object_get(s, "p99_us")) == 120.0);
    assert_true(json_number_value(json_object_get(s, "error_pct")) == 0.1); /* 1 of 1000 */
    /* only the capacity counters that moved; table full from the gauges */
    assert_null(json_object_get(json_object_get(json_object_get(s, "counters"), "client"),
                                "Tcp.RetransSegs"));
    assert_int_equal(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(s, "counters"), "server"), "Icmp.OutDestUnreachs")),
        7);
    assert_non_null(json_object_get(json_object_get(json_object_get(s, "counters"), "server"),
                                    "conntrack.table_full"));
    json_decref(s);
    none = json_loads("{\"results\": [], \"errors\": [{\"test\": \"TCP_CRR\", \"error\": "
                      "\"TCP_CRR: connection refused\"}]}",
                      0, &e);
    s = capacity_step_of_doc(none, 2);
    assert_string_equal(json_string_value(json_object_get(s, "error")),
                        "TCP_CRR: connection refused");
    json_decref(s);
    json_decref(none);
    json_decref(doc);
}

static void test_capacity_stop_rule(void **state)
{
    json_t *steps = json_array();
    (void)state;

    assert_null(capacity_stop(steps)); /* nothing yet */
    json_array_append_new(steps, step(1, 1000, 100, 0, NULL));
    assert_null(capacity_stop(steps));
    json_array_append_new(steps, step(2, 1900, 200, 0.1, NULL)); /* exactly 2x, exactly 0.1 % */
    assert_null(capacity_stop(steps));
    json_array_append_new(steps, step(4, 3000, 150, 0.11, NULL)); /* errors pass 0.1 % */
    assert_string_equal(capacity_stop(steps), "errors");
    json_array_remove(steps, 2);
    json_array_append_new(steps, step(4, 3000, 201, 0, NULL)); /* p99 doubled */
    assert_string_equal(capacity_stop(steps), "p99");
    json_array_remove(steps, 2);
    json_array_append_new(steps, json_pack("{s:i, s:s}", "parallel", 4, "error", "timed out"));
    assert_string_equal(capacity_stop(steps), "errors"); /* a failed step */
    json_decref(steps);
}

static void test_capacity_first_counter(void **state)
{
    json_t *steps = json_array(), *fc;
    (void)state;

    json_array_append_new(steps, step(1, 1000, 100, 0, "{\"client\": {}, \"server\": {}}"));
    assert_null(capacity_first_counter(steps)); /* a clean ramp names nothing */
    json_array_append_new(steps,
                          step(2, 1900, 110, 0,
                               "{\"client\": {\"TcpExt.TCPSynRetrans\": 3}, \"server\": "
                               "{\"Icmp.OutDestUnreachs\": 5, \"conntrack.insert_failed\": 2}}"));
    json_array_append_new(steps, step(4, 100, 900, 5, "{\"server\": {\"conntrack.drop\": 900}}"));
    fc = capacity_first_counter(steps); /* the earliest step; in it, conntrack first */
    assert_non_null(fc);
    assert_string_equal(json_string_value(json_object_get(fc, "side")), "server");
    assert_string_equal(json_string_value(json_object_get(fc, "counter")),
                        "conntrack.insert_failed");
    assert_int_equal(json_integer_value(json_object_get(fc, "delta")), 2);
    assert_int_equal(json_integer_value(json_object_get(fc, "parallel")), 2);
    json_decref(fc);
    json_decref(steps);
}

static void test_capacity_result_and_text(void **state)
{
    json_t *steps = json_array(), *cap, *row;
    char buf[256];
    (void)state;

    json_array_append_new(steps, step(1, 1000, 100, 0, NULL));
    json_array_append_new(steps, step(2, 1900, 120, 0, NULL));
    json_array_append_new(steps,
                          step(4, 2500, 130, 3.5, "{\"server\": {\"Icmp.OutDestUnreachs\": 40}}"));
    cap = capacity_result(steps, capacity_stop(steps));
    /* the stop step's 2500 conn/s are not sustained: the maximum is the step before */
    assert_true(json_number_value(json_object_get(cap, "max_conn_per_sec")) == 1900.0);
    assert_int_equal(json_integer_value(json_object_get(cap, "max_parallel")), 2);
    assert_string_equal(json_string_value(json_object_get(cap, "stop")), "errors");
    assert_int_equal(json_array_size(json_object_get(cap, "steps")), 3);
    row = json_pack("{s:o}", "capacity", cap);
    assert_int_equal(capacity_text(row, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "max 1900 conn/s at 2 clients; stopped at 4: errors 3.50%; first: "
                             "server Icmp.OutDestUnreachs +40 at 4");
    json_decref(row);
    cap = capacity_result(steps, NULL); /* no stop: every step counts */
    assert_true(json_number_value(json_object_get(cap, "max_conn_per_sec")) == 2500.0);
    assert_string_equal(json_string_value(json_object_get(cap, "stop")), "bound");
    json_decref(cap);
    row = json_object();
    assert_int_equal(capacity_text(row, buf, sizeof(buf)), 0);
    json_decref(row);
    json_decref(steps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_step_of_doc),
        cmocka_unit_test(test_capacity_stop_rule),
        cmocka_unit_test(test_capacity_first_counter),
        cmocka_unit_test(test_capacity_result_and_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
