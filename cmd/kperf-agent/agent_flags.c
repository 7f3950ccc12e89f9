/* SPDX-License-Identifier: Apache-2.0 */
/* agent_flags.c - see agent_flags.h. Numeric flags go through one handler, set_num, and a row
 * of nums[] (field, unit, minimum, maximum, message); the rest have a handler each. */
#include "cmd/kperf-agent/agent_flags.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proto.h"
#include "agent/streampool.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/testkind.h"
#include "base/token.h"
#include "base/units.h"

static int verbosity = KP_LOG_WARN;

int agent_flags_verbosity(void)
{
    return verbosity;
}

/* --- numbers ------------------------------------------------------------------------------ */

enum num_unit {
    U_COUNT, /* a whole number */
    U_MS,    /* a duration (500ms, 10s, 2m), stored in milliseconds */
    U_SIZE,  /* a size (64, 1K, 1M), in bytes */
    U_RATE,  /* a rate (500M, 1G), in bit/s */
    U_ONE,   /* a flag without a value: stores 1 */
};

/* What a bad value is told. The parser's own messages: "'x' is not a whole number in [0, N]"
 * (counts), "duration 'x' out of range" (durations past their range), units.h's for a value it
 * cannot read. "--name must be in [MIN, MAX]", and text with "{}" standing for the value. */
enum num_msg {
    M_OWN,        /* the parser's message */
    M_IN_ANY,     /* "--name must be in [min, max]" for any bad value */
    M_IN_RANGE,   /* the parser's for an unreadable value, "must be in" out of range */
    M_TEXT_ANY,   /* text for any bad value */
    M_TEXT_RANGE, /* the parser's for an unreadable value, text out of range */
};

struct num_spec {
    const char *name; /* the flag's long name, for M_IN_* */
    enum num_unit unit;
    size_t offset, size; /* the target in the command's struct: a uint16/32/64 or int */
    uint64_t min, max;
    enum num_msg msg;
    const char *text; /* M_TEXT_*: the message, "{}" = the value */
};

#define FIELD(type, member) .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define SRV_F(member)       FIELD(struct server_cli, o.member)
#define CLI_F(member)       FIELD(struct client_cli, o.member)
#define PRB_F(member)       FIELD(struct probe_cli, o.member)

enum {
    N_SRV_PORT,
    N_SRV_MAX_DURATION,
    N_SRV_MAX_STREAMS,
    N_SRV_MAX_CONNS,
    N_SRV_MAX_CONNS_PER_ADDR,
    N_SRV_MAX_TESTS,
    N_SRV_IDLE,
    N_SRV_MAX_IDLE,
    N_SRV_HANDSHAKE,
    N_SRV_MAX_RATE,
    N_SRV_STREAM_THREADS,
    N_SRV_STREAM_POOL,
    N_CLI_DURATION,
    N_CLI_OMIT,
    N_CLI_SAMPLES,
    N_CLI_STREAMS,
    N_CLI_PARALLEL,
    N_CLI_MSG_SIZE,
    N_CLI_UDP_RATE,
    N_CLI_REVERSE,
    N_CLI_SERVER_FACTS,
    N_CLI_NO_COUNTERS,
    N_CLI_NO_PATH_MTU,
    N_CLI_CONNECT_TIMEOUT,
    N_CLI_CONNECT_RETRY,
    N_PRB_DURATION,
    N_PRB_RATE,
    N_PRB_CONNECT_EVERY,
    N_PRB_TIMEOUT,
    N_PRB_INTERVAL,
    N_PRB_STATUS,
    N_PRB_SESSION,
    N_PRB_CONNECT_TIMEOUT,
};

#define MS_MAX UINT32_MAX /* durations are 32-bit milliseconds on the wire */

