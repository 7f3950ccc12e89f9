/* SPDX-License-Identifier: Apache-2.0 */
/* kube.h - a small Kubernetes API client (libcurl + jansson) that behaves like client-go where
 * it matters: kubeconfig/in-cluster auth, exec plugins, retries with Retry-After, a token-bucket
 * rate limit, Status errors turned into one actionable line, list pagination, watch with
 * relist, pod logs, SelfSubjectAccessReview. Knows nothing of kperf.
 *
 * Threading: one client is used from one thread at a time. kube_client_abort() is the only
 * call that may come from another thread or a signal handler.
 *
 * Errors: every call returns 0 on success and -1 on failure with one line in err, e.g.
 *   create pods in namespace "x": forbidden (403): User "u" cannot create resource "pods" ...
 *   Grant it with manifests/rbac.yaml.
 * kube_client_last() tells the HTTP status and Status reason of the last failed call so that
 * callers can branch (404 NotFound, 409 AlreadyExists, ...). */
#ifndef KPERF_KUBE_KUBE_H
#define KPERF_KUBE_KUBE_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"

struct kube_client; /* opaque */

/* A resource type: the API group/version, plural name and scope. */
struct kube_resource {
    const char *group_version; /* "v1" (core) or "apps/v1", "batch/v1", ... */
    const char *plural;        /* "pods", "daemonsets", ... */
    int namespaced;            /* 1: ns required for one object, "" / NULL = all namespaces */
};

extern const struct kube_resource KUBE_RES_NAMESPACES;
extern const struct kube_resource KUBE_RES_NODES;
extern const struct kube_resource KUBE_RES_PODS;
extern const struct kube_resource KUBE_RES_SERVICES;
extern const struct kube_resource KUBE_RES_SECRETS;
extern const struct kube_resource KUBE_RES_EVENTS;
extern const struct kube_resource KUBE_RES_CONFIGMAPS;
extern const struct kube_resource KUBE_RES_DAEMONSETS; /* apps/v1 */
extern const struct kube_resource KUBE_RES_JOBS;       /* batch/v1 */

/* Test hooks: a clock and a sleep. Production leaves them NULL (CLOCK_MONOTONIC, nanosleep
 * that wakes on abort). Unit tests inject a fake clock so nothing really sleeps. */
struct kube_clock {
    uint64_t (*now_ms)(void *arg);            /* monotonic milliseconds */
    void (*sleep_ms)(void *arg, uint64_t ms); /* may return early */
    void *arg;
};

/* Called once per distinct server Warning header text (default: kp_log WARN "server warning:").
 * text is borrowed for the call. */
typedef void kube_warning_fn(void *arg, const char *text);

struct kube_client_opts {
    /* config: used when kube_client_new loads it; ignored by kube_client_new_from_config */
    const char *kubeconfig; /* --kubeconfig, or NULL */
    const char *context;    /* --context, or NULL */
    const char *ns;         /* --namespace, or NULL */

    double qps;      /* token bucket rate; 0 = 5 (client-go), < 0 = unlimited */
    int burst;       /* bucket size; 0 = 10 */
    int max_retries; /* retries per request; 0 = 10, < 0 = none */
    /* 0 = no bound but max_retries. Else retries stop once the server has failed every
     * attempt (5xx, 429, transport) for this long, counted across calls from the first failure
     * of the run: a storm of 503s ends one call after give_up_ms, and the calls after it at
     * their first failure, until an answer that is not a failure. */
    uint64_t give_up_ms;
    long timeout_ms;                   /* whole-request limit for non-streaming calls; 0 = 60000 */
    size_t max_body;                   /* response body cap for one JSON document; 0 = 64 MiB */
    const char *user_agent;            /* NULL = "kperf-kube/<version>" */
    volatile sig_atomic_t *abort_flag; /* borrowed: non-zero aborts in-flight calls */
    kube_warning_fn *on_warning;       /* NULL = kp_log */
    void *warning_arg;
    const struct kube_clock *clock; /* borrowed; NULL = real time */
};

/* Loads the kubeconfig (see config.h) and makes a client. Returns 0 with *out (caller frees
 * with kube_client_free) or -1 with the reason. The verbosity is kp_log's level: DEBUG logs
 * one line per request (method, path, status, duration), TRACE adds headers without secrets. */
KP_MUST_CHECK int kube_client_new(const struct kube_client_opts *opts, struct kube_client **out,
                                  struct kp_err *err);

/* Same, from a config already loaded. Takes ownership of cfg (freed even on failure). */
KP_MUST_CHECK int kube_client_new_from_config(struct kube_config *cfg,
                                              const struct kube_client_opts *opts,
                                              struct kube_client **out, struct kp_err *err);

void kube_client_free(struct kube_client *c); /* NULL is a no-op */

/* The resolved config (borrowed, lives as long as the client): ns, server, context_name... */
const struct kube_config *kube_client_config(const struct kube_client *c);

