/* SPDX-License-Identifier: Apache-2.0 */
/* watch_render.c - see watch_render.h. */
#include "controller/report/watch_render.h"

#include <stdbool.h>
#include <string.h>

#include "controller/report/watch_readiness.h"

static const char *const kinds[] = {"udp", "tcp", "connect"};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static const json_t *kind_of(const json_t *path, const char *kind)
{
    return json_object_get(json_object_get(json_object_get(path, "probe"), "probes"), kind);
}

double watch_longest_outage(const json_t *doc)
{
    const json_t *paths = json_object_get(doc, "paths"), *p;
    double longest = 0;
    size_t i;

    json_array_foreach(paths, i, p)
    {
        for (size_t k = 0; k < N_KINDS; k++) {
            double v = num(kind_of(p, kinds[k]), "longest_outage_s");
            if (v > longest)
                longest = v;
        }
    }
    return longest;
}

double watch_outage_at(const json_t *doc, const json_t *path, const json_t *o)
{
    double offset = num(json_object_get(path, "probe"), "start_unix_s") - num(doc, "start_unix_s");
    return offset + num(o, "start_s");
}

static void row(FILE *f, bool md, const char *path, const char *kind, const json_t *k)
{
    const json_t *lat = json_object_get(k, "latency_us");
    const json_t *conn = json_object_get(k, "connection");
    char resets[16] = "-";

    if (conn)
        snprintf(resets, sizeof(resets), "%lld",
                 (long long)json_integer_value(json_object_get(conn, "resets")));
    fprintf(f,
            md ? "| %s | %s | %lld | %lld | %lld | %.3f | %.3f | %s | %.1f | %.1f |\n"
               : "%-26s %-8s %7lld %7lld %8lld %10.3f %8.3f %7s %9.1f %9.1f\n",
            path, kind, (long long)json_integer_value(json_object_get(k, "sent")),
            (long long)json_integer_value(json_object_get(k, "lost")),
            (long long)json_integer_value(json_object_get(k, "outages_total")),
            num(k, "longest_outage_s"), num(k, "longest_gap_s"), resets, num(lat, "p50"),
            num(lat, "p99"));
}

static void outages(const json_t *doc, FILE *f, bool md)
{
    const json_t *paths = json_object_get(doc, "paths"), *p, *o;
    size_t i, j, n = 0;

    json_array_foreach(paths, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "path"));
        for (size_t k = 0; k < N_KINDS; k++) {
            const json_t *kd = kind_of(p, kinds[k]);
            json_array_foreach(json_object_get(kd, "outages"), j, o)
            {
                if (n++ == 0)
                    fprintf(f, md ? "\n**Outages** (seconds from the start)\n\n" : "\nOutages:\n");
                fprintf(f, "%s%s %s: %.3f s at +%.3f s (%lld lost)%s\n", md ? "* " : "  ", name,
                        kinds[k], num(o, "length_s"), watch_outage_at(doc, p, o),
                        (long long)json_integer_value(json_object_get(o, "lost")),
                        json_is_true(json_object_get(o, "open")) ? ", still going at the end" : "");
            }
            if (json_integer_value(json_object_get(kd, "outages_total")) >
                (json_int_t)json_array_size(json_object_get(kd, "outages")))
                fprintf(f, "%s%s %s: %lld outages in all (the first ones listed)\n",
                        md ? "* " : "  ", name, kinds[k],
                        (long long)json_integer_value(json_object_get(kd, "outages_total")));
        }
    }
    if (n == 0)
        fprintf(f, "\nNo outage.\n");
}

void watch_render(const json_t *doc, enum watch_format fmt, FILE *f)
{
    const json_t *paths = json_object_get(doc, "paths"), *p;
    bool md = fmt == WATCH_MARKDOWN;
    size_t i;

    if (fmt == WATCH_HTML) {
        watch_render_html(doc, f);
        return;
    }
    if (fmt == WATCH_JSON) {
        json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        fputc('\n', f);
        return;
    }
    if (md)
        fprintf(f, "| path | kind | sent | lost | outages | longest outage s | longest gap s | "
                   "resets | p50 us | p99 us |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    else
        fprintf(f, "%-26s %-8s %7s %7s %8s %10s %8s %7s %9s %9s\n", "PATH", "KIND", "SENT", "LOST",
                "OUTAGES", "LONGEST_S", "GAP_S", "RESETS", "P50_US", "P99_US");
    json_array_foreach(paths, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "path"));
        const json_t *err = json_object_get(p, "error");
        if (json_is_string(err)) {
            fprintf(f, md ? "| %s | FAILED: %s |\n" : "%-26s FAILED: %s\n", name,
                    json_string_value(err));
            continue;
        }
        for (size_t k = 0; k < N_KINDS; k++) {
            const json_t *kd = kind_of(p, kinds[k]);
            if (kd)
                row(f, md, name, kinds[k], kd);
        }
    }
    outages(doc, f, md);
    watch_readiness_print(doc, md, f);
    fprintf(f, "%sLongest outage %.3f s (limit %.3f s): %s\n", md ? "\n" : "",
            watch_longest_outage(doc), num(doc, "max_outage_s"),
            watch_longest_outage(doc) > num(doc, "max_outage_s") ? "EXCEEDED" : "ok");
}
