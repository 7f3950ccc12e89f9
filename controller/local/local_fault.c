/* SPDX-License-Identifier: Apache-2.0 */
/* local_fault.c - the test-only faults of local_fault.h: parsing SPEC against the table of
 * kinds, and the `ip`, `tc` and `nft` commands that put each in place inside the run's
 * namespaces. */
#include "controller/local/local_fault.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/subproc.h"
#include "base/units.h"
#include "controller/local/localnet.h"

/* The veth pairs of localnet_build.c, by the name a SPEC uses: each end's namespace and
 * device. */
static const struct link {
    const char *name;
    enum localnet_ns a_ns;
    const char *a_dev;
    enum localnet_ns b_ns;
    const char *b_dev;
} links[] = {
    {"node1", LN_NODE1, "eth0", LN_UNDERLAY, "node1"},
    {"node2", LN_NODE2, "eth0", LN_UNDERLAY, "node2"},
    {"ext", LN_EXTERNAL, "eth0", LN_UNDERLAY, "ext"},
    {"client", LN_POD_CLIENT, "eth0", LN_NODE1, "vethp1"},
    {"server1", LN_POD_SERVER1, "eth0", LN_NODE1, "vethp2"},
    {"server2", LN_POD_SERVER2, "eth0", LN_NODE2, "vethp1"},
};
#define N_LINKS    (sizeof(links) / sizeof(links[0]))
#define LINK_NAMES "node1, node2, ext, client, server1 or server2"

/* The keys a SPEC may carry; a kind requires a set of them (and takes no other). */
enum key {
    K_LINK = 1u << 0,
    K_NODE = 1u << 1,
    K_MTU = 1u << 2,
    K_RATE = 1u << 3,
    K_PCT = 1u << 4,
    K_MS = 1u << 5,
    K_RULES = 1u << 6,
    K_DELAY = 1u << 7,
    K_DOWN = 1u << 8,
    K_GAP = 1u << 9,
    K_FLUSH = 1u << 10,
    K_MAX = 1u << 11,
};
static const struct {
    enum key key;
    const char *name;
} key_names[] = {{K_LINK, "link"}, {K_NODE, "node"}, {K_MTU, "mtu"},     {K_RATE, "rate"},
                 {K_PCT, "pct"},   {K_MS, "ms"},     {K_RULES, "rules"}, {K_DELAY, "delay"},
                 {K_DOWN, "down"}, {K_GAP, "gap"},   {K_FLUSH, "flush"}, {K_MAX, "max"}};

struct local_fault {
    char *spec; /* owned */
    const struct kind *kind;
    unsigned keys_seen;
    const struct link *link;
    enum localnet_ns node;
    long mtu;
    uint64_t rate_bps;
    long permille; /* loss, in 1/1000 */
    long ms;
    long rules;
    long max;          /* conntrack-max */
    uint64_t delay_ms; /* cni-add-delay */
    uint64_t down_ms;  /* rollout */
    uint64_t gap_ms;
    bool flush;
};

typedef int apply_fn(const struct local_fault *f, int index, struct localnet *ln,
                     struct kp_err *err);
static apply_fn apply_mtu, apply_mtu_hop, apply_rate, apply_loss, apply_delay, apply_cpu,
    apply_conntrack_max, apply_nothing;

/* The kinds. A new one: a row here, its keys, an apply function. */
static const struct kind {
    const char *name;
    unsigned keys;     /* required */
    unsigned optional; /* accepted too */
    const char *usage;
    apply_fn *apply;
} kinds[] = {
    {"mtu", K_LINK | K_MTU, 0, "mtu:link=L,mtu=BYTES", apply_mtu},
    {"mtu-hop", K_LINK | K_MTU, 0, "mtu-hop:link=L,mtu=BYTES", apply_mtu_hop},
    {"rate", K_LINK | K_RATE, 0, "rate:link=L,rate=RATE", apply_rate},
    {"loss", K_LINK | K_PCT, 0, "loss:link=L,pct=N", apply_loss},
    {"delay", K_LINK | K_MS, 0, "delay:link=L,ms=N", apply_delay},
    {"cpu", K_NODE | K_RULES, 0, "cpu:node=node1|node2,rules=N", apply_cpu},
    {"conntrack-max", K_NODE | K_MAX, 0, "conntrack-max:node=node1|node2,max=N",
     apply_conntrack_max},
    /* read by the backend when it sets up a new pod's network (local_fault_pod_delay_ms) */
    {"cni-add-delay", K_NODE | K_DELAY, 0, "cni-add-delay:node=node1|node2,delay=DUR",
     apply_nothing},
    /* played by the backend's rollout thread (local_fault_rollout, local_rollout.h) */
    {"rollout", K_DOWN | K_GAP, K_FLUSH, "rollout:down=DUR,gap=DUR[,flush=0|1]", apply_nothing},
};
#define N_KINDS    (sizeof(kinds) / sizeof(kinds[0]))
#define KIND_NAMES "mtu, mtu-hop, rate, loss, delay, cpu, conntrack-max, cni-add-delay or rollout"

