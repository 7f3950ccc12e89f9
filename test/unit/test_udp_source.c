/* SPDX-License-Identifier: Apache-2.0 */
/* test_udp_source.c - the reverse UDP_STREAM sender on loopback: its datagrams reach the
 * receiver and leave from the server's port, the receiver's keep-alives (and only those of the
 * session) are counted, and once the receiver's socket is gone the ICMP port unreachable stops
 * the sender (UDP_SOURCE_UNREACHABLE, ECONNREFUSED). */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/proto.h"
#include "agent/udp_source.h"
#include "base/kp_err.h"

#define SESSION 0x1122334455667788ull

/* A UDP socket on 127.0.0.1 (port 0: any) with SO_REUSEADDR, as the server's shared one. */
static int udp_socket(struct sockaddr_in *addr)
{
    socklen_t len = sizeof(*addr);
    int one = 1;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    memset(addr, 0, sizeof(*addr));
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
    return fd;
}

static void test_udp_source_sends_counts_keepalives_and_stops_when_unreachable(void **state)
{
    struct sockaddr_in srv, rcv, from;
    socklen_t from_len = sizeof(from);
    uint8_t d[1472], hello[PROTO_MIN_UDP_SIZE];
    uint64_t id, seq, ts;
    unsigned keepalives = 0;
    struct udp_source *u;
    struct kp_err err;
    int shared = udp_socket(&srv);
    int receiver = udp_socket(&rcv);
    int why = 0, tries;
    enum udp_source_status st = UDP_SOURCE_OK;
    (void)state;

    kp_err_clear(&err);
    u = udp_source_open((struct sockaddr *)&srv, (struct sockaddr *)&rcv, SESSION, sizeof(d), &err);
    assert_non_null(u);
    assert_int_equal(udp_source_send(u, 7, &why), UDP_SOURCE_OK);
    assert_int_equal(recvfrom(receiver, d, sizeof(d), 0, (struct sockaddr *)&from, &from_len),
                     (ssize_t)sizeof(d));
    proto_udp_get(d, &id, &seq, &ts);
    assert_int_equal(id, SESSION);
    assert_int_equal(seq, 7);
    assert_int_equal(from.sin_port, srv.sin_port); /* from the server's port */
    /* two keep-alives of the session and one of another: the source's socket gets them */
    proto_udp_put(hello, SESSION, PROTO_UDP_HELLO_SEQ, 0);
    assert_int_equal(
        sendto(receiver, hello, sizeof(hello), 0, (struct sockaddr *)&srv, sizeof(srv)),
        (ssize_t)sizeof(hello));
    assert_int_equal(
        sendto(receiver, hello, sizeof(hello), 0, (struct sockaddr *)&srv, sizeof(srv)),
        (ssize_t)sizeof(hello));
    proto_udp_put(hello, SESSION + 1, PROTO_UDP_HELLO_SEQ, 0);
    assert_int_equal(
        sendto(receiver, hello, sizeof(hello), 0, (struct sockaddr *)&srv, sizeof(srv)),
        (ssize_t)sizeof(hello));
    assert_int_equal(udp_source_poll(u, 16, &keepalives, &why), UDP_SOURCE_OK);
    assert_int_equal(keepalives, 2);
    /* the receiver goes away: loopback answers the next datagram with ICMP port unreachable,
     * which a later call reports (bounded by tries, not by time) */
    close(receiver);
    for (tries = 0; tries < 100000 && st == UDP_SOURCE_OK; tries++) {
        st = udp_source_send(u, 8, &why);
        if (st == UDP_SOURCE_OK)
            st = udp_source_poll(u, 16, &keepalives, &why);
    }
    assert_int_equal(st, UDP_SOURCE_UNREACHABLE);
    assert_int_equal(why, ECONNREFUSED);
    udp_source_close(u);
    close(shared);
}

static void test_udp_source_open_names_the_failing_call(void **state)
{
    struct sockaddr_in local, peer;
    struct kp_err err;
    (void)state;

    /* an address this host does not have cannot be bound */
    memset(&local, 0, sizeof(local));
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(0xc6120063); /* 198.18.0.99 */
    peer = local;
    kp_err_clear(&err);
    assert_null(udp_source_open((struct sockaddr *)&local, (struct sockaddr *)&peer, 1, 24, &err));
    assert_string_equal(kp_err_msg(&err), "bind: Cannot assign requested address");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udp_source_sends_counts_keepalives_and_stops_when_unreachable),
        cmocka_unit_test(test_udp_source_open_names_the_failing_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