static const struct num_spec nums[] = {
    [N_SRV_PORT] = {"port", U_COUNT, SRV_F(port), 0, 65535, M_OWN, NULL},
    [N_SRV_MAX_DURATION] = {"max-duration", U_MS, SRV_F(max_duration_ms), 1, MS_MAX, M_OWN, NULL},
    [N_SRV_MAX_STREAMS] = {"max-streams", U_COUNT, SRV_F(max_streams), 1, PROTO_MAX_STREAMS,
                           M_IN_ANY, NULL},
    [N_SRV_MAX_CONNS] = {"max-conns", U_COUNT, SRV_F(max_conns), 1, 1000000, M_IN_ANY, NULL},
    [N_SRV_MAX_CONNS_PER_ADDR] = {"max-conns-per-addr", U_COUNT, SRV_F(max_conns_per_addr), 1,
                                  1000000, M_IN_ANY, NULL},
    [N_SRV_MAX_TESTS] = {"max-tests", U_COUNT, SRV_F(max_tests), 1, 10000, M_IN_ANY, NULL},
    [N_SRV_IDLE] = {"idle-timeout", U_MS, SRV_F(idle_timeout_ms), 1, MS_MAX, M_OWN, NULL},
    [N_SRV_MAX_IDLE] = {"max-idle", U_MS, SRV_F(max_idle_ms), 1000, MS_MAX, M_OWN, NULL},
    [N_SRV_HANDSHAKE] = {"handshake-timeout", U_MS, SRV_F(handshake_timeout_ms), 1, MS_MAX, M_OWN,
                         NULL},
    [N_SRV_MAX_RATE] = {"max-rate", U_RATE, SRV_F(max_rate_bps), 0, UINT64_MAX, M_OWN, NULL},
    [N_SRV_STREAM_THREADS] = {"stream-threads", U_COUNT, SRV_F(stream_threads), 0, 4096, M_IN_ANY,
                              NULL},
    [N_SRV_STREAM_POOL] = {"stream-pool", U_COUNT, SRV_F(stream_pool), 0, STREAMPOOL_MAX_THREADS,
                           M_IN_ANY, NULL},
    [N_CLI_DURATION] = {"duration", U_MS, CLI_F(duration_ms), 1, PROTO_MAX_DURATION_MS, M_TEXT_ANY,
                        "--duration '{}' must be within (0, 24h]"},
    [N_CLI_OMIT] = {"omit", U_MS, CLI_F(omit_ms), 0, PROTO_MAX_DURATION_MS, M_TEXT_ANY,
                    "--omit '{}' must be within [0, 24h]"},
    [N_CLI_SAMPLES] = {"samples", U_COUNT, CLI_F(samples), 1, 1000, M_IN_ANY, NULL},
    [N_CLI_STREAMS] = {"streams", U_COUNT, CLI_F(streams), 1, PROTO_MAX_STREAMS, M_IN_ANY, NULL},
    [N_CLI_PARALLEL] = {"parallel", U_COUNT, CLI_F(parallel), 1, 128, M_IN_ANY, NULL},
    [N_CLI_MSG_SIZE] = {"msg-size", U_SIZE, CLI_F(msg_size), 1, PROTO_MAX_MSG_SIZE, M_IN_RANGE,
                        NULL},
    [N_CLI_UDP_RATE] = {"udp-rate", U_RATE, CLI_F(udp_rate_bps), 1000, PROTO_MAX_RATE_BPS,
                        M_TEXT_RANGE, "--udp-rate must be within [1K, 400G]"},
    [N_CLI_REVERSE] = {"reverse", U_ONE, CLI_F(reverse), 0, 1, M_OWN, NULL},
    [N_CLI_SERVER_FACTS] = {"server-facts", U_ONE, CLI_F(server_facts), 0, 1, M_OWN, NULL},
    [N_CLI_NO_COUNTERS] = {"no-counters", U_ONE, CLI_F(no_counters), 0, 1, M_OWN, NULL},
    [N_CLI_NO_PATH_MTU] = {"no-path-mtu", U_ONE, CLI_F(no_path_mtu), 0, 1, M_OWN, NULL},
    [N_CLI_CONNECT_TIMEOUT] = {"connect-timeout", U_MS, CLI_F(connect_timeout_ms), 1, MS_MAX, M_OWN,
                               NULL},
    [N_CLI_CONNECT_RETRY] = {"connect-retry", U_MS, CLI_F(connect_retry_ms), 0, MS_MAX, M_OWN,
                             NULL},
    [N_PRB_DURATION] = {"duration", U_MS, PRB_F(duration_ms), 1, MS_MAX, M_OWN, NULL},
    [N_PRB_RATE] = {"rate", U_COUNT, PRB_F(rate), 1, 10000, M_TEXT_ANY,
                    "--rate '{}': want 1..10000 probes per second"},
    [N_PRB_CONNECT_EVERY] = {"connect-every", U_MS, PRB_F(connect_every_ms), 1, MS_MAX, M_OWN,
                             NULL},
    [N_PRB_TIMEOUT] = {"timeout", U_MS, PRB_F(timeout_ms), 1, MS_MAX, M_OWN, NULL},
    [N_PRB_INTERVAL] = {"interval", U_MS, PRB_F(interval_ms), 1, MS_MAX, M_OWN, NULL},
    [N_PRB_STATUS] = {"status", U_MS, PRB_F(status_ms), 100, MS_MAX, M_OWN, NULL},
    [N_PRB_SESSION] = {"session", U_MS, PRB_F(session_ms), 5000, MS_MAX, M_OWN, NULL},
    [N_PRB_CONNECT_TIMEOUT] = {"connect-timeout", U_MS, PRB_F(connect_timeout_ms), 1, MS_MAX, M_OWN,
                               NULL},
};

