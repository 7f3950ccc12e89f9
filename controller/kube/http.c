/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - see http.h. One CURL easy handle is reused (curl_easy_reset keeps its connection
 * cache), so keep-alive connections survive between requests. It is recreated only when an exec
 * plugin rotates the client certificate, which drops connections made with the old one. */
#include "controller/kube/http.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/kube/auth.h"
#include "controller/kube/http_int.h"
#include "controller/kube/ratelimit.h"

#define DEFAULT_TIMEOUT_MS  60000
#define DEFAULT_MAX_BODY    (64u << 20)
#define BACKOFF_BASE_MS     500
#define BACKOFF_CAP_MS      30000
#define RETRY_AFTER_CAP_S   60
#define CONNECT_RETRIES_MAX 3
#define MAX_WARNINGS        64
#define TLS_TIMEOUT_MS      10000

static void warn_default(void *arg, const char *text)
{
    (void)arg;
    kp_log(KP_LOG_WARN, "server warning: %s", text);
}

static uint64_t real_now_ms(void *arg)
{
    (void)arg;
    return clock_now_ms();
}

int http_aborted(const struct http *h)
{
    return h->own_abort || (h->ext_abort && *h->ext_abort);
}

static void real_sleep_ms(void *arg, uint64_t ms)
{
    struct http *h = arg;
    while (ms > 0 && !http_aborted(h)) {
        uint64_t step = ms > 50 ? 50 : ms;
        clock_sleep_ms(step);
        ms -= step;
    }
}

uint64_t http_request_count(const struct http *h)
{
    return h->requests;
}

uint64_t http_now_ms(const struct http *h)
{
    return h->clock.now_ms(h->clock.arg);
}

void http_sleep_ms(struct http *h, uint64_t ms)
{
    if (ms > 0 && !http_aborted(h))
        h->clock.sleep_ms(h->clock.arg, ms);
}

void http_abort(struct http *h)
{
    h->own_abort = 1;
}

void http_reset_abort(struct http *h)
{
    h->own_abort = 0;
}

size_t http_max_body(const struct http *h)
{
    return h->max_body;
}

/* Go's httpproxy rule: "localhost" and loopback addresses never go through a proxy. */
static int is_loopback(const char *host)
{
    struct in6_addr a6;
    struct in_addr a4;
    char buf[64];
    size_t n = strlen(host);

    if (!strcasecmp(host, "localhost"))
        return 1;
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']' && n - 2 < sizeof(buf)) {
        memcpy(buf, host + 1, n - 2);
        buf[n - 2] = '\0';
        return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
    }
    return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* Splits server into the URL base we request and, with tls-server-name, a CONNECT_TO entry
 * so that SNI and verification use that name while the socket goes to the real host. */
static int split_server(struct http *h, struct kp_err *err)
{
    const struct kube_config *c = h->cfg;
    int https = !strncmp(c->server, "https://", 8);
    const char *hostp = c->server + (https ? 8 : 7);
    size_t hostlen = strcspn(hostp, "/");
    const char *prefix = hostp + hostlen;
    char *hostport = kp_xstrndup(hostp, hostlen);
    char *port = NULL;
    char *host;

    h->http_only = !https;
    if (hostport[0] == '[') {
        char *end = strchr(hostport, ']');
        if (!end) {
            free(hostport);
            return kp_err_set(err, "server \"%s\" has an unterminated IPv6 address", c->server);
        }
        port = end[1] == ':' ? end + 2 : NULL;
        end[1] = '\0';
    } else if ((port = strchr(hostport, ':')) != NULL) {
        *port++ = '\0';
    }
    host = hostport;
    h->loopback = is_loopback(host);
    /* NO_PROXY is matched against the server's own host, never tls-server-name (as Go) */
    h->server_host = host[0] == '[' ? kp_xstrndup(host + 1, strlen(host) - 2) : kp_xstrdup(host);
    h->server_port = kp_xstrdup(port && *port ? port : https ? "443" : "80");
    if (c->tls_server_name && https) {
        const char *p = port ? port : "443";
        h->url_base = kp_xasprintf("https://%s:%s%s", c->tls_server_name, p, prefix);
        h->connect_to = kp_xasprintf("%s:%s:%s:%s", c->tls_server_name, p, host, p);
        /* like Go: tls-server-name is for SNI and verification only; Host is the server's */
        h->host_header = kp_xasprintf("Host: %.*s", (int)hostlen, hostp);
    } else {
        h->url_base = kp_xstrdup(c->server);
    }
    free(hostport);
    return 0;
}