static int parse_long(const char *v, long lo, long hi, long *out)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi)
        return -1;
    *out = n;
    return 0;
}

static int parse_value(struct local_fault *f, enum key k, const char *v, struct kp_err *err)
{
    double pct;
    char *end;
    struct kp_err e2 = {{0}};

    switch (k) {
    case K_LINK:
        for (size_t i = 0; i < N_LINKS; i++)
            if (strcmp(v, links[i].name) == 0) {
                f->link = &links[i];
                return 0;
            }
        return kp_err_set(err, "unknown link '%s' (" LINK_NAMES ")", v);
    case K_NODE:
        if (strcmp(v, "node1") == 0 || strcmp(v, "node2") == 0) {
            f->node = v[4] == '1' ? LN_NODE1 : LN_NODE2;
            return 0;
        }
        return kp_err_set(err, "unknown node '%s' (node1 or node2)", v);
    case K_MTU:
        if (parse_long(v, 576, 65000, &f->mtu) != 0)
            return kp_err_set(err, "mtu '%s' is not a whole number in [576, 65000]", v);
        return 0;
    case K_RATE:
        if (units_parse_rate_bps(v, &f->rate_bps, &e2) != 0 || f->rate_bps < 1000000 ||
            f->rate_bps > 100000000000ull)
            return kp_err_set(err, "rate '%s' is not a rate in [1M, 100G] bit/s (500M, 200mbit)",
                              v);
        return 0;
    case K_PCT:
        errno = 0;
        pct = strtod(v, &end);
        if (errno || end == v || *end || !(pct >= 0.1 && pct <= 99.9))
            return kp_err_set(err, "pct '%s' is not a percentage in [0.1, 99.9]", v);
        f->permille = lround(pct * 10);
        return 0;
    case K_MS:
        if (parse_long(v, 1, 10000, &f->ms) != 0)
            return kp_err_set(err, "ms '%s' is not a whole number of milliseconds in [1, 10000]",
                              v);
        return 0;
    case K_DELAY:
        if (units_parse_duration_ms(v, &f->delay_ms, &e2) != 0 || f->delay_ms < 1 ||
            f->delay_ms > 60000)
            return kp_err_set(err, "delay '%s' is not a duration in [1ms, 60s] (2s, 500ms)", v);
        return 0;
    case K_DOWN:
    case K_GAP:
        if (units_parse_duration_ms(v, k == K_DOWN ? &f->down_ms : &f->gap_ms, &e2) != 0 ||
            (k == K_DOWN ? f->down_ms : f->gap_ms) < 100 ||
            (k == K_DOWN ? f->down_ms : f->gap_ms) > 600000)
            return kp_err_set(err, "%s '%s' is not a duration in [100ms, 10m] (2s, 500ms)",
                              k == K_DOWN ? "down" : "gap", v);
        return 0;
    case K_FLUSH:
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return kp_err_set(err, "flush '%s' is not 0 or 1", v);
        f->flush = v[0] == '1';
        return 0;
    case K_MAX:
        if (parse_long(v, 1, 1000000, &f->max) != 0)
            return kp_err_set(err, "max '%s' is not a whole number in [1, 1000000]", v);
        return 0;
    default: /* K_RULES */
        if (parse_long(v, 1, 100000, &f->rules) != 0)
            return kp_err_set(err, "rules '%s' is not a whole number in [1, 100000]", v);
        return 0;
    }
}

