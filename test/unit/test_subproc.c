/* SPDX-License-Identifier: Apache-2.0 */
/* test_subproc.c - child processes: output and exit status, the cancel flags, the deadline,
 * the output cap, commands that cannot start, one-line failure messages, background spawn, and
 * the options exec credential plugins use: extra environment, stdin from /dev/null, stderr
 * left to us, our process group, and a grandchild that keeps the pipe open after a kill. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
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

static void test_subproc_second_cancel_flag(void **state)
{
    const char *argv[] = {"sleep", "30", NULL};
    volatile sig_atomic_t first = 0, second = 1;
    struct subproc_opts o = {.cancel = &first, .cancel_also = &second};
    struct subproc_result r;

    (void)state;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_true(r.cancelled);
    assert_int_equal(r.term_signal, SIGKILL);
    subproc_result_cleanup(&r);
}

static void test_subproc_env_adds_and_replaces(void **state)
{
    const char *argv[] = {
        "sh", "-c", "echo \"$KPERF_T_A $KPERF_T_B $KPERF_T_C $(env | grep -c ^KPERF_T_A=)\"", NULL};
    const char *env[] = {"KPERF_T_A=theirs", "KPERF_T_C=new", NULL};
    struct subproc_opts o = {.env = env};
    struct subproc_result r;

    (void)state;
    setenv("KPERF_T_A", "ours", 1);
    setenv("KPERF_T_B", "kept", 1);
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_string_equal(r.out, "theirs kept new 1\n");
    subproc_result_cleanup(&r);
    /* without env the child sees ours */
    o.env = NULL;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_string_equal(r.out, "ours kept  1\n");
    subproc_result_cleanup(&r);
    unsetenv("KPERF_T_A");
    unsetenv("KPERF_T_B");
}

static void test_subproc_stdin_null(void **state)
{
    const char *argv[] = {"sh", "-c", "if read -r line; then echo got; else echo eof; fi", NULL};
    struct subproc_opts o = {.stdin_null = true};
    struct subproc_result r;
    int fds[2], saved = dup(STDIN_FILENO);

    (void)state;
    /* our stdin is a pipe with a line waiting: only the child without stdin_null may read it */
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "x\n", 2), 2);
    close(fds[1]);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_string_equal(r.out, "eof\n");
    subproc_result_cleanup(&r);
    o.stdin_null = false;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_string_equal(r.out, "got\n");
    subproc_result_cleanup(&r);
    dup2(saved, STDIN_FILENO);
    close(saved);
}

/* Runs argv with stderr_inherit while our stderr is a temporary file; returns what it got. */
static char *run_with_stderr_to_file(const char *const argv[], struct subproc_result *r)
{
    char path[] = "/tmp/kperf-test-subproc-err-XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    struct subproc_opts o = {.stderr_inherit = true};
    char *text = calloc(1, 256);

    assert_true(fd >= 0);
    dup2(fd, STDERR_FILENO);
    assert_int_equal(subproc_run(argv, &o, r, NULL), 0);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_true(pread(fd, text, 255, 0) >= 0);
    close(fd);
    unlink(path);
    return text;
}

static void test_subproc_stderr_inherit(void **state)
{
    const char *argv[] = {"sh", "-c", "echo to-user >&2; echo out", NULL};
    const char *missing[] = {"kperf-no-such-command", NULL};
    struct subproc_result r;
    char *text;

    (void)state;
    text = run_with_stderr_to_file(argv, &r);
    assert_string_equal(text, "to-user\n");
    assert_string_equal(r.err, ""); /* not captured */
    assert_string_equal(r.out, "out\n");
    subproc_result_cleanup(&r);
    free(text);
    /* a command that cannot run: errno in the result, nothing printed on the user's stderr */
    text = run_with_stderr_to_file(missing, &r);
    assert_string_equal(text, "");
    assert_int_equal(r.exec_errno, ENOENT);
    assert_int_equal(r.exit_code, 127);
    subproc_result_cleanup(&r);
    free(text);
}

static void test_subproc_exec_errno(void **state)
{
    const char *missing[] = {"kperf-no-such-command", NULL};
    const char *not_exec[] = {"/dev/null", NULL};
    const char *ok[] = {"true", NULL};
    struct subproc_result r;

    (void)state;
    assert_int_equal(subproc_run(missing, NULL, &r, NULL), 0);
    assert_int_equal(r.exec_errno, ENOENT);
    subproc_result_cleanup(&r);
    assert_int_equal(subproc_run(not_exec, NULL, &r, NULL), 0);
    assert_int_equal(r.exec_errno, EACCES);
    assert_non_null(strstr(r.err, "cannot run /dev/null"));
    subproc_result_cleanup(&r);
    assert_int_equal(subproc_run(ok, NULL, &r, NULL), 0);
    assert_int_equal(r.exec_errno, 0);
    assert_int_equal(r.exit_code, 0);
    subproc_result_cleanup(&r);
}

static void test_subproc_process_group(void **state)
{
    /* field 5 of /proc/<pid>/stat is the process group */
    const char *argv[] = {"sh", "-c", "read -r a b c d pgrp rest < /proc/$$/stat; echo $pgrp",
                          NULL};
    struct subproc_opts o = {.same_pgroup = true};
    struct subproc_result r;
    char ours[32];

    (void)state;
    snprintf(ours, sizeof(ours), "%d\n", (int)getpgrp());
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_string_equal(r.out, ours);
    subproc_result_cleanup(&r);
    o.same_pgroup = false;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_string_not_equal(r.out, ours);
    subproc_result_cleanup(&r);
}

static void test_subproc_kill_does_not_wait_for_a_grandchild(void **state)
{
    /* the grandchild shares our group (same_pgroup), so the kill misses it and it keeps
     * stdout open: subproc_run must still return */
    const char *argv[] = {"sh", "-c", "sleep 30 & echo $!; exec sleep 30", NULL};
    struct subproc_opts o = {.timeout_ms = 200, .same_pgroup = true};
    struct subproc_result r;
    long grandchild;

    (void)state;
    assert_int_equal(subproc_run(argv, &o, &r, NULL), 0);
    assert_true(r.timed_out);
    grandchild = strtol(r.out, NULL, 10);
    assert_true(grandchild > 1);
    assert_int_equal(kill((pid_t)grandchild, SIGKILL), 0); /* it was still there */
    subproc_result_cleanup(&r);
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
        cmocka_unit_test(test_subproc_second_cancel_flag),
        cmocka_unit_test(test_subproc_env_adds_and_replaces),
        cmocka_unit_test(test_subproc_stdin_null),
        cmocka_unit_test(test_subproc_stderr_inherit),
        cmocka_unit_test(test_subproc_exec_errno),
        cmocka_unit_test(test_subproc_process_group),
        cmocka_unit_test(test_subproc_kill_does_not_wait_for_a_grandchild),
        cmocka_unit_test(test_subproc_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
