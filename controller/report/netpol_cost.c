/* SPDX-License-Identifier: Apache-2.0 */
/* netpol_cost.c - rows under a NetworkPolicy beside the same rows without one, and rows at each
 * --services size beside the same rows at 0 (netpol_cost.h). */
#include "controller/report/netpol_cost.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/compare_metrics.h"
#include "controller/report/report.h"

static const char *const shown[] = {"p50", "p99", "ops/s", "conn/s", "Mb/s", "node CPU/Gbps"};

/* A size in the placement: its suffix, what a size counts, the section's title */
struct sized {
    const char *suffix, *unit, *title;
};

static const struct sized netpol_sized = {
    NETPOL_COST_SUFFIX, "rules",
    "NetworkPolicy datapath cost (the row without a policy, then under the run's policy of N "
    "rules; change in %):"};
static const struct sized services_sized = {
    SERVICES_COST_SUFFIX, "Services",
    "Services at scale (the row at 0 extra Services, then at N; change in %):"};

static long sized_size(const struct sized *z, const char *placement, size_t *base_len)
{
    const char *s = placement ? strstr(placement, z->suffix) : NULL;
    char *end;
    long n;

    if (!s)
        return -1;
    errno = 0;
    n = strtol(s + strlen(z->suffix), &end, 10);
    if (errno || *end || end == s + strlen(z->suffix) || n < 0)
        return -1;
    if (base_len)
        *base_len = (size_t)(s - placement);
    return n;
}

long netpol_cost_size(const char *placement, size_t *base_len)
{
    return sized_size(&netpol_sized, placement, base_len);
}

/* True when row j is row i (without a size) measured at a size: the same key but the
 * placement, which is i's with the suffix. */
static bool variant_of(const struct sized *z, const struct report_row_info *base,
                       const struct report_row_info *v)
{
    size_t len;

    if (sized_size(z, v->placement, &len) < 0 || !base->placement || !v->scenario ||
        !base->scenario || !v->test || !base->test)
        return false;
    return strlen(base->placement) == len && strncmp(base->placement, v->placement, len) == 0 &&
           strcmp(base->scenario, v->scenario) == 0 && strcmp(base->test, v->test) == 0 &&
           base->reverse == v->reverse &&
           strcmp(base->ip_family ? base->ip_family : ROWKEY_DEFAULT_FAMILY,
                  v->ip_family ? v->ip_family : ROWKEY_DEFAULT_FAMILY) == 0;
}

static const char *unit_of(const struct cmp_metric *m)
{
    return m->group == CMP_LATENCY ? " us" : "";
}

/* One metric of base row i: its value, then each size's value and change. False when the
 * policy-free row has no value for m. */
static bool print_metric(const struct sized *z, const struct report *rep, size_t i,
                         const struct cmp_metric *m, const char *bullet, const char *label,
                         FILE *out)
{
    struct report_row_info bi, vi;
    double base, v;
    char line[1024];
    int used;

    report_row_info(rep, i, &bi);
    if (!cmp_row_value(report_row(rep, i), m, &base))
        return false;
    used = snprintf(line, sizeof(line), "%s %s%s: %.1f", label, m->name, unit_of(m), base);
    for (size_t j = 0; j < report_row_count(rep) && used > 0 && (size_t)used < sizeof(line); j++) {
        report_row_info(rep, j, &vi);
        if (!variant_of(z, &bi, &vi))
            continue;
        long n = sized_size(z, vi.placement, NULL);
        if (!cmp_row_value(report_row(rep, j), m, &v))
            used += snprintf(line + used, sizeof(line) - (size_t)used, " | %ld %s -", n, z->unit);
        else if (base != 0)
            used += snprintf(line + used, sizeof(line) - (size_t)used, " | %ld %s %.1f (%+.1f%%)",
                             n, z->unit, v, (v - base) / base * 100.0);
        else
            used +=
                snprintf(line + used, sizeof(line) - (size_t)used, " | %ld %s %.1f", n, z->unit, v);
    }
    textsafe_line(out, "%s%s", bullet, line);
    return true;
}

static void sized_print(const struct sized *z, const struct report *rep, const char *bullet,
                        FILE *out)
{
    size_t nm;
    const struct cmp_metric *all = cmp_metrics(&nm);
    bool first = true;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info bi, vi;
        bool has = false;
        report_row_info(rep, i, &bi);
        if (sized_size(z, bi.placement, NULL) >= 0 || !bi.status || strcmp(bi.status, "ok") != 0)
            continue;
        for (size_t j = 0; j < report_row_count(rep) && !has; j++) {
            report_row_info(rep, j, &vi);
            has = variant_of(z, &bi, &vi);
        }
        if (!has)
            continue;
        if (first)
            fprintf(out, "\n%s\n", z->title);
        first = false;
        char label[256];
        struct rowkey k;
        rowkey_of(report_row(rep, i), &k);
        rowkey_label(&k, label, sizeof(label));
        for (size_t s = 0; s < sizeof(shown) / sizeof(shown[0]); s++)
            for (size_t m = 0; m < nm; m++)
                if (strcmp(all[m].name, shown[s]) == 0)
                    print_metric(z, rep, i, &all[m], bullet, label, out);
    }
}

void netpol_cost_print(const struct report *rep, const char *bullet, FILE *out)
{
    sized_print(&netpol_sized, rep, bullet, out);
}

void services_cost_print(const struct report *rep, const char *bullet, FILE *out)
{
    sized_print(&services_sized, rep, bullet, out);
}
