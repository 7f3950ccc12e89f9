/* SPDX-License-Identifier: Apache-2.0 */
/* render_text.c - terminal table, Markdown and CSV renderings of a report. Both tables are
 * described once as column lists; the table and Markdown layouts share them. */
#include "controller/report/render_text.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/capacity.h"
#include "controller/report/evidence.h"
#include "controller/report/netpol.h"
#include "controller/report/netpol_cost.h"
#include "controller/report/outlier.h"
#include "controller/report/pathmtu.h"
#include "controller/report/readiness.h"
#include "controller/report/report.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_load.h"

#define CELL 64

enum col {
    COL_SCENARIO,
    COL_NODE,
    COL_TEST,
    COL_MIN,
    COL_MEAN,
    COL_P50,
    COL_P90,
    COL_P99,
    COL_P999,
    COL_OPS,
    COL_MBPS,
    COL_RETR,
    COL_MSS,
    COL_CPU,
    COL_LOSS,
    COL_IDLE_P50, /* latency under load (report_load.h) */
    COL_INC_P50,
    COL_IDLE_P99,
    COL_INC_P99,
    COL_RATIO_P99,
    COL_LOAD_MBPS,
    COL_JITTER,
    COL_OOO,
    COL_N,
    COL_CV,
    COL_NOTE,
};

/* Loss% in the latency table and Jitter/OOO in the throughput table are UDP figures: "-" on
 * TCP rows. The columns only grow at the end of the numbers so that readers of the older
 * layout find Min..P99 and Throughput..MSS where they were. */
static const enum col latency_cols[] = {COL_SCENARIO, COL_NODE, COL_TEST, COL_MIN,  COL_MEAN,
                                        COL_P50,      COL_P90,  COL_P99,  COL_P999, COL_OPS,
                                        COL_LOSS,     COL_N,    COL_CV,   COL_NOTE};
static const enum col throughput_cols[] = {COL_SCENARIO, COL_NODE, COL_TEST,   COL_MBPS, COL_RETR,
                                           COL_MSS,      COL_LOSS, COL_JITTER, COL_OOO,  COL_CPU,
                                           COL_N,        COL_CV,   COL_NOTE};

static const enum col loaded_cols[] = {COL_SCENARIO,  COL_NODE,      COL_IDLE_P50, COL_P50,
                                       COL_INC_P50,   COL_IDLE_P99,  COL_P99,      COL_INC_P99,
                                       COL_RATIO_P99, COL_LOAD_MBPS, COL_N,        COL_NOTE};

static const char *col_header(enum col c)
{
    static const char *const names[] = {[COL_SCENARIO] = "Scenario",
                                        [COL_NODE] = "Node",
                                        [COL_TEST] = "Test",
                                        [COL_MIN] = "Min",
                                        [COL_MEAN] = "Mean",
                                        [COL_P50] = "P50",
                                        [COL_P90] = "P90",
                                        [COL_P99] = "P99",
                                        [COL_P999] = "P99.9",
                                        [COL_OPS] = "OP/s",
                                        [COL_MBPS] = "Throughput Mb/s",
                                        [COL_RETR] = "Retransmits",
                                        [COL_MSS] = "MSS",
                                        [COL_CPU] = "CPU s/Gbit",
                                        [COL_LOSS] = "Loss%",
                                        [COL_IDLE_P50] = "Idle P50",
                                        [COL_INC_P50] = "+P50",
                                        [COL_IDLE_P99] = "Idle P99",
                                        [COL_INC_P99] = "+P99",
                                        [COL_RATIO_P99] = "xP99",
                                        [COL_LOAD_MBPS] = "Load Mb/s",
                                        [COL_JITTER] = "Jitter us",
                                        [COL_OOO] = "Out of order",
                                        [COL_N] = "n",
                                        [COL_CV] = "CV%",
                                        [COL_NOTE] = "Note"};
    return names[c];
}

const char *render_test_label(const json_t *row, char *buf, size_t len)
{
    struct rowkey k;

    rowkey_of(row, &k);
    return rowkey_test_label(&k, buf, len);
}

