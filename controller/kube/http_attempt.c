/* SPDX-License-Identifier: Apache-2.0 */
/* http_attempt.c - one libcurl transfer for http.c: options (TLS, credentials, timeouts, no
 * redirects, protocols), header parsing (Retry-After, Warning, Content-Type), capped body
 * collection or streaming, and the progress hook that enforces aborts, deadlines and the TLS
 * handshake timeout. Secrets go to libcurl only, never to a log. */
#include "controller/kube/http_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/portable.h"
#include "controller/kube/auth.h"
#include "controller/kube/noproxy.h"
#include "controller/kube/userinfo.h"

#define CONNECT_TIMEOUT_MS 30000
#define TLS_TIMEOUT_US     10000000LL
#define ERROR_BODY_MAX     (1u << 20)

static int append(struct attempt *at, const char *p, size_t n)
{
    if (at->len + n > at->cap_limit) {
        at->too_big = 1;
        return -1;
    }
    if (at->len + n + 1 > at->cap) {
        size_t cap = at->cap ? at->cap : 16384;
        while (cap < at->len + n + 1)
            cap *= 2;
        at->body = kp_xrealloc(at->body, cap);
        at->cap = cap;
    }
    memcpy(at->body + at->len, p, n);
    at->len += n;
    at->body[at->len] = '\0';
    return 0;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
    struct attempt *at = arg;
    size_t n = size * nmemb;

    if (!at->status)
        curl_easy_getinfo(at->h->curl, CURLINFO_RESPONSE_CODE, &at->status);
    if (at->rq->on_data && at->status >= 200 && at->status < 300) {
        at->delivered = 1;
        if (at->rq->on_data(at->rq->data_arg, p, n) != 0) {
            at->stopped = 1;
            return 0;
        }
        return n;
    }
    if (at->rq->on_data && at->cap_limit > ERROR_BODY_MAX)
        at->cap_limit = ERROR_BODY_MAX; /* an error body instead of a stream */
    return append(at, p, n) == 0 ? n : 0;
}

/* Unquotes the text of `299 - "text"` (HTTP quoted-string) into out. */
static void warning_text(const char *v, char *out, size_t cap)
{
    const char *q = strchr(v, '"');
    size_t o = 0;

    if (!q) {
        snprintf(out, cap, "%s", v);
        return;
    }
    for (q++; *q && *q != '"' && o + 1 < cap; q++) {
        if (*q == '\\' && q[1])
            q++;
        out[o++] = *q;
    }
    out[o] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
    struct attempt *at = arg;
    size_t n = size * nmemb;
    char line[2048];
    char *v;
    size_t l = n < sizeof(line) - 1 ? n : sizeof(line) - 1;

    memcpy(line, p, l);
    line[l] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (!strncmp(line, "HTTP/", 5)) { /* a new response (after 100 Continue) */
        at->retry_after = 0;
        at->content_type[0] = '\0';
        return n;
    }
    v = strchr(line, ':');
    if (!v)
        return n;
    *v++ = '\0';
    while (*v == ' ' || *v == '\t')
        v++;
    if (!strcasecmp(line, "Retry-After")) {
        char *end;
        long s = strtol(v, &end, 10);
        at->retry_after = (end != v && *end == '\0' && s >= 0) ? (s ? s : 1) : 0;
    } else if (!strcasecmp(line, "Content-Type")) {
        snprintf(at->content_type, sizeof(at->content_type), "%s", v);
    } else if (!strcasecmp(line, "Warning")) {
        char text[1024];
        warning_text(v, text, sizeof(text));
        http_warning(at->h, text);
    } else if (!strncasecmp(line, "X-Kubernetes-PF-", 16)) {
        kp_log(KP_LOG_TRACE, "response header %s: %s", line, v);
    }
    return n;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct attempt *at = arg;
    struct http *h = at->h;
    curl_off_t connect_us = 0, pre_us = 0, total_us = 0;

    (void)dt, (void)dn, (void)ut, (void)un;
    if (http_aborted(h))
        return 1;
    if ((at->rq->deadline_ms && http_now_ms(h) >= at->rq->deadline_ms) ||
        (at->rq->wake && *at->rq->wake)) {
        at->deadline = at->stopped = 1;
        return 1;
    }
    if (!h->http_only) {
        curl_easy_getinfo(h->curl, CURLINFO_CONNECT_TIME_T, &connect_us);
        curl_easy_getinfo(h->curl, CURLINFO_PRETRANSFER_TIME_T, &pre_us);
        curl_easy_getinfo(h->curl, CURLINFO_TOTAL_TIME_T, &total_us);
        if (connect_us > 0 && pre_us == 0 && total_us - connect_us > TLS_TIMEOUT_US) {
            at->tls_timeout = 1;
            return 1;
        }
    }
    return 0;
}

