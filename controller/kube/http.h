/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - one HTTP exchange with the API server, the way client-go does it: libcurl with TLS
 * verification, keep-alive reuse of one handle, connect 30 s / TLS 10 s timeouts, no
 * redirects, capped bodies, a token-bucket rate limit that retries pass through, retries with
 * capped exponential backoff + jitter honouring Retry-After, one credential refresh on 401, a
 * request log without secrets and server warnings shown once. Leaves the meaning of status
 * codes and bodies to kube/status.c and kube/kube.c. */
#ifndef KPERF_KUBE_HTTP_H
#define KPERF_KUBE_HTTP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"
#include "controller/kube/kube.h"

struct http; /* opaque */

enum http_retry {
    HTTP_RETRY_IDEMPOTENT = 0, /* GET, PATCH (merge), DELETE: retry 429, 5xx, resets */
    HTTP_RETRY_CREATE,         /* POST create: same, but flags maybe_done for reconciling */
    HTTP_RETRY_UNSAFE,         /* only 429 and failures before anything was sent */
};

/* Stream sink: gets 2xx body bytes as they arrive (borrowed). Return 0 to go on, 1 to stop. */
typedef int http_data_fn(void *arg, const char *data, size_t len);

struct http_request {
    const char *method; /* "GET", ... */
    const char *path;   /* path + query, already escaped */
    const char *body;   /* borrowed or NULL */
    size_t body_len;
    const char *content_type; /* for the body; NULL = application/json */
    const char *accept;       /* NULL = application/json */
    enum http_retry retry;
    long timeout_ms;      /* 0 = client default; < 0 = none (streams) */
    uint64_t deadline_ms; /* absolute on the client clock; 0 = none (streams stop at it) */
    /* optional (borrowed): another thread sets it non-zero to end the request as at its
     * deadline (deadline_reached), seen within about a second (libcurl's progress calls) */
    volatile sig_atomic_t *wake;
    http_data_fn *on_data; /* streaming: 2xx bodies go here, not to the response */
    void *data_arg;
};

struct http_response {
    long status; /* 0 when no response */
    char *body;  /* NUL-terminated (error bodies too for streams); caller frees */
    size_t len;
    char content_type[128];
    unsigned retries;     /* retries used */
    int maybe_done;       /* an earlier attempt may have reached the server */
    int stopped;          /* on_data asked to stop, or the deadline passed */
    int deadline_reached; /* deadline_ms passed (stopped is set too) */
    uint64_t failing_ms;  /* the answer is a failure the retries gave up on: how long the
                             server had been failing (give_up_ms), else 0 */
};

struct http *http_new(const struct kube_config *cfg, const struct kube_client_opts *opts,
                      struct kp_err *err); /* cfg and opts' pointers borrowed; NULL on error */
void http_free(struct http *h);

/* Performs rq with retries. Returns 0 when an HTTP response arrived (any status; rs filled,
 * caller frees rs->body), or -1 on a transport failure, abort or body cap (err says which;
 * rs->status is the last status seen, if any). */
KP_MUST_CHECK int http_do(struct http *h, const struct http_request *rq, struct http_response *rs,
                          struct kp_err *err);

void http_abort(struct http *h); /* async-signal-safe */
void http_reset_abort(struct http *h);
int http_aborted(const struct http *h);
uint64_t http_now_ms(const struct http *h);      /* the client clock */
void http_sleep_ms(struct http *h, uint64_t ms); /* wakes early on abort */
size_t http_max_body(const struct http *h);
uint64_t http_request_count(const struct http *h); /* requests sent since http_new */

#endif
