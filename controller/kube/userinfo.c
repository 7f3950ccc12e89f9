/* SPDX-License-Identifier: Apache-2.0 */
/* userinfo.c - user-info out of the API client's URLs (userinfo.h), with libcurl's URL API.
 * Strings libcurl hands back are copied into our allocations, secret ones wiped first. */
#include "controller/kube/userinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/kp_alloc.h"
#include "base/portable.h"

/* A libcurl string as ours (NULL in, NULL out); the libcurl copy wiped and freed. */
static char *take(char *s)
{
    char *mine = kp_xstrdup(s);

    if (s) {
        kp_wipe(s, strlen(s));
        curl_free(s);
    }
    return mine;
}

int userinfo_split(const char *url, char **bare, char **user, char **password, struct kp_err *err)
{
    CURLU *u = curl_url();
    CURLUcode rc =
        u ? curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) : CURLUE_OUT_OF_MEMORY;
    char *s = NULL;

    *bare = *user = *password = NULL;
    if (rc == CURLUE_OK && curl_url_get(u, CURLUPART_USER, &s, CURLU_URLDECODE) == CURLUE_OK)
        *user = take(s);
    s = NULL;
    if (rc == CURLUE_OK && curl_url_get(u, CURLUPART_PASSWORD, &s, CURLU_URLDECODE) == CURLUE_OK)
        *password = take(s);
    s = NULL;
    if (rc == CURLUE_OK) {
        curl_url_set(u, CURLUPART_USER, NULL, 0);
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
        curl_url_set(u, CURLUPART_OPTIONS, NULL, 0);
        rc = curl_url_get(u, CURLUPART_URL, &s, 0);
    }
    curl_url_cleanup(u);
    if (rc != CURLUE_OK) {
        kp_free_secret(*user);
        kp_free_secret(*password);
        *user = *password = NULL;
        return kp_err_set(err, "not a valid URL (%s)", curl_url_strerror(rc));
    }
    *bare = take(s);
    return 0;
}

char *userinfo_shown(const char *url)
{
    struct kp_err err = {{0}};
    char *bare, *user, *password;

    if (userinfo_split(url, &bare, &user, &password, &err) != 0)
        return kp_xstrdup(strchr(url, '@') ? "(a URL with user-info)" : url);
    if (!user && !password) {
        free(bare);
        return kp_xstrdup(url);
    }
    kp_free_secret(user);
    kp_free_secret(password);
    return bare;
}

void userinfo_scrub(char *buf, size_t size, const char *url)
{
    char *shown = userinfo_shown(url), *out, *hit;
    size_t n = strlen(url);
    FILE *f;
    size_t len = 0;
    const char *p = buf;

    if (!n || strcmp(shown, url) == 0 || !strstr(buf, url)) {
        free(shown);
        return;
    }
    out = NULL;
    f = open_memstream(&out, &len);
    if (!f)
        abort();
    while ((hit = strstr(p, url)) != NULL) {
        fwrite(p, 1, (size_t)(hit - p), f);
        fputs(shown, f);
        p = hit + n;
    }
    fputs(p, f);
    if (fclose(f) != 0 || !out)
        abort();
    kp_wipe(buf, size);
    snprintf(buf, size, "%s", out);
    free(out);
    free(shown);
}
