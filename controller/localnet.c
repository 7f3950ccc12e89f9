/* SPDX-License-Identifier: Apache-2.0 */
/* localnet.c - see localnet.h. Building is a list of `ip`, `sysctl` and `nft` commands run in
 * order; removal works from the state file only, so it never touches a name it did not
 * record. */
#include "controller/localnet.h"

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

#include "agent/base/kp_alloc.h"
#include "agent/base/kp_err.h"
#include "agent/base/kp_log.h"
#include "controller/subproc.h"

#define MAX_ARGS     32
#define NETNS_DIR    "/run/netns"
#define MAX_STATE_NS 64

struct localnet {
    char id[LOCALNET_ID_LEN + 1];
    int mtu;
    char *state_dir;               /* owned */
    char *state_path;              /* owned: <state_dir>/<id>.state */
    char *run_dir;                 /* owned: <state_dir>/<id> */
    char *ns[LN_NS_COUNT];         /* owned names */
    volatile sig_atomic_t *cancel; /* borrowed during create */
};

static const char *const ns_suffix[LN_NS_COUNT] = {
    "-u", "-n1", "-n2", "-n1p1", "-n1p2", "-n2p1", "-ext",
};

static const char *const addrs[LA_COUNT] = {
    "198.18.0.1", "198.18.0.2",  "198.18.1.2",  "198.18.1.3",
    "198.18.2.2", "198.18.3.10", "198.18.3.11", "198.18.4.2",
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
        ln->ns[i] = kp_xasprintf("%s%s", ln->id, ns_suffix[i]);
    return ln;
}

void localnet_free(struct localnet *ln)
{
    if (!ln)
        return;
    for (int i = 0; i < LN_NS_COUNT; i++)
        free(ln->ns[i]);
    free(ln->run_dir);
    free(ln->state_path);
    free(ln->state_dir);
    free(ln);
}

const char *localnet_ns_name(const struct localnet *ln, enum localnet_ns which)
{
    return ln->ns[which];
}

