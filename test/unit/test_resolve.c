/* SPDX-License-Identifier: Apache-2.0 */
/* test_resolve.c - the controller resolves --external-server: address literals pass through
 * normalised and must match --ip-family, a name becomes an address (and is kept for the report),
 * and a name that does not resolve is one clear line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/resolve.h"
#include "controller/run_options.h"

static void test_resolve_literals(void **state)
{
    char out[64];
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(resolve_host("198.18.4.2", RUN_IP_DEFAULT, out, sizeof(out), &err), 0);
    assert_string_equal(out, "198.18.4.2");
    assert_int_equal(resolve_host("2001:2:0:4:0:0:0:2", RUN_IPV6, out, sizeof(out), &err), 0);
    assert_string_equal(out, "2001:2:0:4::2");
    assert_int_equal(resolve_host("198.18.4.2", RUN_IPV6, out, sizeof(out), &err), -1);
    assert_string_equal(kp_err_msg(&err),
                        "--external-server: 198.18.4.2 is not an IPv6 address (--ip-family ipv6)");
    assert_int_equal(resolve_host("2001:2::2", RUN_IPV4, out, sizeof(out), &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "is not an IPv4 address"));
}

static void test_resolve_names(void **state)
{
    char out[64];
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    /* /etc/hosts: no network needed */
    assert_int_equal(resolve_host("localhost", RUN_IPV4, out, sizeof(out), &err), 0);
    assert_string_equal(out, "127.0.0.1");
    if (resolve_host("localhost", RUN_IPV6, out, sizeof(out), &err) == 0)
        assert_string_equal(out, "::1");
    else
        assert_non_null(strstr(kp_err_msg(&err), "'localhost' has no IPv6 address"));
    /* RFC 6761: .invalid never resolves */
    assert_int_equal(resolve_host("no-such-host.invalid", RUN_IP_DEFAULT, out, sizeof(out), &err),
                     -1);
    assert_non_null(strstr(kp_err_msg(&err), "--external-server: 'no-such-host.invalid' "));
    assert_null(strchr(kp_err_msg(&err), '\n'));
}

static void test_resolve_external_keeps_the_name(void **state)
{
    struct run_options o;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    run_options_init(&o);
    assert_int_equal(resolve_external(&o, &err), 0); /* none given: nothing to do */
    assert_null(o.external_host);
    o.external_host = kp_xstrdup("localhost");
    o.ip_family = RUN_IPV4;
    assert_int_equal(resolve_external(&o, &err), 0);
    assert_string_equal(o.external_host, "127.0.0.1");
    assert_string_equal(o.external_name, "localhost");
    run_options_cleanup(&o);

    run_options_init(&o);
    o.external_host = kp_xstrdup("2001:2:0:0::7");
    assert_int_equal(resolve_external(&o, &err), 0);
    assert_string_equal(o.external_host, "2001:2::7");
    assert_null(o.external_name); /* an address has no name to report */
    run_options_cleanup(&o);

    run_options_init(&o);
    o.external_host = kp_xstrdup("x.invalid");
    assert_int_equal(resolve_external(&o, &err), -1);
    assert_string_equal(o.external_host, "x.invalid"); /* untouched on error */
    run_options_cleanup(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_literals),
        cmocka_unit_test(test_resolve_names),
        cmocka_unit_test(test_resolve_external_keeps_the_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
