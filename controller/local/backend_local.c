/* SPDX-License-Identifier: Apache-2.0 */
/* backend_local.c - see backend_local.h. */
#include "controller/local/backend_local.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/subproc.h"
#include "controller/agent_args.h"
#include "controller/local/local_cni.h"
#include "controller/local/local_fault.h"
#include "controller/local/local_netpol.h"
#include "controller/local/local_ready.h"
#include "controller/local/local_rollout.h"
#include "controller/local/localnet.h"
#include "controller/run_options.h"

#define MAX_AGENT_OUT (64u * 1024u * 1024u)
#define LISTEN_MARK   "listening on"

enum server {
    SRV_POD1 = 0, /* server pod on node 1 */
    SRV_POD2,     /* server pod on node 2 */
    SRV_HOST1,    /* host network of node 1 */
    SRV_HOST2,    /* host network of node 2 */
    SRV_EXT,      /* the external host */
    SRV_COUNT,
};

static const struct {
    const char *name;
    enum localnet_ns ns;
    enum localnet_addr addr;
} servers[SRV_COUNT] = {
    {"pod-node1", LN_POD_SERVER1, LA_POD_SERVER1},
    {"pod-node2", LN_POD_SERVER2, LA_POD_SERVER2},
    {"host-node1", LN_NODE1, LA_NODE1},
    {"host-node2", LN_NODE2, LA_NODE2},
    {"external", LN_EXTERNAL, LA_EXTERNAL},
};

struct backend_local {
    struct backend base;  /* first: the runner sees a struct backend */
    struct localnet *ln;  /* owned */
    char *agent;          /* owned: path of kperf-agent */
    char *token_path;     /* owned */
    char *ext_token_path; /* owned: --external-token-file, the external host's token; or NULL */
    uint64_t timeout_ms;
    uint64_t udp_rate_bps;       /* the run's --udp-rate: the servers' --max-rate */
    enum localnet_family family; /* --ip-family: the addresses servers bind and clients dial */
    bool both;                   /* --ip-family both: each group once per family */
    pid_t server_pid[SRV_COUNT];
    char *server_log[SRV_COUNT]; /* owned */
    volatile sig_atomic_t interrupted;
    volatile pid_t client_pid;
    struct local_fault **faults; /* owned: --local-fault, put in place after the topology */
    size_t n_faults;
    int ready_pods;                /* readiness pods per node (--pod-churn; 0 = none) */
    struct local_rollout *rollout; /* a rollout fault being played, or NULL */
    struct local_cni *cni;         /* owned: --cni-conf, or NULL */
};

/* ---- where a group runs ---- */

struct route {
    enum localnet_ns client_ns;
    enum server server;        /* the server process behind it */
    enum localnet_addr target; /* the address the client dials (a VIP for services) */
};

static int route_for(const struct plan_group *g, struct route *r)
{
    bool same = g->placement == PLACEMENT_SAME_NODE;

    switch (g->scenario) {
    case SCENARIO_POD_TO_POD:
        *r = (struct route){LN_POD_CLIENT, same ? SRV_POD1 : SRV_POD2,
                            same ? LA_POD_SERVER1 : LA_POD_SERVER2};
        break;
    case SCENARIO_HOST_TO_HOST:
        *r = (struct route){LN_NODE1, same ? SRV_HOST1 : SRV_HOST2, same ? LA_NODE1 : LA_NODE2};
        break;
    case SCENARIO_POD_TO_SERVICE:
        *r = (struct route){LN_POD_CLIENT, same ? SRV_POD1 : SRV_POD2,
                            same ? LA_SVC_SAME : LA_SVC_OTHER};
        break;
    default:
        *r = (struct route){LN_POD_CLIENT, SRV_EXT, LA_EXTERNAL};
        break;
    }
    if (g->placement == PLACEMENT_NODE)
        return -1;
    return 0;
}

/* ---- helpers ---- */