const char *localnet_addr(enum localnet_addr which)
{
    return addrs[which];
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

/* Runs a command given as NULL-terminated string arguments; fails with err. */
static int cmd(struct localnet *ln, struct kp_err *err, ...)
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

static bool ns_exists(const char *name)
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

static int write_state(struct localnet *ln, struct kp_err *err)
{
    char *tmp = kp_xasprintf("%s.tmp", ln->state_path);
    FILE *f = fopen(tmp, "w");
    int rc = -1;

    if (!f) {
        kp_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    fprintf(f, "# kperf run --local: what run %s creates; removed when it ends\n", ln->id);
    fprintf(f, "pid %d\nstarttime %lld\n", (int)getpid(), proc_starttime(getpid()));
    for (int i = 0; i < LN_NS_COUNT; i++)
        fprintf(f, "netns %s\n", ln->ns[i]);
    fprintf(f, "dir %s\n", ln->run_dir);
    if (fclose(f) != 0) {
        f = NULL;
        kp_err_set(err, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    f = NULL;
    if (rename(tmp, ln->state_path) != 0) {
        kp_err_set(err, "cannot rename %s: %s", tmp, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    return rc;
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

static int remove_ns(const char *name, struct kp_err *err)
{
    if (!localnet_name_is_ours(name) || !ns_exists(name))
        return 0;
    kill_ns_pids(name);
    return cmd(NULL, err, "ip", "netns", "del", name, NULL);
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

    /* pods first, the underlay last: the reverse of creation */
    for (int i = LN_NS_COUNT - 1; i >= 0; i--) {
        kp_err_clear(&one);
        if (remove_ns(ln->ns[i], &one) != 0 && rc == 0) {
            kp_err_set(err, "%s", kp_err_msg(&one));
            rc = -1;
        }
    }
    remove_dir(ln->run_dir);
    if (rc == 0)
        unlink(ln->state_path);
    return rc;
}

/* Reads a state file: owner pid and starttime, the namespaces and the directory it lists. */
static int read_state(const char *path, long *pid, long long *start, char **ns, int *n_ns,
                      char **dir)
{
    FILE *f = fopen(path, "r");
    char line[512];

    *pid = 0;
    *start = -1;
    *n_ns = 0;
    *dir = NULL;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char *v = strchr(line, ' ');
        if (!v || line[0] == '#')
            continue;
        *v++ = '\0';
        v[strcspn(v, "\n")] = '\0';
        if (strcmp(line, "pid") == 0)
            *pid = strtol(v, NULL, 10);
        else if (strcmp(line, "starttime") == 0)
            *start = strtoll(v, NULL, 10);
        else if (strcmp(line, "netns") == 0 && *n_ns < MAX_STATE_NS && localnet_name_is_ours(v))
            ns[(*n_ns)++] = kp_xstrdup(v);
        else if (strcmp(line, "dir") == 0 && !*dir)
            *dir = kp_xstrdup(v);
    }
    fclose(f);
    return 0;
}

/* Cleans one earlier run from its state file unless its owner still runs. Returns 1 when
 * cleaned, 0 when left alone, -1 on failure. */
static int cleanup_state_file(const char *state_dir, const char *file, struct kp_err *err)
{
    char *path = kp_xasprintf("%s/%s", state_dir, file);
    char *ns[MAX_STATE_NS];
    char *dir = NULL;
    long pid;
    long long start;
    int n_ns = 0, rc = 0;

    if (read_state(path, &pid, &start, ns, &n_ns, &dir) != 0)
        goto out;
    if (pid > 0 && pid != getpid() && proc_starttime((pid_t)pid) == start)
        goto out; /* still running: not a leftover */
    rc = 1;
    for (int i = n_ns - 1; i >= 0; i--)
        if (remove_ns(ns[i], err) != 0)
            rc = -1;
    if (dir && strncmp(dir, state_dir, strlen(state_dir)) == 0)
        remove_dir(dir);
    if (rc == 1)
        unlink(path);
out:
    for (int i = 0; i < n_ns; i++)
        free(ns[i]);
    free(dir);
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

/* ---- building ---- */

/* A namespace with loopback up and the sysctls of its role (router: forwarding on, no ICMP
 * redirects, since pods route through the node and back out of the same bridge). */
static int ns_add(struct localnet *ln, enum localnet_ns i, struct kp_err *err)
{
    bool router = i == LN_UNDERLAY || i == LN_NODE1 || i == LN_NODE2;
    const char *name = ln->ns[i];

    if (cmd(ln, err, "ip", "netns", "add", name, NULL) != 0 ||
        cmd(ln, err, "ip", "-n", name, "link", "set", "lo", "up", NULL) != 0)
        return -1;
    return cmd(ln, err, "ip", "netns", "exec", name, "sysctl", "-q", "-e", "-w",
               router ? "net.ipv4.ip_forward=1" : "net.ipv4.ip_forward=0",
               "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
               "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0",
               "net.ipv4.conf.all.accept_redirects=0", "net.ipv4.conf.default.accept_redirects=0",
               "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1", NULL);
}

/* A veth pair created directly in two of our namespaces, both ends up. */
static int veth(struct localnet *ln, enum localnet_ns a, const char *a_dev, enum localnet_ns b,
                const char *b_dev, struct kp_err *err)
{
    char mtu[16];

    snprintf(mtu, sizeof(mtu), "%d", ln->mtu);
    if (cmd(ln, err, "ip", "link", "add", a_dev, "netns", ln->ns[a], "mtu", mtu, "type", "veth",
            "peer", "name", b_dev, "netns", ln->ns[b], "mtu", mtu, NULL) != 0)
        return -1;
    if (cmd(ln, err, "ip", "-n", ln->ns[a], "link", "set", a_dev, "up", NULL) != 0)
        return -1;
    return cmd(ln, err, "ip", "-n", ln->ns[b], "link", "set", b_dev, "up", NULL);
}

static int bridge(struct localnet *ln, enum localnet_ns n, const char *dev, const char *cidr,
                  struct kp_err *err)
{
    char mtu[16];

    snprintf(mtu, sizeof(mtu), "%d", ln->mtu);
    if (cmd(ln, err, "ip", "-n", ln->ns[n], "link", "add", dev, "mtu", mtu, "type", "bridge",
            NULL) != 0 ||
        cmd(ln, err, "ip", "-n", ln->ns[n], "addr", "add", cidr, "dev", dev, NULL) != 0)
        return -1;
    return cmd(ln, err, "ip", "-n", ln->ns[n], "link", "set", dev, "up", NULL);
}

static int enslave(struct localnet *ln, enum localnet_ns n, const char *dev, const char *br,
                   struct kp_err *err)
{
    return cmd(ln, err, "ip", "-n", ln->ns[n], "link", "set", dev, "master", br, NULL);
}

static int addr(struct localnet *ln, enum localnet_ns n, const char *cidr, const char *dev,
                struct kp_err *err)
{
    return cmd(ln, err, "ip", "-n", ln->ns[n], "addr", "add", cidr, "dev", dev, NULL);
}

static int route(struct localnet *ln, enum localnet_ns n, const char *dst, const char *via,
                 struct kp_err *err)
{
    return cmd(ln, err, "ip", "-n", ln->ns[n], "route", "add", dst, "via", via, "dev", "eth0",
               "onlink", NULL);
}

/* The "VPC": an underlay bridge joining both nodes, and a routed link to the external host. */
static int build_underlay(struct localnet *ln, struct kp_err *err)
{
    if (bridge(ln, LN_UNDERLAY, "br0", "198.18.0.254/24", err) != 0 ||
        veth(ln, LN_NODE1, "eth0", LN_UNDERLAY, "node1", err) != 0 ||
        enslave(ln, LN_UNDERLAY, "node1", "br0", err) != 0 ||
        addr(ln, LN_NODE1, "198.18.0.1/24", "eth0", err) != 0 ||
        veth(ln, LN_NODE2, "eth0", LN_UNDERLAY, "node2", err) != 0 ||
        enslave(ln, LN_UNDERLAY, "node2", "br0", err) != 0 ||
        addr(ln, LN_NODE2, "198.18.0.2/24", "eth0", err) != 0 ||
        veth(ln, LN_EXTERNAL, "eth0", LN_UNDERLAY, "ext", err) != 0 ||
        addr(ln, LN_UNDERLAY, "198.18.4.1/24", "ext", err) != 0 ||
        addr(ln, LN_EXTERNAL, "198.18.4.2/24", "eth0", err) != 0 ||
        route(ln, LN_EXTERNAL, "default", "198.18.4.1", err) != 0)
        return -1;
    return 0;
}

/* A node: its pod bridge, routes to the other node's pods and out of the cluster. */
static int build_node(struct localnet *ln, enum localnet_ns node, struct kp_err *err)
{
    bool first = node == LN_NODE1;

    if (bridge(ln, node, "cni0", first ? "198.18.1.1/24" : "198.18.2.1/24", err) != 0 ||
        route(ln, node, first ? "198.18.2.0/24" : "198.18.1.0/24",
              first ? "198.18.0.2" : "198.18.0.1", err) != 0 ||
        route(ln, node, "default", "198.18.0.254", err) != 0)
        return -1;
    return 0;
}

/* A pod: eth0 with a /32 address, default route via its node's bridge address. */
static int build_pod(struct localnet *ln, enum localnet_ns pod, enum localnet_ns node,
                     enum localnet_addr a, const char *host_dev, struct kp_err *err)
{
    char cidr[32];

    snprintf(cidr, sizeof(cidr), "%s/32", addrs[a]);
    if (veth(ln, pod, "eth0", node, host_dev, err) != 0 ||
        enslave(ln, node, host_dev, "cni0", err) != 0 || addr(ln, pod, cidr, "eth0", err) != 0 ||
        route(ln, pod, "default", node == LN_NODE1 ? "198.18.1.1" : "198.18.2.1", err) != 0)
        return -1;
    return 0;
}

/* kube-proxy's part (service DNAT) and the CNI's SNAT of pod traffic leaving the cluster. */
static int build_nft(struct localnet *ln, enum localnet_ns node, struct kp_err *err)
{
    char *path = kp_xasprintf("%s/nft-%s.conf", ln->run_dir, ns_suffix[node] + 1);
    FILE *f = fopen(path, "w");
    int rc = -1;

    if (!f) {
        kp_err_set(err, "cannot create %s: %s", path, strerror(errno));
        goto out;
    }
    fprintf(f,
            "table ip %s {\n"
            "  chain services {\n"
            "    type nat hook prerouting priority dstnat; policy accept;\n"
            "    ip daddr %s meta l4proto { tcp, udp } th dport %d dnat to %s:%d\n"
            "    ip daddr %s meta l4proto { tcp, udp } th dport %d dnat to %s:%d\n"
            "  }\n"
            "  chain egress {\n"
            "    type nat hook postrouting priority srcnat; policy accept;\n"
            "    ip saddr %s ip daddr != 198.18.0.0/22 oifname \"eth0\" masquerade\n"
            "  }\n"
            "}\n",
            ln->id, addrs[LA_SVC_SAME], LOCALNET_PORT, addrs[LA_POD_SERVER1], LOCALNET_PORT,
            addrs[LA_SVC_OTHER], LOCALNET_PORT, addrs[LA_POD_SERVER2], LOCALNET_PORT,
            node == LN_NODE1 ? "198.18.1.0/24" : "198.18.2.0/24");
    if (fclose(f) != 0) {
        kp_err_set(err, "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    rc = cmd(ln, err, "ip", "netns", "exec", ln->ns[node], "nft", "-f", path, NULL);
out:
    free(path);
    return rc;
}

static int make_dirs(struct localnet *ln, struct kp_err *err)
{
    if (mkdir(ln->state_dir, 0755) != 0 && errno != EEXIST)
        return kp_err_set(err, "cannot create %s: %s", ln->state_dir, strerror(errno));
    if (mkdir(ln->run_dir, 0700) != 0 && errno != EEXIST)
        return kp_err_set(err, "cannot create %s: %s", ln->run_dir, strerror(errno));
    return 0;
}

int localnet_create(struct localnet *ln, volatile sig_atomic_t *cancel, struct kp_err *err)
{
    int rc = -1;

    ln->cancel = cancel;
    if (localnet_check_host(err) != 0 || make_dirs(ln, err) != 0 || write_state(ln, err) != 0)
        goto out;
    for (int i = 0; i < LN_NS_COUNT; i++) {
        if (ns_exists(ln->ns[i])) {
            kp_err_set(err, "network namespace %s already exists", ln->ns[i]);
            goto out;
        }
        if (ns_add(ln, (enum localnet_ns)i, err) != 0)
            goto out;
    }
    if (build_underlay(ln, err) != 0 || build_node(ln, LN_NODE1, err) != 0 ||
        build_node(ln, LN_NODE2, err) != 0 ||
        build_pod(ln, LN_POD_CLIENT, LN_NODE1, LA_POD_CLIENT, "vethp1", err) != 0 ||
        build_pod(ln, LN_POD_SERVER1, LN_NODE1, LA_POD_SERVER1, "vethp2", err) != 0 ||
        build_pod(ln, LN_POD_SERVER2, LN_NODE2, LA_POD_SERVER2, "vethp1", err) != 0 ||
        build_nft(ln, LN_NODE1, err) != 0 || build_nft(ln, LN_NODE2, err) != 0)
        goto out;
    rc = 0;
out:
    ln->cancel = NULL;
    if (rc != 0)
        kp_err_prefix(err, "building the local cluster %s", ln->id);
    return rc;
}
