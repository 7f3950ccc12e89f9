/* SPDX-License-Identifier: Apache-2.0 */
/* localnet.c - see localnet.h. Names, the host check, the state file and removal (which works
 * from the state file only, so it never touches a name it did not record). Building is in
 * localnet_build.c. */
#include "controller/local/localnet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/safefile.h"
#include "base/subproc.h"
#include "controller/local/localnet_int.h"

#define MAX_ARGS     32
#define MAX_STATE_NS (LN_NS_COUNT + 2 * LOCALNET_MAX_PODS)

const char *const localnet_ns_suffix[LN_NS_COUNT] = {
    "-u", "-n1", "-n2", "-n1p1", "-n1p2", "-n2p1", "-ext",
};

static const char *const addrs[LA_COUNT] = {
    "198.18.0.1", "198.18.0.2",  "198.18.1.2",  "198.18.1.3",
    "198.18.2.2", "198.18.3.10", "198.18.3.11", "198.18.4.2",
};
static const char *const addrs6[LA_COUNT] = {
    "2001:2::1",     "2001:2::2",     "2001:2:0:1::2", "2001:2:0:1::3",
    "2001:2:0:2::2", "2001:2:0:3::a", "2001:2:0:3::b", "2001:2:0:4::2",
};

void localnet_new_id(char id[LOCALNET_ID_LEN + 1])
{
    unsigned char rnd[3] = {0};

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        unsigned v = (unsigned)getpid() ^ (unsigned)time(NULL);
        rnd[0] = (unsigned char)v;
        rnd[1] = (unsigned char)(v >> 8);
        rnd[2] = (unsigned char)(v >> 16);
    }
    snprintf(id, LOCALNET_ID_LEN + 1, LOCALNET_PREFIX "%02x%02x%02x", rnd[0], rnd[1], rnd[2]);
}

