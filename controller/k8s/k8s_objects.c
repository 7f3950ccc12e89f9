/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_objects.c - the JSON objects of one kperf run (see k8s_objects.h for the placement
 * design). Pure functions: no I/O except k8s_objects_run_id's randomness. */
#include "controller/k8s/k8s_objects.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
#include "controller/agent_args.h"
#include "controller/k8s/k8s_image.h"
#include "controller/k8s/k8s_overlay.h"

#define DNS_LABEL_MAX 63

int k8s_objects_run_id(char *buf, size_t len, struct kp_err *err)
{
    unsigned char rnd[3];
    time_t now = time(NULL);
    struct tm tm;

    if (len < K8S_RUN_ID_MAX + 1)
        return kp_err_set(err, "run id buffer too small");
    if (kp_random_bytes(rnd, sizeof(rnd)) != 0)
        return kp_err_set(err, "cannot read random bytes for the run id: %s", strerror(errno));
    gmtime_r(&now, &tm);
    snprintf(buf, len, "%04d%02d%02d-%02d%02d%02d-%02x%02x%02x", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd[0], rnd[1], rnd[2]);
    return 0;
}

static int is_dns_label(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > max || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    }
    return 1;
}

int k8s_objects_check(const struct k8s_objects_opts *opts, struct kp_err *err)
{
    struct k8s_image_ref ref;

    if (!is_dns_label(opts->run_id, K8S_RUN_ID_MAX))
        return kp_err_set(err, "run id '%s' is not a lowercase DNS label of at most %d characters",
                          opts->run_id ? opts->run_id : "", K8S_RUN_ID_MAX);
    if (!is_dns_label(opts->ns, DNS_LABEL_MAX))
        return kp_err_set(err, "namespace '%s' is not a valid DNS-1123 label",
                          opts->ns ? opts->ns : "");
    if (opts->host_ns && !is_dns_label(opts->host_ns, DNS_LABEL_MAX))
        return kp_err_set(err, "--host-namespace '%s' is not a valid DNS-1123 label",
                          opts->host_ns);
    if (k8s_image_parse(opts->image, &ref, err) != 0)
        return kp_err_prefix(err, "--image");
    k8s_image_ref_cleanup(&ref);
    if (opts->port < 1 || opts->port > 65535)
        return kp_err_set(err, "port %d is out of range 1..65535", opts->port);
    if (opts->pull_policy && strcmp(opts->pull_policy, "Always") != 0 &&
        strcmp(opts->pull_policy, "IfNotPresent") != 0 && strcmp(opts->pull_policy, "Never") != 0)
        return kp_err_set(err, "image pull policy '%s' is not Always, IfNotPresent or Never",
                          opts->pull_policy);
    if (opts->pull_secret && !is_dns_label(opts->pull_secret, 253))
        return kp_err_set(err, "image pull secret '%s' is not a valid Secret name",
                          opts->pull_secret);
    return 0;
}

json_t *k8s_objects_labels(const struct k8s_objects_opts *opts)
{
    return json_pack("{s:s, s:s, s:s}", K8S_LABEL_MANAGED_BY, K8S_MANAGED_BY, K8S_LABEL_NAME,
                     "kperf", K8S_LABEL_RUN_ID, opts->run_id);
}

char *k8s_objects_selector(const char *run_id)
{
    if (!run_id)
        return kp_xasprintf("%s=%s", K8S_LABEL_MANAGED_BY, K8S_MANAGED_BY);
    return kp_xasprintf("%s=%s,%s=%s", K8S_LABEL_MANAGED_BY, K8S_MANAGED_BY, K8S_LABEL_RUN_ID,
                        run_id);
}

/* metadata {name, namespace?, labels = run labels + extra (stolen)} */
static json_t *metadata(const struct k8s_objects_opts *opts, const char *name, int namespaced,
                        json_t *extra_labels)
{
    json_t *labels = k8s_objects_labels(opts);
    json_t *md = json_pack("{s:s}", "name", name);

    if (extra_labels) {
        json_object_update(labels, extra_labels);
        json_decref(extra_labels);
    }
    if (namespaced)
        json_object_set_new(md, "namespace", json_string(opts->ns));
    json_object_set_new(md, "labels", labels);
    return md;
}

static json_t *object(const char *api_version, const char *kind, json_t *md)
{
    return json_pack("{s:s, s:s, s:o}", "apiVersion", api_version, "kind", kind, "metadata", md);
}

