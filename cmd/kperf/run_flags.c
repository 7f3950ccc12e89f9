/* SPDX-License-Identifier: Apache-2.0 */
/* run_flags.c - see run_flags.h. One table describes every flag (name, argument, group, help);
 * each group has a small handler. --help is generated from the same table, so the two never
 * disagree. */
#include "cmd/kperf/run_flags.h"
#include "cmd/kperf/run_flags_podtmpl.h"
#include "cmd/kperf/run_values.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/testkind.h"
#include "base/token.h"
#include "base/units.h"
#include "controller/plan.h"
#include "controller/report/pushgw.h"
#include "controller/run_options.h"

enum flag_id {
    F_SCENARIOS,
    F_TESTS,
    F_UNDER_LOAD,
    F_NETPOL_RULES,
    F_NETPOL_READINESS,
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
    F_NO_COUNTERS,
    F_PROFILE,
    F_CAPACITY,
    F_OUTPUT,
    F_OUTPUT_DIR,
    F_HISTORY,
    F_PUSH_GATEWAY,
    F_PUSH_PASSWORD_FILE,
    F_TERMINATION_PATH,
    F_CLUSTER_NAME,
    F_KEEP_RUNS,
    F_VERBOSE,
    F_LOCAL,
    F_MTU,
    F_IP_FAMILY,
    F_LOCAL_FAULT,
    F_CNI_CONF,
    F_CNI_PATH,
    F_KUBECONFIG,
    F_CONTEXT,
    F_NAMESPACE,
    F_HOST_NAMESPACE,
    F_IMAGE,
    F_PULL_SECRET,
    F_PULL_POLICY,
    F_NODE_SELECTOR,
    F_TOLERATIONS,
    F_NODES,
    F_NODES_FROM,
    F_ARCH,
    F_PORT,
    F_EXTERNAL,
    F_EXTERNAL_TOKEN,
    F_KEEP,
    F_CLEANUP_LEFTOVERS,
    F_LEASE_DURATION,
    F_WAIT_FOR_LOCK,
    F_AGENT_MAX_IDLE,
    F_ALL_NODES,
    F_PARALLEL,
    F_CONFIRM_OUTLIERS,
    F_POD_CHURN,
    F_SERVICES,
};

enum flag_group {
    G_WHAT,
    G_MEASURE,
    G_OUTPUT,
    G_LOCAL,
    G_K8S,
    G_POD,
    G_COUNT,
};

/* While parsing: the options, and what only the command line tells. */
struct run_parse {
    struct run_options *o;
    const char *k8s_flag; /* the last Kubernetes flag given; NULL = none */
    bool placement_given; /* --same-node or --other-node given: only those placements */
    bool under_load;      /* --under-load: TCP_RR and TCP_RR_LOADED join the tests */
};

static const char *const output_names[] = {"table", "markdown", "json", "csv"};

/* ---- one handler per group ---- */

