/* SPDX-License-Identifier: Apache-2.0 */
/* watch_readiness.c - see watch_readiness.h. */
#include "controller/report/watch_readiness.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/textsafe.h"
#include "controller/report/html_util.h"
#include "controller/report/stats.h"

static const char *const segments[] = {"total_s", "scheduling_s", "network_s", "first_packet_s"};
#define N_SEGMENTS (sizeof(segments) / sizeof(segments[0]))

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static int sample_cmp(const void *a, const void *b)
{
    double x = num(*(const json_t *const *)a, "at_s"), y = num(*(const json_t *const *)b, "at_s");
    return x < y ? -1 : x > y;
}

static int node_cmp(const void *a, const void *b)
{
    return strcmp(str(*(const json_t *const *)a, "node"), str(*(const json_t *const *)b, "node"));
}

/* one record as a sample of its node's series (new reference) */
static json_t *sample(const json_t *r, double start_unix_s)
{
    json_t *s = json_pack("{s:f, s:f}", "at_s", num(r, "created_unix_s") - start_unix_s,
                          "created_unix_s", num(r, "created_unix_s"));

    if (json_is_string(json_object_get(r, "error"))) {
        json_object_set(s, "error", json_object_get(r, "error"));
        if (json_is_string(json_object_get(r, "cause")))
            json_object_set(s, "cause", json_object_get(r, "cause"));
        return s;
    }
    if (json_is_string(json_object_get(r, "pod")))
        json_object_set(s, "pod", json_object_get(r, "pod"));
    for (size_t k = 0; k < N_SEGMENTS; k++)
        if (json_is_number(json_object_get(r, segments[k])))
            json_object_set_new(s, segments[k], json_real(num(r, segments[k])));
    if (json_is_number(json_object_get(r, "time_to_ip_s"))) /* JSON only */
        json_object_set_new(s, "time_to_ip_s", json_real(num(r, "time_to_ip_s")));
    return s;
}

/* sorts a node's series by time and adds its counts and p50/max of total_s */
static void finish_node(json_t *n)
{
    json_t *series = json_object_get(n, "series");
    size_t len = json_array_size(series), measured = 0, failed = 0, no_network = 0;
    json_t **order = kp_xcalloc(len + 1, sizeof(*order));
    double *v = kp_xcalloc(len + 1, sizeof(*v)), max = 0;
    json_t *sorted = json_array();

    for (size_t i = 0; i < len; i++)
        order[i] = json_array_get(series, i);
    qsort(order, len, sizeof(*order), sample_cmp);
    for (size_t i = 0; i < len; i++) {
        json_array_append(sorted, order[i]);
        if (json_object_get(order[i], "error")) {
            const char *cause = json_string_value(json_object_get(order[i], "cause"));
            failed++;
            /* the pod never got a network: its sandbox failed (k8s_podfail's CNI causes) */
            no_network +=
                cause && (strncmp(cause, "cni-", 4) == 0 || strncmp(cause, "ip-", 3) == 0);
            continue;
        }
        if (!json_is_number(json_object_get(order[i], "total_s")))
            continue;
        v[measured] = num(order[i], "total_s");
        if (v[measured] > max)
            max = v[measured];
        measured++;
    }
    json_object_set_new(n, "measured", json_integer((json_int_t)measured));
    json_object_set_new(n, "failed", json_integer((json_int_t)failed));
    json_object_set_new(n, "no_network", json_integer((json_int_t)no_network));
    json_object_set_new(n, "total_s",
                        measured
                            ? json_pack("{s:f, s:f}", "p50", stats_median(v, measured), "max", max)
                            : json_null());
    json_object_set_new(n, "series", sorted);
    free(order);
    free(v);
}

json_t *watch_readiness_build(const json_t *records, double start_unix_s, double every_s,
                              double bound_s)
{
    json_t *by_node = json_object(), *nodes = json_array(), *n;
    const json_t **order;
    const json_t *r;
    const char *k;
    size_t i, count = 0;

    json_array_foreach(records, i, r)
    {
        n = json_object_get(by_node, str(r, "node"));
        if (!n) {
            n = json_pack("{s:s, s:[]}", "node", str(r, "node"), "series");
            json_object_set_new(by_node, str(r, "node"), n);
        }
        json_array_append_new(json_object_get(n, "series"), sample(r, start_unix_s));
    }
    order = kp_xcalloc(json_object_size(by_node) + 1, sizeof(*order));
    json_object_foreach(by_node, k, n) order[count++] = n;
    qsort(order, count, sizeof(*order), node_cmp);
    for (i = 0; i < count; i++) {
        finish_node((json_t *)order[i]);
        json_array_append(nodes, (json_t *)order[i]);
    }
    free(order);
    json_decref(by_node);
    return json_pack("{s:f, s:f, s:o}", "every_s", every_s, "bound_s", bound_s, "nodes", nodes);
}

/* ---- text ---- */

/* text safe for a terminal, and for a Markdown table cell ('|' would split it) */
static const char *cell(const char *s, bool markdown, char *buf, size_t len)
{
    textsafe(s, buf, len);
    for (char *p = buf; markdown && *p; p++)
        if (*p == '|')
            *p = '/';
    return buf;
}

