/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_objects.c - the objects of one run: labels, placement, pod security, jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/agent_args.h"
#include "controller/k8s/k8s_objects.h"

static struct k8s_objects_opts base_opts(void)
{
    struct k8s_objects_opts o = {
        .run_id = "20261130-090000-abcdef",
        .ns = "kperf-20261130-090000-abcdef",
        .image = "registry.example/kperf-agent:0.1.0",
        .port = 5201,
        .job_deadline_s = 300,
        .job_ttl_s = 600,
    };
    return o;
}

/* str_at(obj, "metadata", "name", NULL): the string at that key path, or NULL */
static const char *str_at(const json_t *root, ...)
{
    va_list ap;
    const char *k;
    const json_t *v = root;

    va_start(ap, root);
    while ((k = va_arg(ap, const char *)) != NULL)
        v = json_object_get(v, k);
    va_end(ap);
    return json_string_value(v);
}

static void assert_run_labels(const json_t *obj)
{
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, K8S_LABEL_MANAGED_BY)), "kperf");
    assert_string_equal(json_string_value(json_object_get(labels, K8S_LABEL_RUN_ID)),
                        "20261130-090000-abcdef");
}

static void test_k8s_objects_every_server_object_is_labelled_and_namespaced(void **state)
{
    struct k8s_objects_opts o = base_opts();
    struct k8s_server_set set = {
        .node_a = "node-1", .pod_network = 1, .host_network = 1, .services = 1};
    json_t *objs = k8s_objects_server_objects(&o, &set, 1, "secret-token");
    size_t i;
    json_t *obj;
    (void)state;

    /* ns, sa, secret, 2 daemonsets (pod, host), 1 service */
    assert_int_equal(json_array_size(objs), 6);
    json_array_foreach(objs, i, obj)
    {
        const char *kind = json_string_value(json_object_get(obj, "kind"));
        assert_non_null(kind);
        assert_run_labels(obj);
        if (strcmp(kind, "Namespace") != 0)
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace")),
                o.ns);
    }
    assert_string_equal(json_string_value(json_object_get(json_array_get(objs, 0), "kind")),
                        "Namespace");
    json_decref(objs);
}

/* --host-namespace: the host-network agents and what their pods refer to go there; the rest,
 * the pod-network agents included, stays in ns */
static void test_k8s_objects_host_namespace_splits_the_agents(void **state)
{
    struct k8s_objects_opts o = base_opts();
    struct k8s_server_set set = {
        .node_a = "node-1", .pod_network = 1, .host_network = 1, .services = 1};
    json_t *objs, *obj, *j;
    size_t i, in_host = 0;
    const char *const args[] = {"client", NULL};
    struct k8s_client_job job = {.name = "kperf-c-x",
                                 .node_hostname = "node-1",
                                 .scenario = "host-to-host",
                                 .placement = "other-node",
                                 .host_network = 1,
                                 .args = args};
    (void)state;

    o.host_ns = "kperf-host";
    o.pull_secret = "regcred";
    assert_string_equal(k8s_objects_ns(&o, 1), "kperf-host");
    assert_string_equal(k8s_objects_ns(&o, 0), o.ns);
    objs = k8s_objects_server_objects(&o, &set, 0, "secret-token");
    /* sa, secret in ns; sa, secret in kperf-host; 2 daemonsets; 1 service */
    assert_int_equal(json_array_size(objs), 7);
    json_array_foreach(objs, i, obj)
    {
        const char *kind = json_string_value(json_object_get(obj, "kind"));
        const char *ns = str_at(obj, "metadata", "namespace", NULL);
        const char *name = str_at(obj, "metadata", "name", NULL);
        if (strcmp(ns, "kperf-host") == 0) {
            in_host++;
            assert_true(strcmp(kind, "ServiceAccount") == 0 || strcmp(kind, "Secret") == 0 ||
                        strcmp(name, "kperf-server-host-a") == 0);
        } else {
            assert_string_equal(ns, o.ns);
            assert_true(strcmp(name, "kperf-server-host-a") != 0);
        }
    }
    assert_int_equal(in_host, 3);
    json_decref(objs);
    j = k8s_objects_client_job(&o, &job);
    assert_string_equal(str_at(j, "metadata", "namespace", NULL), "kperf-host");
    json_decref(j);
    job.host_network = 0;
    j = k8s_objects_client_job(&o, &job);
    assert_string_equal(str_at(j, "metadata", "namespace", NULL), o.ns);
    json_decref(j);
    o.host_ns = "Not_A_Label";
    struct kp_err err;
    assert_int_equal(k8s_objects_check(&o, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "--host-namespace 'Not_A_Label'"));
}