/* Reads a whole number of up to 20 digits; -1 (with the message of M_OWN) when it is not one
 * or exceeds max. */
static int parse_count(const char *val, uint64_t max, uint64_t *out, struct kp_err *err)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(val, &end, 10);
    if (errno || end == val || *end || val[0] == '-' || v > max)
        return kp_err_set(err, "'%s' is not a whole number in [0, %llu]", val,
                          (unsigned long long)max);
    *out = v;
    return 0;
}

/* Reads val in n's unit. Returns 0, or -1 with the parser's message. */
static int parse_num(const struct num_spec *n, const char *val, uint64_t *out, struct kp_err *err)
{
    switch (n->unit) {
    case U_COUNT:
        return parse_count(val, n->max, out, err);
    case U_MS:
        return units_parse_duration_ms(val, out, err);
    case U_SIZE:
        return units_parse_size(val, out, err);
    case U_RATE:
        return units_parse_rate_bps(val, out, err);
    case U_ONE:
        break;
    }
    *out = 1;
    return 0;
}

/* The message of a bad value: range tells whether it was read (and is out of range). */
static int num_error(const struct num_spec *n, const char *val, bool range, struct kp_err *err)
{
    const char *at;

    if (n->msg == M_IN_ANY || (n->msg == M_IN_RANGE && range))
        return kp_err_set(err, "--%s must be in [%llu, %llu]", n->name, (unsigned long long)n->min,
                          (unsigned long long)n->max);
    if (n->msg == M_TEXT_ANY || (n->msg == M_TEXT_RANGE && range)) {
        at = strstr(n->text, "{}");
        if (!at)
            return kp_err_set(err, "%s", n->text);
        return kp_err_set(err, "%.*s%s%s", (int)(at - n->text), n->text, val, at + 2);
    }
    if (!range)
        return -1; /* the parser's message is in err */
    if (n->unit == U_MS)
        return kp_err_set(err, "duration '%s' out of range", val);
    return kp_err_set(err, "'%s' is not a whole number in [%llu, %llu]", val,
                      (unsigned long long)n->min, (unsigned long long)n->max);
}

static void store(void *field, size_t size, uint64_t v)
{
    if (size == sizeof(uint16_t))
        *(uint16_t *)field = (uint16_t)v;
    else if (size == sizeof(uint32_t))
        *(uint32_t *)field = (uint32_t)v; /* also unsigned and int: max keeps v in range */
    else
        *(uint64_t *)field = v;
}

/* Every numeric flag: reads the value in its row's unit, checks [min, max], stores it. */
static int set_num(void *ctx, const struct flag *f, const char *val, struct kp_err *err)
{
    const struct num_spec *n = &nums[f->id];
    uint64_t v = 0;

    if (parse_num(n, val, &v, err) != 0)
        return num_error(n, val, false, err);
    if (v < n->min || v > n->max)
        return num_error(n, val, true, err);
    store((char *)ctx + n->offset, n->size, v);
    return 0;
}

