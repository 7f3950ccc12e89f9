/* SPDX-License-Identifier: Apache-2.0 */
/* pushgw.c - the Pushgateway PUT (pushgw.h). The body is rendered into memory first, so a
 * failed render never sends half an exposition. */
#include "controller/report/pushgw.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "base/kp_alloc.h"
#include "base/token.h"
#include "controller/report/render_openmetrics.h"
#include "controller/report/report.h"
#include "controller/report/urlcred.h"

#define ANSWER_MAX 200 /* bytes of the gateway's answer kept for an error message */

struct answer {
    char text[ANSWER_MAX + 1];
    size_t len;
};

static size_t keep_answer(char *p, size_t size, size_t n, void *ctx)
{
    struct answer *a = ctx;
    size_t bytes = size * n;

    for (size_t i = 0; i < bytes && a->len < ANSWER_MAX; i++) {
        unsigned char c = (unsigned char)p[i];

        a->text[a->len++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    a->text[a->len] = '\0';
    return bytes;
}

int pushgw_url_check(const char *url, struct kp_err *err)
{
    char *shown = urlcred_redact(url); /* the URL as messages may show it */
    const char *host = url;
    int rc = -1;

    if (strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        host = url + 8;
    if (host == url)
        kp_err_set(err, "--push-gateway: '%s' is not an http:// or https:// URL", shown);
    else if (!host[0] || host[0] == '/')
        kp_err_set(err, "--push-gateway: '%s' has no host", shown);
    else if (strpbrk(url, "?# \t\r\n"))
        kp_err_set(err, "--push-gateway: '%s' must be a base URL (no query, fragment or spaces)",
                   shown);
    else if (urlcred_split(url, NULL, NULL, NULL, err) != 0)
        kp_err_prefix(err, "--push-gateway: '%s'", shown);
    else
        rc = 0;
    free(shown);
    return rc;
}

int pushgw_password(const char *file, char **password, struct kp_err *err)
{
    const char *env = getenv(PUSHGW_PASSWORD_ENV);
    size_t len;

    *password = NULL;
    if (file)
        return token_read(file, password, &len, err);
    if (env && env[0])
        *password = kp_xstrdup(env);
    return 0;
}

/* URL/metrics/job/<job>/instance@base64/<cluster in base64url>: the Pushgateway's encoding
 * for a label value that may hold '/' or any other byte. Caller frees. */
static char *push_url(const char *base, const char *job, const char *cluster)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *in = (const unsigned char *)cluster;
    size_t n = strlen(base), len = strlen(cluster), o = 0;
    char *enc = kp_xcalloc(4 * (len / 3 + 1) + 1, 1), *url;

    while (n > 0 && base[n - 1] == '/')
        n--;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < len ? in[i + 2] : 0);

        enc[o++] = b64[v >> 18 & 63];
        enc[o++] = b64[v >> 12 & 63];
        enc[o++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
        enc[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    url =
        kp_xasprintf("%.*s/metrics/job/%s/instance@base64/%s", (int)n, base, job, len ? enc : "=");
    free(enc);
    return url;
}

/* Basic auth from the URL's user-info or the password given apart (password wins); set as
 * options, never put back into a URL. */
static void set_auth(CURL *c, const char *user, const char *password)
{
    if (!user && !password)
        return;
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, user ? user : "");
    curl_easy_setopt(c, CURLOPT_PASSWORD, password ? password : "");
}

/* The body: the report's exposition in memory, with kperf_run_status when run_status >= 0
 * (*body: caller frees). Returns 0 or -1. */
static int render_body(const struct report *rep, int run_status, char **body, size_t *len,
                       struct kp_err *err)
{
    FILE *mem = open_memstream(body, len);

    if (!mem)
        return kp_err_set(err, "push gateway: out of memory");
    render_openmetrics_status(rep, run_status, mem);
    if (fclose(mem) != 0 || !*body) {
        free(*body);
        *body = NULL;
        return kp_err_set(err, "push gateway: cannot render the metrics");
    }
    return 0;
}

/* One PUT of body to url. Returns 0, or -1 with err; *retry says whether another attempt may
 * help (no answer, HTTP 5xx or 429), not a refusal that will repeat (HTTP 4xx). */
static int put_once(const char *url, const char *user, const char *password, const char *body,
                    size_t body_len, bool *retry, struct kp_err *err)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hdr = NULL;
    struct answer ans = {.len = 0};
    long status = 0;
    CURLcode cc;
    int rc = -1;

    *retry = false;
    if (!c)
        return kp_err_set(err, "push gateway: cannot initialise libcurl");
    /* the text format 0.0.4 parser reads OpenMetrics gauges; '# EOF' is a comment to it */
    hdr = curl_slist_append(hdr, "Content-Type: text/plain; version=0.0.4; charset=utf-8");
    curl_easy_setopt(c, CURLOPT_URL, url);
    set_auth(c, user, password);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, PUSHGW_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &ans);
    cc = curl_easy_perform(c);
    if (cc != CURLE_OK) {
        *retry = true;
        kp_err_set(err, "push gateway %s: %s", url, curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        *retry = status >= 500 || status == 429;
        kp_err_set(err, "push gateway %s: HTTP %ld%s%s", url, status, ans.len ? ": " : "",
                   ans.text);
        goto out;
    }
    rc = 0;
out:
    curl_slist_free_all(hdr);
    curl_easy_cleanup(c);
    return rc;
}

int pushgw_push_text(const char *base_url, const char *job, const char *cluster, const char *body,
                     size_t body_len, const struct pushgw_opts *o, struct kp_err *err)
{
    char *url = NULL, *bare = NULL, *user = NULL, *url_pw = NULL;
    unsigned attempts = o && o->attempts ? o->attempts : 1;
    bool retry = false;
    int rc = -1;

    if (pushgw_url_check(base_url, err) != 0 ||
        urlcred_split(base_url, &bare, &user, &url_pw, err) != 0)
        goto out;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        kp_err_set(err, "push gateway: cannot initialise libcurl");
        goto out;
    }
    url = push_url(bare, job, cluster); /* no user-info: safe to show */
    for (unsigned i = 0; i < attempts; i++) {
        if (i > 0) /* 1 s, 2 s, 4 s, ... between attempts: a gateway restarting comes back */
            nanosleep(&(struct timespec){.tv_sec = 1L << (i - 1)}, NULL);
        rc = put_once(url, user, o && o->password ? o->password : url_pw, body, body_len, &retry,
                      err);
        if (rc == 0 || !retry)
            break;
    }
    if (rc != 0 && attempts > 1 && retry)
        kp_err_prefix(err, "%u attempts", attempts);
out:
    free(url);
    free(bare);
    kp_free_secret(user);
    kp_free_secret(url_pw);
    return rc;
}

int pushgw_push_opts(const struct report *rep, const char *base_url, const struct pushgw_opts *o,
                     struct kp_err *err)
{
    char *body = NULL;
    size_t body_len = 0;
    int rc;

    if (pushgw_url_check(base_url, err) != 0 ||
        render_body(rep, o ? o->run_status : -1, &body, &body_len, err) != 0)
        return -1;
    rc = pushgw_push_text(base_url, PUSHGW_JOB, render_openmetrics_cluster(rep), body, body_len, o,
                          err);
    free(body);
    return rc;
}

int pushgw_push(const struct report *rep, const char *base_url, const char *password,
                struct kp_err *err)
{
    struct pushgw_opts o = {.password = password, .run_status = -1, .attempts = 1};

    return pushgw_push_opts(rep, base_url, &o, err);
}
