/* SPDX-License-Identifier: Apache-2.0 */
/* client_pmtu.c - the path-MTU probe (docs/protocol.md, "Path MTU probe"): after a client's first
 * answered sample, a UDP_RR session whose datagrams, sent with "don't fragment" and without the
 * kernel's path-MTU cap, find the largest packet the server echoes (pmtu.h decides the sizes),
 * and a TCP_RR session of one 256 KiB transaction at full MSS; both end with an early STOP. The
 * verdict and the figures go into the document's "mtu". The sessions are ordinary ones: the
 * server needs nothing new. */
#include "agent/client_int.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/pmtu.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"

#define PMTU_WAIT_MS      100          /* an echo later than this counts as lost */
#define PMTU_TRIES        3            /* lost this many times: the size does not cross */
#define PMTU_SESSION_MS   5000         /* the sessions' planned length (both stop early) */
#define PMTU_BUDGET_MS    3500         /* the datagram search gives up here, whatever it knows */
#define PMTU_TCP_BYTES    (256 * 1024) /* the full-MSS transfer, echoed back */
#define PMTU_TCP_STALL_MS 1000         /* no echoed byte for this long: stalled */
#define UDP_BUF           65536

struct probe {
    struct pmtu_search search;
    uint32_t hdr;     /* IP and UDP header bytes */
    uint32_t learned; /* the kernel's path MTU after the search (IP_MTU), 0 unknown */
    int tcp;          /* 1 passed, 0 stalled, -1 not run */
    uint64_t seq;
};

static int is_v6(const struct sample *s)
{
    return s->addr.ss_family == AF_INET6;
}

/* "Don't fragment", whatever the kernel learned (PROBE: the sizes are ours to pick), and ICMP
 * errors queued to us (RECVERR). Best effort: without them the probe still bisects. */
static void dontfrag(int fd, int v6)
{
    int probe = v6 ? IPV6_PMTUDISC_PROBE : IP_PMTUDISC_PROBE, one = 1;
    int ok = v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &probe, sizeof(probe)) == 0 &&
                      setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one)) == 0 &&
                      setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one)) == 0
                : setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &probe, sizeof(probe)) == 0 &&
                      setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) == 0;
    if (!ok)
        kp_log(KP_LOG_WARN, "path MTU probe: cannot set don't-fragment options: %s",
               strerror(errno));
}

/* The MTU of a "fragmentation needed" / "packet too big" (or a local EMSGSIZE) in fd's error
 * queue, the smallest if several; 0 if none. Empties the queue. */
static uint32_t icmp_mtu(int fd)
{
    uint32_t best = 0;

    for (int i = 0; i < 16; i++) {
        char data[64], ctl[512];
        struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
        if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            break;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            struct sock_extended_err ee;
            if (!((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
                  (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR)))
                continue;
            memcpy(&ee, CMSG_DATA(c), sizeof(ee));
            if (ee.ee_errno == EMSGSIZE && ee.ee_info && (!best || ee.ee_info < best))
                best = ee.ee_info;
        }
    }
    return best;
}

/* The kernel's path MTU of the connected socket (learned from ICMP), 0 if unreadable. */
static uint32_t learned_mtu(int fd, int v6)
{
    int mtu = 0;
    socklen_t len = sizeof(mtu);

    if (getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU : IP_MTU, &mtu, &len) != 0)
        return 0;
    return mtu > 0 ? (uint32_t)mtu : 0;
}

/* One datagram of len payload bytes, sequence seq: 1 when an echo of it or of an earlier try
 * of this size (seq_min on) came back within PMTU_WAIT_MS; 0 when none did, with *icmp set when
 * an ICMP reported an MTU meanwhile. */
static int echo_once(const struct sample *s, int fd, uint8_t *buf, size_t len, uint64_t seq,
                     uint64_t seq_min, uint32_t *icmp)
{
    uint64_t deadline = sysinfo_now_ns() + PMTU_WAIT_MS * 1000000ull, now, id, rseq, ts;

    proto_udp_put(buf, s->session, seq, sysinfo_now_ns());
    if (send(fd, buf, len, 0) < 0) {
        *icmp = icmp_mtu(fd);
        return 0;
    }
    while ((now = sysinfo_now_ns()) < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        if (poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1) <= 0)
            continue;
        if (p.revents & POLLERR) {
            *icmp = icmp_mtu(fd);
            if (*icmp)
                return 0;
        }
        n = recv(fd, buf + UDP_BUF, UDP_BUF, MSG_DONTWAIT);
        if (n < (ssize_t)PROTO_MIN_UDP_SIZE)
            continue; /* an error already taken from the queue, or a runt */
        proto_udp_get(buf + UDP_BUF, &id, &rseq, &ts);
        if (id == s->session && rseq >= seq_min && rseq <= seq && (size_t)n == len)
            return 1;
    }
    return 0;
}

