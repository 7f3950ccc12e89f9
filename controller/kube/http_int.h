/* SPDX-License-Identifier: Apache-2.0 */
/* http_int.h - state shared by http.c (retry loop) and http_attempt.c (one libcurl transfer).
 * Not part of the public API. */
#ifndef KPERF_KUBE_HTTP_INT_H
#define KPERF_KUBE_HTTP_INT_H

#include <curl/curl.h>

#include "base/kp_err.h"
#include "controller/kube/http.h"
#include "controller/kube/ratelimit.h"

struct auth;

struct http {
    const struct kube_config *cfg; /* borrowed */
    CURL *curl;                    /* reused for keep-alive */
    unsigned curl_cert_gen;        /* certificate generation the handle's connections used */
    struct auth *auth;
    struct ratelimit rl;
    struct kube_clock clock;
    volatile sig_atomic_t own_abort;
    volatile sig_atomic_t *ext_abort; /* borrowed */
    unsigned max_retries;
    uint64_t give_up_ms;       /* kube_client_opts.give_up_ms */
    uint64_t failing_since_ms; /* start of the current run of failed attempts; 0 = none */
    int gave_up;               /* give_up_ms ran out in this run of failures */
    long timeout_ms;
    size_t max_body;
    char *user_agent;
    kube_warning_fn *on_warning;
    void *warning_arg;
    char **warnings; /* texts already shown */
    size_t nwarnings;
    char *url_base;    /* scheme://host:port/prefix, host = tls-server-name when set */
    char *connect_to;  /* CURLOPT_CONNECT_TO entry or NULL */
    char *host_header; /* "Host: <server's host[:port]>" with tls-server-name, or NULL */
    int loopback;      /* the server is localhost or a loopback address: never proxied */
    char *server_host; /* the server URL's host (no brackets) and port, for NO_PROXY */
    char *server_port; /* (the scheme's default when the URL has none) */
    struct curl_slist *connect_to_list; /* during one transfer */
    int http_only;
    uint64_t rng;
    uint64_t requests; /* transfers started (retries, watch streams, logs included) */
};

/* One transfer's results. */
struct attempt {
    struct http *h;
    const struct http_request *rq;
    CURLcode cc;
    char errbuf[CURL_ERROR_SIZE];
    long status;
    long retry_after; /* seconds; 0 = absent or not an integer */
    char content_type[128];
    char *body; /* ours until attempt_finish */
    size_t len, cap, cap_limit;
    int too_big;
    int delivered; /* on_data got bytes */
    int stopped;   /* on_data said stop, or the deadline passed */
    int deadline;
    int tls_timeout;
};

/* Runs one transfer. Returns 0 (look at at->cc / at->status) or -1 when credentials failed. */
KP_MUST_CHECK int http_attempt(struct http *h, const struct http_request *rq, struct attempt *at,
                               struct kp_err *err);
void attempt_cleanup(struct attempt *at);
/* Moves the body and facts into rs. */
void attempt_finish(struct attempt *at, struct http_response *rs);
/* Shows a server Warning text once. */
void http_warning(struct http *h, const char *text);

#endif
