/* SPDX-License-Identifier: Apache-2.0 */
/* test_progress.c - progress lines with a fake clock: plain lines off a terminal, the status
 * line (n of N, step and run times), the final summary, and quiet mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/progress.h"

static uint64_t fake_clock(void *ctx)
{
    return *(uint64_t *)ctx;
}

struct fixture {
    uint64_t now_ms;
    char *buf;
    size_t len;
    FILE *out;
    struct progress *p;
};

static struct fixture *fixture_new(bool tty, bool quiet, size_t total, uint64_t expected_ms)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct progress_opts o = {
        .tty = tty,
        .quiet = quiet,
        .total = total,
        .expected_total_ms = expected_ms,
        .clock = fake_clock,
    };

    f->now_ms = 1000000;
    f->out = open_memstream(&f->buf, &f->len);
    o.out = f->out;
    o.clock_ctx = &f->now_ms;
    f->p = progress_new(&o);
    return f;
}

/* Frees the progress and returns everything it printed (caller frees). */
static char *fixture_done(struct fixture *f)
{
    char *s;

    progress_free(f->p);
    fclose(f->out);
    s = f->buf;
    free(f);
    return s;
}

static void test_progress_plain_lines_off_a_terminal(void **state)
{
    struct fixture *f = fixture_new(false, false, 4, 40000);
    char *out;

    (void)state;
    progress_phase(f->p, "preparing the %s backend", "local");
    progress_begin(f->p, "pod-to-pod same-node TCP_RR", 1, 10000);
    f->now_ms += 10200;
    progress_end(f->p, true, "p50 21.0 us");
    progress_begin(f->p, "pod-to-pod same-node TCP_STREAM", 1, 10000);
    f->now_ms += 3000;
    progress_end(f->p, false, "connection refused");
    progress_finish(f->p, "done");
    out = fixture_done(f);
    assert_non_null(strstr(out, "kperf: preparing the local backend\n"));
    assert_non_null(strstr(out, "kperf: [1/4] pod-to-pod same-node TCP_RR: running (~10.0s)\n"));
    assert_non_null(strstr(out, "kperf: [1/4] pod-to-pod same-node TCP_RR: p50 21.0 us (10.2s)\n"));
    assert_non_null(strstr(out, "kperf: [2/4] pod-to-pod same-node TCP_STREAM: FAILED: "
                                "connection refused (3.0s)\n"));
    /* only the successful measurement counts as measured; total time from the start */
    assert_non_null(strstr(out, "kperf: 1 of 4 measurements in 13.2s: done\n"));
    assert_null(strchr(out, '\r')); /* no terminal codes in logs */
    assert_null(strstr(out, "\033["));
    free(out);
}

static void test_progress_status_line_shows_step_and_run_times(void **state)
{
    struct fixture *f = fixture_new(false, false, 6, 60000);
    char status[256];

    (void)state;
    progress_begin(f->p, "a", 1, 10000);
    f->now_ms += 10000;
    progress_end(f->p, true, "");
    progress_begin(f->p, "host-to-host other-node TCP_STREAM", 2, 20000);
    f->now_ms += 4000;
    progress_format_status(f->p, status, sizeof(status));
    /* second step, 4 s into ~20 s; run 14 s, 60 - 10 - 4 = 46 s left */
    assert_non_null(strstr(status, "[2/6] host-to-host other-node TCP_STREAM"));
    assert_non_null(strstr(status, "4.0s of ~20.0s"));
    assert_non_null(strstr(status, "run 14.0s"));
    assert_non_null(strstr(status, "~46.0s left"));
    f->now_ms += 20000;
    progress_end(f->p, true, "");
    progress_begin(f->p, "c", 1, 10000);
    progress_format_status(f->p, status, sizeof(status));
    assert_non_null(strstr(status, "[4/6]")); /* the 2-measurement step advanced by 2 */
    progress_end(f->p, true, "");
    free(fixture_done(f));
}

static void test_progress_total_can_change(void **state)
{
    struct fixture *f = fixture_new(false, false, 10, 100000);
    char status[256];
    char *out;

    (void)state;
    progress_set_total(f->p, 8, 80000); /* a backend skipped a group */
    progress_add_total(f->p, 1, 10000); /* --samples auto wanted one more */
    progress_begin(f->p, "x", 1, 10000);
    progress_format_status(f->p, status, sizeof(status));
    assert_non_null(strstr(status, "[1/9]"));
    progress_end(f->p, true, "");
    progress_finish(f->p, NULL);
    out = fixture_done(f);
    assert_non_null(strstr(out, "1 of 9 measurements"));
    free(out);
}

static void test_progress_terminal_redraws_and_clears(void **state)
{
    struct fixture *f = fixture_new(true, false, 1, 1000);
    char *out;

    (void)state;
    progress_begin(f->p, "pod-to-pod same-node TCP_RR", 1, 1000);
    f->now_ms += 1000;
    progress_end(f->p, true, "p50 20.0 us");
    progress_finish(f->p, "done");
    out = fixture_done(f);
    /* the status line is drawn in place and cleared before permanent lines */
    assert_non_null(strstr(out, "\r\033[K[1/1] pod-to-pod same-node TCP_RR"));
    assert_non_null(strstr(out, "[1/1] pod-to-pod same-node TCP_RR"));
    assert_non_null(strstr(out, "p50 20.0 us"));
    assert_non_null(strstr(out, "1 of 1 measurements in 1.0s: done\n"));
    free(out);
}

static void test_progress_quiet_prints_nothing(void **state)
{
    struct fixture *f = fixture_new(true, true, 1, 1000);
    char *out;

    (void)state;
    progress_phase(f->p, "preparing");
    progress_begin(f->p, "x", 1, 1000);
    progress_end(f->p, false, "boom");
    progress_finish(f->p, "done");
    out = fixture_done(f);
    assert_string_equal(out, "");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_plain_lines_off_a_terminal),
        cmocka_unit_test(test_progress_status_line_shows_step_and_run_times),
        cmocka_unit_test(test_progress_total_can_change),
        cmocka_unit_test(test_progress_terminal_redraws_and_clears),
        cmocka_unit_test(test_progress_quiet_prints_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
