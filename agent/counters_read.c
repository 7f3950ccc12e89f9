/* SPDX-License-Identifier: Apache-2.0 */
/* counters_read.c - counters_take (counters.h): the files under /proc, one rtnetlink dump of
 * the links and one of the qdiscs, and ETHTOOL_GSTATS per interface, all in one namespace. */
#include "agent/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/gen_stats.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/kp_alloc.h"

#define FILE_CAP     (256 * 1024)
#define NL_BUF       (64 * 1024)
#define MAX_IFACES   64
#define ETHTOOL_MAXN 4096

struct ifaces {
    size_t n;
    char name[MAX_IFACES][IF_NAMESIZE];
};

/* The whole of a /proc file (of this thread's namespace), or NULL. Caller frees. */
static char *read_proc(const char *rel)
{
    char path[128];
    char *buf;
    size_t n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/thread-self/%s", rel);
    f = fopen(path, "re");
    if (!f)
        return NULL;
    buf = kp_xmalloc(FILE_CAP + 1);
    for (size_t r; n < FILE_CAP && (r = fread(buf + n, 1, FILE_CAP - n, f)) > 0;)
        n += r;
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int64_t read_sysctl(const char *path)
{
    FILE *f = fopen(path, "re");
    long long v = -1;

    if (!f)
        return -1;
    if (fscanf(f, "%lld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

static void read_files(struct counters_snap *s)
{
    static const struct {
        const char *rel;
        int (*parse)(const char *, struct counters_snap *);
        unsigned bit;
    } files[] = {
        {"net/snmp", counters_parse_snmp, COUNTERS_SNMP},
        {"net/netstat", counters_parse_snmp, COUNTERS_NETSTAT},
        {"net/snmp6", counters_parse_snmp6, COUNTERS_SNMP6},
        {"net/softnet_stat", counters_parse_softnet, COUNTERS_SOFTNET},
        {"net/stat/nf_conntrack", counters_parse_conntrack, COUNTERS_CONNTRACK},
    };

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char *text = read_proc(files[i].rel);
        if (text && files[i].parse(text, s) == 0)
            s->sources |= files[i].bit;
        free(text);
    }
    if (s->sources & COUNTERS_CONNTRACK) {
        s->conntrack_count = read_sysctl("/proc/sys/net/netfilter/nf_conntrack_count");
        s->conntrack_max = read_sysctl("/proc/sys/net/netfilter/nf_conntrack_max");
    }
}

/* Sends a dump request of type (RTM_GETLINK, RTM_GETQDISC) with an empty family header of
 * hdr_len bytes. 0 or -1. */
static int nl_request(int fd, uint16_t type, size_t hdr_len)
{
    struct {
        struct nlmsghdr nh;
        char body[sizeof(struct ifinfomsg) + sizeof(struct tcmsg)];
    } req;
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};

    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = (uint32_t)NLMSG_LENGTH(hdr_len);
    req.nh.nlmsg_type = type;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = 1;
    return sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0 ? -1 : 0;
}

typedef void nl_each_fn(struct nlmsghdr *nh, struct counters_snap *s, struct ifaces *ifs);

/* Reads the dump's answers until NLMSG_DONE, calling each on every message. 0 or -1. */
static int nl_dump(int fd, nl_each_fn *each, struct counters_snap *s, struct ifaces *ifs)
{
    char *buf = kp_xmalloc(NL_BUF);
    int rc = -1;

    for (;;) {
        ssize_t n = recv(fd, buf, NL_BUF, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto out;
        for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
             nh = NLMSG_NEXT(nh, n)) {
            if (nh->nlmsg_type == NLMSG_DONE) {
                rc = 0;
                goto out;
            }
            if (nh->nlmsg_type == NLMSG_ERROR)
                goto out;
            each(nh, s, ifs);
        }
    }
out:
    free(buf);
    return rc;
}

static void link_each(struct nlmsghdr *nh, struct counters_snap *s, struct ifaces *ifs)
{
    struct ifinfomsg *ifi = NLMSG_DATA(nh);
    int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));
    const char *name = NULL;
    struct rtnl_link_stats64 st;
    int have_stats = 0;

    if (nh->nlmsg_type != RTM_NEWLINK || len < 0)
        return;
    for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        if (a->rta_type == IFLA_IFNAME)
            name = RTA_DATA(a);
        else if (a->rta_type == IFLA_STATS64 && RTA_PAYLOAD(a) >= sizeof(st)) {
            memcpy(&st, RTA_DATA(a), sizeof(st));
            have_stats = 1;
        }
    }
    if (!name || (ifi->ifi_flags & IFF_LOOPBACK) || strlen(name) >= IF_NAMESIZE)
        return;
    if (ifs->n < MAX_IFACES)
        snprintf(ifs->name[ifs->n++], IF_NAMESIZE, "%s", name);
    if (have_stats) {
        const struct {
            const char *what;
            uint64_t v;
        } f[] = {{"rx_dropped", st.rx_dropped},
                 {"tx_dropped", st.tx_dropped},
                 {"rx_missed_errors", st.rx_missed_errors},
                 {"rx_over_errors", st.rx_over_errors},
                 {"rx_fifo_errors", st.rx_fifo_errors},
                 {"tx_fifo_errors", st.tx_fifo_errors}};
        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
            char key[COUNTERS_NAME_MAX];
            snprintf(key, sizeof(key), "nic.%s.%s", name, f[i].what);
            counters_add(s, key, f[i].v);
        }
    }
}

