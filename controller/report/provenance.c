/* SPDX-License-Identifier: Apache-2.0 */
/* provenance.c - see provenance.h. */
#include "controller/report/provenance.h"

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
    if (strncmp(field, "cni.", 4) == 0 || strncmp(field, "kube_proxy_mode", 15) == 0 ||
        strncmp(field, "mtu", 3) == 0 || has(field, "].mtu") || has(field, "].net.") ||
        strncmp(field, "ip_family", 9) == 0 || strncmp(field, "external.net.", 13) == 0 ||
        strncmp(field, "samples.placement.", 18) == 0 || strcmp(field, "agent_cpu_limit") == 0)
        return "setting";
    return "other";
}

static int rank(const json_t *entry)
{
    const char *k = json_string_value(json_object_get(entry, "kind"));

    if (k && strcmp(k, "setting") == 0)
        return 0;
    if (k && strcmp(k, "version") == 0)
        return 1;
    return 2;
}

void provenance_rank(json_t *diff)
{
    size_t n = json_array_size(diff);
    json_t **items = kp_xcalloc(n ? n : 1, sizeof(*items));

    for (size_t i = 0; i < n; i++) {
        items[i] = json_incref(json_array_get(diff, i));
        json_object_set_new(
            items[i], "kind",
            json_string(provenance_kind(json_string_value(json_object_get(items[i], "field")))));
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