static char *find_agent(struct kp_err *err)
{
    const char *env = getenv("KPERF_AGENT");
    char self[PATH_MAX];
    ssize_t n;
    char *slash, *path;

    if (env && *env) {
        if (access(env, X_OK) != 0)
            return kp_err_set(err, "KPERF_AGENT=%s is not an executable file", env), NULL;
        return kp_xstrdup(env);
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return kp_err_set(err, "cannot find my own binary: %s", strerror(errno)), NULL;
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    path = kp_xasprintf("%s/kperf-agent", self);
    if (access(path, X_OK) != 0) {
        kp_err_set(err,
                   "kperf-agent not found next to kperf (%s). Build it (cmake --build) or set "
                   "KPERF_AGENT=/path/to/kperf-agent",
                   path);
        free(path);
        return NULL;
    }
    return path;
}

static int write_token(const char *path, struct kp_err *err)
{
    unsigned char rnd[32];
    char hex[2 * sizeof(rnd) + 1];
    int fd, rc = -1;

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return kp_err_set(err, "cannot get random bytes for the run token: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        kp_err_set(err, "cannot create %s: %s", path, strerror(errno));
        goto out;
    }
    if (write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex)) {
        kp_err_set(err, "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    explicit_bzero(hex, sizeof(hex));
    explicit_bzero(rnd, sizeof(rnd));
    return rc;
}

/* The first line of a file containing `mark`, or its first line when mark is NULL. */
static bool file_line(const char *path, const char *mark, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    bool found = false;

    if (!f)
        return false;
    while (fgets(buf, (int)len, f)) {
        if (!mark || strstr(buf, mark)) {
            buf[strcspn(buf, "\n")] = '\0';
            found = true;
            break;
        }
    }
    fclose(f);
    return found;
}

/* The family a group measures: its own when the plan has families (--ip-family both). */
static enum localnet_family family_of(const struct backend_local *bl, const struct plan_group *g)
{
    if (g->ip_family)
        return strcmp(g->ip_family, "IPv6") == 0 ? LOCALNET_IPV6 : LOCALNET_IPV4;
    return bl->family;
}

/* The token file of server s and of its clients: the run's, or for the external host the
 * --external-token-file when given (as on a real external host, started with that file). */
static const char *token_for(const struct backend_local *bl, enum server s)
{
    return s == SRV_EXT && bl->ext_token_path ? bl->ext_token_path : bl->token_path;
}

static int start_server(struct backend_local *bl, enum server s, struct kp_err *err)
{
    const char *prefix[] = {"ip", "netns", "exec", localnet_ns_name(bl->ln, servers[s].ns), NULL};
    struct agent_args_opts o = {
        .prefix = prefix,
        .agent = bl->agent,
        /* both families: the default bind, :: dual-stack */
        .host = bl->both ? NULL : localnet_addr_of(bl->ln, servers[s].addr, bl->family),
        .port = LOCALNET_PORT,
        .token_file = token_for(bl, s),
        .udp_rate_bps = bl->udp_rate_bps};
    char *netns = localnet_counters_netns(bl->ln, servers[s].ns);
    char **argv;
    int rc;

    o.counters_netns = netns;
    argv = agent_args_server(&o);
    free(netns);

    bl->server_log[s] = kp_xasprintf("%s/server-%s.log", localnet_run_dir(bl->ln), servers[s].name);
    rc = subproc_spawn((const char *const *)argv, bl->server_log[s], &bl->server_pid[s], err);
    agent_args_free(argv);
    return rc;
}

/* Waits until every started server printed its listening line, or one died, or timeout. */
static int wait_servers(struct backend_local *bl, struct kp_err *err)
{
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
    bool ready[SRV_COUNT] = {false}; /* seen listening: its log is not read again */
    uint64_t waited_ms = 0;
    char line[512];

    for (;;) {
        bool all = true;
        for (int s = 0; s < SRV_COUNT; s++) {
            if (!bl->server_pid[s] || ready[s])
                continue;
            ready[s] = file_line(bl->server_log[s], LISTEN_MARK, line, sizeof(line));
            if (ready[s])
                continue;
            if (!subproc_alive(bl->server_pid[s])) {
                bl->server_pid[s] = 0;
                if (!file_line(bl->server_log[s], NULL, line, sizeof(line)))
                    snprintf(line, sizeof(line), "no output");
                return kp_err_set(err, "kperf-agent server (%s) exited at start: %s",
                                  servers[s].name, line);
            }
            all = false;
        }
        if (all)
            return 0;
        if (bl->interrupted)
            return kp_err_set(err, "interrupted");
        if (waited_ms >= bl->timeout_ms)
            return kp_err_set(err, "kperf-agent servers not listening after %llums (see %s)",
                              (unsigned long long)waited_ms, localnet_run_dir(bl->ln));
        nanosleep(&nap, NULL);
        waited_ms += 20;
    }
}

/* ---- backend ops ---- */

static int local_prepare(struct backend *b, struct plan *plan, struct kp_err *err)
{
    struct backend_local *bl = (struct backend_local *)b;
    bool need[SRV_COUNT] = {false};
    int n_left = 0;

    if (localnet_check_host(err) != 0)
        return -1;
    if (localnet_cleanup_leftovers(LOCALNET_STATE_DIR, &n_left, err) != 0)
        return kp_err_prefix(err, "removing leftovers of an earlier run");
    if (n_left > 0)
        kp_log(KP_LOG_WARN, "removed what %d earlier killed run(s) left behind", n_left);
    {
        static const char *const v4v6[] = {"IPv4", "IPv6"};
        if (bl->both)
            plan_set_families(plan, v4v6, 2);
        else
            plan_set_families(plan, bl->family == LOCALNET_IPV6 ? v4v6 + 1 : v4v6, 1);
    }
    plan_skip(plan, SCENARIO_POD_TO_POD, PLACEMENT_NODE, "sweep mode needs a cluster");
    plan_skip(plan, SCENARIO_HOST_TO_HOST, PLACEMENT_NODE, "sweep mode needs a cluster");
    plan_skip(plan, SCENARIO_POD_TO_SERVICE, PLACEMENT_NODE, "sweep mode needs a cluster");
    for (size_t i = 0; i < plan_group_count(plan); i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        struct route r;
        if (!g->skipped && route_for(g, &r) == 0)
            need[r.server] = true;
    }
    if (bl->cni && local_cni_identify(bl->cni, err) != 0) /* VERSION of each plugin */
        return -1;
    if (localnet_create(bl->ln, &bl->interrupted, err) != 0 ||
        localnet_cni_require(bl->ln, bl->family, err) != 0 ||
        (bl->both && localnet_cni_require(bl->ln, LOCALNET_IPV6, err) != 0))
        return -1;
    for (size_t i = 0; i < bl->n_faults; i++) {
        if (local_fault_apply(bl->faults[i], (int)i, bl->ln, err) != 0)
            return -1;
        kp_log(KP_LOG_WARN, "test-only fault in place: %s", local_fault_spec(bl->faults[i]));
    }
    bl->token_path = kp_xasprintf("%s/token", localnet_run_dir(bl->ln));
    if (write_token(bl->token_path, err) != 0)
        return -1;
    for (int s = 0; s < SRV_COUNT; s++)
        if (need[s] && start_server(bl, (enum server)s, err) != 0)
            return -1;
    if (wait_servers(bl, err) != 0)
        return -1;
    for (size_t i = 0; i < bl->n_faults && !bl->rollout; i++) { /* its clock starts now */
        uint64_t down_ms, gap_ms;
        bool flush;
        if (local_fault_rollout(bl->faults[i], &down_ms, &gap_ms, &flush)) {
            bl->rollout = local_rollout_start(bl->ln, down_ms, gap_ms, flush, err);
            if (!bl->rollout)
                return -1;
        }
    }
    return 0;
}

/* The reason a client run produced no document, in one line. */
static int client_failure(const struct subproc_result *r, uint64_t timeout_ms, struct kp_err *err)
{
    const char *e = r->err ? r->err + strspn(r->err, "\n ") : "";
    int len = (int)strcspn(e, "\n");

    if (r->cancelled)
        return kp_err_set(err, "interrupted");
    if (r->timed_out)
        return kp_err_set(err, "kperf-agent client did not finish within %llus",
                          (unsigned long long)(timeout_ms / 1000));
    if (r->out_truncated)
        return kp_err_set(err, "kperf-agent client printed more than %u bytes", MAX_AGENT_OUT);
    if (r->term_signal)
        return kp_err_set(err, "kperf-agent client killed by signal %d%s%.*s", r->term_signal,
                          len ? ": " : "", len, e);
    return kp_err_set(err, "kperf-agent client exited with status %d: %.*s", r->exit_code,
                      len ? len : 9, len ? e : "no output");
}

static int local_run_client(struct backend *b, const struct run_spec *spec, json_t **doc,
                            struct kp_err *err)
{
    struct backend_local *bl = (struct backend_local *)b;
    const char *prefix[] = {"ip", "netns", "exec", NULL /* the client's namespace */, NULL};
    struct agent_args_opts ao = {
        .prefix = prefix, .agent = bl->agent, .port = LOCALNET_PORT, .token_file = bl->token_path};
    char **argv = NULL, *netns;
    struct route r;
    struct subproc_result res = {0};
    struct subproc_opts o = {
        .max_out = MAX_AGENT_OUT, .cancel = &bl->interrupted, .pid_slot = &bl->client_pid};
    json_error_t jerr;
    int rc = -1;

    *doc = NULL;
    if (route_for(spec->group, &r) != 0)
        return kp_err_set(err, "the local backend has no %s placement",
                          spec->group->placement_label);
    if (!bl->server_pid[r.server] || !subproc_alive(bl->server_pid[r.server])) {
        char line[512] = "not started";
        if (bl->server_log[r.server])
            file_line(bl->server_log[r.server], NULL, line, sizeof(line));
        return kp_err_set(err, "kperf-agent server (%s) is not running: %s", servers[r.server].name,
                          line);
    }
    prefix[3] = localnet_ns_name(bl->ln, r.client_ns);
    ao.token_file = token_for(bl, r.server);
    ao.host = localnet_addr_of(bl->ln, r.target, family_of(bl, spec->group));
    netns = localnet_counters_netns(bl->ln, r.client_ns);
    ao.counters_netns = netns;
    argv = agent_args_client(spec, &ao);
    free(netns);
    o.timeout_ms = spec->timeout_ms;
    if (kp_log_enabled(KP_LOG_DEBUG)) {
        char *line = subproc_join((const char *const *)argv);
        kp_log(KP_LOG_DEBUG, "running %s", line);
        free(line);
    }
    if (subproc_run((const char *const *)argv, &o, &res, err) != 0)
        goto out;
    if (res.cancelled || res.timed_out || res.out_truncated || !res.out_len) {
        client_failure(&res, spec->timeout_ms, err);
        goto out;
    }
    *doc = json_loadb(res.out, res.out_len, 0, &jerr);
    if (!*doc || !json_is_object(*doc)) {
        json_decref(*doc);
        *doc = NULL;
        if (res.exit_code != 0)
            client_failure(&res, spec->timeout_ms, err);
        else
            kp_err_set(err, "kperf-agent client printed invalid JSON: %s (line %d)", jerr.text,
                       jerr.line);
        goto out;
    }
    rc = 0;
out:
    subproc_result_cleanup(&res);
    agent_args_free(argv);
    return rc;
}

static json_t *os_release_name(void)
{
    char line[256];
    FILE *f = fopen("/etc/os-release", "r");
    json_t *name = NULL;

    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            if (*v == '"') {
                v++;
                v[strcspn(v, "\"")] = '\0';
            }
            name = json_string(v);
            break;
        }
    }
    if (f)
        fclose(f);
    return name ? name : json_string("unknown");
}

