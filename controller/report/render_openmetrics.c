/* SPDX-License-Identifier: Apache-2.0 */
/* render_openmetrics.c - OpenMetrics text of a report (render_openmetrics.h). Each family is
 * written whole (HELP, TYPE, then one sample per row that has the value), families in a fixed
 * order; rows without samples contribute nothing. */
#include "controller/report/render_openmetrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"
#include "controller/report/report.h"

/* Where one value of a row is: aggregate.<field>[.<sub>], times scale. */
struct om_family {
    const char *name;
    const char *help;
    const char *field;
    const char *sub;
    double scale;
    const char *extra_label; /* a label added to this sample, e.g. stat="p99"; NULL = none */
    const char *extra_value;
};

/* Families with several samples per row share a name; consecutive entries of one name form
 * one family (HELP/TYPE once). */
static const struct om_family families[] = {
    {"kperf_latency_seconds",
     "Request/response latency of RR tests (percentiles of the merged "
     "histogram, mean, min and max), by stat",
     "latency_us", "p50", 1e-6, "stat", "p50"},
    {"kperf_latency_seconds", NULL, "latency_us", "p90", 1e-6, "stat", "p90"},
    {"kperf_latency_seconds", NULL, "latency_us", "p99", 1e-6, "stat", "p99"},
    {"kperf_latency_seconds", NULL, "latency_us", "p999", 1e-6, "stat", "p99.9"},
    {"kperf_latency_seconds", NULL, "latency_us", "mean", 1e-6, "stat", "mean"},
    {"kperf_latency_seconds", NULL, "latency_us", "min", 1e-6, "stat", "min"},
    {"kperf_latency_seconds", NULL, "latency_us", "max", 1e-6, "stat", "max"},
    {"kperf_ops_per_second", "Transactions per second of RR tests (TCP_CRR: connections)",
     "ops_per_sec", NULL, 1, NULL, NULL},
    {"kperf_throughput_bytes_per_second", "Goodput of stream tests (report Mb/s x 125000)",
     "throughput_mbps", NULL, 125000, NULL, NULL},
    {"kperf_tcp_retransmits", "TCP retransmits counted by the client socket(s) during the test",
     "tcp", "retransmits", 1, NULL, NULL},
    {"kperf_udp_loss_ratio", "UDP_STREAM datagrams lost over sent (0..1)", "udp", "loss_pct", 0.01,
     NULL, NULL},
    {"kperf_udp_jitter_seconds", "UDP_STREAM inter-arrival jitter", "udp", "jitter_us", 1e-6, NULL,
     NULL},
    {"kperf_agent_cpu_seconds_per_gigabit", "Agent CPU time per Gbit moved, by side",
     "cpu_seconds_per_gbit", "client", 1, "side", "client"},
    {"kperf_agent_cpu_seconds_per_gigabit", NULL, "cpu_seconds_per_gbit", "server", 1, "side",
     "server"},
    /* the row's, not its aggregate's (row_value) */
    {"kperf_capacity_connections_per_second",
     "The --capacity ramp's maximum sustained TCP_CRR connections per second (docs/report.md, "
     "Connection capacity)",
     "capacity", "max_conn_per_sec", 1, NULL, NULL},
};

static const char *str_at(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

void render_openmetrics_label_value(const char *s, FILE *out)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '\\')
            fputs("\\\\", out);
        else if (c == '"')
            fputs("\\\"", out);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20 || c == 0x7f)
            fputc(' ', out);
        else
            fputc(c, out);
    }
}

const char *render_openmetrics_cluster(const struct report *rep)
{
    const json_t *md = report_metadata_const(rep);
    const char *c = str_at(md, "cluster"), *backend = str_at(md, "backend");

    if (c && c[0])
        return c;
    if (backend && strcmp(backend, "local") == 0)
        return "local";
    return "default";
}

