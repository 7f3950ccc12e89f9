/* SPDX-License-Identifier: Apache-2.0 */
/* test_run_flags.c - `kperf run` flag parsing (cmd/kperf/run_flags.c): defaults, every flag
 * group, kubectl-like forms, combined checks, and one clear line for each usage error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_err.h"
#include "cmd/kperf/run_flags.h"
#include "controller/agent_args.h"
#include "controller/backend.h"
#include "controller/plan.h"
#include "controller/run_options.h"

#define MAX_ARGV 32

/* Parses "run" + args; returns the parser's result, options left in *o, message in *err. */
static int parse(struct run_options *o, struct kp_err *err, ...)
{
    char *argv[MAX_ARGV] = {"run"};
    int argc = 1;
    va_list ap;

    va_start(ap, err);
    for (char *a = va_arg(ap, char *); a && argc < MAX_ARGV - 1; a = va_arg(ap, char *))
        argv[argc++] = a;
    va_end(ap);
    run_options_init(o);
    kp_err_clear(err);
    return run_flags_parse(o, argc, argv, err);
}

static void test_run_flags_defaults(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, NULL), 0);
    assert_int_equal(o.scenarios, 1u << SCENARIO_POD_TO_POD);
    assert_int_equal(o.placements, PLACEMENT_BOTH_MASK);
    assert_int_equal(o.tests, TEST_DEFAULT_MASK);
    assert_int_equal(o.duration_ms, 10000);
    assert_int_equal(o.interval_ms, 1000);
    assert_int_equal(o.samples, 1);
    assert_false(o.samples_auto);
    assert_int_equal(o.streams, 4);
    assert_int_equal(o.output, RUN_OUTPUT_TABLE);
    assert_int_equal(o.mtu, 1500);
    assert_int_equal(o.port, 5201);
    assert_false(o.local);
    assert_null(o.namespace_name);
    run_options_cleanup(&o);

    /* the default series is dropped, not an error, when a run is shorter than it */
    assert_int_equal(parse(&o, &err, "--duration", "500ms", NULL), 0);
    assert_int_equal(o.interval_ms, 0);
    run_options_cleanup(&o);
}

static void test_run_flags_what_to_measure(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, "--scenarios", "all", "--tests=all", NULL), 0);
    assert_int_equal(o.scenarios, SCENARIO_ALL_MASK);
    assert_int_equal(o.tests, TEST_ALL_MASK);
    run_options_cleanup(&o);

    assert_int_equal(
        parse(&o, &err, "--scenarios", "host-to-host,pod-to-external", "--tests", "udp_rr", NULL),
        0);
    assert_int_equal(o.scenarios, (1u << SCENARIO_HOST_TO_HOST) | (1u << SCENARIO_POD_TO_EXTERNAL));
    assert_int_equal(o.tests, 1u << TEST_UDP_RR);
    run_options_cleanup(&o);

    /* pod-to-dns is asked for: "all" leaves it out, and --local and --all-nodes refuse it */
    assert_int_equal(parse(&o, &err, "--scenarios", "all,pod-to-dns", NULL), 0);
    assert_int_equal(o.scenarios, SCENARIO_ALL_MASK | (1u << SCENARIO_POD_TO_DNS));
    assert_true((SCENARIO_ALL_MASK & (1u << SCENARIO_POD_TO_DNS)) == 0);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--local", "--scenarios", "pod-to-dns", NULL), -1);
    assert_non_null(strstr(kp_err_msg(&err), "--local runs no cluster DNS"));
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--all-nodes", "--scenarios", "pod-to-dns", NULL), -1);
    assert_non_null(strstr(kp_err_msg(&err), "without --all-nodes"));
    run_options_cleanup(&o);

    /* --under-load adds the loaded test and its idle baseline, before or after --tests */
    assert_int_equal(parse(&o, &err, "--under-load", "--tests", "TCP_STREAM", NULL), 0);
    assert_int_equal(o.tests,
                     (1u << TEST_TCP_STREAM) | (1u << TEST_TCP_RR) | (1u << TEST_TCP_RR_LOADED));
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--under-load", NULL), 0);
    assert_int_equal(o.tests, TEST_DEFAULT_MASK | (1u << TEST_TCP_RR_LOADED));
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--tests", "tcp_rr_loaded", NULL), 0);
    assert_int_equal(o.tests, 1u << TEST_TCP_RR_LOADED);
    run_options_cleanup(&o);

    /* giving one placement selects only it; both flags select both */
    assert_int_equal(parse(&o, &err, "--other-node", NULL), 0);
    assert_int_equal(o.placements, 1u << PLACEMENT_OTHER_NODE);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--same-node", "--other-node", NULL), 0);
    assert_int_equal(o.placements, PLACEMENT_BOTH_MASK);
    run_options_cleanup(&o);
}