/* The node's NIC (eth0, its underlay link) and TCP sysctls as `kperf-agent node-facts` reads
 * them inside the node's namespace; NULL (logged) when the agent could not tell. */
static json_t *node_net_facts(const struct backend_local *bl, const char *ns)
{
    const char *argv[] = {"ip", "netns", "exec", ns, bl->agent, "node-facts", "eth0", NULL};
    struct subproc_opts o = {.timeout_ms = 5000, .stdin_null = true};
    struct subproc_result r = {0};
    struct kp_err err;
    json_t *facts = NULL;

    kp_err_clear(&err);
    if (subproc_run(argv, &o, &r, &err) == 0 && r.exit_code == 0 && r.out_len)
        facts = json_loadb(r.out, r.out_len, 0, NULL);
    if (!json_is_object(facts)) {
        kp_log(KP_LOG_INFO, "node facts of %s unavailable: %s", ns,
               r.err && *r.err ? r.err : kp_err_msg(&err));
        json_decref(facts);
        facts = NULL;
    }
    subproc_result_cleanup(&r);
    return facts;
}

static json_t *local_describe(struct backend *b)
{
    struct backend_local *bl = (struct backend_local *)b;
    int mtu = localnet_mtu(bl->ln);
    struct utsname u;
    json_t *nodes = json_array();
    json_t *cni, *d;
    char ext[64];

    if (uname(&u) != 0)
        snprintf(u.release, sizeof(u.release), "unknown");
    for (int i = 0; i < 2; i++) {
        /* stable names ("node1"), so that two local reports compare without a provenance
         * difference; the run's namespace is kept beside it */
        json_t *n = json_pack(
            "{s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:i}", "name", i == 0 ? "node1" : "node2",
            "namespace", localnet_ns_name(bl->ln, i == 0 ? LN_NODE1 : LN_NODE2), "role",
            i == 0 ? "client+server" : "server", "kernel", u.release, "os_image", os_release_name(),
            "container_runtime", "none (agent processes in network namespaces)", "internal_ip",
            localnet_addr(i == 0 ? LA_NODE1 : LA_NODE2, bl->family), "mtu", mtu);
        json_t *net = node_net_facts(bl, localnet_ns_name(bl->ln, i == 0 ? LN_NODE1 : LN_NODE2));
        if (net)
            json_object_set_new(n, "net", net);
        json_array_append_new(nodes, n);
    }
    cni = bl->cni
              ? local_cni_describe(bl->cni, mtu)
              : json_pack(
                    "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i}}", "name", "kperf-local (bridge+veth)",
                    "version", KPERF_VERSION, "settings", "pod_network",
                    "veth to a per-node bridge, /32 and /128 pod addresses routed via the node",
                    "node_routing", "pod CIDRs routed across a veth underlay", "service_proxy",
                    "nftables DNAT (kube-proxy style)", "egress",
                    "SNAT (masquerade) at the node for destinations outside 198.18.0.0/22 and "
                    "2001:2::/62",
                    "mtu", mtu);
    if (cni && bl->n_faults > 0) { /* a setting: compare's provenance names it first */
        char *tf = kp_xstrdup(local_fault_spec(bl->faults[0]));
        for (size_t i = 1; i < bl->n_faults; i++) {
            char *t = kp_xasprintf("%s; %s", tf, local_fault_spec(bl->faults[i]));
            free(tf);
            tf = t;
        }
        json_object_set_new(json_object_get(cni, "settings"), "test_faults", json_string(tf));
        free(tf);
    }
    snprintf(ext, sizeof(ext), bl->family == LOCALNET_IPV6 ? "[%s]:%d" : "%s:%d",
             localnet_addr(LA_EXTERNAL, bl->family), LOCALNET_PORT);
    d = json_pack("{s:o, s:o, s:s, s:s, s:{s:i, s:i}, s:s, s:[s,s], s:s}", "nodes", nodes, "cni",
                  cni, "kube_proxy_mode", "nftables (kperf-local)", "external_server", ext, "mtu",
                  "pod", mtu, "host", mtu, "run_id", localnet_id(bl->ln), "cluster_ip_families",
                  "IPv4", "IPv6", "ip_family", bl->family == LOCALNET_IPV6 ? "IPv6" : "IPv4");
    if (d && bl->both) {
        json_object_del(d, "ip_family");
        json_object_set_new(d, "ip_families", json_pack("[s,s]", "IPv4", "IPv6"));
    } else if (d) {
        json_object_set_new(d, "ip_families",
                            json_pack("[s]", bl->family == LOCALNET_IPV6 ? "IPv6" : "IPv4"));
    }
    return d ? d : json_object();
}

