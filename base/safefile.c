/* SPDX-License-Identifier: Apache-2.0 */
/* safefile.c - all-or-nothing file writes under a folder lock (safefile.h). */
#include "base/safefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/portable.h"

#define TMP_HEX      16   /* random hex digits in a temporary name */
#define STALE_S      3600 /* unlocked folders: a leftover this old has no live writer */
#define LOCK_POLL_MS 20

struct safefile {
    int dfd;     /* the folder, flocked when locked */
    bool locked; /* false where the filesystem has no flock */
    char *dir;   /* ours: as given, for messages */
    char *name;  /* ours: the target's name in dir */
    char *tmp;   /* ours: the temporary file's name in dir, NULL once renamed or removed */
    FILE *f;     /* the temporary file, NULL once closed */
};

/* ".kperf-<16 hex>.tmp" of ours, or the ".tmp-XXXXXX" of mkstemp that history used before. */
static bool is_our_tmp(const char *n)
{
    size_t len = strlen(n), pl = strlen(SAFEFILE_TMP_PREFIX), sl = strlen(SAFEFILE_TMP_SUFFIX);

    if (len == pl + TMP_HEX + sl && strncmp(n, SAFEFILE_TMP_PREFIX, pl) == 0 &&
        strcmp(n + pl + TMP_HEX, SAFEFILE_TMP_SUFFIX) == 0)
        return strspn(n + pl, "0123456789abcdef") == TMP_HEX;
    return len == 11 && strncmp(n, ".tmp-", 5) == 0;
}

/* A new temporary name (caller frees). */
static char *tmp_name(void)
{
    unsigned char rnd[TMP_HEX / 2];
    char hex[TMP_HEX + 1];

    if (kp_random_bytes(rnd, sizeof(rnd)) != 0) { /* no entropy: still unique */
        uint64_t v = clock_now_ns() ^ ((uint64_t)getpid() << 40);
        memcpy(rnd, &v, sizeof(rnd));
    }
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
    return kp_xasprintf("%s%s%s", SAFEFILE_TMP_PREFIX, hex, SAFEFILE_TMP_SUFFIX);
}

/* Removes the leftovers of crashed writers in the folder: any of ours when it is locked (a live
 * writer would hold the lock), else only those older than STALE_S. Best effort. */
static void remove_stale(int dfd, bool locked)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;
    time_t now = time(NULL);

    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (!is_our_tmp(e->d_name) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            continue;
        if (locked || now - st.st_mtime > STALE_S)
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* Takes the folder's lock, waiting up to wait_ms. Returns 0 (sf->locked says whether the
 * filesystem could lock at all) or -1 with err when another writer held it throughout. */
static int lock_dir(struct safefile *sf, unsigned wait_ms, struct kp_err *err)
{
    uint64_t deadline = clock_now_ms() + wait_ms;

    for (;;) {
        if (flock(sf->dfd, LOCK_EX | LOCK_NB) == 0) {
            sf->locked = true;
            return 0;
        }
        if (errno != EWOULDBLOCK && errno != EINTR)
            return 0; /* no flock here (EBADF, ENOLCK, EOPNOTSUPP): unlocked */
        if (clock_now_ms() >= deadline)
            return kp_err_set(err,
                              "another kperf is writing in %s (waited %u s for its lock); run "
                              "them one after the other or give each its own folder",
                              sf->dir, wait_ms / 1000);
        clock_sleep_ms(LOCK_POLL_MS);
    }
}

