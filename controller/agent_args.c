/* SPDX-License-Identifier: Apache-2.0 */
/* agent_args.c - see agent_args.h. Pure functions: no I/O. */
#include "controller/agent_args.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/testkind.h"
#include "controller/plan.h"

/* A growing NULL-terminated argv; every string in it is ours. */
struct argv_buf {
    char **v;
    size_t n;
};

/* Appends s (takes ownership). */
static void push(struct argv_buf *a, char *s)
{
    a->v = kp_xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void push_str(struct argv_buf *a, const char *s)
{
    push(a, kp_xstrdup(s));
}

/* Appends "flag value" (value: takes ownership). */
static void push_flag(struct argv_buf *a, const char *flag, char *value)
{
    push_str(a, flag);
    push(a, value);
}

static void push_ms(struct argv_buf *a, const char *flag, uint64_t ms)
{
    push_flag(a, flag, kp_xasprintf("%llums", (unsigned long long)ms));
}

/* The prefix words and the binary, then the subcommand. */
static void push_command(struct argv_buf *a, const struct agent_args_opts *o, const char *sub)
{
    for (const char *const *w = o->prefix; w && *w; w++)
        push_str(a, *w);
    if (o->agent)
        push_str(a, o->agent);
    push_str(a, sub);
}

/* "T1,T2,..." in spec order. Caller frees. */
static char *tests_csv(const struct run_spec *spec)
{
    char *s = kp_xstrdup("");

    for (size_t i = 0; i < spec->n_tests; i++) {
        char *next = kp_xasprintf("%s%s%s", s, i ? "," : "", testkind_name(spec->tests[i]));
        free(s);
        s = next;
    }
    return s;
}

char *agent_args_host_port(const char *host, int port)
{
    if (host[0] != '[' && strchr(host, ':'))
        return kp_xasprintf("[%s]:%d", host, port);
    return kp_xasprintf("%s:%d", host, port);
}

char **agent_args_client(const struct run_spec *spec, const struct agent_args_opts *o)
{
    struct argv_buf a = {0};

    push_command(&a, o, "client");
    push_flag(&a, "--server", agent_args_host_port(o->host, o->port));
    push_flag(&a, "--tests", tests_csv(spec));
    push_ms(&a, "--duration", spec->duration_ms);
    push_flag(&a, "--samples",
              kp_xasprintf("%d", spec->samples > 0 ? spec->samples : AGENT_ARGS_DEFAULT_SAMPLES));
    push_flag(&a, "--streams",
              kp_xasprintf("%d", spec->streams > 0 ? spec->streams : AGENT_ARGS_DEFAULT_STREAMS));
    if (spec->omit_ms)
        push_ms(&a, "--omit", spec->omit_ms);
    if (spec->interval_ms)
        push_ms(&a, "--interval", spec->interval_ms);
    if (spec->msg_size_bytes)
        push_flag(&a, "--msg-size", kp_xasprintf("%llu", (unsigned long long)spec->msg_size_bytes));
    if (spec->udp_rate_bps)
        push_flag(&a, "--udp-rate", kp_xasprintf("%llu", (unsigned long long)spec->udp_rate_bps));
    if (spec->group && spec->group->reverse)
        push_str(&a, "--reverse");
    if (o->token_file)
        push_flag(&a, "--token-file", kp_xstrdup(o->token_file));
    push_str(&a, "--json");
    return a.v;
}

char **agent_args_server(const struct agent_args_opts *o)
{
    struct argv_buf a = {0};

    push_command(&a, o, "server");
    push_flag(&a, "--port", kp_xasprintf("%d", o->port));
    if (o->host)
        push_flag(&a, "--bind", kp_xstrdup(o->host));
    if (o->token_file)
        push_flag(&a, "--token-file", kp_xstrdup(o->token_file));
    if (o->udp_rate_bps > AGENT_ARGS_SERVER_MAX_RATE_BPS)
        push_flag(&a, "--max-rate", kp_xasprintf("%llu", (unsigned long long)o->udp_rate_bps));
    return a.v;
}

void agent_args_free(char **argv)
{
    for (char **a = argv; a && *a; a++)
        free(*a);
    free(argv);
}