/* Pod network readiness (local_ready.h), measured when the runner asks, after the tests:
 * short-lived pods on both nodes dial the server pod of node 1 (started here if the plan did
 * not need it). NULL when turned off (--pod-churn 0), interrupted or the server cannot start. */
static json_t *local_readiness(struct backend *b)
{
    struct backend_local *bl = (struct backend_local *)b;
    struct local_ready_opts o = {.ln = bl->ln,
                                 .agent = bl->agent,
                                 .token_file = token_for(bl, SRV_POD1),
                                 .server = localnet_addr_of(bl->ln, LA_POD_SERVER1, bl->family),
                                 .port = LOCALNET_PORT,
                                 .pods_per_node = bl->ready_pods,
                                 .timeout_ms = bl->timeout_ms < 10000 ? bl->timeout_ms : 10000,
                                 .cancel = &bl->interrupted};
    uint64_t t0 = clock_now_ms();
    json_t *pods;
    struct kp_err err;

    if (bl->ready_pods <= 0 || bl->interrupted)
        return NULL;
    kp_err_clear(&err);
    if (!bl->server_pid[SRV_POD1] &&
        (start_server(bl, SRV_POD1, &err) != 0 || wait_servers(bl, &err) != 0)) {
        kp_log(KP_LOG_WARN, "pod network readiness not measured: %s", kp_err_msg(&err));
        return NULL;
    }
    for (size_t i = 0; i < bl->n_faults; i++) {
        o.delay_ms[0] += local_fault_pod_delay_ms(bl->faults[i], LN_NODE1);
        o.delay_ms[1] += local_fault_pod_delay_ms(bl->faults[i], LN_NODE2);
    }
    kp_log(KP_LOG_INFO, "pod network readiness: %d pods per node", bl->ready_pods);
    pods = local_ready_measure(&o);
    kp_log(KP_LOG_INFO, "pod network readiness: %zu pods in %llu ms", json_array_size(pods),
           (unsigned long long)(clock_now_ms() - t0));
    if (bl->interrupted) {
        json_decref(pods);
        return NULL;
    }
    return pods;
}

