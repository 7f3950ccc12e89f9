/* SPDX-License-Identifier: Apache-2.0 */
/* test_peeraddr.c - an IPv4 peer of the dual-stack listener (::ffff:a.b.c.d) is its IPv4
 * address: unmapped with its port, equal to the plain IPv4 address; real IPv6 addresses and
 * IPv4 addresses pass unchanged; different addresses never compare equal. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/peeraddr.h"

static struct sockaddr_storage v4(const char *ip, uint16_t port)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;

    memset(&ss, 0, sizeof(ss));
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    assert_int_equal(inet_pton(AF_INET, ip, &in->sin_addr), 1);
    return ss;
}

static struct sockaddr_storage v6(const char *ip, uint16_t port)
{
    struct sockaddr_storage ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

    memset(&ss, 0, sizeof(ss));
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    assert_int_equal(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
    return ss;
}

#define SA(x) ((const struct sockaddr *)&(x))

static void test_peeraddr_mapped_becomes_ipv4(void **state)
{
    struct sockaddr_storage m = v6("::ffff:198.18.1.7", 4242), out;
    char ip[INET_ADDRSTRLEN];

    (void)state;
    peeraddr_unmap(SA(m), &out);
    assert_int_equal(out.ss_family, AF_INET);
    assert_int_equal(ntohs(((struct sockaddr_in *)&out)->sin_port), 4242);
    assert_non_null(inet_ntop(AF_INET, &((struct sockaddr_in *)&out)->sin_addr, ip, sizeof(ip)));
    assert_string_equal(ip, "198.18.1.7");
}

static void test_peeraddr_others_unchanged(void **state)
{
    struct sockaddr_storage a = v6("2001:2:0:1::5", 9), b = v4("198.18.0.1", 10), out;

    (void)state;
    peeraddr_unmap(SA(a), &out);
    assert_int_equal(out.ss_family, AF_INET6);
    assert_memory_equal(&out, &a, sizeof(struct sockaddr_in6));
    peeraddr_unmap(SA(b), &out);
    assert_int_equal(out.ss_family, AF_INET);
    assert_memory_equal(&out, &b, sizeof(struct sockaddr_in));
}

static void test_peeraddr_same_ip(void **state)
{
    struct sockaddr_storage m = v6("::ffff:198.18.1.7", 1), p = v4("198.18.1.7", 2);
    struct sockaddr_storage q = v4("198.18.1.8", 1), r = v6("2001:2:0:1::7", 1);
    struct sockaddr_storage r2 = v6("2001:2:0:1::7", 5), s = v6("2001:2:0:1::8", 1);
    struct sockaddr_storage compat = v6("::198.18.1.7", 1);

    (void)state;
    assert_true(peeraddr_same_ip(SA(m), SA(p)));
    assert_true(peeraddr_same_ip(SA(p), SA(m)));
    assert_true(peeraddr_same_ip(SA(m), SA(m)));
    assert_false(peeraddr_same_ip(SA(m), SA(q)));
    assert_true(peeraddr_same_ip(SA(r), SA(r2)));
    assert_false(peeraddr_same_ip(SA(r), SA(s)));
    assert_false(peeraddr_same_ip(SA(r), SA(p)));
    assert_false(peeraddr_same_ip(SA(compat), SA(p))); /* only ::ffff: is an IPv4 peer */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peeraddr_mapped_becomes_ipv4),
        cmocka_unit_test(test_peeraddr_others_unchanged),
        cmocka_unit_test(test_peeraddr_same_ip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
