/* SPDX-License-Identifier: Apache-2.0 */
/* report_file.c - bounded whole-file reads; see report_file.h. */
#include "controller/report/report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"

#define FIRST_CHUNK (64u * 1024u)

/* "256 MiB" when n is a whole number of MiB, else "N bytes". */
static void size_text(size_t n, char *out, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(out, len, "%zu MiB", n >> 20);
    else
        snprintf(out, len, "%zu bytes", n);
}

int report_file_read(const char *path, size_t cap, char **buf, size_t *len, struct kp_err *err)
{
    struct stat st;
    char *b = NULL, limit[48];
    size_t n = 0, size = 0;
    int fd;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kp_err_set(err, "cannot read %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        kp_err_set(err, "cannot read %s: %s", path, strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        kp_err_set(err, "%s is a directory, not a report file", path);
        goto fail;
    }
    /* st_size is a hint for the first allocation only (a pipe says 0, /proc files lie) */
    for (;;) {
        ssize_t r;
        if (n == size) {
            size_t want = size ? size * 2 : FIRST_CHUNK;
            if (S_ISREG(st.st_mode) && size == 0 && st.st_size > 0 && (size_t)st.st_size < cap)
                want = (size_t)st.st_size + 1; /* +1: one read more sees the end */
            if (want > cap + 1)
                want = cap + 1;
            b = kp_xrealloc(b, want + 1); /* +1 for the NUL */
            size = want;
        }
        r = read(fd, b + n, size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            kp_err_set(err, "cannot read %s: %s", path, strerror(errno));
            goto fail;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > cap) {
            size_text(cap, limit, sizeof(limit));
            kp_err_set(err, "%s: more than %s, the limit of a report file: not a kperf report",
                       path, limit);
            goto fail;
        }
    }
    close(fd);
    if (!b)
        b = kp_xmalloc(1);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
fail:
    close(fd);
    free(b);
    return -1;
}

int report_make_dirs(const char *dir, struct kp_err *err)
{
    char *p = kp_xstrdup(dir);
    int rc = 0;

    for (char *s = p + 1; rc == 0; s++) {
        bool end = *s == 0;
        if (*s != '/' && !end)
            continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            rc = kp_err_set(err, "cannot create directory %s: %s", p, strerror(errno));
        if (end)
            break;
        *s = '/';
    }
    free(p);
    return rc;
}