const char *k8s_objects_ns(const struct k8s_objects_opts *opts, int host_network)
{
    return host_network && opts->host_ns ? opts->host_ns : opts->ns;
}

/* obj (returned) moved to the namespace of the agents of that network */
static json_t *in_agents_ns(const struct k8s_objects_opts *opts, int host_network, json_t *obj)
{
    json_object_set_new(json_object_get(obj, "metadata"), "namespace",
                        json_string(k8s_objects_ns(opts, host_network)));
    return obj;
}

/* Required node affinity to exactly one node by its kubernetes.io/hostname label. */
static json_t *node_affinity(const char *node_hostname)
{
    return json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "nodeAffinity",
                     "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                     "matchExpressions", "key", K8S_HOSTNAME_LABEL, "operator", "In", "values",
                     node_hostname);
}

/* Pod Security "restricted" container context; hostNetwork pods use the same one. */
static json_t *container_security(void)
{
    return json_pack("{s:b, s:b, s:i, s:i, s:b, s:{s:[s]}, s:{s:s}}", "runAsNonRoot", 1,
                     "allowPrivilegeEscalation", 0, "runAsUser", K8S_AGENT_UID, "runAsGroup",
                     K8S_AGENT_UID, "readOnlyRootFilesystem", 1, "capabilities", "drop", "ALL",
                     "seccompProfile", "type", "RuntimeDefault");
}

/* A NULL-terminated argv as a JSON array of strings (new reference). */
static json_t *argv_json(const char *const *argv)
{
    json_t *a = json_array();

    for (; argv && *argv; argv++)
        json_array_append_new(a, json_string(*argv));
    return a;
}

static json_t *container(const struct k8s_objects_opts *opts, const char *name, json_t *args)
{
    /* no CPU limit: CFS throttling would distort the figures */
    json_t *c = json_pack(
        "{s:s, s:s, s:[s], s:o, s:{s:{s:s, s:s}, s:{s:s}}, s:o, s:[{s:s, s:s, s:b}], s:s}", "name",
        name, "image", opts->image, "command", "kperf-agent", "args", args, "resources", "requests",
        "cpu", "100m", "memory", "64Mi", "limits", "memory", "512Mi", "securityContext",
        container_security(), "volumeMounts", "name", "token", "mountPath", K8S_TOKEN_DIR,
        "readOnly", 1, "terminationMessagePolicy", "FallbackToLogsOnError");

    if (opts->pull_policy)
        json_object_set_new(c, "imagePullPolicy", json_string(opts->pull_policy));
    return c;
}

static json_t *pod_spec(const struct k8s_objects_opts *opts, const char *node_hostname,
                        int host_network, json_t *container_obj, const char *token_key)
{
    json_t *spec = json_pack(
        "{s:s, s:b, s:b, s:o, s:[o], s:[{s:s, s:{s:s, s:i, s:[{s:s, s:s}]}}], s:{s:b, s:i, s:i, "
        "s:i, s:{s:s}}, s:i}",
        "serviceAccountName", opts->service_account ? opts->service_account : K8S_SERVICE_ACCOUNT,
        "automountServiceAccountToken", 0, "enableServiceLinks", 0, "affinity",
        node_affinity(node_hostname), "containers", container_obj, "volumes", "name", "token",
        "secret", "secretName", K8S_SECRET_NAME, "defaultMode", 0440, "items", "key",
        token_key ? token_key : "token", "path", token_key ? token_key : "token", "securityContext",
        "runAsNonRoot", 1, "runAsUser", K8S_AGENT_UID, "runAsGroup", K8S_AGENT_UID, "fsGroup",
        K8S_AGENT_UID, "seccompProfile", "type", "RuntimeDefault", "terminationGracePeriodSeconds",
        2);

    if (host_network) {
        json_object_set_new(spec, "hostNetwork", json_true());
        json_object_set_new(spec, "dnsPolicy", json_string("ClusterFirstWithHostNet"));
    }
    if (opts->tolerations && json_array_size(opts->tolerations) > 0)
        json_object_set_new(spec, "tolerations", json_deep_copy(opts->tolerations));
    if (opts->pull_secret)
        json_object_set_new(spec, "imagePullSecrets",
                            json_pack("[{s:s}]", "name", opts->pull_secret));
    return spec;
}

