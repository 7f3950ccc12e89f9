/* SPDX-License-Identifier: Apache-2.0 */
/* test_clock.c - the clock module: timespec <-> ns conversions, the monotonic clock never going
 * back and its ms reading agreeing with the ns one, and the realtime deadline being normalised
 * and ahead. No sleeps, no timing assertions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/clock.h"

static void test_clock_conversions(void **state)
{
    struct timespec ts = {.tv_sec = 3, .tv_nsec = 250000000};
    struct timespec back;
    (void)state;

    assert_int_equal(clock_ts_to_ns(&ts), 3250000000ull);
    back = clock_ns_to_ts(3250000000ull);
    assert_int_equal(back.tv_sec, 3);
    assert_int_equal(back.tv_nsec, 250000000);
    back = clock_ns_to_ts(999999999ull);
    assert_int_equal(back.tv_sec, 0);
    assert_int_equal(back.tv_nsec, 999999999);
    back = clock_ns_to_ts(1000000000ull);
    assert_int_equal(back.tv_sec, 1);
    assert_int_equal(back.tv_nsec, 0);
    /* beyond 32 bits of seconds' worth of ns */
    back = clock_ns_to_ts(5000000000000000123ull);
    assert_int_equal(back.tv_sec, 5000000000);
    assert_int_equal(back.tv_nsec, 123);
    assert_int_equal(clock_ts_to_ns(&back), 5000000000000000123ull);
}

static void test_clock_monotonic_non_decreasing(void **state)
{
    uint64_t prev = clock_now_ns();
    (void)state;

    assert_true(prev > 0);
    for (int i = 0; i < 100000; i++) {
        uint64_t now = clock_now_ns();
        assert_true(now >= prev);
        prev = now;
    }
}

static void test_clock_ms_agrees_with_ns(void **state)
{
    uint64_t ns_before, ms, ns_after;
    (void)state;

    ns_before = clock_now_ns();
    ms = clock_now_ms();
    ns_after = clock_now_ns();
    assert_in_range(ms, ns_before / CLOCK_NS_PER_MS, ns_after / CLOCK_NS_PER_MS);
}

static void test_clock_realtime_deadline(void **state)
{
    struct timespec now, at;
    (void)state;

    clock_gettime(CLOCK_REALTIME, &now);
    at = clock_realtime_in_ms(1750);
    assert_in_range(at.tv_nsec, 0, 999999999);
    /* at least 1.75 s after a realtime reading taken before it */
    assert_true(clock_ts_to_ns(&at) >= clock_ts_to_ns(&now) + 1750 * CLOCK_NS_PER_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_conversions),
        cmocka_unit_test(test_clock_monotonic_non_decreasing),
        cmocka_unit_test(test_clock_ms_agrees_with_ns),
        cmocka_unit_test(test_clock_realtime_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