static void test_k8s_objects_namespace_psa_follows_host_network(void **state)
{
    struct k8s_objects_opts o = base_opts();
    json_t *ns;
    (void)state;

    ns = k8s_objects_namespace(&o);
    assert_string_equal(str_at(ns, "metadata", "labels", K8S_PSA_ENFORCE, NULL), "restricted");
    json_decref(ns);
    o.host_network_used = 1;
    ns = k8s_objects_namespace(&o);
    assert_string_equal(str_at(ns, "metadata", "labels", K8S_PSA_ENFORCE, NULL), "privileged");
    json_decref(ns);
}

static void assert_restricted_pod(const json_t *pspec)
{
    json_t *c = json_array_get(json_object_get(pspec, "containers"), 0);
    json_t *sc = json_object_get(c, "securityContext");

    assert_true(json_is_true(json_object_get(sc, "runAsNonRoot")));
    assert_true(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")));
    assert_true(json_is_true(json_object_get(sc, "readOnlyRootFilesystem")));
    assert_int_equal(json_integer_value(json_object_get(sc, "runAsUser")), K8S_AGENT_UID);
    assert_int_equal(json_integer_value(json_object_get(sc, "runAsGroup")), K8S_AGENT_UID);
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(sc, "capabilities"), "drop"), 0)),
                        "ALL");
    assert_null(json_object_get(json_object_get(sc, "capabilities"), "add"));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(sc, "seccompProfile"), "type")),
        "RuntimeDefault");
    assert_true(json_is_false(json_object_get(pspec, "automountServiceAccountToken")));
    assert_non_null(json_object_get(json_object_get(c, "resources"), "requests"));
    assert_null(json_object_get(json_object_get(json_object_get(c, "resources"), "limits"), "cpu"));
}

static const char *affinity_node(const json_t *pspec)
{
    json_t *term = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(pspec, "affinity"), "nodeAffinity"),
                            "requiredDuringSchedulingIgnoredDuringExecution"),
            "nodeSelectorTerms"),
        0);
    json_t *expr = json_array_get(json_object_get(term, "matchExpressions"), 0);

    assert_string_equal(json_string_value(json_object_get(expr, "key")), K8S_HOSTNAME_LABEL);
    assert_string_equal(json_string_value(json_object_get(expr, "operator")), "In");
    assert_int_equal(json_array_size(json_object_get(expr, "values")), 1);
    return json_string_value(json_array_get(json_object_get(expr, "values"), 0));
}

