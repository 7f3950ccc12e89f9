/* SPDX-License-Identifier: Apache-2.0 */
/* test_html_util.c - numbers on kperf's pages as people write them: never in exponent
 * notation, dates as UTC dates, durations with their unit (html_util.h). The escape is tested
 * with the pages in test_render.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/report/html_util.h"

/* html_number_for_key(key, v) as a string; caller frees. */
static char *for_key(const char *key, double v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    html_number_for_key(key, v, f);
    fclose(f);
    return buf;
}

static void assert_for_key(const char *key, double v, const char *want)
{
    char *got = for_key(key, v);
    assert_string_equal(got, want);
    free(got);
}

static void test_html_util_number_never_exponent(void **state)
{
    char buf[352];
    (void)state;

    assert_string_equal(html_number_fmt(1796310000.0, 3, buf, sizeof(buf)), "1796310000");
    assert_string_equal(html_number_fmt(0.00001, 5, buf, sizeof(buf)), "0.00001");
    assert_string_equal(html_number_fmt(1e21, 3, buf, sizeof(buf)), "1000000000000000000000");
    assert_string_equal(html_number_fmt(2.5, 3, buf, sizeof(buf)), "2.5");
    assert_string_equal(html_number_fmt(3.0, 3, buf, sizeof(buf)), "3");
    assert_string_equal(html_number_fmt(1.23456, 3, buf, sizeof(buf)), "1.235");
    assert_string_equal(html_number_fmt(-0.0001, 3, buf, sizeof(buf)), "0");
    assert_string_equal(html_number_fmt(-12.5, 0, buf, sizeof(buf)), "-12"); /* to even */
    assert_string_equal(html_number_fmt(1200, 0, buf, sizeof(buf)), "1200"); /* zeros kept */
    assert_string_equal(html_number_fmt(NAN, 3, buf, sizeof(buf)), "-");
    assert_string_equal(html_number_fmt(INFINITY, 3, buf, sizeof(buf)), "-");
    assert_null(strpbrk(html_number_fmt(1.7e308, 3, buf, sizeof(buf)), "eE"));
    assert_string_equal(html_number_fmt(1.5, 3, buf, 2), "1"); /* cut to the buffer */
}

static void test_html_util_number_significant_digits(void **state)
{
    char buf[352];
    (void)state;

    assert_string_equal(html_number_sig(48090.4, 4, buf, sizeof(buf)), "48090");
    assert_string_equal(html_number_sig(123.456, 4, buf, sizeof(buf)), "123.5");
    assert_string_equal(html_number_sig(0.0001234, 4, buf, sizeof(buf)), "0.0001234");
    assert_string_equal(html_number_sig(0.05, 4, buf, sizeof(buf)), "0.05");
    assert_string_equal(html_number_sig(0, 4, buf, sizeof(buf)), "0");
    assert_string_equal(html_number_sig(-9.87654, 2, buf, sizeof(buf)), "-9.9");
    assert_string_equal(html_number_sig(1e-12, 4, buf, sizeof(buf)), "0"); /* 9 decimals at most */
}

static void test_html_util_units_from_the_key(void **state)
{
    (void)state;

    assert_for_key("created_unix_s", 1796310000.25, "2026-12-03 15:00:00 UTC");
    assert_for_key("created_unix_s", 0, "0 s"); /* not a time: no 1970 date */
    assert_for_key("total_s", 4.5, "4.5 s");
    assert_for_key("timeout_ms", 250, "250 ms");
    assert_for_key("timeout_ms", 1500, "1.5 s");
    assert_for_key("pods", 3, "3");
    assert_for_key("tiny", 0.0000125, "0.0000125");
    assert_for_key("ratio", 0.12345, "0.1235");
    assert_for_key("bytes", 123456789012345.0, "123456789012345");
    assert_for_key("mean", 2.34567, "2.346");
    assert_for_key(NULL, 1796310000, "1796310000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_util_number_never_exponent),
        cmocka_unit_test(test_html_util_number_significant_digits),
        cmocka_unit_test(test_html_util_units_from_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
