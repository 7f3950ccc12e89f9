/* SPDX-License-Identifier: Apache-2.0 */
/* pushgw.h - pushes a report's OpenMetrics text (render_openmetrics.h) to a Prometheus
 * Pushgateway: one HTTP PUT to URL/metrics/job/kperf/instance@base64/<cluster> (the
 * Pushgateway's encoding for any label value, '/' included), which replaces what
 * the previous run of that cluster pushed. Owns only the HTTP exchange (libcurl); the
 * exposition is render_openmetrics's. */
#ifndef KPERF_REPORT_PUSHGW_H
#define KPERF_REPORT_PUSHGW_H

#include "base/kp_err.h"

struct report;

#define PUSHGW_TIMEOUT_S 30L /* whole request; the connect phase gets 10 s of it */

/* Checks a --push-gateway value: http:// or https:// followed by a host, no query or
 * fragment. Returns 0 or -1 with err. */
KP_MUST_CHECK int pushgw_url_check(const char *url, struct kp_err *err);

/* PUTs the report's metrics to the gateway at base_url (a trailing '/' is ignored). A
 * transport error or an HTTP status outside 2xx is an error naming the URL, the status and
 * the start of the gateway's answer. Returns 0 or -1 with err (one line). */
KP_MUST_CHECK int pushgw_push(const struct report *rep, const char *base_url, struct kp_err *err);

#endif
