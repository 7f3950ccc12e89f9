/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_flags.c - the flag tables of kperf-agent (cmd/kperf-agent/agent_flags.c): a
 * numeric row stores its value in its own field, of its own width, without touching the
 * neighbours; the bounds of each row hold at both ends; a bad value gets the message of its row
 * (the parser's, "must be in [min, max]" or the row's text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_err.h"
#include "base/kp_log.h"
#include "cmd/kperf-agent/agent_flags.h"

/* Parses "cmd a1 a2 ..." (NULL-terminated) through table into ctx. 0, or -1 with err. */
static int parse(const char *name, const struct flag *table, size_t n, void *ctx,
                 const char *const *args, struct kp_err *err)
{
    struct flags_cmd cmd = {.name = name, .tables = {{table, n, ctx}}};
    char *argv[32];
    int argc = 0;

    argv[argc++] = (char *)name;
    while (*args && argc < 31)
        argv[argc++] = (char *)*args++;
    argv[argc] = NULL;
    kp_err_clear(err);
    return flags_parse(&cmd, argc, argv, NULL, err);
}

static int server(struct server_cli *c, const char *const *args, struct kp_err *err)
{
    memset(c, 0, sizeof(*c));
    server_opts_default(&c->o);
    return parse("kperf-agent server", agent_server_flags, agent_server_nflags, c, args, err);
}

static int client(struct client_cli *c, const char *const *args, struct kp_err *err)
{
    memset(c, 0, sizeof(*c));
    client_opts_default(&c->o);
    return parse("kperf-agent client", agent_client_flags, agent_client_nflags, c, args, err);
}

static int probe(struct probe_cli *c, const char *const *args, struct kp_err *err)
{
    memset(c, 0, sizeof(*c));
    probe_opts_default(&c->o);
    return parse("kperf-agent probe", agent_probe_flags, agent_probe_nflags, c, args, err);
}

/* err starts with want. */
static void assert_msg(const struct kp_err *err, const char *want)
{
    if (strncmp(kp_err_msg(err), want, strlen(want)) != 0)
        fail_msg("message \"%s\", want it to start with \"%s\"", kp_err_msg(err), want);
}

static void test_agent_flags_server_numbers_land_in_their_fields(void **state)
{
    const char *args[] = {"--port",         "0",  "--max-streams", "4", "--max-rate", "20G",
                          "--max-duration", "5s", "--stream-pool", "3", NULL};
    struct server_cli c;
    struct kp_err err;
    (void)state;

    assert_int_equal(server(&c, args, &err), 0);
    assert_int_equal(c.o.port, 0);
    assert_int_equal(c.o.max_streams, 4);
    assert_int_equal(c.o.max_rate_bps, 20ull * 1000 * 1000 * 1000);
    assert_int_equal(c.o.max_duration_ms, 5000);
    assert_int_equal(c.o.stream_pool, 3);
    /* the neighbours keep their defaults */
    assert_int_equal(c.o.max_conns, SERVER_DEFAULT_MAX_CONNS);
    assert_int_equal(c.o.max_tests, SERVER_DEFAULT_MAX_TESTS);
    assert_int_equal(c.o.idle_timeout_ms, SERVER_DEFAULT_IDLE_TIMEOUT_MS);
}

static void test_agent_flags_server_bounds_and_messages(void **state)
{
    struct server_cli c;
    struct kp_err err;
    (void)state;

    assert_int_equal(server(&c, (const char *[]){"--max-streams", "128", NULL}, &err), 0);
    assert_int_equal(c.o.max_streams, 128);
    assert_int_equal(server(&c, (const char *[]){"--max-streams", "129", NULL}, &err), -1);
    assert_msg(&err, "--max-streams must be in [1, 128]. Run 'kperf-agent server --help'");
    assert_int_equal(server(&c, (const char *[]){"--max-conns", "0", NULL}, &err), -1);
    assert_msg(&err, "--max-conns must be in [1, 1000000]");
    assert_int_equal(server(&c, (const char *[]){"--port", "65535", NULL}, &err), 0);
    assert_int_equal(c.o.port, 65535);
    assert_int_equal(server(&c, (const char *[]){"--port", "65536", NULL}, &err), -1);
    assert_msg(&err, "--port: '65536' is not a whole number in [0, 65535]");
    assert_int_equal(server(&c, (const char *[]){"--idle-timeout", "0", NULL}, &err), -1);
    assert_msg(&err, "--idle-timeout: duration '0' out of range");
    /* --max-idle: off unless given, at least a second (the server checks once a second) */
    assert_int_equal(server(&c, (const char *[]){NULL}, &err), 0);
    assert_int_equal(c.o.max_idle_ms, 0);
    assert_int_equal(server(&c, (const char *[]){"--max-idle", "270000ms", NULL}, &err), 0);
    assert_int_equal(c.o.max_idle_ms, 270000);
    assert_int_equal(server(&c, (const char *[]){"--max-idle", "500ms", NULL}, &err), -1);
    assert_msg(&err, "--max-idle: duration '500ms' out of range");
}

static void test_agent_flags_client_numbers_and_switches(void **state)
{
    const char *args[] = {"--duration", "24h",        "--omit", "0",         "--udp-rate",
                          "1K",         "--msg-size", "64K",    "--reverse", "--server-facts",
                          NULL};
    struct client_cli c;
    struct kp_err err;
    (void)state;

    assert_int_equal(client(&c, args, &err), 0);
    assert_int_equal(c.o.duration_ms, 24ull * 3600 * 1000);
    assert_int_equal(c.o.omit_ms, 0);
    assert_int_equal(c.o.udp_rate_bps, 1000);
    assert_int_equal(c.o.msg_size, 64 * 1024);
    assert_int_equal(c.o.reverse, 1);
    assert_int_equal(c.o.server_facts, 1);
    assert_int_equal(c.o.streams, 4); /* untouched default */
}

static void test_agent_flags_client_messages(void **state)
{
    struct client_cli c;
    struct kp_err err;
    (void)state;

    assert_int_equal(client(&c, (const char *[]){"--duration", "25h", NULL}, &err), -1);
    assert_msg(&err, "--duration '25h' must be within (0, 24h]");
    assert_int_equal(client(&c, (const char *[]){"--duration", "banana", NULL}, &err), -1);
    assert_msg(&err, "--duration 'banana' must be within (0, 24h]");
    assert_int_equal(client(&c, (const char *[]){"--udp-rate", "999", NULL}, &err), -1);
    assert_msg(&err, "--udp-rate must be within [1K, 400G]");
    assert_int_equal(client(&c, (const char *[]){"--msg-size", "2M", NULL}, &err), -1);
    assert_msg(&err, "--msg-size must be in [1, 1048576]");
    assert_int_equal(client(&c, (const char *[]){"--samples", "1001", NULL}, &err), -1);
    assert_msg(&err, "--samples must be in [1, 1000]");
    assert_int_equal(client(&c, (const char *[]){"--interval", "50ms", NULL}, &err), -1);
    assert_msg(&err, "--interval must be 0 (off) or at least 100ms");
}

static void test_agent_flags_probe_minimums(void **state)
{
    struct probe_cli c;
    struct kp_err err;
    (void)state;

    assert_int_equal(
        probe(&c, (const char *[]){"--session", "5s", "--status", "100ms", "--rate", "10000", NULL},
              &err),
        0);
    assert_int_equal(c.o.session_ms, 5000);
    assert_int_equal(c.o.status_ms, 100);
    assert_int_equal(c.o.rate, 10000);
    assert_int_equal(probe(&c, (const char *[]){"--session", "4999ms", NULL}, &err), -1);
    assert_msg(&err, "--session: duration '4999ms' out of range");
    assert_int_equal(probe(&c, (const char *[]){"--rate", "0", NULL}, &err), -1);
    assert_msg(&err, "--rate '0': want 1..10000 probes per second");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent_flags_server_numbers_land_in_their_fields),
        cmocka_unit_test(test_agent_flags_server_bounds_and_messages),
        cmocka_unit_test(test_agent_flags_client_numbers_and_switches),
        cmocka_unit_test(test_agent_flags_client_messages),
        cmocka_unit_test(test_agent_flags_probe_minimums),
    };
    kp_log_set_level(KP_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