_Static_assert(sizeof(unsigned) == sizeof(uint32_t) && sizeof(int) == sizeof(uint32_t),
               "store() writes unsigned and int fields as 32 bits");

/* --- flags that are more than a number ---------------------------------------------------- */

static int set_verbose(void *o, const struct flag *f, const char *val, struct kp_err *err)
{
    (void)o, (void)f, (void)val, (void)err;
    if (verbosity < KP_LOG_TRACE)
        verbosity++;
    return 0;
}

/* Reads the per-run secret exactly (base/token.h: one trailing newline removed, 1..4096 bytes,
 * no NUL, regular files only) into *token (ours: kp_free_secret), replacing an earlier one. */
static int read_token(const char *path, char **token, const char **o_token, size_t *o_len,
                      struct kp_err *err)
{
    size_t len = 0;

    kp_free_secret(*token);
    *token = NULL;
    *o_token = NULL;
    *o_len = 0;
    if (token_read(path, token, &len, err) != 0)
        return -1;
    *o_token = *token; /* NUL-free, so strlen == len */
    *o_len = len;
    return 0;
}

static int srv_token(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct server_cli *c = p;
    (void)f;
    return read_token(v, &c->token, &c->o.token, &c->o.token_len, e);
}

static int cli_token(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct client_cli *c = p;
    (void)f;
    return read_token(v, &c->token, &c->o.token, &c->o.token_len, e);
}

static int cli_server(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct client_cli *c = p;
    const char *colon = strrchr(v, ':');
    uint64_t port = c->o.port;
    (void)f;

    free(c->host);
    c->host = NULL;
    if (v[0] == '[') { /* [v6]:port or [v6] */
        const char *close = strchr(v, ']');
        if (!close)
            return kp_err_set(e, "bad --server '%s'", v);
        c->host = kp_xstrndup(v + 1, (size_t)(close - v - 1));
        if (close[1] == ':' && parse_count(close + 2, 65535, &port, e) != 0)
            return -1;
    } else if (colon && strchr(v, ':') == colon) { /* host:port */
        c->host = kp_xstrndup(v, (size_t)(colon - v));
        if (parse_count(colon + 1, 65535, &port, e) != 0)
            return kp_err_prefix(e, "port of --server");
    } else {
        c->host = kp_xstrdup(v);
    }
    if (!c->host[0] || port == 0)
        return kp_err_set(e, "bad --server '%s'", v);
    c->o.host = c->host;
    c->o.port = (uint16_t)port;
    c->have_server = 1;
    return 0;
}

/* --profile LIST: the tests whose samples carry the kernel's profile (agent/kprof.h). */
static int cli_profile(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct client_cli *c = p;
    char *copy = kp_xstrdup(v), *save = NULL;
    int rc = 0;
    (void)f;

    c->o.profile_tests = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "all") == 0) {
            c->o.profile_tests = UINT32_MAX;
        } else if (!proto_test_from_name(t)) {
            rc = kp_err_set(e, "--profile: unknown test '%s' (a comma list of test names, or all)",
                            t);
            break;
        } else {
            c->o.profile_tests |= 1u << proto_test_from_name(t);
        }
    }
    free(copy);
    if (rc == 0 && c->o.profile_tests == 0)
        rc = kp_err_set(e, "--profile is empty: name the tests to profile, or all");
    return rc;
}

static int cli_tests(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct client_cli *c = p;
    char *copy = kp_xstrdup(v), *save = NULL;
    int rc = 0;
    (void)f;

    c->o.ntests = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "all") == 0) {
            for (uint8_t i = PROTO_TCP_RR; i <= PROTO_UDP_STREAM && c->o.ntests < CLIENT_MAX_TESTS;
                 i++)
                c->o.tests[c->o.ntests++] = i;
            continue;
        }
        if (!proto_test_from_name(t)) {
            rc = kp_err_set(e,
                            "unknown test '%s' (TCP_RR, TCP_CRR, TCP_STREAM, TCP_STREAM_MULTI, "
                            "UDP_RR, UDP_STREAM, TCP_RR_LOADED or all)",
                            t);
            break;
        }
        if (c->o.ntests == CLIENT_MAX_TESTS) {
            rc = kp_err_set(e, "more than %d tests", CLIENT_MAX_TESTS);
            break;
        }
        c->o.tests[c->o.ntests++] = proto_test_from_name(t);
    }
    free(copy);
    if (rc == 0 && c->o.ntests == 0)
        rc = kp_err_set(e, "--tests is empty");
    return rc;
}

