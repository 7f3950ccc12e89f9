/* SPDX-License-Identifier: Apache-2.0 */
/* compare_match.c - rows of two reports matched by their key (compare_match.h). */
#include "controller/report/compare_match.h"

#include <stdlib.h>
#include <string.h>

void compare_index_key_at(const struct report *rep, size_t i, struct report_row_info *ri,
                          struct rowkey *k)
{
    report_row_info(rep, i, ri);
    rowkey_make(k, ri->scenario, ri->placement, ri->test, ri->reverse, ri->ip_family);
}

void compare_index_init(struct compare_index *ix, const struct report *rep)
{
    ix->rep = rep;
    ix->any = json_object();
    ix->measured = json_object();
    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        struct rowkey k;
        char *t;
        compare_index_key_at(rep, i, &ri, &k);
        if (!(t = rowkey_text(&k)))
            continue; /* a row without scenario, placement or test matches nothing */
        if (!json_object_get(ix->any, t))
            json_object_set_new(ix->any, t, json_integer((json_int_t)i));
        if (ri.n_samples > 0 && !json_object_get(ix->measured, t))
            json_object_set_new(ix->measured, t, json_integer((json_int_t)i));
        free(t);
    }
}

void compare_index_cleanup(struct compare_index *ix)
{
    json_decref(ix->any);
    json_decref(ix->measured);
    ix->any = ix->measured = NULL;
}

long compare_index_find(const struct compare_index *ix, const struct rowkey *k, bool measured_only)
{
    char *t = rowkey_text(k);
    const json_t *n = t ? json_object_get(measured_only ? ix->measured : ix->any, t) : NULL;

    free(t);
    return n ? (long)json_integer_value(n) : -1;
}

const json_t *compare_index_find_measured(const struct compare_index *ix, const json_t *row)
{
    struct rowkey k;
    long n;

    rowkey_of(row, &k);
    n = compare_index_find(ix, &k, true);
    return n >= 0 ? report_row(ix->rep, (size_t)n) : NULL;
}

/* {key..., error: the first error of row `other`, or "failed"} (new reference) */
static json_t *failed_key(const struct rowkey *k, const json_t *other)
{
    json_t *out = rowkey_to_json(k);
    const char *e = json_string_value(
        json_object_get(json_array_get(json_object_get(other, "errors"), 0), "error"));

    json_object_set_new(out, "error", json_string(e ? e : "failed"));
    return out;
}

json_t *compare_unmatched(const struct report *a, const struct compare_index *b, json_t *failed)
{
    json_t *out = json_array();

    for (size_t i = 0; i < report_row_count(a); i++) {
        struct report_row_info ri, oi;
        struct rowkey k;
        const json_t *other;
        long o;
        compare_index_key_at(a, i, &ri, &k);
        if (ri.n_samples == 0 || compare_index_find(b, &k, true) >= 0)
            continue;
        o = compare_index_find(b, &k, false);
        if (o >= 0)
            report_row_info(b->rep, (size_t)o, &oi);
        if (failed && o >= 0 && strcmp(oi.status, "failed") == 0 &&
            (other = report_row(b->rep, (size_t)o))) {
            json_array_append_new(failed, failed_key(&k, other));
            continue;
        }
        json_array_append_new(out, rowkey_to_json(&k));
    }
    return out;
}
