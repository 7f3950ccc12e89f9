/* SPDX-License-Identifier: Apache-2.0 */
/* run_options.c - see run_options.h. One table describes every flag (name, argument, group,
 * help); each group has a small handler. --help is generated from the same table, so the two
 * never disagree. */
#include "controller/run_options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/units.h"
#include "controller/backend.h"
#include "controller/plan.h"

enum flag_id {
    F_SCENARIOS,
    F_TESTS,
    F_SAME_NODE,
    F_OTHER_NODE,
    F_DURATION,
    F_SAMPLES,
    F_STREAMS,
    F_MSG_SIZE,
    F_UDP_RATE,
    F_OMIT,
    F_INTERVAL,
    F_TIMEOUT,
    F_OUTPUT,
    F_OUTPUT_DIR,
    F_VERBOSE,
    F_HELP,
    F_LOCAL,
    F_MTU,
    F_KUBECONFIG,
    F_CONTEXT,
    F_NAMESPACE,
    F_IMAGE,
    F_PULL_SECRET,
    F_PULL_POLICY,
    F_NODE_SELECTOR,
    F_TOLERATIONS,
    F_NODES,
    F_NODES_FROM,
    F_PORT,
    F_EXTERNAL,
    F_KEEP,
    F_CLEANUP_LEFTOVERS,
    F_ALL_NODES,
};

enum flag_group {
    G_WHAT,
    G_MEASURE,
    G_OUTPUT,
    G_LOCAL,
    G_K8S,
    G_COUNT,
};

struct flag {
    enum flag_id id;
    enum flag_group group;
    const char *name; /* long name without "--" */
    char short_name;  /* 0 = none */
    const char *arg;  /* metavariable; NULL = boolean flag */
    const char *help;
};

