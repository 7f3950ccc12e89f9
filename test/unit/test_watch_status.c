/* SPDX-License-Identifier: Apache-2.0 */
/* test_watch_status.c - the live status phrase of `kperf watch` from a probe's log: no log or
 * no status line yet, the latest of several lines, the worst state over the kinds, the latest
 * outage, a line still being written, other log lines around it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd/kperf/watch_status.h"

static char path[64];

static const char *phrase(const char *log)
{
    static char buf[160];
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/kperf-watch-status.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(log, f);
    fclose(f);
    watch_status_phrase(path, buf, sizeof(buf));
    unlink(path);
    return buf;
}

static void no_log_or_no_status(void **state)
{
    char buf[64];
    (void)state;

    watch_status_phrase("/nonexistent/kperf/probe.log", buf, sizeof(buf));
    assert_string_equal(buf, "starting");
    assert_string_equal(phrase("kperf-agent: probing 198.18.2.2 port 5201\n"), "starting");
}

static void latest_line_wins(void **state)
{
    (void)state;
    assert_string_equal(phrase("kperf-agent: probing 198.18.2.2 port 5201\n"
                               "kperf-agent: status udp ok 50 0 tcp ok 50 0 connect ok 5 0 "
                               "last 0.000\n"
                               "kperf-agent: status udp ok 100 0 tcp ok 100 0 connect ok 10 0 "
                               "last 0.000\n"),
                        "ok     udp lost 0 of 100");
}

static void worst_state_and_outage(void **state)
{
    (void)state;
    assert_string_equal(phrase("kperf-agent: status udp ok 300 110 tcp down 300 150 connect "
                               "lossy 30 11 last 1.110\n"),
                        "DOWN   udp lost 110 of 300, last outage 1.110 s");
    assert_string_equal(phrase("kperf-agent: status udp lossy 300 110 tcp ok 300 111 connect "
                               "ok 30 11 last 0.000\n"),
                        "lossy  udp lost 110 of 300");
}

static void partial_line_and_warnings(void **state)
{
    (void)state;
    assert_string_equal(phrase("kperf-agent: status udp ok 100 0 tcp ok 100 0 connect ok 10 0 "
                               "last 0.000\n"
                               "kperf-agent: warning: something else\n"
                               "kperf-agent: status udp down 150 50 tc"),
                        "ok     udp lost 0 of 100");
}

static void only_the_tail_is_read(void **state)
{
    size_t cap = 64 * 1024;
    char *big = malloc(cap);
    size_t n = 0;
    (void)state;

    assert_non_null(big);
    while (n + 100 < cap - 200)
        n += (size_t)snprintf(big + n, cap - n, "kperf-agent: status udp ok 1 0 last 0.000\n");
    snprintf(big + n, cap - n, "kperf-agent: status udp down 9 8 last 0.000\n");
    assert_string_equal(phrase(big), "DOWN   udp lost 8 of 9");
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_log_or_no_status),    cmocka_unit_test(latest_line_wins),
        cmocka_unit_test(worst_state_and_outage), cmocka_unit_test(partial_line_and_warnings),
        cmocka_unit_test(only_the_tail_is_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
