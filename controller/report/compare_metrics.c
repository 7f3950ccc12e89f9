/* SPDX-License-Identifier: Apache-2.0 */
/* compare_metrics.c - the metric table of kperf compare, per-sample extraction and thresholds. */
#include "controller/report/compare_metrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/yaml_load.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_load.h"
#include "controller/report/report_pack.h"
#include "controller/report/stats.h"

static const char *const group_names[CMP_GROUPS] = {
    "latency", "p999",   "ops",      "conn",      "throughput", "retransmits",
    "loss",    "jitter", "node_cpu", "agent_cpu", "load",       "readiness",
};

const char *cmp_group_name(enum cmp_group g)
{
    return group_names[g];
}

void cmp_thresholds_default(struct cmp_threshold th[CMP_GROUPS])
{
    th[CMP_LATENCY] = (struct cmp_threshold){5, false};
    th[CMP_P999] = (struct cmp_threshold){10, false};
    th[CMP_OPS] = (struct cmp_threshold){5, false};
    th[CMP_CONN] = (struct cmp_threshold){5, false};
    th[CMP_THROUGHPUT] = (struct cmp_threshold){5, false};
    th[CMP_RETRANSMITS] = (struct cmp_threshold){1, true};
    th[CMP_LOSS] = (struct cmp_threshold){0.1, true};
    th[CMP_JITTER] = (struct cmp_threshold){20, false};
    th[CMP_NODE_CPU] = (struct cmp_threshold){10, false};
    th[CMP_AGENT_CPU] = (struct cmp_threshold){10, false};
    /* a difference of two latencies moves more, relatively, than either */
    th[CMP_LOAD] = (struct cmp_threshold){25, false};
    th[CMP_READINESS] = (struct cmp_threshold){0.5, true}; /* seconds */
}

static bool is_crr(const json_t *row)
{
    const char *t = json_string_value(json_object_get(row, "test"));
    return t && strcmp(t, "TCP_CRR") == 0;
}

static bool num(const json_t *o, const char *field, const char *sub, double *out)
{
    return report_get_number(o, field, sub, out);
}

#define LATENCY_FN(fn, sub)                                                                        \
    static bool fn(const json_t *row, const json_t *s, double *out)                                \
    {                                                                                              \
        (void)row;                                                                                 \
        return num(s, "latency_us", sub, out);                                                     \
    }
LATENCY_FN(v_p50, "p50")
LATENCY_FN(v_p90, "p90")
LATENCY_FN(v_p99, "p99")
LATENCY_FN(v_p999, "p999")
LATENCY_FN(v_mean, "mean")

static bool v_ops(const json_t *row, const json_t *s, double *out)
{
    return !is_crr(row) && num(s, "ops_per_sec", NULL, out);
}

static bool v_conn(const json_t *row, const json_t *s, double *out)
{
    return is_crr(row) && num(s, "ops_per_sec", NULL, out);
}

/* The --capacity ramp's maximum (capacity.h): one figure per row, carried by its first sample
 * so that it is judged as one sample is; a key metric, like conn/s: the row's in-run spread
 * stands for its noise. */
static bool v_capacity(const json_t *row, const json_t *s, double *out)
{
    const json_t *cap = json_object_get(row, "capacity");

    if (!json_is_object(cap) || s != json_array_get(json_object_get(row, "samples"), 0))
        return false;
    return num(cap, "max_conn_per_sec", NULL, out);
}

static bool v_mbps(const json_t *row, const json_t *s, double *out)
{
    (void)row;
    return num(s, "throughput_mbps", NULL, out);
}

/* TCP retransmits (sender) per 10^9 bytes received. */
static bool v_retrans(const json_t *row, const json_t *s, double *out)
{
    double r, bytes;

    (void)row;
    if (!num(s, "tcp", "retransmits", &r) || !num(s, "bytes", NULL, &bytes) || bytes <= 0)
        return false;
    *out = r / (bytes / 1e9);
    return true;
}

static bool v_loss(const json_t *row, const json_t *s, double *out)
{
    (void)row;
    /* a DNS row's UDP loss is its lost% (v_dns_lost), judged once */
    return !json_object_get(s, "dns") && num(s, "udp", "loss_pct", out);
}

/* pod-to-dns: lookups lost (no answer within the timeout) and answered later than 1 s, in
 * percent of those sent (base/dnsresult.h) */
static bool v_dns_lost(const json_t *row, const json_t *s, double *out)
{
    (void)row;
    return num(s, "dns", "lost_pct", out);
}

static bool v_dns_slow(const json_t *row, const json_t *s, double *out)
{
    (void)row;
    return num(s, "dns", "slow_pct", out);
}

static bool c_dns_lost(const json_t *s, double *events, double *trials)
{
    return num(s, "dns", "lost", events) && num(s, "dns", "sent", trials);
}

static bool c_dns_slow(const json_t *s, double *events, double *trials)
{
    return num(s, "dns", "slow_1s", events) && num(s, "dns", "sent", trials);
}

static bool v_jitter(const json_t *row, const json_t *s, double *out)
{
    (void)row;
    return num(s, "udp", "jitter_us", out);
}