struct http *http_new(const struct kube_config *cfg, const struct kube_client_opts *opts,
                      struct kp_err *err)
{
    static const struct kube_client_opts none = {0};
    struct http *h = kp_xcalloc(1, sizeof(*h));

    if (!opts)
        opts = &none;
    h->cfg = cfg;
    h->ext_abort = opts->abort_flag;
    if (opts->clock) {
        h->clock = *opts->clock;
    } else {
        h->clock.now_ms = real_now_ms;
        h->clock.sleep_ms = real_sleep_ms;
        h->clock.arg = h;
    }
    h->max_retries = opts->max_retries == 0 ? 10 : opts->max_retries < 0 ? 0 : opts->max_retries;
    h->give_up_ms = opts->give_up_ms;
    h->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
    h->max_body = opts->max_body ? opts->max_body : DEFAULT_MAX_BODY;
    h->user_agent =
        opts->user_agent ? kp_xstrdup(opts->user_agent) : kp_xstrdup("kperf-kube/" KPERF_VERSION);
    h->on_warning = opts->on_warning ? opts->on_warning : warn_default;
    h->warning_arg = opts->warning_arg;
    h->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)h;
    ratelimit_init(&h->rl, opts->qps == 0 ? 5.0 : opts->qps, opts->burst ? opts->burst : 10,
                   http_now_ms(h));
    h->auth = auth_new(cfg, opts->abort_flag, &h->own_abort);
    h->curl = curl_easy_init();
    if (!h->curl || split_server(h, err) != 0) {
        if (!h->curl)
            kp_err_set(err, "cannot initialise libcurl");
        http_free(h);
        return NULL;
    }
    return h;
}

void http_free(struct http *h)
{
    if (!h)
        return;
    if (h->curl)
        curl_easy_cleanup(h->curl);
    auth_free(h->auth);
    for (size_t i = 0; i < h->nwarnings; i++)
        free(h->warnings[i]);
    free(h->warnings);
    free(h->url_base);
    free(h->connect_to);
    free(h->host_header);
    free(h->server_host);
    free(h->server_port);
    free(h->user_agent);
    free(h);
}

/* Shows each distinct warning text once per client. */
void http_warning(struct http *h, const char *text)
{
    for (size_t i = 0; i < h->nwarnings; i++)
        if (!strcmp(h->warnings[i], text))
            return;
    if (h->nwarnings < MAX_WARNINGS) {
        h->warnings = kp_xrealloc(h->warnings, (h->nwarnings + 1) * sizeof(*h->warnings));
        h->warnings[h->nwarnings++] = kp_xstrdup(text);
    }
    h->on_warning(h->warning_arg, text);
}

static uint64_t next_rand(struct http *h)
{
    h->rng ^= h->rng << 13;
    h->rng ^= h->rng >> 7;
    h->rng ^= h->rng << 17;
    return h->rng;
}

/* Capped exponential backoff with jitter in [d/2, d], at least Retry-After. */
static uint64_t backoff_ms(struct http *h, unsigned attempt, long retry_after_s)
{
    uint64_t d = BACKOFF_BASE_MS;
    uint64_t wait;

    for (unsigned i = 0; i < attempt && d < BACKOFF_CAP_MS; i++)
        d *= 2;
    if (d > BACKOFF_CAP_MS)
        d = BACKOFF_CAP_MS;
    wait = d / 2 + next_rand(h) % (d / 2 + 1);
    if (retry_after_s > RETRY_AFTER_CAP_S)
        retry_after_s = RETRY_AFTER_CAP_S;
    if (retry_after_s > 0 && (uint64_t)retry_after_s * 1000u > wait)
        wait = (uint64_t)retry_after_s * 1000u;
    return wait;
}

