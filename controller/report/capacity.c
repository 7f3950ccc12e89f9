/* SPDX-License-Identifier: Apache-2.0 */
/* capacity.c - see capacity.h. */
#include "controller/report/capacity.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/html_util.h"
#include "controller/report/report.h"

/* The counters that say why connections stopped getting through, in the order first_counter
 * prefers within one step. conntrack.table_full is made here from the gauges. */
static const char *const cap_counters[] = {
    "conntrack.insert_failed", "conntrack.drop",     "conntrack.early_drop", "conntrack.table_full",
    "TcpExt.ListenOverflows",  "TcpExt.ListenDrops", "Icmp.OutDestUnreachs", "TcpExt.TCPSynRetrans",
};
#define N_CAP (sizeof(cap_counters) / sizeof(cap_counters[0]))
static const char *const sides[] = {"client", "server"};

static const json_t *crr_result(const json_t *doc)
{
    const json_t *r;
    size_t i;

    json_array_foreach(json_object_get(doc, "results"), i, r)
    {
        const char *t = json_string_value(json_object_get(r, "test"));
        if (t && strcmp(t, "TCP_CRR") == 0)
            return r;
    }
    return NULL;
}

/* The capacity counters of one side's counters object that moved. New reference. */
static json_t *moved_of_side(const json_t *side)
{
    const json_t *deltas = json_object_get(side, "deltas");
    json_t *out = json_object();
    json_int_t count = json_integer_value(json_object_get(side, "conntrack_count"));
    json_int_t max = json_integer_value(json_object_get(side, "conntrack_max"));

    for (size_t i = 0; i < N_CAP; i++) {
        json_int_t d = json_integer_value(json_object_get(deltas, cap_counters[i]));
        if (d > 0)
            json_object_set_new(out, cap_counters[i], json_integer(d));
    }
    if (max > 0 && count >= max)
        json_object_set_new(out, "conntrack.table_full", json_integer(1));
    return out;
}

json_t *capacity_step_of_doc(const json_t *doc, int parallel)
{
    const json_t *r = crr_result(doc), *c;
    json_t *step = json_pack("{s:i}", "parallel", parallel), *counters;
    json_int_t ops, failed;

    if (!r) {
        const json_t *e = json_array_get(json_object_get(doc, "errors"), 0);
        const char *msg = json_string_value(json_object_get(e, "error"));
        json_object_set_new(step, "error", json_string(msg ? msg : "no TCP_CRR result"));
        return step;
    }
    ops = json_integer_value(json_object_get(r, "ops"));
    failed = json_integer_value(json_object_get(r, "conn_errors"));
    json_object_set_new(step, "conn_per_sec",
                        json_real(json_number_value(json_object_get(r, "ops_per_sec"))));
    json_object_set_new(
        step, "p99_us",
        json_real(json_number_value(json_object_get(json_object_get(r, "latency_us"), "p99"))));
    json_object_set_new(step, "conn_errors", json_integer(failed));
    json_object_set_new(
        step, "error_pct",
        json_real(ops + failed > 0 ? 100.0 * (double)failed / (double)(ops + failed) : 0.0));
    counters = json_object();
    c = json_object_get(r, "counters");
    for (size_t k = 0; k < 2; k++)
        if (json_is_object(json_object_get(c, sides[k])))
            json_object_set_new(counters, sides[k], moved_of_side(json_object_get(c, sides[k])));
    json_object_set_new(step, "counters", counters);
    return step;
}

const char *capacity_stop(const json_t *steps)
{
    size_t n = json_array_size(steps);
    const json_t *first = json_array_get(steps, 0), *last = json_array_get(steps, n - 1);
    double p0, p;

    if (!last)
        return NULL;
    if (json_object_get(last, "error") ||
        json_number_value(json_object_get(last, "error_pct")) > CAPACITY_ERROR_PCT)
        return "errors";
    p0 = json_number_value(json_object_get(first, "p99_us"));
    p = json_number_value(json_object_get(last, "p99_us"));
    if (n > 1 && p0 > 0 && p > CAPACITY_P99_FACTOR * p0)
        return "p99";
    return NULL;
}

json_t *capacity_first_counter(const json_t *steps)
{
    const json_t *s;
    size_t i;

    json_array_foreach(steps, i, s)
    {
        const json_t *counters = json_object_get(s, "counters");
        for (size_t c = 0; c < N_CAP; c++)
            for (size_t k = 0; k < 2; k++) {
                const json_t *d =
                    json_object_get(json_object_get(counters, sides[k]), cap_counters[c]);
                if (json_integer_value(d) > 0)
                    return json_pack("{s:s, s:s, s:O, s:O}", "side", sides[k], "counter",
                                     cap_counters[c], "delta", d, "parallel",
                                     json_object_get(s, "parallel"));
            }
    }
    return NULL;
}