int k8s_objects_pod_template(const struct k8s_objects_opts *opts, json_t *tmpl,
                             const char *own_container, struct kp_err *err)
{
    json_t *md = json_object_get(tmpl, "metadata");
    json_t *spec = json_object_get(tmpl, "spec");
    json_t *labels = json_object_get(md, "labels");
    json_t *own = NULL;
    size_t i;
    json_t *c;

    if (opts->pod_labels) {
        /* kperf's own labels win: k8s_deploy_init refuses them in --pod-labels */
        json_t *merged = json_deep_copy(opts->pod_labels);
        json_object_update(merged, labels);
        json_object_set_new(md, "labels", merged);
    }
    if (opts->pod_annotations && json_object_size(opts->pod_annotations) > 0)
        json_object_set_new(md, "annotations", json_deep_copy(opts->pod_annotations));
    if (opts->priority_class)
        json_object_set_new(spec, "priorityClassName", json_string(opts->priority_class));
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "name")), own_container) == 0)
            own = c;
    }
    if (opts->agent_resources && own)
        k8s_overlay_merge(json_object_get(own, "resources"), opts->agent_resources);
    if (opts->pod_overlay)
        return k8s_overlay_apply(tmpl, opts->pod_overlay, err);
    return 0;
}

/* k8s_objects_pod_template on a builder's template: k8s_deploy_init applied the overlay to
 * each kind of template before any builder runs, so it cannot fail here */
static void customise(const struct k8s_objects_opts *opts, json_t *tmpl, const char *own)
{
    struct kp_err err;

    if (k8s_objects_pod_template(opts, tmpl, own, &err) != 0)
        kp_err_clear(&err);
}

json_t *k8s_objects_namespace(const struct k8s_objects_opts *opts)
{
    json_t *extra = json_object();

    if (opts->host_network_used) {
        /* hostNetwork violates baseline; the agents add no capabilities beyond that */
        json_object_set_new(extra, K8S_PSA_ENFORCE, json_string("privileged"));
        json_object_set_new(extra, K8S_PSA_ENFORCE "-version", json_string("latest"));
    } else {
        json_object_set_new(extra, K8S_PSA_ENFORCE, json_string("restricted"));
        json_object_set_new(extra, K8S_PSA_ENFORCE "-version", json_string("latest"));
    }
    return object("v1", "Namespace", metadata(opts, opts->ns, 0, extra));
}

json_t *k8s_objects_service_account(const struct k8s_objects_opts *opts)
{
    json_t *sa =
        object("v1", "ServiceAccount",
               metadata(opts, opts->service_account ? opts->service_account : K8S_SERVICE_ACCOUNT,
                        1, NULL));

    json_object_set_new(sa, "automountServiceAccountToken", json_false());
    return sa;
}

json_t *k8s_objects_secret(const struct k8s_objects_opts *opts, const char *token)
{
    json_t *s = object("v1", "Secret", metadata(opts, K8S_SECRET_NAME, 1, NULL));

    json_object_set_new(s, "type", json_string("Opaque"));
    json_object_set_new(s, "stringData",
                        json_pack("{s:s}", "token", token ? token : "<generated per run>"));
    if (opts->external_token)
        json_object_set_new(
            json_object_get(s, "stringData"), K8S_EXTERNAL_TOKEN_KEY,
            json_string(token ? opts->external_token : "<the --external-token-file's token>"));
    return s;
}

char *k8s_objects_daemonset_name(const char *network, const char *slot)
{
    return kp_xasprintf("kperf-server-%s-%s", network, slot);
}

char *k8s_objects_service_name(const char *slot)
{
    return kp_xasprintf("kperf-svc-%s", slot);
}