static const struct flag flags[] = {
    {F_SCENARIOS, G_WHAT, "scenarios", 0, "LIST",
     "all, or a comma list of pod-to-pod,host-to-host,\n"
     "pod-to-service,pod-to-external (default pod-to-pod)"},
    {F_TESTS, G_WHAT, "tests", 0, "LIST",
     "all (six), or a comma list of TCP_RR,TCP_CRR,UDP_RR,\n"
     "TCP_STREAM,TCP_STREAM_MULTI,UDP_STREAM\n"
     "(default TCP_RR,TCP_STREAM,TCP_STREAM_MULTI)"},
    {F_SAME_NODE, G_WHAT, "same-node", 0, NULL,
     "client and server on one node (both placements run\n"
     "unless --same-node or --other-node is given)"},
    {F_OTHER_NODE, G_WHAT, "other-node", 0, NULL, "client and server on two different nodes"},
    {F_DURATION, G_MEASURE, "duration", 0, "DUR", "length of each test sample (default 10s)"},
    {F_SAMPLES, G_MEASURE, "samples", 0, "N|auto",
     "samples per test (default 1); auto: 3 to 10 samples,\n"
     "until the 95% interval of the mean is within 5%"},
    {F_STREAMS, G_MEASURE, "streams", 0, "N", "parallel streams of TCP_STREAM_MULTI (default 4)"},
    {F_MSG_SIZE, G_MEASURE, "msg-size", 0, "SIZE",
     "message size (RR tests default 1, streams default 128K)"},
    {F_UDP_RATE, G_MEASURE, "udp-rate", 0, "RATE", "UDP_STREAM target rate, bit/s (default 1G)"},
    {F_OMIT, G_MEASURE, "omit", 0, "DUR", "warm-up discarded before each sample (default 0)"},
    {F_INTERVAL, G_MEASURE, "interval", 0, "DUR", "time-series interval in the JSON (default 1s)"},
    {F_TIMEOUT, G_MEASURE, "timeout", 0, "DUR",
     "bound on each wait beyond the measurement itself\n"
     "(start-up, servers ready, a client finishing; default 2m)"},
    {F_OUTPUT, G_OUTPUT, "output", 'o', "FORMAT", "table (default), markdown, json or csv"},
    {F_OUTPUT_DIR, G_OUTPUT, "output-dir", 0, "DIR",
     "also write report.json, .md, .csv and .html into DIR"},
    {F_VERBOSE, G_OUTPUT, "verbose", 'v', NULL, "more diagnostics on stderr (-vv: debug)"},
    {F_HELP, G_OUTPUT, "help", 'h', NULL, "show this help"},
    {F_LOCAL, G_LOCAL, "local", 0, NULL,
     "measure on this machine: network namespaces as nodes\n"
     "and pods (needs root; see docs/local-backend.md)"},
    {F_MTU, G_LOCAL, "mtu", 0, "BYTES", "MTU of every local link (default 1500; 9001 = jumbo)"},
    {F_KUBECONFIG, G_K8S, "kubeconfig", 0, "FILE",
     "kubeconfig (default $KUBECONFIG, ~/.kube/config)"},
    {F_CONTEXT, G_K8S, "context", 0, "NAME", "kubeconfig context (default current-context)"},
    {F_NAMESPACE, G_K8S, "namespace", 'n', "NS",
     "use this existing namespace (default: create kperf-<run-id>)"},
    {F_IMAGE, G_K8S, "image", 0, "IMAGE", "kperf-agent image (registry mirrors, air-gapped)"},
    {F_PULL_SECRET, G_K8S, "image-pull-secret", 0, "NAME", "image pull secret for agent pods"},
    {F_PULL_POLICY, G_K8S, "image-pull-policy", 0, "POLICY", "Always, IfNotPresent or Never"},
    {F_NODE_SELECTOR, G_K8S, "node-selector", 0, "K=V,...", "only nodes with these labels"},
    {F_TOLERATIONS, G_K8S, "tolerations", 0, "K[=V][:EFFECT],...",
     "tolerate these taints (also for node choice)"},
    {F_NODES, G_K8S, "nodes", 0, "A,B", "server node A, other-node client B (same-node uses A)"},
    {F_NODES_FROM, G_K8S, "nodes-from", 0, "REPORT.json", "use the node pair of an earlier report"},
    {F_PORT, G_K8S, "port", 0, "PORT", "agent server port (default 5201)"},
    {F_EXTERNAL, G_K8S, "external-server", 0, "HOST[:PORT]",
     "a kperf-agent server outside the cluster, for pod-to-external"},
    {F_KEEP, G_K8S, "keep", 0, NULL, "leave the objects in place for debugging"},
    {F_CLEANUP_LEFTOVERS, G_K8S, "cleanup-leftovers", 0, NULL,
     "remove objects of earlier kperf runs before starting"},
    {F_ALL_NODES, G_K8S, "all-nodes", 0, NULL,
     "sweep: every node's client against the reference\n"
     "node, one row per node"},
};

#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

/* While parsing, marks that --same-node/--other-node was given (cleared in validate). */
#define PLACEMENT_GIVEN (1u << 31)

static const char *const group_titles[G_COUNT] = {
    "What to measure",
    "How to measure",
    "Output",
    "Local backend (--local)",
    "Kubernetes backend (default)",
};

static const char *const output_names[] = {"table", "markdown", "json", "csv"};

void run_options_init(struct run_options *o)
{
    memset(o, 0, sizeof(*o));
    o->scenarios = 1u << SCENARIO_POD_TO_POD;
    o->placements = PLACEMENT_BOTH_MASK;
    o->tests = TEST_DEFAULT_MASK;
    o->duration_ms = 10000;
    /* the per-second series lets a one-sample `kperf compare` see the in-run spread */
    o->interval_ms = 1000;
    o->samples = 1;
    o->samples_max = 1;
    o->streams = 4;
    o->timeout_ms = 120000;
    o->output = RUN_OUTPUT_TABLE;
    o->mtu = 1500;
    o->port = 5201;
    o->external_port = 5201;
}

