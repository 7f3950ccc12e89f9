/* SPDX-License-Identifier: Apache-2.0 */
/* token.c - see token.h. The file is opened with O_NONBLOCK and checked with fstat before any
 * read, so a FIFO (which would block until a writer appears) or a device is refused at once;
 * the size comes from reading, not from st_size, so a file that grows is still capped. */
#include "base/token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/portable.h"

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* Reads at most cap bytes of fd into buf. Returns the count, or -1 with errno. */
static ssize_t read_upto(int fd, char *buf, size_t cap)
{
    size_t got = 0;

    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* Warns when users other than the file's owner may read it: world-readable, or readable by a
 * group this process does not run as (in a pod, a Secret mounted 0440 with fsGroup = the
 * agent's own group is the expected set-up, not a leak). */
static void warn_if_readable(const char *path, const struct stat *st)
{
    if (!(st->st_mode & S_IROTH) && !((st->st_mode & S_IRGRP) && st->st_gid != getegid()))
        return;
    kp_log(KP_LOG_WARN,
           "token file %s is readable by %s (mode %04o): other users may read the token; "
           "chmod 600 it",
           path, st->st_mode & S_IROTH ? "everyone" : "its group", (unsigned)(st->st_mode & 07777));
}

int token_read(const char *path, char **buf, size_t *len, struct kp_err *err)
{
    char *data = kp_xmalloc(TOKEN_MAX_LEN + 3); /* ours until handed over; +2 for "\r\n" */
    struct stat st;
    ssize_t n = -1;
    size_t got = 0;
    char *nul;
    int fd;
    int rc = -1;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        kp_err_set(err, "cannot open token file %s: %s", path, strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0) {
        kp_err_set(err, "cannot stat token file %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        kp_err_set(err, "token file %s is %s, not a regular file", path, file_kind(st.st_mode));
        goto out;
    }
    n = read_upto(fd, data, TOKEN_MAX_LEN + 3);
    if (n < 0) {
        kp_err_set(err, "cannot read token file %s: %s", path, strerror(errno));
        goto out;
    }
    got = (size_t)n;
    nul = memchr(data, '\0', got);
    if (nul) {
        kp_err_set(err, "token file %s has a NUL byte at offset %zu: a token is text", path,
                   (size_t)(nul - data));
        goto out;
    }
    if (got > 0 && data[got - 1] == '\n')
        got--;
    if (got > 0 && data[got - 1] == '\r' && (size_t)n > got)
        got--;
    if (got == 0) {
        kp_err_set(err, "token file %s is empty", path);
        goto out;
    }
    if (got > TOKEN_MAX_LEN) {
        kp_err_set(err, "token file %s is larger than %d bytes", path, TOKEN_MAX_LEN);
        goto out;
    }
    warn_if_readable(path, &st);
    data[got] = '\0';
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (rc != 0) {
        kp_wipe(data, TOKEN_MAX_LEN + 3);
        free(data);
        return -1;
    }
    *buf = data;
    *len = got;
    return 0;
}
