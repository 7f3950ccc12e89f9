/* SPDX-License-Identifier: Apache-2.0 */
/* kube_int.h - what kube.c, kube_ops.c, kube_watch.c and kube_logs.c share (not public). */
#ifndef KPERF_KUBE_KUBE_INT_H
#define KPERF_KUBE_KUBE_INT_H

#include "base/kp_err.h"
#include "controller/kube/http.h"
#include "controller/kube/kube.h"
#include "controller/kube/status.h"

struct kube_client {
    struct kube_config *cfg; /* ours */
    struct http *http;       /* ours */
    struct kube_last last;
    int last_maybe_done; /* the last call's request may have been applied before a retry */
};

/* One JSON request. All pointers borrowed. */
struct kube_call {
    const char *method;
    const char *path; /* with query */
    json_t *body;     /* or NULL */
    const char *content_type;
    enum http_retry retry;
    const char *what; /* "list pods in namespace \"x\"" for messages */
};

/* Sends call; 2xx -> 0 with *out (may be NULL) = parsed body (new reference, NULL if empty);
 * otherwise -1 with the decoded Status in err and c->last filled. */
KP_MUST_CHECK int kube_call(struct kube_client *c, const struct kube_call *call, json_t **out,
                            struct kp_err *err);

/* `verb plural[.group] [name] in namespace "ns"` (caller frees). */
char *kube_what(const char *verb, const struct kube_resource *res, const char *ns,
                const char *name);

/* Appends "k=v" (v percent-encoded; nothing when v is NULL) to *q (ours, may start NULL). */
void kube_query_add(char **q, const char *k, const char *v);

#endif