const char *render_num(const json_t *obj, const char *field, const char *sub, int decimals,
                       char *buf, size_t len)
{
    double v;

    if (!report_get_number(obj, field, sub, &v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", decimals, v);
    return buf;
}

/* The stats object of the row's key metric (ops/s or Mb/s), or NULL. Borrowed. */
static const json_t *key_stats(const json_t *row)
{
    const json_t *stats = json_object_get(row, "stats");
    const char *kind = json_string_value(json_object_get(row, "kind"));

    return json_object_get(stats, strcmp(kind, "latency") == 0 ? "ops_per_sec" : "throughput_mbps");
}

/* "noisy: p99, ops/s" (the metrics whose CV exceeds the threshold) and "partial" (some
 * samples failed); empty when neither. */
static void note(const json_t *row, char *buf)
{
    const json_t *stats = json_object_get(row, "stats"), *v, *lat;
    const char *key, *k2;
    size_t used, mark;

    used = strlen(evidence_marker(row, buf, CELL));
    used = pathmtu_marker(row, buf, used, CELL);
    if (used)
        buf[used++] = ' ', buf[used] = '\0';
    mark = used;
    json_object_foreach((json_t *)stats, key, v)
    {
        if (strcmp(key, "latency_us") == 0) {
            json_object_foreach((json_t *)v, k2, lat)
            {
                if (json_is_true(json_object_get(lat, "noisy")))
                    used += (size_t)snprintf(buf + used, CELL - used, "%s%s",
                                             used > mark ? ", " : "noisy: ", k2);
                if (used >= CELL)
                    return;
            }
        } else if (json_is_true(json_object_get(v, "noisy"))) {
            used += (size_t)snprintf(
                buf + used, CELL - used, "%s%s",
                used > mark ? ", " : "noisy: ", strcmp(key, "ops_per_sec") == 0 ? "ops/s" : "Mb/s");
        }
        if (used >= CELL)
            return;
    }
    if (strcmp(json_string_value(json_object_get(row, "status")), "partial") == 0)
        snprintf(buf + used, CELL - used, "%spartial", used > mark ? "; " : "");
    else if (used == mark && mark > 0)
        buf[mark - 1] = '\0'; /* the marker alone: no trailing blank */
}

/* rowkey_label of a row: "pod-to-pod same-node TCP_RR (reverse) [IPv6]" */
static const char *row_label(const json_t *row, char *buf, size_t len)
{
    struct rowkey k;

    rowkey_of(row, &k);
    return rowkey_label(&k, buf, len);
}

/* true when the rows were measured over more than one address family (a dual-stack run; a
 * row without ip_family is ROWKEY_DEFAULT_FAMILY's, base/rowkey.h) */
static bool many_families(const struct report *rep)
{
    const char *first = NULL;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        struct rowkey k;
        report_row_info(rep, i, &ri);
        rowkey_make(&k, ri.scenario, ri.placement, ri.test, ri.reverse, ri.ip_family);
        if (first && strcmp(first, k.ip_family) != 0)
            return true;
        first = k.ip_family;
    }
    return false;
}

/* "+12.3" / "-0.4": a latency difference, signed; "-" when absent */
static void render_signed(const json_t *agg, const char *field, const char *sub, char *buf)
{
    double v;

    if (report_get_number(agg, field, sub, &v))
        snprintf(buf, CELL, "%+.1f", v);
    else
        snprintf(buf, CELL, "-");
}

/* fam: the scenario cell names the row's family ("pod-to-pod/IPv6") */
static void cell_raw(const json_t *row, enum col c, bool fam, char *buf)
{
    const json_t *agg = json_object_get(row, "aggregate");
    struct rowkey k;
    double client, server;

    rowkey_of(row, &k);
    switch (c) {
    case COL_SCENARIO:
        snprintf(buf, CELL, "%s%s%s", k.scenario, fam ? "/" : "", fam ? k.ip_family : "");
        return;
    case COL_NODE:
        snprintf(buf, CELL, "%s", k.placement);
        return;
    case COL_TEST:
        render_test_label(row, buf, CELL);
        return;
    case COL_MIN:
    case COL_MEAN:
    case COL_P50:
    case COL_P90:
    case COL_P99:
    case COL_P999: {
        static const char *const subs[] = {"min", "mean", "p50", "p90", "p99", "p999"};
        render_num(agg, "latency_us", subs[c - COL_MIN], 1, buf, CELL);
        return;
    }
    case COL_OPS:
        render_num(agg, "ops_per_sec", NULL, 2, buf, CELL);
        return;
    case COL_MBPS:
        render_num(agg, "throughput_mbps", NULL, 2, buf, CELL);
        return;
    case COL_RETR:
        render_num(agg, "tcp", "retransmits", 0, buf, CELL);
        return;
    case COL_MSS:
        render_num(agg, "tcp", "mss", 0, buf, CELL);
        return;
    case COL_CPU:
        if (report_get_number(agg, "cpu_seconds_per_gbit", "client", &client) &&
            report_get_number(agg, "cpu_seconds_per_gbit", "server", &server))
            snprintf(buf, CELL, "%.3f", client + server);
        else
            snprintf(buf, CELL, "-");
        return;
    case COL_LOSS:
        render_num(agg, "udp", "loss_pct", 2, buf, CELL);
        return;
    case COL_IDLE_P50:
        render_num(agg, "idle_latency_us", "p50", 1, buf, CELL);
        return;
    case COL_INC_P50:
        render_signed(agg, "latency_increase_us", "p50", buf);
        return;
    case COL_IDLE_P99:
        render_num(agg, "idle_latency_us", "p99", 1, buf, CELL);
        return;
    case COL_INC_P99:
        render_signed(agg, "latency_increase_us", "p99", buf);
        return;
    case COL_RATIO_P99:
        render_num(agg, "latency_ratio", "p99", 2, buf, CELL);
        return;
    case COL_LOAD_MBPS:
        render_num(agg, "load", "throughput_mbps", 2, buf, CELL);
        return;
    case COL_JITTER:
        render_num(agg, "udp", "jitter_us", 1, buf, CELL);
        return;
    case COL_OOO:
        render_num(agg, "udp", "out_of_order", 0, buf, CELL);
        return;
    case COL_N:
        snprintf(buf, CELL, "%zu", json_array_size(json_object_get(row, "samples")));
        return;
    case COL_CV:
        if (json_array_size(json_object_get(row, "samples")) < 2)
            snprintf(buf, CELL, "-");
        else
            render_num(key_stats(row), "cv_pct", NULL, 1, buf, CELL);
        return;
    case COL_NOTE:
        note(row, buf);
        return;
    }
}

/* A cell with the report's text made safe for a terminal (base/textsafe.h). */
static void cell(const json_t *row, enum col c, bool fam, char *buf)
{
    cell_raw(row, c, fam, buf);
    textsafe_inplace(buf);
}

/* kind "loaded": the rows of latency under load (also in the latency table) */
static bool row_is_measured(const struct report_row_info *ri, const char *kind)
{
    const struct testkind *tk;

    if (ri->n_samples == 0)
        return false;
    if (strcmp(kind, "loaded") == 0) /* as report_load_row */
        return (tk = testkind_by_name(ri->test)) && tk->loaded;
    return strcmp(ri->kind, kind) == 0;
}

static bool is_numeric(enum col c)
{
    return c >= COL_MIN && c <= COL_CV;
}

/* One line of a table: the header when cells is NULL. Numbers are right-aligned. */
static void print_line(const char (*cells)[CELL], const enum col *cols, size_t ncols,
                       const size_t *width, bool markdown, FILE *out)
{
    for (size_t c = 0; c < ncols; c++) {
        const char *s = cells ? cells[c] : col_header(cols[c]);
        int w = (int)width[c];
        if (!markdown && c + 1 == ncols && !*s)
            break; /* no trailing separator and blanks for an empty last cell */
        if (markdown)
            fputs("| ", out);
        else if (c)
            fputs(" | ", out);
        if (is_numeric(cols[c]))
            fprintf(out, "%*s", w, s);
        else if (markdown || c + 1 < ncols)
            fprintf(out, "%-*s", w, s);
        else
            fputs(s, out); /* no trailing blanks */
        if (markdown)
            fputc(' ', out);
    }
    fputs(markdown ? "|\n" : "\n", out);
}

/* Renders one table of measured rows of a kind; markdown selects the layout. Prints nothing
 * when no row matches. */
static void print_table(const struct report *rep, const char *kind, const char *title,
                        bool markdown, FILE *out)
{
    bool lat = strcmp(kind, "latency") == 0, loaded = strcmp(kind, "loaded") == 0;
    const enum col *cols = loaded ? loaded_cols : lat ? latency_cols : throughput_cols;
    size_t ncols = loaded ? sizeof(loaded_cols) / sizeof(loaded_cols[0])
                   : lat  ? sizeof(latency_cols) / sizeof(latency_cols[0])
                          : sizeof(throughput_cols) / sizeof(throughput_cols[0]);
    size_t nrows = 0, width[16] = {0}, total = 0;
    char(*cells)[CELL] = kp_xcalloc(report_row_count(rep) * ncols + 1, CELL); /* ours */
    bool fam = many_families(rep);

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        const json_t *row;
        report_row_info(rep, i, &ri);
        if (!row_is_measured(&ri, kind) || !(row = report_row(rep, i)))
            continue;
        for (size_t c = 0; c < ncols; c++)
            cell(row, cols[c], fam, cells[nrows * ncols + c]);
        nrows++;
    }
    if (nrows == 0)
        goto out;
    for (size_t c = 0; c < ncols; c++) {
        width[c] = strlen(col_header(cols[c]));
        for (size_t r = 0; r < nrows; r++)
            if (strlen(cells[r * ncols + c]) > width[c])
                width[c] = strlen(cells[r * ncols + c]);
        total += width[c] + 3;
    }
    if (markdown)
        fprintf(out, "\n### %s\n\n", title);
    else
        fprintf(out, "\n%s\n", title);
    print_line(NULL, cols, ncols, width, markdown, out);
    if (markdown) {
        for (size_t c = 0; c < ncols; c++) {
            fputc('|', out);
            for (size_t k = 0; k < width[c] + 1; k++)
                fputc('-', out);
            fputc(is_numeric(cols[c]) ? ':' : '-', out);
        }
        fputs("|\n", out);
    } else {
        for (size_t k = 0; k + 3 < total; k++)
            fputc('-', out);
        fputc('\n', out);
    }
    for (size_t r = 0; r < nrows; r++)
        print_line((const char(*)[CELL])(cells + r * ncols), cols, ncols, width, markdown, out);
out:
    free(cells);
}