static void local_interrupt(struct backend *b)
{
    struct backend_local *bl = (struct backend_local *)b;
    pid_t pid = bl->client_pid;

    bl->interrupted = 1;
    if (pid > 0)
        kill(pid, SIGTERM);
}

static int local_cleanup(struct backend *b, struct kp_err *err)
{
    struct backend_local *bl = (struct backend_local *)b;

    local_rollout_stop(bl->rollout);
    bl->rollout = NULL;
    for (int s = 0; s < SRV_COUNT; s++) {
        subproc_stop(bl->server_pid[s], 2000);
        bl->server_pid[s] = 0;
    }
    if (localnet_destroy(bl->ln, err) != 0)
        return kp_err_prefix(err, "removing the local cluster %s", localnet_id(bl->ln));
    return 0;
}

static void local_destroy(struct backend *b)
{
    struct backend_local *bl = (struct backend_local *)b;

    if (!bl)
        return;
    for (int s = 0; s < SRV_COUNT; s++)
        free(bl->server_log[s]);
    for (size_t i = 0; i < bl->n_faults; i++)
        local_fault_free(bl->faults[i]);
    free(bl->faults);
    localnet_free(bl->ln);
    local_cni_free(bl->cni);
    free(bl->token_path);
    free(bl->ext_token_path);
    free(bl->agent);
    free(bl);
}

