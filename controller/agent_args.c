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

/* The spec's tests that --profile selects, as a comma list ("" when none of them). */
static char *profile_csv(const struct run_spec *spec)
{
    char *s = kp_xstrdup("");

    for (size_t i = 0; i < spec->n_tests; i++) {
        char *next;
        if (!(spec->profile_tests & (1u << spec->tests[i])))
            continue;
        next = kp_xasprintf("%s%s%s", s, s[0] ? "," : "", testkind_name(spec->tests[i]));
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
    if (spec->parallel > 0)
        push_flag(&a, "--parallel", kp_xasprintf("%d", spec->parallel));
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
    if (spec->no_counters)
        push_str(&a, "--no-counters");
    if (spec->profile_tests) {
        char *p = profile_csv(spec);
        if (p[0])
            push_flag(&a, "--profile", p);
        else
            free(p);
    }
    if (o->counters_netns)
        push_flag(&a, "--counters-netns", kp_xstrdup(o->counters_netns));
    if (o->token_file)
        push_flag(&a, "--token-file", kp_xstrdup(o->token_file));
    /* a host kperf does not run: its agent reports its facts (FACTS) for the provenance */
    if (spec->group && spec->group->scenario == SCENARIO_POD_TO_EXTERNAL)
        push_str(&a, "--server-facts");
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
    if (o->max_idle_ms)
        push_ms(&a, "--max-idle", o->max_idle_ms);
    if (o->counters_netns)
        push_flag(&a, "--counters-netns", kp_xstrdup(o->counters_netns));
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

static int near(double a, double b)
{
    return a - b < 1e-3 && b - a < 1e-3;
}

int agent_args_check_doc(const struct run_spec *spec, int port, const json_t *doc,
                         struct kp_err *err)
{
    const json_t *p = json_object_get(doc, "params");
    const json_t *tests = json_object_get(p, "tests");
    const json_t *srv_port = json_object_get(json_object_get(doc, "server"), "port");
    int reverse = spec->group && spec->group->reverse;
    long long samples = spec->samples > 0 ? spec->samples : AGENT_ARGS_DEFAULT_SAMPLES;
    long long streams = spec->streams > 0 ? spec->streams : AGENT_ARGS_DEFAULT_STREAMS;
    char *want = tests_csv(spec);
    char *got = kp_xstrdup("");
    size_t i;
    json_t *t;
    int rc = -1;

    if (!json_is_object(p) || !json_is_array(tests)) {
        kp_err_set(err, "the agent document has no params: not the planned client run");
        goto out;
    }
    json_array_foreach(tests, i, t)
    {
        char *next = kp_xasprintf("%s%s%s", got, i ? "," : "",
                                  json_is_string(t) ? json_string_value(t) : "?");
        free(got);
        got = next;
    }
    if (strcmp(got, want) != 0) {
        kp_err_set(err, "the agent document is for tests %s, not the planned %s", got, want);
        goto out;
    }
    if (json_is_true(json_object_get(p, "reverse")) != reverse) {
        kp_err_set(err, "the agent document is for the %s direction, not the planned %s",
                   reverse ? "forward" : "reverse", reverse ? "reverse" : "forward");
        goto out;
    }
    if (json_integer_value(json_object_get(p, "samples")) != samples ||
        json_integer_value(json_object_get(p, "streams")) != streams) {
        kp_err_set(err,
                   "the agent document has samples %lld streams %lld, not the planned "
                   "samples %lld streams %lld",
                   json_integer_value(json_object_get(p, "samples")),
                   json_integer_value(json_object_get(p, "streams")), samples, streams);
        goto out;
    }
    if (!near(json_number_value(json_object_get(p, "duration_s")),
              (double)spec->duration_ms / 1000.0) ||
        !near(json_number_value(json_object_get(p, "omit_s")), (double)spec->omit_ms / 1000.0)) {
        kp_err_set(err,
                   "the agent document has duration %g s omit %g s, not the planned %g s "
                   "omit %g s",
                   json_number_value(json_object_get(p, "duration_s")),
                   json_number_value(json_object_get(p, "omit_s")),
                   (double)spec->duration_ms / 1000.0, (double)spec->omit_ms / 1000.0);
        goto out;
    }
    if (spec->msg_size_bytes && (uint64_t)json_integer_value(
                                    json_object_get(p, "msg_size_bytes")) != spec->msg_size_bytes) {
        kp_err_set(err, "the agent document has another message size than the planned %llu",
                   (unsigned long long)spec->msg_size_bytes);
        goto out;
    }
    if (port > 0 && json_integer_value(srv_port) != port) {
        kp_err_set(err, "the agent document is for server port %lld, not the planned %d",
                   json_integer_value(srv_port), port);
        goto out;
    }
    json_array_foreach(json_object_get(doc, "results"), i, t)
    {
        if (json_is_true(json_object_get(t, "reverse")) != reverse) {
            kp_err_set(err,
                       "the agent document's results[%zu] is in the %s direction, not the "
                       "planned one",
                       i, reverse ? "forward" : "reverse");
            goto out;
        }
    }
    rc = 0;
out:
    free(want);
    free(got);
    return rc;
}
