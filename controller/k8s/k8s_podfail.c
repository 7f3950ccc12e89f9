/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_podfail.c - see k8s_podfail.h. The texts matched are the kubelet's and the container
 * runtime's own (containerd's "failed to setup network for sandbox ...: plugin type=... failed
 * (add): TEXT"), host-local's and the VPC CNI's IPAM errors, the registry's answers. */
#include "controller/k8s/k8s_podfail.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_wait.h"

static const char *s_at(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int has_any(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strstr(s, *words))
            return 1;
    return 0;
}

const char *k8s_podfail_cause_name(enum k8s_podfail_cause c)
{
    static const char *const names[] = {
        "",
        "ip-exhaustion",
        "cni-not-ready",
        "cni-add-timeout",
        "cni-plugin-error",
        "unschedulable",
        "image-pull",
        "image-pull-transient",
    };
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "";
}

/* what a person reads for each cause */
static const char *cause_words(enum k8s_podfail_cause c)
{
    switch (c) {
    case K8S_PODFAIL_IP_EXHAUSTION:
        return "no pod network: IP addresses exhausted";
    case K8S_PODFAIL_CNI_NOT_READY:
        return "no pod network: the CNI is not ready on the node";
    case K8S_PODFAIL_CNI_TIMEOUT:
        return "no pod network: the CNI ADD timed out";
    case K8S_PODFAIL_CNI_PLUGIN:
        return "no pod network: the CNI plugin failed";
    default:
        return "";
    }
}

static const char *const ip_words[] = {
    "no IP addresses available", "failed to assign an IP address", "failed to allocate for range",
    "no available IP",           "IP address pool exhausted",      NULL};
static const char *const not_ready_words[] = {"cni plugin not initialized", "NetworkPluginNotReady",
                                              "NetworkReady=false", "no networks found in", NULL};
static const char *const timeout_words[] = {"context deadline exceeded", "DeadlineExceeded",
                                            "timed out", "timeout", NULL};
static const char *const pull_permanent[] = {"manifest unknown",
                                             "not found",
                                             "NotFound",
                                             "unauthorized",
                                             "Unauthorized",
                                             "401 ",
                                             "403 ",
                                             "forbidden",
                                             "Forbidden",
                                             "denied",
                                             "no matching manifest",
                                             "InvalidImageName",
                                             "ErrImageNeverPull",
                                             NULL};

static int is_sandbox_reason(const char *r)
{
    return strcmp(r, "FailedCreatePodSandBox") == 0 || strcmp(r, "NetworkNotReady") == 0;
}

static int is_pull_reason(const char *r, const char *msg)
{
    return strcmp(r, "ErrImagePull") == 0 || strcmp(r, "ImagePullBackOff") == 0 ||
           strcmp(r, "InvalidImageName") == 0 || strcmp(r, "ErrImageNeverPull") == 0 ||
           (strcmp(r, "Failed") == 0 && strstr(msg, "Failed to pull image"));
}

enum k8s_podfail_cause k8s_podfail_text_cause(const char *reason, const char *message)
{
    const char *r = or_empty(reason), *m = or_empty(message);
    const char *add = strstr(m, "failed (add): ");

    if (is_pull_reason(r, m)) {
        if (strcmp(r, "InvalidImageName") == 0 || strcmp(r, "ErrImageNeverPull") == 0 ||
            has_any(m, pull_permanent))
            return K8S_PODFAIL_IMAGE_PULL;
        return K8S_PODFAIL_IMAGE_PULL_RETRY;
    }
    if (!is_sandbox_reason(r) && !strstr(m, "failed to setup network for sandbox"))
        return K8S_PODFAIL_NONE;
    if (has_any(m, ip_words))
        return K8S_PODFAIL_IP_EXHAUSTION;
    if (has_any(m, not_ready_words))
        return K8S_PODFAIL_CNI_NOT_READY;
    /* the plugin answered with its own text: a timeout it reports (Cilium's "failed to create
     * cilium agent client after 30 seconds timeout") is its error; only the runtime cutting
     * the ADD short ("failed (add): context deadline exceeded", or no plugin text) is ours */
    if (add ? strncmp(add + 14, "context deadline exceeded", 25) == 0 : has_any(m, timeout_words))
        return K8S_PODFAIL_CNI_TIMEOUT;
    return K8S_PODFAIL_CNI_PLUGIN;
}

double k8s_podfail_time(const char *s)
{
    struct tm tm;
    const char *end;
    double frac = 0;

    if (!s)
        return 0;
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return 0;
    if (*end == '.')
        frac = strtod(end, NULL);
    return (double)timegm(&tm) + frac;
}