static int status_retryable(long st, const struct http_request *rq, long retry_after)
{
    if (st == 429)
        return 1; /* rejected before any work: safe for every verb */
    if (st == 500 || st == 502 || st == 503 || st == 504)
        return rq->retry != HTTP_RETRY_UNSAFE || retry_after > 0;
    return 0;
}

static int transport_error(struct http *h, const struct attempt *at, struct kp_err *err)
{
    const char *srv = h->cfg->server;

    if (http_aborted(h))
        return kp_err_set(err, "interrupted");
    if (at->too_big)
        return kp_err_set(err, "response from %s is larger than the %zu-byte limit", srv,
                          at->cap_limit);
    if (at->tls_timeout)
        return kp_err_set(err, "TLS handshake with %s took longer than %d s", srv,
                          TLS_TIMEOUT_MS / 1000);
    switch (at->cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        return kp_err_set(err,
                          "cannot resolve the host of %s: %s. Check the server name (or "
                          "the VPN / DNS)",
                          srv, at->errbuf);
    case CURLE_COULDNT_CONNECT:
        return kp_err_set(err,
                          "cannot connect to %s: %s. Is the cluster reachable from here "
                          "(VPN, firewall, private endpoint)?",
                          srv, at->errbuf);
    case CURLE_PEER_FAILED_VERIFICATION:
        return kp_err_set(err,
                          "TLS certificate of %s is not trusted: %s. Check "
                          "certificate-authority(-data) and tls-server-name in the kubeconfig",
                          srv, at->errbuf);
    case CURLE_SSL_CACERT_BADFILE:
        return kp_err_set(err,
                          "unable to load root certificates for %s: %s. Check "
                          "certificate-authority(-data) in the kubeconfig",
                          srv, at->errbuf);
    case CURLE_SSL_CERTPROBLEM:
        return kp_err_set(err,
                          "client certificate or key cannot be used: %s. Check "
                          "client-certificate / client-key in the kubeconfig",
                          at->errbuf);
    case CURLE_OPERATION_TIMEDOUT:
        return kp_err_set(err, "request to %s timed out: %s", srv, at->errbuf);
    case CURLE_UNSUPPORTED_PROTOCOL:
        return kp_err_set(err, "refused to follow %s: %s", srv, at->errbuf);
    default:
        return kp_err_set(err, "request to %s failed: %s", srv,
                          at->errbuf[0] ? at->errbuf : curl_easy_strerror(at->cc));
    }
}

/* 1 for a failure that the same request cannot fix: TLS verification, unreadable or bad
 * certificate files, a refused protocol. kubectl fails on these at once; so do we. */
static int permanent(const struct attempt *at)
{
    switch (at->cc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
        return 1;
    default:
        return 0;
    }
}

/* 1 when the request never left us (safe to repeat whatever the verb). */
static int not_sent(const struct attempt *at)
{
    return at->cc == CURLE_COULDNT_CONNECT || at->cc == CURLE_COULDNT_RESOLVE_HOST ||
           at->cc == CURLE_COULDNT_RESOLVE_PROXY || at->cc == CURLE_SSL_CONNECT_ERROR ||
           at->tls_timeout;
}

static void log_attempt(const struct http_request *rq, const struct attempt *at, uint64_t ms)
{
    if (!kp_log_enabled(KP_LOG_DEBUG))
        return;
    if (at->status)
        kp_log(KP_LOG_DEBUG, "%s %s %ld in %llu ms", rq->method, rq->path, at->status,
               (unsigned long long)ms);
    else
        kp_log(KP_LOG_DEBUG, "%s %s failed in %llu ms: %s", rq->method, rq->path,
               (unsigned long long)ms, at->errbuf[0] ? at->errbuf : curl_easy_strerror(at->cc));
}

/* Waits for a rate-limit token; logs throttling longer than 50 ms like client-go. */
static void throttle(struct http *h, const struct http_request *rq)
{
    uint64_t wait = ratelimit_reserve(&h->rl, http_now_ms(h));

    if (wait > 50)
        kp_log(KP_LOG_DEBUG,
               "client-side throttling (not priority and fairness): %llu ms for "
               "%s %s",
               (unsigned long long)wait, rq->method, rq->path);
    http_sleep_ms(h, wait);
}

