/* SPDX-License-Identifier: Apache-2.0 */
/* readiness.c - see readiness.h. */
#include "controller/report/readiness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/textsafe.h"
#include "controller/report/stats.h"

const char *const readiness_segments[READINESS_SEGMENTS] = {"scheduling_s", "network_s",
                                                            "first_packet_s", "total_s"};

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int key_cmp(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int c = strcmp(str(x, "node"), str(y, "node"));
    return c ? c : strcmp(str(x, "kind"), str(y, "kind"));
}

/* {"p50", "max"} of segment seg over the pods of (node, kind), or NULL when none has it */
static json_t *seg_stats(const json_t *pods, const char *node, const char *kind, const char *seg)
{
    size_t i, n = 0;
    const json_t *p;
    double *v = kp_xcalloc(json_array_size(pods) + 1, sizeof(*v));
    double max = 0;
    json_t *out = NULL;

    json_array_foreach(pods, i, p)
    {
        const json_t *x = json_object_get(p, seg);
        if (strcmp(str(p, "node"), node) != 0 || strcmp(str(p, "kind"), kind) != 0 ||
            !json_is_number(x))
            continue;
        v[n] = json_number_value(x);
        if (v[n] > max)
            max = v[n];
        n++;
    }
    if (n)
        out = json_pack("{s:f, s:f}", "p50", stats_median(v, n), "max", max);
    free(v);
    return out;
}

json_t *readiness_summary(const json_t *pods)
{
    json_t *keys = json_object(), *out = json_array();
    const json_t **order;
    size_t i, n = 0;
    const json_t *p;
    const char *k;
    json_t *v;

    json_array_foreach(pods, i, p)
    {
        char *key = kp_xasprintf("%s\n%s", str(p, "node"), str(p, "kind"));
        json_t *e = json_object_get(keys, key);
        if (!e) {
            e = json_pack("{s:s, s:s, s:i}", "node", str(p, "node"), "kind", str(p, "kind"), "pods",
                          0);
            json_object_set_new(keys, key, e);
        }
        json_object_set_new(e, "pods",
                            json_integer(json_integer_value(json_object_get(e, "pods")) + 1));
        free(key);
    }
    order = kp_xcalloc(json_object_size(keys) + 1, sizeof(*order));
    json_object_foreach(keys, k, v) order[n++] = v;
    qsort(order, n, sizeof(*order), key_cmp);
    for (i = 0; i < n; i++) {
        json_t *e = json_deep_copy(order[i]);
        for (size_t s = 0; s < READINESS_SEGMENTS; s++) {
            json_t *st = seg_stats(pods, str(e, "node"), str(e, "kind"), readiness_segments[s]);
            if (st)
                json_object_set_new(e, readiness_segments[s], st);
        }
        json_array_append_new(out, e);
    }
    free(order);
    json_decref(keys);
    return out;
}

json_t *readiness_metadata(json_t *pods)
{
    return json_pack("{s:O, s:o}", "pods", pods, "nodes", readiness_summary(pods));
}

static const char *const seg_titles[READINESS_SEGMENTS] = {"scheduling", "network set-up",
                                                           "first packet", "total"};

static void fmt_pair(const json_t *st, char *buf, size_t len)
{
    if (!st)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3f / %.3f", json_number_value(json_object_get(st, "p50")),
                 json_number_value(json_object_get(st, "max")));
}

/* One size of --services (metadata.services, or an entry of metadata.services_sizes): how
 * many, and each node's programming latency; first: the section's title goes before it */
static void services_block(const json_t *sv, bool markdown, bool first, FILE *out)
{
    const json_t *prog = json_object_get(sv, "programming"), *e;
    long long count = (long long)json_integer_value(json_object_get(sv, "count"));
    const char *n, *err = json_string_value(json_object_get(sv, "error"));
    char node[128], why[256];

    if (markdown && first)
        fprintf(out, "\n## Services at scale\n");
    if (err) {
        textsafe(err, why, sizeof(why));
        fprintf(out, "\n%s%lld extra Services: failed: %s\n",
                markdown ? "" : "Services at scale: ", count, why);
        return;
    }
    fprintf(out,
            markdown ? "\n%lld extra Services, created in %.1f s; Service programming latency per "
                       "node (seconds):\n\n| node | latency |\n|---|---:|\n"
                     : "\nServices at scale: %lld extra Services, created in %.1f s\n%-24s %9s\n",
            count, json_number_value(json_object_get(sv, "create_s")), markdown ? "" : "node",
            markdown ? "" : "latency_s");
    json_object_foreach((json_t *)prog, n, e)
    {
        const json_t *l = json_object_get(e, "latency_s");
        char cell[32];
        textsafe(n, node, sizeof(node));
        if (json_is_number(l))
            snprintf(cell, sizeof(cell), "%.3f", json_number_value(l));
        else
            snprintf(cell, sizeof(cell), "none");
        fprintf(out, markdown ? "| %s | %s |\n" : "%-24s %9s\n", node, cell);
    }
}

/* metadata.services (kperf run --services N), or each size of metadata.services_sizes
 * (--services N,N...) */
