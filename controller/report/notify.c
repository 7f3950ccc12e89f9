/* SPDX-License-Identifier: Apache-2.0 */
/* notify.c - the --notify POST (notify.h). A webhook URL carries its secret in the path (Slack's
 * /services/T.../B.../XXXX), so messages name the receiver by scheme and host only. */
#include "controller/report/notify.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "base/kp_alloc.h"

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
    (void)p, (void)ctx;
    return size * n;
}

/* "https://hooks.example" of url, for messages (caller frees). */
static char *shown_host(const char *url)
{
    const char *host = strstr(url, "://");
    size_t n;

    host = host ? host + 3 : url;
    n = strcspn(host, "/?#");
    if (memchr(host, '@', n)) /* user-info: never shown */
        return kp_xstrdup("the --notify receiver");
    return kp_xasprintf("%.*s%.*s", (int)(host - url), url, (int)n, host);
}

int notify_url_check(const char *url, struct kp_err *err)
{
    const char *host = NULL;

    if (strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        host = url + 8;
    if (!host)
        return kp_err_set(err, "--notify: not an http:// or https:// URL");
    if (!host[0] || host[0] == '/')
        return kp_err_set(err, "--notify: the URL has no host");
    if (strpbrk(url, " \t\r\n"))
        return kp_err_set(err, "--notify: the URL holds a space or a line break");
    return 0;
}

/* One POST. Returns 0, or -1 with *status (0: no answer) and *retry set. */
static int post_once(const char *url, const char *body, long *status, bool *retry)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    CURLcode cc = CURLE_FAILED_INIT;

    *status = 0;
    if (c) {
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, NOTIFY_TIMEOUT_S);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        cc = curl_easy_perform(c);
        if (cc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
        curl_easy_cleanup(c);
    }
    curl_slist_free_all(hdr);
    *retry = cc != CURLE_OK || *status >= 500 || *status == 429;
    return cc == CURLE_OK && *status >= 200 && *status <= 299 ? 0 : -1;
}

int notify_post(const char *url, const json_t *msg, unsigned attempts, struct kp_err *err)
{
    char *body = NULL, *shown = NULL;
    long status = 0;
    bool retry = false;
    unsigned made = 0;
    int rc = -1;

    if (notify_url_check(url, err) != 0)
        return -1;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return kp_err_set(err, "--notify: cannot initialise libcurl");
    body = json_dumps(msg, JSON_COMPACT);
    if (!body)
        return kp_err_set(err, "--notify: cannot encode the message");
    if (!attempts)
        attempts = NOTIFY_ATTEMPTS;
    while (made < attempts) {
        if (made > 0) /* 1 s, 2 s, 4 s, ...: a receiver restarting comes back */
            nanosleep(&(struct timespec){.tv_sec = 1L << (made - 1)}, NULL);
        rc = post_once(url, body, &status, &retry);
        made++;
        if (rc == 0 || !retry)
            break;
    }
    if (rc != 0) {
        shown = shown_host(url);
        if (status)
            kp_err_set(err, "--notify %s: HTTP %ld after %u attempt%s", shown, status, made,
                       made == 1 ? "" : "s");
        else
            kp_err_set(err, "--notify %s: no answer after %u attempt%s", shown, made,
                       made == 1 ? "" : "s");
    }
    free(shown);
    free(body);
    return rc;
}