/* --interval: 0 (off) or at least 100 ms, so not a plain [min, max] row. */
static int cli_interval(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t ms = 0;
    (void)f;
    if (units_parse_duration_ms(v, &ms, e) != 0)
        return -1;
    if (ms > MS_MAX)
        return kp_err_set(e, "duration '%s' out of range", v);
    if (ms != 0 && ms < 100)
        return kp_err_set(e, "--interval must be 0 (off) or at least 100ms");
    ((struct client_cli *)p)->o.interval_ms = ms;
    return 0;
}

/* --stream-threads of the client: "auto" or a count. */
static int cli_stream_threads(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (strcmp(v, "auto") == 0) {
        ((struct client_cli *)p)->o.stream_threads = CLIENT_STREAM_THREADS_AUTO;
        return 0;
    }
    if (parse_count(v, PROTO_MAX_STREAMS, &n, e) != 0)
        return kp_err_set(e, "--stream-threads must be auto or in [0, %u]", PROTO_MAX_STREAMS);
    ((struct client_cli *)p)->o.stream_threads = (int)n;
    return 0;
}

static int prb_server(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct probe_cli *c = p;
    if (cli_server(&c->srv, f, v, e) != 0)
        return -1;
    c->o.host = c->srv.o.host;
    c->o.port = c->srv.o.port;
    return 0;
}

static int prb_token(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct probe_cli *c = p;
    if (cli_token(&c->srv, f, v, e) != 0)
        return -1;
    c->o.token = c->srv.o.token;
    c->o.token_len = c->srv.o.token_len;
    return 0;
}

static int prb_kinds(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct probe_cli *c = p;
    char *list = kp_xstrdup(v), *save = NULL;
    (void)f;
    c->o.udp = c->o.tcp = c->o.connect = false;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "udp") == 0)
            c->o.udp = true;
        else if (strcmp(t, "tcp") == 0)
            c->o.tcp = true;
        else if (strcmp(t, "connect") == 0)
            c->o.connect = true;
        else {
            kp_err_set(e, "--kinds: unknown kind '%s' (udp, tcp, connect)", t);
            free(list);
            return -1;
        }
    }
    free(list);
    if (!c->o.udp && !c->o.tcp && !c->o.connect)
        return kp_err_set(e, "--kinds: name at least one of udp, tcp, connect");
    return 0;
}

/* --- the tables --------------------------------------------------------------------------- */

/* A row with a handler, and a numeric row (its id names its nums[] entry). */
#define CALL(grp, nm, metavar, handler, text)                                                      \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .group = grp, .fn = handler                      \
    }
#define NUM(grp, nm, metavar, num, text)                                                           \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .group = grp, .fn = set_num, .id = num           \
    }
#define VERBOSE(grp)                                                                               \
    {                                                                                              \
        .short_name = 'v', .help = "more logging (repeat for debug)", .group = grp,                \
        .fn = set_verbose                                                                          \
    }

