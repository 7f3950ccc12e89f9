/* SPDX-License-Identifier: Apache-2.0 */
/* ksyms.c - see ksyms.h. */
#include "agent/ksyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

struct ksym {
    uint64_t addr;
    size_t name; /* offset into names */
};

struct ksyms {
    struct ksym *s;
    size_t n, cap;
    char *names;
    size_t names_len, names_cap;
};

static int by_addr(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;

    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static size_t add_name(struct ksyms *k, const char *name, size_t len, const char *mod, size_t mlen)
{
    size_t need = len + (mlen ? mlen + 3 : 0) + 1, at = k->names_len;

    if (k->names_len + need > k->names_cap) {
        k->names_cap = (k->names_len + need) * 2;
        k->names = kp_xrealloc(k->names, k->names_cap);
    }
    memcpy(k->names + at, name, len);
    if (mlen) {
        memcpy(k->names + at + len, " [", 2);
        memcpy(k->names + at + len + 2, mod, mlen);
        k->names[at + len + 2 + mlen] = ']';
    }
    k->names[at + need - 1] = '\0';
    k->names_len += need;
    return at;
}

/* One line "ADDR TYPE NAME [MODULE]" (ends at '\n' or NUL) into k, when it is a text symbol. */
static void parse_line(struct ksyms *k, const char *p, const char *end)
{
    char *after;
    uint64_t addr;
    const char *name, *mod = NULL;
    size_t len, mlen = 0;

    errno = 0;
    addr = strtoull(p, &after, 16);
    if (after == p || errno || after + 3 > end || after[0] != ' ' || after[2] != ' ')
        return;
    if (!strchr("tTwW", after[1]) || addr == 0)
        return;
    name = after + 3;
    for (len = 0; name + len < end && name[len] != ' ' && name[len] != '\t'; len++)
        ;
    if (len == 0)
        return;
    for (const char *q = name + len; q < end; q++)
        if (*q == '[') {
            mod = q + 1;
            for (mlen = 0; mod + mlen < end && mod[mlen] != ']'; mlen++)
                ;
            break;
        }
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 4096;
        k->s = kp_xrealloc(k->s, k->cap * sizeof(*k->s));
    }
    k->s[k->n].addr = addr;
    k->s[k->n].name = add_name(k, name, len, mod, mlen);
    k->n++;
}

struct ksyms *ksyms_parse(const char *text)
{
    struct ksyms *k = kp_xcalloc(1, sizeof(*k));

    while (*text) {
        const char *end = strchr(text, '\n');
        if (!end)
            end = text + strlen(text);
        parse_line(k, text, end);
        text = *end ? end + 1 : end;
    }
    if (k->n)
        qsort(k->s, k->n, sizeof(*k->s), by_addr);
    return k;
}

static char *read_all(const char *path, struct kp_err *err)
{
    FILE *f = fopen(path, "r");
    size_t len = 0, cap = 1 << 20, got;
    char *buf;

    if (!f) {
        kp_err_set(err, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    buf = kp_xmalloc(cap);
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0)
            buf = kp_xrealloc(buf, cap *= 2);
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

struct ksyms *ksyms_load(const char *path, struct kp_err *err)
{
    char *text = read_all(path, err);
    struct ksyms *k;

    if (!text)
        return NULL;
    k = ksyms_parse(text);
    free(text);
    if (k->n == 0) {
        ksyms_free(k);
        kp_err_set(err,
                   "%s shows no addresses (hidden by kernel.kptr_restrict, or without CAP_SYSLOG)",
                   path);
        return NULL;
    }
    return k;
}

void ksyms_free(struct ksyms *k)
{
    if (!k)
        return;
    free(k->s);
    free(k->names);
    free(k);
}

size_t ksyms_count(const struct ksyms *k)
{
    return k->n;
}

long ksyms_find(const struct ksyms *k, uint64_t addr)
{
    size_t lo = 0, hi = k->n;

    if (k->n == 0 || addr < k->s[0].addr)
        return -1;
    while (hi - lo > 1) { /* k->s[lo].addr <= addr < k->s[hi].addr (hi == n: beyond) */
        size_t mid = lo + (hi - lo) / 2;
        if (k->s[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    if (lo == k->n - 1 && addr - k->s[lo].addr > KSYMS_MAX_SIZE)
        return -1;
    return (long)lo;
}

long ksyms_by_name(const struct ksyms *k, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < k->n; i++) {
        const char *s = k->names + k->s[i].name;
        if (strncmp(s, name, len) == 0 && (s[len] == '\0' || s[len] == ' '))
            return (long)i;
    }
    return -1;
}

const char *ksyms_name(const struct ksyms *k, size_t i)
{
    return k->names + k->s[i].name;
}
