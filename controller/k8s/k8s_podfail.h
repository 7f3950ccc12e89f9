/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_podfail.h - why a pod cannot start, as one cause a person and a script can act on (issue
 * 29, issue 28): the pod sandbox's network (the kubelet's FailedCreatePodSandBox and
 * NetworkNotReady events, split into IP exhaustion, CNI not ready, ADD timeout and other plugin
 * errors), the scheduler (Unschedulable: which resource), image pulls (permanent: manifest
 * unknown, not found, unauthorized, no matching architecture; transient: refused, timeouts,
 * 5xx, toomanyrequests, which the kubelet retries). A pure function over the pod, its events and
 * its node (JSON as the API server gives them), unit-tested with fixtures in
 * test/unit/data/k8s/. Knows nothing of waits, threads or the report. */
#ifndef KPERF_K8S_K8S_PODFAIL_H
#define KPERF_K8S_K8S_PODFAIL_H

#include <jansson.h>

enum k8s_podfail_cause {
    K8S_PODFAIL_NONE = 0,
    K8S_PODFAIL_IP_EXHAUSTION,   /* "ip-exhaustion": the IPAM has no address left */
    K8S_PODFAIL_CNI_NOT_READY,   /* "cni-not-ready": NetworkReady=false, no conflist */
    K8S_PODFAIL_CNI_TIMEOUT,     /* "cni-add-timeout": the ADD did not return in time */
    K8S_PODFAIL_CNI_PLUGIN,      /* "cni-plugin-error": the plugin's ADD failed otherwise */
    K8S_PODFAIL_UNSCHEDULABLE,   /* "unschedulable": the scheduler's reason in detail */
    K8S_PODFAIL_IMAGE_PULL,      /* "image-pull": a pull that will not succeed */
    K8S_PODFAIL_IMAGE_PULL_RETRY /* "image-pull-transient": the kubelet retries it */
};

struct k8s_podfail {
    enum k8s_podfail_cause cause;
    int fatal;      /* 1: it will not fix itself within the run (fail the pod's rows now) */
    char *message;  /* one line naming pod, node, image (pulls), cause and the text */
    char *detail;   /* the CNI's, registry's or scheduler's own words (for reports) */
    char *node;     /* the pod's node (or the node it is pinned to), NULL when unknown */
    double since_s; /* Unix seconds of the first event or condition saying so (0: unknown) */
};

/* The short name of a cause ("ip-exhaustion", ...; "" for NONE). Static. */
const char *k8s_podfail_cause_name(enum k8s_podfail_cause c);

/* The cause of a sandbox or pull error text (the kubelet's event message), NONE when the text
 * is neither. A pull error is IMAGE_PULL (permanent) when it says so (manifest unknown, not
 * found, unauthorized, 401/403, denied, no matching manifest) and IMAGE_PULL_RETRY otherwise:
 * an unknown pull error is retried by the kubelet, so kperf keeps waiting (within --timeout). */
enum k8s_podfail_cause k8s_podfail_text_cause(const char *reason, const char *message);

/* Classifies pod (borrowed) with its events (array of core/v1 Event about it, oldest first, or
 * NULL) and its node (core/v1 Node, or NULL): fills *out (caller releases with
 * k8s_podfail_cleanup) and returns out->cause. NONE when nothing is wrong yet (out's strings
 * NULL). Sandbox failures are fatal at their first event (kperf reports them within seconds
 * instead of waiting for --timeout); a transient pull is not fatal. */
enum k8s_podfail_cause k8s_podfail_classify(const json_t *pod, const json_t *events,
                                            const json_t *node, struct k8s_podfail *out);

void k8s_podfail_cleanup(struct k8s_podfail *f); /* NULL is a no-op; zeroes *f */

/* Parses an API timestamp ("2026-12-03T19:10:00Z", fractions allowed) as Unix seconds; 0 when
 * it is not one. */
double k8s_podfail_time(const char *rfc3339);

/* The condition of that type in obj's (a pod's or a node's) status.conditions; NULL = none. */
const json_t *k8s_podfail_condition(const json_t *obj, const char *type);

#endif