static void test_k8s_objects_server_daemonset_pinned_and_restricted(void **state)
{
    struct k8s_objects_opts o = base_opts();
    json_t *ds = k8s_objects_server_daemonset(&o, "pod", "b", "node-2");
    json_t *tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    json_t *pspec = json_object_get(tmpl, "spec");
    json_t *sel =
        json_object_get(json_object_get(json_object_get(ds, "spec"), "selector"), "matchLabels");
    json_t *tlabels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
    const char *k;
    json_t *v;
    (void)state;

    assert_string_equal(str_at(ds, "metadata", "name", NULL), "kperf-server-pod-b");
    assert_string_equal(affinity_node(pspec), "node-2");
    assert_restricted_pod(pspec);
    assert_null(json_object_get(pspec, "hostNetwork"));
    /* the selector must match the template (the API server refuses otherwise) */
    json_object_foreach(sel, k, v)
    {
        assert_string_equal(json_string_value(json_object_get(tlabels, k)), json_string_value(v));
    }
    assert_string_equal(json_string_value(json_object_get(sel, K8S_LABEL_SLOT)), "b");
    json_t *c = json_array_get(json_object_get(pspec, "containers"), 0);
    assert_int_equal(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(c, "readinessProbe"), "tcpSocket"), "port")),
        5201);
    /* a pod-network server holds no host port */
    assert_null(json_object_get(json_array_get(json_object_get(c, "ports"), 0), "hostPort"));
    json_decref(ds);

    o.server_max_idle_ms = 270000;
    ds = k8s_objects_server_daemonset(&o, "host", "a", "node-1");
    pspec = json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    assert_true(json_is_true(json_object_get(pspec, "hostNetwork")));
    assert_restricted_pod(pspec); /* host network adds nothing else */
    assert_string_equal(affinity_node(pspec), "node-1");
    /* its port is declared as a hostPort, TCP and UDP: the scheduler sees a collision */
    c = json_array_get(json_object_get(pspec, "containers"), 0);
    for (size_t i = 0; i < 2; i++) {
        json_t *p = json_array_get(json_object_get(c, "ports"), i);
        assert_int_equal(json_integer_value(json_object_get(p, "hostPort")), 5201);
        assert_int_equal(json_integer_value(json_object_get(p, "containerPort")), 5201);
        assert_string_equal(json_string_value(json_object_get(p, "protocol")), i ? "UDP" : "TCP");
    }
    /* and it stops listening by itself when its run is gone */
    {
        json_t *args = json_object_get(c, "args");
        size_t n = json_array_size(args);
        assert_string_equal(json_string_value(json_array_get(args, n - 2)), "--max-idle");
        assert_string_equal(json_string_value(json_array_get(args, n - 1)), "270000ms");
    }
    json_decref(ds);
}

static void test_k8s_objects_service_selects_one_slot(void **state)
{
    struct k8s_objects_opts o = base_opts();
    json_t *svc = k8s_objects_service(&o, "b");
    json_t *sel = json_object_get(json_object_get(svc, "spec"), "selector");
    (void)state;

    assert_string_equal(str_at(svc, "metadata", "name", NULL), "kperf-svc-b");
    assert_string_equal(str_at(svc, "spec", "type", NULL), "ClusterIP");
    assert_string_equal(json_string_value(json_object_get(sel, K8S_LABEL_SLOT)), "b");
    assert_string_equal(json_string_value(json_object_get(sel, K8S_LABEL_NETWORK)), "pod");
    assert_string_equal(json_string_value(json_object_get(sel, K8S_LABEL_RUN_ID)), o.run_id);
    assert_int_equal(json_array_size(json_object_get(json_object_get(svc, "spec"), "ports")), 2);
    json_decref(svc);
}

static void test_k8s_objects_client_job_runs_once_with_deadline(void **state)
{
    struct k8s_objects_opts o = base_opts();
    json_t *tol = json_pack("[{s:s, s:s}]", "key", "dedicated", "operator", "Exists");
    const char *const args[] = {"client", "--server", "198.18.250.5:5201", "--json", NULL};
    struct k8s_client_job job = {.name = "kperf-c-x",
                                 .node_hostname = "node-1",
                                 .scenario = "host-to-host",
                                 .placement = "other-node",
                                 .host_network = 1,
                                 .args = args};
    json_t *j;
    json_t *pspec;
    (void)state;

    o.pull_policy = "Always";
    o.pull_secret = "regcred";
    o.tolerations = tol;
    j = k8s_objects_client_job(&o, &job);
    pspec = json_object_get(json_object_get(json_object_get(j, "spec"), "template"), "spec");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(j, "spec"), "backoffLimit")), 0);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(j, "spec"), "activeDeadlineSeconds")),
        300);
    assert_string_equal(json_string_value(json_object_get(pspec, "restartPolicy")), "Never");
    assert_true(json_is_true(json_object_get(pspec, "hostNetwork")));
    assert_string_equal(affinity_node(pspec), "node-1");
    assert_restricted_pod(pspec);
    json_t *c = json_array_get(json_object_get(pspec, "containers"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "imagePullPolicy")), "Always");
    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "args"), 2)),
                        "198.18.250.5:5201");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(pspec, "imagePullSecrets"), 0), "name")),
                        "regcred");
    assert_true(json_equal(json_object_get(pspec, "tolerations"), tol));
    assert_run_labels(j);
    json_decref(j);
    json_decref(tol);
}