static int local_netpol(struct backend *b, unsigned rules, struct kp_err *err)
{
    return local_netpol_apply(((struct backend_local *)b)->ln, rules, err);
}

/* ---- kperf watch: the probe operations (backend.h) ---- */

#define PROBE_GRACE 5000 /* ms a probe may take to write its document after SIGTERM */

struct local_probe {
    pid_t pid;       /* 0 once it ended (then reaped: the pid is not ours any more) */
    char *out, *log; /* its document (--output), its stderr and stdout: in the run directory */
};

/* `ip netns exec <g's client ns> kperf-agent probe --server <g's target> --token-file <the
 * run's token> args... --output <run dir>/probe-N.json`, logging to <run dir>/probe-N.log */
static int local_probe_start(struct backend *b, const struct plan_group *g,
                             const struct backend_probe_opts *o, struct backend_probe **out,
                             struct kp_err *err)
{
    struct backend_local *bl = (struct backend_local *)b;
    struct local_probe *p;
    struct route r;
    char *server;
    size_t n = 0, i = 0;
    const char **argv;
    int rc;

    *out = NULL;
    if (route_for(g, &r) != 0)
        return kp_err_set(err, "the local backend has no %s placement", g->placement_label);
    if (!bl->server_pid[r.server] || !subproc_alive(bl->server_pid[r.server]))
        return kp_err_set(err, "kperf-agent server (%s) is not running", servers[r.server].name);
    p = kp_xcalloc(1, sizeof(*p));
    p->out = kp_xasprintf("%s/probe-%zu.json", localnet_run_dir(bl->ln), o->index);
    p->log = kp_xasprintf("%s/probe-%zu.log", localnet_run_dir(bl->ln), o->index);
    *out = (struct backend_probe *)p;
    while (o->args && o->args[n])
        n++;
    server = agent_args_host_port(localnet_addr_of(bl->ln, r.target, bl->family), LOCALNET_PORT);
    argv = kp_xcalloc(n + 14, sizeof(*argv));
    for (const char *const *h =
             (const char *const[]){"ip", "netns", "exec", localnet_ns_name(bl->ln, r.client_ns),
                                   bl->agent, "probe", "--server", server, "--token-file",
                                   token_for(bl, r.server), NULL};
         *h; h++)
        argv[i++] = *h;
    for (size_t k = 0; k < n; k++)
        argv[i++] = o->args[k];
    argv[i++] = "--output";
    argv[i++] = p->out;
    argv[i] = NULL;
    rc = subproc_spawn(argv, p->log, &p->pid, err);
    free(argv);
    free(server);
    return rc;
}