static void services_print(const json_t *md, bool markdown, FILE *out)
{
    const json_t *sizes = json_object_get(md, "services_sizes"), *sv;
    size_t i;

    if (json_object_get(md, "services"))
        services_block(json_object_get(md, "services"), markdown, true, out);
    json_array_foreach(sizes, i, sv)
        services_block(sv, markdown, i == 0 && !json_object_get(md, "services"), out);
}

void readiness_print(const json_t *md, bool markdown, FILE *out)
{
    const json_t *nodes = json_object_get(json_object_get(md, "readiness"), "nodes");
    const json_t *e;
    size_t i;
    char node[128], kind[32], cells[READINESS_SEGMENTS][48];

    services_print(md, markdown, out);
    if (json_array_size(nodes) == 0)
        return;
    if (markdown) {
        fprintf(out, "\n## Pod network readiness (seconds, p50 / max)\n\n");
        fprintf(out, "| node | pods | kind |");
        for (size_t s = 0; s < READINESS_SEGMENTS; s++)
            fprintf(out, " %s |", seg_titles[s]);
        fprintf(out, "\n|---|---:|---|---:|---:|---:|---:|\n");
    } else {
        fprintf(out, "\nPod network readiness (seconds, p50 / max)\n");
        fprintf(out, "%-24s %5s %-6s %17s %17s %17s %17s\n", "node", "pods", "kind", seg_titles[0],
                seg_titles[1], seg_titles[2], seg_titles[3]);
    }
    json_array_foreach(nodes, i, e)
    {
        textsafe(str(e, "node"), node, sizeof(node));
        textsafe(str(e, "kind"), kind, sizeof(kind));
        for (size_t s = 0; s < READINESS_SEGMENTS; s++)
            fmt_pair(json_object_get(e, readiness_segments[s]), cells[s], sizeof(cells[s]));
        if (markdown)
            fprintf(out, "| %s | %lld | %s | %s | %s | %s | %s |\n", node,
                    (long long)json_integer_value(json_object_get(e, "pods")), kind, cells[0],
                    cells[1], cells[2], cells[3]);
        else
            fprintf(out, "%-24s %5lld %-6s %17s %17s %17s %17s\n", node,
                    (long long)json_integer_value(json_object_get(e, "pods")), kind, cells[0],
                    cells[1], cells[2], cells[3]);
    }
}

static const json_t *find_entry(const json_t *nodes, const json_t *like)
{
    size_t i;
    const json_t *e;

    json_array_foreach(nodes, i, e)
    {
        if (key_cmp(&e, &like) == 0)
            return e;
    }
    return NULL;
}

const char *readiness_judge(double base, double cur, const struct cmp_threshold *th)
{
    double d = cur - base;
    double limit = th->absolute ? th->value : fabs(base) * th->value / 100.0;

    if (d > limit)
        return "regression";
    if (-d > limit)
        return "improvement";
    return "within threshold";
}

/* A node's Service programming waits for its proxy's next sync, which comes at most one
 * minSyncPeriod (kube-proxy's default 1 s; kube-sim's proxy too) after the one before: a change
 * under that is where the run fell in the proxy's sync cycle, not the proxy's speed. */
#define SERVICE_FLOOR_S 1.0

/* The threshold a Service programming latency is judged by: th of base, at least the floor */
static struct cmp_threshold service_threshold(double base, const struct cmp_threshold *th)
{
    double limit = th->absolute ? th->value : fabs(base) * th->value / 100.0;
    struct cmp_threshold t = {.value = limit > SERVICE_FLOOR_S ? limit : SERVICE_FLOOR_S,
                              .absolute = true};
    return t;
}

/* One size's Service programming latency per node, base against new (metadata.services or an
 * entry of metadata.services_sizes): one entry per node both have, kind "service", segment
 * "programming_s"; count >= 0 keys the size ("services": count) */
static void programming_compare(const json_t *sb, const json_t *sn, long long count,
                                const struct cmp_threshold *th, json_t *out, size_t *regressions,
                                size_t *improvements)
{
    const json_t *pb = json_object_get(sb, "programming");
    const json_t *pn = json_object_get(sn, "programming");
    const char *node;
    const json_t *en;

    json_object_foreach((json_t *)pn, node, en)
    {
        const json_t *b = json_object_get(json_object_get(pb, node), "latency_s");
        const json_t *c = json_object_get(en, "latency_s");
        const char *v;
        json_t *e;
        if (!json_is_number(b) || !json_is_number(c))
            continue;
        struct cmp_threshold st = service_threshold(json_number_value(b), th);
        v = readiness_judge(json_number_value(b), json_number_value(c), &st);
        *regressions += strcmp(v, "regression") == 0;
        *improvements += strcmp(v, "improvement") == 0;
        e = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "node", node, "kind", "service",
                      "segment", "programming_s", "stat", "first", "base", json_number_value(b),
                      "new", json_number_value(c), "delta",
                      json_number_value(c) - json_number_value(b), "verdict", v);
        if (count >= 0)
            json_object_set_new(e, "services", json_integer(count));
        json_array_append_new(out, e);
    }
}