/* Notes a failed attempt (one that started at t0) in the client's run of failures. Returns 1
 * when a retry after wait ms may still go ahead: the failures, retries included, stay within
 * give_up_ms. Otherwise 0, with how long the server has been failing in rs->failing_ms. */
static int may_retry(struct http *h, uint64_t t0, uint64_t wait, struct http_response *rs)
{
    uint64_t now = http_now_ms(h);

    if (!h->failing_since_ms)
        h->failing_since_ms = t0 ? t0 : 1;
    if (!h->give_up_ms || (!h->gave_up && now + wait - h->failing_since_ms <= h->give_up_ms))
        return 1;
    h->gave_up = 1; /* until an answer: the next calls fail at their first failure */
    rs->failing_ms = now - h->failing_since_ms;
    return 0;
}

int http_do(struct http *h, const struct http_request *rq, struct http_response *rs,
            struct kp_err *err)
{
    unsigned retries = 0, conn_fails = 0;
    int refreshed = 0;

    memset(rs, 0, sizeof(*rs));
    for (;;) {
        struct attempt at;
        uint64_t t0, wait;
        int r;

        throttle(h, rq);
        if (http_aborted(h))
            return kp_err_set(err, "interrupted");
        t0 = http_now_ms(h);
        r = http_attempt(h, rq, &at, err);
        if (r < 0) /* credentials could not be obtained */
            return -1;
        log_attempt(rq, &at, http_now_ms(h) - t0);
        rs->retries = retries;
        rs->status = at.status;
        if (at.cc == CURLE_OK || at.stopped) {
            if (at.status == 401 && !refreshed && !at.delivered && auth_invalidate(h->auth)) {
                refreshed = 1; /* re-run the exec plugin / re-read the token file, once */
                attempt_cleanup(&at);
                continue;
            }
            wait = backoff_ms(h, retries, at.retry_after);
            if (at.status != 429 && at.status < 500)
                h->failing_since_ms = h->gave_up = 0; /* it answers: a new run of failures */
            else if (status_retryable(at.status, rq, at.retry_after) && retries < h->max_retries &&
                     !at.delivered && may_retry(h, t0, wait, rs)) {
                kp_log(KP_LOG_DEBUG, "retrying %s %s after %ld in %llu ms", rq->method, rq->path,
                       at.status, (unsigned long long)wait);
                if (at.status != 429 && rq->retry == HTTP_RETRY_CREATE)
                    rs->maybe_done = 1;
                attempt_cleanup(&at);
                retries++;
                http_sleep_ms(h, wait);
                continue;
            } else if (!h->failing_since_ms) {
                h->failing_since_ms = t0 ? t0 : 1;
            }
            attempt_finish(&at, rs);
            return 0;
        }
        /* transport failure; a stream that was answered before it broke counts as an answer */
        if (at.delivered || (at.status >= 200 && at.status < 300))
            h->failing_since_ms = h->gave_up = 0;
        wait = backoff_ms(h, retries, 0);
        if (!http_aborted(h) && !at.too_big && !at.delivered && !permanent(&at) &&
            ((not_sent(&at) && conn_fails < CONNECT_RETRIES_MAX) ||
             (!not_sent(&at) && rq->retry != HTTP_RETRY_UNSAFE && retries < h->max_retries)) &&
            may_retry(h, t0, wait, rs)) {
            if (not_sent(&at))
                conn_fails++;
            else if (rq->retry == HTTP_RETRY_CREATE)
                rs->maybe_done = 1;
            kp_log(KP_LOG_DEBUG, "retrying %s %s in %llu ms", rq->method, rq->path,
                   (unsigned long long)wait);
            attempt_cleanup(&at);
            retries++;
            http_sleep_ms(h, wait);
            continue;
        }
        if (!h->failing_since_ms)
            h->failing_since_ms = t0 ? t0 : 1;
        transport_error(h, &at, err);
        if (rs->failing_ms)
            kp_err_prefix(err, "gave up after %llu s of failures",
                          (unsigned long long)(rs->failing_ms / 1000));
        rs->stopped = at.stopped;
        attempt_cleanup(&at);
        return -1;
    }
}