bool localnet_name_is_ours(const char *name)
{
    if (strncmp(name, LOCALNET_PREFIX, 3) != 0)
        return false;
    for (int i = 3; i < LOCALNET_ID_LEN; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    return name[LOCALNET_ID_LEN] == '\0' || name[LOCALNET_ID_LEN] == '-';
}

struct localnet *localnet_new(const char *run_id, int mtu, const char *state_dir)
{
    struct localnet *ln = kp_xcalloc(1, sizeof(*ln));

    snprintf(ln->id, sizeof(ln->id), "%s", run_id);
    ln->mtu = mtu;
    ln->state_dir = kp_xstrdup(state_dir);
    ln->state_path = kp_xasprintf("%s/%s.state", state_dir, ln->id);
    ln->run_dir = kp_xasprintf("%s/%s", state_dir, ln->id);
    for (int i = 0; i < LN_NS_COUNT; i++)
        ln->ns[i] = kp_xasprintf("%s%s", ln->id, localnet_ns_suffix[i]);
    return ln;
}

void localnet_free(struct localnet *ln)
{
    if (!ln)
        return;
    for (int i = 0; i < LN_NS_COUNT; i++)
        free(ln->ns[i]);
    for (size_t i = 0; i < ln->n_pods; i++)
        free(ln->pods[i]);
    free(ln->pods);
    for (size_t i = 0; i < ln->n_cni_pods; i++)
        json_decref(ln->cni_pods[i].result);
    free(ln->cni_pods);
    free(ln->cni_copy);
    free(ln->run_dir);
    free(ln->state_path);
    free(ln->state_dir);
    free(ln);
}

const char *localnet_ns_name(const struct localnet *ln, enum localnet_ns which)
{
    return ln->ns[which];
}

const char *localnet_addr(enum localnet_addr which, enum localnet_family family)
{
    return family == LOCALNET_IPV6 ? addrs6[which] : addrs[which];
}

void localnet_set_cni(struct localnet *ln, struct local_cni *cni)
{
    ln->cni = cni;
}

const char *localnet_addr_of(const struct localnet *ln, enum localnet_addr which,
                             enum localnet_family family)
{
    int fam = family == LOCALNET_IPV6 ? 1 : 0;

    if (!ln->cni || (which != LA_POD_CLIENT && which != LA_POD_SERVER1 && which != LA_POD_SERVER2))
        return localnet_addr(which, family);
    int pod = which == LA_POD_CLIENT ? 0 : which == LA_POD_SERVER1 ? 1 : 2;
    return ln->pod_addr[pod][fam][0] ? ln->pod_addr[pod][fam] : NULL;
}

const char *localnet_id(const struct localnet *ln)
{
    return ln->id;
}

int localnet_mtu(const struct localnet *ln)
{
    return ln->mtu;
}

const char *localnet_run_dir(const struct localnet *ln)
{
    return ln->run_dir;
}

char *localnet_write(const struct localnet *ln, const char *name, const char *text,
                     struct kp_err *err)
{
    char *path = kp_xasprintf("%s/%s", ln->run_dir, name);

    if (safefile_write_text(path, text, err) != 0) { /* whole, never through a planted link */
        free(path);
        return NULL;
    }
    return path;
}

/* Runs a command given as NULL-terminated string arguments; fails with err. */
int localnet_cmd(struct localnet *ln, struct kp_err *err, ...)
{
    const char *argv[MAX_ARGS + 1];
    va_list ap;
    int n = 0;

    if (ln && ln->cancel && *ln->cancel)
        return kp_err_set(err, "interrupted");
    va_start(ap, err);
    for (const char *a = va_arg(ap, const char *); a && n < MAX_ARGS; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return subproc_check(argv, err);
}

bool localnet_ns_exists(const char *name)
{
    char path[256];
    struct stat st;

    snprintf(path, sizeof(path), NETNS_DIR "/%s", name);
    return stat(path, &st) == 0;
}

/* Is a tool on PATH? */
static bool have_tool(const char *name)
{
    const char *path = getenv("PATH");
    char *copy, *save = NULL;
    bool found = false;

    copy = kp_xstrdup(path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = kp_xasprintf("%s/%s", d, name);
        found = access(p, X_OK) == 0;
        free(p);
    }
    free(copy);
    return found;
}

/* Effective capabilities from /proc/self/status (0 when unreadable). */
static unsigned long long cap_eff(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long caps = 0;

    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "CapEff:", 7) == 0)
            caps = strtoull(line + 7, NULL, 16);
    if (f)
        fclose(f);
    return caps;
}

int localnet_check_host(struct kp_err *err)
{
    const unsigned long long need = (1ull << 12) | (1ull << 21); /* NET_ADMIN, SYS_ADMIN */

    if (geteuid() != 0)
        return kp_err_set(err, "--local needs root to create network namespaces. Run it as root "
                               "(sudo kperf run --local ...)");
    if ((cap_eff() & need) != need)
        return kp_err_set(err, "--local needs CAP_NET_ADMIN and CAP_SYS_ADMIN to create network "
                               "namespaces; this root lacks them (an unprivileged container?). "
                               "Run it on the host, in a VM or in a privileged container");
    if (!have_tool("ip"))
        return kp_err_set(err, "--local needs the 'ip' tool. Install iproute2 (apt-get install "
                               "iproute2)");
    if (!have_tool("nft"))
        return kp_err_set(err, "--local needs the 'nft' tool. Install nftables (apt-get install "
                               "nftables)");
    if (access("/proc/self/ns/net", R_OK) != 0)
        return kp_err_set(err, "--local needs network namespaces, which this kernel does not "
                               "offer (CONFIG_NET_NS)");
    return 0;
}

/* ---- state file ---- */

static long long proc_starttime(pid_t pid)
{
    char path[64], buf[1024];
    FILE *f;
    char *p;
    long long v = -1;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
        /* fields after ")": state(3) ... starttime(22) */
        int field = 2;
        for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
            if (++field == 22) {
                v = atoll(tok);
                break;
            }
        }
    }
    fclose(f);
    return v;
}