static void test_run_flags_measurement_values(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, "--duration", "2s", "--samples", "5", "--streams", "8",
                           "--msg-size", "1K", "--udp-rate", "100M", "--omit", "500ms",
                           "--interval", "1s", "--timeout", "5m", NULL),
                     0);
    assert_int_equal(o.duration_ms, 2000);
    assert_int_equal(o.samples, 5);
    assert_int_equal(o.samples_max, 5);
    assert_int_equal(o.streams, 8);
    assert_int_equal(o.msg_size_bytes, 1024);
    assert_int_equal(o.udp_rate_bps, 100000000);
    assert_int_equal(o.omit_ms, 500);
    assert_int_equal(o.interval_ms, 1000);
    assert_int_equal(o.timeout_ms, 300000);
    run_options_cleanup(&o);

    assert_int_equal(parse(&o, &err, "--samples", "auto", NULL), 0);
    assert_true(o.samples_auto);
    assert_true(o.samples >= 2);
    assert_true(o.samples_max > o.samples);
    run_options_cleanup(&o);
}

/* --profile ROWS: the rows' patterns, the tests of a group they select, the agent's flag. */
static void test_run_flags_profile_rows(void **state)
{
    struct run_options o;
    struct kp_err err;
    struct plan_group g = {.scenario = SCENARIO_POD_TO_POD,
                           .placement = PLACEMENT_OTHER_NODE,
                           .placement_label = "other-node",
                           .tests = {TEST_TCP_RR, TEST_TCP_STREAM, TEST_TCP_STREAM_MULTI},
                           .n_tests = 3};
    struct run_spec spec;
    char **argv;
    int found = 0;

    (void)state;
    assert_int_equal(parse(&o, &err, NULL), 0);
    assert_int_equal(run_profile_tests(&o, &g), 0); /* off by default */
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--profile", "UDP_RR,pod-to-pod/other-node/TCP_STREAM*", NULL),
                     0);
    assert_int_equal(o.n_profile_rows, 2);
    assert_int_equal(run_profile_tests(&o, &g),
                     (1u << TEST_TCP_STREAM) | (1u << TEST_TCP_STREAM_MULTI));
    g.placement_label = "same-node";
    assert_int_equal(run_profile_tests(&o, &g), 0);
    g.placement_label = "other-node";
    run_spec_init(&spec, &o, &g, g.tests, g.n_tests, 1);
    argv = agent_args_client(&spec, &(struct agent_args_opts){.host = "198.18.0.2", .port = 1});
    for (size_t i = 0; argv[i]; i++)
        if (strcmp(argv[i], "--profile") == 0) {
            assert_string_equal(argv[i + 1], "TCP_STREAM,TCP_STREAM_MULTI");
            found = 1;
        }
    assert_true(found);
    for (size_t i = 0; argv[i]; i++)
        free(argv[i]);
    free(argv);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--profile", "all", NULL), 0);
    assert_int_equal(run_profile_tests(&o, &g),
                     (1u << TEST_TCP_RR) | (1u << TEST_TCP_STREAM) | (1u << TEST_TCP_STREAM_MULTI));
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--profile", "*/*/TCP_RR", NULL), 0);
    assert_int_equal(run_profile_tests(&o, &g), 1u << TEST_TCP_RR);
    run_options_cleanup(&o);
    /* bad items: one line naming what is wrong */
    assert_int_not_equal(parse(&o, &err, "--profile", "TCP_FOO", NULL), 0);
    assert_non_null(strstr(kp_err_msg(&err), "--profile: 'TCP_FOO': unknown test 'TCP_FOO'"));
    run_options_cleanup(&o);
    assert_int_not_equal(parse(&o, &err, "--profile", "pod-to-moon/TCP_RR", NULL), 0);
    assert_non_null(strstr(kp_err_msg(&err), "unknown scenario"));
    run_options_cleanup(&o);
    assert_int_not_equal(parse(&o, &err, "--profile", "a/b/c/TCP_RR", NULL), 0);
    assert_non_null(strstr(kp_err_msg(&err), "is not [SCENARIO/[PLACEMENT/]]TEST"));
    run_options_cleanup(&o);
}