static double event_time(const json_t *e)
{
    double t = k8s_podfail_time(s_at(e, "eventTime"));

    return t > 0 ? t : k8s_podfail_time(s_at(e, "firstTimestamp"));
}

const json_t *k8s_podfail_condition(const json_t *obj, const char *type)
{
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        if (strcmp(or_empty(s_at(c, "type")), type) == 0)
            return c;
    }
    return NULL;
}

static int cond_is(const json_t *obj, const char *type, const char *status)
{
    const json_t *c = k8s_podfail_condition(obj, type);
    return c && strcmp(or_empty(s_at(c, "status")), status) == 0;
}

/* the CNI's own words: from `plugin type=` on when the runtime says it, else past the gRPC
 * wrapping ("rpc error: code = Unknown desc = "), else the whole message */
static const char *cni_text(const char *m)
{
    const char *p = strstr(m, "plugin type=");
    const char *d = strstr(m, "desc = ");

    return p ? p : d ? d + 7 : m;
}

static void set_out(struct k8s_podfail *out, enum k8s_podfail_cause c, int fatal, char *message,
                    const char *detail, const char *node, double since)
{
    out->cause = c;
    out->fatal = fatal;
    out->message = message;
    out->detail = kp_xstrdup(or_empty(detail));
    out->node = node ? kp_xstrdup(node) : NULL;
    out->since_s = since;
}

/* Unschedulable: "pod P for node N is unschedulable: <the scheduler's message>" (fatal when
 * the pod is pinned to N: no other node can take it); detail "Insufficient cpu" and the like */
static int classify_unschedulable(const json_t *pod, const char *name, const json_t *nodeobj,
                                  struct k8s_podfail *out)
{
    static const char *const res[] = {"Insufficient cpu", "Insufficient memory",
                                      "Insufficient ephemeral-storage", "Too many pods", NULL};
    const json_t *c = k8s_podfail_condition(pod, "PodScheduled"), *ready;
    const char *msg, *node = k8s_wait_pinned_node(pod);
    char detail[256] = "";

    if (!c || strcmp(or_empty(s_at(c, "status")), "False") != 0 ||
        strcmp(or_empty(s_at(c, "reason")), "Unschedulable") != 0)
        return 0;
    msg = or_empty(s_at(c, "message"));
    ready = k8s_podfail_condition(nodeobj, "Ready");
    if (node && ready && strstr(or_empty(s_at(ready, "message")), "NetworkReady=false")) {
        /* the node lifecycle controller's not-ready taint keeps the pod off a node whose CNI
         * is not ready: the CNI is the cause, the scheduler only the messenger */
        set_out(out, K8S_PODFAIL_CNI_NOT_READY, 1,
                kp_xasprintf("pod %s for node %s: %s (%s): %s (the scheduler: %s)", name, node,
                             cause_words(K8S_PODFAIL_CNI_NOT_READY),
                             k8s_podfail_cause_name(K8S_PODFAIL_CNI_NOT_READY),
                             s_at(ready, "message"), msg),
                s_at(ready, "message"), node, k8s_podfail_time(s_at(ready, "lastTransitionTime")));
        return 1;
    }
    for (const char *const *r = res; *r; r++) {
        size_t len = strlen(detail);
        if (strstr(msg, *r))
            snprintf(detail + len, sizeof(detail) - len, "%s%s", len ? ", " : "", *r);
    }
    set_out(out, K8S_PODFAIL_UNSCHEDULABLE, node != NULL,
            node ? kp_xasprintf("pod %s for node %s is unschedulable: %s", name, node, msg)
                 : kp_xasprintf("pod %s on node (not scheduled): Unschedulable: %s", name, msg),
            *detail ? detail : msg, node, k8s_podfail_time(s_at(c, "lastTransitionTime")));
    return 1;
}

/* The pod has no network yet: a sandbox event since it was created, or its node reporting
 * NetworkReady=false. Fatal at the first sign. */