json_t *capacity_result(const json_t *steps, const char *stop)
{
    size_t n = json_array_size(steps), passed = stop ? (n ? n - 1 : 0) : n;
    double max = 0;
    json_int_t at = 0;
    json_t *out, *first;

    for (size_t i = 0; i < passed; i++) {
        const json_t *s = json_array_get(steps, i);
        double v = json_number_value(json_object_get(s, "conn_per_sec"));
        if (v > max) {
            max = v;
            at = json_integer_value(json_object_get(s, "parallel"));
        }
    }
    out = json_pack("{s:i, s:f, s:I, s:s, s:o}", "v", CAPACITY_VERSION, "max_conn_per_sec", max,
                    "max_parallel", at, "stop", stop ? stop : "bound", "steps",
                    json_deep_copy(steps));
    first = capacity_first_counter(steps);
    if (first)
        json_object_set_new(out, "first_counter", first);
    return out;
}

int capacity_text(const json_t *row, char *buf, size_t len)
{
    const json_t *cap = json_object_get(row, "capacity"), *fc, *steps, *last;
    const char *stop;
    int used;

    if (len)
        buf[0] = '\0';
    if (!json_is_object(cap))
        return 0;
    stop = json_string_value(json_object_get(cap, "stop"));
    steps = json_object_get(cap, "steps");
    last = json_array_get(steps, json_array_size(steps) - 1);
    used = snprintf(buf, len, "max %.0f conn/s at %lld client%s",
                    json_number_value(json_object_get(cap, "max_conn_per_sec")),
                    (long long)json_integer_value(json_object_get(cap, "max_parallel")),
                    json_integer_value(json_object_get(cap, "max_parallel")) == 1 ? "" : "s");
    if (used >= 0 && (size_t)used < len && stop && strcmp(stop, "bound") != 0 && last) {
        long long p = (long long)json_integer_value(json_object_get(last, "parallel"));
        if (strcmp(stop, "p99") == 0)
            used += snprintf(buf + used, len - (size_t)used, "; stopped at %lld: p99 %.0f us", p,
                             json_number_value(json_object_get(last, "p99_us")));
        else if (json_object_get(last, "error"))
            used += snprintf(buf + used, len - (size_t)used, "; stopped at %lld: failed", p);
        else
            used += snprintf(buf + used, len - (size_t)used, "; stopped at %lld: errors %.2f%%", p,
                             json_number_value(json_object_get(last, "error_pct")));
    } else if (used >= 0 && (size_t)used < len) {
        used +=
            snprintf(buf + used, len - (size_t)used, "; no stop up to %d", CAPACITY_MAX_PARALLEL);
    }
    fc = json_object_get(cap, "first_counter");
    if (fc && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, "; first: %s %s +%lld at %lld",
                 json_string_value(json_object_get(fc, "side")),
                 json_string_value(json_object_get(fc, "counter")),
                 (long long)json_integer_value(json_object_get(fc, "delta")),
                 (long long)json_integer_value(json_object_get(fc, "parallel")));
    return 1;
}

void capacity_print(const struct report *rep, const char *bullet, FILE *out)
{
    bool first = true;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i);
        char text[512], label[256];
        struct rowkey k;
        if (!row || !capacity_text(row, text, sizeof(text)))
            continue;
        if (first)
            fprintf(out,
                    "\nConnection capacity (concurrent TCP_CRR clients until over %.1f%% of "
                    "connections fail or p99 doubles):\n",
                    CAPACITY_ERROR_PCT);
        first = false;
        rowkey_of(row, &k);
        textsafe_line(out, "%s%s: %s", bullet, rowkey_label(&k, label, sizeof(label)), text);
    }
}

/* The moved capacity counters of one step: "server Icmp.OutDestUnreachs +3, ..." */
static void step_counters(const json_t *step, FILE *out)
{
    const json_t *counters = json_object_get(step, "counters");
    bool any = false;

    for (size_t k = 0; k < 2; k++) {
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(counters, sides[k]), key, v)
        {
            fprintf(out, "%s%s ", any ? ", " : "", sides[k]);
            html_esc(key, out);
            fprintf(out, " +%lld", (long long)json_integer_value(v));
            any = true;
        }
    }
}

void capacity_html(const json_t *row, FILE *out)
{
    const json_t *s;
    char text[512];
    size_t i;

    if (!capacity_text(row, text, sizeof(text)))
        return;
    fputs("<p>Connection capacity: ", out);
    html_esc(text, out);
    fputs("</p>\n<table><tr><th>clients</th><th>conn/s</th><th>p99 us</th><th>failed %</th>"
          "<th>capacity counters that moved</th></tr>\n",
          out);
    json_array_foreach(json_object_get(json_object_get(row, "capacity"), "steps"), i, s)
    {
        fprintf(out, "<tr><td>%lld</td>",
                (long long)json_integer_value(json_object_get(s, "parallel")));
        if (json_object_get(s, "error")) {
            fputs("<td colspan=\"3\">", out);
            html_esc(json_string_value(json_object_get(s, "error")), out);
            fputs("</td><td></td></tr>\n", out);
            continue;
        }
        fprintf(out, "<td>%.0f</td><td>%.0f</td><td>%.2f</td><td>",
                json_number_value(json_object_get(s, "conn_per_sec")),
                json_number_value(json_object_get(s, "p99_us")),
                json_number_value(json_object_get(s, "error_pct")));
        step_counters(s, out);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}