json_t *k8s_objects_server_daemonset(const struct k8s_objects_opts *opts, const char *network,
                                     const char *slot, const char *node_hostname)
{
    int host = strcmp(network, "host") == 0;
    char *name = k8s_objects_daemonset_name(network, slot);
    struct agent_args_opts ao = {.port = opts->port,
                                 .token_file = K8S_TOKEN_FILE,
                                 .udp_rate_bps = opts->udp_rate_bps,
                                 .max_idle_ms = opts->server_max_idle_ms};
    char **argv = agent_args_server(&ao);
    json_t *sel = json_pack("{s:s, s:s, s:s, s:s}", K8S_LABEL_RUN_ID, opts->run_id, K8S_LABEL_ROLE,
                            "server", K8S_LABEL_NETWORK, network, K8S_LABEL_SLOT, slot);
    json_t *c = container(opts, K8S_OVERLAY_SERVER_CONTAINER, argv_json((const char *const *)argv));
    json_t *tmpl_md = json_pack("{s:o}", "labels", k8s_objects_labels(opts));
    json_t *ds = object("apps/v1", "DaemonSet", metadata(opts, name, 1, json_deep_copy(sel)));

    json_object_update(json_object_get(tmpl_md, "labels"), sel);
    json_object_set_new(c, "readinessProbe",
                        json_pack("{s:{s:i}, s:i, s:i, s:i}", "tcpSocket", "port", opts->port,
                                  "initialDelaySeconds", 0, "periodSeconds", 1, "failureThreshold",
                                  3));
    json_object_set_new(c, "ports",
                        json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}]", "name", "tcp",
                                  "containerPort", opts->port, "protocol", "TCP", "name", "udp",
                                  "containerPort", opts->port, "protocol", "UDP"));
    /* the host-network server holds the port on the node: declared, the scheduler keeps a
     * second run's server (or anything else wanting it) off that node instead of letting it
     * fail to bind or share the port's traffic */
    if (host) {
        json_t *p;
        size_t i;
        json_array_foreach(json_object_get(c, "ports"), i, p)
            json_object_set_new(p, "hostPort", json_integer(opts->port));
    }
    json_object_set_new(ds, "spec",
                        json_pack("{s:{s:o}, s:{s:s}, s:{s:o, s:o}}", "selector", "matchLabels",
                                  sel, "updateStrategy", "type", "OnDelete", "template", "metadata",
                                  tmpl_md, "spec", pod_spec(opts, node_hostname, host, c, NULL)));
    customise(opts, json_object_get(json_object_get(ds, "spec"), "template"),
              K8S_OVERLAY_SERVER_CONTAINER);
    agent_args_free(argv);
    free(name);
    return in_agents_ns(opts, host, ds);
}

json_t *k8s_objects_service(const struct k8s_objects_opts *opts, const char *slot)
{
    char *name = k8s_objects_service_name(slot);
    json_t *svc = object("v1", "Service", metadata(opts, name, 1, NULL));

    json_object_set_new(
        svc, "spec",
        json_pack("{s:s, s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s, s:i, s:i}, {s:s, s:s, s:i, s:i}]}",
                  "type", "ClusterIP", "selector", K8S_LABEL_RUN_ID, opts->run_id, K8S_LABEL_ROLE,
                  "server", K8S_LABEL_NETWORK, "pod", K8S_LABEL_SLOT, slot, "ports", "name", "tcp",
                  "protocol", "TCP", "port", opts->port, "targetPort", opts->port, "name", "udp",
                  "protocol", "UDP", "port", opts->port, "targetPort", opts->port));
    if (opts->n_ip_families > 0) {
        json_t *spec = json_object_get(svc, "spec");
        json_t *fams = json_array();
        for (size_t i = 0; i < opts->n_ip_families; i++)
            json_array_append_new(fams, json_string(opts->ip_families[i]));
        json_object_set_new(spec, "ipFamilies", fams);
        json_object_set_new(
            spec, "ipFamilyPolicy",
            json_string(opts->n_ip_families > 1 ? "RequireDualStack" : "SingleStack"));
    }
    free(name);
    return svc;
}

json_t *k8s_objects_client_job(const struct k8s_objects_opts *opts,
                               const struct k8s_client_job *job)
{
    json_t *args = argv_json(job->args);
    json_t *extra =
        json_pack("{s:s, s:s, s:s}", K8S_LABEL_ROLE, "client", K8S_LABEL_NETWORK,
                  job->host_network ? "host" : "pod", "kperf.io/scenario", job->scenario);
    json_t *tmpl_labels = k8s_objects_labels(opts);
    json_t *md = metadata(opts, job->name, 1, json_deep_copy(extra));
    json_t *obj = NULL;

    json_object_update(tmpl_labels, extra);
    json_object_set_new(tmpl_labels, K8S_LABEL_JOB, json_string(job->name));
    json_decref(extra);
    json_object_set_new(md, "annotations",
                        json_pack("{s:s}", "kperf.io/placement", job->placement));
    obj = object("batch/v1", "Job", md);
    json_t *pspec = pod_spec(opts, job->node_hostname, job->host_network,
                             container(opts, K8S_OVERLAY_CLIENT_CONTAINER, args), job->token_key);
    json_object_set_new(pspec, "restartPolicy", json_string("Never"));
    json_object_set_new(obj, "spec",
                        json_pack("{s:i, s:i, s:i, s:{s:{s:o}, s:o}}", "backoffLimit", 0,
                                  "activeDeadlineSeconds", opts->job_deadline_s,
                                  "ttlSecondsAfterFinished", opts->job_ttl_s, "template",
                                  "metadata", "labels", tmpl_labels, "spec", pspec));
    customise(opts, json_object_get(json_object_get(obj, "spec"), "template"),
              K8S_OVERLAY_CLIENT_CONTAINER);
    return in_agents_ns(opts, job->host_network, obj);
}

