/* SPDX-License-Identifier: Apache-2.0 */
/* localnet_build.c - builds the topology of localnet.h. The `ip` commands go in batch files
 * (one for the namespaces, one for every link, one per namespace for addresses and routes),
 * so a build spawns about 20 processes instead of 70; sysctls and nftables follow, one call
 * per namespace. The batch files stay in the run directory for debugging while the run lasts. */
#include "controller/local/localnet.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/local/local_cni.h"
#include "controller/local/localnet_int.h"

/* An `ip -batch` file being written. */
struct batch {
    char *path; /* owned */
    FILE *f;
};

static int batch_open(struct localnet *ln, struct batch *b, const char *name, struct kp_err *err)
{
    b->path = kp_xasprintf("%s/ip-%s.batch", ln->run_dir, name);
    b->f = fopen(b->path, "w");
    if (!b->f) {
        kp_err_set(err, "cannot create %s: %s", b->path, strerror(errno));
        free(b->path);
        b->path = NULL;
        return -1;
    }
    return 0;
}

static void line(struct batch *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(struct batch *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(b->f, fmt, ap);
    va_end(ap);
    fputc('\n', b->f);
}

/* Closes and runs the batch, in namespace ns (NULL = this process's namespace). */
static int batch_run(struct localnet *ln, struct batch *b, const char *ns, struct kp_err *err)
{
    int rc;

    if (fclose(b->f) != 0) {
        kp_err_set(err, "cannot write %s: %s", b->path, strerror(errno));
        free(b->path);
        return -1;
    }
    if (ns)
        rc = localnet_cmd(ln, err, "ip", "-n", ns, "-batch", b->path, NULL);
    else
        rc = localnet_cmd(ln, err, "ip", "-batch", b->path, NULL);
    free(b->path);
    return rc;
}

/* Namespaces, then their sysctls (before any link exists, so that the "default" values reach
 * every interface): routers forward (both families) and send no ICMP redirects, since pods
 * route through the node and back out of the same bridge; rp_filter off; IPv6 without DAD
 * (addresses usable at once), router advertisements or autoconfiguration (no noise). */
static int build_namespaces(struct localnet *ln, struct kp_err *err)
{
    struct batch b;

    for (int i = 0; i < LN_NS_COUNT; i++)
        if (localnet_ns_exists(ln->ns[i]))
            return kp_err_set(err, "network namespace %s already exists", ln->ns[i]);
    if (batch_open(ln, &b, "netns", err) != 0)
        return -1;
    for (int i = 0; i < LN_NS_COUNT; i++)
        line(&b, "netns add %s", ln->ns[i]);
    if (batch_run(ln, &b, NULL, err) != 0)
        return -1;
    for (int i = 0; i < LN_NS_COUNT; i++) {
        bool router = i == LN_UNDERLAY || i == LN_NODE1 || i == LN_NODE2;
        if (localnet_cmd(
                ln, err, "ip", "netns", "exec", ln->ns[i], "sysctl", "-q", "-e", "-w",
                router ? "net.ipv4.ip_forward=1" : "net.ipv4.ip_forward=0",
                "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0",
                "net.ipv4.conf.all.accept_redirects=0", "net.ipv4.conf.default.accept_redirects=0",
                "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.default.disable_ipv6=0",
                router ? "net.ipv6.conf.all.forwarding=1" : "net.ipv6.conf.all.forwarding=0",
                "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                "net.ipv6.conf.all.accept_ra=0", "net.ipv6.conf.default.accept_ra=0",
                "net.ipv6.conf.all.autoconf=0", "net.ipv6.conf.default.autoconf=0",
                "net.ipv6.conf.all.accept_redirects=0", "net.ipv6.conf.default.accept_redirects=0",
                NULL) != 0)
            return -1;
    }
    /* with a CNI: bridged pod traffic goes through netfilter (br_netfilter, as kubeadm asks),
     * so a same-node service reply is un-DNATed; the nodes answer ARP and NDP for the other
     * node's pods (localnet_cni.c) */
    for (int i = LN_NODE1; ln->cni && i <= LN_NODE2; i++)
        if (localnet_cmd(ln, err, "ip", "netns", "exec", ln->ns[i], "sysctl", "-q", "-e", "-w",
                         "net.ipv4.conf.all.proxy_arp=1", "net.ipv6.conf.all.proxy_ndp=1",
                         /* answered at once, not after up to 0.8 s as by default */
                         "net.ipv4.neigh.default.proxy_delay=0",
                         "net.ipv6.neigh.default.proxy_delay=0",
                         "net.bridge.bridge-nf-call-iptables=1",
                         "net.bridge.bridge-nf-call-ip6tables=1", NULL) != 0)
            return -1;
    return 0;
}

/* Every link, created directly inside our namespaces (nothing appears in the host's). */
static int build_links(struct localnet *ln, struct kp_err *err)
{
    static const struct {
        enum localnet_ns a, b;
        const char *b_dev;
    } veths[] = {
        {LN_NODE1, LN_UNDERLAY, "node1"},     {LN_NODE2, LN_UNDERLAY, "node2"},
        {LN_EXTERNAL, LN_UNDERLAY, "ext"},    {LN_POD_CLIENT, LN_NODE1, "vethp1"},
        {LN_POD_SERVER1, LN_NODE1, "vethp2"}, {LN_POD_SERVER2, LN_NODE2, "vethp1"},
    };
    struct batch b;
    /* with a CNI the pods' links are the plugins' */
    size_t n = ln->cni ? 3 : sizeof(veths) / sizeof(veths[0]);

    if (batch_open(ln, &b, "links", err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        line(&b, "link add eth0 netns %s mtu %d type veth peer name %s netns %s mtu %d",
             ln->ns[veths[i].a], ln->mtu, veths[i].b_dev, ln->ns[veths[i].b], ln->mtu);
    line(&b, "link add br0 netns %s mtu %d type bridge", ln->ns[LN_UNDERLAY], ln->mtu);
    if (!ln->cni) {
        line(&b, "link add cni0 netns %s mtu %d type bridge", ln->ns[LN_NODE1], ln->mtu);
        line(&b, "link add cni0 netns %s mtu %d type bridge", ln->ns[LN_NODE2], ln->mtu);
    }
    return batch_run(ln, &b, NULL, err);
}

/* The "VPC": the underlay bridge joining both nodes, and a routed link to the external host. */
static void config_underlay(struct batch *b)
{
    line(b, "link set br0 up");
    line(b, "link set node1 master br0 up");
    line(b, "link set node2 master br0 up");
    line(b, "link set ext up");
    line(b, "addr add 198.18.0.254/24 dev br0");
    line(b, "addr add 198.18.4.1/24 dev ext");
    line(b, "addr add 2001:2::fe/64 dev br0 nodad");
    line(b, "addr add 2001:2:0:4::1/64 dev ext nodad");
}

/* A node: underlay address, pod bridge with the pods' gateway, routes to the other node's
 * pods and, by default, to the VPC router. With a CNI, the pods' side is the plugins'. */
static void config_node(struct batch *b, bool first, bool cni)
{
    line(b, "link set eth0 up");
    line(b, "addr add %s/24 dev eth0", first ? "198.18.0.1" : "198.18.0.2");
    line(b, "addr add %s/64 dev eth0 nodad", first ? "2001:2::1" : "2001:2::2");
    line(b, "route add default via 198.18.0.254 dev eth0 onlink");
    line(b, "route add default via 2001:2::fe dev eth0");
    if (cni)
        return;
    line(b, "link set cni0 up");
    line(b, "addr add %s/24 dev cni0", first ? "198.18.1.1" : "198.18.2.1");
    line(b, "link set vethp1 master cni0 up");
    if (first)
        line(b, "link set vethp2 master cni0 up");
    line(b, "route add %s via %s dev eth0 onlink", first ? "198.18.2.0/24" : "198.18.1.0/24",
         first ? "198.18.0.2" : "198.18.0.1");
    line(b, "addr add %s/64 dev cni0 nodad", first ? "2001:2:0:1::1" : "2001:2:0:2::1");
    line(b, "route add %s via %s dev eth0", first ? "2001:2:0:2::/64" : "2001:2:0:1::/64",
         first ? "2001:2::2" : "2001:2::1");
}

/* A pod or the external host: eth0 with its addresses and a default route per family. */
static void config_host(struct batch *b, const char *cidr, const char *gw, const char *cidr6,
                        const char *gw6)
{
    line(b, "link set eth0 up");
    line(b, "addr add %s dev eth0", cidr);
    line(b, "route add default via %s dev eth0 onlink", gw);
    line(b, "addr add %s dev eth0 nodad", cidr6);
    line(b, "route add default via %s dev eth0 onlink", gw6);
}

static int build_config(struct localnet *ln, struct kp_err *err)
{
    for (int i = 0; i < LN_NS_COUNT; i++) {
        struct batch b;
        char cidr[32], cidr6[64];
        enum localnet_addr pod;
        if (batch_open(ln, &b, localnet_ns_suffix[i] + 1, err) != 0)
            return -1;
        line(&b, "link set lo up");
        switch ((enum localnet_ns)i) {
        case LN_UNDERLAY:
            config_underlay(&b);
            break;
        case LN_NODE1:
        case LN_NODE2:
            config_node(&b, i == LN_NODE1, ln->cni != NULL);
            break;
        case LN_EXTERNAL:
            config_host(&b, "198.18.4.2/24", "198.18.4.1", "2001:2:0:4::2/64", "2001:2:0:4::1");
            break;
        default: /* pods: /32 and /128, everything via their node's bridge address */
            if (ln->cni)
                break; /* the plugins' */
            pod = i == LN_POD_CLIENT    ? LA_POD_CLIENT
                  : i == LN_POD_SERVER1 ? LA_POD_SERVER1
                                        : LA_POD_SERVER2;
            snprintf(cidr, sizeof(cidr), "%s/32", localnet_addr(pod, LOCALNET_IPV4));
            snprintf(cidr6, sizeof(cidr6), "%s/128", localnet_addr(pod, LOCALNET_IPV6));
            config_host(&b, cidr, i == LN_POD_SERVER2 ? "198.18.2.1" : "198.18.1.1", cidr6,
                        i == LN_POD_SERVER2 ? "2001:2:0:2::1" : "2001:2:0:1::1");
            break;
        }
        if (batch_run(ln, &b, ln->ns[i], err) != 0)
            return -1;
    }
    return 0;
}

/* Appends to *text. */
static void add(char **text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(char **text, const char *fmt, ...)
{
    va_list ap;
    char *more = NULL, *t;

    va_start(ap, fmt);
    if (vasprintf(&more, fmt, ap) < 0)
        abort();
    va_end(ap);
    t = kp_xasprintf("%s%s", *text, more);
    free(*text);
    free(more);
    *text = t;
}

/* The egress source of a node's pods: its pod CIDR, or with a CNI "{ a, b }", the addresses
 * the plugins gave its pods (NULL when none of that family); *all: every pod's. Caller frees. */
static char *pod_sources(const struct localnet *ln, enum localnet_ns node, int fam, char **all)
{
    static const char *const cidrs[2][2] = {{"198.18.1.0/24", "2001:2:0:1::/64"},
                                            {"198.18.2.0/24", "2001:2:0:2::/64"}};
    char *mine = kp_xstrdup(""), *every = kp_xstrdup(""), *out = NULL;

    *all = NULL;
    if (!ln->cni) {
        free(mine);
        free(every);
        return kp_xstrdup(cidrs[node == LN_NODE2][fam]);
    }
    for (int i = 0; i < 3; i++) {
        const char *a = ln->pod_addr[i][fam];
        bool here = (i == 2) == (node == LN_NODE2);
        if (!*a)
            continue;
        add(&every, "%s%s", *every ? ", " : "", a);
        if (here)
            add(&mine, "%s%s", *mine ? ", " : "", a);
    }
    if (*mine)
        out = kp_xasprintf("{ %s }", mine);
    if (*every)
        *all = kp_xasprintf("{ %s }", every);
    free(mine);
    free(every);
    return out;
}

/* kube-proxy's part (service DNAT) and the CNI's SNAT of pod traffic leaving the cluster. */
static int build_nft(struct localnet *ln, enum localnet_ns node, struct kp_err *err)
{
    static const char *const ipf[2] = {"ip", "ip6"}, *const cluster[2] = {"198.18.0.0/22",
                                                                          "2001:2::/62"};
    char *file = kp_xasprintf("nft-%s.conf", localnet_ns_suffix[node] + 1);
    char *text = kp_xasprintf("table inet %s {\n  chain services {\n"
                              "    type nat hook prerouting priority dstnat; policy accept;\n",
                              ln->id);
    char *path;
    int rc = -1;

    for (int fam = 0; fam < 2; fam++) {
        enum localnet_family f = fam ? LOCALNET_IPV6 : LOCALNET_IPV4;
        const char *pod1 = localnet_addr_of(ln, LA_POD_SERVER1, f);
        const char *pod2 = localnet_addr_of(ln, LA_POD_SERVER2, f);
        const char *vips[2] = {localnet_addr(LA_SVC_SAME, f), localnet_addr(LA_SVC_OTHER, f)};
        const char *pods[2] = {pod1, pod2};
        for (int k = 0; k < 2; k++) {
            if (!pods[k])
                continue;
            if (fam)
                add(&text,
                    "    ip6 daddr %s meta l4proto { tcp, udp } th dport %d dnat ip6 to [%s]:%d\n",
                    vips[k], LOCALNET_PORT, pods[k], LOCALNET_PORT);
            else
                add(&text,
                    "    ip daddr %s meta l4proto { tcp, udp } th dport %d dnat ip to %s:%d\n",
                    vips[k], LOCALNET_PORT, pods[k], LOCALNET_PORT);
        }
    }
    add(&text, "  }\n  chain egress {\n"
               "    type nat hook postrouting priority srcnat; policy accept;\n");
    for (int fam = 0; fam < 2; fam++) {
        char *all = NULL, *mine = pod_sources(ln, node, fam, &all);
        if (mine) {
            add(&text, "    %s saddr %s %s daddr != %s", ipf[fam], mine, ipf[fam], cluster[fam]);
            if (all) /* with a CNI: pod to pod is not egress, whatever the range */
                add(&text, " %s daddr != %s", ipf[fam], all);
            add(&text, " oifname \"eth0\" masquerade\n");
        }
        free(mine);
        free(all);
    }
    add(&text, "  }\n}\n");
    path = localnet_write(ln, file, text, err);
    if (path)
        rc = localnet_cmd(ln, err, "ip", "netns", "exec", ln->ns[node], "nft", "-f", path, NULL);
    free(path);
    free(text);
    free(file);
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
    if (localnet_check_host(err) != 0 || make_dirs(ln, err) != 0 ||
        localnet_write_state(ln, err) != 0)
        goto out;
    if (build_namespaces(ln, err) != 0 || build_links(ln, err) != 0 || build_config(ln, err) != 0)
        goto out;
    if (ln->cni) { /* the pods: the plugins' ADD; their conflist kept for a later run's DEL */
        ln->cni_copy = localnet_write(ln, "cni.conflist", local_cni_text(ln->cni), err);
        if (!ln->cni_copy || localnet_cni_build(ln, err) != 0)
            goto out;
    }
    if (build_nft(ln, LN_NODE1, err) != 0 || build_nft(ln, LN_NODE2, err) != 0)
        goto out;
    rc = 0;
out:
    ln->cancel = NULL;
    if (rc != 0)
        kp_err_prefix(err, "building the local cluster %s", ln->id);
    return rc;
}
