/* SPDX-License-Identifier: Apache-2.0 */
/* rowkey.c - the key of a report row and its rules (rowkey.h). */
#include "base/rowkey.h"

#include <stdio.h>
#include <string.h>

#include "base/kp_alloc.h"

void rowkey_make(struct rowkey *k, const char *scenario, const char *placement, const char *test,
                 bool reverse, const char *ip_family)
{
    k->scenario = scenario;
    k->placement = placement;
    k->test = test;
    k->reverse = reverse;
    k->ip_family = ip_family ? ip_family : ROWKEY_DEFAULT_FAMILY;
}

void rowkey_of(const json_t *row, struct rowkey *k)
{
    rowkey_make(k, json_string_value(json_object_get(row, "scenario")),
                json_string_value(json_object_get(row, "placement")),
                json_string_value(json_object_get(row, "test")),
                json_is_true(json_object_get(row, "reverse")),
                json_string_value(json_object_get(row, "ip_family")));
}

bool rowkey_valid(const struct rowkey *k)
{
    return k->scenario && k->placement && k->test;
}

bool rowkey_same_series(const struct rowkey *a, const struct rowkey *b)
{
    return rowkey_valid(a) && rowkey_valid(b) && a->reverse == b->reverse &&
           strcmp(a->scenario, b->scenario) == 0 && strcmp(a->test, b->test) == 0 &&
           strcmp(a->ip_family, b->ip_family) == 0;
}

bool rowkey_equal(const struct rowkey *a, const struct rowkey *b)
{
    return rowkey_same_series(a, b) && strcmp(a->placement, b->placement) == 0;
}

char *rowkey_text(const struct rowkey *k)
{
    if (!rowkey_valid(k))
        return NULL;
    return kp_xasprintf("%zu:%s%zu:%s%zu:%s|%d|%s", strlen(k->scenario), k->scenario,
                        strlen(k->placement), k->placement, strlen(k->test), k->test, k->reverse,
                        k->ip_family);
}

json_t *rowkey_to_json(const struct rowkey *k)
{
    return json_pack("{s:s?, s:s?, s:s?, s:b, s:s}", "scenario", k->scenario, "placement",
                     k->placement, "test", k->test, "reverse", k->reverse, "ip_family",
                     k->ip_family);
}

const char *rowkey_test_label(const struct rowkey *k, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", k->test ? k->test : "?", k->reverse ? " (reverse)" : "");
    return buf;
}

const char *rowkey_label(const struct rowkey *k, char *buf, size_t len)
{
    const char *f = rowkey_family_label(k);

    snprintf(buf, len, "%s %s %s%s%s%s%s", k->scenario ? k->scenario : "?",
             k->placement ? k->placement : "?", k->test ? k->test : "?",
             k->reverse ? " (reverse)" : "", *f ? " [" : "", f, *f ? "]" : "");
    return buf;
}

const char *rowkey_family_label(const struct rowkey *k)
{
    return strcmp(k->ip_family, ROWKEY_DEFAULT_FAMILY) == 0 ? "" : k->ip_family;
}

const char *rowkey_sweep_node(const struct rowkey *k)
{
    size_t n = strlen(ROWKEY_SWEEP_PREFIX);

    if (!k->placement || strncmp(k->placement, ROWKEY_SWEEP_PREFIX, n) != 0)
        return NULL;
    return k->placement + n;
}
