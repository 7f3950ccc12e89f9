/* SPDX-License-Identifier: Apache-2.0 */
/* test_sysinfo.c - the facts a measurement reports, read from this machine: the clock, process
 * and node CPU, loopback MTU and TCP_INFO of a real loopback connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/sysinfo.h"
#include "base/kp_err.h"

static void test_sysinfo_clock_is_monotonic(void **state)
{
    uint64_t a = sysinfo_now_ns(), b = sysinfo_now_ns();
    (void)state;
    assert_true(b >= a);
    assert_true(a > 0);
}

static void test_sysinfo_cpu_counters(void **state)
{
    uint64_t node[SYSINFO_CPU_FIELDS], user, sys, total = 0;
    volatile uint64_t spin = 0;
    (void)state;

    assert_int_equal(sysinfo_node_cpu(node), 0);
    for (int i = 0; i < SYSINFO_CPU_FIELDS; i++)
        total += node[i];
    assert_true(total > 0);
    for (uint64_t i = 0; i < 20000000; i++)
        spin += i;
    sysinfo_process_cpu_us(&user, &sys);
    assert_true(user + sys > 0);
}

/* A connected loopback TCP pair: *a and *b. */
static void tcp_pair(int *a, int *b)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    int l = socket(AF_INET, SOCK_STREAM, 0);

    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(l, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&addr, &len), 0);
    *a = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(*a, (struct sockaddr *)&addr, sizeof(addr)), 0);
    *b = accept(l, NULL, NULL);
    assert_true(*b >= 0);
    close(l);
}

static void test_sysinfo_loopback_socket_facts(void **state)
{
    struct sysinfo_tcp ti;
    char byte = 'x';
    int a, b;
    (void)state;

    tcp_pair(&a, &b);
    assert_int_equal(send(a, &byte, 1, 0), 1);
    assert_int_equal(recv(b, &byte, 1, 0), 1);
    assert_int_equal(sysinfo_socket_mtu(a), 65536); /* lo */
    assert_int_equal(sysinfo_tcp_info(a, &ti), 0);
    assert_true(ti.mss > 0);
    assert_int_equal(ti.retransmits, 0);
    assert_int_equal(sysinfo_tcp_info(-1, &ti), -1);
    assert_int_equal(ti.mss, 0);
    assert_int_equal(sysinfo_socket_mtu(-1), 0);
    close(a);
    close(b);
}

/* The socket options are best effort for their callers, but each failure is reported with
 * the option's name and the errno text. */
static void test_sysinfo_socket_options_report_failures(void **state)
{
    struct kp_err err;
    int a, b;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(sysinfo_set_bufs(-1, 4096, 8192, &err), -1);
    assert_string_equal(kp_err_msg(&err), "setsockopt SO_SNDBUF 4096: Bad file descriptor");
    kp_err_clear(&err);
    assert_int_equal(sysinfo_set_bufs(-1, 0, 8192, &err), -1);
    assert_string_equal(kp_err_msg(&err), "setsockopt SO_RCVBUF 8192: Bad file descriptor");
    kp_err_clear(&err);
    assert_int_equal(sysinfo_keepalive(-1, 10, 30000, &err), -1);
    assert_string_equal(kp_err_msg(&err), "setsockopt SO_KEEPALIVE: Bad file descriptor");

    tcp_pair(&a, &b);
    kp_err_clear(&err);
    assert_int_equal(sysinfo_set_bufs(a, 65536, 65536, &err), 0);
    assert_int_equal(sysinfo_keepalive(a, 10, 30000, &err), 0);
    assert_string_equal(kp_err_msg(&err), "");
    close(a);
    close(b);
}

static void test_sysinfo_host(void **state)
{
    char host[64], kernel[64];
    (void)state;
    sysinfo_host(host, sizeof(host), kernel, sizeof(kernel));
    assert_true(host[0] != '\0');
    assert_true(kernel[0] >= '0' && kernel[0] <= '9');
}

static void test_sysinfo_machine(void **state)
{
    char machine[64], tiny[4];
    struct utsname u;
    (void)state;
    assert_int_equal(uname(&u), 0);
    sysinfo_machine(machine, sizeof(machine));
    assert_string_equal(machine, u.machine); /* "x86_64" here, "aarch64" under qemu-aarch64 */
    sysinfo_machine(tiny, sizeof(tiny));
    assert_int_equal(strlen(tiny), 3); /* cut, NUL-terminated */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sysinfo_clock_is_monotonic),
        cmocka_unit_test(test_sysinfo_cpu_counters),
        cmocka_unit_test(test_sysinfo_loopback_socket_facts),
        cmocka_unit_test(test_sysinfo_socket_options_report_failures),
        cmocka_unit_test(test_sysinfo_host),
        cmocka_unit_test(test_sysinfo_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