static const char *local_probe_log(const struct backend_probe *bp)
{
    return ((const struct local_probe *)bp)->log;
}

static bool local_probe_running(struct backend_probe *bp)
{
    struct local_probe *p = (struct local_probe *)bp;

    if (p->pid > 0 && !subproc_alive(p->pid))
        p->pid = 0;
    return p->pid > 0;
}

static void local_probe_stop(struct backend *b, struct backend_probe *bp)
{
    struct local_probe *p = (struct local_probe *)bp;

    (void)b;
    if (p->pid > 0)
        kill(p->pid, SIGTERM);
}

static int local_probe_wait(struct backend_probe *bp, struct kp_err *err)
{
    struct local_probe *p = (struct local_probe *)bp;

    (void)err;
    if (p->pid > 0)
        (void)subproc_stop(p->pid, PROBE_GRACE);
    p->pid = 0;
    return 0;
}

static json_t *local_probe_doc(const struct backend_probe *bp, json_error_t *jerr)
{
    return json_load_file(((const struct local_probe *)bp)->out, 0, jerr);
}

static void local_probe_free(struct backend *b, struct backend_probe *bp)
{
    struct local_probe *p = (struct local_probe *)bp;

    (void)b;
    if (!p)
        return;
    if (p->pid > 0)
        (void)subproc_stop(p->pid, PROBE_GRACE);
    free(p->out); /* the files go with the run directory */
    free(p->log);
    free(p);
}