void run_options_cleanup(struct run_options *o)
{
    free(o->output_dir);
    free(o->kubeconfig);
    free(o->context);
    free(o->namespace_name);
    free(o->image);
    free(o->image_pull_secret);
    free(o->image_pull_policy);
    for (size_t i = 0; i < o->n_node_selector; i++) {
        free(o->node_selector[i].key);
        free(o->node_selector[i].value);
    }
    free(o->node_selector);
    for (size_t i = 0; i < o->n_tolerations; i++) {
        free(o->tolerations[i].key);
        free(o->tolerations[i].value);
        free(o->tolerations[i].effect);
    }
    free(o->tolerations);
    free(o->node_a);
    free(o->node_b);
    free(o->nodes_from);
    free(o->external_host);
    memset(o, 0, sizeof(*o));
}

/* ---- value parsers ---- */

static int parse_int(const char *s, long lo, long hi, long *out, const char *flag,
                     struct kp_err *err)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return kp_err_set(err, "--%s: '%s' is not a whole number in [%ld, %ld]", flag, s, lo, hi);
    *out = v;
    return 0;
}

/* Splits a comma list and calls fn for each non-empty item. */
static int for_each_item(const char *list, int (*fn)(void *ctx, const char *item, struct kp_err *),
                         void *ctx, struct kp_err *err)
{
    char *copy = kp_xstrdup(list);
    char *save = NULL;
    int rc = 0;

    for (char *it = strtok_r(copy, ",", &save); it && rc == 0; it = strtok_r(NULL, ",", &save))
        rc = fn(ctx, it, err);
    free(copy);
    return rc;
}

static int add_scenario(void *ctx, const char *item, struct kp_err *err)
{
    unsigned *mask = ctx;
    int s;

    if (strcmp(item, "all") == 0) {
        *mask |= SCENARIO_ALL_MASK;
        return 0;
    }
    s = plan_scenario_from_name(item);
    if (s < 0)
        return kp_err_set(err,
                          "--scenarios: unknown scenario '%s' (all, pod-to-pod, host-to-host, "
                          "pod-to-service, pod-to-external)",
                          item);
    *mask |= 1u << s;
    return 0;
}

static int add_test(void *ctx, const char *item, struct kp_err *err)
{
    unsigned *mask = ctx;
    int t;

    if (strcasecmp(item, "all") == 0) {
        *mask |= TEST_ALL_MASK;
        return 0;
    }
    t = plan_test_from_name(item);
    if (t < 0)
        return kp_err_set(err,
                          "--tests: unknown test '%s' (all, TCP_RR, TCP_CRR, UDP_RR, "
                          "TCP_STREAM, TCP_STREAM_MULTI, UDP_STREAM)",
                          item);
    *mask |= 1u << t;
    return 0;
}

static int add_label(void *ctx, const char *item, struct kp_err *err)
{
    struct run_options *o = ctx;
    const char *eq = strchr(item, '=');

    if (!eq || eq == item)
        return kp_err_set(err, "--node-selector: '%s' is not KEY=VALUE", item);
    o->node_selector =
        kp_xrealloc(o->node_selector, (o->n_node_selector + 1) * sizeof(*o->node_selector));
    o->node_selector[o->n_node_selector].key = kp_xstrndup(item, (size_t)(eq - item));
    o->node_selector[o->n_node_selector].value = kp_xstrdup(eq + 1);
    o->n_node_selector++;
    return 0;
}

