/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_args.c - the kperf-agent command lines: every run_spec field in its flag, optional
 * flags omitted when 0, defaults passed explicitly, server address formatting, prefix and
 * binary, the server argv. Whole argvs are compared element by element. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/agent_args.h"

/* Compares argv with the NULL-terminated want, element by element (both values printed on a
 * mismatch), then frees argv. */
static void assert_argv(char **argv, const char *const *want)
{
    size_t i = 0;

    assert_non_null(argv);
    for (; want[i]; i++) {
        assert_non_null(argv[i]);
        assert_string_equal(argv[i], want[i]);
    }
    assert_null(argv[i]);
    agent_args_free(argv);
}

static const enum test_kind two_tests[] = {TEST_TCP_RR, TEST_TCP_STREAM};

static struct run_spec minimal_spec(const struct plan_group *g)
{
    struct run_spec spec = {.group = g,
                            .tests = two_tests,
                            .n_tests = 2,
                            .samples = 1,
                            .duration_ms = 10000,
                            .streams = 4};
    return spec;
}

static void test_agent_args_client_minimal_omits_optional_flags(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_POD_TO_POD};
    struct run_spec spec = minimal_spec(&g);
    struct agent_args_opts o = {.host = "198.18.1.2", .port = 5201};
    const char *const want[] = {"client",
                                "--server",
                                "198.18.1.2:5201",
                                "--tests",
                                "TCP_RR,TCP_STREAM",
                                "--duration",
                                "10000ms",
                                "--samples",
                                "1",
                                "--streams",
                                "4",
                                "--json",
                                NULL};
    (void)state;

    assert_argv(agent_args_client(&spec, &o), want);
}

static void test_agent_args_client_every_field_in_its_flag(void **state)
{
    enum test_kind tests[] = {TEST_UDP_STREAM};
    struct plan_group g = {.scenario = SCENARIO_POD_TO_EXTERNAL, .reverse = true};
    struct run_spec spec = {.group = &g,
                            .tests = tests,
                            .n_tests = 1,
                            .samples = 3,
                            .duration_ms = 2500,
                            .omit_ms = 1000,
                            .interval_ms = 500,
                            .streams = 8,
                            .parallel = 16, /* a step of the --capacity ramp */
                            .msg_size_bytes = 64,
                            .udp_rate_bps = 500000000,
                            .no_counters = true,
                            .timeout_ms = 99000}; /* the backend's business, not a flag */
    struct agent_args_opts o = {.host = "ext.example",
                                .port = 6000,
                                .token_file = "/t/token",
                                .counters_netns = "/run/netns/kpl1-n1"};
    const char *const want[] = {"client",
                                "--server",
                                "ext.example:6000",
                                "--tests",
                                "UDP_STREAM",
                                "--duration",
                                "2500ms",
                                "--samples",
                                "3",
                                "--streams",
                                "8",
                                "--parallel",
                                "16",
                                "--omit",
                                "1000ms",
                                "--interval",
                                "500ms",
                                "--msg-size",
                                "64",
                                "--udp-rate",
                                "500000000",
                                "--reverse",
                                "--no-counters",
                                "--counters-netns",
                                "/run/netns/kpl1-n1",
                                "--token-file",
                                "/t/token",
                                "--server-facts", /* pod-to-external */
                                "--json",
                                NULL};
    (void)state;

    assert_argv(agent_args_client(&spec, &o), want);
}

static void test_agent_args_client_defaults_samples_and_streams(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_POD_TO_POD};
    struct run_spec spec = minimal_spec(&g);
    struct agent_args_opts o = {.host = "198.18.1.2", .port = 5201};
    char **argv;
    (void)state;

    spec.samples = 0;
    spec.streams = -1;
    argv = agent_args_client(&spec, &o);
    assert_string_equal(argv[7], "--samples");
    assert_string_equal(argv[8], "1");
    assert_string_equal(argv[9], "--streams");
    assert_string_equal(argv[10], "4");
    agent_args_free(argv);
}

static void test_agent_args_client_without_group_is_not_reverse(void **state)
{
    struct run_spec spec = minimal_spec(NULL);
    struct agent_args_opts o = {.host = "h", .port = 1};
    char **argv = agent_args_client(&spec, &o);
    (void)state;

    for (char **a = argv; *a; a++)
        assert_string_not_equal(*a, "--reverse");
    agent_args_free(argv);
}

