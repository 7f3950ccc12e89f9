/* SPDX-License-Identifier: Apache-2.0 */
/* test_echo.c - the UDP_RR echo thread: it takes over the peer's datagrams from the shared
 * socket, echoes only the session's datagrams, counts them, and stops on request. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/echo.h"
#include "agent/proto.h"
#include "agent/sysinfo.h"
#include "base/kp_err.h"

#define SESSION 0x1122334455667788ull

static int udp_socket(int reuse)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int one = 1;
    assert_true(fd >= 0);
    if (reuse)
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    return fd;
}

static void test_echo_udp_takes_over_and_filters(void **state)
{
    struct sockaddr_in shared_addr = {.sin_family = AF_INET}, peer_addr;
    socklen_t len = sizeof(shared_addr);
    struct timeval tv = {.tv_sec = 5};
    _Atomic uint64_t count = 0, bytes = 0;
    uint8_t buf[PROTO_MIN_UDP_SIZE + 8], got[sizeof(buf)];
    uint64_t id, seq, ts;
    struct echo_udp *e;
    struct kp_err err;
    int shared = udp_socket(1), peer = udp_socket(0);

    (void)state;
    kp_err_clear(&err);
    shared_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(shared, (struct sockaddr *)&shared_addr, sizeof(shared_addr)), 0);
    assert_int_equal(getsockname(shared, (struct sockaddr *)&shared_addr, &len), 0);
    assert_int_equal(connect(peer, (struct sockaddr *)&shared_addr, sizeof(shared_addr)), 0);
    len = sizeof(peer_addr);
    assert_int_equal(getsockname(peer, (struct sockaddr *)&peer_addr, &len), 0);
    assert_int_equal(setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);

    e = echo_udp_start((struct sockaddr *)&shared_addr, (struct sockaddr *)&peer_addr, SESSION,
                       PROTO_MIN_UDP_SIZE, sysinfo_now_ns() + 60ull * 1000000000, &count, &bytes,
                       &err);
    assert_non_null(e);
    assert_string_equal(kp_err_msg(&err), "");
    /* another session's datagram and a runt are dropped; the session's one comes back */
    proto_udp_put(buf, SESSION + 1, 1, 0);
    assert_int_equal(send(peer, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
    assert_int_equal(send(peer, buf, 4, 0), 4);
    for (uint64_t i = 2; i < 5; i++) {
        proto_udp_put(buf, SESSION, i, 42);
        assert_int_equal(send(peer, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
        assert_int_equal(recv(peer, got, sizeof(got), 0), (ssize_t)sizeof(buf));
        proto_udp_get(got, &id, &seq, &ts);
        assert_int_equal(id, SESSION);
        assert_int_equal(seq, i);
    }
    echo_udp_stop(e);
    assert_int_equal(count, 3);
    assert_int_equal(bytes, 3 * sizeof(buf));
    /* the shared socket saw none of the peer's datagrams */
    assert_int_equal(recv(shared, got, sizeof(got), MSG_DONTWAIT), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    close(shared);
    close(peer);
}

static void test_echo_udp_needs_reusable_port(void **state)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    socklen_t len = sizeof(addr);
    _Atomic uint64_t count = 0, bytes = 0;
    struct kp_err err;
    int shared = udp_socket(0);

    (void)state;
    kp_err_clear(&err);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(shared, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(getsockname(shared, (struct sockaddr *)&addr, &len), 0);
    /* the port is held without SO_REUSEADDR: start fails cleanly and says which call failed;
     * the caller keeps its loop */
    assert_null(echo_udp_start((struct sockaddr *)&addr, (struct sockaddr *)&addr, SESSION,
                               PROTO_MIN_UDP_SIZE, sysinfo_now_ns() + 1000000000, &count, &bytes,
                               &err));
    assert_string_equal(kp_err_msg(&err), "bind: Address already in use");
    echo_udp_stop(NULL);
    close(shared);
}

/* TCP_RR: a descriptor the echo cannot switch to blocking mode stays with the loop, and the
 * reason names the call. */
static void test_echo_start_reports_failed_fcntl(void **state)
{
    _Atomic uint64_t rx = 0, tx = 0;
    struct echo *e = (struct echo *)&rx; /* must be reset to NULL */
    struct kp_err err;
    int fds[2];

    (void)state;
    kp_err_clear(&err);
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    close(fds[1]); /* fds[0] is now a closed descriptor */
    assert_int_equal(echo_start(fds[0], &rx, &tx, &e, &err), ECHO_ON_LOOP);
    assert_null(e);
    assert_string_equal(kp_err_msg(&err), "fcntl F_GETFL: Bad file descriptor");
}

/* A started echo switches the descriptor to blocking mode and echoes until echo_stop. */
static void test_echo_start_echoes(void **state)
{
    _Atomic uint64_t rx = 0, tx = 0;
    struct echo *e = NULL;
    struct kp_err err;
    char buf[4] = "ping";
    int sv[2];

    (void)state;
    kp_err_clear(&err);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    assert_int_equal(echo_start(sv[0], &rx, &tx, &e, &err), ECHO_STARTED);
    assert_non_null(e);
    assert_int_equal(fcntl(sv[0], F_GETFL) & O_NONBLOCK, 0);
    assert_int_equal(fcntl(sv[1], F_SETFL, 0), 0);
    assert_int_equal(send(sv[1], buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
    memset(buf, 0, sizeof(buf));
    assert_int_equal(recv(sv[1], buf, sizeof(buf), MSG_WAITALL), (ssize_t)sizeof(buf));
    assert_memory_equal(buf, "ping", 4);
    echo_stop(e);
    assert_int_equal((int)rx, 4);
    assert_int_equal((int)tx, 4);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_udp_takes_over_and_filters),
        cmocka_unit_test(test_echo_udp_needs_reusable_port),
        cmocka_unit_test(test_echo_start_reports_failed_fcntl),
        cmocka_unit_test(test_echo_start_echoes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