/* Refuses a target that exists and is not a regular file (a link when want_link). */
static int check_target(const struct safefile *sf, bool want_link, struct kp_err *err)
{
    struct stat st;

    if (fstatat(sf->dfd, sf->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT
                   ? 0
                   : kp_err_set(err, "cannot check %s/%s: %s", sf->dir, sf->name, strerror(errno));
    if (want_link ? S_ISLNK(st.st_mode) : S_ISREG(st.st_mode))
        return 0;
    return kp_err_set(err,
                      "refusing to replace %s/%s: it is %s, not a %s kperf wrote; remove it "
                      "or write elsewhere",
                      sf->dir, sf->name,
                      S_ISLNK(st.st_mode)   ? "a symbolic link"
                      : S_ISDIR(st.st_mode) ? "a directory"
                                            : "not a regular file",
                      want_link ? "link" : "file");
}

/* Splits path, opens and locks the folder, removes leftovers, checks the target. */
static int open_dir(const char *path, const struct safefile_opts *o, bool want_link,
                    struct safefile *sf, struct kp_err *err)
{
    const char *slash = strrchr(path, '/');

    sf->dfd = -1;
    sf->dir = slash ? kp_xasprintf("%.*s", (int)(slash == path ? 1 : slash - path), path)
                    : kp_xstrdup(".");
    sf->name = kp_xstrdup(slash ? slash + 1 : path);
    if (!*sf->name || strcmp(sf->name, ".") == 0 || strcmp(sf->name, "..") == 0)
        return kp_err_set(err, "cannot write '%s': not a file name", path);
    sf->dfd = open(sf->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sf->dfd < 0)
        return kp_err_set(err, "cannot open folder %s: %s", sf->dir, strerror(errno));
    if (lock_dir(sf, o && o->lock_wait_ms ? o->lock_wait_ms : SAFEFILE_LOCK_WAIT_MS, err) != 0)
        return -1;
    remove_stale(sf->dfd, sf->locked);
    return check_target(sf, want_link, err);
}

int safefile_begin(const char *path, const struct safefile_opts *o, struct safefile **out,
                   struct kp_err *err)
{
    struct safefile *sf = kp_xcalloc(1, sizeof(*sf));
    int fd = -1;

    *out = NULL;
    if (open_dir(path, o, false, sf, err) != 0)
        goto fail;
    for (int tries = 0; fd < 0 && tries < 8; tries++) {
        free(sf->tmp);
        sf->tmp = tmp_name();
        fd = openat(sf->dfd, sf->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        kp_err_set(err, "cannot create a file in %s: %s", sf->dir, strerror(errno));
        free(sf->tmp);
        sf->tmp = NULL;
        goto fail;
    }
    sf->f = fdopen(fd, "w");
    if (!sf->f) {
        kp_err_set(err, "cannot write in %s: %s", sf->dir, strerror(errno));
        close(fd);
        goto fail;
    }
    *out = sf;
    return 0;
fail:
    safefile_close(sf);
    return -1;
}

FILE *safefile_stream(struct safefile *sf)
{
    return sf->f;
}

int safefile_commit(struct safefile *sf, struct kp_err *err)
{
    FILE *f = sf->f;
    int bad;

    sf->f = NULL;
    if (!f || !sf->tmp)
        return kp_err_set(err, "%s/%s: nothing to commit", sf->dir, sf->name);
    errno = 0;
    bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0; /* whole on disk before named */
    bad |= fclose(f) != 0;
    if (bad)
        return kp_err_set(err, "cannot write %s/%s: %s", sf->dir, sf->name,
                          strerror(errno ? errno : EIO));
    if (check_target(sf, false, err) != 0) /* planted by one who does not take the lock */
        return -1;
    if (renameat(sf->dfd, sf->tmp, sf->dfd, sf->name) != 0)
        return kp_err_set(err, "cannot rename a file to %s/%s: %s", sf->dir, sf->name,
                          strerror(errno));
    free(sf->tmp);
    sf->tmp = NULL;
    if (fsync(sf->dfd) != 0 && errno != EINVAL) /* the new name durable too */
        return kp_err_set(err, "cannot sync folder %s: %s", sf->dir, strerror(errno));
    return 0;
}

void safefile_close(struct safefile *sf)
{
    if (!sf)
        return;
    if (sf->f)
        fclose(sf->f);
    if (sf->tmp && sf->dfd >= 0)
        unlinkat(sf->dfd, sf->tmp, 0);
    if (sf->dfd >= 0)
        close(sf->dfd); /* releases the flock */
    free(sf->tmp);
    free(sf->name);
    free(sf->dir);
    free(sf);
}

int safefile_write(const char *path, safefile_fill_fn *fill, void *arg, struct kp_err *err)
{
    struct safefile *sf;
    int rc;

    if (safefile_begin(path, NULL, &sf, err) != 0)
        return -1;
    rc = fill(safefile_stream(sf), arg, err);
    if (rc == 0)
        rc = safefile_commit(sf, err);
    safefile_close(sf);
    return rc;
}

static int fill_text(FILE *f, void *arg, struct kp_err *err)
{
    (void)err;
    fputs(arg, f); /* a write error shows at the commit's flush */
    return 0;
}

int safefile_write_text(const char *path, const char *text, struct kp_err *err)
{
    return safefile_write(path, fill_text, (void *)text, err);
}

int safefile_symlink(const char *target, const char *path, struct kp_err *err)
{
    struct safefile *sf = kp_xcalloc(1, sizeof(*sf));
    int rc = -1;

    if (open_dir(path, NULL, true, sf, err) != 0)
        goto out;
    sf->tmp = tmp_name();
    if (symlinkat(target, sf->dfd, sf->tmp) != 0) {
        kp_err_set(err, "cannot create a link in %s: %s", sf->dir, strerror(errno));
        free(sf->tmp);
        sf->tmp = NULL;
        goto out;
    }
    if (renameat(sf->dfd, sf->tmp, sf->dfd, sf->name) != 0) {
        kp_err_set(err, "cannot replace %s/%s: %s", sf->dir, sf->name, strerror(errno));
        goto out;
    }
    free(sf->tmp);
    sf->tmp = NULL;
    if (fsync(sf->dfd) != 0 && errno != EINVAL)
        kp_err_set(err, "cannot sync folder %s: %s", sf->dir, strerror(errno));
    else
        rc = 0;
out:
    safefile_close(sf);
    return rc;
}