static int add_toleration(void *ctx, const char *item, struct kp_err *err)
{
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
    struct run_options *o = ctx;
    struct run_toleration t = {0};
    char *copy = kp_xstrdup(item);
    char *colon = strrchr(copy, ':');
    char *eq;
    int ok = colon == NULL;

    if (colon) {
        *colon = '\0';
        for (size_t i = 0; i < 3; i++)
            if (strcmp(colon + 1, effects[i]) == 0)
                ok = 1;
        if (!ok) {
            free(copy);
            return kp_err_set(err,
                              "--tolerations: '%s': effect must be NoSchedule, "
                              "PreferNoSchedule or NoExecute",
                              item);
        }
        t.effect = kp_xstrdup(colon + 1);
    }
    eq = strchr(copy, '=');
    if (eq) {
        *eq = '\0';
        t.value = kp_xstrdup(eq + 1);
    }
    if (copy[0] && strcmp(copy, "*") != 0)
        t.key = kp_xstrdup(copy);
    free(copy);
    if (!t.key && t.value) {
        free(t.value);
        free(t.effect);
        return kp_err_set(err, "--tolerations: '%s' has a value but no key", item);
    }
    o->tolerations = kp_xrealloc(o->tolerations, (o->n_tolerations + 1) * sizeof(*o->tolerations));
    o->tolerations[o->n_tolerations++] = t;
    return 0;
}

/* HOST[:PORT] or [V6]:PORT or a bare IPv6 address. */
static int parse_host_port(const char *s, char **host, int *port, struct kp_err *err)
{
    const char *colon = strrchr(s, ':');
    long p = *port;

    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close == s + 1 || (close[1] && close[1] != ':'))
            return kp_err_set(err, "--external-server: '%s' is not [ADDR]:PORT", s);
        if (close[1] == ':' && parse_int(close + 2, 1, 65535, &p, "external-server", err) != 0)
            return -1;
        *host = kp_xstrndup(s + 1, (size_t)(close - s - 1));
    } else if (colon && strchr(s, ':') == colon) {
        if (colon == s || parse_int(colon + 1, 1, 65535, &p, "external-server", err) != 0)
            return kp_err_set(err, "--external-server: '%s' is not HOST[:PORT]", s);
        *host = kp_xstrndup(s, (size_t)(colon - s));
    } else {
        if (!s[0])
            return kp_err_set(err, "--external-server: empty host");
        *host = kp_xstrdup(s);
    }
    *port = (int)p;
    return 0;
}

/* ---- one handler per group ---- */

static int handle_what(struct run_options *o, const struct flag *f, const char *v,
                       struct kp_err *err)
{
    unsigned mask = 0;

    switch (f->id) {
    case F_SCENARIOS:
        if (for_each_item(v, add_scenario, &mask, err) != 0)
            return -1;
        if (!mask)
            return kp_err_set(err, "--scenarios: empty list");
        o->scenarios = mask;
        return 0;
    case F_TESTS:
        if (for_each_item(v, add_test, &mask, err) != 0)
            return -1;
        if (!mask)
            return kp_err_set(err, "--tests: empty list");
        o->tests = mask;
        return 0;
    default: /* --same-node, --other-node: giving one selects only it */
        if (!(o->placements & PLACEMENT_GIVEN))
            o->placements = PLACEMENT_GIVEN;
        o->placements |= 1u << (f->id == F_SAME_NODE ? PLACEMENT_SAME_NODE : PLACEMENT_OTHER_NODE);
        return 0;
    }
}

static int handle_duration(const char *v, uint64_t lo_ms, uint64_t *out, const char *flag,
                           struct kp_err *err)
{
    uint64_t ms;

    if (units_parse_duration_ms(v, &ms, err) != 0)
        return kp_err_prefix(err, "--%s", flag);
    if (ms < lo_ms)
        return kp_err_set(err, "--%s: '%s' is shorter than %llums", flag, v,
                          (unsigned long long)lo_ms);
    if (ms > 24ull * 3600 * 1000)
        return kp_err_set(err, "--%s: '%s' is longer than 24h", flag, v);
    *out = ms;
    return 0;
}

static int handle_measure(struct run_options *o, const struct flag *f, const char *v,
                          struct kp_err *err)
{
    long n = 0;

