/* SPDX-License-Identifier: Apache-2.0 */
/* logdoc.c - see logdoc.h. */
#include "base/logdoc.h"

#include <jansson.h>
#include <string.h>

#include "base/kp_alloc.h"

/* The start of the line after p (or end). */
static const char *next_line(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

char *logdoc_extract(const char *log, size_t len, size_t *n)
{
    const char *end = log + len;
    const char *p = log;
    char *text;
    size_t k = 0;
    json_error_t jerr;
    json_t *probe;

    *n = 0;
    while (p < end && *p != '{')
        p = next_line(p, end);
    if (p >= end)
        return NULL;
    text = kp_xmalloc((size_t)(end - p) + 1);
    while (p < end) {
        const char *q = next_line(p, end);
        size_t plen = strlen(LOGDOC_AGENT_PREFIX);
        if (k == 0 || (size_t)(q - p) < plen || memcmp(p, LOGDOC_AGENT_PREFIX, plen) != 0) {
            memcpy(text + k, p, (size_t)(q - p));
            k += (size_t)(q - p);
        }
        p = q;
    }
    text[k] = '\0';
    *n = k;
    probe = json_loadb(text, k, JSON_DISABLE_EOF_CHECK, &jerr);
    if (probe && jerr.position > 0 && (size_t)jerr.position <= k)
        *n = (size_t)jerr.position;
    json_decref(probe);
    return text;
}