static int parse_pairs(struct local_fault *f, char *s, struct kp_err *err)
{
    char *save = NULL;

    for (char *kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        enum key k = 0;
        if (!eq || eq == kv || !eq[1])
            return kp_err_set(err, "'%s' is not KEY=VALUE", kv);
        *eq = '\0';
        for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
            if (strcmp(kv, key_names[i].name) == 0)
                k = key_names[i].key;
        if (!k || !((f->kind->keys | f->kind->optional) & k))
            return kp_err_set(err, "%s takes no key '%s' (%s)", f->kind->name, kv, f->kind->usage);
        if (f->keys_seen & k)
            return kp_err_set(err, "key '%s' given twice", kv);
        f->keys_seen |= k;
        if (parse_value(f, k, eq + 1, err) != 0)
            return -1;
    }
    if ((f->keys_seen & f->kind->keys) != f->kind->keys)
        return kp_err_set(err, "%s needs every key of %s", f->kind->name, f->kind->usage);
    return 0;
}

struct local_fault *local_fault_parse(const char *spec, struct kp_err *err)
{
    struct local_fault *f = kp_xcalloc(1, sizeof(*f));
    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    char *rest;
    int rc;

    f->spec = kp_xstrdup(spec);
    for (size_t i = 0; i < N_KINDS; i++)
        if (strlen(kinds[i].name) == klen && strncmp(spec, kinds[i].name, klen) == 0)
            f->kind = &kinds[i];
    if (!f->kind) {
        kp_err_set(err, "--local-fault '%s': unknown kind '%.*s' (" KIND_NAMES ")", spec,
                   (int)(klen > 32 ? 32 : klen), spec);
        local_fault_free(f);
        return NULL;
    }
    rest = kp_xstrdup(colon ? colon + 1 : "");
    rc = parse_pairs(f, rest, err);
    free(rest);
    if (rc != 0) {
        kp_err_prefix(err, "--local-fault '%s'", spec);
        local_fault_free(f);
        return NULL;
    }
    return f;
}

void local_fault_free(struct local_fault *f)
{
    if (!f)
        return;
    free(f->spec);
    free(f);
}

const char *local_fault_spec(const struct local_fault *f)
{
    return f->spec;
}

bool local_fault_rollout(const struct local_fault *f, uint64_t *down_ms, uint64_t *gap_ms,
                         bool *flush)
{
    if (!(f->kind->keys & K_DOWN))
        return false;
    *down_ms = f->down_ms;
    *gap_ms = f->gap_ms;
    *flush = f->flush;
    return true;
}

bool local_fault_on_pod_links(const struct local_fault *f)
{
    return (f->kind->keys & K_DOWN) || (f->link && f->link->b_ns != LN_UNDERLAY);
}

uint64_t local_fault_pod_delay_ms(const struct local_fault *f, enum localnet_ns node)
{
    return (f->kind->keys & K_DELAY) && f->node == node ? f->delay_ms : 0;
}

int local_fault_apply(const struct local_fault *f, int index, struct localnet *ln,
                      struct kp_err *err)
{
    if (f->kind->apply(f, index, ln, err) != 0)
        return kp_err_prefix(err, "--local-fault '%s'", f->spec);
    return 0;
}

/* ---- the kinds ---- */

static int run_in(struct localnet *ln, enum localnet_ns ns, const char *const *args,
                  struct kp_err *err)
{
    const char *argv[24] = {"ip", "netns", "exec", localnet_ns_name(ln, ns)};
    size_t n = 4;

    for (size_t i = 0; args[i] && n < 23; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return subproc_check(argv, err);
}

/* Loads an nftables ruleset (text) into namespace ns, through a file in the run directory. */
static int nft_load(struct localnet *ln, enum localnet_ns ns, int index, const char *text,
                    struct kp_err *err)
{
    char name[96];
    char *path;
    int rc;

