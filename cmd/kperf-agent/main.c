/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the kperf-agent command: `server` and `client`, each with a table of flags
 * (base/flags.h) and one small handler per flag. Prints results (stdout) and errors (stderr); picks
 * the exit code: 0 ok, 1 a test or the server failed, 2 usage. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/client.h"
#include "agent/nicinfo.h"
#include "agent/probe.h"
#include "agent/proto.h"
#include "agent/server.h"
#include "agent/streampool.h"
#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/result.h"
#include "base/safefile.h"
#include "base/testkind.h"
#include "base/token.h"
#include "base/units.h"

enum { G_SERVER, G_CLIENT, G_PROBE }; /* the flag groups of --help */

static int verbosity = KP_LOG_WARN;

/* Reads the per-run secret exactly (base/token.h: one trailing newline removed, 1..4096
 * bytes, no NUL, regular files only). Caller frees with kp_free_secret. */
static char *read_token(const char *path, struct kp_err *err)
{
    char *buf = NULL;
    size_t len = 0;

    if (token_read(path, &buf, &len, err) != 0)
        return NULL;
    return buf; /* NUL-free, so strlen(buf) == len */
}

static int parse_u32(const char *val, uint64_t max, uint64_t *out, struct kp_err *err)
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

static int ms_u32(const char *val, uint64_t min_ms, uint32_t *out, struct kp_err *err)
{
    uint64_t ms;
    if (units_parse_duration_ms(val, &ms, err) != 0)
        return -1;
    if (ms < min_ms || ms > UINT32_MAX)
        return kp_err_set(err, "duration '%s' out of range", val);
    *out = (uint32_t)ms;
    return 0;
}

static int set_verbose(void *o, const struct flag *f, const char *val, struct kp_err *err)
{
    (void)o, (void)f, (void)val, (void)err;
    if (verbosity < KP_LOG_TRACE)
        verbosity++;
    return 0;
}

/* --- server flags ------------------------------------------------------------------------- */

struct server_cli {
    struct server_opts o;
    char *token; /* ours: kp_free_secret */
};

static int srv_port(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 65535, &n, e) != 0)
        return -1;
    ((struct server_cli *)p)->o.port = (uint16_t)n;
    return 0;
}

static int srv_token(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct server_cli *c = p;
    (void)f;
    kp_free_secret(c->token);
    c->token = read_token(v, e);
    if (!c->token)
        return -1;
    c->o.token = c->token;
    c->o.token_len = strlen(c->token);
    return 0;
}

static int srv_max_duration(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return ms_u32(v, 1, &((struct server_cli *)p)->o.max_duration_ms, e);
}

static int srv_max_streams(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, PROTO_MAX_STREAMS, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--max-streams must be in [1, %u]", PROTO_MAX_STREAMS);
    ((struct server_cli *)p)->o.max_streams = (uint16_t)n;
    return 0;
}

static int srv_max_conns(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 1000000, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--max-conns must be in [1, 1000000]");
    ((struct server_cli *)p)->o.max_conns = (unsigned)n;
    return 0;
}

static int srv_max_conns_per_addr(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 1000000, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--max-conns-per-addr must be in [1, 1000000]");
    ((struct server_cli *)p)->o.max_conns_per_addr = (unsigned)n;
    return 0;
}

static int srv_stream_pool(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, STREAMPOOL_MAX_THREADS, &n, e) != 0)
        return kp_err_set(e, "--stream-pool must be in [0, %u]", STREAMPOOL_MAX_THREADS);
    ((struct server_cli *)p)->o.stream_pool = (unsigned)n;
    return 0;
}

static int srv_stream_threads(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 4096, &n, e) != 0)
        return kp_err_set(e, "--stream-threads must be in [0, 4096]");
    ((struct server_cli *)p)->o.stream_threads = (unsigned)n;
    return 0;
}

static int srv_max_tests(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 10000, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--max-tests must be in [1, 10000]");
    ((struct server_cli *)p)->o.max_tests = (unsigned)n;
    return 0;
}

static int srv_idle(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return ms_u32(v, 1, &((struct server_cli *)p)->o.idle_timeout_ms, e);
}

