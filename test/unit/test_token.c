/* SPDX-License-Identifier: Apache-2.0 */
/* test_token.c - token files are read exactly: one trailing newline removed and nothing else,
 * NUL bytes, empty and oversized files refused, a FIFO, directory or device refused at once
 * (without blocking), and a file others may read accepted with a warning. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/token.h"

static char dir[64];
static char path[128];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/kperf-test-token.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    unlink(path);
    return rmdir(dir);
}

/* Writes len bytes of data to a fresh file with mode; sets path. */
static void write_file(const char *data, size_t len, mode_t mode)
{
    int fd;

    snprintf(path, sizeof(path), "%s/token", dir);
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* token_read on path: returns its rc; on success *tok is the token (caller frees). */
static int read_it(char **tok, size_t *len, struct kp_err *err)
{
    kp_err_clear(err);
    return token_read(path, tok, len, err);
}

static void test_token_one_trailing_newline_removed_nothing_else(void **state)
{
    static const struct {
        const char *file;
        const char *want;
    } cases[] = {
        {"abc", "abc"},       {"abc\n", "abc"},     {"abc\r\n", "abc"},
        {"abc\n\n", "abc\n"}, {" abc \n", " abc "}, {"\tabc", "\tabc"},
        {"a\nb\n", "a\nb"},   {"abc\r", "abc\r"},   {"x", "x"},
    };
    struct kp_err err;
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *tok = NULL;
        size_t len = 0;
        write_file(cases[i].file, strlen(cases[i].file), 0600);
        assert_int_equal(read_it(&tok, &len, &err), 0);
        assert_string_equal(tok, cases[i].want);
        assert_int_equal(len, strlen(cases[i].want));
        kp_free_secret(tok);
    }
}

static void test_token_nul_byte_refused(void **state)
{
    char *tok = (char *)1;
    size_t len = 9;
    struct kp_err err;
    (void)state;

    /* "AB\0..." was once keyed as "AB" */
    write_file("AB\0CD\n", 6, 0600);
    assert_int_equal(read_it(&tok, &len, &err), -1);
    assert_null(tok);
    assert_int_equal(len, 0);
    assert_non_null(strstr(kp_err_msg(&err), "has a NUL byte at offset 2"));
}

static void test_token_empty_and_oversized_refused(void **state)
{
    char big[TOKEN_MAX_LEN + 2];
    char *tok = NULL;
    size_t len = 0;
    struct kp_err err;
    (void)state;

    write_file("\n", 1, 0600);
    assert_int_equal(read_it(&tok, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "is empty"));
    write_file("", 0, 0600);
    assert_int_equal(read_it(&tok, &len, &err), -1);
    memset(big, 'k', sizeof(big));
    big[TOKEN_MAX_LEN] = '\n';
    write_file(big, TOKEN_MAX_LEN + 1, 0600); /* exactly the cap, plus its newline */
    assert_int_equal(read_it(&tok, &len, &err), 0);
    assert_int_equal(len, TOKEN_MAX_LEN);
    kp_free_secret(tok);
    big[TOKEN_MAX_LEN] = 'k';
    write_file(big, TOKEN_MAX_LEN + 1, 0600);
    assert_int_equal(read_it(&tok, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "larger than 4096 bytes"));
}

/* A FIFO with no writer would block a plain open() forever: refused at once instead. */
static void test_token_fifo_directory_and_device_refused_at_once(void **state)
{
    char *tok = NULL;
    size_t len = 0;
    struct kp_err err;
    (void)state;

    snprintf(path, sizeof(path), "%s/token", dir);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(read_it(&tok, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "is a FIFO, not a regular file"));
    unlink(path);
    kp_err_clear(&err);
    assert_int_equal(token_read(dir, &tok, &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "is a directory"));
    kp_err_clear(&err);
    assert_int_equal(token_read("/dev/null", &tok, &len, &err), -1);
    assert_string_equal(kp_err_msg(&err),
                        "token file /dev/null is a character device, not a regular file");
    kp_err_clear(&err);
    assert_int_equal(token_read("/nonexistent/kperf-token", &tok, &len, &err), -1);
    assert_string_equal(
        kp_err_msg(&err),
        "cannot open token file /nonexistent/kperf-token: No such file or directory");
}

/* Readable by others: still accepted (the warning goes to stderr, checked by the e2e test). */
static void test_token_world_readable_accepted(void **state)
{
    char *tok = NULL;
    size_t len = 0;
    struct kp_err err;
    (void)state;

    write_file("shared\n", 7, 0644);
    assert_int_equal(read_it(&tok, &len, &err), 0);
    assert_string_equal(tok, "shared");
    kp_free_secret(tok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_one_trailing_newline_removed_nothing_else),
        cmocka_unit_test(test_token_nul_byte_refused),
        cmocka_unit_test(test_token_empty_and_oversized_refused),
        cmocka_unit_test(test_token_fifo_directory_and_device_refused_at_once),
        cmocka_unit_test(test_token_world_readable_accepted),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