static void print_sample(const char *node, const json_t *s, bool md, FILE *out)
{
    char err[300], seg[N_SEGMENTS][16];

    if (json_is_string(json_object_get(s, "error"))) {
        cell(str(s, "error"), md, err, sizeof(err));
        fprintf(out, md ? "| %s | %.1f | failed: %s | | | |\n" : "  %-24s %8.1f  failed: %s\n",
                node, num(s, "at_s"), err);
        return;
    }
    for (size_t k = 0; k < N_SEGMENTS; k++) {
        if (json_is_number(json_object_get(s, segments[k])))
            snprintf(seg[k], sizeof(seg[k]), "%.3f", num(s, segments[k]));
        else
            snprintf(seg[k], sizeof(seg[k]), "-");
    }
    fprintf(out, md ? "| %s | %.1f | %s | %s | %s | %s |\n" : "  %-24s %8.1f %8s %8s %8s %8s\n",
            node, num(s, "at_s"), seg[0], seg[1], seg[2], seg[3]);
}

void watch_readiness_print(const json_t *doc, bool md, FILE *out)
{
    const json_t *rd = json_object_get(doc, "readiness");
    const json_t *nodes = json_object_get(rd, "nodes"), *n, *s;
    char node[128], p50[16], max[16];
    size_t i, j;

    if (!rd)
        return;
    fprintf(out,
            md ? "\n**Pod network readiness** (a pod per node every %g s; seconds from its "
                 "creation to its first answered packet; no network: failed pods whose sandbox "
                 "failed)\n\n| node | pods | failed | no network | p50 s | "
                 "max s |\n|---|--:|--:|--:|--:|--:|\n"
               : "\nPod network readiness (a pod per node every %g s; seconds from its creation "
                 "to its first answered packet; NO_NET: failed pods whose sandbox failed)\n%-24s "
                 "%6s %6s %6s %8s %8s\n",
            num(rd, "every_s"), "NODE", "PODS", "FAILED", "NO_NET", "P50_S", "MAX_S");
    if (json_array_size(nodes) == 0)
        fprintf(out, md ? "| (no pod measured) | | | | | |\n" : "(no pod measured)\n");
    json_array_foreach(nodes, i, n)
    {
        const json_t *t = json_object_get(n, "total_s");
        cell(str(n, "node"), md, node, sizeof(node));
        snprintf(p50, sizeof(p50), "-");
        snprintf(max, sizeof(max), "-");
        if (json_is_object(t)) {
            snprintf(p50, sizeof(p50), "%.3f", num(t, "p50"));
            snprintf(max, sizeof(max), "%.3f", num(t, "max"));
        }
        fprintf(out,
                md ? "| %s | %lld | %lld | %lld | %s | %s |\n"
                   : "%-24s %6lld %6lld %6lld %8s %8s\n",
                node,
                (long long)(json_integer_value(json_object_get(n, "measured")) +
                            json_integer_value(json_object_get(n, "failed"))),
                (long long)json_integer_value(json_object_get(n, "failed")),
                (long long)json_integer_value(json_object_get(n, "no_network")), p50, max);
    }
    if (json_array_size(nodes) == 0)
        return;
    fprintf(out,
            md ? "\n| node | at s | total s | scheduling s | network s | first packet s "
                 "|\n|---|--:|--:|--:|--:|--:|\n"
               : "Readiness series (at: seconds from the start of the watch)\n  %-24s %8s "
                 "%8s %8s %8s %8s\n",
            "NODE", "AT_S", "TOTAL_S", "SCHED_S", "NET_S", "FIRST_S");
    json_array_foreach(nodes, i, n)
    {
        cell(str(n, "node"), md, node, sizeof(node));
        json_array_foreach(json_object_get(n, "series"), j, s) print_sample(node, s, md, out);
    }
}

/* ---- HTML ---- */

size_t watch_readiness_rows(const json_t *doc)
{
    return json_array_size(json_object_get(json_object_get(doc, "readiness"), "nodes"));
}

static double x_at(const struct watch_readiness_axis *ax, double t)
{
    double span = ax->span_s > 0 ? ax->span_s : 1;

    if (t < 0)
        t = 0;
    if (t > span)
        t = span;
    return ax->x0 + t / span * ax->width;
}

static void marker(const json_t *s, const struct watch_readiness_axis *ax, double cy, FILE *out)
{
    double x = x_at(ax, num(s, "at_s"));

    if (json_is_string(json_object_get(s, "error"))) {
        fprintf(out,
                "<path d=\"M%.1f %.1fl7 7m0 -7l-7 7\" stroke=\"#d62728\" stroke-width=\"2\">"
                "<title>+%.1f s: failed: ",
                x - 3.5, cy - 3.5, num(s, "at_s"));
        html_esc(str(s, "error"), out);
        fputs("</title></path>\n", out);
        return;
    }
    fprintf(out,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#2ca02c\"><title>+%.1f s: %.3f s "
            "(scheduling %.3f, network %.3f, first packet %.3f)",
            x, cy, num(s, "at_s"), num(s, "total_s"), num(s, "scheduling_s"), num(s, "network_s"),
            num(s, "first_packet_s"));
    if (*str(s, "pod")) {
        fputs(" pod ", out);
        html_esc(str(s, "pod"), out);
    }
    fputs("</title></circle>\n", out);
}

void watch_readiness_svg(const json_t *doc, const struct watch_readiness_axis *ax, double y,
                         double row_h, FILE *out)
{
    const json_t *nodes = json_object_get(json_object_get(doc, "readiness"), "nodes"), *n, *s;
    size_t i, j;

    json_array_foreach(nodes, i, n)
    {
        double cy = y + (double)i * row_h + row_h / 2;
        const json_t *t = json_object_get(n, "total_s");
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">ready ", ax->label_x, cy + 4);
        html_esc(str(n, "node"), out);
        if (json_is_object(t))
            fprintf(out, " %.2f/%.2f s", num(t, "p50"), num(t, "max"));
        fputs("</text>\n", out);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                ax->x0, ax->x0 + ax->width, cy, cy);
        json_array_foreach(json_object_get(n, "series"), j, s) marker(s, ax, cy, out);
    }
}