static void qdisc_each(struct nlmsghdr *nh, struct counters_snap *s, struct ifaces *ifs)
{
    struct tcmsg *tc = NLMSG_DATA(nh);
    int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*tc));
    char dev[IF_NAMESIZE], key[COUNTERS_NAME_MAX];

    (void)ifs;
    /* the root qdisc's figures include its children's (mq, classful qdiscs) */
    if (nh->nlmsg_type != RTM_NEWQDISC || len < 0 || tc->tcm_parent != TC_H_ROOT ||
        !if_indextoname((unsigned)tc->tcm_ifindex, dev) || strcmp(dev, "lo") == 0)
        return;
    for (struct rtattr *a = TCA_RTA(tc); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        int sl = (int)RTA_PAYLOAD(a);
        if (a->rta_type != TCA_STATS2)
            continue;
        for (struct rtattr *b = RTA_DATA(a); RTA_OK(b, sl); b = RTA_NEXT(b, sl)) {
            struct gnet_stats_queue q;
            if (b->rta_type != TCA_STATS_QUEUE || RTA_PAYLOAD(b) < sizeof(q))
                continue;
            memcpy(&q, RTA_DATA(b), sizeof(q));
            snprintf(key, sizeof(key), "qdisc.%s.drops", dev);
            counters_add(s, key, q.drops);
            snprintf(key, sizeof(key), "qdisc.%s.overlimits", dev);
            counters_add(s, key, q.overlimits);
        }
    }
}

static void read_netlink(struct counters_snap *s, struct ifaces *ifs)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

    if (fd < 0)
        return;
    if (nl_request(fd, RTM_GETLINK, sizeof(struct ifinfomsg)) == 0 &&
        nl_dump(fd, link_each, s, ifs) == 0)
        s->sources |= COUNTERS_LINK;
    if (nl_request(fd, RTM_GETQDISC, sizeof(struct tcmsg)) == 0 &&
        nl_dump(fd, qdisc_each, s, ifs) == 0)
        s->sources |= COUNTERS_QDISC;
    close(fd);
}

/* A NIC statistic worth keeping: drops, misses, shaping (ENA's *_allowance_exceeded), not the
 * per-queue packet and byte counts. */
static int kept_stat(const char *name)
{
    static const char *const words[] = {"allowance", "drop", "miss", "discard", "fifo", "overrun"};

    if (strstr(name, "queue"))
        return 0;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strstr(name, words[i]))
            return 1;
    return 0;
}

static int ethtool_ioctl(int fd, const char *dev, void *data)
{
    struct ifreq ifr;

    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
    ifr.ifr_data = data;
    return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* ETHTOOL_GSTATS of dev into s, by name. 0, or -1 when the driver has none. */
static int read_ethtool_dev(int fd, const char *dev, struct counters_snap *s)
{
    struct {
        struct ethtool_sset_info hdr;
        uint32_t len;
    } info = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS}};
    struct ethtool_gstrings *names = NULL;
    struct ethtool_stats *vals = NULL;
    uint32_t n;
    int rc = -1;

    if (ethtool_ioctl(fd, dev, &info) != 0 || !(info.hdr.sset_mask & (1ull << ETH_SS_STATS)))
        return -1;
    n = info.len;
    if (n == 0 || n > ETHTOOL_MAXN)
        return -1;
    names = kp_xcalloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
    names->cmd = ETHTOOL_GSTRINGS;
    names->string_set = ETH_SS_STATS;
    names->len = n;
    vals = kp_xcalloc(1, sizeof(*vals) + (size_t)n * sizeof(uint64_t));
    vals->cmd = ETHTOOL_GSTATS;
    vals->n_stats = n;
    if (ethtool_ioctl(fd, dev, names) != 0 || ethtool_ioctl(fd, dev, vals) != 0)
        goto out;
    for (uint32_t i = 0; i < n && i < vals->n_stats; i++) {
        char stat[ETH_GSTRING_LEN + 1], key[COUNTERS_NAME_MAX];
        memcpy(stat, names->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
        stat[ETH_GSTRING_LEN] = '\0';
        if (!kept_stat(stat))
            continue;
        snprintf(key, sizeof(key), "ethtool.%s.%s", dev, stat);
        counters_add(s, key, vals->data[i]);
    }
    rc = 0;
out:
    free(names);
    free(vals);
    return rc;
}

static void read_ethtool(struct counters_snap *s, const struct ifaces *ifs)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), any = 0;

    if (fd < 0)
        return;
    for (size_t i = 0; i < ifs->n; i++)
        any |= read_ethtool_dev(fd, ifs->name[i], s) == 0;
    close(fd);
    if (any)
        s->sources |= COUNTERS_ETHTOOL;
}

int counters_take(struct counters_snap *s, const char *netns_path, struct kp_err *err)
{
    struct ifaces *ifs = kp_xcalloc(1, sizeof(*ifs));
    int self = -1, target = -1, rc = -1;

    counters_snap_init(s);
    if (netns_path) {
        self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        target = open(netns_path, O_RDONLY | O_CLOEXEC);
        if (self < 0 || target < 0) {
            kp_err_set(err, "cannot open %s: %s", self < 0 ? "our network namespace" : netns_path,
                       strerror(errno));
            goto out;
        }
        if (setns(target, CLONE_NEWNET) != 0) {
            kp_err_set(err, "cannot enter %s: %s", netns_path, strerror(errno));
            goto out;
        }
    }
    read_files(s);
    read_netlink(s, ifs);
    read_ethtool(s, ifs);
    if (self >= 0 && setns(self, CLONE_NEWNET) != 0) {
        kp_err_set(err, "cannot return to our network namespace: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (target >= 0)
        close(target);
    if (self >= 0)
        close(self);
    free(ifs);
    return rc;
}
