/* SPDX-License-Identifier: Apache-2.0 */
/* provenance.c - see provenance.h. */
#include "controller/report/provenance.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/textsafe.h"

static int has(const char *field, const char *part)
{
    return strstr(field, part) != NULL;
}

const char *provenance_kind(const char *field)
{
    if (has(field, ".version") || has(field, "_version") || has(field, ".kernel") ||
        has(field, ".os_image") || has(field, ".kubelet") || has(field, ".container_runtime") ||
        has(field, "settings.image") || strcmp(field, "kperf_version") == 0 ||
        strncmp(field, "kubernetes_version", 18) == 0)
        return "version";
    /* kube_proxy_mode_source: where the mode was read, not the datapath */
    if (strncmp(field, "cni.", 4) == 0 || strcmp(field, "kube_proxy_mode") == 0 ||
        strncmp(field, "mtu", 3) == 0 || has(field, "].mtu") || has(field, "].net.") ||
        strncmp(field, "ip_family", 9) == 0 || strncmp(field, "external.net.", 13) == 0 ||
        strncmp(field, "samples.placement.", 18) == 0 || strcmp(field, "agent_cpu_limit") == 0 ||
        strcmp(field, "arch") == 0 || has(field, "].arch"))
        return "setting";
    return "other";
}

static int rank(const json_t *entry)
{
    const char *k = json_string_value(json_object_get(entry, "kind"));

    if (k && strcmp(k, "unread") == 0)
        return 2;

    if (k && strcmp(k, "setting") == 0)
        return 0;
    if (k && strcmp(k, "version") == 0)
        return 1;
    return 2;
}

static bool unread(const json_t *v)
{
    return json_is_string(v) && strncmp(json_string_value(v), "unknown (", 9) == 0;
}

/* A fact one run could not read (k8s_facts_unread: "unknown (forbidden: ...)") changed what
 * kperf knows, not the datapath: "unread", listed with the rest, never the likely explanation. */
static const char *entry_kind(const json_t *e)
{
    const char *kind = provenance_kind(json_string_value(json_object_get(e, "field")));

    if (strcmp(kind, "setting") == 0 &&
        (unread(json_object_get(e, "base")) || unread(json_object_get(e, "new"))))
        return "unread";
    return kind;
}

void provenance_rank(json_t *diff)
{
    size_t n = json_array_size(diff);
    json_t **items = kp_xcalloc(n ? n : 1, sizeof(*items));

    for (size_t i = 0; i < n; i++) {
        items[i] = json_incref(json_array_get(diff, i));
        json_object_set_new(items[i], "kind", json_string(entry_kind(items[i])));
    }
    /* insertion sort: stable, and diffs are short */
    for (size_t i = 1; i < n; i++) {
        json_t *x = items[i];
        size_t j = i;
        while (j > 0 && rank(items[j - 1]) > rank(x)) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = x;
    }
    json_array_clear(diff);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(diff, items[i]);
    free(items);
}

void provenance_print_likely(const json_t *diff, const char *prefix, FILE *out)
{
    const json_t *first = json_array_get(diff, 0);
    size_t settings = 0, i;
    const json_t *d;

    if (!first || rank(first) != 0)
        return;
    json_array_foreach(diff, i, d) settings += rank(d) == 0;
    const char *b = json_string_value(json_object_get(first, "base"));
    const char *n = json_string_value(json_object_get(first, "new"));
    char more[64] = "";

    if (settings > 1)
        snprintf(more, sizeof(more), " (and %zu more setting%s below)", settings - 1,
                 settings == 2 ? "" : "s");
    /* the values come from the reports: no control characters reach the terminal */
    textsafe_line(out, "%sLikely explanation: %s changed from %s to %s%s", prefix,
                  json_string_value(json_object_get(first, "field")), b ? b : "(absent)",
                  n ? n : "(absent)", more);
}

/* True when every node has a distinct "role": nodes are then matched by role, not by order. */
static bool roles_unique(const json_t *nodes)
{
    const json_t *a, *b;
    size_t i, k;

    json_array_foreach(nodes, i, a)
    {
        const char *ra = json_string_value(json_object_get(a, "role"));
        if (!ra)
            return false;
        for (k = 0; k < i; k++) {
            b = json_array_get(nodes, k);
            if (strcmp(ra, json_string_value(json_object_get(b, "role"))) == 0)
                return false;
        }
    }
    return true;
}

/* Flattens metadata into {"path": "value as text"}; run-specific keys are left out because
 * they always differ and explain nothing (node_table: the whole cluster's nodes at the time,
 * not the run's; the run's own are in nodes; services, services_sizes: --services' timings, judged
 * as readiness, readiness.h). */
