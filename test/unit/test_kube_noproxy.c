/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_noproxy.c - NO_PROXY matched as Go's httpproxy (kubectl) matches it, not as
 * libcurl does: ports, subdomains, "*.", leading dots, IPs, CIDRs, case and spaces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controller/kube/noproxy.h"

static void test_domains(void **state)
{
    (void)state;
    assert_int_equal(noproxy_match("example.com", "example.com", "443"), 1);
    assert_int_equal(noproxy_match("example.com", "api.example.com", "443"), 1);
    assert_int_equal(noproxy_match("example.com", "badexample.com", "443"), 0);
    assert_int_equal(noproxy_match(".example.com", "example.com", "443"), 0);
    assert_int_equal(noproxy_match(".example.com", "api.example.com", "443"), 1);
    assert_int_equal(noproxy_match("*.example.com", "example.com", "443"), 0);
    assert_int_equal(noproxy_match("*.example.com", "a.b.example.com", "443"), 1);
    assert_int_equal(noproxy_match("ple.com", "example.com", "443"), 0);
    /* trimmed, case-insensitive, empty entries skipped */
    assert_int_equal(noproxy_match(" , x.test ,  EXAMPLE.com ", "Api.Example.COM", "443"), 1);
    assert_int_equal(noproxy_match("", "example.com", "443"), 0);
    assert_int_equal(noproxy_match(NULL, "example.com", "443"), 0);
    assert_int_equal(noproxy_match("*", "anything.test", "1"), 1);
}

static void test_ports(void **state)
{
    (void)state;
    /* libcurl ignores the port of an entry; Go requires it to be the request's */
    assert_int_equal(noproxy_match("example.com:6443", "example.com", "6443"), 1);
    assert_int_equal(noproxy_match("example.com:6443", "example.com", "443"), 0);
    assert_int_equal(noproxy_match(".example.com:443", "k.example.com", "443"), 1);
    assert_int_equal(noproxy_match("198.18.0.1:6443", "198.18.0.1", "6443"), 1);
    assert_int_equal(noproxy_match("198.18.0.1:6443", "198.18.0.1", "443"), 0);
    assert_int_equal(noproxy_match("[2001:db8::1]:443", "2001:db8::1", "443"), 1);
    assert_int_equal(noproxy_match("[2001:db8::1]:443", "2001:db8::1", "80"), 0);
    assert_int_equal(noproxy_match(":443", "example.com", "443"), 0); /* no host: ignored */
}

static void test_ips_and_cidrs(void **state)
{
    (void)state;
    assert_int_equal(noproxy_match("10.0.0.1", "10.0.0.1", "443"), 1);
    assert_int_equal(noproxy_match("10.0.0.1", "10.0.0.2", "443"), 0);
    assert_int_equal(noproxy_match("2001:db8::1", "2001:DB8:0::1", "443"), 1);
    assert_int_equal(noproxy_match("10.0.0.0/8", "10.200.3.4", "443"), 1);
    assert_int_equal(noproxy_match("10.0.0.0/8", "11.0.0.1", "443"), 0);
    assert_int_equal(noproxy_match("192.168.1.0/25", "192.168.1.127", "443"), 1);
    assert_int_equal(noproxy_match("192.168.1.0/25", "192.168.1.128", "443"), 0);
    assert_int_equal(noproxy_match("2001:db8::/32", "2001:db8:5::9", "443"), 1);
    assert_int_equal(noproxy_match("2001:db8::/32", "2001:db9::9", "443"), 0);
    /* a CIDR or an IP never matches a name, even one that looks like it */
    assert_int_equal(noproxy_match("10.0.0.0/8", "10.example.com", "443"), 0);
    assert_int_equal(noproxy_match("10.0.0.1", "api.10.0.0.1", "443"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_domains),
        cmocka_unit_test(test_ports),
        cmocka_unit_test(test_ips_and_cidrs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
