/* SPDX-License-Identifier: Apache-2.0 */
/* status.h - turns a failed API response (a Kubernetes Status body, or plain text / HTML from
 * APF or a proxy) into one line a person can act on. Knows HTTP codes and Status reasons; leaves
 * the request to kube/http.c. */
#ifndef KPERF_KUBE_STATUS_H
#define KPERF_KUBE_STATUS_H

#include <stddef.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"

/* Writes "<what>: <kind of failure> (<code>[ <Reason>]): <server message>. <what to do>" into
 * err and returns -1. what (e.g. `create pods in namespace "x"`) and body are borrowed; cfg
 * (may be NULL) names the user and context for 401s. reason (64 bytes) gets Status.reason or
 * "". retries: how many were spent (mentioned for 429/5xx). */
int status_error(long http_status, const char *content_type, const char *body, size_t len,
                 const char *what, const struct kube_config *cfg, unsigned retries, char reason[64],
                 struct kp_err *err);

#endif
