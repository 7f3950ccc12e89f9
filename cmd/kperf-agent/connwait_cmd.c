/* SPDX-License-Identifier: Apache-2.0 */
/* connwait_cmd.c - `kperf-agent connect-wait` (connwait_cmd.h). */
#include "cmd/kperf-agent/connwait_cmd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/flags.h"
#include "base/kp_err.h"
#include "base/units.h"

#define CONNWAIT_SCHEMA "kperf.connwait/v1"

enum { C_PORT, C_EVERY, C_TIMEOUT, C_ATTEMPT };

struct connwait_cli {
    const char *target;
    unsigned port;
    uint64_t every_ms, timeout_ms, attempt_ms;
};

static int set_value(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    struct connwait_cli *c = ctx;
    uint64_t ms;
    char *end;
    unsigned long n;

    if (f->id == C_PORT) {
        n = strtoul(v, &end, 10);
        if (*v < '0' || *v > '9' || *end || n == 0 || n > 65535ul)
            return kp_err_set(err, "--port: '%s' is not a number from 1 to 65535", v);
        c->port = (unsigned)n;
        return 0;
    }
    if (units_parse_duration_ms(v, &ms, err) != 0)
        return kp_err_prefix(err, "--%s", f->name);
    if (ms == 0)
        return kp_err_set(err, "--%s: must be more than 0", f->name);
    *(f->id == C_EVERY ? &c->every_ms : f->id == C_TIMEOUT ? &c->timeout_ms : &c->attempt_ms) = ms;
    return 0;
}

#define VAL(nm, metavar, num, text)                                                                \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .fn = set_value, .id = num                       \
    }

static const struct flag connwait_flags[] = {
    {.name = "target",
     .arg = "IP",
     .help = "the address connected to (a Service's ClusterIP)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct connwait_cli, target)},
    VAL("port", "N", C_PORT, "the port connected to (5201)"),
    VAL("every", "D", C_EVERY, "a fresh connect this often (20ms)"),
    VAL("attempt-timeout", "D", C_ATTEMPT, "one connect gives up after D (200ms)"),
    VAL("timeout", "D", C_TIMEOUT, "give up after D (120s)"),
    {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
};

static const char *const connwait_groups[] = {"Flags"};

static uint64_t mono_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static double wall_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct target {
    struct sockaddr_storage sa;
    socklen_t len;
};

/* the IPv4 or IPv6 literal ip and port as a socket address; -1 when ip is neither (no
 * getaddrinfo: the agent is linked statically) */
static int parse_target(const char *ip, unsigned port, struct target *t)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)&t->sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&t->sa;

    memset(t, 0, sizeof(*t));
    if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        t->len = sizeof(*v4);
        return 0;
    }
    if (inet_pton(AF_INET6, ip, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        t->len = sizeof(*v6);
        return 0;
    }
    return -1;
}

/* one connect; 1 when it succeeded, 0 when not (refused, timed out, unreachable) */
static int attempt(const struct target *t, uint64_t timeout_ms)
{
    struct timeval tv = {.tv_sec = (time_t)(timeout_ms / 1000),
                         .tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000};
    int fd = socket(t->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int ok;

    if (fd < 0)
        return 0;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    ok = connect(fd, (const struct sockaddr *)&t->sa, t->len) == 0;
    close(fd);
    return ok;
}

/* the connects until one succeeds or the timeout passes; the document */
static json_t *wait_connect(const struct connwait_cli *c, const struct target *t)
{
    double start = wall_s();
    uint64_t t0 = mono_ms(), next = t0;
    unsigned long n = 0;

    for (;;) {
        uint64_t now = mono_ms();
        if (now < next) {
            struct timespec d = {.tv_sec = (time_t)((next - now) / 1000),
                                 .tv_nsec = (long)((next - now) % 1000) * 1000000L};
            nanosleep(&d, NULL);
        }
        next += c->every_ms;
        n++;
        if (attempt(t, c->attempt_ms))
            return json_pack("{s:s, s:b, s:f, s:f, s:I}", "schema", CONNWAIT_SCHEMA, "connected", 1,
                             "start_unix_s", start, "connected_unix_s", wall_s(), "attempts",
                             (json_int_t)n);
        if (mono_ms() - t0 >= c->timeout_ms)
            return json_pack("{s:s, s:b, s:f, s:I}", "schema", CONNWAIT_SCHEMA, "connected", 0,
                             "start_unix_s", start, "attempts", (json_int_t)n);
    }
}

int connwait_cmd_run(int argc, char **argv)
{
    struct connwait_cli c = {.port = 5201, .every_ms = 20, .timeout_ms = 120000, .attempt_ms = 200};
    struct flags_cmd cmd = {
        .name = "kperf-agent connect-wait",
        .usage = "Usage: kperf-agent connect-wait --target IP [flags]\n"
                 "  fresh TCP connects until one succeeds; prints JSON (docs/kubernetes.md, "
                 "\"Services at scale\")\n",
        .groups = connwait_groups,
        .n_groups = 1,
        .help_width = 24,
        .flush_left = true,
        .tables = {{connwait_flags, sizeof(connwait_flags) / sizeof(connwait_flags[0]), &c}},
    };
    struct target t;
    struct kp_err err;
    json_t *doc;
    int rc;

    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc == 0 && !c.target) {
        kp_err_set(&err, "--target is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc > 0) {
        flags_help(stdout, &cmd);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    if (parse_target(c.target, c.port, &t) != 0) {
        fprintf(stderr, "kperf-agent: error: --target: '%s' is not an IP address\n", c.target);
        return 2;
    }
    doc = wait_connect(&c, &t);
    rc = json_is_true(json_object_get(doc, "connected")) ? 0 : 1;
    if (json_dumpf(doc, stdout, JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF ||
        fflush(stdout) != 0)
        rc = 1;
    json_decref(doc);
    return rc;
}