    switch (f->id) {
    case F_DURATION:
        return handle_duration(v, 100, &o->duration_ms, f->name, err);
    case F_OMIT:
        return handle_duration(v, 0, &o->omit_ms, f->name, err);
    case F_INTERVAL:
        return handle_duration(v, 100, &o->interval_ms, f->name, err);
    case F_TIMEOUT:
        return handle_duration(v, 1000, &o->timeout_ms, f->name, err);
    case F_SAMPLES:
        o->samples_auto = strcmp(v, "auto") == 0;
        if (o->samples_auto) {
            o->samples = 3;
            o->samples_max = 10;
            return 0;
        }
        if (parse_int(v, 1, 100, &n, f->name, NULL) != 0)
            return kp_err_set(err, "--%s: '%s' is not a whole number in [1, 100] or 'auto'",
                              f->name, v);
        o->samples = o->samples_max = (int)n;
        return 0;
    case F_STREAMS:
        if (parse_int(v, 1, 128, &n, f->name, err) != 0)
            return -1;
        o->streams = (int)n;
        return 0;
    case F_MSG_SIZE:
        if (units_parse_size(v, &o->msg_size_bytes, err) != 0)
            return kp_err_prefix(err, "--msg-size");
        if (o->msg_size_bytes < 1 || o->msg_size_bytes > 1024 * 1024)
            return kp_err_set(err, "--msg-size: '%s' is not in [1, 1M]", v);
        return 0;
    default: /* F_UDP_RATE */
        if (units_parse_rate_bps(v, &o->udp_rate_bps, err) != 0)
            return kp_err_prefix(err, "--udp-rate");
        if (o->udp_rate_bps == 0)
            return kp_err_set(err, "--udp-rate: must be above 0");
        return 0;
    }
}

static int handle_output(struct run_options *o, const struct flag *f, const char *v,
                         struct kp_err *err)
{
    switch (f->id) {
    case F_OUTPUT:
        for (int i = 0; i < 4; i++) {
            if (strcmp(v, output_names[i]) == 0 || (i == 1 && strcmp(v, "md") == 0)) {
                o->output = (enum run_output)i;
                return 0;
            }
        }
        return kp_err_set(err, "--output: unknown format '%s' (table, markdown, json, csv)", v);
    case F_OUTPUT_DIR:
        if (!v[0])
            return kp_err_set(err, "--output-dir: empty path");
        free(o->output_dir);
        o->output_dir = kp_xstrdup(v);
        return 0;
    default: /* F_VERBOSE; F_HELP is handled by the parser */
        o->verbose++;
        return 0;
    }
}

static int handle_local(struct run_options *o, const struct flag *f, const char *v,
                        struct kp_err *err)
{
    long n = 0;

    if (f->id == F_LOCAL) {
        o->local = true;
        return 0;
    }
    if (parse_int(v, 576, 65000, &n, f->name, err) != 0)
        return -1;
    o->mtu = (int)n;
    return 0;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = kp_xstrdup(v);
}

static int handle_nodes(struct run_options *o, const char *v, struct kp_err *err)
{
    const char *comma = strchr(v, ',');

    if (!v[0] || v[0] == ',' || (comma && (!comma[1] || strchr(comma + 1, ','))))
        return kp_err_set(err, "--nodes: '%s' is not A or A,B", v);
    free(o->node_a);
    free(o->node_b);
    o->node_a = comma ? kp_xstrndup(v, (size_t)(comma - v)) : kp_xstrdup(v);
    o->node_b = comma ? kp_xstrdup(comma + 1) : NULL;
    if (o->node_b && strcmp(o->node_a, o->node_b) == 0)
        return kp_err_set(err, "--nodes: A and B must be two different nodes");
    return 0;
}

static int handle_k8s(struct run_options *o, const struct flag *f, const char *v,
                      struct kp_err *err)
{
    long n = 0;

