/* SPDX-License-Identifier: Apache-2.0 */
/* plan.c - see plan.h. */
#include "controller/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"
#include "base/testkind.h"
#include "controller/run_options.h"

struct plan {
    struct plan_opts opts;
    struct plan_group *groups; /* owned array */
    size_t n_groups;
    size_t cap;
};

/* as reports spell them: base/rowkey.h owns the names */
static const char *const scenario_names[SCENARIO_COUNT] = {
    ROWKEY_SCENARIO_POD_TO_POD,      ROWKEY_SCENARIO_HOST_TO_HOST, ROWKEY_SCENARIO_POD_TO_SERVICE,
    ROWKEY_SCENARIO_POD_TO_EXTERNAL, ROWKEY_SCENARIO_POD_TO_DNS,
};

static const char *const placement_names[PLACEMENT_COUNT] = {
    ROWKEY_PLACEMENT_SAME_NODE, ROWKEY_PLACEMENT_OTHER_NODE, ROWKEY_PLACEMENT_EXTERNAL,
    "node", /* the flag's name; a sweep row's placement is ROWKEY_SWEEP_PREFIX + its node */
};

const char *plan_scenario_name(enum scenario s)
{
    return (unsigned)s < SCENARIO_COUNT ? scenario_names[s] : "?";
}

const char *plan_placement_name(enum placement p)
{
    return (unsigned)p < PLACEMENT_COUNT ? placement_names[p] : "?";
}

int plan_scenario_from_name(const char *name)
{
    for (int i = 0; i < SCENARIO_COUNT; i++)
        if (strcmp(name, scenario_names[i]) == 0)
            return i;
    return -1;
}

static struct plan_group *group_append(struct plan *p)
{
    if (p->n_groups == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->groups = kp_xrealloc(p->groups, p->cap * sizeof(*p->groups));
    }
    struct plan_group *g = &p->groups[p->n_groups++];
    memset(g, 0, sizeof(*g));
    return g;
}

static void group_cleanup(struct plan_group *g)
{
    free(g->node);
    free(g->placement_label);
    free(g->skip_reason);
}

/* Adds one group with the selected tests (only reversible ones when reverse). */
static void add_group(struct plan *p, enum scenario s, enum placement pl, bool reverse)
{
    struct plan_group g = {.scenario = s, .placement = pl, .reverse = reverse};
    unsigned tests = s == SCENARIO_POD_TO_DNS ? TEST_DNS_MASK : p->opts.tests;

    for (int t = 0; t < TEST_COUNT; t++) {
        if (!(tests & (1u << t)))
            continue;
        if (reverse && !testkind_get((enum test_kind)t)->reversible)
            continue;
        g.tests[g.n_tests++] = (enum test_kind)t;
    }
    if (g.n_tests == 0)
        return;
    g.placement_label = kp_xstrdup(plan_placement_name(pl));
    *group_append(p) = g;
}

/* The pod-to-pod and pod-to-service groups of the plan so far, once more at each policy size
 * N > 0 (plan.h). */
static void add_netpol_groups(struct plan *p, const unsigned *sizes, size_t n_sizes)
{
    size_t n_base = p->n_groups;

    for (size_t k = 0; k < n_sizes; k++) {
        if (sizes[k] == 0)
            continue;
        for (size_t i = 0; i < n_base; i++) {
            struct plan_group g = p->groups[i];
            if (g.scenario != SCENARIO_POD_TO_POD && g.scenario != SCENARIO_POD_TO_SERVICE)
                continue;
            g.netpol_rules = sizes[k];
            g.placement_label =
                kp_xasprintf("%s/netpol-%u", plan_placement_name(g.placement), sizes[k]);
            *group_append(p) = g;
        }
    }
}

/* The pod-to-service groups at every --services size (plan.h): the ones in place at the
 * smallest, copies after the groups so far for each larger. */
static void add_services_groups(struct plan *p, const unsigned *sizes, size_t n_sizes)
{
    size_t n_base = p->n_groups;

    if (n_sizes < 2)
        return;
    for (size_t k = 0; k < n_sizes; k++) {
        for (size_t i = 0; i < n_base; i++) {
            struct plan_group *b = &p->groups[i];
            if (b->scenario != SCENARIO_POD_TO_SERVICE)
                continue;
            if (k == 0) {
                b->services_sized = true;
                b->services = sizes[0];
                if (sizes[0] == 0)
                    continue;
                free(b->placement_label);
                b->placement_label =
                    kp_xasprintf("%s/services-%u", plan_placement_name(b->placement), sizes[0]);
                continue;
            }
            struct plan_group g = *b;
            g.services = sizes[k];
            g.placement_label =
                kp_xasprintf("%s/services-%u", plan_placement_name(g.placement), sizes[k]);
            *group_append(p) = g; /* b may move: g is a copy */
        }
    }
}