static void label(FILE *out, bool *first, const char *name, const char *value)
{
    fprintf(out, "%s%s=\"", *first ? "" : ",", name);
    render_openmetrics_label_value(value ? value : "", out);
    fputc('"', out);
    *first = false;
}

/* The labels every sample of a run carries. */
struct om_run {
    const char *cluster, *cni, *cni_version;
};

/* The row's labels, then extra[0..n) as name, value pairs. */
static void row_labels_kv(const struct report_row_info *row, const struct om_run *run,
                          const char *const *extra, size_t n, FILE *out)
{
    bool first = true;
    struct rowkey k; /* every part of the row's key is a label: no two rows give one series */

    rowkey_make(&k, row->scenario, row->placement, row->test, row->reverse, row->ip_family);
    fputc('{', out);
    label(out, &first, "scenario", k.scenario);
    label(out, &first, "placement", k.placement);
    label(out, &first, "test", k.test);
    label(out, &first, "direction", k.reverse ? "reverse" : "forward");
    label(out, &first, "ip_family", k.ip_family);
    label(out, &first, "cluster", run->cluster);
    label(out, &first, "cni", run->cni);
    label(out, &first, "cni_version", run->cni_version);
    for (size_t i = 0; i + 1 < n; i += 2)
        label(out, &first, extra[i], extra[i + 1]);
    fputc('}', out);
}

static void row_labels(const struct report_row_info *row, const struct om_run *run,
                       const struct om_family *f, FILE *out)
{
    const char *extra[] = {f->extra_label, f->extra_value};

    row_labels_kv(row, run, extra, f->extra_label ? 2 : 0, out);
}

/* The value of f in row, or false when the row does not have it. */
static bool row_value(const json_t *row, const struct om_family *f, double *v)
{
    const json_t *agg = json_object_get(row, "aggregate"), *x;

    if (json_array_size(json_object_get(row, "samples")) == 0)
        return false;
    x = json_object_get(strcmp(f->field, "capacity") == 0 ? row : agg, f->field);
    if (f->sub)
        x = json_object_get(x, f->sub);
    if (!json_is_number(x) || !isfinite(json_number_value(x)))
        return false;
    *v = json_number_value(x) * f->scale;
    return true;
}

/* " <v>\n" with the fewest digits that read back as v (15, else 17). */
static void put_number(double v, FILE *out)
{
    char buf[40];

    snprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof(buf), "%.17g", v);
    fprintf(out, " %s\n", buf);
}

static void run_info(const struct report *rep, const struct om_run *run, FILE *out)
{
    const json_t *md = report_metadata_const(rep);
    static const char *const keys[] = {"kperf_version",   "backend",  "kubernetes_version",
                                       "kube_proxy_mode", "run_id",   "start_time",
                                       "end_time",        "ip_family"};
    const json_t *node;
    size_t i;
    bool first = true;

    fputs("# HELP kperf_run_info Provenance of the run the other kperf_ metrics come from "
          "(value always 1)\n# TYPE kperf_run_info gauge\nkperf_run_info{",
          out);
    label(out, &first, "cluster", run->cluster);
    label(out, &first, "cni", run->cni);
    label(out, &first, "cni_version", run->cni_version);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (str_at(md, keys[i]))
            label(out, &first, keys[i], str_at(md, keys[i]));
    json_array_foreach(json_object_get(md, "nodes"), i, node)
    {
        const char *role = str_at(node, "role");

        if (i >= 2)
            break; /* the pair measured: node_a, node_b */
        label(out, &first, i == 0 ? "node_a" : "node_b", str_at(node, "name"));
        if (role)
            label(out, &first, i == 0 ? "node_a_role" : "node_b_role", role);
        if (str_at(node, "kernel"))
            label(out, &first, i == 0 ? "node_a_kernel" : "node_b_kernel", str_at(node, "kernel"));
        if (str_at(node, "instance_type"))
            label(out, &first, i == 0 ? "node_a_instance_type" : "node_b_instance_type",
                  str_at(node, "instance_type"));
    }
    fputs("} 1\n", out);
}