/* Makes in-flight and later calls fail promptly with "interrupted" until kube_client_reset_abort.
 * Async-signal-safe. */
void kube_client_abort(struct kube_client *c);
void kube_client_reset_abort(struct kube_client *c);

/* Outcome of the last call that talked to the server. */
struct kube_last {
    int http_status;   /* 0 when no HTTP response (connect error, abort, ...) */
    char reason[64];   /* Status.reason ("NotFound", "AlreadyExists", "Expired", ...) or "" */
    unsigned retries;  /* retries spent by the last request */
    unsigned requests; /* HTTP requests sent by the last call (pages, retries, relists) */
};
const struct kube_last *kube_client_last(const struct kube_client *c); /* borrowed */

/* HTTP requests this client has sent since kube_client_new: every one, retries, list pages,
 * watch streams and relists, logs and credential re-tries after a 401 included. */
uint64_t kube_request_count(const struct kube_client *c);

/* Builds the path of a collection (name NULL) or object, with an optional subresource
 * ("log", "status"). ns NULL/"" on a namespaced resource = all namespaces. Caller frees. */
char *kube_path(const struct kube_resource *res, const char *ns, const char *name,
                const char *subresource);

/* ---- operations ---- */

struct kube_version {
    int major; /* digits only: "30+" -> 30 */
    int minor;
    char git_version[64]; /* "v1.30.4-eks-1234567" */
    char platform[64];    /* "linux/amd64" */
};
/* GET /version. */
KP_MUST_CHECK int kube_version(struct kube_client *c, struct kube_version *v, struct kp_err *err);

/* GET one object. *out: new reference (caller json_decref). 404 -> -1 with
 * kube_client_last()->http_status == 404. */
KP_MUST_CHECK int kube_get(struct kube_client *c, const struct kube_resource *res, const char *ns,
                           const char *name, json_t **out, struct kp_err *err);

struct kube_list_opts {
    const char *label_selector; /* raw selector text, percent-encoded by us; NULL = none */
    const char *field_selector;
    unsigned page_size;           /* limit= per request; 0 = 500 */
    const char *resource_version; /* NULL = most recent (consistent read) */
};

/* Per-item callback. item is borrowed (valid during the call; json_incref to keep it).
 * Return 0 to continue, 1 to stop early (kube_list then returns 0), -1 to fail (set err). */
typedef int kube_item_fn(void *arg, json_t *item, struct kp_err *err);

/* Lists a collection page by page (one request per page, `continue` tokens followed), calling
 * fn for each item without holding more than one page. On success, if rv_out is not NULL,
 * *rv_out = the list's metadata.resourceVersion (caller frees). */
KP_MUST_CHECK int kube_list(struct kube_client *c, const struct kube_resource *res, const char *ns,
                            const struct kube_list_opts *opts, kube_item_fn *fn, void *arg,
                            char **rv_out, struct kp_err *err);

/* Convenience: every item in one JSON array. *items: new reference (caller json_decref). */
KP_MUST_CHECK int kube_list_all(struct kube_client *c, const struct kube_resource *res,
                                const char *ns, const struct kube_list_opts *opts, json_t **items,
                                struct kp_err *err);

struct kube_write_opts {
    int dry_run;               /* dryRun=All */
    const char *field_manager; /* NULL = "kperf" */
};

/* POSTs obj (borrowed) with fieldValidation=Strict. *out (may be NULL): the stored object, new
 * reference. If a retry of a create that may have reached the server gets 409 AlreadyExists,
 * the existing object is fetched and accepted when its labels contain all of obj's labels
 * (it is ours; obj needs at least one label, e.g. a run id); otherwise 409 is an error. Warning
 * headers are shown once each. */
KP_MUST_CHECK int kube_create(struct kube_client *c, const struct kube_resource *res,
                              const char *ns, json_t *obj, const struct kube_write_opts *opts,
                              json_t **out, struct kp_err *err);

/* PATCH with application/merge-patch+json. patch borrowed; *out as kube_create. */
KP_MUST_CHECK int kube_patch(struct kube_client *c, const struct kube_resource *res, const char *ns,
                             const char *name, json_t *patch, const struct kube_write_opts *opts,
                             json_t **out, struct kp_err *err);

enum kube_propagation {
    KUBE_PROPAGATION_DEFAULT = 0, /* server's default (Jobs orphan their pods!) */
    KUBE_PROPAGATION_BACKGROUND,
    KUBE_PROPAGATION_FOREGROUND,
    KUBE_PROPAGATION_ORPHAN,
};

struct kube_delete_opts {
    enum kube_propagation propagation;
    long grace_period_s; /* < 0 = server default; note 0 is "now" */
    int dry_run;
    int missing_ok; /* 404 counts as success */
};

/* DELETEs one object. opts NULL = background propagation, default grace, missing not OK.
 * *gone (may be NULL): 1 when the object no longer exists (Status Success or 404), 0 when
 * deletion is pending (the object came back with a deletionTimestamp). */