static void test_run_flags_output_forms(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, "-o", "json", NULL), 0);
    assert_int_equal(o.output, RUN_OUTPUT_JSON);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "-ocsv", NULL), 0);
    assert_int_equal(o.output, RUN_OUTPUT_CSV);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--output=md", "--output-dir", "out", "-vv", NULL), 0);
    assert_int_equal(o.output, RUN_OUTPUT_MARKDOWN);
    assert_string_equal(o.output_dir, "out");
    assert_int_equal(o.verbose, 2);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "-v", "--verbose", NULL), 0);
    assert_int_equal(o.verbose, 2);
    run_options_cleanup(&o);
}

static void test_run_flags_kubernetes_flags(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, "--kubeconfig", "/k", "--context", "prod", "-n", "perf",
                           "--host-namespace", "perf-host", "--image", "reg/kperf-agent:1",
                           "--image-pull-secret", "pull", "--image-pull-policy", "Always",
                           "--node-selector", "role=perf,zone=a", "--tolerations",
                           "dedicated=perf:NoSchedule,gpu,:NoExecute", "--nodes", "a,b", "--port",
                           "6000", "--external-server", "[2001:db8::1]:7000", "--keep",
                           "--cleanup-leftovers", "--all-nodes", "--parallel", "8", NULL),
                     0);
    assert_string_equal(o.kubeconfig, "/k");
    assert_string_equal(o.context, "prod");
    assert_string_equal(o.namespace_name, "perf");
    assert_string_equal(o.host_namespace_name, "perf-host");
    assert_string_equal(o.image, "reg/kperf-agent:1");
    assert_string_equal(o.image_pull_secret, "pull");
    assert_string_equal(o.image_pull_policy, "Always");
    assert_int_equal(o.n_node_selector, 2);
    assert_string_equal(o.node_selector[1].key, "zone");
    assert_string_equal(o.node_selector[1].value, "a");
    assert_int_equal(o.n_tolerations, 3);
    assert_string_equal(o.tolerations[0].key, "dedicated");
    assert_string_equal(o.tolerations[0].value, "perf");
    assert_string_equal(o.tolerations[0].effect, "NoSchedule");
    assert_string_equal(o.tolerations[1].key, "gpu");
    assert_null(o.tolerations[1].value); /* operator Exists */
    assert_null(o.tolerations[1].effect);
    assert_null(o.tolerations[2].key); /* every NoExecute taint */
    assert_string_equal(o.tolerations[2].effect, "NoExecute");
    assert_string_equal(o.node_a, "a");
    assert_string_equal(o.node_b, "b");
    assert_int_equal(o.port, 6000);
    assert_string_equal(o.external_host, "2001:db8::1");
    assert_int_equal(o.external_port, 7000);
    assert_true(o.keep && o.cleanup_leftovers && o.all_nodes);
    assert_int_equal(o.parallel, 8);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, NULL), 0);
    assert_int_equal(o.parallel, 4); /* the documented default */
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--parallel", "0", NULL), -1);
    assert_non_null(strstr(kp_err_msg(&err), "parallel"));
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--arch", "arm64", NULL), 0);
    assert_string_equal(o.arch, "arm64");
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--arch", "x86_64", NULL), -1);
    assert_non_null(strstr(kp_err_msg(&err), "--arch: 'x86_64' is not amd64, arm64, any or mixed"));
    run_options_cleanup(&o);

    assert_int_equal(parse(&o, &err, "--external-server", "ec2.example.com", "--nodes", "a",
                           "--namespace=x", NULL),
                     0);
    assert_string_equal(o.external_host, "ec2.example.com");
    assert_int_equal(o.external_port, 5201);
    assert_string_equal(o.node_a, "a");
    assert_null(o.node_b);
    assert_string_equal(o.namespace_name, "x");
    run_options_cleanup(&o);
}