/* What a row has besides its aggregate figures, each a reference of ours (json_incref; NULL
 * when the row has none): evidence.moved, aggregate.node_cpu_per_gbps and path_mtu. */
struct om_extra {
    json_t *moved, *node_cpu, *path_mtu;
};

static void family_head(const char *name, const char *help, FILE *out)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* kperf_evidence_marked (0 or 1 per row with counters) and kperf_evidence_delta (each drop,
 * shaping or overflow counter that moved, by side and counter). */
static void evidence_families(const struct report *rep, const struct om_run *run,
                              const struct om_extra *x, size_t nrows, FILE *out)
{
    family_head("kperf_evidence_marked",
                "1 when a drop, shaping or overflow counter moved during the row (docs/report.md, "
                "Evidence)",
                out);
    for (size_t r = 0; r < nrows; r++) {
        struct report_row_info ri;
        if (!x[r].moved)
            continue;
        report_row_info(rep, r, &ri);
        fputs("kperf_evidence_marked", out);
        row_labels_kv(&ri, run, NULL, 0, out);
        put_number(json_array_size(x[r].moved) > 0, out);
    }
    family_head("kperf_evidence_delta",
                "A drop, shaping or overflow counter's increase during the row, by node side and "
                "counter",
                out);
    for (size_t r = 0; r < nrows; r++) {
        struct report_row_info ri;
        const json_t *m;
        size_t i;
        report_row_info(rep, r, &ri);
        json_array_foreach(x[r].moved, i, m)
        {
            const char *extra[] = {"side",  str_at(m, "side"), "counter", str_at(m, "counter"),
                                   "class", str_at(m, "class")};
            fputs("kperf_evidence_delta", out);
            row_labels_kv(&ri, run, extra, 6, out);
            put_number((double)json_integer_value(json_object_get(m, "delta")), out);
        }
    }
}

/* kperf_node_cpu_ratio_per_gbps: the fraction of each node's CPU per Gbit/s, by side and mode
 * (aggregate.node_cpu_per_gbps). */
static void node_cpu_family(const struct report *rep, const struct om_run *run,
                            const struct om_extra *x, size_t nrows, FILE *out)
{
    static const char *const sides[] = {"client", "server"};
    static const char *const modes[] = {"user", "system", "softirq", "irq"};

    family_head("kperf_node_cpu_ratio_per_gbps",
                "Fraction (0..1) of the node's CPU busy per Gbit/s moved, by node side and mode "
                "(stream rows; median of the samples)",
                out);
    for (size_t r = 0; r < nrows; r++) {
        struct report_row_info ri;
        if (!x[r].node_cpu)
            continue;
        report_row_info(rep, r, &ri);
        for (size_t k = 0; k < 2; k++)
            for (size_t m = 0; m < 4; m++) {
                const json_t *v =
                    json_object_get(json_object_get(x[r].node_cpu, sides[k]), modes[m]);
                const char *extra[] = {"side", sides[k], "mode", modes[m]};
                if (!json_is_number(v) || !isfinite(json_number_value(v)))
                    continue;
                fputs("kperf_node_cpu_ratio_per_gbps", out);
                row_labels_kv(&ri, run, extra, 4, out);
                put_number(json_number_value(v), out);
            }
    }
}

/* kperf_path_mtu_bytes (the probe's path MTU, when it found one) and kperf_path_mtu_black_hole
 * (0 or 1 per row with a verdict), from the row's path_mtu. */