KP_MUST_CHECK int kube_delete(struct kube_client *c, const struct kube_resource *res,
                              const char *ns, const char *name, const struct kube_delete_opts *opts,
                              int *gone, struct kp_err *err);

/* DELETE on a collection with selectors (deletecollection). *count (may be NULL): number of
 * objects in the returned list, or -1 when the server answered with a bare Status. */
KP_MUST_CHECK int kube_delete_collection(struct kube_client *c, const struct kube_resource *res,
                                         const char *ns, const struct kube_list_opts *sel,
                                         const struct kube_delete_opts *opts, long *count,
                                         struct kp_err *err);

enum kube_event_type {
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED,
    KUBE_EVENT_BOOKMARK, /* only with opts.bookmarks; object has just metadata.resourceVersion */
    KUBE_EVENT_SYNCED,   /* the initial list (or a relist) has been delivered; object NULL */
};

/* Watch callback: object borrowed for the call. Return 0 to go on, 1 to stop (kube_watch
 * returns 0), -1 to fail (set err). */
typedef int kube_watch_fn(void *arg, enum kube_event_type type, json_t *object, struct kp_err *err);

struct kube_watch_opts {
    const char *label_selector;
    const char *field_selector;
    /* Start point. NULL: list first and deliver every existing object as ADDED, then SYNCED,
     * then watch from the list's resourceVersion. "N": only changes after N. */
    const char *resource_version;
    int bookmarks;         /* allowWatchBookmarks=true and deliver BOOKMARK events */
    long stream_timeout_s; /* timeoutSeconds per stream; 0 = random 300-600 like client-go */
    uint64_t deadline_ms;  /* give up after this long overall; 0 = never */
    /* optional (borrowed): another thread sets it non-zero to end the watch as at its
     * deadline (kube_watch returns 1), seen within about a second; the caller resets it */
    volatile sig_atomic_t *wake;
    /* optional: on return, where a later watch can start (resource_version) to see only what
     * changed after this one: the last resourceVersion it saw (the list's, then each event's).
     * The old *resume_rv is freed when replaced; the caller frees the last. */
    char **resume_rv;
};

/* Watches a collection until fn returns 1 (returns 0), the deadline passes (returns 1), or an
 * error/abort (returns -1). Streams that end or drop are re-opened from the last
 * resourceVersion seen; 410 Gone (HTTP or ERROR event) leads to a relist that delivers what
 * changed meanwhile: ADDED/MODIFIED for new versions and DELETED (object with just
 * metadata.name/namespace/resourceVersion) for objects that vanished. Holds one event at a
 * time plus a name->resourceVersion index of the objects seen. */
KP_MUST_CHECK int kube_watch(struct kube_client *c, const struct kube_resource *res, const char *ns,
                             const struct kube_watch_opts *opts, kube_watch_fn *fn, void *arg,
                             struct kp_err *err);

struct kube_log_opts {
    const char *container; /* NULL = the only container */
    long tail_lines;       /* < 0 or 0 = all */
    long limit_bytes;      /* 0 = none (still capped by max_body) */
    int previous;          /* the last terminated instance */
    int timestamps;
    int follow;           /* stream until the container exits; only with kube_pod_logs_stream */
    uint64_t deadline_ms; /* follow: stop (returning 0) after this long; 0 = never */
};

/* Reads a pod's log into *out (NUL-terminated, caller frees), *len (may be NULL) its length. */
KP_MUST_CHECK int kube_pod_logs(struct kube_client *c, const char *ns, const char *pod,
                                const struct kube_log_opts *opts, char **out, size_t *len,
                                struct kp_err *err);

/* Streams a pod's log: fn gets raw chunks (borrowed); return 0 to go on, 1 to stop. */
typedef int kube_data_fn(void *arg, const char *data, size_t len);
KP_MUST_CHECK int kube_pod_logs_stream(struct kube_client *c, const char *ns, const char *pod,
                                       const struct kube_log_opts *opts, kube_data_fn *fn,
                                       void *arg, struct kp_err *err);

/* "kubectl auth can-i": SelfSubjectAccessReview. group "" = core; ns NULL = cluster-wide.
 * *allowed = 0/1; *reason (may be NULL): the server's reason or "" (caller frees). */
struct kube_access {
    const char *verb;
    const char *group;
    const char *resource;
    const char *subresource; /* or NULL */
    const char *ns;
    const char *name; /* or NULL */
};
KP_MUST_CHECK int kube_ssar(struct kube_client *c, const struct kube_access *q, int *allowed,
                            char **reason, struct kp_err *err);

/* Raw request for anything else: method "GET"/"POST"/"PUT"/"PATCH"/"DELETE", path with query
 * (already encoded), body borrowed (NULL = none; PATCH sends merge-patch). *out: parsed JSON
 * response, new reference, or NULL for an empty body. Retries as for the verb. */
KP_MUST_CHECK int kube_request(struct kube_client *c, const char *method, const char *path,
                               json_t *body, json_t **out, struct kp_err *err);

#endif