/* The container args of one object's only container, as strings, compared with want. */
static void assert_container_args(const json_t *obj, const char *const *want)
{
    const json_t *c = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "spec"),
            "containers"),
        0);
    const json_t *args = json_object_get(c, "args");
    size_t i = 0;

    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "command"), 0)),
                        "kperf-agent");
    for (; want[i]; i++)
        assert_string_equal(json_string_value(json_array_get(args, i)), want[i]);
    assert_int_equal(json_array_size(args), i);
}

/* The one Secret key a pod's token volume projects. */
static void assert_projected_key(const json_t *obj, const char *key)
{
    const json_t *vol = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "spec"),
            "volumes"),
        0);
    const json_t *items = json_object_get(json_object_get(vol, "secret"), "items");

    assert_int_equal(json_array_size(items), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "key")), key);
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "path")), key);
}

/* The Job runs agent_args_client's argv with no binary (the image's command is kperf-agent)
 * and the token at K8S_TOKEN_FILE; the DaemonSet agent_args_server's with no --bind. */
static void test_k8s_objects_agent_args_end_to_end(void **state)
{
    struct k8s_objects_opts o = base_opts();
    enum test_kind tests[] = {TEST_TCP_RR, TEST_TCP_STREAM};
    struct plan_group g = {.scenario = SCENARIO_POD_TO_EXTERNAL, .reverse = true};
    struct run_spec spec = {
        .group = &g, .tests = tests, .n_tests = 2, .samples = 3, .duration_ms = 2000, .streams = 8};
    struct agent_args_opts ao = {
        .host = "fd00::5", .port = 6000, .token_file = K8S_EXTERNAL_TOKEN_FILE};
    char **argv = agent_args_client(&spec, &ao);
    struct k8s_client_job job = {.name = "kperf-c-x",
                                 .node_hostname = "node-1",
                                 .scenario = "pod-to-external",
                                 .placement = "external",
                                 .args = (const char *const *)argv,
                                 .token_key = K8S_EXTERNAL_TOKEN_KEY};
    const char *const want_client[] = {"client",
                                       "--server",
                                       "[fd00::5]:6000",
                                       "--tests",
                                       "TCP_RR,TCP_STREAM",
                                       "--duration",
                                       "2000ms",
                                       "--samples",
                                       "3",
                                       "--streams",
                                       "8",
                                       "--reverse",
                                       "--token-file",
                                       K8S_EXTERNAL_TOKEN_FILE,
                                       "--server-facts",
                                       "--json",
                                       NULL};
    const char *const want_server[] = {"server",       "--port",       "5201",
                                       "--token-file", K8S_TOKEN_FILE, NULL};
    json_t *j = k8s_objects_client_job(&o, &job);
    (void)state;

    agent_args_free(argv);
    assert_container_args(j, want_client);
    assert_projected_key(j, K8S_EXTERNAL_TOKEN_KEY); /* that pod sees the external token only */
    json_decref(j);
    j = k8s_objects_server_daemonset(&o, "pod", "a", "node-1");
    assert_container_args(j, want_server);
    assert_projected_key(j, "token");
    json_decref(j);
    /* the Secret holds the external token only when there is one, beside the run's */
    j = k8s_objects_secret(&o, "run-token");
    assert_null(json_object_get(json_object_get(j, "stringData"), K8S_EXTERNAL_TOKEN_KEY));
    json_decref(j);
    o.external_token = "ext-token";
    j = k8s_objects_secret(&o, "run-token");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "stringData"),
                                                          K8S_EXTERNAL_TOKEN_KEY)),
                        "ext-token");
    json_decref(j);
    j = k8s_objects_secret(&o, NULL); /* kperf manifests: placeholders, never the token */
    assert_null(strstr(json_string_value(json_object_get(json_object_get(j, "stringData"),
                                                         K8S_EXTERNAL_TOKEN_KEY)),
                       "ext-token"));
    json_decref(j);
    o.external_token = NULL;

    /* without the token (the external server): the same argv minus --token-file FILE */
    ao.token_file = NULL;
    argv = agent_args_client(&spec, &ao);
    size_t n = 0;
    for (; argv[n]; n++)
        assert_string_not_equal(argv[n], "--token-file");
    assert_int_equal(n, sizeof(want_client) / sizeof(want_client[0]) - 3);
    agent_args_free(argv);
}