static void test_agent_args_client_prefix_and_binary_come_first(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_HOST_TO_HOST};
    struct run_spec spec = minimal_spec(&g);
    const char *prefix[] = {"ip", "netns", "exec", "kperf-abc-node1", NULL};
    struct agent_args_opts o = {.prefix = prefix,
                                .agent = "/usr/bin/kperf-agent",
                                .host = "198.18.0.2",
                                .port = 5201,
                                .token_file = "/run/kperf/abc/token"};
    const char *const want[] = {"ip",
                                "netns",
                                "exec",
                                "kperf-abc-node1",
                                "/usr/bin/kperf-agent",
                                "client",
                                "--server",
                                "198.18.0.2:5201",
                                "--tests",
                                "TCP_RR,TCP_STREAM",
                                "--duration",
                                "10000ms",
                                "--samples",
                                "1",
                                "--streams",
                                "4",
                                "--token-file",
                                "/run/kperf/abc/token",
                                "--json",
                                NULL};
    (void)state;

    assert_argv(agent_args_client(&spec, &o), want);
}

static void test_agent_args_host_port_formats(void **state)
{
    static const struct {
        const char *host, *want;
    } cases[] = {
        {"198.18.5.5", "198.18.5.5:5300"},
        {"2001:2::5", "[2001:2::5]:5300"},
        {"[2001:2::5]", "[2001:2::5]:5300"},
        {"::1", "[::1]:5300"},
        {"iperf.example.com", "iperf.example.com:5300"},
        {"kperf-svc-a", "kperf-svc-a:5300"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = agent_args_host_port(cases[i].host, 5300);
        assert_string_equal(s, cases[i].want);
        free(s);
    }
}

static void test_agent_args_client_ipv6_server_bracketed(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_POD_TO_EXTERNAL};
    struct run_spec spec = minimal_spec(&g);
    struct agent_args_opts o = {.host = "2001:2::5", .port = 5201};
    char **argv = agent_args_client(&spec, &o);
    (void)state;

    assert_string_equal(argv[1], "--server");
    assert_string_equal(argv[2], "[2001:2::5]:5201");
    agent_args_free(argv);
}

static void test_agent_args_server_with_and_without_bind(void **state)
{
    const char *prefix[] = {"ip", "netns", "exec", "kperf-abc-pod1", NULL};
    struct agent_args_opts local = {.prefix = prefix,
                                    .agent = "/bin/kperf-agent",
                                    .host = "198.18.1.2",
                                    .port = 5201,
                                    .token_file = "/run/t",
                                    .counters_netns = "/run/netns/kperf-abc-n1"};
    struct agent_args_opts k8s = {.port = 6000, .token_file = "/var/run/kperf/token"};
    struct agent_args_opts bare = {.port = 5201};
    /* a --udp-rate up to the server's default cap needs nothing; above it, --max-rate */
    struct agent_args_opts at_cap = {.port = 5201, .udp_rate_bps = 10000000000ull};
    struct agent_args_opts above = {.port = 5201, .udp_rate_bps = 25000000000ull};
    const char *const want_above[] = {"server",     "--port",      "5201",
                                      "--max-rate", "25000000000", NULL};
    const char *const want_local[] = {"ip",
                                      "netns",
                                      "exec",
                                      "kperf-abc-pod1",
                                      "/bin/kperf-agent",
                                      "server",
                                      "--port",
                                      "5201",
                                      "--bind",
                                      "198.18.1.2",
                                      "--token-file",
                                      "/run/t",
                                      "--counters-netns",
                                      "/run/netns/kperf-abc-n1",
                                      NULL};
    const char *const want_k8s[] = {
        "server", "--port", "6000", "--token-file", "/var/run/kperf/token", NULL};
    const char *const want_bare[] = {"server", "--port", "5201", NULL};
    (void)state;

    assert_argv(agent_args_server(&local), want_local);
    assert_argv(agent_args_server(&k8s), want_k8s);
    assert_argv(agent_args_server(&bare), want_bare);
    assert_argv(agent_args_server(&at_cap), want_bare);
    assert_argv(agent_args_server(&above), want_above);
}

