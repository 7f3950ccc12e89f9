/* SPDX-License-Identifier: Apache-2.0 */
/* netpol.c - see netpol.h. */
#include "controller/report/netpol.h"

#include <math.h>
#include <string.h>

#include "base/textsafe.h"
#include "controller/report/readiness.h"

const char *const netpol_times[NETPOL_TIMES] = {"policy_deny_s", "policy_allow_s", "pod_deny_s"};
static const char *const early_names[2] = {"policy_early", "pod_early"};

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static const json_t *connect_probes(const json_t *probe)
{
    return json_object_get(json_object_get(probe, "probes"), "connect");
}

static double every_s(const json_t *probe)
{
    double ms = num(probe, "connect_every_ms");
    return ms > 0 ? ms / 1000.0 : 0.1;
}

int netpol_policy_phase(json_t *rec, const json_t *probe, double deny_at, double allow_at)
{
    const json_t *c = connect_probes(probe), *o;
    double start = num(probe, "start_unix_s"), every = every_s(probe);
    size_t i;

    if (!c || start <= 0 || start > deny_at) {
        json_object_set_new(rec, "error",
                            json_string("the prober did not run from before the "
                                        "deny policy was created"));
        return -1;
    }
    /* the outage the deny opened: the first that ends after it was created (a refused probe
     * sent within one interval before it is the deny's too: the clocks differ) */
    json_array_foreach(json_object_get(c, "outages"), i, o)
    {
        double s = start + num(o, "start_s"), e = start + num(o, "end_s");
        double deny = s > deny_at ? s - deny_at : 0;
        if (e <= deny_at)
            continue;
        json_object_set_new(rec, "policy_deny_s", json_real(deny));
        json_object_set_new(rec, "policy_early", json_integer((json_int_t)lround(deny / every)));
        if (json_is_true(json_object_get(o, "open")) || e < allow_at) {
            json_object_set_new(rec, "error", json_string("the allow policy admitted no probe"));
            return -1;
        }
        json_object_set_new(rec, "policy_allow_s", json_real(e - allow_at));
        return 0;
    }
    json_object_set_new(rec, "error", json_string("the deny policy refused no probe"));
    return -1;
}

int netpol_pod_phase(json_t *rec, const json_t *probe)
{
    const json_t *c = connect_probes(probe);
    const json_t *o = json_array_get(json_object_get(c, "outages"), 0);

    if (!c || !o || !json_is_true(json_object_get(o, "open"))) {
        json_object_set_new(rec, "error",
                            json_string("the new pod's egress deny never took effect"));
        return -1;
    }
    json_object_set_new(rec, "pod_deny_s", json_real(num(o, "start_s")));
    /* every probe after the deny took effect was lost: the answered ones came before */
    json_object_set_new(rec, "pod_early",
                        json_integer(json_integer_value(json_object_get(c, "answered"))));
    return 0;
}

static void cell(const json_t *e, const char *k, bool count, char *buf, size_t len)
{
    const json_t *v = json_object_get(e, k);

    if (!v)
        snprintf(buf, len, "-");
    else if (count)
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else
        snprintf(buf, len, "%.3f", json_number_value(v));
}

void netpol_print(const json_t *md, bool markdown, FILE *out)
{
    const json_t *np = json_object_get(md, "netpol");
    const json_t *nodes = json_object_get(np, "nodes"), *e;
    size_t i;
    char node[128], err[256], c[5][32];

    if (json_array_size(nodes) == 0)
        return;
    if (markdown)
        fprintf(out,
                "\n## NetworkPolicy enforcement readiness (seconds; probes every %lld ms)\n\n"
                "| node | policy deny | early | policy allow | new pod deny | early | error |\n"
                "|---|---:|---:|---:|---:|---:|---|\n",
                (long long)json_integer_value(json_object_get(np, "probe_every_ms")));
    else
        fprintf(out,
                "\nNetworkPolicy enforcement readiness (seconds; probes every %lld ms)\n"
                "%-24s %11s %6s %12s %12s %6s  %s\n",
                (long long)json_integer_value(json_object_get(np, "probe_every_ms")), "node",
                "policy-deny", "early", "policy-allow", "new-pod-deny", "early", "error");
    json_array_foreach(nodes, i, e)
    {
        textsafe(str(e, "node"), node, sizeof(node));
        textsafe(str(e, "error"), err, sizeof(err));
        cell(e, "policy_deny_s", false, c[0], sizeof(c[0]));
        cell(e, "policy_early", true, c[1], sizeof(c[1]));
        cell(e, "policy_allow_s", false, c[2], sizeof(c[2]));
        cell(e, "pod_deny_s", false, c[3], sizeof(c[3]));
        cell(e, "pod_early", true, c[4], sizeof(c[4]));
        fprintf(out,
                markdown ? "| %s | %s | %s | %s | %s | %s | %s |\n"
                         : "%-24s %11s %6s %12s %12s %6s  %s\n",
                node, c[0], c[1], c[2], c[3], c[4], err);
    }
}