/* Lists skipped rows and errors, one per line; bullet is "  " or "- ". */
/* An error the cluster made (its pod could not start) reads "[cluster: ip-exhaustion] ...":
 * the brackets around cause_str, or "" for an error of the measurement. */
static const char *cause_str(const json_t *e)
{
    const char *c = json_string_value(json_object_get(e, "cause"));
    return c ? c : "";
}

static const char *cause_tag(const json_t *e, int close)
{
    if (!json_string_value(json_object_get(e, "cause")))
        return "";
    return close ? "] " : "[cluster: ";
}

static void print_problems(const struct report *rep, const char *bullet, FILE *out)
{
    size_t i, nskip = json_array_size(report_skipped(rep)), nerr = 0;
    const json_t *v, *row;
    struct report_row_info ri;
    char label[256];

    for (i = 0; i < report_row_count(rep); i++) {
        report_row_info(rep, i, &ri);
        nskip += ri.skip_reason != NULL && ri.n_samples == 0;
        nerr += ri.n_errors;
    }
    nerr += json_array_size(report_errors(rep));
    if (nskip) {
        fprintf(out, "\nSkipped:\n\n");
        json_array_foreach(report_skipped(rep), i, v)
        {
            textsafe_line(out, "%s%s %s (all tests): %s", bullet,
                          json_string_value(json_object_get(v, "scenario")),
                          json_string_value(json_object_get(v, "placement")),
                          json_string_value(json_object_get(v, "reason")));
        }
        for (i = 0; i < report_row_count(rep); i++) {
            report_row_info(rep, i, &ri);
            if (!ri.skip_reason || ri.n_samples != 0 || !(row = report_row(rep, i)))
                continue;
            if (json_object_get(row, "skip_reason") &&
                json_array_size(json_object_get(row, "samples")) == 0)
                textsafe_line(out, "%s%s: %s", bullet, row_label(row, label, sizeof(label)),
                              json_string_value(json_object_get(row, "skip_reason")));
        }
    }
    if (!nerr)
        return;
    fprintf(out, "\nErrors:\n\n");
    json_array_foreach(report_errors(rep), i, v)
    {
        textsafe_line(
            out, "%s%s %s: %s%s%s%s", bullet, json_string_value(json_object_get(v, "scenario")),
            json_string_value(json_object_get(v, "placement")), cause_tag(v, 0), cause_str(v),
            cause_tag(v, 1), json_string_value(json_object_get(v, "error")));
    }
    for (i = 0; i < report_row_count(rep); i++) {
        size_t k;
        report_row_info(rep, i, &ri);
        if (ri.n_errors == 0 || !(row = report_row(rep, i)))
            continue;
        json_array_foreach(json_object_get(row, "errors"), k, v)
        {
            textsafe_line(out, "%s%s: %s%s%s%s", bullet, row_label(row, label, sizeof(label)),
                          cause_tag(v, 0), cause_str(v), cause_tag(v, 1),
                          json_string_value(json_object_get(v, "error")));
        }
    }
}

