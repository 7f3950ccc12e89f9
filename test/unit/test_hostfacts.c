/* SPDX-License-Identifier: Apache-2.0 */
/* test_hostfacts.c - the facts a server sends in FACTS: the CPU model parsed from /proc/cpuinfo
 * text of several architectures, this host's kernel and CPU count as the system says, the
 * interface of a connected socket, the text bound (facts dropped in order, never cut), and the
 * client's parse of the text (an object, no duplicate keys). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/client_int.h"
#include "agent/hostfacts.h"

static void test_hostfacts_cpu_model(void **state)
{
    char *m;
    (void)state;

    m = hostfacts_cpu_model("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                            "model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz  \n"
                            "model name\t: second\n");
    assert_string_equal(m, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz");
    free(m);
    m = hostfacts_cpu_model("Processor\t: ARMv7 Processor rev 4 (v7l)\nBogoMIPS\t: 38.40\n");
    assert_string_equal(m, "ARMv7 Processor rev 4 (v7l)");
    free(m);
    m = hostfacts_cpu_model("processor\t: 0\ncpu model\t: Loongson-3A5000\n");
    assert_string_equal(m, "Loongson-3A5000");
    free(m);
    /* aarch64: no model line at all; "model name" without a value; no text */
    assert_null(hostfacts_cpu_model("processor\t: 0\nCPU implementer\t: 0x41\n"));
    assert_null(hostfacts_cpu_model("model name\t:   \n"));
    assert_null(hostfacts_cpu_model(NULL));
    /* a key that only starts like one does not count */
    assert_null(hostfacts_cpu_model("model names\t: x\n"));
}

static void test_hostfacts_collect_this_host(void **state)
{
    struct utsname u;
    json_t *f;
    int lst, cli, srv;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    (void)state;

    assert_int_equal(uname(&u), 0);
    f = hostfacts_collect(-1);
    assert_string_equal(json_string_value(json_object_get(f, "kernel")), u.release);
    assert_int_equal(json_integer_value(json_object_get(f, "cpus")), sysconf(_SC_NPROCESSORS_ONLN));
    assert_null(json_object_get(f, "interface"));
    assert_true(json_is_array(json_object_get(json_object_get(f, "net"), "nics")));
    json_decref(f);

    /* a connected loopback socket: the interface is lo, and its NIC entry is that one only */
    lst = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(lst, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(lst, 1), 0);
    assert_int_equal(getsockname(lst, (struct sockaddr *)&a, &len), 0);
    cli = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(cli, (struct sockaddr *)&a, sizeof(a)), 0);
    srv = accept(lst, NULL, NULL);
    assert_true(srv >= 0);
    f = hostfacts_collect(srv);
    assert_string_equal(json_string_value(json_object_get(f, "interface")), "lo");
    {
        const json_t *nics = json_object_get(json_object_get(f, "net"), "nics");
        assert_int_equal(json_array_size(nics), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(nics, 0), "name")),
                            "lo");
    }
    json_decref(f);
    close(srv);
    close(cli);
    close(lst);
}

static void test_hostfacts_text_bound(void **state)
{
    json_t *f = json_pack("{s:s, s:i, s:{s:[{s:s}], s:{s:s}}}", "kernel", "6.1.0-\xc3\xa9", "cpus",
                          8, "net", "nics", "name", "ens5", "sysctls", "tcp_congestion_control",
                          "cubic-with-a-long-name-to-drop");
    char *t;
    (void)state;

    t = hostfacts_text(f, 4000);
    assert_non_null(strstr(t, "\\u00E9")); /* ASCII only: what FACTS may carry */
    assert_non_null(strstr(t, "cubic"));
    free(t);
    t = hostfacts_text(f, 90); /* the sysctls go first */
    assert_non_null(t);
    assert_null(strstr(t, "cubic"));
    assert_non_null(strstr(t, "ens5"));
    free(t);
    t = hostfacts_text(f, 40); /* then the whole net */
    assert_string_equal(t, "{\"cpus\":8,\"kernel\":\"6.1.0-\\u00E9\"}");
    free(t);
    assert_null(hostfacts_text(f, 10));
    json_decref(f);
}

static void test_client_facts_parse(void **state)
{
    json_t *f;
    (void)state;

    f = client_facts_parse("{\"kernel\":\"6.1.0\",\"cpus\":8}");
    assert_int_equal(json_integer_value(json_object_get(f, "cpus")), 8);
    json_decref(f);
    assert_null(client_facts_parse("[1,2]"));
    assert_null(client_facts_parse("{\"a\":1,\"a\":2}"));
    assert_null(client_facts_parse("{\"a\":"));
    assert_null(client_facts_parse(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostfacts_cpu_model),
        cmocka_unit_test(test_hostfacts_collect_this_host),
        cmocka_unit_test(test_hostfacts_text_bound),
        cmocka_unit_test(test_client_facts_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
