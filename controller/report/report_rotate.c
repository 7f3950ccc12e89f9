/* SPDX-License-Identifier: Apache-2.0 */
/* report_rotate.c - dated run folders, the "latest" link and retention by count
 * (report_rotate.h). Removal is conservative: only the four report files of a run folder (and
 * the temporary files of a writer that crashed in it) are unlinked, so a folder someone put other
 * files into survives. The "latest" link is replaced through base/safefile.h. */
#include "controller/report/report_rotate.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/safefile.h"

bool report_dir_is_run_name(const char *name)
{
    static const char shape[] = "DDDDDDDDTDDDDDDZ";

    if (strlen(name) != REPORT_DIR_NAME_LEN)
        return false;
    for (size_t i = 0; i < REPORT_DIR_NAME_LEN; i++)
        if (shape[i] == 'D' ? !isdigit((unsigned char)name[i]) : name[i] != shape[i])
            return false;
    return true;
}

/* "2026-12-01T02:17:00Z" (fractional seconds allowed) -> "20261201T021700Z" in out[17];
 * false when s is not of that form. */
static bool compact_time(const char *s, char *out)
{
    static const char shape[] = "DDDD-DD-DDTDD:DD:DD";
    size_t o = 0;

    if (!s || strlen(s) < sizeof(shape))
        return false;
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        if (shape[i] == 'D') {
            if (!isdigit((unsigned char)s[i]))
                return false;
            out[o++] = s[i];
        } else if (s[i] != shape[i]) {
            return false;
        } else if (shape[i] == 'T') {
            out[o++] = 'T';
        }
    }
    out[o++] = 'Z';
    out[o] = '\0';
    return true;
}

char *report_dir_expand(const char *pattern, const char *start_time)
{
    char stamp[REPORT_DIR_NAME_LEN + 1], *out, *w;
    const char *p, *hit;
    size_t n = 0, tl = strlen(REPORT_DIR_TIME);

    if (!compact_time(start_time, stamp)) {
        time_t now = time(NULL);
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    }
    for (p = pattern; (hit = strstr(p, REPORT_DIR_TIME)); p = hit + tl)
        n++;
    out = kp_xcalloc(strlen(pattern) + n * REPORT_DIR_NAME_LEN + 1, 1);
    w = out;
    for (p = pattern; (hit = strstr(p, REPORT_DIR_TIME)); p = hit + tl) {
        memcpy(w, p, (size_t)(hit - p));
        w += hit - p;
        memcpy(w, stamp, REPORT_DIR_NAME_LEN);
        w += REPORT_DIR_NAME_LEN;
    }
    strcpy(w, p);
    return out;
}

/* Points dir/latest at name: a new link under a random name renamed over the old one, under the
 * folder's lock (base/safefile.h); refuses a "latest" that is not a link. */
static int set_latest(const char *dir, const char *name, struct kp_err *err)
{
    char *link = kp_xasprintf("%s/%s", dir, REPORT_DIR_LATEST);
    int rc = safefile_symlink(name, link, err);

    free(link);
    return rc;
}

/* Removes the temporary files of a crashed writer in an old run folder (base/safefile.h's names,
 * and the fixed .report.*.tmp of kperf before it), so that the folder can go. */
static void remove_leftovers(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    size_t pl = strlen(SAFEFILE_TMP_PREFIX), sl = strlen(SAFEFILE_TMP_SUFFIX);

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        bool ours = len > pl + sl && strncmp(e->d_name, SAFEFILE_TMP_PREFIX, pl) == 0 &&
                    strcmp(e->d_name + len - sl, SAFEFILE_TMP_SUFFIX) == 0;
        bool old = strncmp(e->d_name, ".report.", 8) == 0 && len > 12 &&
                   strcmp(e->d_name + len - 4, ".tmp") == 0;
        if (ours || old) {
            char *f = kp_xasprintf("%s/%s", path, e->d_name);
            unlink(f);
            free(f);
        }
    }
    closedir(d);
}

/* Removes run folder dir/name if it holds only report files; true when removed. */
static bool remove_run(const char *dir, const char *name)
{
    static const char *const files[] = {"report.json", "report.md", "report.csv", "report.html"};
    char *path = kp_xasprintf("%s/%s", dir, name);
    bool ok;

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char *f = kp_xasprintf("%s/%s", path, files[i]);

        unlink(f); /* missing is fine: what is left makes rmdir fail */
        free(f);
    }
    remove_leftovers(path);
    ok = rmdir(path) == 0;
    free(path);
    return ok;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int report_dir_rotate(const char *dir, const char *name, unsigned keep, size_t *removed,
                      struct kp_err *err)
{
    DIR *d;
    struct dirent *e;
    char **runs = NULL;
    size_t n = 0, cap = 0, entries = 0;
    int rc = 0;

    *removed = 0;
    if (set_latest(dir, name, err) != 0)
        return -1;
    if (keep == 0)
        return 0;
    d = opendir(dir);
    if (!d)
        return kp_err_set(err, "cannot read %s: %s", dir, strerror(errno));
    while ((e = readdir(d))) {
        struct stat st;
        char *p;

        if (++entries > REPORT_DIR_MAX_ENTRIES) {
            rc = kp_err_set(err, "%s holds more than %d entries; not a history folder", dir,
                            REPORT_DIR_MAX_ENTRIES);
            break;
        }
        if (!report_dir_is_run_name(e->d_name))
            continue;
        p = kp_xasprintf("%s/%s", dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                runs = kp_xrealloc(runs, cap * sizeof(*runs));
            }
            runs[n++] = kp_xstrdup(e->d_name);
        }
        free(p);
    }
    closedir(d);
    if (rc == 0 && n > keep) {
        qsort(runs, n, sizeof(*runs), by_name);
        for (size_t i = 0; i < n - keep; i++)
            if (strcmp(runs[i], name) != 0 && remove_run(dir, runs[i]))
                (*removed)++;
    }
    for (size_t i = 0; i < n; i++)
        free(runs[i]);
    free(runs);
    return rc;
}