static int fill_state(FILE *f, void *arg, struct kp_err *err)
{
    const struct localnet *ln = arg;

    (void)err; /* a write error shows at the commit's flush */
    fprintf(f, "# kperf run --local: what run %s creates; removed when it ends\n", ln->id);
    fprintf(f, "pid %d\nstarttime %lld\n", (int)getpid(), proc_starttime(getpid()));
    for (int i = 0; i < LN_NS_COUNT; i++)
        fprintf(f, "netns %s\n", ln->ns[i]);
    for (size_t i = 0; i < ln->n_pods; i++)
        fprintf(f, "netns %s\n", ln->pods[i]);
    localnet_cni_state(ln, f);
    fprintf(f, "dir %s\n", ln->run_dir);
    return 0;
}

int localnet_write_state(struct localnet *ln, struct kp_err *err)
{
    return safefile_write(ln->state_path, fill_state, ln, err);
}

/* ---- removal ---- */

/* Kills whatever still runs inside netns `name` (only processes in our namespace). */
static void kill_ns_pids(const char *name)
{
    const char *argv[] = {"ip", "netns", "pids", name, NULL};
    struct subproc_opts o = {.timeout_ms = 10000};
    struct subproc_result r;

    for (int round = 0; round < 2; round++) {
        if (subproc_run(argv, &o, &r, NULL) != 0)
            return;
        bool any = false;
        for (char *save = NULL, *t = strtok_r(r.out, " \n", &save); t;
             t = strtok_r(NULL, " \n", &save)) {
            long pid = strtol(t, NULL, 10);
            if (pid > 1 && pid != getpid()) {
                kill((pid_t)pid, round == 0 ? SIGTERM : SIGKILL);
                any = true;
            }
        }
        subproc_result_cleanup(&r);
        if (!any)
            return;
        usleep(200 * 1000);
    }
}

int localnet_remove_ns(const char *name, struct kp_err *err)
{
    if (!localnet_name_is_ours(name) || !localnet_ns_exists(name))
        return 0;
    kill_ns_pids(name);
    return localnet_cmd(NULL, err, "ip", "netns", "del", name, NULL);
}

/* Removes the run directory's files (token, logs, nft scripts) and the directory. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = kp_xasprintf("%s/%s", dir, e->d_name);
        unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

int localnet_destroy(struct localnet *ln, struct kp_err *err)
{
    struct kp_err one;
    int rc = 0;

    /* the CNI's DEL first, while the namespaces are there: its IPAM gets its addresses back */
    if (ln->cni && localnet_cni_teardown(ln, &one) != 0) {
        kp_err_set(err, "%s", kp_err_msg(&one));
        rc = -1;
    }
    /* short-lived pods first (normally gone already), the underlay last: the reverse of
     * creation */
    for (size_t i = ln->n_pods; i-- > 0;) {
        kp_err_clear(&one);
        if (localnet_remove_ns(ln->pods[i], &one) != 0 && rc == 0) {
            kp_err_set(err, "%s", kp_err_msg(&one));
            rc = -1;
        }
    }
    for (int i = LN_NS_COUNT - 1; i >= 0; i--) {
        kp_err_clear(&one);
        if (localnet_remove_ns(ln->ns[i], &one) != 0 && rc == 0) {
            kp_err_set(err, "%s", kp_err_msg(&one));
            rc = -1;
        }
    }
    remove_dir(ln->run_dir);
    if (rc == 0)
        unlink(ln->state_path);
    return rc;
}

/* What a state file lists. */
struct state {
    long pid;
    long long start;
    char *ns[MAX_STATE_NS]; /* owned */
    int n_ns;
    char *dir;                   /* owned */
    char *cni;                   /* owned: "COPY CNI_PATH", or NULL */
    char *cnipods[MAX_STATE_NS]; /* owned: "NODE_NS POD_NS" */
    int n_cnipods;
};

static void state_cleanup(struct state *s)
{
    for (int i = 0; i < s->n_ns; i++)
        free(s->ns[i]);
    for (int i = 0; i < s->n_cnipods; i++)
        free(s->cnipods[i]);
    free(s->dir);
    free(s->cni);
}