static void flatten(const json_t *v, const char *path, json_t *out)
{
    static const char *const skip[] = {"start_time",     "end_time", "run_id",     "arguments",
                                       "readiness",      "netpol",   "node_table", "services",
                                       "services_sizes", NULL};
    const char *key;
    const json_t *item;
    size_t i;
    char sub[256];

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            bool skipped = false;
            for (size_t k = 0; skip[k] && !*path; k++)
                skipped = skipped || strcmp(key, skip[k]) == 0;
            /* the local backend names a node's namespace after the run */
            skipped = skipped || (strncmp(path, "nodes[", 6) == 0 && strcmp(key, "namespace") == 0);
            if (skipped)
                continue;
            snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
            flatten(item, sub, out);
        }
    } else if (json_is_array(v)) {
        bool by_role = strcmp(path, "nodes") == 0 && roles_unique(v);
        json_array_foreach(v, i, item)
        {
            if (by_role)
                snprintf(sub, sizeof(sub), "%s[%s]", path,
                         json_string_value(json_object_get(item, "role")));
            else
                snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            flatten(item, sub, out);
        }
    } else {
        char *text = json_is_string(v) ? kp_xstrdup(json_string_value(v))
                                       : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        json_object_set_new(out, path, json_string(text ? text : "?"));
        free(text);
    }
}

/* Adds to acc (an object keyed by field, base and new value) each value of the agent's
 * placement (the first sample's `placement`: same kernel, client threads, write size,
 * low-unsent, the client's CPUs and CPU quota) that differs between the matched rows rb and
 * rn, as {field: "samples.placement.F", base, new, rows: how many rows changed so}. A
 * stream rate measured under another placement (a CPU limit that appeared, fewer CPUs) is a
 * likelier explanation of a change than the CNI. A field only one side reports (an older
 * agent) is not a change of placement: kperf_version tells that. */
void provenance_placement_diff(json_t *acc, const json_t *rb, const json_t *rn)
{
    const json_t *pb =
        json_object_get(json_array_get(json_object_get(rb, "samples"), 0), "placement");
    const json_t *pn =
        json_object_get(json_array_get(json_object_get(rn, "samples"), 0), "placement");
    json_t *fb, *fn, *v, *w, *e;
    const char *key;

    if (!json_is_object(pb) || !json_is_object(pn))
        return;
    fb = json_object();
    fn = json_object();
    flatten(pb, "samples.placement", fb);
    flatten(pn, "samples.placement", fn);
    json_object_foreach(fb, key, v)
    {
        const char *b = json_string_value(v), *n;
        char *k;
        if (!(w = json_object_get(fn, key)) || !(n = json_string_value(w)) || !b ||
            strcmp(b, n) == 0)
            continue;
        k = kp_xasprintf("%s\x1f%s\x1f%s", key, b, n);
        e = json_object_get(acc, k);
        if (!e) {
            e = json_pack("{s:s, s:s, s:s, s:I}", "field", key, "base", b, "new", n, "rows",
                          (json_int_t)0);
            json_object_set_new(acc, k, e);
        }
        json_object_set_new(e, "rows",
                            json_integer(json_integer_value(json_object_get(e, "rows")) + 1));
        free(k);
    }
    json_decref(fb);
    json_decref(fn);
}

/* [{field, base, new}] for every metadata value that differs (absent = null), and the
 * placement changes gathered in placements (provenance_placement_diff; may be NULL). */
json_t *provenance_diff(const json_t *mb, const json_t *mn, const json_t *placements)
{
    json_t *fb = json_object(), *fn = json_object(), *diff = json_array();
    const char *key;
    json_t *v;

    flatten(mb, "", fb);
    flatten(mn, "", fn);
    json_object_foreach(fb, key, v)
    {
        json_t *w = json_object_get(fn, key);
        if (!w || !json_equal(v, w))
            json_array_append_new(diff,
                                  json_pack("{s:s, s:O, s:O?}", "field", key, "base", v, "new", w));
    }
    json_object_foreach(fn, key, v)
    {
        if (!json_object_get(fb, key))
            json_array_append_new(diff,
                                  json_pack("{s:s, s:n, s:O}", "field", key, "base", "new", v));
    }
    json_decref(fb);
    json_decref(fn);
    json_object_foreach((json_t *)placements, key, v) json_array_append(diff, v);
    provenance_rank(diff); /* changed settings first: the likely explanation */
    return diff;
}
