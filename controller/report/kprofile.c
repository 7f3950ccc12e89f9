/* SPDX-License-Identifier: Apache-2.0 */
/* kprofile.c - see kprofile.h. */
#include "controller/report/kprofile.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/textsafe.h"
#include "controller/report/html_util.h"

static const char *const SUMMED[] = {"samples", "other", "idle", "lost", "unknown"};

static void sum_int(json_t *acc, const char *key, const json_t *from)
{
    json_int_t v = json_integer_value(json_object_get(from, key));

    json_object_set_new(acc, key, json_integer(json_integer_value(json_object_get(acc, key)) + v));
}

static void merge_functions(json_t *by_name, const json_t *functions)
{
    const json_t *f;
    size_t i;

    json_array_foreach(functions, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        json_t *acc;
        if (!name)
            continue;
        if (!(acc = json_object_get(by_name, name))) {
            acc = json_pack("{s:s, s:i, s:i}", "name", name, "samples", 0, "stack", 0);
            json_object_set_new(by_name, name, acc);
        }
        sum_int(acc, "samples", f);
        sum_int(acc, "stack", f);
    }
}

static int by_stack_desc(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "stack"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "stack"));

    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")),
                  json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

/* The merged functions, the most stack samples first, at most KPROFILE_ROW_FUNCTIONS. */
static json_t *sorted_functions(json_t *by_name)
{
    size_t n = json_object_size(by_name), i = 0;
    json_t **v = kp_xcalloc(n ? n : 1, sizeof(*v)), *f, *arr = json_array();
    const char *key;

    json_object_foreach(by_name, key, f)
    {
        v[i++] = f;
    }
    qsort(v, n, sizeof(*v), by_stack_desc);
    for (i = 0; i < n && i < KPROFILE_ROW_FUNCTIONS; i++)
        json_array_append(arr, v[i]);
    free(v);
    return arr;
}

json_t *kprofile_of_row(const json_t *row)
{
    json_t *acc = NULL, *by_name = json_object(), *s;
    const char *error = NULL;
    size_t i;

    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        const json_t *p = json_object_get(s, "profile");
        if (!json_is_object(p))
            continue;
        if (json_object_get(p, "error")) {
            error = json_string_value(json_object_get(p, "error"));
            continue;
        }
        if (!acc)
            acc = json_object();
        for (size_t k = 0; k < sizeof(SUMMED) / sizeof(SUMMED[0]); k++)
            sum_int(acc, SUMMED[k], p);
        json_object_set(acc, "hz", json_object_get(p, "hz"));
        json_object_set(acc, "cpus", json_object_get(p, "cpus"));
        merge_functions(by_name, json_object_get(p, "functions"));
    }
    if (acc)
        json_object_set_new(acc, "functions", sorted_functions(by_name));
    else if (error)
        acc = json_pack("{s:s}", "error", error);
    json_decref(by_name);
    return acc;
}

/* One side of a diff: its samples and each function's stack samples by name. */
struct side {
    double samples;
    json_t *stack; /* name -> stack samples (borrowed entries of the row's functions) */
};

static int side_of(const json_t *row, struct side *s)
{
    const json_t *p = json_object_get(row, "profile"), *f;
    size_t i;

    s->samples = (double)json_integer_value(json_object_get(p, "samples"));
    if (!p || s->samples <= 0)
        return -1;
    s->stack = json_object();
    json_array_foreach(json_object_get(p, "functions"), i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (name)
            json_object_set(s->stack, name, json_object_get(f, "stack"));
    }
    return 0;
}

static json_int_t count_of(const struct side *s, const char *name)
{
    return json_integer_value(json_object_get(s->stack, name));
}

static double pct(const struct side *s, const char *name)
{
    return 100.0 * (double)count_of(s, name) / s->samples;
}

static double round2(double v)
{
    return round(v * 100.0) / 100.0;
}

struct cand {
    const char *name;
    double base, new_, delta;
    json_int_t nb, nn;
};