/* Gigabits per second of a stream sample, false for none. */
static bool gbps(const json_t *s, double *out)
{
    double mbps;

    if (!num(s, "throughput_mbps", NULL, &mbps) || mbps <= 0)
        return false;
    *out = mbps / 1000.0;
    return true;
}

/* softirq + system percent of the client node plus the server node, per Gbit/s. */
static bool v_node_cpu(const json_t *row, const json_t *s, double *out)
{
    json_t *nc = report_unpacked(s, "node_cpu"); /* ours */
    double g, sum = 0, v;
    bool ok;

    (void)row;
    ok = nc && gbps(s, &g);
    for (int side = 0; ok && side < 2; side++) {
        const json_t *n = json_object_get(nc, side ? "server" : "client");
        ok = num(n, "softirq_pct", NULL, &v);
        sum += ok ? v : 0;
        ok = ok && num(n, "system_pct", NULL, &v);
        sum += ok ? v : 0;
    }
    json_decref(nc);
    if (!ok || sum <= 0) /* all 0: /proc/stat was unreadable */
        return false;
    *out = sum / g;
    return true;
}

/* client + server agent CPU seconds per gigabit moved. */
static bool v_agent_cpu(const json_t *row, const json_t *s, double *out)
{
    double c, sv, d, g;

    (void)row;
    if (!num(s, "cpu_seconds", "client", &c) || !num(s, "cpu_seconds", "server", &sv) ||
        !num(s, "duration_s", NULL, &d) || d <= 0 || !gbps(s, &g))
        return false;
    *out = (c + sv) / (g * d);
    return true;
}

/* Latency under load: the sample's latency minus the idle TCP_RR's (report_load.h). */
static bool v_inc_p50(const json_t *row, const json_t *s, double *out)
{
    return report_load_sample_increase(row, s, "p50", out);
}

static bool v_inc_p99(const json_t *row, const json_t *s, double *out)
{
    return report_load_sample_increase(row, s, "p99", out);
}

/* The Mb/s of the stream that loaded the path. */
static bool v_load_mbps(const json_t *row, const json_t *s, double *out)
{
    (void)row;
    return num(s, "load", "throughput_mbps", out);
}

static const struct cmp_metric metrics[] = {
    {"p50", "latency_us.p50", CMP_LATENCY, false, true, "latency_us", "p50", v_p50, NULL},
    {"p90", "latency_us.p90", CMP_LATENCY, false, false, "latency_us", "p90", v_p90, NULL},
    {"p99", "latency_us.p99", CMP_LATENCY, false, false, "latency_us", "p99", v_p99, NULL},
    {"p99.9", "latency_us.p999", CMP_P999, false, false, "latency_us", "p999", v_p999, NULL},
    {"mean", "latency_us.mean", CMP_LATENCY, false, true, "latency_us", "mean", v_mean, NULL},
    {"ops/s", "ops_per_sec", CMP_OPS, true, true, "ops_per_sec", NULL, v_ops, NULL},
    {"conn/s", "ops_per_sec", CMP_CONN, true, true, "ops_per_sec", NULL, v_conn, NULL},
    {"max conn/s", "capacity.max_conn_per_sec", CMP_CONN, true, true, NULL, NULL, v_capacity, NULL},
    {"Mb/s", "throughput_mbps", CMP_THROUGHPUT, true, true, "throughput_mbps", NULL, v_mbps, NULL},
    {"retrans/GB", "tcp.retransmits/bytes", CMP_RETRANSMITS, false, false, NULL, NULL, v_retrans,
     NULL},
    {"loss%", "udp.loss_pct", CMP_LOSS, false, false, NULL, NULL, v_loss, NULL},
    {"jitter", "udp.jitter_us", CMP_JITTER, false, false, NULL, NULL, v_jitter, NULL},
    {"lost%", "dns.lost_pct", CMP_LOSS, false, false, NULL, NULL, v_dns_lost, c_dns_lost},
    {"slow%", "dns.slow_pct", CMP_LOSS, false, false, NULL, NULL, v_dns_slow, c_dns_slow},
    {"node CPU/Gbps", "node_cpu.{client,server}.{softirq,system}_pct/Gbps", CMP_NODE_CPU, false,
     false, NULL, NULL, v_node_cpu, NULL},
    {"agent CPU/Gbit", "cpu_seconds.{client,server}/Gbit", CMP_AGENT_CPU, false, false, NULL, NULL,
     v_agent_cpu, NULL},
    {"+p50 load", "latency_increase_us.p50", CMP_LOAD, false, true, "latency_increase_us", "p50",
     v_inc_p50, NULL},
    {"+p99 load", "latency_increase_us.p99", CMP_LOAD, false, false, "latency_increase_us", "p99",
     v_inc_p99, NULL},
    {"load Mb/s", "load.throughput_mbps", CMP_THROUGHPUT, true, false, "load", "throughput_mbps",
     v_load_mbps, NULL},
};

const struct cmp_metric *cmp_metrics(size_t *count)
{
    *count = sizeof(metrics) / sizeof(metrics[0]);
    return metrics;
}