static void print_summary_line(const struct report *rep, FILE *out)
{
    size_t measured = 0, noisy = 0, failed = json_array_size(report_errors(rep));
    size_t skipped = json_array_size(report_skipped(rep));
    double cv = report_noisy_cv_pct(rep);

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        report_row_info(rep, i, &ri);
        measured += ri.n_samples > 0;
        noisy += ri.noisy;
        failed += strcmp(ri.status, "failed") == 0;
        skipped += strcmp(ri.status, "skipped") == 0;
    }
    fprintf(out, "\n%zu measured, %zu failed, %zu skipped, %zu noisy (CV > %g%%)\n", measured,
            failed, skipped, noisy, cv);
}

/* metadata[key] as a string, or NULL when absent or not a string (metadata is free-form). */
static const char *meta_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Appends "label value" to the fact line (", " separated in a table, "- " items in Markdown). */
static void fact(FILE *out, bool markdown, int *n, const char *label, const char *value)
{
    char safe[256];

    if (!value)
        return;
    value = textsafe(value, safe, sizeof(safe));
    if (markdown)
        fprintf(out, "- %s%s\n", label, value);
    else
        fprintf(out, "%s%s%s", (*n)++ ? ", " : "", label, value);
}

/* The node's first NIC and TCP sysctls (metadata.nodes[].net, from kperf-agent node-facts):
 * ", NIC eth0 ena 25000 Mb/s 8 queues, TCP cubic". */