    switch (f->id) {
    case F_KUBECONFIG:
        set_str(&o->kubeconfig, v);
        return 0;
    case F_CONTEXT:
        set_str(&o->context, v);
        return 0;
    case F_NAMESPACE:
        set_str(&o->namespace_name, v);
        return 0;
    case F_IMAGE:
        set_str(&o->image, v);
        return 0;
    case F_PULL_SECRET:
        set_str(&o->image_pull_secret, v);
        return 0;
    case F_PULL_POLICY:
        if (strcmp(v, "Always") && strcmp(v, "IfNotPresent") && strcmp(v, "Never"))
            return kp_err_set(err, "--image-pull-policy: '%s' is not Always, IfNotPresent or Never",
                              v);
        set_str(&o->image_pull_policy, v);
        return 0;
    case F_NODE_SELECTOR:
        return for_each_item(v, add_label, o, err);
    case F_TOLERATIONS:
        return for_each_item(v, add_toleration, o, err);
    case F_NODES:
        return handle_nodes(o, v, err);
    case F_NODES_FROM:
        set_str(&o->nodes_from, v);
        return 0;
    case F_PORT:
        if (parse_int(v, 1, 65535, &n, f->name, err) != 0)
            return -1;
        o->port = (int)n;
        return 0;
    case F_EXTERNAL:
        free(o->external_host);
        o->external_host = NULL;
        return parse_host_port(v, &o->external_host, &o->external_port, err);
    case F_KEEP:
        o->keep = true;
        return 0;
    case F_CLEANUP_LEFTOVERS:
        o->cleanup_leftovers = true;
        return 0;
    default: /* F_ALL_NODES */
        o->all_nodes = true;
        return 0;
    }
}

typedef int flag_handler_fn(struct run_options *o, const struct flag *f, const char *v,
                            struct kp_err *err);

static flag_handler_fn *const handlers[G_COUNT] = {
    handle_what, handle_measure, handle_output, handle_local, handle_k8s,
};

/* ---- the parser ---- */

static const struct flag *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    return NULL;
}

static const struct flag *find_short(char c)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (flags[i].short_name == c)
            return &flags[i];
    return NULL;
}

/* Checks that combine flags. */
static int validate(struct run_options *o, bool k8s_flag_given, const char *k8s_flag,
                    struct kp_err *err)
{
    o->placements &= ~PLACEMENT_GIVEN;
    if (o->local && k8s_flag_given)
        return kp_err_set(err, "--%s is a Kubernetes flag; it does not apply with --local",
                          k8s_flag);
    if (!o->local && o->mtu != 1500)
        return kp_err_set(err, "--mtu applies to --local only (a cluster's MTU is its own)");
    if (o->node_a && o->nodes_from)
        return kp_err_set(err, "--nodes and --nodes-from cannot be used together");
    if (o->omit_ms >= 3600000)
        return kp_err_set(err, "--omit: must be below 1h");
    if (o->interval_ms && o->interval_ms > o->duration_ms) {
        if (o->interval_ms != 1000)
            return kp_err_set(err, "--interval: longer than --duration");
        o->interval_ms = 0; /* the default series does not fit a sub-second run: none */
    }
    return 0;
}

/* Parses one argument (and maybe its value from argv[*i + 1]). Returns 0, 1 for help, -1. */
static int parse_one(struct run_options *o, int argc, char **argv, int *i, const char **k8s_flag,
                     struct kp_err *err)
{
    const char *a = argv[*i];
    const struct flag *f = NULL;
    const char *val = NULL;

