/* SPDX-License-Identifier: Apache-2.0 */
/* cpuquota.c - see cpuquota.h. */
#include "agent/cpuquota.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUOTA_TEXT_MAX 8192 /* /proc/self/cgroup: one short line per hierarchy */

/* Reads up to len-1 bytes of path into buf, NUL-terminated. Returns 0, or -1. */
static int read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    size_t n;

    if (!f)
        return -1;
    n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 0;
}

/* millis from a quota and a period in microseconds; 0 when either is not a positive number. */
static unsigned to_millis(long long quota_us, long long period_us)
{
    unsigned long long m;

    if (quota_us <= 0 || period_us <= 0)
        return 0;
    if ((unsigned long long)quota_us > ULLONG_MAX / 1000 - (unsigned long long)period_us)
        return UINT_MAX; /* no real quota is this large */
    /* rounded up: a positive quota is at least one thousandth of a CPU */
    m = ((unsigned long long)quota_us * 1000ull + (unsigned long long)period_us - 1) /
        (unsigned long long)period_us;
    return m > UINT_MAX ? UINT_MAX : (unsigned)m;
}

/* One group's quota: v2 "cpu.max" ("max 100000" or "50000 100000"), else v1
 * "cpu.cfs_quota_us" (-1 = none) over "cpu.cfs_period_us". 0 when none or unreadable. */
static unsigned group_millis(const char *dir)
{
    char path[PATH_MAX], text[128];
    long long quota, period;

    if (snprintf(path, sizeof(path), "%s/cpu.max", dir) < (int)sizeof(path) &&
        read_text(path, text, sizeof(text)) == 0) {
        if (sscanf(text, "%lld %lld", &quota, &period) == 2)
            return to_millis(quota, period);
        return 0; /* "max ..." */
    }
    if (snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir) >= (int)sizeof(path) ||
        read_text(path, text, sizeof(text)) != 0 || sscanf(text, "%lld", &quota) != 1)
        return 0;
    if (snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir) >= (int)sizeof(path) ||
        read_text(path, text, sizeof(text)) != 0 || sscanf(text, "%lld", &period) != 1)
        return 0;
    return to_millis(quota, period);
}

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static unsigned smaller(unsigned a, unsigned b)
{
    if (!a)
        return b;
    return b && b < a ? b : a;
}

/* The smallest quota from mount/group up to mount itself; groups the mount lacks are skipped.
 * group starts with '/'. 0 when the mount is not there. */
static unsigned walk_up(const char *mount, const char *group)
{
    char dir[PATH_MAX];
    unsigned best = 0;
    char *cut;

    if (!is_dir(mount) || snprintf(dir, sizeof(dir), "%s%s", mount, group) >= (int)sizeof(dir))
        return 0;
    for (;;) {
        size_t len = strlen(dir);

        while (len > strlen(mount) && dir[len - 1] == '/')
            dir[--len] = '\0';
        if (is_dir(dir))
            best = smaller(best, group_millis(dir));
        if (len <= strlen(mount))
            return best;
        cut = strrchr(dir + strlen(mount), '/');
        if (!cut)
            return best;
        *cut = '\0';
    }
}

/* Whether the comma-separated controller list names "cpu" itself (not only "cpuacct"). */
static int names_cpu(const char *list, size_t len)
{
    const char *p = list, *end = list + len;

    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);

        if (n == 3 && memcmp(p, "cpu", 3) == 0)
            return 1;
        p += n + 1;
    }
    return 0;
}

/* The quota of one /proc/self/cgroup line ("ID:CONTROLLERS:/PATH"), 0 if it has none. */
static unsigned line_millis(const char *root, const char *line, size_t len)
{
    static const char *const v1_dirs[] = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};
    const char *c1 = memchr(line, ':', len), *c2;
    char group[PATH_MAX], mount[PATH_MAX];
    unsigned best = 0;
    size_t glen;

    if (!c1)
        return 0;
    c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line));
    if (!c2 || c2 + 1 >= line + len || c2[1] != '/')
        return 0;
    glen = len - (size_t)(c2 + 1 - line);
    if (glen >= sizeof(group))
        return 0;
    memcpy(group, c2 + 1, glen);
    group[glen] = '\0';
    if (c2 == c1 + 1) { /* v2: no controller list */
        best = smaller(best, walk_up(root, group));
        if (snprintf(mount, sizeof(mount), "%s/unified", root) < (int)sizeof(mount))
            best = smaller(best, walk_up(mount, group));
        return best;
    }
    if (!names_cpu(c1 + 1, (size_t)(c2 - c1 - 1)))
        return 0;
    for (size_t i = 0; i < sizeof(v1_dirs) / sizeof(v1_dirs[0]); i++)
        if (snprintf(mount, sizeof(mount), "%s/%s", root, v1_dirs[i]) < (int)sizeof(mount))
            best = smaller(best, walk_up(mount, group));
    return best;
}

unsigned cpuquota_millis_at(const char *root, const char *self_cgroup)
{
    const char *p = self_cgroup;
    unsigned best = 0;

    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);

        if (len)
            best = smaller(best, line_millis(root, p, len));
        p += len + (nl ? 1 : 0);
    }
    return best;
}

/* Whether root shows a cgroup hierarchy (v2, hybrid or a v1 cpu controller). */
static int shows_cgroups(const char *root)
{
    static const char *const marks[] = {"cgroup.controllers", "unified", "cpu", "cpu,cpuacct",
                                        "cpuacct,cpu"};
    char path[PATH_MAX];
    struct stat st;

    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
        if (snprintf(path, sizeof(path), "%s/%s", root, marks[i]) < (int)sizeof(path) &&
            stat(path, &st) == 0)
            return 1;
    return 0;
}

unsigned cpuquota_millis(void)
{
    char text[QUOTA_TEXT_MAX], parent[64];
    const char *root = CPUQUOTA_ROOT;

    if (read_text("/proc/self/cgroup", text, sizeof(text)) != 0)
        return 0;
    /* `ip netns exec` (how kperf run --local starts its agents) mounts a fresh sysfs on /sys
     * for the namespace, with nothing under /sys/fs/cgroup. It execs without forking, so the
     * parent is what ran it, in a mount namespace that still shows the hierarchy (else PID
     * 1's: the host's, or the container's own); the paths are the same, the cgroup namespace
     * did not change. */
    snprintf(parent, sizeof(parent), "/proc/%ld/root/sys/fs/cgroup", (long)getppid());
    if (!shows_cgroups(root))
        root = shows_cgroups(parent) ? parent : CPUQUOTA_PID1_ROOT;
    return cpuquota_millis_at(root, text);
}

unsigned cpuquota_cpus(unsigned millis)
{
    if (!millis)
        return 0;
    return millis / 1000 + (millis % 1000 ? 1 : 0);
}