static int srv_handshake(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return ms_u32(v, 1, &((struct server_cli *)p)->o.handshake_timeout_ms, e);
}

static int srv_max_rate(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return units_parse_rate_bps(v, &((struct server_cli *)p)->o.max_rate_bps, e);
}

#define SRV(nm, metavar, handler, text)                                                            \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .group = G_SERVER, .fn = handler                 \
    }

static const struct flag server_flags[] = {
    SRV("port", "N", srv_port,
        "TCP and UDP port (default " TESTKIND_DEFAULT_PORT_TEXT "; 0 = any free port)"),
    {.name = "bind",
     .arg = "ADDR",
     .help = "address to listen on (default :: for IPv6 and IPv4, 0.0.0.0 without IPv6)",
     .group = G_SERVER,
     .kind = FLAG_STRING,
     .offset = offsetof(struct server_cli, o.bind_addr)},
    SRV("token-file", "F", srv_token, "require clients to prove they know the token in F"),
    SRV("max-duration", "D", srv_max_duration, "longest test accepted, warm-up included (10m)"),
    SRV("max-streams", "N", srv_max_streams, "most parallel streams per test (128)"),
    SRV("max-conns", "N", srv_max_conns, "most concurrent TCP connections (1024)"),
    SRV("max-conns-per-addr", "N", srv_max_conns_per_addr,
        "most concurrent TCP connections from one address (IPv6: one /64) (256)"),
    SRV("max-tests", "N", srv_max_tests, "most concurrent tests; more are refused busy (16)"),
    SRV("idle-timeout", "D", srv_idle, "drop a control connection idle this long (30s)"),
    SRV("handshake-timeout", "D", srv_handshake, "time to finish the handshake (2s)"),
    SRV("max-rate", "R", srv_max_rate, "highest UDP_STREAM rate accepted (10G)"),
    SRV("stream-threads", "N", srv_stream_threads,
        "most stream connections on threads of their own, over all tests; more share the "
        "event loop (128)"),
    SRV("stream-pool", "T", srv_stream_pool,
        "those stream connections share T epoll threads instead of a thread each (0: off)"),
    {.short_name = 'v',
     .help = "more logging (repeat for debug)",
     .group = G_SERVER,
     .fn = set_verbose},
};

/* --- client flags ------------------------------------------------------------------------- */