/* KPERF_LOCAL_RUN_ID, KPERF_LOCAL_NS_UNDERLAY (links node1, node2, ext), KPERF_LOCAL_NS_NODE1,
 * KPERF_LOCAL_NS_NODE2, KPERF_LOCAL_NS_EXTERNAL */
static char **local_watch_env(struct backend *b)
{
    struct backend_local *bl = (struct backend_local *)b;
    static const struct {
        const char *name;
        enum localnet_ns ns;
    } vars[] = {
        {"KPERF_LOCAL_NS_UNDERLAY", LN_UNDERLAY},
        {"KPERF_LOCAL_NS_NODE1", LN_NODE1},
        {"KPERF_LOCAL_NS_NODE2", LN_NODE2},
        {"KPERF_LOCAL_NS_EXTERNAL", LN_EXTERNAL},
    };
    size_t n = sizeof(vars) / sizeof(vars[0]);
    char **env = kp_xcalloc(n + 2, sizeof(*env));

    env[0] = kp_xasprintf("KPERF_LOCAL_RUN_ID=%s", localnet_id(bl->ln));
    for (size_t i = 0; i < n; i++)
        env[i + 1] = kp_xasprintf("%s=%s", vars[i].name, localnet_ns_name(bl->ln, vars[i].ns));
    return env;
}

static const struct backend_ops local_ops = {
    .name = "local",
    .batches_tests = false,
    .prepare = local_prepare,
    .run_client = local_run_client,
    .describe = local_describe,
    .readiness = local_readiness,
    .interrupt = local_interrupt,
    .netpol_apply = local_netpol,
    .cleanup = local_cleanup,
    .destroy = local_destroy,
    .probe_start = local_probe_start,
    .probe_log = local_probe_log,
    .probe_running = local_probe_running,
    .probe_stop = local_probe_stop,
    .probe_wait = local_probe_wait,
    .probe_doc = local_probe_doc,
    .probe_free = local_probe_free,
    .watch_env = local_watch_env,
};

struct backend *backend_local_new(const struct run_options *opts, struct kp_err *err)
{
    struct backend_local *bl;
    char id[LOCALNET_ID_LEN + 1];
    char *agent;

    if (localnet_check_host(err) != 0)
        return NULL;
    agent = find_agent(err);
    if (!agent)
        return NULL;
    bl = kp_xcalloc(1, sizeof(*bl));
    bl->base.ops = &local_ops;
    bl->agent = agent;
    bl->timeout_ms = opts->timeout_ms;
    bl->udp_rate_bps = opts->udp_rate_bps;
    if (opts->external_token_file)
        bl->ext_token_path = kp_xstrdup(opts->external_token_file);
    bl->family = opts->ip_family == RUN_IPV6 ? LOCALNET_IPV6 : LOCALNET_IPV4;
    bl->both = opts->ip_family == RUN_IP_BOTH;
    bl->ready_pods = opts->pod_churn < 0 ? LOCAL_READY_DEFAULT_PODS : opts->pod_churn;
    localnet_new_id(id);
    bl->ln = localnet_new(id, opts->mtu, LOCALNET_STATE_DIR);
    if (opts->cni_conf) { /* a missing plugin stops the run before anything is built */
        bl->cni = local_cni_load(opts->cni_conf, opts->cni_path, opts->timeout_ms, err);
        if (!bl->cni) {
            local_destroy(&bl->base);
            return NULL;
        }
        localnet_set_cni(bl->ln, bl->cni);
    }
    if (opts->n_local_faults > 0)
        bl->faults = kp_xcalloc(opts->n_local_faults, sizeof(*bl->faults));
    for (size_t i = 0; i < opts->n_local_faults; i++) {
        bl->faults[i] = local_fault_parse(opts->local_faults[i], err);
        if (!bl->faults[i]) {
            local_destroy(&bl->base);
            return NULL;
        }
        bl->n_faults++;
    }
    return &bl->base;
}