/* --external-token-file: read at once by the agent's reader; needs an external server (or
 * --local, whose external host kperf starts); not a Kubernetes-only flag. */
static void test_run_flags_external_token_file(void **state)
{
    struct run_options o;
    struct kp_err err;
    char dir[] = "/tmp/kperf-test-ext-XXXXXX", tok[64], fifo[64];
    FILE *f;
    (void)state;

    assert_non_null(mkdtemp(dir));
    snprintf(tok, sizeof(tok), "%s/token", dir);
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    f = fopen(tok, "w");
    assert_non_null(f);
    fputs("s3cret\n", f);
    fclose(f);
    assert_int_equal(chmod(tok, 0600), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);

    assert_int_equal(parse(&o, &err, "--external-server", "198.51.100.7:7000",
                           "--external-token-file", tok, NULL),
                     0);
    assert_string_equal(o.external_token_file, tok);
    assert_int_equal(o.external_token_len, 6);
    assert_memory_equal(o.external_token, "s3cret", 6);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--local", "--external-token-file", tok, NULL), 0);
    assert_true(o.local);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--external-token-file", tok, NULL), -1);
    assert_non_null(strstr(kp_err_msg(&err), "--external-token-file needs --external-server"));
    run_options_cleanup(&o);
    assert_int_equal(
        parse(&o, &err, "--external-server", "198.51.100.7", "--external-token-file", fifo, NULL),
        -1); /* refused at once, never waited on */
    assert_non_null(strstr(kp_err_msg(&err), "--external-token-file: "));
    assert_non_null(strstr(kp_err_msg(&err), "FIFO"));
    assert_null(o.external_token);
    run_options_cleanup(&o);

    unlink(tok);
    unlink(fifo);
    rmdir(dir);
}

static void test_run_flags_local_flags(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, "--local", "--mtu", "9001", NULL), 0);
    assert_true(o.local);
    assert_int_equal(o.mtu, 9001);
    assert_int_equal(o.ip_family, RUN_IP_DEFAULT);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--local", "--ip-family", "ipv6", NULL), 0);
    assert_int_equal(o.ip_family, RUN_IPV6);
    run_options_cleanup(&o);
    /* on a cluster too; both is a value */
    assert_int_equal(parse(&o, &err, "--ip-family", "both", NULL), 0);
    assert_int_equal(o.ip_family, RUN_IP_BOTH);
    run_options_cleanup(&o);
    /* the conflist is read when the backend starts */
    assert_int_equal(
        parse(&o, &err, "--local", "--cni-conf", "b.conflist", "--cni-path", "/x:/y", NULL), 0);
    assert_string_equal(o.cni_conf, "b.conflist");
    assert_string_equal(o.cni_path, "/x:/y");
    run_options_cleanup(&o);
}

/* Each bad command line fails with one line naming the flag (or the argument). */
static void test_run_flags_netpol_sizes_sorted_once(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(parse(&o, &err, "--netpol-rules", "1000,0,100,100,1", NULL), 0);
    assert_int_equal(o.n_netpol_rules, 4);
    assert_int_equal(o.netpol_rules[0], 0);
    assert_int_equal(o.netpol_rules[1], 1);
    assert_int_equal(o.netpol_rules[2], 100);
    assert_int_equal(o.netpol_rules[3], 1000);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, NULL), 0);
    assert_int_equal(o.n_netpol_rules, 0); /* off unless asked */
    run_options_cleanup(&o);
}

