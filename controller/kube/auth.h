/* SPDX-License-Identifier: Apache-2.0 */
/* auth.h - the credentials a request carries: static token, tokenFile (re-read when it
 * changes, as projected service-account tokens rotate), exec plugin output (cached until its
 * expirationTimestamp, refreshed once on 401), client certificates. Leaves HTTP to kube/http.c. */
#ifndef KPERF_KUBE_AUTH_H
#define KPERF_KUBE_AUTH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"

struct auth; /* opaque */

/* What one request should present. All pointers borrowed until the next auth_* call. */
struct auth_creds {
    const char *token;    /* bearer token or NULL */
    const char *cert_pem; /* client certificate blob or NULL (then use cert_file) */
    size_t cert_len;
    const char *key_pem;
    size_t key_len;
    const char *cert_file; /* from the kubeconfig, or NULL */
    const char *key_file;
    unsigned cert_generation; /* changes when an exec plugin rotates the certificate */
};

/* cfg is borrowed and must outlive the auth. The abort flags (may be NULL) are borrowed too;
 * either one stops a running exec plugin. */
struct auth *auth_new(const struct kube_config *cfg, volatile sig_atomic_t *abort_a,
                      volatile sig_atomic_t *abort_b);
void auth_free(struct auth *a); /* wipes secrets; NULL is a no-op */

/* Fills *out for the next request, running the exec plugin or re-reading the token file when
 * needed. now = time(NULL) normally (a parameter so tests can move time). Returns 0 or -1. */
KP_MUST_CHECK int auth_get(struct auth *a, time_t now, struct auth_creds *out, struct kp_err *err);

/* After a 401: drops cached credentials that can be refreshed. Returns 1 when retrying the
 * request makes sense (exec plugin or token file), 0 when nothing can change. */
int auth_invalidate(struct auth *a);

/* Removes Go's strings.TrimSpace white space (ASCII and Unicode) from both ends of buf[0..len)
 * in place, as client-go does to a token file; returns the new length (buf NUL-terminated,
 * freed bytes wiped). */
size_t auth_trim_space(char *buf, size_t len);

#endif
