/* SPDX-License-Identifier: Apache-2.0 */
/* kp_alloc.c - see kp_alloc.h. */
#include "base/kp_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/portable.h"

static void oom(size_t n)
{
    char msg[96];
    int len = snprintf(msg, sizeof(msg), "kperf: fatal: out of memory (%zu bytes)\n", n);
    if (len > 0 && write(STDERR_FILENO, msg, (size_t)len) < 0)
        abort();
    abort();
}

void *kp_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *kp_xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        oom(nmemb * size);
    return p;
}

void *kp_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *kp_xstrdup(const char *s)
{
    char *d;
    if (!s)
        return NULL;
    d = strdup(s);
    if (!d)
        oom(strlen(s));
    return d;
}

char *kp_xstrndup(const char *s, size_t n)
{
    char *d = strndup(s, n);
    if (!d)
        oom(n);
    return d;
}

char *kp_xasprintf(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom(0);
    return s;
}

void kp_free_secret(char *s)
{
    if (!s)
        return;
    kp_wipe(s, strlen(s));
    free(s);
}

void kp_alloc_init_json(void)
{
    json_set_alloc_funcs(kp_xmalloc, free);
}
