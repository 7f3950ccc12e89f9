/* SPDX-License-Identifier: Apache-2.0 */
/* test_nicinfo.c - node network facts: the sysctls read back as /proc/sys has them, the
 * loopback interface's MTU as sysfs/ioctl report it, and an unknown interface gives none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/nicinfo.h"

static void test_nicinfo_sysctls_match_proc(void **state)
{
    json_t *f = nicinfo_node_facts("no-such-interface0");
    const json_t *sys = json_object_get(f, "sysctls");
    char buf[128] = "";
    FILE *p = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "re");
    (void)state;

    assert_int_equal(json_array_size(json_object_get(f, "nics")), 0);
    if (p) {
        assert_non_null(fgets(buf, sizeof(buf), p));
        fclose(p);
        buf[strcspn(buf, "\n")] = '\0';
        assert_string_equal(json_string_value(json_object_get(sys, "tcp_congestion_control")), buf);
    }
    if (json_object_get(sys, "tcp_rmem")) /* three numbers, tabs made spaces */
        assert_null(strchr(json_string_value(json_object_get(sys, "tcp_rmem")), '\t'));
    json_decref(f);
}

static void test_nicinfo_loopback_mtu_and_absent_speed(void **state)
{
    json_t *f = nicinfo_node_facts("lo");
    const json_t *lo = json_array_get(json_object_get(f, "nics"), 0);
    struct ifreq req;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    (void)state;

    assert_true(s >= 0);
    memset(&req, 0, sizeof(req));
    snprintf(req.ifr_name, sizeof(req.ifr_name), "lo");
    assert_int_equal(ioctl(s, SIOCGIFMTU, &req), 0);
    close(s);
    assert_non_null(lo);
    assert_string_equal(json_string_value(json_object_get(lo, "name")), "lo");
    assert_int_equal(json_integer_value(json_object_get(lo, "mtu")), req.ifr_mtu);
    /* loopback has no link speed: absent, not 0 or -1 */
    assert_null(json_object_get(lo, "speed_mbps"));
    json_decref(f);
}

static void test_nicinfo_default_leaves_loopback_out(void **state)
{
    json_t *f = nicinfo_node_facts(NULL);
    size_t i;
    json_t *n;
    (void)state;

    json_array_foreach(json_object_get(f, "nics"), i, n)
    {
        assert_string_not_equal(json_string_value(json_object_get(n, "name")), "lo");
        assert_true(json_integer_value(json_object_get(n, "mtu")) > 0);
    }
    json_decref(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nicinfo_sysctls_match_proc),
        cmocka_unit_test(test_nicinfo_loopback_mtu_and_absent_speed),
        cmocka_unit_test(test_nicinfo_default_leaves_loopback_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
