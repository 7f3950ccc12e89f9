/* SPDX-License-Identifier: Apache-2.0 */
/* probe_sess.c - see probe_sess.h. */
#include "agent/probe_sess.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/proto.h"
#include "agent/sha256.h"
#include "base/clock.h"

int probe_target_resolve(struct probe_target *t, const char *host, uint16_t port,
                         struct kp_err *err)
{
    struct addrinfo hints, *res = NULL;
    char svc[8];
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(svc, sizeof(svc), "%u", port);
    rc = getaddrinfo(host, svc, &hints, &res);
    if (rc != 0)
        return kp_err_set(err, "cannot resolve %s: %s", host, gai_strerror(rc));
    memcpy(&t->addr, res->ai_addr, res->ai_addrlen);
    t->addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int probe_connect_start(const struct probe_target *t)
{
    int fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&t->addr, t->addr_len) != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Waits for fd to be ready for events within the deadline. 0, or -1 with errno. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = clock_now_ns();
        struct pollfd p = {.fd = fd, .events = events};
        int rc;

        if (now >= deadline_ns) {
            errno = ETIMEDOUT;
            return -1;
        }
        rc = poll(&p, 1, (int)((deadline_ns - now) / 1000000 + 1));
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc > 0)
            return 0;
    }
}

static int connect_blocking(const struct probe_target *t, struct kp_err *err)
{
    uint64_t deadline = clock_now_ns() + t->timeout_ms * 1000000ull;
    int fd = probe_connect_start(t), one = 1, soerr = 0;
    socklen_t len = sizeof(soerr);

    if (fd < 0)
        return kp_err_set(err, "connect: %s", strerror(errno)), -1;
    if (wait_fd(fd, POLLOUT, deadline) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
        kp_err_set(err, "connect: %s", strerror(soerr ? soerr : errno));
        close(fd);
        return -1;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static int send_all(int fd, const uint8_t *buf, size_t len, uint64_t deadline_ns)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = send(fd, buf + done, len - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (wait_fd(fd, POLLOUT, deadline_ns) != 0)
            return -1;
    }
    return 0;
}

static int recv_all(int fd, uint8_t *buf, size_t len, uint64_t deadline_ns)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = recv(fd, buf + got, len - got, 0);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno != EAGAIN && errno != EINTR)
            return -1;
        if (wait_fd(fd, POLLIN, deadline_ns) != 0)
            return -1;
    }
    return 0;
}

static int msg_send(int fd, const struct proto_msg *m, uint64_t deadline_ns, struct kp_err *err)
{
    uint8_t buf[PROTO_HEADER_LEN + 64];
    size_t n = proto_encode(m, buf, sizeof(buf));

    if (n == 0 || send_all(fd, buf, n, deadline_ns) != 0)
        return kp_err_set(err, "sending %s: %s", proto_type_name(m->type), strerror(errno));
    return 0;
}

static int msg_recv(int fd, struct proto_msg *m, uint8_t want, uint64_t deadline_ns,
                    struct kp_err *err)
{
    uint8_t buf[PROTO_HEADER_LEN + PROTO_MAX_PAYLOAD];
    struct proto_header h;
    size_t used;

    if (recv_all(fd, buf, PROTO_HEADER_LEN, deadline_ns) != 0)
        return kp_err_set(err, "waiting for %s: %s", proto_type_name(want), strerror(errno));
    if (proto_decode_header(buf, PROTO_HEADER_LEN, &h, err) != PROTO_OK)
        return kp_err_prefix(err, "from server");
    if (recv_all(fd, buf + PROTO_HEADER_LEN, h.length, deadline_ns) != 0)
        return kp_err_set(err, "reading %s: %s", proto_type_name(h.type), strerror(errno));
    if (proto_decode(buf, PROTO_HEADER_LEN + h.length, m, &used, err) != PROTO_OK)
        return kp_err_prefix(err, "from server");
    if (m->type == PROTO_REFUSE)
        return kp_err_set(err, "refused by server: %s", m->u.refuse.reason);
    if (m->type != want)
        return kp_err_set(err, "server sent %s, expected %s", proto_type_name(m->type),
                          proto_type_name(want));
    return 0;
}

static int simple(int fd, uint8_t type, uint64_t deadline_ns, struct kp_err *err)
{
    struct proto_msg m;

    memset(&m, 0, sizeof(m));
    m.type = type;
    return msg_send(fd, &m, deadline_ns, err);
}