struct client_cli {
    struct client_opts o;
    char *host;  /* ours */
    char *token; /* ours: kp_free_secret */
    int have_server;
    bool json; /* --json: the document, not the table */
};

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
        if (close[1] == ':' && parse_u32(close + 2, 65535, &port, e) != 0)
            return -1;
    } else if (colon && strchr(v, ':') == colon) { /* host:port */
        c->host = kp_xstrndup(v, (size_t)(colon - v));
        if (parse_u32(colon + 1, 65535, &port, e) != 0)
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

static int cli_duration(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint32_t ms = 0;
    (void)f;
    if (ms_u32(v, 1, &ms, e) != 0 || ms > PROTO_MAX_DURATION_MS)
        return kp_err_set(e, "--duration '%s' must be within (0, 24h]", v);
    ((struct client_cli *)p)->o.duration_ms = ms;
    return 0;
}

static int cli_omit(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint32_t ms = 0;
    (void)f;
    if (ms_u32(v, 0, &ms, e) != 0 || ms > PROTO_MAX_DURATION_MS)
        return kp_err_set(e, "--omit '%s' must be within [0, 24h]", v);
    ((struct client_cli *)p)->o.omit_ms = ms;
    return 0;
}

static int cli_interval(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint32_t ms = 0;
    (void)f;
    if (ms_u32(v, 0, &ms, e) != 0)
        return -1;
    if (ms != 0 && ms < 100)
        return kp_err_set(e, "--interval must be 0 (off) or at least 100ms");
    ((struct client_cli *)p)->o.interval_ms = ms;
    return 0;
}

static int cli_samples(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 1000, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--samples must be in [1, 1000]");
    ((struct client_cli *)p)->o.samples = (unsigned)n;
    return 0;
}

static int cli_streams(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, PROTO_MAX_STREAMS, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--streams must be in [1, %u]", PROTO_MAX_STREAMS);
    ((struct client_cli *)p)->o.streams = (unsigned)n;
    return 0;
}

static int cli_stream_threads(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (strcmp(v, "auto") == 0) {
        ((struct client_cli *)p)->o.stream_threads = CLIENT_STREAM_THREADS_AUTO;
        return 0;
    }
    if (parse_u32(v, PROTO_MAX_STREAMS, &n, e) != 0)
        return kp_err_set(e, "--stream-threads must be auto or in [0, %u]", PROTO_MAX_STREAMS);
    ((struct client_cli *)p)->o.stream_threads = (int)n;
    return 0;
}

static int cli_msg_size(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (units_parse_size(v, &n, e) != 0)
        return -1;
    if (n < 1 || n > PROTO_MAX_MSG_SIZE)
        return kp_err_set(e, "--msg-size must be in [1, %u]", PROTO_MAX_MSG_SIZE);
    ((struct client_cli *)p)->o.msg_size = (uint32_t)n;
    return 0;
}

static int cli_udp_rate(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t bps;
    (void)f;
    if (units_parse_rate_bps(v, &bps, e) != 0)
        return -1;
    if (bps < 1000 || bps > PROTO_MAX_RATE_BPS)
        return kp_err_set(e, "--udp-rate must be within [1K, 400G]");
    ((struct client_cli *)p)->o.udp_rate_bps = bps;
    return 0;
}

static int cli_reverse(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    (void)v, (void)e;
    ((struct client_cli *)p)->o.reverse = 1;
    return 0;
}

static int cli_server_facts(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    (void)v, (void)e;
    ((struct client_cli *)p)->o.server_facts = 1;
    return 0;
}

static int cli_token(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    struct client_cli *c = p;
    (void)f;
    kp_free_secret(c->token);
    c->token = read_token(v, e);
    if (!c->token)
        return -1;
    c->o.token = c->token;
    c->o.token_len = strlen(c->token);
    return 0;
}

static int cli_connect_timeout(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint32_t ms = 0;
    (void)f;
    if (ms_u32(v, 1, &ms, e) != 0)
        return -1;
    ((struct client_cli *)p)->o.connect_timeout_ms = ms;
    return 0;
}

#define CLI(nm, metavar, handler, text)                                                            \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .group = G_CLIENT, .fn = handler                 \
    }

static const struct flag client_flags[] = {
    CLI("server", "HOST[:PORT]", cli_server,
        "the kperf-agent server (port " TESTKIND_DEFAULT_PORT_TEXT " by default)"),
    CLI("tests", "LIST", cli_tests,
        "comma list: TCP_RR,TCP_CRR,TCP_STREAM,TCP_STREAM_MULTI,UDP_RR,UDP_STREAM or all; "
        "TCP_RR_LOADED: TCP_RR while a TCP_STREAM_MULTI fills the path"),
    CLI("duration", "D", cli_duration, "measured time per test and sample (10s)"),
    CLI("omit", "D", cli_omit, "warm-up before each measurement, discarded (0s)"),
    CLI("interval", "D", cli_interval, "record a per-interval series, e.g. 1s (off)"),
    CLI("samples", "N", cli_samples, "repetitions of each test (1)"),
    CLI("streams", "N", cli_streams, "parallel connections of TCP_STREAM_MULTI (4)"),
    CLI("stream-threads", "T", cli_stream_threads,
        "TCP stream tests: T threads share the streams, each an epoll loop; auto: one per "
        "usable CPU, at most one per stream; 0: a blocking thread per stream (default: 0, or "
        "half the CPUs when the server shares this kernel and streams <= CPUs (64K writes) or "
        "streams > 16 per CPU)"),
    CLI("msg-size", "N", cli_msg_size,
        "request/write size (default: 1 for TCP RR/CRR, 24 for UDP_RR, 128K TCP, 1472 UDP)"),
    CLI("udp-rate", "R", cli_udp_rate, "UDP_STREAM send rate in bit/s (1G)"),
    CLI("reverse", NULL, cli_reverse, "stream tests: the server sends, the client receives"),
    CLI("token-file", "F", cli_token, "file holding the server's token"),
    CLI("server-facts", NULL, cli_server_facts,
        "ask the server for its host's facts (kernel, CPUs, NIC): \"server_facts\""),
    CLI("connect-timeout", "D", cli_connect_timeout, "give up connecting after D (5s)"),
    {.name = "json",
     .help = "print the kperf.result/v1 JSON document",
     .group = G_CLIENT,
     .kind = FLAG_BOOL,
     .offset = offsetof(struct client_cli, json)},
    {.short_name = 'v',
     .help = "more logging (repeat for debug)",
     .group = G_CLIENT,
     .fn = set_verbose},
};