static void assert_dns_label(const char *a)
{
    assert_true(strlen(a) <= 63);
    for (const char *p = a; *p; p++)
        assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
    assert_true(a[0] != '-' && a[strlen(a) - 1] != '-');
}

static void test_k8s_objects_job_names_are_dns_labels_and_distinct(void **state)
{
    char *a = k8s_objects_job_name("pod-to-pod",
                                   "node:ip-10-0-1-5.eu-west-1.compute.internal."
                                   "very-long-suffix-that-goes-on",
                                   1, 4294967295u);
    char *b = k8s_objects_job_name("pod-to-pod",
                                   "node:ip-10-0-1-5.eu-west-1.compute.internal."
                                   "very-long-suffix-that-goes-on-2",
                                   1, 4294967295u);
    (void)state;

    assert_dns_label(a);
    assert_dns_label(b);
    assert_string_not_equal(a, b);
    /* the direction stays visible even when the placement is cut */
    assert_non_null(strstr(a, "-r-"));
    free(a);
    free(b);
}

/* issue 14: forward and reverse, and every repeat of one group, are distinct Jobs */
static void test_k8s_objects_job_names_unique_per_step(void **state)
{
    char *fwd = k8s_objects_job_name("pod-to-external", "external", 0, 0);
    char *rev = k8s_objects_job_name("pod-to-external", "external", 1, 1);
    char *rev0 = k8s_objects_job_name("pod-to-external", "external", 1, 0);
    char *again = k8s_objects_job_name("pod-to-external", "external", 0, 2);
    (void)state;

    assert_string_equal(strncmp(fwd, "kperf-c-pod-to-external-external-", 33) == 0 ? "ok" : fwd,
                        "ok");
    assert_non_null(strstr(rev, "-external-r-"));
    assert_string_not_equal(fwd, rev);
    assert_string_not_equal(fwd, rev0); /* the direction alone already differs */
    assert_string_not_equal(fwd, again);
    assert_string_equal(fwd + strlen(fwd) - 2, "-0");
    assert_string_equal(again + strlen(again) - 2, "-2");
    assert_dns_label(fwd);
    assert_dns_label(rev);
    free(fwd);
    free(rev);
    free(rev0);
    free(again);
}

static void test_k8s_objects_check_rejects_bad_input(void **state)
{
    struct k8s_objects_opts o = base_opts();
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_objects_check(&o, &err), 0);
    o.port = 70000;
    assert_int_equal(k8s_objects_check(&o, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "70000"));
    o = base_opts();
    o.ns = "Bad_NS";
    assert_int_equal(k8s_objects_check(&o, &err), -1);
    o = base_opts();
    o.pull_policy = "Sometimes";
    assert_int_equal(k8s_objects_check(&o, &err), -1);
}

static void test_k8s_objects_run_id_is_a_label(void **state)
{
    char id[K8S_RUN_ID_MAX + 1];
    struct k8s_objects_opts o = base_opts();
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_objects_run_id(id, sizeof(id), &err), 0);
    o.run_id = id;
    assert_int_equal(k8s_objects_check(&o, &err), 0);
    char *sel = k8s_objects_selector(id);
    assert_non_null(strstr(sel, "kperf.io/run-id="));
    free(sel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_objects_every_server_object_is_labelled_and_namespaced),
        cmocka_unit_test(test_k8s_objects_host_namespace_splits_the_agents),
        cmocka_unit_test(test_k8s_objects_namespace_psa_follows_host_network),
        cmocka_unit_test(test_k8s_objects_server_daemonset_pinned_and_restricted),
        cmocka_unit_test(test_k8s_objects_service_selects_one_slot),
        cmocka_unit_test(test_k8s_objects_client_job_runs_once_with_deadline),
        cmocka_unit_test(test_k8s_objects_agent_args_end_to_end),
        cmocka_unit_test(test_k8s_objects_job_names_are_dns_labels_and_distinct),
        cmocka_unit_test(test_k8s_objects_job_names_unique_per_step),
        cmocka_unit_test(test_k8s_objects_check_rejects_bad_input),
        cmocka_unit_test(test_k8s_objects_run_id_is_a_label),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