json_t *k8s_objects_server_objects(const struct k8s_objects_opts *opts,
                                   const struct k8s_server_set *set, int create_namespace,
                                   const char *token)
{
    json_t *out = json_array();

    if (create_namespace)
        json_array_append_new(out, k8s_objects_namespace(opts));
    json_array_append_new(out, k8s_objects_service_account(opts));
    json_array_append_new(out, k8s_objects_secret(opts, token));
    if (opts->pull_secret_copy)
        json_array_append_new(out, json_deep_copy(opts->pull_secret_copy));
    if (set->host_network && strcmp(k8s_objects_ns(opts, 1), opts->ns) != 0) {
        /* what the host-network agents' pods refer to, in their own namespace */
        json_array_append_new(out, in_agents_ns(opts, 1, k8s_objects_service_account(opts)));
        json_array_append_new(out, in_agents_ns(opts, 1, k8s_objects_secret(opts, token)));
        if (opts->pull_secret_copy)
            json_array_append_new(out,
                                  in_agents_ns(opts, 1, json_deep_copy(opts->pull_secret_copy)));
    }
    if (set->pod_network || set->services)
        json_array_append_new(out, k8s_objects_server_daemonset(opts, "pod", "a", set->node_a));
    if (set->host_network)
        json_array_append_new(out, k8s_objects_server_daemonset(opts, "host", "a", set->node_a));
    if (set->services)
        json_array_append_new(out, k8s_objects_service(opts, "a"));
    return out;
}

void k8s_objects_group_target(const struct plan_group *g, struct k8s_group_target *out)
{
    memset(out, 0, sizeof(*out));
    out->client_on_a = g->placement == PLACEMENT_SAME_NODE;
    switch (g->scenario) {
    case SCENARIO_HOST_TO_HOST:
        out->server_network = "host";
        out->client_host_network = 1;
        break;
    case SCENARIO_POD_TO_SERVICE:
        out->server_network = "pod";
        out->via_service = 1;
        break;
    case SCENARIO_POD_TO_EXTERNAL:
        out->client_on_a = 1; /* any node will do; A is known to be schedulable */
        break;
    case SCENARIO_POD_TO_POD:
    default:
        out->server_network = "pod";
        break;
    }
}

/* FNV-1a, 16 bits of it: a short stable suffix that keeps truncated names distinct. */
static unsigned short_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return (h ^ (h >> 16)) & 0xffffu;
}

char *k8s_objects_job_name(const char *scenario, const char *placement, int reverse, unsigned step)
{
    char *full = kp_xasprintf("%s-%s%s", scenario, placement, reverse ? "-r" : "");
    char body[64];
    size_t n = 0;

    /* "kperf-c-" (8) + body + "-r" (2) + "-" + 4 hex + "-" + step (<= 10 digits) <= 63 */
    for (const char *p = full; *p && n < K8S_JOB_BODY_MAX; p++) {
        char c = (char)tolower((unsigned char)*p);
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c)))
            c = '-';
        if (c == '-' && (n == 0 || body[n - 1] == '-'))
            continue;
        body[n++] = c;
    }
    while (n > 0 && body[n - 1] == '-')
        n--;
    body[n] = '\0';
    if (reverse && !(n >= 2 && strcmp(body + n - 2, "-r") == 0)) {
        /* the cut dropped the direction: keep it visible */
        n = n > K8S_JOB_BODY_MAX - 2 ? K8S_JOB_BODY_MAX - 2 : n;
        while (n > 0 && body[n - 1] == '-')
            n--;
        memcpy(body + n, "-r", 3);
    }
    char *name = kp_xasprintf("kperf-c-%s-%04x-%u", body, short_hash(full), step);
    free(full);
    return name;
}