/* --- probe flags (docs/watch.md) ---------------------------------------------------------- */

struct probe_cli {
    struct probe_opts o;
    const char *output;    /* --output FILE; NULL = stdout */
    struct client_cli srv; /* --server and --token-file, parsed as the client's */
};

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

static int prb_ms(const char *v, uint64_t min_ms, uint64_t *out, struct kp_err *e)
{
    uint32_t ms = 0;
    if (ms_u32(v, min_ms, &ms, e) != 0)
        return -1;
    *out = ms;
    return 0;
}

static int prb_duration(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 1, &((struct probe_cli *)p)->o.duration_ms, e);
}

static int prb_timeout(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 1, &((struct probe_cli *)p)->o.timeout_ms, e);
}

static int prb_interval(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 1, &((struct probe_cli *)p)->o.interval_ms, e);
}

static int prb_connect_every(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 1, &((struct probe_cli *)p)->o.connect_every_ms, e);
}

static int prb_session(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 5000, &((struct probe_cli *)p)->o.session_ms, e);
}

static int prb_connect_timeout(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 1, &((struct probe_cli *)p)->o.connect_timeout_ms, e);
}

static int prb_status(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    (void)f;
    return prb_ms(v, 100, &((struct probe_cli *)p)->o.status_ms, e);
}

static int prb_rate(void *p, const struct flag *f, const char *v, struct kp_err *e)
{
    uint64_t n = 0;
    (void)f;
    if (parse_u32(v, 10000, &n, e) != 0 || n == 0)
        return kp_err_set(e, "--rate '%s': want 1..10000 probes per second", v);
    ((struct probe_cli *)p)->o.rate = (unsigned)n;
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

#define PRB(nm, metavar, handler, text)                                                            \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .group = G_PROBE, .fn = handler                  \
    }

static const struct flag probe_flags[] = {
    PRB("server", "HOST[:PORT]", prb_server,
        "the kperf-agent server (port " TESTKIND_DEFAULT_PORT_TEXT " by default)"),
    PRB("token-file", "F", prb_token, "file holding the server's token"),
    PRB("duration", "D", prb_duration, "stop after D (default: at SIGTERM or SIGINT)"),
    PRB("rate", "N", prb_rate, "UDP and TCP request/response probes per second, each (100)"),
    PRB("connect-every", "D", prb_connect_every, "a fresh TCP connect this often (100ms)"),
    PRB("timeout", "D", prb_timeout, "an answer later than D is a loss (200ms)"),
    PRB("interval", "D", prb_interval, "losses spanning more than D are an outage (100ms)"),
    PRB("kinds", "LIST", prb_kinds, "comma list of udp, tcp, connect (all)"),
    {.name = "output",
     .short_name = 'o',
     .arg = "FILE",
     .help = "write the document to FILE (atomically) instead of stdout",
     .group = G_PROBE,
     .kind = FLAG_STRING,
     .offset = offsetof(struct probe_cli, output)},
    PRB("status", "D", prb_status,
        "a status line on stderr every D (off): per kind ok|lossy|down, sent, lost"),
    PRB("session", "D", prb_session, "re-open server sessions this often (10m: its cap)"),
    PRB("connect-timeout", "D", prb_connect_timeout, "connect and handshake of a session (1s)"),
    {.short_name = 'v',
     .help = "more logging (repeat for debug)",
     .group = G_PROBE,
     .fn = set_verbose},
};