static int by_abs_delta(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (fabs(x->delta) != fabs(y->delta))
        return fabs(x->delta) > fabs(y->delta) ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int by_new_desc(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->new_ != y->new_)
        return x->new_ > y->new_ ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int by_base_desc(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->base != y->base)
        return x->base > y->base ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Every function of either side with its shares. */
static struct cand *candidates(const struct side *b, const struct side *n, size_t *count)
{
    size_t cap = json_object_size(b->stack) + json_object_size(n->stack), k = 0;
    struct cand *c = kp_xcalloc(cap ? cap : 1, sizeof(*c));
    const struct side *sides[2] = {b, n};
    const char *name;
    json_t *v;

    for (int s = 0; s < 2; s++)
        json_object_foreach(sides[s]->stack, name, v)
        {
            if (s == 1 && json_object_get(b->stack, name))
                continue; /* listed with BASE's */
            c[k] = (struct cand){name, pct(b, name),      pct(n, name),
                                 0,    count_of(b, name), count_of(n, name)};
            c[k].delta = c[k].new_ - c[k].base;
            k++;
        }
    *count = k;
    return c;
}

/* Two functions on one path (a caller and its only callee): shares within SAME_PATH_PCT of each
 * other's on both sides. */
#define SAME_PATH_PCT 1.0
static bool same_path(const struct cand *a, const struct cand *b)
{
    return fabs(a->base - b->base) < SAME_PATH_PCT && fabs(a->new_ - b->new_) < SAME_PATH_PCT;
}

/* The largest changes, a function on the path of one listed before it left out. */
static json_t *changed(struct cand *c, size_t count)
{
    json_t *arr = json_array();
    size_t listed[KPROFILE_CHANGED], nl = 0;

    qsort(c, count, sizeof(*c), by_abs_delta);
    for (size_t i = 0; i < count && nl < KPROFILE_CHANGED && c[i].delta != 0; i++) {
        size_t j;
        for (j = 0; j < nl && !same_path(&c[listed[j]], &c[i]); j++)
            ;
        if (j < nl)
            continue;
        listed[nl++] = i;
        json_array_append_new(arr, json_pack("{s:s, s:f, s:f, s:f}", "name", c[i].name, "base_pct",
                                             round2(c[i].base), "new_pct", round2(c[i].new_),
                                             "delta_pct", round2(c[i].delta)));
    }
    return arr;
}

/* Functions under 0.1% on one side and at least 0.5% and 3 samples on the other. */
static json_t *appeared(struct cand *c, size_t count, int in_new)
{
    json_t *arr = json_array();
    size_t nl = 0;

    qsort(c, count, sizeof(*c), in_new ? by_new_desc : by_base_desc);
    for (size_t i = 0; i < count && nl < KPROFILE_APPEARED; i++) {
        double was = in_new ? c[i].base : c[i].new_, is = in_new ? c[i].new_ : c[i].base;
        json_int_t samples = in_new ? c[i].nn : c[i].nb;
        if (was >= 0.1 || is < 0.5 || samples < 3)
            continue;
        json_array_append_new(arr, json_pack("{s:s, s:f}", "name", c[i].name,
                                             in_new ? "new_pct" : "base_pct", round2(is)));
        nl++;
    }
    return arr;
}

json_t *kprofile_diff(const json_t *base_row, const json_t *new_row)
{
    struct side b = {0}, n = {0};
    struct cand *c;
    size_t count;
    json_t *d;

    if (!base_row || side_of(base_row, &b) != 0)
        return NULL;
    if (side_of(new_row, &n) != 0) {
        json_decref(b.stack);
        return NULL;
    }
    c = candidates(&b, &n, &count);
    d = json_pack("{s:I, s:I}", "base_samples", (json_int_t)b.samples, "new_samples",
                  (json_int_t)n.samples);
    json_object_set_new(d, "changed", changed(c, count));
    json_object_set_new(d, "appeared", appeared(c, count, 1));
    json_object_set_new(d, "vanished", appeared(c, count, 0));
    free(c);
    json_decref(b.stack);
    json_decref(n.stack);
    return d;
}

static void print_list(const json_t *list, const char *key, const char *title, const char *indent,
                       FILE *out)
{
    const json_t *e;
    size_t i, used;
    char line[1024];

    if (json_array_size(list) == 0)
        return;
    used = (size_t)snprintf(line, sizeof(line), "%s:", title);
    json_array_foreach(list, i, e)
    {
        if (used < sizeof(line))
            used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s %.1f%%", i ? "," : "",
                                     json_string_value(json_object_get(e, "name")),
                                     json_number_value(json_object_get(e, key)));
    }
    textsafe_line(out, "%s%s", indent, line);
}

