/* SPDX-License-Identifier: Apache-2.0 */
/* udp_source.c - see udp_source.h. On Linux a connected UDP socket reports an ICMP port
 * unreachable as ECONNREFUSED on its next send or receive; IP_RECVERR (IPV6_RECVERR) makes it
 * report host and network unreachable as well. The error queue that IP_RECVERR fills is
 * drained here, so it cannot grow. */
#include "agent/udp_source.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/proto.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"

struct udp_source {
    int fd;
    uint64_t session;
    size_t size;
    uint8_t *buf; /* ours: size bytes, the datagram sent */
};

static socklen_t addr_len(const struct sockaddr *a)
{
    return a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

struct udp_source *udp_source_open(const struct sockaddr *local, const struct sockaddr *peer,
                                   uint64_t session, size_t size, struct kp_err *err)
{
    struct udp_source *u;
    int one = 1;
    int fd = socket(local->sa_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const char *what = NULL;

    if (fd < 0) {
        kp_err_set(err, "socket: %s", strerror(errno));
        return NULL;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
        what = "setsockopt SO_REUSEADDR";
    else if (local->sa_family == AF_INET &&
             setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) != 0)
        what = "setsockopt IP_RECVERR";
    else if (local->sa_family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one)) != 0)
        what = "setsockopt IPV6_RECVERR";
    else if (bind(fd, local, addr_len(local)) != 0)
        what = "bind";
    else if (connect(fd, peer, addr_len(peer)) != 0)
        what = "connect";
    if (what) {
        kp_err_set(err, "%s: %s", what, strerror(errno));
        close(fd);
        return NULL;
    }
    u = kp_xcalloc(1, sizeof(*u));
    u->fd = fd;
    u->session = session;
    u->size = size < PROTO_MIN_UDP_SIZE ? PROTO_MIN_UDP_SIZE : size;
    u->buf = kp_xcalloc(1, u->size);
    return u;
}

/* The errnos of ICMP destination-unreachable messages (port, host, network, protocol,
 * administratively prohibited). */
static int is_unreachable(int e)
{
    return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN ||
           e == ENOPROTOOPT || e == EACCES;
}

/* The error behind a failed call: the error queue's entry is consumed (it holds the ICMP
 * report), so one ICMP message is reported once. */
static enum udp_source_status failure(struct udp_source *u, int e, int *why)
{
    uint8_t junk[256];
    struct iovec iov = {.iov_base = junk, .iov_len = sizeof(junk)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

    *why = e;
    while (recvmsg(u->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
        ; /* bounded by the socket's receive buffer */
    /* EMSGSIZE: an ICMP "fragmentation needed" lowered the path MTU; the kernel fragments the
     * next datagrams to it, so this is not a reason to stop */
    if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS || e == EINTR || e == EMSGSIZE)
        return UDP_SOURCE_FULL;
    return is_unreachable(e) ? UDP_SOURCE_UNREACHABLE : UDP_SOURCE_FAILED;
}

enum udp_source_status udp_source_send(struct udp_source *u, uint64_t seq, int *why)
{
    proto_udp_put(u->buf, u->session, seq, sysinfo_now_ns());
    if (send(u->fd, u->buf, u->size, MSG_DONTWAIT) == (ssize_t)u->size)
        return UDP_SOURCE_OK;
    return failure(u, errno, why);
}

enum udp_source_status udp_source_poll(struct udp_source *u, unsigned max, unsigned *keepalives,
                                       int *why)
{
    uint8_t d[PROTO_MIN_UDP_SIZE];

    for (unsigned i = 0; i < max; i++) {
        uint64_t id, seq, ts;
        ssize_t n = recv(u->fd, d, sizeof(d), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return UDP_SOURCE_OK;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            enum udp_source_status st = failure(u, errno, why);
            return st == UDP_SOURCE_FULL ? UDP_SOURCE_OK : st;
        }
        if ((size_t)n < PROTO_MIN_UDP_SIZE)
            continue;
        proto_udp_get(d, &id, &seq, &ts);
        if (id == u->session && seq == PROTO_UDP_HELLO_SEQ)
            (*keepalives)++;
    }
    return UDP_SOURCE_OK;
}

void udp_source_close(struct udp_source *u)
{
    if (!u)
        return;
    close(u->fd);
    free(u->buf);
    free(u);
}