static int classify_sandbox(const json_t *pod, const char *name, const char *node,
                            const json_t *events, const json_t *nodeobj, struct k8s_podfail *out)
{
    const json_t *last = NULL, *e, *ready = k8s_podfail_condition(nodeobj, "Ready");
    double first = 0;
    size_t i;
    enum k8s_podfail_cause c;
    const char *text;

    if (json_is_true(json_object_get(json_object_get(pod, "spec"), "hostNetwork")) ||
        cond_is(pod, "PodReadyToStartContainers", "True") || k8s_wait_pod_stage(pod) >= 2)
        return 0;
    json_array_foreach(events, i, e)
    {
        if (!is_sandbox_reason(or_empty(s_at(e, "reason"))))
            continue;
        if (!last)
            first = event_time(e);
        last = e;
    }
    if (last) {
        text = or_empty(s_at(last, "message"));
        c = k8s_podfail_text_cause(s_at(last, "reason"), text);
        if (!node)
            node = s_at(json_object_get(last, "source"), "host");
    } else if (nodeobj && ready && strstr(or_empty(s_at(ready, "message")), "NetworkReady=false")) {
        text = s_at(ready, "message");
        c = K8S_PODFAIL_CNI_NOT_READY;
        first = k8s_podfail_time(s_at(ready, "lastTransitionTime"));
    } else {
        return 0;
    }
    set_out(out, c, 1,
            kp_xasprintf("pod %s on node %s: %s (%s): %s", name, node ? node : "(unknown)",
                         cause_words(c), k8s_podfail_cause_name(c), cni_text(text)),
            cni_text(text), node, first);
    return 1;
}

/* An image that does not pull: the registry's words from the ErrImagePull state or, once the
 * state says only "Back-off pulling image", from the kubelet's last "Failed to pull image"
 * event. */
static int classify_pull(const json_t *pod, const char *name, const char *node,
                         const json_t *events, struct k8s_podfail *out)
{
    const json_t *cs, *w = NULL, *e, *wcs = NULL;
    const char *text = NULL, *r;
    double first = 0;
    size_t i;
    enum k8s_podfail_cause c;

    json_array_foreach(json_object_get(json_object_get(pod, "status"), "containerStatuses"), i, cs)
    {
        const json_t *ww = json_object_get(json_object_get(cs, "state"), "waiting");
        if (ww && is_pull_reason(or_empty(s_at(ww, "reason")), "")) {
            w = ww;
            wcs = cs;
            break;
        }
    }
    if (!w)
        return 0;
    r = s_at(w, "reason");
    if (strcmp(r, "ImagePullBackOff") != 0)
        text = s_at(w, "message");
    json_array_foreach(events, i, e)
    {
        const char *m = or_empty(s_at(e, "message"));
        if (strcmp(or_empty(s_at(e, "reason")), "Failed") != 0 ||
            !strstr(m, "Failed to pull image"))
            continue;
        if (first <= 0)
            first = event_time(e);
        if (strcmp(r, "ImagePullBackOff") == 0)
            text = m;
    }
    c = text ? k8s_podfail_text_cause(r, text) : K8S_PODFAIL_IMAGE_PULL_RETRY;
    if (strcmp(r, "InvalidImageName") == 0 || strcmp(r, "ErrImageNeverPull") == 0)
        c = K8S_PODFAIL_IMAGE_PULL;
    if (!text)
        text = or_empty(s_at(w, "message"));
    set_out(out, c, c == K8S_PODFAIL_IMAGE_PULL,
            c == K8S_PODFAIL_IMAGE_PULL
                ? kp_xasprintf("pod %s on node %s: %s for image %s (%s): %s. Check --image and "
                               "--image-pull-secret, or mirror the image (images/README.md)",
                               name, node ? node : "(not scheduled)", r,
                               or_empty(s_at(wcs, "image")), k8s_podfail_cause_name(c), text)
                : kp_xasprintf("pod %s on node %s: %s for image %s (%s, the kubelet retries): %s",
                               name, node ? node : "(not scheduled)", r,
                               or_empty(s_at(wcs, "image")), k8s_podfail_cause_name(c), text),
            text, node, first);
    return 1;
}

enum k8s_podfail_cause k8s_podfail_classify(const json_t *pod, const json_t *events,
                                            const json_t *node, struct k8s_podfail *out)
{
    const char *name = or_empty(s_at(json_object_get(pod, "metadata"), "name"));
    const char *on = s_at(json_object_get(pod, "spec"), "nodeName");

    memset(out, 0, sizeof(*out));
    if (classify_unschedulable(pod, name, node, out) || classify_pull(pod, name, on, events, out) ||
        classify_sandbox(pod, name, on, events, node, out))
        return out->cause;
    return K8S_PODFAIL_NONE;
}

void k8s_podfail_cleanup(struct k8s_podfail *f)
{
    if (!f)
        return;
    free(f->message);
    free(f->detail);
    free(f->node);
    memset(f, 0, sizeof(*f));
}