static const json_t *find_node(const json_t *nodes, const char *name)
{
    const json_t *e;
    size_t i;

    json_array_foreach(nodes, i, e)
    {
        if (strcmp(str(e, "node"), name) == 0)
            return e;
    }
    return NULL;
}

static void add(json_t *out, const char *node, const char *fig, double b, double c,
                const char *verdict)
{
    json_array_append_new(out,
                          json_pack("{s:s, s:s, s:f, s:f, s:f, s:s}", "node", node, "figure", fig,
                                    "base", b, "new", c, "delta", c - b, "verdict", verdict));
}

json_t *netpol_compare(const json_t *md_base, const json_t *md_new, const struct cmp_threshold *th,
                       size_t *regressions, size_t *improvements)
{
    const json_t *nb = json_object_get(json_object_get(md_base, "netpol"), "nodes");
    const json_t *nn = json_object_get(json_object_get(md_new, "netpol"), "nodes");
    json_t *out = json_array();
    const json_t *en;
    size_t i;

    *regressions = *improvements = 0;
    json_array_foreach(nn, i, en)
    {
        const char *node = str(en, "node");
        const json_t *eb = find_node(nb, node);
        if (!eb)
            continue;
        if (json_object_get(en, "error") && !json_object_get(eb, "error")) {
            json_array_append_new(out,
                                  json_pack("{s:s, s:s, s:s, s:s}", "node", node, "figure", "error",
                                            "error", str(en, "error"), "verdict", "regression"));
            (*regressions)++;
            continue;
        }
        for (size_t k = 0; k < NETPOL_TIMES; k++) {
            const json_t *b = json_object_get(eb, netpol_times[k]);
            const json_t *c = json_object_get(en, netpol_times[k]);
            const char *v;
            if (!b || !c)
                continue;
            v = readiness_judge(json_number_value(b), json_number_value(c), th);
            *regressions += strcmp(v, "regression") == 0;
            *improvements += strcmp(v, "improvement") == 0;
            add(out, node, netpol_times[k], json_number_value(b), json_number_value(c), v);
        }
        for (size_t k = 0; k < 2; k++) {
            const json_t *b = json_object_get(eb, early_names[k]);
            const json_t *c = json_object_get(en, early_names[k]);
            if (b && c)
                add(out, node, early_names[k], (double)json_integer_value(b),
                    (double)json_integer_value(c), "not judged");
        }
    }
    return out;
}

void netpol_compare_print(const json_t *cmp, bool markdown, FILE *out)
{
    const json_t *e;
    size_t i;
    char node[128], why[256];

    if (json_array_size(cmp) == 0)
        return;
    if (markdown)
        fprintf(out, "\n## NetworkPolicy enforcement readiness\n\n| node | figure | base | new | "
                     "delta | verdict |\n|---|---|---:|---:|---:|---|\n");
    else
        fprintf(out, "\nNetworkPolicy enforcement readiness\n%-24s %-15s %9s %9s %9s  %s\n", "node",
                "figure", "base", "new", "delta", "verdict");
    json_array_foreach(cmp, i, e)
    {
        textsafe(str(e, "node"), node, sizeof(node));
        if (json_object_get(e, "error")) {
            textsafe(str(e, "error"), why, sizeof(why));
            fprintf(out,
                    markdown ? "| %s | %s | %s | %s | %s | regression: %s |\n"
                             : "%-24s %-15s %9s %9s %9s  regression: %s\n",
                    node, "error", "", "", "", why);
            continue;
        }
        fprintf(out,
                markdown ? "| %s | %s | %.3f | %.3f | %+.3f | %s |\n"
                         : "%-24s %-15s %9.3f %9.3f %+9.3f  %s\n",
                node, str(e, "figure"), num(e, "base"), num(e, "new"), num(e, "delta"),
                str(e, "verdict"));
    }
}