struct plan *plan_new(const struct plan_opts *opts)
{
    struct plan *p = kp_xcalloc(1, sizeof(*p));

    p->opts = *opts;
    if (p->opts.samples < 1)
        p->opts.samples = 1;
    if (p->opts.samples_max < p->opts.samples)
        p->opts.samples_max = p->opts.samples;
    for (int s = 0; s < SCENARIO_COUNT; s++) {
        if (!(opts->scenarios & (1u << s)))
            continue;
        if (s == SCENARIO_POD_TO_DNS) { /* one group per node: plan_expand_dns */
            add_group(p, (enum scenario)s, PLACEMENT_NODE, false);
            continue;
        }
        if (s == SCENARIO_POD_TO_EXTERNAL) {
            add_group(p, (enum scenario)s, PLACEMENT_EXTERNAL, false);
            add_group(p, (enum scenario)s, PLACEMENT_EXTERNAL, true);
            continue;
        }
        for (int pl = PLACEMENT_SAME_NODE; pl <= PLACEMENT_OTHER_NODE; pl++)
            if (opts->placements & (1u << pl))
                add_group(p, (enum scenario)s, (enum placement)pl, false);
    }
    add_netpol_groups(p, opts->netpol_rules, opts->n_netpol_rules);
    add_services_groups(p, opts->services, opts->n_services);
    p->opts.netpol_rules = NULL; /* borrowed for the above only */
    p->opts.services = NULL;
    return p;
}

void plan_free(struct plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_groups; i++)
        group_cleanup(&p->groups[i]);
    free(p->groups);
    free(p);
}

void plan_opts_from_run_options(const struct run_options *ro, struct plan_opts *out)
{
    memset(out, 0, sizeof(*out));
    out->scenarios = ro->scenarios;
    out->placements = ro->placements;
    out->tests = ro->tests;
    out->samples = ro->samples;
    out->samples_auto = ro->samples_auto;
    out->samples_max = ro->samples_auto ? ro->samples_max : ro->samples;
    out->duration_ms = (unsigned)ro->duration_ms;
    out->omit_ms = (unsigned)ro->omit_ms;
    out->netpol_rules = ro->netpol_rules;
    out->n_netpol_rules = ro->n_netpol_rules;
    out->services = ro->services_sizes;
    out->n_services = ro->n_services_sizes;
}

size_t plan_group_count(const struct plan *p)
{
    return p->n_groups;
}

const struct plan_group *plan_group_get(const struct plan *p, size_t i)
{
    return i < p->n_groups ? &p->groups[i] : NULL;
}

size_t plan_skip(struct plan *p, enum scenario s, enum placement pl, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    size_t n = 0;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < p->n_groups; i++) {
        struct plan_group *g = &p->groups[i];
        if (g->scenario != s || (pl != PLACEMENT_COUNT && g->placement != pl))
            continue;
        if (g->skipped)
            continue; /* the first reason stays */
        g->skipped = true;
        g->skip_reason = kp_xstrdup(reason);
        n++;
    }
    return n;
}

size_t plan_skip_node(struct plan *p, const char *node, const size_t *extra, size_t n_extra,
                      const char *reason)
{
    size_t n = 0;

    for (size_t i = 0; i < p->n_groups; i++) {
        struct plan_group *g = &p->groups[i];
        bool hit = g->placement == PLACEMENT_NODE && g->node && node && strcmp(g->node, node) == 0;
        for (size_t k = 0; k < n_extra && !hit; k++)
            hit = extra[k] == i && g->placement == PLACEMENT_NODE;
        if (!hit || g->skipped)
            continue;
        g->skipped = true;
        g->skip_reason = kp_xstrdup(reason);
        n++;
    }
    return n;
}