    if (a[0] != '-' || !a[1])
        return kp_err_set(err, "unexpected argument '%s' (kperf run takes flags only)", a);
    if (a[1] == '-') {
        const char *eq = strchr(a + 2, '=');
        f = find_long(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
        if (f && eq)
            val = eq + 1;
    } else {
        f = find_short(a[1]);
        if (f && a[2]) {
            if (!f->arg && f->id == F_VERBOSE && strspn(a + 1, "v") == strlen(a + 1)) {
                o->verbose += (int)strlen(a + 1);
                return 0;
            }
            val = a[2] == '=' ? a + 3 : a + 2;
        }
    }
    if (!f)
        return kp_err_set(err, "unknown flag '%s'. Run 'kperf run --help' for the list", a);
    if (f->id == F_HELP)
        return 1;
    if (!f->arg && val)
        return kp_err_set(err, "--%s takes no value", f->name);
    if (f->arg && !val) {
        if (*i + 1 >= argc)
            return kp_err_set(err, "--%s needs a value (%s)", f->name, f->arg);
        val = argv[++*i];
    }
    if (f->group == G_K8S)
        *k8s_flag = f->name;
    return handlers[f->group](o, f, val, err);
}

int run_options_parse(struct run_options *o, int argc, char **argv, FILE *out, struct kp_err *err)
{
    const char *k8s_flag = NULL;

    o->argc = argc;
    o->argv = argv;
    for (int i = 1; i < argc; i++) {
        int rc = parse_one(o, argc, argv, &i, &k8s_flag, err);
        if (rc == 1) {
            run_options_help(out);
            return 1;
        }
        if (rc != 0)
            return -1;
    }
    return validate(o, k8s_flag != NULL, k8s_flag, err);
}

void run_options_help(FILE *f)
{
    fprintf(f, "Usage: kperf run [flags]\n\n"
               "Measures pod networking: scenarios x placements x tests x samples, one at a "
               "time,\nthen prints a report on stdout (progress goes to stderr).\n"
               "Without --local it runs in the cluster of the current kubeconfig context.\n");
    for (int g = 0; g < G_COUNT; g++) {
        fprintf(f, "\n%s:\n", group_titles[g]);
        for (size_t i = 0; i < N_FLAGS; i++) {
            const struct flag *fl = &flags[i];
            char lhs[64];
            const char *h = fl->help;

            if ((int)fl->group != g)
                continue;
            snprintf(lhs, sizeof(lhs), "%s%c%s--%s%s%s", fl->short_name ? "-" : "   ",
                     fl->short_name ? fl->short_name : ' ', fl->short_name ? ", " : "", fl->name,
                     fl->arg ? " " : "", fl->arg ? fl->arg : "");
            /* multi-line help: continuation lines aligned under the first */
            while (h) {
                const char *nl = strchr(h, '\n');
                int len = nl ? (int)(nl - h) : (int)strlen(h);
                fprintf(f, "  %-34s %.*s\n", lhs, len, h);
                lhs[0] = '\0';
                h = nl ? nl + 1 : NULL;
            }
        }
    }
    fprintf(f, "\nDurations: 500ms, 10s, 2m. Sizes: 64, 1K, 1M. Rates: 100M, 1G (bit/s).\n"
               "Exit status: 0 ok, 1 error (a measurement failed, cleanup failed), 2 usage,\n"
               "130 interrupted by SIGINT, 143 by SIGTERM (what was measured is still "
               "printed).\n"
               "\nExamples:\n"
               "  kperf run --scenarios all --local\n"
               "  kperf run --scenarios all --duration 30s --samples 5 -o json > base.json\n"
               "  kperf run --nodes-from base.json --output-dir out/\n");
}

void run_spec_init(struct run_spec *spec, const struct run_options *ro, const struct plan_group *g,
                   const enum test_kind *tests, size_t n_tests, int samples)
{
    *spec = (struct run_spec){
        .group = g,
        .tests = tests,
        .n_tests = n_tests,
        .samples = samples,
        .duration_ms = ro->duration_ms,
        .omit_ms = ro->omit_ms,
        .interval_ms = ro->interval_ms,
        .streams = ro->streams,
        .msg_size_bytes = ro->msg_size_bytes,
        .udp_rate_bps = ro->udp_rate_bps,
    };
}
