/* SPDX-License-Identifier: Apache-2.0 */
/* echo.c - see echo.h. The loop is bounded by the connection: it ends at EOF, on any error, or
 * when echo_stop shuts the socket down; what arrives only decides how much is echoed. */
#include "agent/echo.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent/proto.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"

#define ECHO_BUF (64 * 1024)

struct echo {
    pthread_t thread;
    int fd;
    _Atomic uint64_t *rx, *tx;
    uint8_t buf[ECHO_BUF];
};

static void *echo_main(void *arg)
{
    struct echo *e = arg;

    for (;;) {
        ssize_t n = recv(e->fd, e->buf, sizeof(e->buf), 0);
        ssize_t off = 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        atomic_fetch_add_explicit(e->rx, (uint64_t)n, memory_order_relaxed);
        while (off < n) {
            ssize_t w = send(e->fd, e->buf + off, (size_t)(n - off), MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return NULL;
            off += w;
        }
        atomic_fetch_add_explicit(e->tx, (uint64_t)n, memory_order_relaxed);
    }
    return NULL;
}

enum echo_start_status echo_start(int fd, _Atomic uint64_t *rx, _Atomic uint64_t *tx,
                                  struct echo **out, struct kp_err *err)
{
    struct echo *e;
    int flags = fcntl(fd, F_GETFL);
    int rc;

    *out = NULL;
    /* if either call fails the descriptor's mode is unchanged: the loop can keep it */
    if (flags < 0) {
        kp_err_set(err, "fcntl F_GETFL: %s", strerror(errno));
        return ECHO_ON_LOOP;
    }
    if (fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        kp_err_set(err, "fcntl clearing O_NONBLOCK: %s", strerror(errno));
        return ECHO_ON_LOOP;
    }
    e = kp_xmalloc(sizeof(*e));
    e->fd = fd;
    e->rx = rx;
    e->tx = tx;
    rc = pthread_create(&e->thread, NULL, echo_main, e);
    if (rc == 0) {
        *out = e;
        return ECHO_STARTED;
    }
    free(e);
    kp_err_set(err, "pthread_create: %s", strerror(rc));
    /* a blocking socket would stall the whole loop: without O_NONBLOCK back, drop it */
    if (fcntl(fd, F_SETFL, flags) != 0) {
        kp_err_set(err, "pthread_create: %s; then fcntl restoring O_NONBLOCK: %s", strerror(rc),
                   strerror(errno));
        return ECHO_FAILED;
    }
    return ECHO_ON_LOOP;
}

void echo_stop(struct echo *e)
{
    if (!e)
        return;
    shutdown(e->fd, SHUT_RDWR);
    pthread_join(e->thread, NULL);
    free(e);
}

/* --- UDP_RR ------------------------------------------------------------------------------ */

#define ECHO_UDP_WAKE_MS 100

struct echo_udp {
    pthread_t thread;
    int fd;
    uint64_t id, deadline_ns;
    size_t min_len;
    atomic_int stop;
    _Atomic uint64_t *count, *bytes;
    uint8_t buf[ECHO_BUF];
};

static void *echo_udp_main(void *arg)
{
    struct echo_udp *e = arg;

    while (!atomic_load_explicit(&e->stop, memory_order_relaxed)) {
        ssize_t n = recv(e->fd, e->buf, sizeof(e->buf), 0);
        uint64_t id, seq, ts;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ||
                errno == ECONNREFUSED) {
                if (sysinfo_now_ns() >= e->deadline_ns)
                    break;
                continue;
            }
            break;
        }
        if (n == 0 && atomic_load_explicit(&e->stop, memory_order_relaxed))
            break;
        if ((size_t)n < e->min_len)
            continue;
        proto_udp_get(e->buf, &id, &seq, &ts);
        if (id != e->id)
            continue;
        if (send(e->fd, e->buf, (size_t)n, 0) == n) {
            atomic_fetch_add_explicit(e->count, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(e->bytes, (uint64_t)n, memory_order_relaxed);
        }
    }
    return NULL;
}

static socklen_t addr_len(const struct sockaddr *a)
{
    return a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

struct echo_udp *echo_udp_start(const struct sockaddr *local, const struct sockaddr *peer,
                                uint64_t id, size_t min_len, uint64_t deadline_ns,
                                _Atomic uint64_t *count, _Atomic uint64_t *bytes,
                                struct kp_err *err)
{
    struct echo_udp *e;
    struct timeval tv = {.tv_sec = 0, .tv_usec = ECHO_UDP_WAKE_MS * 1000};
    int one = 1;
    int fd = socket(local->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const char *what = NULL;
    int rc;

    if (fd < 0) {
        kp_err_set(err, "socket: %s", strerror(errno));
        return NULL;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
        what = "setsockopt SO_REUSEADDR";
    else if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
        what = "setsockopt SO_RCVTIMEO";
    else if (bind(fd, local, addr_len(local)) != 0)
        what = "bind";
    else if (connect(fd, peer, addr_len(peer)) != 0)
        what = "connect";
    if (what) {
        kp_err_set(err, "%s: %s", what, strerror(errno));
        close(fd);
        return NULL;
    }
    e = kp_xmalloc(sizeof(*e));
    e->fd = fd;
    e->id = id;
    e->min_len = min_len;
    e->deadline_ns = deadline_ns;
    e->count = count;
    e->bytes = bytes;
    atomic_init(&e->stop, 0);
    rc = pthread_create(&e->thread, NULL, echo_udp_main, e);
    if (rc != 0) {
        kp_err_set(err, "pthread_create: %s", strerror(rc));
        close(fd);
        free(e);
        return NULL;
    }
    return e;
}

void echo_udp_stop(struct echo_udp *e)
{
    if (!e)
        return;
    atomic_store(&e->stop, 1);
    shutdown(e->fd, SHUT_RDWR); /* wakes a blocked recv; the timeout bounds it anyway */
    pthread_join(e->thread, NULL);
    close(e->fd);
    free(e);
}
