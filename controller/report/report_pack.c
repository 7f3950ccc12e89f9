/* SPDX-License-Identifier: Apache-2.0 */
/* report_pack.c - see report_pack.h. */
#include "controller/report/report_pack.h"

#include <stdlib.h>
#include <string.h>

/* The parts of a sample that only the JSON output and a few computations read. */
static const char *const bulky[] = {"histogram", "intervals", "streams", "node_cpu"};

/* Replaces obj[key] (an array or object) by its compact text; returns the text's length. */
static size_t pack(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    char *text;
    size_t n;

    if (!json_is_array(v) && !json_is_object(v))
        return 0;
    text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY); /* numbers at full precision */
    if (!text)
        return 0; /* out of memory: keep the tree */
    n = strlen(text);
    json_object_set_new(obj, key, json_stringn_nocheck(text, n));
    free(text);
    return n;
}

size_t report_pack_row(json_t *row)
{
    json_t *s;
    size_t i, n = 0;

    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        for (size_t k = 0; k < sizeof(bulky) / sizeof(bulky[0]); k++)
            n += pack(s, bulky[k]);
    }
    return n + pack(json_object_get(row, "aggregate"), "histogram");
}

json_t *report_unpacked(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);

    if (!json_is_string(v))
        return json_incref(v);
    return json_loadb(json_string_value(v), json_string_length(v), JSON_DECODE_ANY, NULL);
}

json_t *report_with_unpacked(const json_t *obj, const char *key)
{
    json_t *c;

    if (!json_is_string(json_object_get(obj, key)))
        return json_incref((json_t *)obj);
    c = json_copy((json_t *)obj);
    json_object_set_new(c, key, report_unpacked(obj, key));
    return c;
}

static json_t *sample_unpacked(json_t *s)
{
    json_t *c = json_copy(s);

    for (size_t k = 0; k < sizeof(bulky) / sizeof(bulky[0]); k++)
        if (json_is_string(json_object_get(s, bulky[k])))
            json_object_set_new(c, bulky[k], report_unpacked(s, bulky[k]));
    return c;
}

json_t *report_row_unpacked(const json_t *row)
{
    json_t *c = json_copy((json_t *)row), *samples = json_array(), *s, *agg;
    size_t i;

    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        json_array_append_new(samples, sample_unpacked(s));
    }
    json_object_set_new(c, "samples", samples);
    if ((agg = json_object_get(row, "aggregate")))
        json_object_set_new(c, "aggregate", report_with_unpacked(agg, "histogram"));
    return c;
}

int report_dump_at(const json_t *v, int depth, FILE *out)
{
    return report_dump_flags(v, depth, 0, out);
}

int report_dump_flags(const json_t *v, int depth, size_t flags, FILE *out)
{
    char *text = json_dumps(v, flags | JSON_INDENT(2) | JSON_ENCODE_ANY);
    const char *p, *nl;

    if (!text)
        return -1;
    for (p = text; (nl = strchr(p, '\n')); p = nl + 1) {
        fwrite(p, 1, (size_t)(nl + 1 - p), out);
        fprintf(out, "%*s", 2 * depth, "");
    }
    fputs(p, out);
    free(text);
    return 0;
}
