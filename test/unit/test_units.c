/* SPDX-License-Identifier: Apache-2.0 */
/* test_units.c - duration, size, rate and percentage parsing, and the human formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/test_assert.h"

#include "base/kp_err.h"
#include "base/units.h"

static void test_units_durations(void **state)
{
    static const struct {
        const char *in;
        uint64_t ms;
    } ok[] = {{"10s", 10000},  {"2m", 120000}, {"500ms", 500}, {"1.5s", 1500},  {"10", 10000},
              {"1h", 3600000}, {"0s", 0},      {"2000us", 2},  {"3min", 180000}};
    uint64_t ms;
    struct kp_err err;
    (void)state;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        kp_err_clear(&err);
        assert_int_equal(units_parse_duration_ms(ok[i].in, &ms, &err), 0);
        assert_int_equal(ms, ok[i].ms);
    }
}

static void test_units_bad_durations(void **state)
{
    static const char *const bad[] = {"", "-1s", "abc", "10x", "s", "1e999s", "31d", "800h"};
    uint64_t ms = 7;
    struct kp_err err;
    (void)state;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kp_err_clear(&err);
        assert_int_equal(units_parse_duration_ms(bad[i], &ms, &err), -1);
        assert_true(kp_err_is_set(&err));
    }
}

static void test_units_sizes(void **state)
{
    uint64_t b;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(units_parse_size("64", &b, &err), 0);
    assert_int_equal(b, 64);
    assert_int_equal(units_parse_size("1K", &b, &err), 0);
    assert_int_equal(b, 1024);
    assert_int_equal(units_parse_size("128KiB", &b, &err), 0);
    assert_int_equal(b, 131072);
    assert_int_equal(units_parse_size("1M", &b, &err), 0);
    assert_int_equal(b, 1048576);
    assert_int_equal(units_parse_size("1G", &b, &err), 0);
    assert_int_equal(b, 1073741824ull);
    assert_int_equal(units_parse_size("0.5", &b, &err), -1);
    assert_int_equal(units_parse_size("-1", &b, &err), -1);
    assert_int_equal(units_parse_size("1Q", &b, &err), -1);
}

static void test_units_rates(void **state)
{
    uint64_t bps;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(units_parse_rate_bps("1G", &bps, &err), 0);
    assert_int_equal(bps, 1000000000ull);
    assert_int_equal(units_parse_rate_bps("500M", &bps, &err), 0);
    assert_int_equal(bps, 500000000ull);
    assert_int_equal(units_parse_rate_bps("10Kbit", &bps, &err), 0);
    assert_int_equal(bps, 10000);
    assert_int_equal(units_parse_rate_bps("2.5Gbps", &bps, &err), 0);
    assert_int_equal(bps, 2500000000ull);
    assert_int_equal(units_parse_rate_bps("fast", &bps, &err), -1);
    assert_int_equal(units_parse_rate_bps("1P", &bps, &err), -1);
}

static void test_units_percent(void **state)
{
    double p;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(units_parse_percent("5%", &p, &err), 0);
    assert_double_exact(p, 5.0);
    assert_int_equal(units_parse_percent("2.5", &p, &err), 0);
    assert_double_exact(p, 2.5);
    assert_int_equal(units_parse_percent("1001", &p, &err), -1);
    assert_int_equal(units_parse_percent("x%", &p, &err), -1);
}

static void test_units_formats(void **state)
{
    char buf[32];
    (void)state;

    assert_string_equal(units_format_duration(850, buf, sizeof(buf)), "850ms");
    assert_string_equal(units_format_duration(12300, buf, sizeof(buf)), "12.3s");
    assert_string_equal(units_format_duration(125000, buf, sizeof(buf)), "2m05s");
    assert_string_equal(units_format_duration(3720000, buf, sizeof(buf)), "1h02m");
    assert_string_equal(units_format_rate(13.7e9, buf, sizeof(buf)), "13.70 Gbit/s");
    assert_string_equal(units_format_rate(940e6, buf, sizeof(buf)), "940.0 Mbit/s");
    assert_string_equal(units_format_rate(12, buf, sizeof(buf)), "12 bit/s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_durations), cmocka_unit_test(test_units_bad_durations),
        cmocka_unit_test(test_units_sizes),     cmocka_unit_test(test_units_rates),
        cmocka_unit_test(test_units_percent),   cmocka_unit_test(test_units_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