void plan_expand_dns(struct plan *p, const char *const *names, size_t n)
{
    struct plan_group *old = p->groups;
    size_t n_old = p->n_groups;

    p->groups = NULL;
    p->n_groups = 0;
    p->cap = 0;
    for (size_t i = 0; i < n_old; i++) {
        if (old[i].scenario != SCENARIO_POD_TO_DNS || old[i].node) {
            *group_append(p) = old[i]; /* moves ownership of its strings */
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            struct plan_group *g = group_append(p);
            *g = old[i];
            g->node = kp_xstrdup(names[k]);
            g->placement_label = kp_xasprintf("%s%s", ROWKEY_SWEEP_PREFIX, names[k]);
            g->skip_reason = old[i].skip_reason ? kp_xstrdup(old[i].skip_reason) : NULL;
        }
        group_cleanup(&old[i]);
    }
    free(old);
}

void plan_expand_sweep(struct plan *p, const char *const *names, size_t n)
{
    struct plan_group *old = p->groups;
    size_t n_old = p->n_groups;

    p->groups = NULL;
    p->n_groups = 0;
    p->cap = 0;
    for (size_t i = 0; i < n_old; i++) {
        if (old[i].placement != PLACEMENT_OTHER_NODE) {
            *group_append(p) = old[i]; /* moves ownership of its strings */
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            struct plan_group *g = group_append(p);
            *g = old[i];
            g->placement = PLACEMENT_NODE;
            g->node = kp_xstrdup(names[k]);
            g->placement_label = kp_xasprintf("%s%s", ROWKEY_SWEEP_PREFIX, names[k]);
            g->skip_reason = kp_xstrdup(old[i].skip_reason);
        }
        /* both directions of the streams: the same pairs with the server sending */
        for (size_t k = 0; k < n && !old[i].reverse; k++) {
            struct plan_group r = old[i];
            r.n_tests = 0;
            for (size_t t = 0; t < old[i].n_tests; t++)
                if (testkind_get(old[i].tests[t])->reversible)
                    r.tests[r.n_tests++] = old[i].tests[t];
            if (r.n_tests == 0)
                break;
            r.reverse = true;
            r.placement = PLACEMENT_NODE;
            r.node = kp_xstrdup(names[k]);
            r.placement_label = kp_xasprintf("%s%s", ROWKEY_SWEEP_PREFIX, names[k]);
            r.skip_reason = kp_xstrdup(old[i].skip_reason);
            *group_append(p) = r;
        }
        group_cleanup(&old[i]);
    }
    free(old);
}

static const char *family_const(const char *f)
{
    if (f && strcmp(f, "IPv4") == 0)
        return "IPv4";
    if (f && strcmp(f, "IPv6") == 0)
        return "IPv6";
    return NULL;
}

void plan_set_families(struct plan *p, const char *const *families, size_t n)
{
    struct plan_group *old = p->groups;
    size_t n_old = p->n_groups;
    const char *f[2];

    if (n < 1 || n > 2)
        return;
    for (size_t k = 0; k < n; k++)
        if (!(f[k] = family_const(families[k])))
            return;
    if (n == 1) {
        for (size_t i = 0; i < p->n_groups; i++)
            p->groups[i].ip_family = f[0];
        return;
    }
    p->groups = NULL;
    p->n_groups = 0;
    p->cap = 0;
    for (size_t i = 0; i < n_old; i++) {
        struct plan_group a = old[i]; /* moves ownership of its strings */
        struct plan_group b = old[i];
        a.ip_family = f[0];
        b.ip_family = f[1];
        b.node = old[i].node ? kp_xstrdup(old[i].node) : NULL;
        b.placement_label = kp_xstrdup(old[i].placement_label);
        b.skip_reason = old[i].skip_reason ? kp_xstrdup(old[i].skip_reason) : NULL;
        *group_append(p) = a;
        *group_append(p) = b;
    }
    free(old);
}

static size_t group_measurements(const struct plan *p, const struct plan_group *g)
{
    return g->skipped ? 0 : g->n_tests * (size_t)p->opts.samples;
}

size_t plan_measurement_count(const struct plan *p)
{
    size_t n = 0;

    for (size_t i = 0; i < p->n_groups; i++)
        n += group_measurements(p, &p->groups[i]);
    return n;
}

unsigned long long plan_expected_ms(const struct plan *p)
{
    return (unsigned long long)plan_measurement_count(p) *
           ((unsigned long long)p->opts.duration_ms + p->opts.omit_ms);
}
