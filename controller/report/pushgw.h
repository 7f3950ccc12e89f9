/* SPDX-License-Identifier: Apache-2.0 */
/* pushgw.h - pushes a report's OpenMetrics text (render_openmetrics.h) to a Prometheus
 * Pushgateway: one HTTP PUT to URL/metrics/job/kperf/instance@base64/<cluster> (the
 * Pushgateway's encoding for any label value, '/' included), which replaces what
 * the previous run of that cluster pushed. Owns only the HTTP exchange (libcurl); the
 * exposition is render_openmetrics's. */
#ifndef KPERF_REPORT_PUSHGW_H
#define KPERF_REPORT_PUSHGW_H

#include <stddef.h>

#include "base/kp_err.h"

struct report;

#define PUSHGW_TIMEOUT_S   30L             /* whole request; the connect phase gets 10 s of it */
#define PUSHGW_JOB         "kperf"         /* the job of kperf run's and kperf report's push */
#define PUSHGW_VERDICT_JOB "kperf_verdict" /* the job of kperf compare's push */
#define PUSHGW_ATTEMPTS    3 /* kperf run and compare: 1 s, then 2 s between attempts */

struct pushgw_opts {
    const char *password; /* NULL: the URL's; borrowed */
    int run_status;       /* >= 0: kperf_run_status{cluster} = it is pushed too */
    unsigned attempts;    /* 0 or 1: one; a refusal (HTTP 4xx) is never tried again */
};
#define PUSHGW_PASSWORD_ENV "KPERF_PUSHGATEWAY_PASSWORD"

/* The gateway's password given apart from the URL (so that it is in no command line): the
 * bytes of file when file is not NULL (base/token.h's rules: one trailing newline dropped, a
 * file others can read is warned about), else $KPERF_PUSHGATEWAY_PASSWORD when set and not
 * empty, else none (*password NULL). Caller frees *password with kp_free_secret. Returns 0,
 * or -1 with err naming the file. */
KP_MUST_CHECK int pushgw_password(const char *file, char **password, struct kp_err *err);

/* Checks a --push-gateway value: http:// or https:// followed by a host, no query or
 * fragment, a URL libcurl parses. The message never shows the URL's user-info. Returns 0 or
 * -1 with err. */
KP_MUST_CHECK int pushgw_url_check(const char *url, struct kp_err *err);

/* PUTs the report's metrics to the gateway at base_url (a trailing '/' is ignored). A
 * user-info in base_url ("https://USER:PASSWORD@host") is sent as basic auth and shown
 * nowhere; password, when not NULL (from a file or the environment), replaces the URL's
 * (borrowed; the user name is then the URL's, or empty). A transport error or an HTTP status
 * outside 2xx is an error naming the URL without its user-info, the status and the start of
 * the gateway's answer. Returns 0 or -1 with err (one line). */
KP_MUST_CHECK int pushgw_push(const struct report *rep, const char *base_url, const char *password,
                              struct kp_err *err);

/* pushgw_push with options o (NULL: those of pushgw_push): the run's exit status as a gauge, and
 * up to o->attempts attempts while the gateway gives no answer, HTTP 5xx or 429. */
KP_MUST_CHECK int pushgw_push_opts(const struct report *rep, const char *base_url,
                                   const struct pushgw_opts *o, struct kp_err *err);

/* PUTs body (body_len bytes of exposition text, borrowed) to
 * base_url/metrics/job/<job>/instance@base64/<cluster>, with o's password and attempts. Returns 0
 * or -1 with err (the URL without its user-info). */
KP_MUST_CHECK int pushgw_push_text(const char *base_url, const char *job, const char *cluster,
                                   const char *body, size_t body_len, const struct pushgw_opts *o,
                                   struct kp_err *err);

#endif