const struct flag agent_server_flags[] = {
    NUM(G_SERVER, "port", "N", N_SRV_PORT,
        "TCP and UDP port (default " TESTKIND_DEFAULT_PORT_TEXT "; 0 = any free port)"),
    {.name = "bind",
     .arg = "ADDR",
     .help = "address to listen on (default :: for IPv6 and IPv4, 0.0.0.0 without IPv6)",
     .group = G_SERVER,
     .kind = FLAG_STRING,
     .offset = offsetof(struct server_cli, o.bind_addr)},
    CALL(G_SERVER, "token-file", "F", srv_token,
         "require clients to prove they know the token in F"),
    NUM(G_SERVER, "max-duration", "D", N_SRV_MAX_DURATION,
        "longest test accepted, warm-up included (10m)"),
    NUM(G_SERVER, "max-streams", "N", N_SRV_MAX_STREAMS, "most parallel streams per test (128)"),
    NUM(G_SERVER, "max-conns", "N", N_SRV_MAX_CONNS, "most concurrent TCP connections (1024)"),
    NUM(G_SERVER, "max-conns-per-addr", "N", N_SRV_MAX_CONNS_PER_ADDR,
        "most concurrent TCP connections from one address (IPv6: one /64) (256)"),
    NUM(G_SERVER, "max-tests", "N", N_SRV_MAX_TESTS,
        "most concurrent tests; more are refused busy (16)"),
    NUM(G_SERVER, "idle-timeout", "D", N_SRV_IDLE,
        "drop a control connection idle this long (30s)"),
    NUM(G_SERVER, "max-idle", "D", N_SRV_MAX_IDLE,
        "stop listening after D without a test (its run is gone); the process stays, idle, "
        "until stopped (default: never)"),
    NUM(G_SERVER, "handshake-timeout", "D", N_SRV_HANDSHAKE, "time to finish the handshake (2s)"),
    NUM(G_SERVER, "max-rate", "R", N_SRV_MAX_RATE, "highest UDP_STREAM rate accepted (10G)"),
    NUM(G_SERVER, "stream-threads", "N", N_SRV_STREAM_THREADS,
        "most stream connections on threads of their own, over all tests; more share the "
        "event loop (128)"),
    NUM(G_SERVER, "stream-pool", "T", N_SRV_STREAM_POOL,
        "those stream connections share T epoll threads instead of a thread each (0: off)"),
    {.name = "counters-netns",
     .arg = "PATH",
     .help = "read the kernel and NIC counters in this network namespace (/run/netns/NAME; "
             "default: the server's own)",
     .group = G_SERVER,
     .kind = FLAG_STRING,
     .offset = offsetof(struct server_cli, o.counters_netns)},
    VERBOSE(G_SERVER),
};
const size_t agent_server_nflags = sizeof(agent_server_flags) / sizeof(agent_server_flags[0]);

