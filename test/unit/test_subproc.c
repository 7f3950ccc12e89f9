/* SPDX-License-Identifier: Apache-2.0 */
/* test_subproc.c - child processes: output and exit status, the cancel flag, the deadline,
 * the output cap, commands that cannot start, one-line failure messages, background spawn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_err.h"
#include "base/subproc.h"

static void test_subproc_collects_output_and_status(void **state)
{
    const char *argv[] = {"sh", "-c", "printf 'out\\n'; echo 'err line' >&2; exit 3", NULL};
    volatile pid_t slot = 0;
    struct subproc_opts o = {.pid_slot = &slot};
    struct subproc_result r;
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(subproc_run(argv, &o, &r, &err), 0);
    assert_string_equal(r.out, "out\n");
    assert_int_equal(r.out_len, 4);
    assert_non_null(strstr(r.err, "err line"));
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.term_signal, 0);
    assert_false(r.timed_out || r.cancelled || r.out_truncated);
    assert_int_equal(slot, 0); /* cleared once the child is reaped */
    subproc_result_cleanup(&r);
}

static void test_subproc_cancel_flag_kills_the_child(void **state)
{
    const char *argv[] = {"sleep", "30", NULL};
    volatile sig_atomic_t cancel = 1;
    struct subproc_opts o = {.cancel = &cancel};
    struct subproc_result r;

    (void)state;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_true(r.cancelled);
    assert_int_equal(r.exit_code, -1);
    assert_int_equal(r.term_signal, SIGKILL);
    subproc_result_cleanup(&r);
}

static void test_subproc_deadline_kills_the_child(void **state)
{
    const char *argv[] = {"sleep", "30", NULL};
    struct subproc_opts o = {.timeout_ms = 50};
    struct subproc_result r;

    (void)state;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_true(r.timed_out);
    assert_false(r.cancelled);
    assert_int_equal(r.term_signal, SIGKILL);
    subproc_result_cleanup(&r);
}

static void test_subproc_output_cap(void **state)
{
    const char *argv[] = {"yes", NULL};
    struct subproc_opts o = {.max_out = 1000};
    struct subproc_result r;

    (void)state;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_true(r.out_truncated);
    assert_true(r.out_len <= 1000);
    subproc_result_cleanup(&r);
}

static void test_subproc_missing_command(void **state)
{
    const char *argv[] = {"kperf-no-such-command", "x", NULL};
    struct subproc_result r;
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(subproc_run(argv, NULL, &r, &err), 0);
    assert_int_equal(r.exit_code, 127);
    assert_non_null(strstr(r.err, "cannot run kperf-no-such-command"));
    subproc_result_cleanup(&r);
    assert_int_equal(subproc_check(argv, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "kperf-no-such-command x: cannot run"));
}

static void test_subproc_check_reports_first_stderr_line(void **state)
{
    const char *fails[] = {"sh", "-c", "echo 'Error: bad thing' >&2; echo '  ^^^' >&2; exit 2",
                           NULL};
    const char *silent[] = {"false", NULL};
    const char *ok[] = {"true", NULL};
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(subproc_check(ok, &err), 0);
    assert_int_equal(subproc_check(fails, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), ": Error: bad thing"));
    assert_null(strchr(kp_err_msg(&err), '\n'));
    assert_int_equal(subproc_check(silent, &err), -1);
    assert_string_equal(kp_err_msg(&err), "false: exit status 1");
}

static void test_subproc_spawn_and_stop(void **state)
{
    char dir[] = "/tmp/kperf-test-subproc-XXXXXX";
    const char *argv[] = {"sleep", "30", NULL};
    const char *echo[] = {"sh", "-c", "echo started", NULL};
    char *log;
    pid_t pid = 0;
    struct kp_err err = {{0}};
    FILE *f;
    char line[64] = "";

    (void)state;
    assert_non_null(mkdtemp(dir));
    log = malloc(strlen(dir) + 16);
    sprintf(log, "%s/log", dir);
    assert_int_equal(subproc_spawn(argv, log, &pid, &err), 0);
    assert_true(pid > 0);
    assert_true(subproc_alive(pid));
    assert_int_equal(subproc_stop(pid, 2000), 0);
    assert_false(subproc_alive(pid));
    assert_int_equal(subproc_stop(0, 10), 0); /* nothing to stop */
    /* output goes to the log */
    assert_int_equal(subproc_spawn(echo, log, &pid, &err), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    f = fopen(log, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    fclose(f);
    assert_string_equal(line, "started\n");
    unlink(log);
    rmdir(dir);
    free(log);
}

static void test_subproc_join(void **state)
{
    const char *argv[] = {"ip", "netns", "add", "x", NULL};
    char *s = subproc_join(argv);

    (void)state;
    assert_string_equal(s, "ip netns add x");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subproc_collects_output_and_status),
        cmocka_unit_test(test_subproc_cancel_flag_kills_the_child),
        cmocka_unit_test(test_subproc_deadline_kills_the_child),
        cmocka_unit_test(test_subproc_output_cap),
        cmocka_unit_test(test_subproc_missing_command),
        cmocka_unit_test(test_subproc_check_reports_first_stderr_line),
        cmocka_unit_test(test_subproc_spawn_and_stop),
        cmocka_unit_test(test_subproc_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