    snprintf(name, sizeof(name), "fault-%d-%s.nft", index, localnet_ns_name(ln, ns));
    path = localnet_write(ln, name, text, err);
    if (!path)
        return -1;
    rc = run_in(ln, ns, (const char *const[]){"nft", "-f", path, NULL}, err);
    free(path);
    return rc;
}

/* cni-add-delay: nothing to put in place; the backend waits when it sets up a pod. */
static int apply_nothing(const struct local_fault *f, int index, struct localnet *ln,
                         struct kp_err *err)
{
    (void)f, (void)index, (void)ln, (void)err;
    return 0;
}

static int apply_mtu(const struct local_fault *f, int index, struct localnet *ln,
                     struct kp_err *err)
{
    char mtu[16];

    (void)index;
    snprintf(mtu, sizeof(mtu), "%ld", f->mtu);
    if (run_in(ln, f->link->a_ns,
               (const char *const[]){"ip", "link", "set", "dev", f->link->a_dev, "mtu", mtu, NULL},
               err) != 0)
        return -1;
    return run_in(
        ln, f->link->b_ns,
        (const char *const[]){"ip", "link", "set", "dev", f->link->b_dev, "mtu", mtu, NULL}, err);
}

/* mtu-hop: the far end of the link only (the underlay bridge's port for node1, node2 and ext;
 * the node bridge's port for a pod link) gets the lower MTU, and its bridge keeps the run's,
 * so only frames crossing that port are too big and they are dropped without a word, as a
 * bridge does; and no "fragmentation needed" or "packet too big" leaves or crosses that
 * namespace (an inet table on output and forward, a bridge table on forward), so none would
 * reach a sender even where a router there sent one. */
static int apply_mtu_hop(const struct local_fault *f, int index, struct localnet *ln,
                         struct kp_err *err)
{
    const char *bridge = f->link->b_ns == LN_UNDERLAY ? "br0" : "cni0";
    const char *icmp = "icmp type destination-unreachable icmp code frag-needed drop\n"
                       "    icmpv6 type packet-too-big drop\n";
    char mtu[16], run_mtu[16];
    char *text;
    int rc;

    snprintf(mtu, sizeof(mtu), "%ld", f->mtu);
    snprintf(run_mtu, sizeof(run_mtu), "%d", localnet_mtu(ln));
    if (run_in(ln, f->link->b_ns,
               (const char *const[]){"ip", "link", "set", "dev", f->link->b_dev, "mtu", mtu, NULL},
               err) != 0 ||
        run_in(ln, f->link->b_ns,
               (const char *const[]){"ip", "link", "set", "dev", bridge, "mtu", run_mtu, NULL},
               err) != 0)
        return -1;
    text = kp_xasprintf("table inet kperf_mtuhop%d {\n"
                        "  chain pmtu_out {\n    type filter hook output priority 0;\n    %s  }\n"
                        "  chain pmtu_fwd {\n    type filter hook forward priority 0;\n    %s  }\n"
                        "}\n"
                        "table bridge kperf_mtuhop%d {\n"
                        "  chain pmtu_fwd {\n    type filter hook forward priority 0;\n    %s  }\n"
                        "}\n",
                        index, icmp, icmp, index, icmp);
    rc = nft_load(ln, f->link->b_ns, index, text, err);
    free(text);
    return rc;
}

/* One root qdisc on both ends (each end's egress is one direction of the link). */
static int both_ends_qdisc(const struct local_fault *f, struct localnet *ln,
                           const char *const *qdisc, struct kp_err *err)
{
    for (int end = 0; end < 2; end++) {
        const char *args[16] = {
            "tc", "qdisc", "replace", "dev", end ? f->link->b_dev : f->link->a_dev, "root"};
        size_t n = 6;
        for (size_t i = 0; qdisc[i] && n < 15; i++)
            args[n++] = qdisc[i];
        args[n] = NULL;
        if (run_in(ln, end ? f->link->b_ns : f->link->a_ns, args, err) != 0)
            return -1;
    }
    return 0;
}

static int apply_rate(const struct local_fault *f, int index, struct localnet *ln,
                      struct kp_err *err)
{
    char rate[32], burst[32];
    /* 4 ms worth of bytes, at least 128 KiB: a 64 KiB GSO packet always fits */
    uint64_t b = f->rate_bps / 8 / 250;