/* A document as the agent prints it for minimal_spec against port 5201 (params and one
 * result per test), with `reverse` set as given. */
static json_t *doc_for(int reverse)
{
    json_t *d = json_pack("{s:s, s:{s:s, s:i}, s:{s:[s,s], s:f, s:f, s:f, s:i, s:i, s:i, s:i,"
                          " s:b}, s:[{s:s, s:b}, {s:s, s:b}], s:[]}",
                          "schema", "kperf.result/v1", "server", "host", "198.18.1.2", "port", 5201,
                          "params", "tests", "TCP_RR", "TCP_STREAM", "duration_s", 10.0, "omit_s",
                          0.0, "interval_s", 1.0, "samples", 1, "streams", 4, "msg_size_bytes", 0,
                          "udp_rate_bps", 0, "reverse", reverse, "results", "test", "TCP_RR",
                          "reverse", reverse, "test", "TCP_STREAM", "reverse", reverse, "errors");
    assert_non_null(d);
    return d;
}

static void test_agent_args_check_doc_accepts_the_planned_run(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_POD_TO_EXTERNAL, .reverse = true};
    struct run_spec spec = minimal_spec(&g);
    json_t *d = doc_for(1);
    struct kp_err err;
    (void)state;

    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), 0);
    json_decref(d);
}

/* issue 14: the forward document read for the reverse step (another Job's log) is refused */
static void test_agent_args_check_doc_refuses_other_direction(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_POD_TO_EXTERNAL, .reverse = true};
    struct run_spec spec = minimal_spec(&g);
    json_t *d = doc_for(0);
    struct kp_err err;
    (void)state;

    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "forward direction, not the planned reverse"));
    json_decref(d);
}

static void test_agent_args_check_doc_refuses_other_params(void **state)
{
    struct plan_group g = {.scenario = SCENARIO_POD_TO_POD};
    struct run_spec spec = minimal_spec(&g);
    enum test_kind one[] = {TEST_TCP_RR};
    json_t *d = doc_for(0);
    struct kp_err err;
    (void)state;

    /* other tests */
    spec.tests = one;
    spec.n_tests = 1;
    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "tests TCP_RR,TCP_STREAM, not the planned TCP_RR"));
    spec = minimal_spec(&g);
    /* other streams, samples, duration, port */
    spec.streams = 8;
    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "streams 4, not the planned samples 1 streams 8"));
    spec = minimal_spec(&g);
    spec.samples = 3;
    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    spec = minimal_spec(&g);
    spec.duration_ms = 2000;
    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "duration 10 s"));
    spec = minimal_spec(&g);
    assert_int_equal(agent_args_check_doc(&spec, 5202, d, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "server port 5201, not the planned 5202"));
    /* a result in the other direction inside a forward document */
    json_object_set_new(json_array_get(json_object_get(d, "results"), 1), "reverse", json_true());
    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "results[1]"));
    /* no params at all */
    json_object_del(d, "params");
    assert_int_equal(agent_args_check_doc(&spec, 5201, d, &err), -1);
    json_decref(d);
}

static void test_agent_args_free_null_is_noop(void **state)
{
    (void)state;
    agent_args_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent_args_client_minimal_omits_optional_flags),
        cmocka_unit_test(test_agent_args_client_every_field_in_its_flag),
        cmocka_unit_test(test_agent_args_client_defaults_samples_and_streams),
        cmocka_unit_test(test_agent_args_client_without_group_is_not_reverse),
        cmocka_unit_test(test_agent_args_client_prefix_and_binary_come_first),
        cmocka_unit_test(test_agent_args_host_port_formats),
        cmocka_unit_test(test_agent_args_client_ipv6_server_bracketed),
        cmocka_unit_test(test_agent_args_server_with_and_without_bind),
        cmocka_unit_test(test_agent_args_free_null_is_noop),
        cmocka_unit_test(test_agent_args_check_doc_accepts_the_planned_run),
        cmocka_unit_test(test_agent_args_check_doc_refuses_other_direction),
        cmocka_unit_test(test_agent_args_check_doc_refuses_other_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