size_t cmp_sample_values(const json_t *row, const struct cmp_metric *m, double **out)
{
    const json_t *samples = json_object_get(row, "samples"), *s;
    size_t i, n = 0;

    *out = NULL;
    if (json_array_size(samples) == 0)
        return 0;
    *out = kp_xmalloc(json_array_size(samples) * sizeof(double));
    json_array_foreach(samples, i, s)
    {
        if (m->sample_value(row, s, &(*out)[n]))
            n++;
    }
    if (n == 0) {
        free(*out);
        *out = NULL;
    }
    return n;
}

bool cmp_row_value(const json_t *row, const struct cmp_metric *m, double *out)
{
    double *v;
    size_t n;

    if (m->agg_field) {
        /* only where the samples carry it too (ops/s vs conn/s share the aggregate field) */
        n = cmp_sample_values(row, m, &v);
        free(v);
        return n > 0 &&
               report_get_number(json_object_get(row, "aggregate"), m->agg_field, m->agg_sub, out);
    }
    n = cmp_sample_values(row, m, &v);
    if (n)
        *out = stats_median(v, n);
    free(v);
    return n > 0;
}

/* "5%", "0.1pp" or "2" into t. */
static int parse_value(const char *name, const char *v, struct cmp_threshold *t, struct kp_err *err)
{
    char *end;
    double x;

    errno = 0;
    x = strtod(v, &end);
    if (end == v || errno || !isfinite(x) || x < 0)
        return kp_err_set(err, "%s%s'%s' is not a non-negative number (5%%, 0.1pp, 2)", name,
                          *name ? ": " : "", v);
    if (strcmp(end, "%") == 0)
        *t = (struct cmp_threshold){x, false};
    else if (strcmp(end, "pp") == 0 || *end == 0)
        *t = (struct cmp_threshold){x, true};
    else
        return kp_err_set(err, "%s%s'%s': use N%% (relative), Npp or N (absolute)", name,
                          *name ? ": " : "", v);
    return 0;
}

static int set_named(const char *name, const char *v, struct cmp_threshold th[CMP_GROUPS],
                     struct kp_err *err)
{
    for (int g = 0; g < CMP_GROUPS; g++)
        if (strcmp(name, group_names[g]) == 0)
            return parse_value(name, v, &th[g], err);
    return kp_err_set(
        err,
        "unknown threshold '%s' (latency, p999, ops, conn, throughput, retransmits, loss, "
        "jitter, node_cpu, agent_cpu, load, readiness)",
        name);
}

int cmp_thresholds_parse(const char *spec, struct cmp_threshold th[CMP_GROUPS], struct kp_err *err)
{
    char *copy = kp_xstrdup(spec), *save = NULL, *item;
    int rc = 0;

    if (!*spec)
        rc = kp_err_set(err, "empty threshold");
    for (item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (eq) {
            *eq = 0;
            rc = set_named(item, eq + 1, th, err);
        } else {
            struct cmp_threshold t;
            rc = parse_value("", item, &t, err);
            if (rc == 0 && t.absolute)
                rc = kp_err_set(
                    err, "threshold '%s': a value for every metric must be a percentage", item);
            for (int g = 0; rc == 0 && g < CMP_GROUPS; g++)
                if (!th[g].absolute)
                    th[g] = t;
        }
    }
    free(copy);
    return rc;
}

/* "PATH: " before the message in err; returns -1. */
static int prefix_err(struct kp_err *err, const char *path)
{
    char *msg = kp_xstrdup(kp_err_msg(err));
    int rc = kp_err_set(err, "%s: %s", path, msg);

    free(msg);
    return rc;
}

int cmp_thresholds_load(const char *path, struct cmp_threshold th[CMP_GROUPS], struct kp_err *err)
{
    struct yaml_load_opts o = {.max_bytes = 64 * 1024,
                               .max_depth = 2,
                               .max_nodes = 200,
                               .unique_keys = true,
                               .doc_kind = "a thresholds file"};
    FILE *f = fopen(path, "rb");
    char buf[64 * 1024 + 1];
    size_t len;
    json_t *doc = NULL, *v;
    const char *key;
    int rc = 0;

    if (!f)
        return kp_err_set(err, "%s: %s", path, strerror(errno));
    len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    if (yaml_load(buf, len, &o, &doc, err) != 0)
        return prefix_err(err, path);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return kp_err_set(err, "%s: not a mapping of metric to threshold (latency: 5%%)", path);
    }
    json_object_foreach(doc, key, v)
    {
        if (!json_is_string(v)) {
            rc = kp_err_set(err, "%s: %s: not a value like 5%% or 0.1pp", path, key);
            break;
        }
        if ((rc = set_named(key, json_string_value(v), th, err)) != 0) {
            prefix_err(err, path);
            break;
        }
    }
    json_decref(doc);
    return rc;
}

const char *cmp_threshold_text(const struct cmp_threshold *t, enum cmp_group g, char *buf,
                               size_t len)
{
    snprintf(buf, len, "%g%s", t->value, !t->absolute ? "%" : g == CMP_LOSS ? "pp" : "");
    return buf;
}