static void udp_probe(struct sample *s, void *arg)
{
    struct probe *pr = arg;
    int fd = s->workers[0].fd;
    uint8_t *buf = kp_xcalloc(2, UDP_BUF); /* ours: send half, receive half */
    uint64_t end = sysinfo_now_ns() + PMTU_BUDGET_MS * 1000000ull;
    uint32_t size;

    dontfrag(fd, is_v6(s));
    while (sysinfo_now_ns() < end && (size = pmtu_next(&pr->search)) != 0) {
        uint64_t first = pr->seq;
        uint32_t icmp = 0;
        int crossed = 0;
        for (int t = 0; t < PMTU_TRIES && !crossed && !icmp; t++)
            crossed = echo_once(s, fd, buf, size - pr->hdr, pr->seq++, first, &icmp);
        s->workers[0].udp_sent++;
        pmtu_report(&pr->search, size, crossed, icmp);
    }
    pr->learned = learned_mtu(fd, is_v6(s));
    free(buf);
}

/* PMTU_TCP_BYTES out and echoed back, full-size segments both ways; stalled when no echoed
 * byte arrives for PMTU_TCP_STALL_MS (a black hole drops every full segment). */
static void tcp_probe(struct sample *s, void *arg)
{
    struct probe *pr = arg;
    int fd = s->workers[0].fd;
    uint8_t *buf = kp_xcalloc(1, PMTU_TCP_BYTES); /* ours */
    size_t sent = 0, got = 0;
    uint64_t last = sysinfo_now_ns();

    pr->tcp = -1;
    while (got < PMTU_TCP_BYTES) {
        struct pollfd p = {.fd = fd, .events = POLLIN | (sent < PMTU_TCP_BYTES ? POLLOUT : 0)};
        ssize_t n;
        if (sysinfo_now_ns() - last > PMTU_TCP_STALL_MS * 1000000ull) {
            pr->tcp = 0;
            break;
        }
        if (poll(&p, 1, 50) <= 0)
            continue;
        if ((p.revents & POLLOUT) &&
            (n = send(fd, buf, PMTU_TCP_BYTES - sent, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
            sent += (size_t)n;
        if (!(p.revents & (POLLIN | POLLERR | POLLHUP)))
            continue;
        n = recv(fd, buf, PMTU_TCP_BYTES, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            break; /* the connection failed: not run */
        if (n > 0)
            got += (size_t)n, last = sysinfo_now_ns();
    }
    if (got >= PMTU_TCP_BYTES)
        pr->tcp = 1;
    s->workers[0].bytes = sent;
    free(buf);
}

/* One ordinary session of test with fn in place of the worker loop. 0, or -1 with err. */
static int session(const struct sample *first, uint8_t test, uint32_t msg_size,
                   void (*fn)(struct sample *, void *), struct probe *pr, struct kp_err *err)
{
    struct sample s;
    int rc;

    memset(&s, 0, sizeof(s));
    s.o = first->o;
    s.addr = first->addr;
    s.addr_len = first->addr_len;
    s.ctrl = -1;
    client_build_req(s.o, test, &s.req);
    s.req.flags = 0; /* no counters, no facts */
    s.req.streams = 1;
    s.req.msg_size = msg_size;
    s.req.duration_ms = PMTU_SESSION_MS;
    s.req.omit_ms = 0;
    rc = client_run_inline(&s, fn, pr, err);
    client_sample_cleanup(&s);
    return rc;
}

void client_pmtu_note(json_t *doc, const struct sample *first)
{
    json_t *mtu = json_object_get(doc, "mtu");
    struct pmtu_facts f = {.client_mtu = first->mtu, .server_mtu = first->server.mtu};
    uint64_t t0 = sysinfo_now_ns();
    struct probe pr;
    struct kp_err err;
    uint32_t top;

    json_object_set_new(mtu, "client", json_integer(first->mtu));
    json_object_set_new(mtu, "server", json_integer(first->server.mtu));
    if (first->o->no_path_mtu || first->mtu == 0)
        return;
    memset(&pr, 0, sizeof(pr));
    pr.hdr = is_v6(first) ? 48 : 28;
    pr.tcp = -1;
    /* an IP packet is at most 64 KiB whatever the interface (loopback's is 65536) */
    pmtu_search_init(&pr.search, first->mtu < 65535 ? first->mtu : 65535,
                     is_v6(first) ? PMTU_IPV6_MIN : PMTU_IPV4_MIN);
    kp_err_clear(&err);
    if (session(first, PROTO_UDP_RR, pr.search.hi - 1 - pr.hdr, udp_probe, &pr, &err) != 0 ||
        session(first, PROTO_TCP_RR, PMTU_TCP_BYTES, tcp_probe, &pr, &err) != 0) {
        kp_log(KP_LOG_WARN, "path MTU probe: %s", kp_err_msg(&err));
        if (pr.search.steps == 0)
            return;
    }
    top = first->mtu < 65535 ? first->mtu : 65535;
    f.path_mtu = pr.search.lo;
    f.icmp_mtu = pr.search.icmp_mtu;
    if (pr.learned && pr.learned < top && (!f.icmp_mtu || pr.learned < f.icmp_mtu))
        f.icmp_mtu = pr.learned;
    f.tcp_full_mss = pr.tcp;
    json_object_set_new(mtu, "path", json_integer(f.path_mtu));
    json_object_set_new(mtu, "icmp", json_integer(f.icmp_mtu));
    if (pr.tcp >= 0)
        json_object_set_new(mtu, "tcp_full_mss", json_boolean(pr.tcp));
    json_object_set_new(mtu, "verdict", json_string(pmtu_verdict_name(pmtu_verdict(&f))));
    json_object_set_new(mtu, "probe_ms",
                        json_integer((json_int_t)((sysinfo_now_ns() - t0) / 1000000)));
}
