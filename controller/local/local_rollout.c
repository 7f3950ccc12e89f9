/* SPDX-License-Identifier: Apache-2.0 */
/* local_rollout.c - see local_rollout.h. */
#include "controller/local/local_rollout.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/subproc.h"
#include "controller/local/localnet.h"

#define CT_SUBSYS     1 /* NFNL_SUBSYS_CTNETLINK */
#define CT_MSG_DELETE 2 /* IPCTNL_MSG_CT_DELETE */

struct local_rollout {
    struct localnet *ln;
    uint64_t down_ms, gap_ms;
    bool flush;
    pthread_t thread;
    volatile sig_atomic_t stop;
};

/* Sleeps ms unless stopped (checked every 20 ms). Returns 0, or -1 when stopped. */
static int nap(struct local_rollout *r, uint64_t ms)
{
    uint64_t end = clock_now_ms() + ms;

    for (;;) {
        uint64_t now = clock_now_ms();
        if (r->stop)
            return -1;
        if (now >= end)
            return 0;
        clock_sleep_ms(end - now < 20 ? end - now : 20);
    }
}

static int nft_in(struct local_rollout *r, enum localnet_ns node, const char *file,
                  const char *text, struct kp_err *err)
{
    const char *ns = localnet_ns_name(r->ln, node);
    int rc = -1;

    if (file) {
        char *path = localnet_write(r->ln, file, text, err);
        if (!path)
            return -1;
        rc = subproc_check(
            (const char *const[]){"ip", "netns", "exec", ns, "nft", "-f", path, NULL}, err);
        free(path);
        return rc;
    }
    return subproc_check((const char *const[]){"ip", "netns", "exec", ns, "nft", "delete", "table",
                                               "bridge", "kperf_rollout", NULL},
                         err);
}

/* A netlink socket of the netfilter family inside namespace ns (this thread returns to its
 * own namespace at once), or -1. */
static int ct_socket(const char *ns)
{
    char path[256];
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), target, fd = -1;

    snprintf(path, sizeof(path), "/run/netns/%s", ns);
    target = open(path, O_RDONLY | O_CLOEXEC);
    if (self >= 0 && target >= 0 && setns(target, CLONE_NEWNET) == 0) {
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
        if (setns(self, CLONE_NEWNET) != 0) { /* cannot happen with our own namespace */
            kp_log(KP_LOG_ERROR, "rollout: cannot return to my network namespace: %s",
                   strerror(errno));
            abort();
        }
    }
    if (self >= 0)
        close(self);
    if (target >= 0)
        close(target);
    return fd;
}

/* Flushes the conntrack table of namespace ns, IPv4 and IPv6 (a ctnetlink delete without
 * attributes removes every entry). True when the kernel acknowledged both. */
static bool flush_conntrack(const char *ns)
{
    int fd = ct_socket(ns);
    bool ok = fd >= 0;
    struct timeval tv = {.tv_sec = 2};

    if (fd < 0)
        return false;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (int i = 0; i < 2 && ok; i++) {
        struct {
            struct nlmsghdr h;
            struct nfgenmsg g;
        } req = {.h = {.nlmsg_len = sizeof(req),
                       .nlmsg_type = (CT_SUBSYS << 8) | CT_MSG_DELETE,
                       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
                       .nlmsg_seq = (unsigned)i + 1},
                 .g = {.nfgen_family = i ? AF_INET6 : AF_INET, .version = NFNETLINK_V0}};
        char ans[4096];
        ssize_t n;
        if (send(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
            ok = false;
            break;
        }
        n = recv(fd, ans, sizeof(ans), 0);
        if (n >= (ssize_t)(sizeof(struct nlmsghdr) + sizeof(int))) {
            const struct nlmsghdr *h = (const struct nlmsghdr *)ans;
            int e =
                h->nlmsg_type == NLMSG_ERROR ? ((const struct nlmsgerr *)NLMSG_DATA(h))->error : 0;
            ok = e == 0 || e == -ENOENT; /* ENOENT: nothing to flush */
        } else {
            ok = false;
        }
    }
    close(fd);
    return ok;
}

static const char drop_rules[] = "table bridge kperf_rollout {\n"
                                 "  chain pre { type filter hook prerouting priority -200;\n"
                                 "    iifname \"veth*\" ether type { ip, ip6 } drop; }\n"
                                 "  chain out { type filter hook output priority -200;\n"
                                 "    oifname \"veth*\" ether type { ip, ip6 } drop; }\n"
                                 "}\n";

static void *rollout_main(void *arg)
{
    struct local_rollout *r = arg;
    static const enum localnet_ns nodes[2] = {LN_NODE1, LN_NODE2};

    for (int i = 0; i < 2; i++) {
        struct kp_err err;
        double t0, t1, left;
        bool flushed = false;
        int stopped;
        kp_err_clear(&err);
        if (nap(r, r->gap_ms) != 0)
            return NULL;
        if (nft_in(r, nodes[i], "rollout.nft", drop_rules, &err) != 0) {
            kp_log(KP_LOG_WARN, "rollout: node%d: %s", i + 1, kp_err_msg(&err));
            return NULL;
        }
        t0 = clock_unix_s();
        if (r->flush)
            flushed = flush_conntrack(localnet_ns_name(r->ln, nodes[i]));
        left = t0 + (double)r->down_ms / 1000.0 - clock_unix_s();
        stopped = nap(r, left > 0 ? (uint64_t)(left * 1000.0) : 0);
        if (nft_in(r, nodes[i], NULL, NULL, &err) != 0)
            kp_log(KP_LOG_WARN, "rollout: node%d: %s", i + 1, kp_err_msg(&err));
        t1 = clock_unix_s();
        kp_log(KP_LOG_WARN, "rollout: node%d: pod traffic dropped for %.3f s from %.3f%s%s", i + 1,
               t1 - t0, t0,
               r->flush ? (flushed ? " (conntrack flushed)" : " (conntrack flush failed)") : "",
               stopped ? " (stopped)" : "");
        if (stopped)
            return NULL;
    }
    return NULL;
}

struct local_rollout *local_rollout_start(struct localnet *ln, uint64_t down_ms, uint64_t gap_ms,
                                          bool flush, struct kp_err *err)
{
    struct local_rollout *r = kp_xcalloc(1, sizeof(*r));
    sigset_t all, old;
    int rc;

    r->ln = ln;
    r->down_ms = down_ms;
    r->gap_ms = gap_ms;
    r->flush = flush;
    sigfillset(&all); /* signals stay with the main thread */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&r->thread, NULL, rollout_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        free(r);
        kp_err_set(err, "rollout: cannot start a thread: %s", strerror(rc));
        return NULL;
    }
    return r;
}

void local_rollout_stop(struct local_rollout *r)
{
    if (!r)
        return;
    r->stop = 1;
    pthread_join(r->thread, NULL);
    free(r);
}
