/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_shape.c - see k8s_shape.h. */
#include "controller/k8s/k8s_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"

/* most specific first: a managed node group's label wins over eksctl's copy of it */
static const char *const group_keys[] = {
    "eks.amazonaws.com/nodegroup",       "karpenter.sh/nodepool",
    "alpha.eksctl.io/nodegroup-name",    "cloud.google.com/gke-nodepool",
    "tke.cloud.tencent.com/nodepool-id", "kubernetes.azure.com/agentpool",
};

static const char *s_at(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

char *k8s_shape_node_group(const json_t *node)
{
    const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");

    for (size_t i = 0; i < sizeof(group_keys) / sizeof(group_keys[0]); i++) {
        const char *v = s_at(labels, group_keys[i]);
        if (v && *v)
            return kp_xasprintf("%s=%s", group_keys[i], v);
    }
    return NULL;
}

static int same(const char *x, const char *y)
{
    return x && y && strcmp(x, y) == 0;
}

int k8s_shape_score(const json_t *want, const json_t *node, char **why)
{
    json_t *info = k8s_facts_node_info(node, NULL);
    const char *keys[] = {"arch", "instance_type"}, *names[] = {"arch", "instance type"};
    int score = 0;

    if (why)
        *why = NULL;
    for (int k = 0; k < 2; k++) {
        const char *w = s_at(want, keys[k]), *h = s_at(info, keys[k]);
        if (w && h && strcmp(w, h) != 0) {
            if (why)
                *why = kp_xasprintf("%s %s, not %s", names[k], h, w);
            json_decref(info);
            return -1;
        }
    }
    score += same(s_at(want, "node_group"), s_at(info, "node_group")) ? 2 : 0;
    score += same(s_at(want, "zone"), s_at(info, "zone")) ? 1 : 0;
    json_decref(info);
    return score;
}

/* the report's metadata.nodes[] entry of role, or NULL */
static const json_t *entry_of(const json_t *report, const char *role)
{
    size_t i;
    json_t *n;

    json_array_foreach(json_object_get(json_object_get(report, "metadata"), "nodes"), i, n)
    {
        if (same(s_at(n, "role"), role))
            return n;
    }
    return NULL;
}

static const json_t *find(const json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(nodes, i, n)
    {
        if (name && strcmp(k8s_facts_node_name(n), name) == 0)
            return n;
    }
    return NULL;
}

/* the best eligible node of want's shape but `avoid` (name order breaks ties), or NULL */
static const json_t *pick(const json_t *eligible, const json_t *want, const char *avoid)
{
    const json_t *best = NULL;
    int best_score = -1;
    size_t i;
    json_t *n;

    json_array_foreach(eligible, i, n)
    {
        const char *name = k8s_facts_node_name(n);
        int sc = k8s_shape_score(want, n, NULL);
        if (sc < 0 || same(name, avoid))
            continue;
        if (sc > best_score || (sc == best_score && strcmp(name, k8s_facts_node_name(best)) < 0)) {
            best = n;
            best_score = sc;
        }
    }
    return best;
}

/* the shape in words: "arch amd64, instance type m5.large, zone a, group g" (new string) */
static char *shape_text(const json_t *want)
{
    const char *keys[] = {"arch", "instance_type", "zone", "node_group"};
    const char *names[] = {"arch", "instance type", "zone", "node group"};
    char buf[512] = "";
    size_t len = 0;

    for (int k = 0; k < 4; k++) {
        if (s_at(want, keys[k]) && len < sizeof(buf))
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s %s", len ? ", " : "",
                                    names[k], s_at(want, keys[k]));
    }
    return kp_xstrdup(len ? buf : "no shape recorded");
}

/* Replaces *name (role's) by a node of its shape when it is not eligible. other: the other
 * role's name (borrowed, may be NULL), never taken. 0, or -1 with err. */
