/* SPDX-License-Identifier: Apache-2.0 */
/* render_csv.c - the CSV format of a report (render_text.h): one line per row with its key
 * figures, spreadsheet-safe cells. Split from render_text.c, which keeps the tables. */
#include "controller/report/render_text.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/outlier.h"
#include "controller/report/report.h"

#define CELL 64

/* The stats object of the row's key metric (ops/s or Mb/s), or NULL. Borrowed. */
static const json_t *key_stats(const json_t *row)
{
    const json_t *stats = json_object_get(row, "stats");
    const char *kind = json_string_value(json_object_get(row, "kind"));

    return json_object_get(stats, strcmp(kind, "latency") == 0 ? "ops_per_sec" : "throughput_mbps");
}

/* RFC 4180: quote when the value has a comma, quote or newline. Text from the report has its
 * control characters replaced, and a cell a spreadsheet would run as a formula ('=', '+', '-',
 * '@' first, not a number) gets a leading "'" (base/textsafe.h). */
static void csv_field(const char *s, bool last, FILE *out)
{
    char safe[1024], *end;

    if (strcmp(s, "-") == 0) /* absent number: empty cell */
        s = "";
    if (textsafe_csv_formula(s) && (strtod(s, &end), *end != 0))
        snprintf(safe, sizeof(safe), "'%s", s);
    else
        snprintf(safe, sizeof(safe), "%s", s);
    s = textsafe_inplace(safe);
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

/* sweep rows ("node:NAME"): that node's verdict (outlier.h); "" otherwise */
static const char *node_verdict(const json_t *md, const json_t *row)
{
    const char *client;
    struct rowkey k;
    size_t i;
    const json_t *n;

    rowkey_of(row, &k);
    if (!(client = rowkey_sweep_node(&k)))
        return "";
    json_array_foreach(json_object_get(json_object_get(md, "sweep"), "nodes"), i, n)
    {
        const char *name = json_string_value(json_object_get(n, "name"));
        const char *v = json_string_value(json_object_get(n, "verdict"));
        if (name && v && strcmp(name, client) == 0)
            return v;
    }
    return "";
}

/* ip_family and the UDP columns (empty on TCP rows); note and node_verdict stay last. */
static void csv_udp(const json_t *row, FILE *out)
{
    static const char *const udp[] = {"sent", "lost", "loss_pct", "jitter_us", "out_of_order"};
    static const int decimals[] = {0, 0, 3, 3, 0};
    const json_t *agg = json_object_get(row, "aggregate");
    struct rowkey key;
    char b[CELL];

    rowkey_of(row, &key);
    csv_field(key.ip_family, false, out); /* a row without one: ROWKEY_DEFAULT_FAMILY */
    for (size_t k = 0; k < sizeof(udp) / sizeof(udp[0]); k++)
        csv_field(render_num(agg, "udp", udp[k], decimals[k], b, sizeof(b)), false, out);
}

void render_text_csv(const struct report *rep, FILE *out)
{
    static const char *const header[] = {"scenario",
                                         "placement",
                                         "test",
                                         "reverse",
                                         "kind",
                                         "status",
                                         "samples",
                                         "min_us",
                                         "mean_us",
                                         "p50_us",
                                         "p90_us",
                                         "p99_us",
                                         "p999_us",
                                         "max_us",
                                         "ops_per_sec",
                                         "throughput_mbps",
                                         "retransmits",
                                         "mss",
                                         "cpu_s_per_gbit_client",
                                         "cpu_s_per_gbit_server",
                                         "cv_pct",
                                         "ci95_lo",
                                         "ci95_hi",
                                         "noisy",
                                         "ip_family",
                                         "udp_sent",
                                         "udp_lost",
                                         "udp_loss_pct",
                                         "udp_jitter_us",
                                         "udp_out_of_order",
                                         "load_mbps",
                                         "idle_p50_us",
                                         "idle_p99_us",
                                         "latency_increase_p50_us",
                                         "latency_increase_p99_us",
                                         "note",
                                         "node_verdict",
                                         NULL};
    static const char *const lat[] = {"min", "mean", "p50", "p90", "p99", "p999", "max"};
    char b[CELL];

    for (size_t i = 0; header[i]; i++)
        csv_field(header[i], header[i + 1] == NULL, out);
    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i), *agg = json_object_get(row, "aggregate");
        const json_t *ks = key_stats(row), *ci = json_object_get(ks, "ci95");
        const char *note = json_string_value(json_object_get(row, "skip_reason"));
        const json_t *e = json_array_get(json_object_get(row, "errors"), 0);

        if (!note && e)
            note = json_string_value(json_object_get(e, "error"));
        csv_field(json_string_value(json_object_get(row, "scenario")), false, out);
        csv_field(json_string_value(json_object_get(row, "placement")), false, out);
        csv_field(json_string_value(json_object_get(row, "test")), false, out);
        csv_field(json_is_true(json_object_get(row, "reverse")) ? "true" : "false", false, out);
        csv_field(json_string_value(json_object_get(row, "kind")), false, out);
        csv_field(json_string_value(json_object_get(row, "status")), false, out);
        snprintf(b, sizeof(b), "%zu", json_array_size(json_object_get(row, "samples")));
        csv_field(b, false, out);
        for (size_t k = 0; k < 7; k++)
            csv_field(render_num(agg, "latency_us", lat[k], 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "ops_per_sec", NULL, 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "throughput_mbps", NULL, 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "tcp", "retransmits", 0, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "tcp", "mss", 0, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "cpu_seconds_per_gbit", "client", 4, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "cpu_seconds_per_gbit", "server", 4, b, sizeof(b)), false, out);
        csv_field(render_num(ks, "cv_pct", NULL, 2, b, sizeof(b)), false, out);
        snprintf(b, sizeof(b), "%.3f", json_number_value(json_array_get(ci, 0)));
        csv_field(json_is_array(ci) ? b : "-", false, out);
        snprintf(b, sizeof(b), "%.3f", json_number_value(json_array_get(ci, 1)));
        csv_field(json_is_array(ci) ? b : "-", false, out);
        csv_field(json_is_true(json_object_get(row, "noisy")) ? "true" : "false", false, out);
        csv_udp(row, out);
        csv_field(render_num(agg, "load", "throughput_mbps", 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "idle_latency_us", "p50", 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "idle_latency_us", "p99", 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "latency_increase_us", "p50", 3, b, sizeof(b)), false, out);
        csv_field(render_num(agg, "latency_increase_us", "p99", 3, b, sizeof(b)), false, out);
        csv_field(note ? note : "", false, out);
        csv_field(node_verdict(report_metadata_const(rep), row), true, out);
    }
}
