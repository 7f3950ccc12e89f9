/* SPDX-License-Identifier: Apache-2.0 */
/* exec.h - runs a client.authentication.k8s.io exec credential plugin once and parses its
 * ExecCredential. Owns what the plugin is given (its env, KUBERNETES_EXEC_INFO, stdout cap,
 * timeout) and what its outcome means; the child process itself is base/subproc's, caching and
 * when to re-run belong to kube/auth.c. */
#ifndef KPERF_KUBE_EXEC_H
#define KPERF_KUBE_EXEC_H

#include <signal.h>
#include <stddef.h>
#include <time.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"

#define EXEC_MAX_OUTPUT (1u << 20) /* plugin stdout cap */
#define EXEC_TIMEOUT_MS 120000     /* a plugin that hangs this long is killed */

/* One credential. All secrets are owned and wiped by exec_cred_cleanup. */
struct exec_cred {
    char *token; /* bearer token, or NULL */
    char *cert;  /* PEM client certificate, or NULL (then key is NULL too) */
    size_t cert_len;
    char *key; /* PEM private key */
    size_t key_len;
    time_t expiry; /* UTC seconds; 0 = none given */
};

/* Runs cfg->exec (cfg borrowed). The plugin is killed when either abort flag (each may be
 * NULL) becomes non-zero. Returns 0 with *out filled (caller calls exec_cred_cleanup), or -1 with a
 * message naming the plugin and what to do (the installHint when the command is missing). */
KP_MUST_CHECK int exec_run(const struct kube_config *cfg, volatile sig_atomic_t *abort_a,
                           volatile sig_atomic_t *abort_b, struct exec_cred *out,
                           struct kp_err *err);

/* Parses a plugin's stdout; api_version is the one we asked for. Used by exec_run and tests. */
KP_MUST_CHECK int exec_parse(const char *out, size_t len, const char *api_version,
                             struct exec_cred *cred, struct kp_err *err);

void exec_cred_cleanup(struct exec_cred *c);

#endif
