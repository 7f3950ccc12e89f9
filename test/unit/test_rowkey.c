/* SPDX-License-Identifier: Apache-2.0 */
/* test_rowkey.c - the one key of a report row: a missing ip_family is IPv4 (the same row as
 * "IPv4", not as "IPv6"), a missing reverse is forward, a row missing scenario, placement or
 * test matches nothing, reverse rows and sweep rows ("node:NAME") are rows of their own, the
 * text form is distinct for distinct keys and equal for equal ones, and the labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"

/* rowkey_of of a row given as JSON text (kept alive in *row; caller decrefs it). */
static struct rowkey key_of(const char *text, json_t **row)
{
    json_error_t jerr;
    struct rowkey k;

    *row = json_loads(text, 0, &jerr);
    assert_non_null(*row);
    rowkey_of(*row, &k);
    return k;
}

/* True when the rows' keys are equal and their texts are equal (both or neither). */
static bool same_row(const char *a, const char *b)
{
    json_t *ra, *rb;
    struct rowkey ka = key_of(a, &ra), kb = key_of(b, &rb);
    char *ta = rowkey_text(&ka), *tb = rowkey_text(&kb);
    bool eq = rowkey_equal(&ka, &kb);

    /* the text form agrees with rowkey_equal */
    assert_true(eq == (ta && tb && strcmp(ta, tb) == 0));
    free(ta);
    free(tb);
    json_decref(ra);
    json_decref(rb);
    return eq;
}

#define V4   "\"ip_family\": \"IPv4\""
#define V6   "\"ip_family\": \"IPv6\""
#define BASE "\"scenario\": \"pod-to-pod\", \"placement\": \"same-node\", \"test\": \"TCP_RR\""

static void test_rowkey_missing_family_is_ipv4(void **state)
{
    json_t *row;
    struct rowkey k = key_of("{" BASE "}", &row);
    (void)state;

    assert_string_equal(k.ip_family, ROWKEY_DEFAULT_FAMILY);
    assert_string_equal(k.ip_family, "IPv4");
    assert_string_equal(rowkey_family_label(&k), "");
    json_decref(row);
    assert_true(same_row("{" BASE "}", "{" BASE ", " V4 "}"));
    assert_false(same_row("{" BASE "}", "{" BASE ", " V6 "}"));
    assert_false(same_row("{" BASE ", " V4 "}", "{" BASE ", " V6 "}"));
    /* the same rule from parts (report_row_info of a loaded row) */
    rowkey_make(&k, "pod-to-pod", "same-node", "TCP_RR", false, NULL);
    assert_string_equal(k.ip_family, "IPv4");
}

static void test_rowkey_reverse_rows_are_their_own(void **state)
{
    (void)state;
    assert_true(same_row("{" BASE "}", "{" BASE ", \"reverse\": false}"));
    assert_false(same_row("{" BASE "}", "{" BASE ", \"reverse\": true}"));
    assert_true(same_row("{" BASE ", \"reverse\": true}", "{" BASE ", \"reverse\": true, " V4 "}"));
    assert_false(
        same_row("{" BASE ", \"reverse\": true}", "{" BASE ", \"reverse\": true, " V6 "}"));
}

static void test_rowkey_missing_part_matches_nothing(void **state)
{
    json_t *row;
    struct rowkey k = key_of("{\"scenario\": \"pod-to-pod\", \"test\": \"TCP_RR\"}", &row);
    (void)state;

    assert_false(rowkey_valid(&k));
    assert_null(rowkey_text(&k));
    assert_false(rowkey_equal(&k, &k)); /* not even itself */
    json_decref(row);
    assert_false(same_row("{\"placement\": \"same-node\", \"test\": \"TCP_RR\"}",
                          "{\"placement\": \"same-node\", \"test\": \"TCP_RR\"}"));
    assert_false(same_row("{\"scenario\": 3, \"placement\": \"same-node\", \"test\": \"TCP_RR\"}",
                          "{\"scenario\": 3, \"placement\": \"same-node\", \"test\": \"TCP_RR\"}"));
}