static void path_mtu_families(const struct report *rep, const struct om_run *run,
                              const struct om_extra *x, size_t nrows, FILE *out)
{
    family_head("kperf_path_mtu_bytes",
                "Largest packet the row's path carried (path MTU probe, docs/report.md)", out);
    for (size_t r = 0; r < nrows; r++) {
        struct report_row_info ri;
        json_int_t path = json_integer_value(json_object_get(x[r].path_mtu, "path"));
        if (path <= 0)
            continue;
        report_row_info(rep, r, &ri);
        fputs("kperf_path_mtu_bytes", out);
        row_labels_kv(&ri, run, NULL, 0, out);
        put_number((double)path, out);
    }
    family_head("kperf_path_mtu_black_hole",
                "1 when packets of the interface MTU were lost on the row's path without the ICMP "
                "that would say so",
                out);
    for (size_t r = 0; r < nrows; r++) {
        struct report_row_info ri;
        const char *v = str_at(x[r].path_mtu, "verdict");
        if (!v)
            continue;
        report_row_info(rep, r, &ri);
        fputs("kperf_path_mtu_black_hole", out);
        row_labels_kv(&ri, run, NULL, 0, out);
        put_number(strcmp(v, "black-hole") == 0, out);
    }
}

void render_openmetrics(const struct report *rep, FILE *out)
{
    render_openmetrics_status(rep, -1, out);
}

void render_openmetrics_status(const struct report *rep, int run_status, FILE *out)
{
    const json_t *cni = json_object_get(report_metadata_const(rep), "cni");
    struct om_run run = {
        .cluster = render_openmetrics_cluster(rep),
        .cni = str_at(cni, "name"),
        .cni_version = str_at(cni, "version"),
    };
    size_t n = sizeof(families) / sizeof(families[0]), nrows = report_row_count(rep);
    /* every row read once (a loaded row is parsed when read, report.h): its values of all
     * families first, then the families written one after the other */
    double *vals = kp_xcalloc(nrows * n + 1, sizeof(*vals)); /* ours: [row][family] */
    bool *has = kp_xcalloc(nrows * n + 1, sizeof(*has));     /* ours: [row][family] */
    struct om_extra *x = kp_xcalloc(nrows + 1, sizeof(*x));  /* ours: each row's, held */

    for (size_t r = 0; r < nrows; r++) {
        const json_t *row = report_row(rep, r);
        for (size_t i = 0; row && i < n; i++)
            has[r * n + i] = row_value(row, &families[i], &vals[r * n + i]);
        if (row && json_array_size(json_object_get(row, "samples")) > 0) {
            x[r].moved = json_incref(json_object_get(json_object_get(row, "evidence"), "moved"));
            x[r].node_cpu = json_incref(
                json_object_get(json_object_get(row, "aggregate"), "node_cpu_per_gbps"));
            x[r].path_mtu = json_incref(json_object_get(row, "path_mtu"));
        }
    }
    run_info(rep, &run, out);
    for (size_t i = 0; i < n; i++) {
        const struct om_family *f = &families[i];

        if (f->help)
            fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", f->name, f->help, f->name);
        for (size_t r = 0; r < nrows; r++) {
            struct report_row_info ri;

            if (!has[r * n + i])
                continue;
            report_row_info(rep, r, &ri);
            fputs(f->name, out);
            row_labels(&ri, &run, f, out);
            put_number(vals[r * n + i], out);
        }
    }
    evidence_families(rep, &run, x, nrows, out);
    node_cpu_family(rep, &run, x, nrows, out);
    path_mtu_families(rep, &run, x, nrows, out);
    for (size_t r = 0; r < nrows; r++) {
        json_decref(x[r].moved);
        json_decref(x[r].node_cpu);
        json_decref(x[r].path_mtu);
    }
    free(x);
    free(vals);
    free(has);
    if (run_status >= 0) {
        bool first = true;
        fputs("# HELP kperf_run_status Exit status of kperf run: 0 ok, 1 error, 4 could not "
              "measure (docs/exit-status.md)\n# TYPE kperf_run_status gauge\nkperf_run_status{",
              out);
        label(out, &first, "cluster", run.cluster);
        fprintf(out, "} %d\n", run_status);
    }
    fputs("# EOF\n", out);
}
