/* SPDX-License-Identifier: Apache-2.0 */
/* urlcred.c - user-info out of URLs (urlcred.h), with libcurl's URL API. Strings libcurl
 * hands back are copied into our allocations and wiped before curl_free when secret. */
#include "controller/report/urlcred.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/kp_alloc.h"
#include "base/portable.h"

#define REDACTED "REDACTED"

/* A libcurl string as ours (caller frees; NULL in, NULL out), the libcurl copy wiped. */
static char *take(char *s)
{
    char *mine = kp_xstrdup(s);

    if (s) {
        kp_wipe(s, strlen(s));
        curl_free(s);
    }
    return mine;
}

/* The parsed url, or NULL when libcurl refuses it (*why set). Caller frees with
 * curl_url_cleanup. Any scheme is parsed: a proxy may be socks5h://, a word anything. */
static CURLU *parse(const char *url, CURLUcode *why)
{
    CURLU *u = curl_url();

    if (!u) {
        *why = CURLUE_OUT_OF_MEMORY;
        return NULL;
    }
    *why = curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
    if (*why != CURLUE_OK) {
        curl_url_cleanup(u);
        return NULL;
    }
    return u;
}

/* Whether part is present in u (an empty user or password counts: "https://:p@h"). */
static bool has(CURLU *u, CURLUPart part)
{
    char *s = NULL;
    bool yes = curl_url_get(u, part, &s, 0) == CURLUE_OK && s;

    if (s) {
        kp_wipe(s, strlen(s));
        curl_free(s);
    }
    return yes;
}

/* u rebuilt without user, password and login options (";AUTH=..."); caller frees. */
static char *bare_url(CURLU *u)
{
    char *s = NULL;

    curl_url_set(u, CURLUPART_USER, NULL, 0);
    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
    curl_url_set(u, CURLUPART_OPTIONS, NULL, 0);
    if (curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK)
        return NULL;
    return take(s);
}

int urlcred_split(const char *url, char **bare, char **user, char **password, struct kp_err *err)
{
    char *b = NULL, *us = NULL, *pw = NULL;
    CURLUcode why;
    CURLU *u = parse(url, &why);

    if (bare)
        *bare = NULL;
    if (user)
        *user = NULL;
    if (password)
        *password = NULL;
    if (!u)
        return kp_err_set(err, "not a valid URL (%s)", curl_url_strerror(why));
    if (user && curl_url_get(u, CURLUPART_USER, &us, CURLU_URLDECODE) == CURLUE_OK)
        *user = take(us);
    if (password && curl_url_get(u, CURLUPART_PASSWORD, &pw, CURLU_URLDECODE) == CURLUE_OK)
        *password = take(pw);
    b = bare_url(u);
    curl_url_cleanup(u);
    if (!b) {
        if (user)
            kp_free_secret(*user), *user = NULL;
        if (password)
            kp_free_secret(*password), *password = NULL;
        return kp_err_set(err, "not a valid URL (libcurl cannot rebuild it)");
    }
    if (bare)
        *bare = b;
    else
        free(b);
    return 0;
}

static bool scheme_char(char c)
{
    return isalnum((unsigned char)c) || c == '+' || c == '-' || c == '.';
}

static bool ends_url(char c)
{
    return c == '\0' || isspace((unsigned char)c) || strchr("\"'`<>", c) != NULL;
}

/* The text of one URL, [start, end), rewritten into out: unchanged without user-info. An
 * unparsable URL followed anywhere by an '@' ("https://u:pass word@h") may hide a password
 * past its end: it is cut with the rest of the text. Returns whether the text was cut. */
static bool put_url(FILE *out, const char *start, const char *end, const char *sep)
{
    char *url = kp_xstrndup(start, (size_t)(end - start)), *bare = NULL;
    CURLUcode why;
    CURLU *u = parse(url, &why);
    bool cut = !u && strchr(start, '@') != NULL;

    if (u && (has(u, CURLUPART_USER) || has(u, CURLUPART_PASSWORD) || has(u, CURLUPART_OPTIONS)))
        bare = bare_url(u);
    if (bare)
        fputs(bare, out);
    else if (cut || (u && has(u, CURLUPART_USER))) /* unparsed or not rebuilt: maybe secret */
        fprintf(out, "%.*s://" REDACTED, (int)(sep - start), start);
    else
        fputs(url, out);
    curl_url_cleanup(u);
    free(bare);
    kp_free_secret(url);
    return cut;
}

char *urlcred_redact(const char *text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    const char *p = text, *sep;

    if (!out)
        abort();
    while ((sep = strstr(p, "://")) != NULL) {
        const char *start = sep, *end = sep + 3;

        while (start > p && scheme_char(start[-1]))
            start--;
        while (start < sep && !isalpha((unsigned char)*start)) /* a scheme starts with a letter */
            start++;
        if (start == sep) { /* no scheme: not a URL */
            fwrite(p, 1, (size_t)(end - p), out);
            p = end;
            continue;
        }
        while (!ends_url(*end))
            end++;
        fwrite(p, 1, (size_t)(start - p), out);
        if (put_url(out, start, end, sep))
            end += strlen(end);
        p = end;
    }
    fputs(p, out);
    if (fclose(out) != 0 || !buf)
        abort();
    return buf;
}

void urlcred_redact_strings(json_t *array)
{
    size_t i;
    json_t *v;

    json_array_foreach(array, i, v)
    {
        if (json_is_string(v)) {
            char *clean = urlcred_redact(json_string_value(v));

            json_string_set(v, clean);
            free(clean);
        }
    }
}