    (void)index;
    snprintf(rate, sizeof(rate), "%llubit", (unsigned long long)f->rate_bps);
    snprintf(burst, sizeof(burst), "%llu", (unsigned long long)(b < 131072 ? 131072 : b));
    return both_ends_qdisc(
        f, ln, (const char *const[]){"tbf", "rate", rate, "burst", burst, "latency", "50ms", NULL},
        err);
}

static int apply_delay(const struct local_fault *f, int index, struct localnet *ln,
                       struct kp_err *err)
{
    char ms[24];

    (void)index;
    snprintf(ms, sizeof(ms), "%ldms", f->ms);
    if (both_ends_qdisc(f, ln, (const char *const[]){"netem", "delay", ms, NULL}, err) == 0)
        return 0;
    if (strstr(kp_err_msg(err), "kind is unknown") || strstr(kp_err_msg(err), "netem"))
        return kp_err_set(err, "delay needs the netem qdisc (sch_netem), which this kernel does "
                               "not have; use rate, loss or cpu instead");
    return -1;
}

/* A netdev table per end, dropping permille/1000 of what arrives (ingress: each end sees one
 * direction). */
static int apply_loss(const struct local_fault *f, int index, struct localnet *ln,
                      struct kp_err *err)
{
    for (int end = 0; end < 2; end++) {
        char *text = kp_xasprintf("table netdev kperf_fault%d {\n"
                                  "  chain loss {\n"
                                  "    type filter hook ingress device \"%s\" priority 0;\n"
                                  "    numgen random mod 1000 < %ld drop\n"
                                  "  }\n"
                                  "}\n",
                                  index, end ? f->link->b_dev : f->link->a_dev, f->permille);
        int rc = nft_load(ln, end ? f->link->b_ns : f->link->a_ns, index, text, err);
        free(text);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* rules never-matching rules (source addresses from TEST-NET-1 and 2001:db8::/32, which no
 * local address uses) in a chain every forwarded, received and sent packet of the node
 * jumps to: each packet pays for all of them, none is dropped. */
static int apply_cpu(const struct local_fault *f, int index, struct localnet *ln,
                     struct kp_err *err)
{
    size_t cap = 512 + (size_t)f->rules * 64, len = 0;
    char *text = kp_xmalloc(cap);
    int rc;

    len += (size_t)snprintf(text + len, cap - len, "table inet kperf_fault%d {\n  chain burn {\n",
                            index);
    for (long i = 0; i < f->rules; i++) {
        if (i & 1)
            len += (size_t)snprintf(text + len, cap - len,
                                    "    ip6 saddr 2001:db8::%lx counter drop\n", (unsigned long)i);
        else
            len += (size_t)snprintf(text + len, cap - len,
                                    "    ip saddr 192.0.2.%ld counter drop\n", i % 256);
    }
    snprintf(text + len, cap - len,
             "  }\n"
             "  chain kp_fwd { type filter hook forward priority -10; jump burn; }\n"
             "  chain kp_in { type filter hook input priority -10; jump burn; }\n"
             "  chain kp_out { type filter hook output priority -10; jump burn; }\n"
             "}\n");
    rc = nft_load(ln, f->node, index, text, err);
    free(text);
    return rc;
}

/* conntrack-max: nf_conntrack_max cannot be set in a namespace other than the machine's first
 * (read-only there since Linux 4.x; the machine's is shared), so the node caps the tracked
 * connections it forwards itself: nftables `ct count over N` (nf_conncount, the connections
 * conntrack holds open) on its forward path, and a new connection over the cap is refused with
 * an ICMP administratively-prohibited, as a node whose table is full refuses work. The node's
 * Icmp.OutDestUnreachs counts those refusals (the conntrack statistics do not move: no entry
 * failed to insert). docs/local-backend.md, "Faults". */
static int apply_conntrack_max(const struct local_fault *f, int index, struct localnet *ln,
                               struct kp_err *err)
{
    char *text = kp_xasprintf("table inet kperf_fault%d {\n"
                              "  chain ctmax {\n"
                              "    type filter hook forward priority 0;\n"
                              "    ct state new ct count over %ld counter reject with icmpx type "
                              "admin-prohibited\n"
                              "  }\n"
                              "}\n",
                              index, f->max);
    int rc = nft_load(ln, f->node, index, text, err);

    free(text);
    return rc;
}
