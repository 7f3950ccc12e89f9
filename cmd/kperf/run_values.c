/* SPDX-License-Identifier: Apache-2.0 */
/* run_values.c - see run_values.h. */
#include "cmd/kperf/run_values.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/testkind.h"
#include "controller/plan.h"
#include "controller/run_options.h"

int rv_parse_int(const char *s, long lo, long hi, long *out, const char *flag, struct kp_err *err)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return kp_err_set(err, "--%s: '%s' is not a whole number in [%ld, %ld]", flag, s, lo, hi);
    *out = v;
    return 0;
}

/* Splits a comma list and calls fn for each non-empty item. */
int rv_for_each_item(const char *list, int (*fn)(void *ctx, const char *item, struct kp_err *),
                     void *ctx, struct kp_err *err)
{
    char *copy = kp_xstrdup(list);
    char *save = NULL;
    int rc = 0;

    for (char *it = strtok_r(copy, ",", &save); it && rc == 0; it = strtok_r(NULL, ",", &save))
        rc = fn(ctx, it, err);
    free(copy);
    return rc;
}

int rv_add_scenario(void *ctx, const char *item, struct kp_err *err)
{
    unsigned *mask = ctx;
    int s;

    if (strcmp(item, "all") == 0) {
        *mask |= SCENARIO_ALL_MASK;
        return 0;
    }
    s = plan_scenario_from_name(item);
    if (s < 0)
        return kp_err_set(err,
                          "--scenarios: unknown scenario '%s' (all, pod-to-pod, host-to-host, "
                          "pod-to-service, pod-to-external, pod-to-dns)",
                          item);
    *mask |= 1u << s;
    return 0;
}

/* Inserts n into the ascending, distinct list v[*len] (at most max entries; flag names it) */
static int add_size(unsigned *v, size_t *len, size_t max, long n, const char *flag,
                    struct kp_err *err)
{
    size_t i;

    for (i = 0; i < *len && v[i] < (unsigned)n; i++)
        ;
    if (i < *len && v[i] == (unsigned)n)
        return 0; /* given twice: once is enough */
    if (*len == max)
        return kp_err_set(err, "--%s: at most %zu sizes", flag, max);
    memmove(&v[i + 1], &v[i], (*len - i) * sizeof(v[0]));
    v[i] = (unsigned)n;
    (*len)++;
    return 0;
}

int rv_add_netpol_level(void *ctx, const char *item, struct kp_err *err)
{
    struct run_options *o = ctx;
    long n = 0;

    if (rv_parse_int(item, 0, RUN_NETPOL_RULES_MAX, &n, "netpol-rules", err) != 0)
        return -1;
    return add_size(o->netpol_rules, &o->n_netpol_rules, RUN_NETPOL_LEVELS_MAX, n, "netpol-rules",
                    err);
}

int rv_add_services_size(void *ctx, const char *item, struct kp_err *err)
{
    struct run_options *o = ctx;
    long n = 0;

    if (rv_parse_int(item, 0, RUN_SERVICES_MAX, &n, "services", err) != 0)
        return -1;
    return add_size(o->services_sizes, &o->n_services_sizes, RUN_SERVICES_SIZES_MAX, n, "services",
                    err);
}

int rv_set_services(struct run_options *o, const char *v, struct kp_err *err)
{
    o->n_services_sizes = 0;
    if (rv_for_each_item(v, rv_add_services_size, o, err) != 0)
        return -1;
    if (!o->n_services_sizes)
        return kp_err_set(err, "--services: empty list");
    o->services = (int)o->services_sizes[o->n_services_sizes - 1];
    return 0;
}

int rv_add_test(void *ctx, const char *item, struct kp_err *err)
{
    unsigned *mask = ctx;
    const struct testkind *tk;

    if (strcasecmp(item, "all") == 0) {
        *mask |= TEST_ALL_MASK;
        return 0;
    }
    tk = testkind_by_name_icase(item);
    if (!tk)
        return kp_err_set(err,
                          "--tests: unknown test '%s' (all, TCP_RR, TCP_CRR, UDP_RR, "
                          "TCP_RR_LOADED, TCP_STREAM, TCP_STREAM_MULTI, UDP_STREAM)",
                          item);
    *mask |= 1u << tk->kind;
    return 0;
}

