/* SPDX-License-Identifier: Apache-2.0 */
/* test_srclimit.c - connections are counted per source: an IPv4 address, an IPv4-mapped IPv6
 * address as that IPv4 address, an IPv6 /64; entries go when their count reaches 0; many
 * sources at once are kept apart. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/srclimit.h"

static struct srclimit_key key4(const char *ip, uint16_t port)
{
    struct sockaddr_in in;
    struct srclimit_key k;

    memset(&in, 0, sizeof(in));
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    assert_int_equal(inet_pton(AF_INET, ip, &in.sin_addr), 1);
    srclimit_key_of((struct sockaddr *)&in, &k);
    return k;
}

static struct srclimit_key key6(const char *ip, uint16_t port)
{
    struct sockaddr_in6 in6;
    struct srclimit_key k;

    memset(&in6, 0, sizeof(in6));
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    assert_int_equal(inet_pton(AF_INET6, ip, &in6.sin6_addr), 1);
    srclimit_key_of((struct sockaddr *)&in6, &k);
    return k;
}

static void test_srclimit_counts_per_address_not_per_port(void **state)
{
    struct srclimit *t = srclimit_new(16);
    struct srclimit_key a1 = key4("198.18.0.1", 1000), a2 = key4("198.18.0.1", 2000);
    struct srclimit_key b = key4("198.18.0.2", 1000);
    (void)state;

    assert_int_equal(srclimit_add(t, &a1), 1);
    assert_int_equal(srclimit_add(t, &a2), 2);
    assert_int_equal(srclimit_add(t, &b), 1);
    assert_int_equal(srclimit_count(t, &a1), 2);
    assert_int_equal(srclimit_count(t, &b), 1);
    assert_int_equal(srclimit_sources(t), 2);
    srclimit_del(t, &a1);
    assert_int_equal(srclimit_count(t, &a2), 1);
    srclimit_del(t, &a2);
    assert_int_equal(srclimit_count(t, &a1), 0);
    assert_int_equal(srclimit_sources(t), 1); /* the entry went with its last connection */
    srclimit_del(t, &a1);                     /* not counted: ignored */
    assert_int_equal(srclimit_count(t, &b), 1);
    srclimit_free(t);
}

static void test_srclimit_ipv6_by_prefix_and_mapped_ipv4_as_ipv4(void **state)
{
    struct srclimit *t = srclimit_new(16);
    struct srclimit_key h1 = key6("2001:2::1", 1), h2 = key6("2001:2::ffff:1234", 2);
    struct srclimit_key other = key6("2001:2:0:1::1", 1);
    struct srclimit_key mapped = key6("::ffff:198.18.0.7", 3), v4 = key4("198.18.0.7", 4);
    (void)state;

    assert_int_equal(srclimit_add(t, &h1), 1);
    assert_int_equal(srclimit_add(t, &h2), 2); /* same /64 */
    assert_int_equal(srclimit_add(t, &other), 1);
    assert_int_equal(srclimit_add(t, &mapped), 1);
    assert_int_equal(srclimit_add(t, &v4), 2); /* the same IPv4 client, either socket family */
    assert_int_equal(srclimit_sources(t), 3);
    srclimit_free(t);
}

static void test_srclimit_unknown_family_never_counted(void **state)
{
    struct srclimit *t = srclimit_new(16);
    struct sockaddr sa;
    struct srclimit_key k;
    (void)state;

    memset(&sa, 0, sizeof(sa));
    sa.sa_family = AF_UNIX;
    srclimit_key_of(&sa, &k);
    assert_int_equal(k.family, 0);
    assert_int_equal(srclimit_add(t, &k), 0);
    assert_int_equal(srclimit_count(t, &k), 0);
    assert_int_equal(srclimit_sources(t), 0);
    srclimit_free(t);
}

/* More sources than buckets: chains keep them apart, and every count comes back to 0. */
static void test_srclimit_many_sources(void **state)
{
    struct srclimit *t = srclimit_new(8);
    char ip[32];
    (void)state;

    for (unsigned i = 0; i < 3000; i++) {
        struct srclimit_key k;
        snprintf(ip, sizeof(ip), "198.18.%u.%u", i / 250, i % 250 + 1);
        k = key4(ip, 1);
        assert_int_equal(srclimit_add(t, &k), 1);
        assert_int_equal(srclimit_add(t, &k), 2);
    }
    assert_int_equal(srclimit_sources(t), 3000);
    for (unsigned i = 0; i < 3000; i++) {
        struct srclimit_key k;
        snprintf(ip, sizeof(ip), "198.18.%u.%u", i / 250, i % 250 + 1);
        k = key4(ip, 1);
        assert_int_equal(srclimit_count(t, &k), 2);
        srclimit_del(t, &k);
        srclimit_del(t, &k);
    }
    assert_int_equal(srclimit_sources(t), 0);
    srclimit_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_srclimit_counts_per_address_not_per_port),
        cmocka_unit_test(test_srclimit_ipv6_by_prefix_and_mapped_ipv4_as_ipv4),
        cmocka_unit_test(test_srclimit_unknown_family_never_counted),
        cmocka_unit_test(test_srclimit_many_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
