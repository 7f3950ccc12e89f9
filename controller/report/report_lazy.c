/* SPDX-License-Identifier: Apache-2.0 */
/* report_lazy.c - see report_lazy.h. */
#include "controller/report/report_lazy.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

struct slot {
    size_t index;       /* the row's index in rows */
    json_t *tree;       /* ours; NULL = free slot */
    unsigned long used; /* tick of the last use: the smallest is evicted */
};

struct report_lazy {
    struct slot slots[REPORT_LAZY_SLOTS];
    unsigned long tick;
    size_t last; /* the slot of the last hit, tried first */
};

struct report_lazy *report_lazy_new(void)
{
    return kp_xcalloc(1, sizeof(struct report_lazy));
}

static void clear(struct report_lazy *c)
{
    for (size_t k = 0; k < REPORT_LAZY_SLOTS; k++) {
        json_decref(c->slots[k].tree);
        c->slots[k].tree = NULL;
    }
}

void report_lazy_free(struct report_lazy *c)
{
    if (!c)
        return;
    clear(c);
    free(c);
}

json_t *report_lazy_store(const json_t *row, size_t packed)
{
    char *text = json_dumps(row, JSON_COMPACT); /* reals at full precision, order kept */
    json_t *s = NULL;
    size_t n;

    if (!text)
        return NULL;
    n = strlen(text);
    /* the scalars' text (n - packed) at least a quarter of the packed parts' */
    if (n > packed && (n - packed) * 4 >= packed)
        s = json_stringn_nocheck(text, n);
    free(text);
    return s;
}

static json_t *parse(const json_t *stored)
{
    return json_loadb(json_string_value(stored), json_string_length(stored), 0, NULL);
}

const json_t *report_lazy_row(struct report_lazy *c, const json_t *rows, size_t i)
{
    json_t *v = json_array_get(rows, i);
    struct slot *s;
    size_t victim = 0;

    if (!json_is_string(v))
        return v;
    s = &c->slots[c->last];
    if (!(s->tree && s->index == i)) {
        s = NULL;
        for (size_t k = 0; k < REPORT_LAZY_SLOTS; k++) {
            struct slot *t = &c->slots[k];
            if (t->tree && t->index == i) {
                s = t;
                c->last = k;
                break;
            }
            if (c->slots[victim].tree && (!t->tree || t->used < c->slots[victim].used))
                victim = k; /* a free slot, else the least recently used */
        }
    }
    if (!s) {
        json_t *tree = parse(v);
        if (!tree)
            return NULL;
        s = &c->slots[victim];
        json_decref(s->tree);
        s->tree = tree;
        s->index = i;
        c->last = victim;
    }
    s->used = ++c->tick;
    return s->tree;
}

void report_lazy_forget(struct report_lazy *c)
{
    clear(c);
}

json_t *report_lazy_expand(const json_t *v)
{
    return json_is_string(v) ? parse(v) : json_incref((json_t *)v);
}

void report_lazy_expand_all(struct report_lazy *c, json_t *rows)
{
    /* the cached trees first, so that pointers given out stay valid */
    for (size_t k = 0; k < REPORT_LAZY_SLOTS; k++)
        if (c->slots[k].tree && json_is_string(json_array_get(rows, c->slots[k].index)))
            json_array_set(rows, c->slots[k].index, c->slots[k].tree);
    clear(c);
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const json_t *v = json_array_get(rows, i);
        json_t *tree;
        if (json_is_string(v) && (tree = parse(v)))
            json_array_set_new(rows, i, tree);
    }
}