static int handle_what(struct run_parse *p, const struct flag *f, const char *v, struct kp_err *err)
{
    struct run_options *o = p->o;
    unsigned mask = 0;

    switch (f->id) {
    case F_NETPOL_READINESS:
        o->netpol_readiness = true;
        return 0;
    case F_SCENARIOS:
        if (rv_for_each_item(v, rv_add_scenario, &mask, err) != 0)
            return -1;
        if (!mask)
            return kp_err_set(err, "--scenarios: empty list");
        o->scenarios = mask;
        return 0;
    case F_TESTS:
        if (rv_for_each_item(v, rv_add_test, &mask, err) != 0)
            return -1;
        if (!mask)
            return kp_err_set(err, "--tests: empty list");
        o->tests = mask;
        return 0;
    case F_NETPOL_RULES:
        o->n_netpol_rules = 0;
        if (rv_for_each_item(v, rv_add_netpol_level, o, err) != 0)
            return -1;
        if (!o->n_netpol_rules)
            return kp_err_set(err, "--netpol-rules: empty list");
        return 0;
    case F_UNDER_LOAD: /* applied after parsing: the order of --tests does not matter */
        p->under_load = true;
        return 0;
    default: /* --same-node, --other-node: giving one selects only it */
        if (!p->placement_given)
            o->placements = 0;
        p->placement_given = true;
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

static int handle_measure(struct run_parse *p, const struct flag *f, const char *v,
                          struct kp_err *err)
{
    struct run_options *o = p->o;
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
    case F_NO_COUNTERS:
        o->no_counters = true;
        return 0;
    case F_PROFILE:
        return rv_for_each_item(v, rv_add_profile_row, o, err);
    case F_CAPACITY:
        o->capacity = true;
        return 0;
    case F_SAMPLES:
        o->samples_auto = strcmp(v, "auto") == 0;
        if (o->samples_auto) {
            o->samples = 3;
            o->samples_max = 10;
            return 0;
        }
        if (rv_parse_int(v, 1, 100, &n, f->name, NULL) != 0)
            return kp_err_set(err, "--%s: '%s' is not a whole number in [1, 100] or 'auto'",
                              f->name, v);
        o->samples = o->samples_max = (int)n;
        return 0;
    case F_STREAMS:
        if (rv_parse_int(v, 1, 128, &n, f->name, err) != 0)
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

static int handle_output(struct run_parse *p, const struct flag *f, const char *v,
                         struct kp_err *err)
{
    struct run_options *o = p->o;
    long n = 0;

    switch (f->id) {
    case F_OUTPUT:
        for (int i = 0; i < 4; i++) {
            if (strcmp(v, output_names[i]) == 0 || (i == 1 && strcmp(v, "md") == 0)) {
                o->output = (enum run_output)i;
                return 0;
            }
        }
        if (strcmp(v, "openmetrics") == 0) {
            o->output = RUN_OUTPUT_OPENMETRICS;
            return 0;
        }
        return kp_err_set(
            err, "--output: unknown format '%s' (table, markdown, json, csv, openmetrics)", v);
    case F_OUTPUT_DIR:
        if (!v[0])
            return kp_err_set(err, "--output-dir: empty path");
        free(o->output_dir);
        o->output_dir = kp_xstrdup(v);
        return 0;
    case F_HISTORY:
        if (!v[0])
            return kp_err_set(err, "--history: empty path");
        free(o->history_dir);
        o->history_dir = kp_xstrdup(v);
        return 0;
    case F_PUSH_GATEWAY:
        if (pushgw_url_check(v, err) != 0)
            return -1;
        free(o->push_gateway);
        o->push_gateway = kp_xstrdup(v);
        return 0;
    case F_PUSH_PASSWORD_FILE:
        if (!v[0])
            return kp_err_set(err, "--%s: empty path", f->name);
        free(o->push_gateway_password_file);
        o->push_gateway_password_file = kp_xstrdup(v);
        return 0;
    case F_TERMINATION_PATH:
        free(o->termination_message_path);
        o->termination_message_path = kp_xstrdup(v);
        return 0;
    case F_KEEP_RUNS:
        if (rv_parse_int(v, 1, 100000, &n, f->name, err) != 0)
            return -1;
        o->keep_runs = (unsigned)n;
        return 0;
    case F_CLUSTER_NAME:
        if (!v[0])
            return kp_err_set(err, "--cluster-name: empty name");
        free(o->cluster_name);
        o->cluster_name = kp_xstrdup(v);
        return 0;
    default: /* F_VERBOSE (-vv: called twice); F_HELP is the parser's */
        o->verbose++;
        return 0;
    }
}

static void set_str(char **dst, const char *v);

static int handle_local(struct run_parse *p, const struct flag *f, const char *v,
                        struct kp_err *err)
{
    struct run_options *o = p->o;
    long n = 0;

    if (f->id == F_LOCAL) {
        o->local = true;
        return 0;
    }
    if (f->id == F_IP_FAMILY) {
        if (strcmp(v, "ipv4") == 0)
            o->ip_family = RUN_IPV4;
        else if (strcmp(v, "ipv6") == 0)
            o->ip_family = RUN_IPV6;
        else if (strcmp(v, "both") == 0)
            o->ip_family = RUN_IP_BOTH;
        else
            return kp_err_set(err, "--ip-family: unknown family '%s' (ipv4, ipv6 or both)", v);
        return 0;
    }
    if (f->id == F_LOCAL_FAULT) { /* checked by local_fault_parse when the backend starts */
        if (o->n_local_faults >= 16)
            return kp_err_set(err, "--local-fault: at most 16");
        o->local_faults =
            kp_xrealloc(o->local_faults, (o->n_local_faults + 1) * sizeof(*o->local_faults));
        o->local_faults[o->n_local_faults++] = kp_xstrdup(v);
        return 0;
    }
    if (f->id == F_CNI_CONF || f->id == F_CNI_PATH) { /* read when the backend starts */
        if (!v[0])
            return kp_err_set(err, "--%s: empty", f->name);
        set_str(f->id == F_CNI_CONF ? &o->cni_conf : &o->cni_path, v);
        return 0;
    }
    if (rv_parse_int(v, 576, 65000, &n, f->name, err) != 0)
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

static int handle_k8s(struct run_parse *p, const struct flag *f, const char *v, struct kp_err *err)
{
    struct run_options *o = p->o;
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
    case F_HOST_NAMESPACE:
        set_str(&o->host_namespace_name, v);
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
        return rv_for_each_item(v, rv_add_label, o, err);
    case F_TOLERATIONS:
        return rv_for_each_item(v, rv_add_toleration, o, err);
    case F_NODES:
        return handle_nodes(o, v, err);
    case F_NODES_FROM:
        set_str(&o->nodes_from, v);
        return 0;
    case F_ARCH: /* docs/kubernetes.md "Node architectures" */
        if (strcmp(v, "amd64") && strcmp(v, "arm64") && strcmp(v, "any") && strcmp(v, "mixed"))
            return kp_err_set(err, "--arch: '%s' is not amd64, arm64, any or mixed", v);
        set_str(&o->arch, v);
        return 0;
    case F_PORT:
        if (rv_parse_int(v, 1, 65535, &n, f->name, err) != 0)
            return -1;
        o->port = (int)n;
        return 0;
    case F_EXTERNAL:
        free(o->external_host);
        o->external_host = NULL;
        return rv_parse_host_port(v, &o->external_host, &o->external_port, err);
    case F_EXTERNAL_TOKEN:
        /* read now, as the agent reads it (base/token.h): a bad file is a usage error before
         * anything is deployed, and the Kubernetes backend puts the bytes in the run's Secret */
        set_str(&o->external_token_file, v);
        kp_free_secret(o->external_token);
        o->external_token = NULL;
        if (token_read(v, &o->external_token, &o->external_token_len, err) != 0)
            return kp_err_prefix(err, "--%s", f->name);
        return 0;
    case F_KEEP:
        o->keep = true;
        return 0;
    case F_CLEANUP_LEFTOVERS:
        o->cleanup_leftovers = true;
        return 0;
    case F_LEASE_DURATION:
        if (handle_duration(v, 3000, &o->lease_ms, f->name, err) != 0)
            return -1;
        if (o->lease_ms > 3600000)
            return kp_err_set(err, "--%s: '%s' is longer than 1h", f->name, v);
        return 0;
    case F_WAIT_FOR_LOCK:
        return handle_duration(v, 1000, &o->wait_lock_ms, f->name, err);
    case F_AGENT_MAX_IDLE:
        return handle_duration(v, 5000, &o->agent_max_idle_ms, f->name, err);
    case F_PARALLEL:
        if (rv_parse_int(v, 1, 64, &n, f->name, err) != 0)
            return -1;
        o->parallel = (int)n;
        return 0;
    case F_CONFIRM_OUTLIERS:
        if (rv_parse_int(v, 0, 64, &n, f->name, err) != 0)
            return -1;
        o->confirm_outliers = (int)n;
        return 0;
    case F_POD_CHURN:
        if (rv_parse_int(v, 0, 100, &n, f->name, err) != 0)
            return -1;
        o->pod_churn = (int)n;
        return 0;
    case F_SERVICES:
        return rv_set_services(o, v, err);
    default: /* F_ALL_NODES */
        o->all_nodes = true;
        return 0;
    }
}

static int handle_pod(struct run_parse *p, const struct flag *f, const char *v, struct kp_err *err)
{
    return run_flags_pod(p->o, f->id, f->name, v, err);
}

typedef int group_handler_fn(struct run_parse *p, const struct flag *f, const char *v,
                             struct kp_err *err);

static group_handler_fn *const handlers[G_COUNT] = {
    handle_what, handle_measure, handle_output, handle_local, handle_k8s, handle_pod,
};

/* The handler of every row: that of its group. */
static int dispatch(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    struct run_parse *p = ctx;

    /* --external-token-file and --pod-churn serve --local too */
    if ((f->group == G_K8S && f->id != F_EXTERNAL_TOKEN && f->id != F_POD_CHURN) ||
        f->group == G_POD || f->id == F_NETPOL_READINESS)
        p->k8s_flag = f->name;
    return handlers[f->group](p, f, v, err);
}

/* ---- the table ---- */

#define RUN_FLAG(grp, ident, nm, sh, metavar, text)                                                \
    {                                                                                              \
        .name = nm, .short_name = sh, .arg = metavar, .help = text, .group = grp, .id = ident,     \
        .fn = dispatch                                                                             \
    }

static const struct flag run_flags[] = {
    RUN_FLAG(G_WHAT, F_SCENARIOS, "scenarios", 0, "LIST",
             "all, or a comma list of pod-to-pod,host-to-host,\n"
             "pod-to-service,pod-to-external,pod-to-dns (default\n"
             "pod-to-pod; all is every one but pod-to-dns)"),
    RUN_FLAG(G_WHAT, F_TESTS, "tests", 0, "LIST",
             "all (six), or a comma list of TCP_RR,TCP_CRR,UDP_RR,\n"
             "TCP_STREAM,TCP_STREAM_MULTI,UDP_STREAM,TCP_RR_LOADED\n"
             "(default TCP_RR,TCP_STREAM,TCP_STREAM_MULTI)"),
    RUN_FLAG(G_WHAT, F_UNDER_LOAD, "under-load", 0, NULL,
             "also latency under load on every path: TCP_RR while a\n"
             "TCP_STREAM_MULTI fills the same path (TCP_RR_LOADED),\n"
             "beside the idle TCP_RR it is compared with"),
    RUN_FLAG(G_WHAT, F_NETPOL_RULES, "netpol-rules", 0, "LIST",
             "also measure the pod rows with a NetworkPolicy of N\n"
             "rules selecting the servers, for each N of the list\n"
             "(e.g. 0,1,100,1000: rows \"same-node/netpol-100\")"),
    RUN_FLAG(G_WHAT, F_NETPOL_READINESS, "netpol-readiness", 0, NULL,
             "after the rows, time per node how fast a deny-all and\n"
             "then an allow NetworkPolicy take effect (Kubernetes\n"
             "only; metadata.netpol, docs/report.md)"),
    RUN_FLAG(G_WHAT, F_SAME_NODE, "same-node", 0, NULL,
             "client and server on one node (both placements run\n"
             "unless --same-node or --other-node is given)"),
    RUN_FLAG(G_WHAT, F_OTHER_NODE, "other-node", 0, NULL,
             "client and server on two different nodes"),
    RUN_FLAG(G_MEASURE, F_DURATION, "duration", 0, "DUR",
             "length of each test sample (default 10s)"),
    RUN_FLAG(G_MEASURE, F_SAMPLES, "samples", 0, "N|auto",
             "samples per test (default 1); auto: 3 to 10 samples,\n"
             "until the 95% interval of the mean is within 5%"),
    RUN_FLAG(G_MEASURE, F_STREAMS, "streams", 0, "N",
             "parallel streams of TCP_STREAM_MULTI (default 4)"),
    RUN_FLAG(G_MEASURE, F_MSG_SIZE, "msg-size", 0, "SIZE",
             "message size (RR tests default 1, streams default 128K)"),
    RUN_FLAG(G_MEASURE, F_UDP_RATE, "udp-rate", 0, "RATE",
             "UDP_STREAM target rate, bit/s (default 1G)"),
    RUN_FLAG(G_MEASURE, F_OMIT, "omit", 0, "DUR",
             "warm-up discarded before each sample (default 0)"),
    RUN_FLAG(G_MEASURE, F_INTERVAL, "interval", 0, "DUR",
             "time-series interval in the JSON (default 1s)"),
    RUN_FLAG(G_MEASURE, F_NO_COUNTERS, "no-counters", 0, NULL,
             "read no kernel and NIC counters around each measurement\n"
             "(the rows' evidence; docs/report.md)"),
    RUN_FLAG(G_MEASURE, F_PROFILE, "profile", 0, "ROWS",
             "sample the kernel's CPU time during these rows (off by\n"
             "default; needs CAP_PERFMON): all, or a comma list of\n"
             "[SCENARIO/[PLACEMENT/]]TEST patterns, e.g. TCP_STREAM or\n"
             "pod-to-pod/other-node/TCP_*; docs/profile.md"),
    RUN_FLAG(G_MEASURE, F_CAPACITY, "capacity", 0, NULL,
             "after each TCP_CRR row, ramp concurrent TCP_CRR clients\n"
             "(1, 2, 4 ... 64, one --duration each) until over 0.1% of\n"
             "connections fail or p99 doubles: the row's maximum\n"
             "conn/s and the counter that moved first (adds TCP_CRR)"),
    RUN_FLAG(G_MEASURE, F_TIMEOUT, "timeout", 0, "DUR",
             "bound on each wait beyond the measurement itself\n"
             "(start-up, servers ready, a client finishing; default 2m)\n"
             "and on the API client's retries: once the API server\n"
             "has failed every request for DUR, the run ends (within\n"
             "about 2x DUR of the failures' start, cleanup included)"),
    RUN_FLAG(G_OUTPUT, F_OUTPUT, "output", 'o', "FORMAT",
             "table (default), markdown, json, csv or openmetrics"),
    RUN_FLAG(G_OUTPUT, F_OUTPUT_DIR, "output-dir", 0, "DIR",
             "also write report.json, .md, .csv and .html into DIR\n"
             "({time} in DIR: the run's start, YYYYMMDDTHHMMSSZ)"),
    RUN_FLAG(G_OUTPUT, F_HISTORY, "history", 0, "DIR",
             "also keep the report in a history directory (kperf history,\n"
             "compare --baseline); configmap:NAME keeps it in ConfigMaps\n"
             "of the namespace (-n) instead: no volume needed"),
    RUN_FLAG(G_OUTPUT, F_KEEP_RUNS, "keep-runs", 0, "N",
             "with --output-dir DIR/{time} (a folder per run, named\n"
             "after its start): keep the newest N run folders of DIR\n"
             "and point DIR/latest at this run; with --history DIR,\n"
             "keep N runs per CNI version folder (default 30)"),
    RUN_FLAG(G_OUTPUT, F_PUSH_GATEWAY, "push-gateway", 0, "URL",
             "also PUT the metrics (OpenMetrics) to this Prometheus\n"
             "Pushgateway, job kperf, instance = the cluster name;\n"
             "https://USER@host with the password in a file or\n"
             "$KPERF_PUSHGATEWAY_PASSWORD (a password in the URL\n"
             "works too, but shows in ps; never in outputs)"),
    RUN_FLAG(G_OUTPUT, F_PUSH_PASSWORD_FILE, "push-gateway-password-file", 0, "FILE",
             "the Pushgateway's basic-auth password: the bytes of\n"
             "FILE less one trailing newline (beats the variable\n"
             "and the URL's)"),
    RUN_FLAG(G_OUTPUT, F_TERMINATION_PATH, "termination-message-path", 0, "FILE",
             "write the run's one-line outcome there (default\n"
             "/dev/termination-log in a pod; '' for none)"),
    RUN_FLAG(G_OUTPUT, F_CLUSTER_NAME, "cluster-name", 0, "NAME",
             "the report's cluster (metric label, Pushgateway\n"
             "instance; default local for --local, else default)"),
    RUN_FLAG(G_OUTPUT, F_VERBOSE, "verbose", 'v', NULL, "more diagnostics on stderr (-vv: debug)"),
    {.name = "help",
     .short_name = 'h',
     .help = "show this help",
     .group = G_OUTPUT,
     .kind = FLAG_HELP},
    RUN_FLAG(G_LOCAL, F_LOCAL, "local", 0, NULL,
             "measure on this machine: network namespaces as nodes\n"
             "and pods (needs root; see docs/local-backend.md)"),
    RUN_FLAG(G_LOCAL, F_MTU, "mtu", 0, "BYTES",
             "MTU of every local link (default 1500; 9001 = jumbo)"),
    RUN_FLAG(G_LOCAL, F_IP_FAMILY, "ip-family", 0, "FAMILY",
             "ipv4, ipv6 or both: the address families measured\n"
             "(default: every family of the cluster; ipv4 with --local,\n"
             "whose cluster is dual-stack, IPv6 from 2001:2::/48)"),
    RUN_FLAG(G_LOCAL, F_CNI_CONF, "cni-conf", 0, "FILE",
             "make the pods' network with this CNI conflist, its\n"
             "plugins called as a container runtime does (ADD, DEL);\n"
             "the report names the plugins and their versions"),
    RUN_FLAG(G_LOCAL, F_CNI_PATH, "cni-path", 0, "DIRS",
             "where --cni-conf's plugins are (default\n"
             "/opt/cni/bin:/usr/lib/cni)"),
    /* test-only, not in --help: docs/local-backend.md "Injected faults" */
    RUN_FLAG(G_LOCAL, F_LOCAL_FAULT, "local-fault", 0, "SPEC", NULL),
    RUN_FLAG(G_K8S, F_KUBECONFIG, "kubeconfig", 0, "FILE",
             "kubeconfig (default $KUBECONFIG, ~/.kube/config)"),
    RUN_FLAG(G_K8S, F_CONTEXT, "context", 0, "NAME",
             "kubeconfig context (default current-context)"),
    RUN_FLAG(G_K8S, F_NAMESPACE, "namespace", 'n', "NS",
             "use this existing namespace (default: create kperf-<run-id>)"),
    RUN_FLAG(G_K8S, F_HOST_NAMESPACE, "host-namespace", 0, "NS",
             "put the host-network agents in this existing (privileged)\n"
             "namespace; the rest stays in -n's (default: -n's)"),
    RUN_FLAG(G_K8S, F_IMAGE, "image", 0, "IMAGE",
             "kperf-agent image (registry mirrors, air-gapped)"),
    RUN_FLAG(G_K8S, F_PULL_SECRET, "image-pull-secret", 0, "[NS/]NAME",
             "pull secret for agent pods; without -n, copied into the\n"
             "run's namespace from NS (default: the context's)"),
    RUN_FLAG(G_K8S, F_PULL_POLICY, "image-pull-policy", 0, "POLICY",
             "Always, IfNotPresent or Never"),
    RUN_FLAG(G_K8S, F_NODE_SELECTOR, "node-selector", 0, "K=V,...", "only nodes with these labels"),
    RUN_FLAG(G_K8S, F_TOLERATIONS, "tolerations", 0, "K[=V][:EFFECT],...",
             "tolerate these taints (also for node choice)"),
    RUN_FLAG(G_K8S, F_NODES, "nodes", 0, "A,B",
             "server node A, other-node client B (same-node uses A)"),
    RUN_FLAG(G_K8S, F_NODES_FROM, "nodes-from", 0, "REPORT.json",
             "use the node pair of an earlier report"),
    RUN_FLAG(G_K8S, F_ARCH, "arch", 0, "ARCH",
             "amd64, arm64, any or mixed: the nodes' CPU architecture\n"
             "(default: A's, else the most common; any: pairs may\n"
             "mix; mixed: B of another architecture than A)"),
    RUN_FLAG(G_K8S, F_PORT, "port", 0, "PORT",
             "agent server port (default " TESTKIND_DEFAULT_PORT_TEXT ")"),
    RUN_FLAG(G_K8S, F_EXTERNAL, "external-server", 0, "HOST[:PORT]",
             "a kperf-agent server outside the cluster, for pod-to-external\n"
             "(a name is resolved here, by --ip-family)"),
    RUN_FLAG(G_K8S, F_EXTERNAL_TOKEN, "external-token-file", 0, "FILE",
             "the token the external kperf-agent was started with\n"
             "(--token-file FILE there); without it that agent must\n"
             "run without a token. Also with --local"),
    RUN_FLAG(G_K8S, F_KEEP, "keep", 0, NULL, "leave the objects in place for debugging"),
    RUN_FLAG(G_K8S, F_CLEANUP_LEFTOVERS, "cleanup-leftovers", 0, NULL,
             "remove objects of earlier kperf runs before starting"),
    RUN_FLAG(G_K8S, F_LEASE_DURATION, "lease-duration", 0, "DUR",
             "the run's Lease lasts DUR, renewed every DUR/3\n"
             "(default 30s, min 3s); a run whose Lease expired\n"
             "(killed controller) is removed by the next run"),
    RUN_FLAG(G_K8S, F_WAIT_FOR_LOCK, "wait-for-lock", 0, "DUR",
             "when another run holds the cluster lock, wait up\n"
             "to DUR for it (default: refuse at once, exit 1)"),
    RUN_FLAG(G_K8S, F_AGENT_MAX_IDLE, "agent-max-idle", 0, "DUR",
             "servers stop listening after DUR without a test\n"
             "(their run is gone; default 2 x --timeout + 30s)"),
    RUN_FLAG(G_K8S, F_ALL_NODES, "all-nodes", 0, NULL,
             "sweep: every node in ring pairs (client of one\n"
             "pair, server of the next), one row per node and a\n"
             "verdict (outlier or not) per node"),
    RUN_FLAG(G_K8S, F_PARALLEL, "parallel", 0, "N",
             "sweep: node-disjoint pairs measured at once\n"
             "(1..64, default 4)"),
    RUN_FLAG(G_K8S, F_CONFIRM_OUTLIERS, "confirm-outliers", 0, "N",
             "sweep: re-measure the pairs of up to N flagged\n"
             "nodes, one pair at a time, before the verdict\n"
             "(0..64, default 8; 0 = no second look)"),
    RUN_FLAG(G_K8S, F_POD_CHURN, "pod-churn", 0, "N",
             "pod network readiness under a burst: N short-\n"
             "lived client pods per node at once (0..100,\n"
             "default 0 = none), removed at the end; with\n"
             "--local: N pods per node one at a time\n"
             "(default 3, 0 = none)"),
    RUN_FLAG(G_K8S, F_SERVICES, "services", 0, "N[,N...]",
             "N extra Services selecting the servers (0..\n"
             "20000, default 0), created at up to 100 per\n"
             "second; then the Service programming latency\n"
             "per node; several sizes (e.g. 0,1000,5000):\n"
             "pod-to-service rows at each, \"same-node/\n"
             "services-1000\" (docs/kubernetes.md)"),
    RUN_FLAG(G_POD, RUN_POD_LABELS, "pod-labels", 0, "K=V,...",
             "labels on every agent pod (not kperf's own)"),
    RUN_FLAG(G_POD, RUN_POD_ANNOTATIONS, "pod-annotations", 0, "K=V,...",
             "annotations on every agent pod"),
    RUN_FLAG(G_POD, RUN_POD_PRIORITY_CLASS, "priority-class", 0, "NAME",
             "priorityClassName of every agent pod"),
    RUN_FLAG(G_POD, RUN_POD_REQUESTS, "agent-requests", 0, "RES=Q,...",
             "the agent container's requests, RES cpu, memory or\n"
             "ephemeral-storage (default cpu=100m,memory=64Mi;\n"
             "a key not given keeps its default)"),
    RUN_FLAG(G_POD, RUN_POD_LIMITS, "agent-limits", 0, "RES=Q,...",
             "the agent container's limits (default memory=512Mi;\n"
             "a CPU limit throttles the agent and skews the figures)"),
    RUN_FLAG(G_POD, RUN_POD_OVERLAY, "pod-overlay", 0, "FILE",
             "YAML/JSON patch of every agent pod template (metadata,\n"
             "spec): maps merge, containers merge by name, other lists\n"
             "replace, null deletes (docs/kubernetes.md)"),
};

#define N_RUN_FLAGS (sizeof(run_flags) / sizeof(run_flags[0]))

const struct flag *run_flags_table(size_t *n)
{
    *n = N_RUN_FLAGS;
    return run_flags;
}

static const char *const group_titles[G_COUNT] = {
    "What to measure",
    "How to measure",
    "Output",
    "Local backend (--local)",
    "Kubernetes backend (default)",
    "Agent pods (Kubernetes)",
};

/* Everything of `kperf run` but its tables (their ctx is per parse). */
static const struct flags_cmd run_cmd = {
    .name = "kperf run",
    .usage = "Usage: kperf run [flags]\n\n"
             "Measures pod networking: scenarios x placements x tests x samples, one at a time,\n"
             "then prints a report on stdout (progress goes to stderr).\n"
             "Without --local it runs in the cluster of the current kubeconfig context.\n",
    .groups = group_titles,
    .n_groups = G_COUNT,
    .footer = "\nDurations: 500ms, 10s, 2m. Sizes: 64, 1K, 1M. Rates: 100M, 1G (bit/s).\n"
              "Exit status: 0 ok, 1 error (a measurement failed, cleanup failed), 2 usage,\n"
              "130 interrupted by SIGINT, 143 by SIGTERM (what was measured is still printed).\n"
              "\nExamples:\n"
              "  kperf run --scenarios all --local\n"
              "  kperf run --scenarios all --duration 30s --samples 5 -o json > base.json\n"
              "  kperf run --nodes-from base.json --output-dir out/\n",
    .help_width = 34,
};

/* ---- parsing ---- */

int run_flags_parse_as(const struct flags_cmd *cmd, struct run_options *o, int argc, char **argv,
                       struct kp_err *err)
{
    struct run_parse p = {.o = o};
    struct flags_cmd c = *cmd;
    size_t t = 0;
    int rc;

    while (t < FLAGS_MAX_TABLES - 1 && c.tables[t].flags)
        t++;
    c.tables[t] = (struct flags_table){run_flags, N_RUN_FLAGS, &p};
    o->argc = argc;
    o->argv = argv;
    rc = flags_parse(&c, argc, argv, NULL, err);
    if (rc != 0)
        return rc;
    if (p.under_load)
        o->tests |= (1u << TEST_TCP_RR) | (1u << TEST_TCP_RR_LOADED);
    if (o->local && p.k8s_flag) {
        kp_err_set(err, "--%s is a Kubernetes flag; it does not apply with --local", p.k8s_flag);
        return flags_hint(&c, err);
    }
    if (run_options_validate(o, err) != 0)
        return flags_hint(&c, err);
    /* read now: a bad file is a usage error before anything is measured */
    if (o->push_gateway &&
        pushgw_password(o->push_gateway_password_file, &o->push_gateway_password, err) != 0)
        return kp_err_prefix(err, "--push-gateway-password-file");
    return 0;
}

int run_flags_parse(struct run_options *o, int argc, char **argv, struct kp_err *err)
{
    return run_flags_parse_as(&run_cmd, o, argc, argv, err);
}

void run_flags_help(FILE *f)
{
    struct flags_cmd c = run_cmd;

    c.tables[0] = (struct flags_table){run_flags, N_RUN_FLAGS, NULL};
    flags_help(f, &c);
}