static void test_rowkey_sweep_rows(void **state)
{
    json_t *a, *b, *c;
    struct rowkey ka = key_of("{\"scenario\": \"pod-to-pod\", \"placement\": \"node:ip-1\", "
                              "\"test\": \"TCP_STREAM\"}",
                              &a);
    struct rowkey kb = key_of("{\"scenario\": \"pod-to-pod\", \"placement\": \"node:ip-2\", "
                              "\"test\": \"TCP_STREAM\", " V4 "}",
                              &b);
    struct rowkey kc = key_of("{\"scenario\": \"pod-to-pod\", \"placement\": \"node:ip-2\", "
                              "\"test\": \"TCP_STREAM\", " V6 "}",
                              &c);
    (void)state;

    assert_string_equal(rowkey_sweep_node(&ka), "ip-1");
    assert_string_equal(rowkey_sweep_node(&kb), "ip-2");
    assert_false(rowkey_equal(&ka, &kb));       /* one row per node */
    assert_true(rowkey_same_series(&ka, &kb));  /* one metric of the sweep */
    assert_false(rowkey_same_series(&kb, &kc)); /* families are judged apart */
    kb.reverse = true;
    assert_false(rowkey_same_series(&ka, &kb));
    kb.test = "TCP_RR";
    kb.reverse = false;
    assert_false(rowkey_same_series(&ka, &kb));
    rowkey_make(&ka, "pod-to-pod", ROWKEY_PLACEMENT_SAME_NODE, "TCP_RR", false, NULL);
    assert_null(rowkey_sweep_node(&ka));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

/* The free strings are length-prefixed: parts that run into each other differ. */
static void test_rowkey_text_is_unambiguous(void **state)
{
    struct rowkey a, b;
    char *ta, *tb;
    (void)state;

    rowkey_make(&a, "a|b", "c", "TCP_RR", false, NULL);
    rowkey_make(&b, "a", "b|c", "TCP_RR", false, NULL);
    ta = rowkey_text(&a);
    tb = rowkey_text(&b);
    assert_string_not_equal(ta, tb);
    assert_string_equal(ta, "3:a|b1:c6:TCP_RR|0|IPv4");
    free(ta);
    free(tb);
}

static void test_rowkey_json_and_labels(void **state)
{
    struct rowkey k;
    json_t *j;
    char buf[128];
    (void)state;

    rowkey_make(&k, "pod-to-pod", "other-node", "TCP_STREAM", true, NULL);
    j = rowkey_to_json(&k);
    assert_string_equal(json_string_value(json_object_get(j, "ip_family")), "IPv4");
    assert_true(json_is_true(json_object_get(j, "reverse")));
    json_decref(j);
    assert_string_equal(rowkey_label(&k, buf, sizeof(buf)),
                        "pod-to-pod other-node TCP_STREAM (reverse)");
    assert_string_equal(rowkey_test_label(&k, buf, sizeof(buf)), "TCP_STREAM (reverse)");
    k.ip_family = "IPv6";
    k.reverse = false;
    assert_string_equal(rowkey_label(&k, buf, sizeof(buf)),
                        "pod-to-pod other-node TCP_STREAM [IPv6]");
    rowkey_make(&k, NULL, NULL, NULL, false, NULL);
    assert_string_equal(rowkey_label(&k, buf, sizeof(buf)), "? ? ?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rowkey_missing_family_is_ipv4),
        cmocka_unit_test(test_rowkey_reverse_rows_are_their_own),
        cmocka_unit_test(test_rowkey_missing_part_matches_nothing),
        cmocka_unit_test(test_rowkey_sweep_rows),
        cmocka_unit_test(test_rowkey_text_is_unambiguous),
        cmocka_unit_test(test_rowkey_json_and_labels),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