/* --services LIST: sorted, a repeat dropped, the largest is `services`; one size stays one */
static void test_run_flags_services_sizes_sorted_once(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    assert_int_equal(
        parse(&o, &err, "--services", "5000,0,1000,1000", "--scenarios", "pod-to-service", NULL),
        0);
    assert_int_equal(o.n_services_sizes, 3);
    assert_int_equal(o.services_sizes[0], 0);
    assert_int_equal(o.services_sizes[1], 1000);
    assert_int_equal(o.services_sizes[2], 5000);
    assert_int_equal(o.services, 5000);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--services", "200", NULL), 0); /* today's one size */
    assert_int_equal(o.n_services_sizes, 1);
    assert_int_equal(o.services, 200);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, NULL), 0);
    assert_int_equal(o.n_services_sizes, 0); /* none unless asked */
    assert_int_equal(o.services, 0);
    run_options_cleanup(&o);
}

static void test_run_flags_usage_errors_name_the_flag(void **state)
{
    static const struct {
        const char *args[4];
        const char *want;
    } cases[] = {
        {{"--scenarios", "pod-to-moon"}, "pod-to-moon"},
        {{"--scenarios", ","}, "--scenarios"},
        {{"--tests", "TCP_RRR"}, "TCP_RRR"},
        {{"--duration", "ten"}, "--duration"},
        {{"--duration", "10ms"}, "--duration"},
        {{"--samples", "0"}, "--samples"},
        {{"--samples", "many"}, "--samples"},
        {{"--samples", "0"}, "--samples: '0' is not a whole number in [1, 100] or 'auto'"},
        {{"--streams", "1000"}, "--streams"},
        {{"--msg-size", "0"}, "--msg-size"},
        {{"--udp-rate", "fast"}, "--udp-rate"},
        {{"-o", "yaml"}, "yaml"},
        {{"--output-dir", ""}, "--output-dir"},
        {{"--mtu", "100", "--local"}, "--mtu"},
        {{"--mtu", "9001"}, "--mtu"},
        {{"--ip-family", "ipv5", "--local"}, "--ip-family: unknown family 'ipv5'"},
        {{"--cni-conf", "b.conflist"}, "--cni-conf and --cni-path apply to --local only"},
        {{"--local", "--cni-path", "/x"}, "--cni-path needs --cni-conf FILE"},
        {{"--local", "--cni-conf", ""}, "--cni-conf: empty"},
        {{"--local", "--kubeconfig", "k"}, "--kubeconfig"},
        {{"--local", "-n", "x"}, "--namespace"},
        {{"--nodes", "a,a"}, "--nodes"},
        {{"--nodes", "a,b,c"}, "--nodes"},
        {{"--nodes", "a", "--nodes-from", "r.json"}, "--nodes-from"},
        {{"--port", "70000"}, "--port"},
        {{"--external-server", "host:port"}, "--external-server"},
        {{"--image-pull-policy", "Sometimes"}, "--image-pull-policy"},
        {{"--node-selector", "novalue"}, "--node-selector"},
        {{"--tolerations", "a=b:Sometimes"}, "--tolerations"},
        {{"--netpol-rules", "ten"}, "--netpol-rules: 'ten' is not a whole number in [0, 10000]"},
        {{"--netpol-rules", "10001"}, "--netpol-rules"},
        {{"--netpol-rules", ","}, "--netpol-rules: empty list"},
        {{"--netpol-rules", "1,2,3,4,5,6,7,8,9"}, "--netpol-rules: at most 8 sizes"},
        {{"--netpol-rules", "100", "--all-nodes"}, "--netpol-rules cannot go with --all-nodes"},
        {{"--netpol-rules", "100", "--scenarios", "host-to-host"},
         "add pod-to-pod or pod-to-service"},
        {{"--services", "20001"}, "--services: '20001' is not a whole number in [0, 20000]"},
        {{"--services", "1,x"}, "--services: 'x' is not a whole number"},
        {{"--services", ","}, "--services: empty list"},
        {{"--services", "1,2,3,4,5,6,7,8,9"}, "--services: at most 8 sizes"},
        {{"--services", "0,20", "--netpol-rules", "10"},
         "--services with several sizes cannot go with --netpol-rules"},
        {{"--services", "0,20", "--all-nodes"},
         "--services with several sizes cannot go with "
         "--all-nodes"},
        {{"--services", "0,20"}, "add pod-to-service to --scenarios"},
        {{"--services", "0,20", "--local"}, "--services is a Kubernetes flag"},
        {{"--bogus"}, "--bogus"},
        {{"--local=yes"}, "--local"},
        {{"--duration"}, "--duration"},
        {{"pod-to-pod"}, "pod-to-pod"},
        {{"--interval", "5s", "--duration", "2s"}, "--interval"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct run_options o;
        struct kp_err err;
        int rc = parse(&o, &err, cases[i].args[0], cases[i].args[1], cases[i].args[2],
                       cases[i].args[3], NULL);
        if (rc != -1 || !strstr(kp_err_msg(&err), cases[i].want))
            fail_msg("case %zu (%s): rc %d, message '%s'", i, cases[i].args[0], rc,
                     kp_err_msg(&err));
        assert_null(strchr(kp_err_msg(&err), '\n'));
        run_options_cleanup(&o);
    }
}

/* Every usage error ends with the --help pointer; `--` ends the flags (kperf run takes none
 * after it). */
static void test_run_flags_errors_point_at_help(void **state)
{
    static const char *const hint = ". Run 'kperf run --help' for usage.";
    struct run_options o;
    struct kp_err err;
    const char *msg;

    (void)state;
    assert_int_equal(parse(&o, &err, "--bogus", NULL), -1);
    assert_string_equal(kp_err_msg(&err),
                        "unknown flag '--bogus'. Run 'kperf run --help' for usage.");
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--mtu", "9001", NULL), -1); /* run_options_validate's */
    msg = kp_err_msg(&err);
    assert_string_equal(msg + strlen(msg) - strlen(hint), hint);
    run_options_cleanup(&o);
    assert_int_equal(parse(&o, &err, "--", "--local", NULL), -1);
    assert_string_equal(kp_err_msg(&err), "unexpected argument '--local' (kperf run takes flags "
                                          "only). Run 'kperf run --help' for usage.");
    run_options_cleanup(&o);
}

static void test_run_flags_help_lists_every_flag(void **state)
{
    static const char *const names[] = {"--scenarios",
                                        "--tests",
                                        "--under-load",
                                        "--same-node",
                                        "--other-node",
                                        "--duration",
                                        "--samples",
                                        "--streams",
                                        "--msg-size",
                                        "--udp-rate",
                                        "--omit",
                                        "--interval",
                                        "--timeout",
                                        "-o, --output",
                                        "--output-dir",
                                        "-v, --verbose",
                                        "--local",
                                        "--mtu",
                                        "--kubeconfig",
                                        "--context",
                                        "-n, --namespace",
                                        "--image",
                                        "--image-pull-secret",
                                        "--image-pull-policy",
                                        "--node-selector",
                                        "--tolerations",
                                        "--nodes",
                                        "--nodes-from",
                                        "--port",
                                        "--external-server",
                                        "--keep",
                                        "--cleanup-leftovers",
                                        "--all-nodes",
                                        "Exit status",
                                        "130"};
    struct run_options o;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char *argv[] = {"run", "--local", "--help"};
    struct kp_err err = {{0}};

    (void)state;
    run_options_init(&o);
    assert_int_equal(run_flags_parse(&o, 3, argv, &err), 1);
    fflush(f);
    assert_int_equal(len, 0); /* the parser prints nothing: the caller prints the help */
    run_flags_help(f);
    fclose(f);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strstr(buf, names[i]))
            fail_msg("--help lacks %s", names[i]);
    free(buf);
    run_options_cleanup(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_flags_defaults),
        cmocka_unit_test(test_run_flags_external_token_file),
        cmocka_unit_test(test_run_flags_what_to_measure),
        cmocka_unit_test(test_run_flags_measurement_values),
        cmocka_unit_test(test_run_flags_profile_rows),
        cmocka_unit_test(test_run_flags_output_forms),
        cmocka_unit_test(test_run_flags_kubernetes_flags),
        cmocka_unit_test(test_run_flags_local_flags),
        cmocka_unit_test(test_run_flags_usage_errors_name_the_flag),
        cmocka_unit_test(test_run_flags_netpol_sizes_sorted_once),
        cmocka_unit_test(test_run_flags_services_sizes_sorted_once),
        cmocka_unit_test(test_run_flags_errors_point_at_help),
        cmocka_unit_test(test_run_flags_help_lists_every_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