/* HELLO .. ACCEPT on s->ctrl, as agent/client.c does (mutual proof with a token). */
static int handshake(const struct probe_target *t, const struct proto_test_req *req,
                     struct probe_sess *s, uint64_t deadline, struct kp_err *err)
{
    uint8_t sn[PROTO_NONCE_LEN], cn[PROTO_NONCE_LEN], want[PROTO_MAC_LEN];
    struct proto_msg m;
    int rc = -1;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_HELLO;
    m.u.hello.version_min = PROTO_VERSION;
    m.u.hello.version_max = PROTO_VERSION;
    if (msg_send(s->ctrl, &m, deadline, err) != 0 ||
        msg_recv(s->ctrl, &m, PROTO_CHALLENGE, deadline, err) != 0)
        return -1;
    if ((m.u.challenge.flags & PROTO_FLAG_AUTH) && !t->token)
        return kp_err_set(err, "server requires a token: pass --token-file");
    if (!(m.u.challenge.flags & PROTO_FLAG_AUTH) && t->token)
        return kp_err_set(err, "server did not prove it knows the token; refusing");
    memcpy(sn, m.u.challenge.nonce, sizeof(sn));
    if (sha256_random(cn, sizeof(cn)) != 0)
        return kp_err_set(err, "getrandom: %s", strerror(errno));
    memset(&m, 0, sizeof(m));
    m.type = PROTO_AUTH;
    memcpy(m.u.auth.nonce, cn, sizeof(cn));
    if (t->token)
        proto_auth_mac(t->token, t->token_len, PROTO_AUTH_CLIENT, sn, cn, m.u.auth.mac);
    if (msg_send(s->ctrl, &m, deadline, err) != 0)
        goto out;
    memset(&m, 0, sizeof(m));
    m.type = PROTO_TEST_REQ;
    m.u.test_req = *req;
    if (msg_send(s->ctrl, &m, deadline, err) != 0 ||
        msg_recv(s->ctrl, &m, PROTO_AUTH_OK, deadline, err) != 0)
        goto out;
    if (t->token) {
        proto_auth_mac(t->token, t->token_len, PROTO_AUTH_SERVER, sn, cn, want);
        if (!sha256_ct_equal(want, m.u.auth_ok.mac, PROTO_MAC_LEN)) {
            kp_err_set(err, "server did not prove it knows the token; refusing");
            goto out;
        }
    }
    if (msg_recv(s->ctrl, &m, PROTO_ACCEPT, deadline, err) != 0)
        goto out;
    s->session = m.u.accept.session;
    rc = 0;
out:
    explicit_bzero(want, sizeof(want));
    explicit_bzero(&m, sizeof(m));
    return rc;
}

int probe_sess_open(const struct probe_target *t, uint8_t test, uint32_t msg_size,
                    uint32_t duration_ms, struct probe_sess *s, struct kp_err *err)
{
    uint64_t deadline = clock_now_ns() + 2 * t->timeout_ms * 1000000ull;
    struct proto_test_req req = {
        .test = test, .streams = 1, .msg_size = msg_size, .duration_ms = duration_ms};
    struct proto_msg m;
    uint8_t buf[PROTO_HEADER_LEN + 16];
    size_t n;

    memset(s, 0, sizeof(*s));
    s->ctrl = s->data = -1;
    s->ctrl = connect_blocking(t, err);
    if (s->ctrl < 0)
        return kp_err_prefix(err, "control connection");
    if (handshake(t, &req, s, deadline, err) != 0)
        goto fail;
    if (test == PROTO_TCP_RR) {
        s->data = connect_blocking(t, err);
        if (s->data < 0) {
            kp_err_prefix(err, "data connection");
            goto fail;
        }
        memset(&m, 0, sizeof(m));
        m.type = PROTO_DATA_HELLO;
        m.u.data_hello.session = s->session;
        n = proto_encode(&m, buf, sizeof(buf));
        if (n == 0 || send_all(s->data, buf, n, deadline) != 0) {
            kp_err_set(err, "data connection: sending DATA_HELLO: %s", strerror(errno));
            goto fail;
        }
        if (msg_recv(s->data, &m, PROTO_DATA_OK, deadline, err) != 0) {
            kp_err_prefix(err, "data connection");
            goto fail;
        }
    }
    if (simple(s->ctrl, PROTO_START, deadline, err) != 0 ||
        msg_recv(s->ctrl, &m, PROTO_STARTED, deadline, err) != 0)
        goto fail;
    s->opened_ns = clock_now_ns();
    s->duration_ms = duration_ms;
    return 0;
fail:
    probe_sess_close(s, 0);
    return -1;
}

void probe_sess_close(struct probe_sess *s, uint64_t wait_ms)
{
    if (s->ctrl >= 0 && wait_ms > 0) {
        uint64_t deadline = clock_now_ns() + wait_ms * 1000000ull;
        struct kp_err err;
        struct proto_msg m;

        kp_err_clear(&err);
        if (s->data >= 0)
            shutdown(s->data, SHUT_WR);
        memset(&m, 0, sizeof(m));
        m.type = PROTO_STOP;
        if (msg_send(s->ctrl, &m, deadline, &err) == 0)
            (void)msg_recv(s->ctrl, &m, PROTO_RESULT, deadline, &err);
    }
    if (s->data >= 0)
        close(s->data);
    if (s->ctrl >= 0)
        close(s->ctrl);
    s->data = s->ctrl = -1;
}