static bool is_pattern(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

int rv_add_profile_row(void *ctx, const char *item, struct kp_err *err)
{
    struct run_options *o = ctx;
    const char *slash = strchr(item, '/'), *test = strrchr(item, '/');
    size_t parts = 1;

    for (const char *p = item; *p; p++)
        parts += *p == '/';
    test = test ? test + 1 : item;
    if (strlen(item) > 200 || parts > 3)
        return kp_err_set(err, "--profile: '%s' is not [SCENARIO/[PLACEMENT/]]TEST", item);
    if (strcmp(item, "all") != 0 && !is_pattern(test) && !testkind_by_name(test))
        return kp_err_set(err,
                          "--profile: '%s': unknown test '%s' (a test name such as TCP_STREAM, "
                          "a pattern such as TCP_*, or all)",
                          item, test);
    if (slash) {
        char *scen = kp_xstrndup(item, (size_t)(slash - item));
        bool ok = is_pattern(scen) || plan_scenario_from_name(scen) >= 0;
        free(scen);
        if (!ok)
            return kp_err_set(err,
                              "--profile: '%s': unknown scenario (pod-to-pod, host-to-host, "
                              "pod-to-service, pod-to-external, or a pattern)",
                              item);
    }
    o->profile_rows =
        kp_xrealloc(o->profile_rows, (o->n_profile_rows + 1) * sizeof(*o->profile_rows));
    o->profile_rows[o->n_profile_rows++] = kp_xstrdup(item);
    return 0;
}

int rv_add_label(void *ctx, const char *item, struct kp_err *err)
{
    struct run_options *o = ctx;
    const char *eq = strchr(item, '=');

    if (!eq || eq == item)
        return kp_err_set(err, "--node-selector: '%s' is not KEY=VALUE", item);
    o->node_selector =
        kp_xrealloc(o->node_selector, (o->n_node_selector + 1) * sizeof(*o->node_selector));
    o->node_selector[o->n_node_selector].key = kp_xstrndup(item, (size_t)(eq - item));
    o->node_selector[o->n_node_selector].value = kp_xstrdup(eq + 1);
    o->n_node_selector++;
    return 0;
}

int rv_add_toleration(void *ctx, const char *item, struct kp_err *err)
{
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
    struct run_options *o = ctx;
    struct run_toleration t = {0};
    char *copy = kp_xstrdup(item);
    char *colon = strrchr(copy, ':');
    char *eq;
    int ok = colon == NULL;

    if (colon) {
        *colon = '\0';
        for (size_t i = 0; i < 3; i++)
            if (strcmp(colon + 1, effects[i]) == 0)
                ok = 1;
        if (!ok) {
            free(copy);
            return kp_err_set(err,
                              "--tolerations: '%s': effect must be NoSchedule, "
                              "PreferNoSchedule or NoExecute",
                              item);
        }
        t.effect = kp_xstrdup(colon + 1);
    }
    eq = strchr(copy, '=');
    if (eq) {
        *eq = '\0';
        t.value = kp_xstrdup(eq + 1);
    }
    if (copy[0] && strcmp(copy, "*") != 0)
        t.key = kp_xstrdup(copy);
    free(copy);
    if (!t.key && t.value) {
        free(t.value);
        free(t.effect);
        return kp_err_set(err, "--tolerations: '%s' has a value but no key", item);
    }
    o->tolerations = kp_xrealloc(o->tolerations, (o->n_tolerations + 1) * sizeof(*o->tolerations));
    o->tolerations[o->n_tolerations++] = t;
    return 0;
}

/* HOST[:PORT] or [V6]:PORT or a bare IPv6 address. */
int rv_parse_host_port(const char *s, char **host, int *port, struct kp_err *err)
{
    const char *colon = strrchr(s, ':');
    long p = *port;

    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close == s + 1 || (close[1] && close[1] != ':'))
            return kp_err_set(err, "--external-server: '%s' is not [ADDR]:PORT", s);
        if (close[1] == ':' && rv_parse_int(close + 2, 1, 65535, &p, "external-server", err) != 0)
            return -1;
        *host = kp_xstrndup(s + 1, (size_t)(close - s - 1));
    } else if (colon && strchr(s, ':') == colon) {
        if (colon == s || rv_parse_int(colon + 1, 1, 65535, &p, "external-server", err) != 0)
            return kp_err_set(err, "--external-server: '%s' is not HOST[:PORT]", s);
        *host = kp_xstrndup(s, (size_t)(colon - s));
    } else {
        if (!s[0])
            return kp_err_set(err, "--external-server: empty host");
        *host = kp_xstrdup(s);
    }
    *port = (int)p;
    return 0;
}
