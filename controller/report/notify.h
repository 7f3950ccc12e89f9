/* SPDX-License-Identifier: Apache-2.0 */
/* notify.h - posts a JSON message (a Slack incoming webhook's {"text", "blocks"}: verdict.h
 * makes it) to a --notify URL with libcurl, retried with backoff. Owns only the HTTP exchange;
 * the caller decides that a failure is a warning, never the run's exit status. */
#ifndef KPERF_REPORT_NOTIFY_H
#define KPERF_REPORT_NOTIFY_H

#include <jansson.h>

#include "base/kp_err.h"

#define NOTIFY_ATTEMPTS  3   /* 1 s, then 2 s between attempts */
#define NOTIFY_TIMEOUT_S 15L /* each attempt; the connect phase gets 5 s of it */

/* Checks a --notify URL: http:// or https:// with a host, no spaces. The message never shows
 * the URL's path (a webhook's path is its secret). Returns 0 or -1 with err. */
KP_MUST_CHECK int notify_url_check(const char *url, struct kp_err *err);

/* POSTs msg (borrowed) as application/json to url, up to attempts times (0: NOTIFY_ATTEMPTS)
 * while the receiver gives no answer, HTTP 5xx or 429. Returns 0, or -1 with err naming the
 * receiver by scheme and host only, the last status and how many attempts were made. */
KP_MUST_CHECK int notify_post(const char *url, const json_t *msg, unsigned attempts,
                              struct kp_err *err);

#endif
