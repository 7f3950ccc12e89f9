/* SPDX-License-Identifier: Apache-2.0 */
/* test_report_file.c - the bounded reader of report files (report_file.h): a pipe, a FIFO and
 * a regular file are read up to the cap and no further; exactly the cap is accepted; empty
 * inputs give zero bytes (and report_load a clear error); a file whose st_size says nothing
 * (/proc) is read whole; directories are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/kp_err.h"
#include "controller/report/report.h"
#include "controller/report/report_file.h"

#define CAP 1000

/* Writes n bytes of 'x' to fd in small writes, then closes it; stops quietly when the reader
 * has gone (EPIPE). */
static void write_n(int fd, size_t n)
{
    char chunk[64];

    memset(chunk, 'x', sizeof(chunk));
    signal(SIGPIPE, SIG_IGN);
    while (n > 0) {
        size_t k = n < sizeof(chunk) ? n : sizeof(chunk);
        ssize_t w = write(fd, chunk, k);
        if (w <= 0)
            break;
        n -= (size_t)w;
    }
    close(fd);
}

/* Reads n bytes written by a child into a pipe, through its /dev/fd path. */
static int read_pipe(size_t n, char **buf, size_t *len, struct kp_err *err)
{
    int p[2], rc, status;
    char path[64];
    pid_t pid;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        write_n(p[1], n);
        _exit(0);
    }
    close(p[1]);
    snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
    rc = report_file_read(path, CAP, buf, len, err);
    close(p[0]); /* the child, if still writing, gets EPIPE and ends */
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return rc;
}

static void test_pipe_larger_than_cap_is_refused(void **state)
{
    struct kp_err err = {{0}};
    char *buf;
    size_t len;
    (void)state;

    assert_int_equal(read_pipe(CAP + 1, &buf, &len, &err), -1);
    assert_null(buf);
    assert_non_null(strstr(kp_err_msg(&err), "more than 1000 bytes"));
    assert_null(strchr(kp_err_msg(&err), '\n'));
    /* far larger: the read stops at the cap, the writer is cut off */
    assert_int_equal(read_pipe(50 * CAP, &buf, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "more than 1000 bytes"));
}

static void test_pipe_of_exactly_the_cap_is_read(void **state)
{
    struct kp_err err = {{0}};
    char *buf;
    size_t len;
    (void)state;

    assert_int_equal(read_pipe(CAP, &buf, &len, &err), 0);
    assert_int_equal(len, CAP);
    assert_int_equal(buf[0], 'x');
    assert_int_equal(buf[CAP - 1], 'x');
    assert_int_equal(buf[CAP], '\0');
    free(buf);
}

static void test_empty_inputs(void **state)
{
    struct kp_err err = {{0}};
    char path[] = "/tmp/kperf-rfile-XXXXXX", *buf;
    size_t len = 99;
    int fd = mkstemp(path);
    (void)state;

    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(report_file_read(path, CAP, &buf, &len, &err), 0);
    assert_int_equal(len, 0);
    assert_string_equal(buf, "");
    free(buf);
    assert_int_equal(read_pipe(0, &buf, &len, &err), 0);
    assert_int_equal(len, 0);
    free(buf);
    assert_null(report_load(path, &err));
    assert_non_null(strstr(kp_err_msg(&err), "empty file, not a kperf report"));
    unlink(path);
}

static void test_fifo(void **state)
{
    struct kp_err err = {{0}};
    char dir[] = "/tmp/kperf-fifo-XXXXXX", path[128], *buf;
    size_t len, sizes[] = {CAP, CAP + 1};
    (void)state;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/report.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    for (size_t i = 0; i < 2; i++) {
        int status, rc;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int fd = open(path, O_WRONLY); /* blocks until the reader opens */
            if (fd < 0)
                _exit(1);
            write_n(fd, sizes[i]);
            _exit(0);
        }
        rc = report_file_read(path, CAP, &buf, &len, &err);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (sizes[i] <= CAP) {
            assert_int_equal(rc, 0);
            assert_int_equal(len, sizes[i]);
            free(buf);
        } else {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(kp_err_msg(&err), "more than 1000 bytes"));
        }
    }
    unlink(path);
    rmdir(dir);
}

static void test_regular_files(void **state)
{
    struct kp_err err = {{0}};
    char path[] = "/tmp/kperf-rfile-XXXXXX", *buf;
    size_t len;
    int fd = mkstemp(path);
    (void)state;

    assert_true(fd >= 0);
    write_n(fd, CAP);
    assert_int_equal(report_file_read(path, CAP, &buf, &len, &err), 0);
    assert_int_equal(len, CAP);
    free(buf);
    fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    write_n(fd, 1);
    assert_int_equal(report_file_read(path, CAP, &buf, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), path));
    assert_non_null(strstr(kp_err_msg(&err), "more than 1000 bytes"));
    unlink(path);
    /* st_size 0, content anyway: read until the end, not to st_size */
    assert_int_equal(report_file_read("/proc/self/status", 1 << 20, &buf, &len, &err), 0);
    assert_true(len > 0);
    assert_non_null(strstr(buf, "Name:"));
    free(buf);
    assert_int_equal(report_file_read("/tmp", CAP, &buf, &len, &err), -1);
    assert_string_equal(kp_err_msg(&err), "/tmp is a directory, not a report file");
    assert_int_equal(report_file_read("/nonexistent/r.json", CAP, &buf, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "cannot read /nonexistent/r.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipe_larger_than_cap_is_refused),
        cmocka_unit_test(test_pipe_of_exactly_the_cap_is_read),
        cmocka_unit_test(test_empty_inputs),
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_regular_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