static void node_net(const json_t *net, int parts, FILE *out)
{
    const json_t *nic = json_array_get(json_object_get(net, "nics"), 0);
    const json_t *q = json_object_get(nic, "combined_queues");
    const char *cc = meta_str(json_object_get(net, "sysctls"), "tcp_congestion_control");

    if (nic) {
        fprintf(out, "%sNIC %s", parts++ ? ", " : "",
                meta_str(nic, "name") ? meta_str(nic, "name") : "?");
        if (meta_str(nic, "driver"))
            fprintf(out, " %s", meta_str(nic, "driver"));
        if (json_is_integer(json_object_get(nic, "speed_mbps")))
            fprintf(out, " %lld Mb/s",
                    (long long)json_integer_value(json_object_get(nic, "speed_mbps")));
        if (!q)
            q = json_object_get(nic, "rx_queues");
        if (json_is_integer(q))
            fprintf(out, " %lld queues", (long long)json_integer_value(q));
    }
    if (cc)
        fprintf(out, "%sTCP %s", parts ? ", " : "", cc);
}

/* One line per node: "node-a (server, arm64, kernel 6.1.0, zone eu-1a, m5.large, MTU 9001)". */
static void node_lines(const json_t *nodes, bool markdown, FILE *out)
{
    static const char *const keys[] = {"role", "arch",          "kernel",     "os_image",
                                       "zone", "instance_type", "in_place_of"};
    static const char *const labels[] = {"", "", "kernel ", "", "zone ", "", "in place of "};
    const json_t *n;
    size_t i;
    char safe[256];

    json_array_foreach(nodes, i, n)
    {
        int parts = 0;
        fprintf(out, "%snode %s (", markdown ? "- " : "",
                textsafe(meta_str(n, "name") ? meta_str(n, "name") : "?", safe, sizeof(safe)));
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            if (meta_str(n, keys[k]))
                fprintf(out, "%s%s%s", parts++ ? ", " : "", labels[k],
                        textsafe(meta_str(n, keys[k]), safe, sizeof(safe)));
        if (json_is_integer(json_object_get(n, "mtu")))
            fprintf(out, "%sMTU %lld", parts++ ? ", " : "",
                    (long long)json_integer_value(json_object_get(n, "mtu")));
        node_net(json_object_get(n, "net"), parts, out);
        fputs(")\n", out);
    }
}

/* The external server's host (metadata.external, from its agent's FACTS): "external host
 * ec2-a (198.51.100.7, kernel 6.1.0, 8 CPUs Intel Xeon, NIC ens5 ena 25000 Mb/s, MTU 9001, TCP
 * cubic)". */