const struct flag agent_client_flags[] = {
    CALL(G_CLIENT, "server", "HOST[:PORT]", cli_server,
         "the kperf-agent server (port " TESTKIND_DEFAULT_PORT_TEXT " by default)"),
    CALL(G_CLIENT, "tests", "LIST", cli_tests,
         "comma list: TCP_RR,TCP_CRR,TCP_STREAM,TCP_STREAM_MULTI,UDP_RR,UDP_STREAM or all; "
         "TCP_RR_LOADED: TCP_RR while a TCP_STREAM_MULTI fills the path"),
    NUM(G_CLIENT, "duration", "D", N_CLI_DURATION, "measured time per test and sample (10s)"),
    NUM(G_CLIENT, "omit", "D", N_CLI_OMIT, "warm-up before each measurement, discarded (0s)"),
    CALL(G_CLIENT, "interval", "D", cli_interval, "record a per-interval series, e.g. 1s (off)"),
    NUM(G_CLIENT, "samples", "N", N_CLI_SAMPLES, "repetitions of each test (1)"),
    NUM(G_CLIENT, "streams", "N", N_CLI_STREAMS, "parallel connections of TCP_STREAM_MULTI (4)"),
    NUM(G_CLIENT, "parallel", "N", N_CLI_PARALLEL,
        "TCP_CRR: N concurrent clients; a failed connect is counted (conn_errors), not fatal"),
    CALL(G_CLIENT, "stream-threads", "T", cli_stream_threads,
         "TCP stream tests: T threads share the streams, each an epoll loop; auto: one per "
         "usable CPU, at most one per stream; 0: a blocking thread per stream (default: 0, or "
         "half the CPUs when the server shares this kernel and streams <= CPUs (64K writes) or "
         "streams > 16 per CPU)"),
    NUM(G_CLIENT, "msg-size", "N", N_CLI_MSG_SIZE,
        "request/write size (default: 1 for TCP RR/CRR, 24 for UDP_RR, 128K TCP, 1472 UDP)"),
    NUM(G_CLIENT, "udp-rate", "R", N_CLI_UDP_RATE, "UDP_STREAM send rate in bit/s (1G)"),
    NUM(G_CLIENT, "reverse", NULL, N_CLI_REVERSE,
        "stream tests: the server sends, the client receives"),
    CALL(G_CLIENT, "token-file", "F", cli_token, "file holding the server's token"),
    NUM(G_CLIENT, "server-facts", NULL, N_CLI_SERVER_FACTS,
        "ask the server for its host's facts (kernel, CPUs, NIC): \"server_facts\""),
    NUM(G_CLIENT, "connect-timeout", "D", N_CLI_CONNECT_TIMEOUT, "give up connecting after D (5s)"),
    NUM(G_CLIENT, "connect-retry", "D", N_CLI_CONNECT_RETRY,
        "try a refused connection again for D (3s; a Service not yet programmed)"),
    NUM(G_CLIENT, "no-counters", NULL, N_CLI_NO_COUNTERS,
        "read no kernel and NIC counters around the measurements, on either end"),
    NUM(G_CLIENT, "no-path-mtu", NULL, N_CLI_NO_PATH_MTU,
        "skip the path-MTU probe after the first sample (mtu.path, mtu.verdict)"),
    CALL(G_CLIENT, "profile", "LIST", cli_profile,
         "sample the kernel's CPU time during these tests' measurements (comma list of test "
         "names, or all): the samples' \"profile\"; needs CAP_PERFMON or CAP_SYS_ADMIN "
         "(docs/profile.md)"),
    {.name = "counters-netns",
     .arg = "PATH",
     .help = "read our kernel and NIC counters in this network namespace (/run/netns/NAME; "
             "default: our own)",
     .group = G_CLIENT,
     .kind = FLAG_STRING,
     .offset = offsetof(struct client_cli, o.counters_netns)},
    {.name = "json",
     .help = "print the kperf.result/v1 JSON document",
     .group = G_CLIENT,
     .kind = FLAG_BOOL,
     .offset = offsetof(struct client_cli, json)},
    VERBOSE(G_CLIENT),
};
const size_t agent_client_nflags = sizeof(agent_client_flags) / sizeof(agent_client_flags[0]);

const struct flag agent_probe_flags[] = {
    CALL(G_PROBE, "server", "HOST[:PORT]", prb_server,
         "the kperf-agent server (port " TESTKIND_DEFAULT_PORT_TEXT " by default)"),
    CALL(G_PROBE, "token-file", "F", prb_token, "file holding the server's token"),
    NUM(G_PROBE, "duration", "D", N_PRB_DURATION, "stop after D (default: at SIGTERM or SIGINT)"),
    NUM(G_PROBE, "rate", "N", N_PRB_RATE,
        "UDP and TCP request/response probes per second, each (100)"),
    NUM(G_PROBE, "connect-every", "D", N_PRB_CONNECT_EVERY,
        "a fresh TCP connect this often (100ms)"),
    NUM(G_PROBE, "timeout", "D", N_PRB_TIMEOUT, "an answer later than D is a loss (200ms)"),
    NUM(G_PROBE, "interval", "D", N_PRB_INTERVAL,
        "losses spanning more than D are an outage (100ms)"),
    CALL(G_PROBE, "kinds", "LIST", prb_kinds, "comma list of udp, tcp, connect (all)"),
    {.name = "output",
     .short_name = 'o',
     .arg = "FILE",
     .help = "write the document to FILE (atomically) instead of stdout",
     .group = G_PROBE,
     .kind = FLAG_STRING,
     .offset = offsetof(struct probe_cli, output)},
    NUM(G_PROBE, "status", "D", N_PRB_STATUS,
        "a status line on stderr every D (off): per kind ok|lossy|down, sent, lost"),
    NUM(G_PROBE, "session", "D", N_PRB_SESSION,
        "re-open server sessions this often (10m: its cap)"),
    NUM(G_PROBE, "connect-timeout", "D", N_PRB_CONNECT_TIMEOUT,
        "connect and handshake of a session (1s)"),
    VERBOSE(G_PROBE),
};
const size_t agent_probe_nflags = sizeof(agent_probe_flags) / sizeof(agent_probe_flags[0]);