/* md's figures for `count` extra Services: its entry of services_sizes, or its services when
 * that has count; NULL when neither */
static const json_t *size_entry(const json_t *md, json_int_t count)
{
    const json_t *sizes = json_object_get(md, "services_sizes"), *e;
    const json_t *sv = json_object_get(md, "services");
    size_t i;

    json_array_foreach(sizes, i, e)
    {
        if (json_integer_value(json_object_get(e, "count")) == count)
            return e;
    }
    if (sv && json_integer_value(json_object_get(sv, "count")) == count)
        return sv;
    return NULL;
}

/* Service programming latency per node (kperf run --services): two one-size reports node by
 * node (metadata.services, whatever their counts, as before sizes); else size by size, keyed by
 * the count (metadata.services_sizes, or a one-size report's services as its one size) */
static void services_compare(const json_t *md_base, const json_t *md_new,
                             const struct cmp_threshold *th, json_t *out, size_t *regressions,
                             size_t *improvements)
{
    const json_t *sizes = json_object_get(md_new, "services_sizes"), *sv;
    size_t i;

    if (!sizes && !json_object_get(md_base, "services_sizes")) {
        programming_compare(json_object_get(md_base, "services"),
                            json_object_get(md_new, "services"), -1, th, out, regressions,
                            improvements);
        return;
    }
    if (!sizes && (sv = json_object_get(md_new, "services"))) {
        json_int_t c = json_integer_value(json_object_get(sv, "count"));
        programming_compare(size_entry(md_base, c), sv, c, th, out, regressions, improvements);
    }
    json_array_foreach(sizes, i, sv)
    {
        json_int_t c = json_integer_value(json_object_get(sv, "count"));
        programming_compare(size_entry(md_base, c), sv, c, th, out, regressions, improvements);
    }
}

json_t *readiness_compare(const json_t *md_base, const json_t *md_new,
                          const struct cmp_threshold *th, size_t *regressions, size_t *improvements)
{
    const json_t *nb = json_object_get(json_object_get(md_base, "readiness"), "nodes");
    const json_t *nn = json_object_get(json_object_get(md_new, "readiness"), "nodes");
    static const char *const stats[] = {"p50", "max"};
    json_t *out = json_array();
    const json_t *en;
    size_t i;

    *regressions = *improvements = 0;
    json_array_foreach(nn, i, en)
    {
        const json_t *eb = find_entry(nb, en);
        if (!eb)
            continue;
        for (size_t s = 0; s < READINESS_SEGMENTS; s++) {
            const json_t *sb = json_object_get(eb, readiness_segments[s]);
            const json_t *sn = json_object_get(en, readiness_segments[s]);
            if (!sb || !sn)
                continue;
            for (size_t k = 0; k < 2; k++) {
                double b = json_number_value(json_object_get(sb, stats[k]));
                double c = json_number_value(json_object_get(sn, stats[k]));
                const char *v = readiness_judge(b, c, th);
                *regressions += strcmp(v, "regression") == 0;
                *improvements += strcmp(v, "improvement") == 0;
                json_array_append_new(out,
                                      json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "node",
                                                str(en, "node"), "kind", str(en, "kind"), "segment",
                                                readiness_segments[s], "stat", stats[k], "base", b,
                                                "new", c, "delta", c - b, "verdict", v));
            }
        }
    }
    services_compare(md_base, md_new, th, out, regressions, improvements);
    return out;
}

void readiness_compare_print(const json_t *cmp, bool markdown, FILE *out)
{
    const json_t *e;
    size_t i;
    char node[128], kind[32];

    if (json_array_size(cmp) == 0)
        return;
    if (markdown)
        fprintf(out, "\n## Pod network readiness (seconds)\n\n| node | kind | segment | stat | "
                     "base | new | delta | verdict |\n|---|---|---|---|---:|---:|---:|---|\n");
    else
        fprintf(out, "\nPod network readiness (seconds)\n%-24s %-6s %-15s %-4s %9s %9s %9s  %s\n",
                "node", "kind", "segment", "stat", "base", "new", "delta", "verdict");
    json_array_foreach(cmp, i, e)
    {
        textsafe(str(e, "node"), node, sizeof(node));
        textsafe(str(e, "kind"), kind, sizeof(kind));
        if (json_is_integer(json_object_get(e, "services"))) /* one size of --services N,N... */
            snprintf(kind, sizeof(kind), "services-%lld",
                     (long long)json_integer_value(json_object_get(e, "services")));
        fprintf(out,
                markdown ? "| %s | %s | %s | %s | %.3f | %.3f | %+.3f | %s |\n"
                         : "%-24s %-6s %-15s %-4s %9.3f %9.3f %+9.3f  %s\n",
                node, kind, str(e, "segment"), str(e, "stat"),
                json_number_value(json_object_get(e, "base")),
                json_number_value(json_object_get(e, "new")),
                json_number_value(json_object_get(e, "delta")), str(e, "verdict"));
    }
}