static void external_line(const json_t *ext, bool markdown, FILE *out)
{
    const json_t *nic = json_array_get(json_object_get(json_object_get(ext, "net"), "nics"), 0);
    const json_t *mtu = json_object_get(nic, "mtu");
    char safe[256];
    int parts = 0;

    if (!json_is_object(ext))
        return;
    fprintf(out, "%sexternal host %s (", markdown ? "- " : "",
            textsafe(meta_str(ext, "name") ? meta_str(ext, "name") : "?", safe, sizeof(safe)));
    if (meta_str(ext, "address"))
        fprintf(out, "%s%s", parts++ ? ", " : "",
                textsafe(meta_str(ext, "address"), safe, sizeof(safe)));
    if (meta_str(ext, "kernel"))
        fprintf(out, "%skernel %s", parts++ ? ", " : "",
                textsafe(meta_str(ext, "kernel"), safe, sizeof(safe)));
    if (meta_str(ext, "os_image"))
        fprintf(out, "%s%s", parts++ ? ", " : "",
                textsafe(meta_str(ext, "os_image"), safe, sizeof(safe)));
    if (json_is_integer(json_object_get(ext, "cpus"))) {
        fprintf(out, "%s%lld CPUs", parts++ ? ", " : "",
                (long long)json_integer_value(json_object_get(ext, "cpus")));
        if (meta_str(ext, "cpu_model"))
            fprintf(out, " %s", textsafe(meta_str(ext, "cpu_model"), safe, sizeof(safe)));
    }
    if (json_is_integer(mtu))
        fprintf(out, "%sMTU %lld", parts++ ? ", " : "", (long long)json_integer_value(mtu));
    node_net(json_object_get(ext, "net"), parts, out);
    fputs(")\n", out);
}

static void print_header(const struct report *rep, bool markdown, FILE *out)
{
    const json_t *md = report_metadata_const(rep);
    const json_t *cni = json_object_get(md, "cni");
    char cni_text[160];
    int n = 0;

    fprintf(out, "%sNetwork Performance Test Summary", markdown ? "## " : "");
    if (meta_str(md, "backend"))
        fprintf(out, " [%s]", textsafe(meta_str(md, "backend"), cni_text, sizeof(cni_text)));
    fputs(markdown ? "\n\n" : "\n", out);
    fact(out, markdown, &n, "started ", meta_str(md, "start_time"));
    fact(out, markdown, &n, "kperf ", meta_str(md, "kperf_version"));
    fact(out, markdown, &n, "Kubernetes ", meta_str(md, "kubernetes_version"));
    if (meta_str(cni, "name")) {
        snprintf(cni_text, sizeof(cni_text), "%s%s%s", meta_str(cni, "name"),
                 meta_str(cni, "version") ? " " : "",
                 meta_str(cni, "version") ? meta_str(cni, "version") : "");
        fact(out, markdown, &n, "CNI ", cni_text);
    }
    fact(out, markdown, &n, "kube-proxy ", meta_str(md, "kube_proxy_mode"));
    if (n)
        fputc('\n', out);
    node_lines(json_object_get(md, "nodes"), markdown, out);
    external_line(json_object_get(md, "external"), markdown, out);
    outlier_print(md, markdown, out);
}

#define LOADED_TITLE                                                                               \
    "Latency under load (microseconds; TCP_RR_LOADED vs idle TCP_RR, load: TCP_STREAM_MULTI)"

void render_text_table(const struct report *rep, FILE *out)
{
    print_header(rep, false, out);
    print_table(rep, "latency", "Latency tests (microseconds)", false, out);
    print_table(rep, "loaded", LOADED_TITLE, false, out);
    print_table(rep, "throughput", "Throughput tests", false, out);
    readiness_print(report_metadata_const(rep), false, out);
    netpol_print(report_metadata_const(rep), false, out);
    evidence_print(rep, "  ", out);
    capacity_print(rep, "  ", out);
    netpol_cost_print(rep, "  ", out);
    services_cost_print(rep, "  ", out);
    pathmtu_print(rep, "  ", out);
    print_problems(rep, "  ", out);
    print_summary_line(rep, out);
}

void render_text_markdown(const struct report *rep, FILE *out)
{
    print_header(rep, true, out);
    print_table(rep, "latency", "Latency tests (microseconds)", true, out);
    print_table(rep, "loaded", LOADED_TITLE, true, out);
    print_table(rep, "throughput", "Throughput tests", true, out);
    readiness_print(report_metadata_const(rep), true, out);
    netpol_print(report_metadata_const(rep), true, out);
    evidence_print(rep, "- ", out);
    capacity_print(rep, "- ", out);
    netpol_cost_print(rep, "- ", out);
    services_cost_print(rep, "- ", out);
    pathmtu_print(rep, "- ", out);
    print_problems(rep, "- ", out);
    print_summary_line(rep, out);
}