static void set_tls(struct http *h, const struct auth_creds *cr)
{
    const struct kube_config *c = h->cfg;
    CURL *k = h->curl;

    curl_easy_setopt(k, CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
    curl_easy_setopt(k, CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
    if (c->ca_data) {
        struct curl_blob b = {c->ca_data, c->ca_data_len, CURL_BLOB_COPY};
        curl_easy_setopt(k, CURLOPT_CAINFO_BLOB, &b);
    } else if (c->ca_file) {
        curl_easy_setopt(k, CURLOPT_CAINFO, c->ca_file);
    }
    if (cr->cert_pem) {
        struct curl_blob cb = {(void *)cr->cert_pem, cr->cert_len, CURL_BLOB_COPY};
        struct curl_blob kb = {(void *)cr->key_pem, cr->key_len, CURL_BLOB_COPY};
        curl_easy_setopt(k, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(k, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(k, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(k, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (cr->cert_file) {
        curl_easy_setopt(k, CURLOPT_SSLCERT, cr->cert_file);
        curl_easy_setopt(k, CURLOPT_SSLKEY, cr->key_file);
    }
    if (h->connect_to) {
        struct curl_slist *ct = curl_slist_append(NULL, h->connect_to);
        curl_easy_setopt(k, CURLOPT_CONNECT_TO, ct);
        h->connect_to_list = ct;
    }
}

static struct curl_slist *headers(struct http *h, const struct http_request *rq,
                                  const struct auth_creds *cr)
{
    struct curl_slist *l = NULL;
    char *s;

    s = kp_xasprintf("Accept: %s", rq->accept ? rq->accept : "application/json");
    l = curl_slist_append(l, s);
    free(s);
    if (rq->body) {
        s = kp_xasprintf("Content-Type: %s",
                         rq->content_type ? rq->content_type : "application/json");
        l = curl_slist_append(l, s);
        free(s);
    }
    l = curl_slist_append(l, "Expect:");
    if (h->host_header)
        l = curl_slist_append(l, h->host_header);
    if (cr->token && !h->cfg->server_user && !h->cfg->server_password) {
        /* Go's client sets the URL's user-info as Basic before client-go's bearer round
         * tripper runs, which then leaves an Authorization header alone */
        s = kp_xasprintf("Authorization: Bearer %s", cr->token);
        l = curl_slist_append(l, s);
        kp_free_secret(s);
    }
    if (h->cfg->impersonate_user) {
        s = kp_xasprintf("Impersonate-User: %s", h->cfg->impersonate_user);
        l = curl_slist_append(l, s);
        free(s);
    }
    for (char **g = h->cfg->impersonate_groups; g && *g; g++) {
        s = kp_xasprintf("Impersonate-Group: %s", *g);
        l = curl_slist_append(l, s);
        free(s);
    }
    if (h->cfg->impersonate_uid) {
        s = kp_xasprintf("Impersonate-Uid: %s", h->cfg->impersonate_uid);
        l = curl_slist_append(l, s);
        free(s);
    }
    for (char **x = h->cfg->impersonate_extra; x && *x; x++)
        l = curl_slist_append(l, *x);
    return l;
}

/* Go's getEnvAny(NAME, name): the upper-case variable first, empty counts as unset. */
static const char *go_env(const char *upper)
{
    char lower[32];
    const char *v = getenv(upper);
    size_t i;

    if (v && *v)
        return v;
    for (i = 0; upper[i] && i + 1 < sizeof(lower); i++)
        lower[i] = (char)tolower((unsigned char)upper[i]);
    lower[i] = '\0';
    v = getenv(lower);
    return v && *v ? v : NULL;
}

/* The proxy URL a request goes through (user-info and all), or NULL for none: the
 * kubeconfig's proxy-url, else $HTTPS_PROXY (HTTP_PROXY for http://) unless the server is
 * on loopback or $NO_PROXY names it (Go's rules: noproxy.h). Borrowed from the config or the
 * environment. */
static const char *proxy_of(const struct http *h)
{
    if (h->cfg->proxy_url)
        return h->cfg->proxy_url;
    if (h->loopback || noproxy_match(go_env("NO_PROXY"), h->server_host, h->server_port))
        return NULL;
    return go_env(h->http_only ? "HTTP_PROXY" : "HTTPS_PROXY");
}

static void set_request(struct http *h, const struct http_request *rq, struct attempt *at,
                        char *url)
{
    CURL *k = h->curl;
    const char *proto = h->http_only ? "http" : "https";

    curl_easy_setopt(k, CURLOPT_URL, url);
    curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, proto);
    curl_easy_setopt(k, CURLOPT_REDIR_PROTOCOLS_STR, proto);
    curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
    if (rq->timeout_ms >= 0)
        curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, rq->timeout_ms ? rq->timeout_ms : h->timeout_ms);
    curl_easy_setopt(k, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(k, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(k, CURLOPT_TCP_KEEPINTVL, 30L);
    if (!h->cfg->disable_compression)
        curl_easy_setopt(k, CURLOPT_ACCEPT_ENCODING, ""); /* gzip: lists shrink ~10x */
    curl_easy_setopt(k, CURLOPT_USERAGENT, h->user_agent);
    curl_easy_setopt(k, CURLOPT_ERRORBUFFER, at->errbuf);
    curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, rq->method);
    if (!strcmp(rq->method, "GET"))
        curl_easy_setopt(k, CURLOPT_HTTPGET, 1L);
    /* libcurl silently re-sends a request whose reused connection died before any answer.
     * For a create we must know when it may have been applied (to reconcile a 409), so it
     * always gets a connection of its own: one extra handshake per create. */
    if (rq->retry == HTTP_RETRY_CREATE)
        curl_easy_setopt(k, CURLOPT_FRESH_CONNECT, 1L);
    if (rq->body) {
        curl_easy_setopt(k, CURLOPT_POSTFIELDS, rq->body);
        curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
    }
    /* Go's httpproxy.FromEnvironment, not libcurl's own reading of the environment: libcurl
     * would match NO_PROXY against the URL's host, which is tls-server-name when one is set;
     * an explicit proxy-url ignores NO_PROXY, as client-go does */
    curl_easy_setopt(k, CURLOPT_PROXY, proxy_of(h) ? proxy_of(h) : ""); /* "" = direct */
    curl_easy_setopt(k, CURLOPT_NOPROXY, "");
    curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(k, CURLOPT_WRITEDATA, at);
    curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(k, CURLOPT_HEADERDATA, at);
    curl_easy_setopt(k, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(k, CURLOPT_XFERINFODATA, at);
    curl_easy_setopt(k, CURLOPT_NOPROGRESS, 0L);
}

int http_attempt(struct http *h, const struct http_request *rq, struct attempt *at,
                 struct kp_err *err)
{
    struct auth_creds cr;
    struct curl_slist *hdr;
    char *url;

    memset(at, 0, sizeof(*at));
    at->h = h;
    at->rq = rq;
    at->cap_limit = h->max_body;
    if (auth_get(h->auth, time(NULL), &cr, err) != 0)
        return -1;
    if (cr.cert_generation != h->curl_cert_gen) {
        /* a rotated client certificate: drop connections made with the old one */
        curl_easy_cleanup(h->curl);
        h->curl = curl_easy_init();
        h->curl_cert_gen = cr.cert_generation;
        if (!h->curl)
            return kp_err_set(err, "cannot initialise libcurl");
    }
    curl_easy_reset(h->curl);
    url = kp_xasprintf("%s%s", h->url_base, rq->path);
    set_request(h, rq, at, url);
    set_tls(h, &cr);
    if (h->cfg->server_user || h->cfg->server_password) {
        /* Go sends the URL's user:password as basic, whatever else is set (see headers()) */
        curl_easy_setopt(h->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(h->curl, CURLOPT_USERNAME, h->cfg->server_user ? h->cfg->server_user : "");
        curl_easy_setopt(h->curl, CURLOPT_PASSWORD,
                         h->cfg->server_password ? h->cfg->server_password : "");
    }
    hdr = headers(h, rq, &cr);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdr);
    h->requests++; /* every transfer we start, whatever becomes of it */
    at->cc = curl_easy_perform(h->curl);
    if (at->errbuf[0] && proxy_of(h)) /* libcurl quotes a bad proxy URL whole */
        userinfo_scrub(at->errbuf, sizeof(at->errbuf), proxy_of(h));
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &at->status);
    /* the header list holds the bearer token: wipe it */
    for (struct curl_slist *p = hdr; p; p = p->next)
        kp_wipe(p->data, strlen(p->data));
    curl_slist_free_all(hdr);
    curl_slist_free_all(h->connect_to_list);
    h->connect_to_list = NULL;
    free(url);
    return 0;
}

void attempt_cleanup(struct attempt *at)
{
    free(at->body);
    at->body = NULL;
}

void attempt_finish(struct attempt *at, struct http_response *rs)
{
    rs->status = at->status;
    rs->body = at->body ? at->body : kp_xstrdup("");
    rs->len = at->len;
    at->body = NULL;
    snprintf(rs->content_type, sizeof(rs->content_type), "%s", at->content_type);
    rs->stopped = at->stopped;
    rs->deadline_reached = at->deadline;
}