/* --- parsing and help --------------------------------------------------------------------- */

static const char *const group_titles[] = {"Server flags", "Client flags", "Probe flags"};

/* The command `name` with one table (and --help's layout); ctx NULL: for --help only. */
static struct flags_cmd agent_cmd(const char *name, const struct flag *flags, size_t n, void *ctx)
{
    return (struct flags_cmd){
        .name = name,
        .usage = "kperf-agent " KPERF_VERSION " - the kperf measurement engine\n\n"
                 "Usage:\n  kperf-agent server [flags]\n"
                 "  kperf-agent client --server HOST[:PORT] --tests LIST [flags]\n"
                 "  kperf-agent probe --server HOST[:PORT] [flags]   outages (docs/watch.md)\n"
                 "  kperf-agent validate [FILE]   check a kperf.result/v1 document (stdin)\n"
                 "  kperf-agent node-facts [IFACE] NIC and TCP sysctl facts of this network "
                 "namespace (JSON)\n",
        .groups = group_titles,
        .n_groups = 3,
        .footer = "\nDurations: 500ms, 10s, 2m. Sizes: 64, 1K, 1M. Rates (bit/s): 500M, 1G.\n"
                  "Client exit code: 0 all tests ok, 1 a test failed (JSON still printed with "
                  "errors[]), 2 usage.\n",
        .help_width = 24,
        .flush_left = true,
        .tables = {{flags, n, ctx}},
    };
}

#define SERVER_CMD(ctx)                                                                            \
    agent_cmd("kperf-agent server", server_flags, sizeof(server_flags) / sizeof(server_flags[0]),  \
              ctx)
#define PROBE_CMD(ctx)                                                                             \
    agent_cmd("kperf-agent probe", probe_flags, sizeof(probe_flags) / sizeof(probe_flags[0]), ctx)
#define CLIENT_CMD(ctx)                                                                            \
    agent_cmd("kperf-agent client", client_flags, sizeof(client_flags) / sizeof(client_flags[0]),  \
              ctx)

/* The --help of every command: both tables. */
static void usage(FILE *f)
{
    struct flags_cmd cmd = SERVER_CMD(NULL);

    cmd.tables[1] = CLIENT_CMD(NULL).tables[0];
    cmd.tables[2] = PROBE_CMD(NULL).tables[0];
    flags_help(f, &cmd);
}

/* --- commands ----------------------------------------------------------------------------- */

static void on_ready(const char *addr, uint16_t port, void *arg)
{
    (void)port, (void)arg;
    fprintf(stderr, "kperf-agent: listening on %s (tcp+udp)\n", addr);
    fflush(stderr);
}