/* Reads a state file: owner pid and starttime, the namespaces and the directory it lists. */
static int read_state(const char *path, struct state *s)
{
    FILE *f = fopen(path, "r");
    char line[512];

    memset(s, 0, sizeof(*s));
    s->start = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char *v = strchr(line, ' ');
        if (!v || line[0] == '#')
            continue;
        *v++ = '\0';
        v[strcspn(v, "\n")] = '\0';
        if (strcmp(line, "pid") == 0)
            s->pid = strtol(v, NULL, 10);
        else if (strcmp(line, "starttime") == 0)
            s->start = strtoll(v, NULL, 10);
        else if (strcmp(line, "netns") == 0 && s->n_ns < MAX_STATE_NS && localnet_name_is_ours(v))
            s->ns[s->n_ns++] = kp_xstrdup(v);
        else if (strcmp(line, "dir") == 0 && !s->dir)
            s->dir = kp_xstrdup(v);
        else if (strcmp(line, "cni") == 0 && !s->cni)
            s->cni = kp_xstrdup(v);
        else if (strcmp(line, "cnipod") == 0 && s->n_cnipods < MAX_STATE_NS)
            s->cnipods[s->n_cnipods++] = kp_xstrdup(v);
    }
    fclose(f);
    return 0;
}

/* DEL, through the killed run's own conflist (kept in its run directory), of the pods it
 * listed, so that their IPAM reservations go too. */
static int cleanup_cni(const char *state_dir, struct state *s, struct kp_err *err)
{
    char copy[512], cni_path[1024];

    if (!s->cni || sscanf(s->cni, "%511s %1023s", copy, cni_path) != 2 ||
        strncmp(copy, state_dir, strlen(state_dir)) != 0)
        return 0;
    return localnet_cni_leftovers(copy, cni_path, s->cnipods, s->n_cnipods, err);
}

/* Cleans one earlier run from its state file unless its owner still runs. Returns 1 when
 * cleaned, 0 when left alone, -1 on failure. */
static int cleanup_state_file(const char *state_dir, const char *file, struct kp_err *err)
{
    char *path = kp_xasprintf("%s/%s", state_dir, file);
    struct state s;
    struct kp_err cni_err;
    int rc = 0;

    if (read_state(path, &s) != 0)
        goto out;
    if (s.pid > 0 && s.pid != getpid() && proc_starttime((pid_t)s.pid) == s.start)
        goto out; /* still running: not a leftover */
    rc = 1;
    kp_err_clear(&cni_err);
    if (cleanup_cni(state_dir, &s, &cni_err) != 0) /* the namespaces go all the same */
        kp_log(KP_LOG_WARN, "CNI DEL of a killed run's pods: %s", kp_err_msg(&cni_err));
    for (int i = s.n_ns - 1; i >= 0; i--)
        if (localnet_remove_ns(s.ns[i], err) != 0)
            rc = -1;
    if (s.dir && strncmp(s.dir, state_dir, strlen(state_dir)) == 0)
        remove_dir(s.dir);
    if (rc == 1)
        unlink(path);
out:
    state_cleanup(&s);
    free(path);
    return rc;
}

int localnet_cleanup_leftovers(const char *state_dir, int *n_removed, struct kp_err *err)
{
    DIR *d = opendir(state_dir);
    struct dirent *e;
    int rc = 0;

    *n_removed = 0;
    if (!d)
        return 0; /* nothing was ever recorded */
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len != LOCALNET_ID_LEN + 6 || strcmp(e->d_name + LOCALNET_ID_LEN, ".state") != 0)
            continue;
        char id[LOCALNET_ID_LEN + 1];
        memcpy(id, e->d_name, LOCALNET_ID_LEN);
        id[LOCALNET_ID_LEN] = '\0';
        if (!localnet_name_is_ours(id))
            continue;
        int r = cleanup_state_file(state_dir, e->d_name, err);
        if (r < 0)
            rc = -1;
        else
            *n_removed += r;
    }
    closedir(d);
    return rc;
}
