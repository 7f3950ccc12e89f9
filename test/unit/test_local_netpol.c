/* SPDX-License-Identifier: Apache-2.0 */
/* test_local_netpol.c - the ruleset of the local cluster's NetworkPolicy (local_netpol.h): N
 * policy rules are N - 1 rules that admit nothing of kperf's and the one that admits its
 * clients, per family; flows to the servers enter it, established ones pass first, the rest of
 * TCP and UDP is dropped. Loading it needs root and a cluster: e2e.local_netpol does that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/local/local_netpol.h"

static size_t count(const char *text, const char *what)
{
    size_t n = 0;

    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static const char *const servers[] = {"198.18.1.3", "198.18.2.2", "2001:2:0:1::3"};
static const char *const allow[] = {"198.18.1.2", "2001:2:0:1::2", "198.18.0.1"};

static void test_local_netpol_sizes(void **state)
{
    static const unsigned sizes[] = {1, 2, 100, 1000};

    (void)state;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char *t = local_netpol_text(sizes[i], servers, 3, allow, 3);
        /* the N - 1 that admit nothing of kperf's: TEST-NET-1 and 2001:db8::/32 sources */
        assert_int_equal(count(t, "saddr 192.0.2.") + count(t, "saddr 2001:db8::"), sizes[i] - 1);
        assert_int_equal(count(t, " dport "), sizes[i] - 1);
        /* the one that admits the clients, in each family */
        assert_non_null(strstr(t, "ip saddr { 198.18.1.2, 198.18.0.1 } accept"));
        assert_non_null(strstr(t, "ip6 saddr { 2001:2:0:1::2 } accept"));
        /* established flows before any rule; what no rule admits dropped, last */
        assert_true(strstr(t, "ct state established,related accept") < strstr(t, "saddr"));
        /* new flows counted once they passed the established ones, before the rules */
        assert_true(strstr(t, "counter comment \"new flows\"") >
                    strstr(t, "ct state established,related accept"));
        assert_true(strstr(t, "counter comment \"new flows\"") < strstr(t, "saddr"));
        assert_true(strstr(t, "counter drop") > strstr(t, "ip6 saddr { 2001:2:0:1::2 }"));
        /* what enters: flows to the servers, by family */
        assert_non_null(strstr(t, "ip daddr { 198.18.1.3, 198.18.2.2 } counter jump np"));
        assert_non_null(strstr(t, "ip6 daddr { 2001:2:0:1::3 } counter jump np"));
        free(t);
    }
}

static void test_local_netpol_one_family(void **state)
{
    char *t = local_netpol_text(3, servers, 2, allow, 1); /* IPv4 addresses only */

    (void)state;
    assert_null(strstr(t, "ip6 daddr"));
    assert_null(strstr(t, "ip6 saddr {"));
    assert_non_null(strstr(t, "ip saddr { 198.18.1.2 } accept"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_netpol_sizes),
        cmocka_unit_test(test_local_netpol_one_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
