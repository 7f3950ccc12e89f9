/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_arch.c - node architectures and the --arch rule (see k8s_arch.h). */
#include "controller/k8s/k8s_arch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_facts.h"

#define MAX_ARCHES 8 /* distinct architectures counted; a cluster has two or three */

struct arch_count {
    const char *arch;  /* borrowed from a node */
    const char *first; /* its first node in name order */
    size_t n;
};

/* Counts the nodes of each architecture; returns how many architectures (<= MAX_ARCHES). */
static size_t count_arches(const json_t *nodes, struct arch_count *c)
{
    size_t k = 0, i, j;
    json_t *n;

    json_array_foreach(nodes, i, n)
    {
        const char *a = k8s_facts_node_arch(n), *name = k8s_facts_node_name(n);
        if (!a)
            continue;
        for (j = 0; j < k && strcmp(c[j].arch, a) != 0; j++)
            ;
        if (j == k) {
            if (k == MAX_ARCHES)
                continue;
            c[k++] = (struct arch_count){.arch = a, .first = name};
        }
        c[j].n++;
        if (strcmp(name, c[j].first) < 0)
            c[j].first = name;
    }
    return k;
}

/* "amd64 x3, arm64 x1" into buf */
static void describe(const struct arch_count *c, size_t k, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t j = 0; j < k && len < cap; j++)
        len +=
            (size_t)snprintf(buf + len, cap - len, "%s%s x%zu", j ? ", " : "", c[j].arch, c[j].n);
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

/* the default: A's architecture, else the most common one (ties: the first node's) */
static size_t pick_default(const json_t *nodes, const char *named_a, const struct arch_count *c,
                           size_t k)
{
    const char *a = k8s_facts_node_arch(find(nodes, named_a));
    size_t best = 0;

    for (size_t j = 0; j < k; j++) {
        if (a && strcmp(c[j].arch, a) == 0)
            return j;
        if (c[j].n > c[best].n || (c[j].n == c[best].n && strcmp(c[j].first, c[best].first) < 0))
            best = j;
    }
    return best;
}

int k8s_arch_pick(const json_t *nodes, const char *want, const char *named_a, const char **arch,
                  char **note, struct kp_err *err)
{
    struct arch_count c[MAX_ARCHES];
    size_t k = count_arches(nodes, c), j;
    char seen[256];

    *arch = NULL;
    *note = NULL;
    describe(c, k, seen, sizeof(seen));
    if (want && strcmp(want, "any") == 0)
        return 0;
    if (want && strcmp(want, "mixed") == 0) {
        if (k < 2)
            return kp_err_set(err,
                              "--arch mixed: the eligible nodes have one architecture (%s); "
                              "a cross-architecture pair needs two",
                              k ? seen : "none known");
        return 0;
    }
    if (k == 0) /* the nodes say nothing of their architecture: nothing to enforce */
        return 0;
    if (want) {
        for (j = 0; j < k && strcmp(c[j].arch, want) != 0; j++)
            ;
        if (j == k)
            return kp_err_set(err, "--arch %s: no eligible node is %s (eligible: %s)", want, want,
                              seen);
        *arch = want;
        return 0;
    }
    j = pick_default(nodes, named_a, c, k);
    *arch = c[j].arch;
    if (k > 1)
        *note = kp_xasprintf("measuring the %s nodes only (eligible: %s): pairs do not mix "
                             "architectures; --arch ARCH picks the other, --arch any lets them mix",
                             c[j].arch, seen);
    return 0;
}

int k8s_arch_apply(json_t **nodes, const char *want, const char *named_a, const char **arch,
                   struct kp_err *err)
{
    char *note = NULL;
    json_t *kept;
    size_t i;
    json_t *n;

    if (k8s_arch_pick(*nodes, want, named_a, arch, &note, err) != 0)
        return -1;
    if (!*arch)
        return 0;
    kept = json_array();
    json_array_foreach(*nodes, i, n)
    {
        const char *a = k8s_facts_node_arch(n);
        if (!a || strcmp(a, *arch) == 0)
            json_array_append(kept, n);
        else
            kp_log(KP_LOG_INFO, "node %s skipped: architecture %s, not %s (--arch)",
                   k8s_facts_node_name(n), a, *arch);
    }
    if (note)
        kp_log(KP_LOG_WARN, "%s", note);
    free(note);
    json_decref(*nodes); /* *arch stays valid: it is a kept node's (or want) */
    *nodes = kept;
    return 0;
}

/* 1 when n should be B rather than best: A's zone first, then name order */
static int better(const json_t *n, const json_t *best, const char *za)
{
    const char *zn = k8s_facts_node_zone(n), *zb = best ? k8s_facts_node_zone(best) : NULL;
    int in_n = za && zn && strcmp(za, zn) == 0, in_b = za && zb && strcmp(za, zb) == 0;

    if (!best || in_n != in_b)
        return !best || in_n;
    return strcmp(k8s_facts_node_name(n), k8s_facts_node_name(best)) < 0;
}

int k8s_arch_cross_partner(const json_t *nodes, const json_t *a, const json_t **b, int b_named,
                           struct kp_err *err)
{
    const char *aa = k8s_facts_node_arch(a);
    const json_t *best = NULL;
    size_t i;
    json_t *n;

    if (*b && k8s_facts_node_arch(*b) && aa && strcmp(k8s_facts_node_arch(*b), aa) != 0)
        return 0;
    if (b_named && *b)
        return kp_err_set(err, "--arch mixed: nodes %s and %s are both %s", k8s_facts_node_name(a),
                          k8s_facts_node_name(*b), aa ? aa : "unknown");
    json_array_foreach(nodes, i, n)
    {
        const char *an = k8s_facts_node_arch(n);
        if (n != a && an && aa && strcmp(an, aa) != 0 && better(n, best, k8s_facts_node_zone(a)))
            best = n;
    }
    if (!best)
        return kp_err_set(err,
                          "--arch mixed: no eligible node has another architecture than node "
                          "%s (%s)",
                          k8s_facts_node_name(a), aa ? aa : "unknown");
    *b = best;
    return 0;
}