static int substitute(const json_t *want, const json_t *all, const json_t *eligible,
                      const struct k8s_node_filter *f, const char *role, char **name,
                      const char *other, json_t *subst, struct kp_err *err)
{
    const json_t *there = find(all, *name), *now;
    char *why = NULL, *shape;

    if (!*name || find(eligible, *name))
        return 0;
    if (there && !k8s_facts_node_eligible(there, f, &why) && why) {
        char *w = kp_xasprintf("node %s can no longer run agents: %s", *name, why);
        free(why);
        why = w;
    } else if (!why) {
        why = kp_xasprintf("node %s is gone (no node of that name)", *name);
    }
    now = pick(eligible, want, other);
    shape = shape_text(want);
    if (!now) {
        kp_err_set(err,
                   "the %s node: %s, and no other eligible node has its shape (%s); "
                   "run with -v for the ranked table of the nodes, or pick nodes with --nodes",
                   role, why, shape);
        free(shape);
        free(why);
        return -1;
    }
    json_array_append_new(subst,
                          json_pack("{s:s, s:s, s:s, s:s++}", "role", role, "was", *name, "now",
                                    k8s_facts_node_name(now), "why", why, "; same shape: ", shape));
    free(*name);
    *name = kp_xstrdup(k8s_facts_node_name(now));
    free(shape);
    free(why);
    return 0;
}

int k8s_shape_nodes_from(const json_t *report, const json_t *all, const json_t *eligible,
                         const struct k8s_node_filter *f, char **a, char **b, json_t **subst,
                         struct kp_err *err)
{
    *subst = json_array();
    if (k8s_facts_nodes_from_report(report, a, b, err) != 0)
        return -1;
    /* a node still eligible keeps its role: the other is chosen around it */
    if (substitute(entry_of(report, "server"), all, eligible, f, "server", a,
                   find(eligible, *b) ? *b : NULL, *subst, err) != 0 ||
        substitute(entry_of(report, "client"), all, eligible, f, "client", b, *a, *subst, err) !=
            0) {
        free(*a);
        free(*b);
        *a = *b = NULL;
        return -1;
    }
    return 0;
}

static int by_rank(const void *x, const void *y)
{
    const json_t *p = *(json_t *const *)x, *q = *(json_t *const *)y;
    int ep = json_object_get(p, "excluded") == NULL, eq = json_object_get(q, "excluded") == NULL;
    json_int_t sp = json_integer_value(json_object_get(p, "score"));
    json_int_t sq = json_integer_value(json_object_get(q, "score"));

    if (ep != eq)
        return eq - ep;
    if (sp != sq)
        return sp < sq ? 1 : -1;
    return strcmp(s_at(p, "name"), s_at(q, "name"));
}

json_t *k8s_shape_rank(const json_t *all, const struct k8s_node_filter *f, const json_t *want)
{
    size_t n = json_array_size(all), i;
    json_t **rows = kp_xcalloc(n ? n : 1, sizeof(*rows)), *out = json_array(), *node;
    const char *keep[] = {"name", "instance_type", "zone", "arch", "node_group"};

    json_array_foreach(all, i, node)
    {
        json_t *info = k8s_facts_node_info(node, NULL), *row = json_object();
        char *why = NULL, *diff = NULL;
        int sc = 0;
        for (int k = 0; k < 5; k++)
            if (json_object_get(info, keep[k]))
                json_object_set(row, keep[k], json_object_get(info, keep[k]));
        if (!k8s_facts_node_eligible(node, f, &why))
            json_object_set_new(row, "excluded", json_string(why ? why : "not eligible"));
        else if (want && (sc = k8s_shape_score(want, node, &diff)) < 0)
            json_object_set_new(row, "excluded", json_sprintf("different shape: %s", diff));
        json_object_set_new(row, "score", json_integer(sc < 0 ? 0 : sc));
        rows[i] = row;
        free(why);
        free(diff);
        json_decref(info);
    }
    qsort(rows, n, sizeof(*rows), by_rank);
    for (i = 0; i < n; i++) {
        if (!json_object_get(rows[i], "excluded"))
            json_object_set_new(rows[i], "rank", json_integer((json_int_t)i + 1));
        json_object_del(rows[i], "score");
        json_array_append_new(out, rows[i]);
    }
    free(rows);
    return out;
}