void kprofile_diff_print(const json_t *diff, const char *indent, FILE *out)
{
    const json_t *e;
    size_t i;

    json_array_foreach(json_object_get(diff, "changed"), i, e)
    {
        textsafe_line(out, "%s%-36s %5.1f%% -> %5.1f%%  %+.1f", indent,
                      json_string_value(json_object_get(e, "name")),
                      json_number_value(json_object_get(e, "base_pct")),
                      json_number_value(json_object_get(e, "new_pct")),
                      json_number_value(json_object_get(e, "delta_pct")));
    }
    print_list(json_object_get(diff, "appeared"), "new_pct", "appeared in NEW", indent, out);
    print_list(json_object_get(diff, "vanished"), "base_pct", "vanished in NEW", indent, out);
}

static void html_list(const json_t *list, const char *key, const char *title, FILE *out)
{
    const json_t *e;
    size_t i;

    if (json_array_size(list) == 0)
        return;
    fprintf(out, "<p>%s:", title);
    json_array_foreach(list, i, e)
    {
        fputs(i ? ", " : " ", out);
        html_esc(json_string_value(json_object_get(e, "name")), out);
        fprintf(out, " %.1f%%", json_number_value(json_object_get(e, key)));
    }
    fputs("</p>\n", out);
}

void kprofile_diff_html(const json_t *diff, FILE *out)
{
    const json_t *e;
    size_t i;

    if (!diff)
        return;
    fprintf(out,
            "<p>Kernel profile: share of the measurement's kernel samples whose stack held the "
            "function (%lld -&gt; %lld samples)</p>\n<table class=\"profile\"><tr>"
            "<th>function</th><th>base</th><th>new</th><th>change (points)</th></tr>\n",
            (long long)json_integer_value(json_object_get(diff, "base_samples")),
            (long long)json_integer_value(json_object_get(diff, "new_samples")));
    json_array_foreach(json_object_get(diff, "changed"), i, e)
    {
        fputs("<tr><td>", out);
        html_esc(json_string_value(json_object_get(e, "name")), out);
        fprintf(out, "</td><td>%.1f%%</td><td>%.1f%%</td><td>%+.1f</td></tr>\n",
                json_number_value(json_object_get(e, "base_pct")),
                json_number_value(json_object_get(e, "new_pct")),
                json_number_value(json_object_get(e, "delta_pct")));
    }
    fputs("</table>\n", out);
    html_list(json_object_get(diff, "appeared"), "new_pct", "Appeared in NEW", out);
    html_list(json_object_get(diff, "vanished"), "base_pct", "Vanished in NEW", out);
}

#define HTML_FUNCTIONS 12

static int by_self_desc(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "samples"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "samples"));

    return x > y ? -1 : x < y;
}

void kprofile_html(const json_t *row, FILE *out)
{
    const json_t *p = json_object_get(row, "profile"), *fs = json_object_get(p, "functions");
    double total = (double)json_integer_value(json_object_get(p, "samples"));
    size_t n = json_array_size(fs);
    json_t **v;

    if (!p)
        return;
    if (json_object_get(p, "error")) {
        fputs("<p>Kernel profile: none (", out);
        html_esc(json_string_value(json_object_get(p, "error")), out);
        fputs(")</p>", out);
        return;
    }
    fprintf(out,
            "<p>Kernel profile: %lld samples of the measurement's kernel time (%lld of the "
            "node's other work left out); the functions most often running:</p>\n"
            "<table class=\"profile\"><tr><th>function</th><th>self</th>"
            "<th>in the stack</th></tr>\n",
            (long long)total, (long long)json_integer_value(json_object_get(p, "other")));
    v = kp_xcalloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(fs, i);
    qsort(v, n, sizeof(*v), by_self_desc);
    for (size_t i = 0; i < n && i < HTML_FUNCTIONS && total > 0; i++) {
        fputs("<tr><td>", out);
        html_esc(json_string_value(json_object_get(v[i], "name")), out);
        fprintf(out, "</td><td>%.1f%%</td><td>%.1f%%</td></tr>\n",
                100.0 * (double)json_integer_value(json_object_get(v[i], "samples")) / total,
                100.0 * (double)json_integer_value(json_object_get(v[i], "stack")) / total);
    }
    free(v);
    fputs("</table>\n", out);
}
