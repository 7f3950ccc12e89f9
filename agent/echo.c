/* SPDX-License-Identifier: Apache-2.0 */
/* echo.c - see echo.h. The loop is bounded by the connection: it ends at EOF, on any error, or
 * when echo_stop shuts the socket down; what arrives only decides how much is echoed. */
#include "agent/echo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "agent/base/kp_alloc.h"

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

struct echo *echo_start(int fd, _Atomic uint64_t *rx, _Atomic uint64_t *tx)
{
    struct echo *e = kp_xmalloc(sizeof(*e));
    int flags = fcntl(fd, F_GETFL);

    e->fd = fd;
    e->rx = rx;
    e->tx = tx;
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
        pthread_create(&e->thread, NULL, echo_main, e) != 0) {
        if (flags >= 0)
            fcntl(fd, F_SETFL, flags);
        free(e);
        return NULL;
    }
    return e;
}

void echo_stop(struct echo *e)
{
    if (!e)
        return;
    shutdown(e->fd, SHUT_RDWR);
    pthread_join(e->thread, NULL);
    free(e);
}