char *k8s_shape_table(const json_t *rank)
{
    size_t i, len = 0, cap = 256;
    char *out = kp_xmalloc(cap);
    json_t *r;

    len = (size_t)snprintf(out, cap, "%-4s %-20s %-14s %-10s %-6s %-32s %s\n", "rank", "node",
                           "instance-type", "zone", "arch", "node group", "why not");
    json_array_foreach(rank, i, r)
    {
        char rk[24] = "-", *line;
        if (json_object_get(r, "rank"))
            snprintf(rk, sizeof(rk), "%lld",
                     (long long)json_integer_value(json_object_get(r, "rank")));
        line = kp_xasprintf("%-4s %-20s %-14s %-10s %-6s %-32s %s\n", rk, s_at(r, "name"),
                            s_at(r, "instance_type") ? s_at(r, "instance_type") : "-",
                            s_at(r, "zone") ? s_at(r, "zone") : "-",
                            s_at(r, "arch") ? s_at(r, "arch") : "-",
                            s_at(r, "node_group") ? s_at(r, "node_group") : "-",
                            s_at(r, "excluded") ? s_at(r, "excluded") : "");
        size_t l = strlen(line);
        if (len + l + 1 > cap) {
            cap = (len + l + 1) * 2;
            out = kp_xrealloc(out, cap);
        }
        memcpy(out + len, line, l + 1);
        len += l;
        free(line);
    }
    return out;
}

/* the table and the substitutions, in the log and the facts */
static void tell(const json_t *report, const json_t *all, const struct k8s_node_filter *f,
                 const char *path, json_t *subst, json_t *facts)
{
    json_t *rank = k8s_shape_rank(all, f, entry_of(report, "server"));
    char *table = k8s_shape_table(rank);
    size_t i;
    json_t *s;

    if (*table && table[strlen(table) - 1] == '\n')
        table[strlen(table) - 1] = '\0'; /* kp_log ends the line */
    kp_log(KP_LOG_INFO, "nodes for --nodes-from %s (the server node's shape ranks them):\n%s", path,
           table);
    json_array_foreach(subst, i, s)
    {
        kp_log(KP_LOG_WARN, "--nodes-from %s: the %s node %s is replaced by %s: %s", path,
               s_at(s, "role"), s_at(s, "was"), s_at(s, "now"), s_at(s, "why"));
    }
    if (json_array_size(subst) > 0)
        json_object_set(facts, "nodes_substituted", subst);
    json_object_set_new(facts, "node_table", rank);
    free(table);
}

int k8s_shape_wanted(const struct run_options *ro, const json_t *all, const json_t *eligible,
                     const struct k8s_node_filter *f, char **a, char **b, json_t *facts,
                     struct kp_err *err)
{
    json_error_t jerr;
    json_t *rep, *subst = NULL;
    int rc;

    *a = kp_xstrdup(ro->node_a);
    *b = kp_xstrdup(ro->node_b);
    if (!ro->nodes_from)
        return 0;
    free(*a);
    free(*b);
    *a = *b = NULL;
    rep = json_load_file(ro->nodes_from, JSON_REJECT_DUPLICATES, &jerr);
    if (!rep)
        return kp_err_set(err, "--nodes-from %s: %s (line %d)", ro->nodes_from, jerr.text,
                          jerr.line);
    rc = k8s_shape_nodes_from(rep, all, eligible, f, a, b, &subst, err);
    tell(rep, all, f, ro->nodes_from, subst, facts);
    if (rc != 0)
        kp_err_prefix(err, "--nodes-from %s", ro->nodes_from);
    json_decref(subst);
    json_decref(rep);
    return rc;
}

void k8s_shape_mark(json_t *facts)
{
    size_t i, k;
    json_t *s, *n;

    json_array_foreach(json_object_get(facts, "nodes_substituted"), i, s)
    {
        json_array_foreach(json_object_get(facts, "nodes"), k, n)
        {
            if (same(s_at(n, "name"), s_at(s, "now")) && same(s_at(n, "role"), s_at(s, "role")))
                json_object_set(n, "in_place_of", json_object_get(s, "was"));
        }
    }
}