/* argv[0..argc) are the flags after "server"; argv[-1] is "server" itself. */
static int cmd_server(int argc, char **argv)
{
    struct server_cli c;
    struct flags_cmd cmd = SERVER_CMD(&c);
    struct kp_err err;
    int rc;

    memset(&c, 0, sizeof(c));
    server_opts_default(&c.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc != 0) {
        kp_free_secret(c.token);
        if (rc > 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level((enum kp_log_level)verbosity);
    rc = server_run(&c.o, on_ready, NULL, &err);
    kp_free_secret(c.token);
    if (rc != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 1;
    }
    return 0;
}

/* One table row: a sample (its index) or an aggregate ("all"). */
static void print_row(const json_t *r, const char *which)
{
    double v = 0, p50 = 0, p99 = 0, re = 0, loss = 0;
    char val[32];
    const char *dir = json_is_true(json_object_get(r, "reverse")) ? "reverse" : "forward";

    if (result_number(r, "throughput_mbps", &v) == 0)
        snprintf(val, sizeof(val), "%.1f Mbit/s", v);
    else if (result_number(r, "ops_per_sec", &v) == 0)
        snprintf(val, sizeof(val), "%.0f op/s", v);
    else
        snprintf(val, sizeof(val), "-");
    result_number(r, "latency_us.p50", &p50);
    result_number(r, "latency_us.p99", &p99);
    result_number(r, "tcp.retransmits", &re);
    result_number(r, "udp.loss_pct", &loss);
    printf("%-17s %-3s %-7s %14s %10.1f %10.1f %10.0f %10.2f\n", result_test(r), which, dir, val,
           p50, p99, re, loss);
}

static void print_table(const json_t *doc)
{
    const json_t *aggs = json_object_get(doc, "aggregates");
    const json_t *a;
    size_t i;

    printf("%-17s %-3s %-7s %14s %10s %10s %10s %10s\n", "TEST", "#", "DIR", "RESULT", "p50_us",
           "p99_us", "retrans", "loss_%");
    for (i = 0; i < result_count(doc); i++) {
        char which[16];
        snprintf(which, sizeof(which), "%d",
                 (int)json_integer_value(json_object_get(result_get(doc, i), "sample")));
        print_row(result_get(doc, i), which);
    }
    /* with several samples, the aggregate of each test too */
    json_array_foreach(aggs, i, a)
    {
        if (json_integer_value(json_object_get(a, "samples")) > 1)
            print_row(a, "all");
    }
    for (i = 0; i < result_error_count(doc); i++) {
        const json_t *e = result_error_get(doc, i);
        printf("%-17s %-3d FAILED: %s\n", result_test(e),
               (int)json_integer_value(json_object_get(e, "sample")),
               json_string_value(json_object_get(e, "error")));
    }
}

/* argv[0..argc) are the flags after "client"; argv[-1] is "client" itself. */
static int cmd_client(int argc, char **argv)
{
    struct client_cli c;
    struct flags_cmd cmd = CLIENT_CMD(&c);
    struct kp_err err;
    json_t *doc;
    unsigned failed = 0;
    int rc;

    memset(&c, 0, sizeof(c));
    client_opts_default(&c.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc == 0 && !c.have_server) {
        kp_err_set(&err, "--server is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc == 0 && c.o.ntests == 0) {
        kp_err_set(&err, "--tests is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc != 0) {
        free(c.host);
        kp_free_secret(c.token);
        if (rc > 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level((enum kp_log_level)verbosity);
    doc = client_run(&c.o, &failed);
    if (c.json) {
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0 ||
            fputc('\n', stdout) == EOF)
            failed++;
    } else {
        print_table(doc);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "kperf-agent: error: cannot write the result to stdout: %s\n",
                strerror(errno));
        failed++;
    }
    for (size_t i = 0; i < result_error_count(doc); i++) {
        const json_t *e = result_error_get(doc, i);
        fprintf(stderr, "kperf-agent: error: %s sample %d: %s\n", result_test(e),
                (int)json_integer_value(json_object_get(e, "sample")),
                json_string_value(json_object_get(e, "error")));
    }
    json_decref(doc);
    free(c.host);
    kp_free_secret(c.token);
    return failed ? 1 : 0;
}

static volatile sig_atomic_t probe_stop;

static void on_probe_ready(void *arg)
{
    fprintf(stderr, "kperf-agent: probing %s\n", (const char *)arg);
    fflush(stderr);
}

static int fill_doc(FILE *f, void *arg, struct kp_err *err)
{
    if (json_dumpf(arg, f, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0)
        return kp_err_set(err, "cannot write the document: %s", strerror(errno ? errno : EIO));
    return 0;
}

/* Writes doc to path whole or not at all (base/safefile.h), so a reader never sees half of it
 * and a planted link is refused. */
static int write_doc(const json_t *doc, const char *path)
{
    struct kp_err err = {{0}};

    if (safefile_write(path, fill_doc, (void *)doc, &err) != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return -1;
    }
    return 0;
}

static void on_probe_signal(int sig)
{
    (void)sig;
    probe_stop = 1;
}

/* argv[0..argc) are the flags after "probe"; argv[-1] is "probe" itself. Prints one
 * kperf.probe/v1 document at the end (docs/watch.md). */
static int cmd_probe(int argc, char **argv)
{
    struct probe_cli c;
    struct flags_cmd cmd = PROBE_CMD(&c);
    struct sigaction sa;
    char what[300];
    struct kp_err err;
    json_t *doc;
    int rc;

    memset(&c, 0, sizeof(c));
    probe_opts_default(&c.o);
    client_opts_default(&c.srv.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc == 0 && !c.srv.have_server) {
        kp_err_set(&err, "--server is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc != 0) {
        free(c.srv.host);
        kp_free_secret(c.srv.token);
        if (rc > 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level((enum kp_log_level)verbosity);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_probe_signal; /* no SA_RESTART: the waits end at once */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
        fprintf(stderr, "kperf-agent: error: sigaction: %s\n", strerror(errno));
        return 1;
    }
    c.o.on_ready = on_probe_ready;
    snprintf(what, sizeof(what), "%s port %u", c.o.host, c.o.port);
    c.o.ready_arg = what;
    doc = probe_run(&c.o, &probe_stop, &err);
    free(c.srv.host);
    kp_free_secret(c.srv.token);
    if (!doc) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 1;
    }
    if (c.output) {
        rc = write_doc(doc, c.output) == 0 ? 0 : 1;
        json_decref(doc);
        return rc;
    }
    rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) == 0 &&
                 fputc('\n', stdout) != EOF && fflush(stdout) == 0
             ? 0
             : 1;
    json_decref(doc);
    if (rc != 0)
        fprintf(stderr, "kperf-agent: error: cannot write the probe document to stdout: %s\n",
                strerror(errno));
    return rc;
}

/* `kperf-agent node-facts [IFACE]`: the NIC and TCP sysctl facts (agent/nicinfo.h) as JSON. */
static int cmd_node_facts(int argc, char **argv)
{
    json_t *facts;
    int rc;

    if (argc > 1 || (argc == 1 && argv[0][0] == '-')) {
        fprintf(stderr, "kperf-agent: error: node-facts takes one optional interface name\n");
        return 2;
    }
    facts = nicinfo_node_facts(argc == 1 ? argv[0] : NULL);
    rc = json_dumpf(facts, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ? 0 : 1;
    json_decref(facts);
    return rc;
}

/* `kperf-agent validate [FILE]`: checks a kperf.result/v1 document (stdin by default). */
static int cmd_validate(int argc, char **argv)
{
    FILE *f = argc > 0 ? fopen(argv[0], "rb") : stdin;
    size_t cap = 1 << 20, len = 0;
    char *buf;
    json_t *doc = NULL;
    struct kp_err err;
    int rc = 1;

    if (!f) {
        fprintf(stderr, "kperf-agent: error: cannot open %s: %s\n", argv[0], strerror(errno));
        return 1;
    }
    buf = kp_xmalloc(cap);
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0 || len > RESULT_MAX_BYTES)
            break;
        if (len == cap)
            buf = kp_xrealloc(buf, cap *= 2);
    }
    if (f != stdin)
        fclose(f);
    kp_err_clear(&err);
    if (result_parse(buf, len, &doc, &err) != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
    } else {
        printf("ok: %zu results, %zu errors\n", result_count(doc), result_error_count(doc));
        rc = 0;
    }
    json_decref(doc);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    kp_log_set_prog("kperf-agent");
    /* The server writes through libuv, which uses write(2), not send(MSG_NOSIGNAL): a client
     * that resets mid-write must cost one connection (EPIPE), not the process. Likewise a
     * closed stdout pipe must be a write error. Here, not in agent/: the disposition is the
     * process's, so only main may choose it. */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
        fprintf(stderr, "kperf-agent: error: cannot ignore SIGPIPE: %s\n", strerror(errno));
        return 1;
    }
    kp_alloc_init_json();
    if (argc >= 2 && strcmp(argv[1], "server") == 0)
        return cmd_server(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "client") == 0)
        return cmd_client(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "probe") == 0)
        return cmd_probe(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "node-facts") == 0)
        return cmd_node_facts(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "validate") == 0)
        return cmd_validate(argc - 2, argv + 2);
    if (argc >= 2 && (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0)) {
        printf("kperf-agent %s\n", KPERF_VERSION);
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
