/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_manifests.c - 'kperf manifests': prints the objects a `kperf run` with the same flags
 * would create, as YAML (default) or one JSON document per line, so a person can review them
 * or apply them by hand. Server addresses that only exist at run time are placeholders.
 * 'kperf manifests --from-yaml FILE' converts a YAML file to JSON lines (used to validate
 * manifests/ against the API schemas). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/run_flags.h"
#include "controller/k8s/k8s_baseline.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_history.h"
#include "controller/k8s/k8s_lease.h"
#include "controller/k8s/k8s_yaml.h"
#include "controller/kube/kube.h"
#include "controller/report/report.h"

struct manifests_flags {
    bool json;                 /* --format json */
    const char *from_yaml;     /* --from-yaml FILE; borrowed from argv */
    const char *baseline;      /* --baseline-configmap FILE.json; borrowed from argv */
    bool history_claim;        /* --history-claim: the history volume's claim, checked */
    const char *storage_class; /* --storage-class NAME */
};

static const char usage_text[] =
    "Usage: kperf manifests [--format yaml|json] [kperf run flags]\n"
    "       kperf manifests --from-yaml FILE\n"
    "       kperf manifests --baseline-configmap FILE.json [-n NAMESPACE]\n"
    "       kperf manifests --history-claim [--storage-class NAME] [-n NAMESPACE]\n\n"
    "Prints the Namespace, Lease, ServiceAccount, Secret, server DaemonSets, Service\n"
    "and client Jobs that 'kperf run' with the same flags would create (--nodes A,B\n"
    "names the nodes by their kubernetes.io/hostname label; addresses that exist\n"
    "only at run time appear as SERVER-POD-IP, SERVER-NODE-IP and SERVICE-CLUSTER-IP,\n"
    "the Lease's holder as kperf@HOST/PID; with --all-nodes, the sweep's server\n"
    "DaemonSets list their nodes as EVERY-ELIGIBLE-NODE-BUT-A and one client Job\n"
    "stands for the per-node ones). The Secret's token is a placeholder.\n"
    "--from-yaml converts a YAML file to one JSON document per line.\n"
    "--baseline-configmap prints ConfigMap kperf-baseline (namespace -n, default\n"
    "kperf) for the nightly job, or refuses a report over the 1 MiB ConfigMap limit.\n"
    "--history-claim asks the cluster whether a claim for the history volume can\n"
    "bind (the StorageClass named, or a default one, exists) and prints it, or\n"
    "fails saying what is missing (docs/history-volume.md).\n"
    "Every 'kperf run' flag is accepted; see 'kperf run --help'.\n";

static int set_format(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    struct manifests_flags *mf = ctx;

    (void)f;
    if (strcmp(v, "json") != 0 && strcmp(v, "yaml") != 0)
        return kp_err_set(err, "--format: '%s' is not yaml or json", v);
    mf->json = strcmp(v, "json") == 0;
    return 0;
}

/* Our own flags; every `kperf run` flag comes on top (run_flags_parse_as). */
static const struct flag own_flags[] = {
    {.name = "format",
     .arg = "FORMAT",
     .help = "yaml (default) or json (one document per line)",
     .fn = set_format},
    {.name = "from-yaml",
     .arg = "FILE",
     .help = "convert FILE from YAML to JSON lines instead",
     .kind = FLAG_STRING,
     .offset = offsetof(struct manifests_flags, from_yaml)},
    {.name = "baseline-configmap",
     .arg = "FILE.json",
     .help = "print the nightly job's baseline ConfigMap holding\n"
             "this report (refused over the 1 MiB limit)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct manifests_flags, baseline)},
    {.name = "history-claim",
     .help = "print the history volume's claim (kperf-history) once the\n"
             "cluster says it can bind (contacts the cluster)",
     .kind = FLAG_BOOL,
     .offset = offsetof(struct manifests_flags, history_claim)},
    {.name = "storage-class",
     .arg = "NAME",
     .help = "with --history-claim: the StorageClass (default: the\ncluster's default one)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct manifests_flags, storage_class)},
    {.name = "help", .short_name = 'h', .help = "show this help", .kind = FLAG_HELP},
};

const struct flag *cmd_manifests_flags(size_t *n)
{
    *n = sizeof(own_flags) / sizeof(own_flags[0]);
    return own_flags;
}

static const char *const untitled[] = {NULL};

static int print_docs(const json_t *docs, int as_json, struct kp_err *err)
{
    size_t i;
    json_t *doc;

    if (!as_json)
        return k8s_yaml_emit(stdout, docs, err);
    json_array_foreach(docs, i, doc)
    {
        if (json_dumpf(doc, stdout, JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF)
            return kp_err_set(err, "cannot write to stdout: %s", strerror(errno));
    }
    return 0;
}

/* --baseline-configmap: the report, validated and compacted, in ConfigMap kperf-baseline. */
static int baseline_configmap(const char *path, const char *ns, int as_json, struct kp_err *err)
{
    struct report *rep = report_load(path, err);
    json_t *doc, *cm, *docs;
    char *text;
    double pct = 0;
    int rc;

    if (!rep)
        return -1;
    doc = report_to_json(rep);
    report_free(rep);
    text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!text)
        return kp_err_set(err, "%s: cannot encode the report", path);
    cm = k8s_baseline_configmap(K8S_BASELINE_NAME, ns ? ns : "kperf", text, &pct, err);
    free(text);
    if (!cm)
        return kp_err_prefix(err, "%s", path);
    if (pct >= 90.0)
        fprintf(stderr, "kperf: warning: %s uses %.0f%% of the 1 MiB ConfigMap limit\n", path, pct);
    docs = json_pack("[o]", cm);
    rc = print_docs(docs, as_json, err);
    json_decref(docs);
    return rc;
}

/* --history-claim: the claim, once the cluster says it can bind. */
static int history_claim(const struct run_options *ro, const char *storage_class, int as_json,
                         struct kp_err *err)
{
    struct kube_client_opts ko = {
        .kubeconfig = ro->kubeconfig, .context = ro->context, .ns = ro->namespace_name};
    struct kube_client *kc = NULL;
    json_t *pvc, *docs;
    int rc;

    if (kube_client_new(&ko, &kc, err) != 0)
        return -1;
    pvc = k8s_history_claim(kc, ro->namespace_name ? ro->namespace_name : "kperf", storage_class,
                            err);
    kube_client_free(kc);
    if (!pvc)
        return -1;
    docs = json_pack("[o]", pvc);
    rc = print_docs(docs, as_json, err);
    json_decref(docs);
    return rc;
}

static int convert_yaml(const char *path, struct kp_err *err)
{
    json_t *docs = NULL;
    int rc;

    if (k8s_yaml_parse_file(path, &docs, err) != 0)
        return -1;
    rc = print_docs(docs, 1, err);
    json_decref(docs);
    return rc;
}

/* The address a client of group g would use; placeholders for what exists only at run time. */
static char *server_for(const struct run_options *ro, const struct plan_group *g)
{
    struct k8s_group_target t;

    k8s_objects_group_target(g, &t);
    if (!t.server_network)
        return kp_xstrdup(ro->external_host ? ro->external_host : "EXTERNAL-SERVER");
    if (t.via_service) /* the run reads kperf-svc-a's ClusterIP and passes the address */
        return kp_xstrdup("SERVICE-CLUSTER-IP");
    return kp_xstrdup(t.server_network[0] == 'h' ? "SERVER-NODE-IP" : "SERVER-POD-IP");
}

/* The run's Lease (k8s_lease.h), where the run creates it: right after the namespace. Its
 * holder is a placeholder here, and its times (acquired, renewed) are left out: the run's. */
static void add_lease(json_t *docs, const struct k8s_deploy *d, const struct run_options *ro)
{
    struct timespec now;
    json_t *lease;

    clock_gettime(CLOCK_REALTIME, &now);
    lease = k8s_lease_object(&d->obj, "kperf@HOST/PID", (int)(ro->lease_ms / 1000), &now);
    json_object_del(json_object_get(lease, "spec"), "acquireTime");
    json_object_del(json_object_get(lease, "spec"), "renewTime");
    json_array_insert_new(docs, d->create_namespace ? 1 : 0, lease);
}

static json_t *client_jobs(const struct k8s_deploy *d, const struct run_options *ro,
                           const struct plan *plan)
{
    json_t *jobs = json_array();
    unsigned step = 0;

    for (size_t i = 0; i < plan_group_count(plan); i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        struct k8s_group_target t;
        struct run_spec spec;
        const char *host;
        char *server;

        if (g->skipped || (g->scenario == SCENARIO_POD_TO_EXTERNAL && !ro->external_host))
            continue;
        if (g->scenario == SCENARIO_POD_TO_DNS)
            continue; /* one Job per node and the cluster DNS's address: known at run time */
        run_spec_init(&spec, ro, g, g->tests, g->n_tests, ro->samples);
        k8s_objects_group_target(g, &t);
        host = t.client_on_a ? d->node_a_host
                             : (g->node ? g->node : (ro->node_b ? ro->node_b : "node-b"));
        server = server_for(ro, g);
        json_array_append_new(
            jobs, k8s_client_make_job(d, &spec, step++, host, server,
                                      t.server_network ? ro->port : ro->external_port, NULL));
        free(server);
    }
    return jobs;
}

int cmd_manifests(int argc, char **argv)
{
    struct manifests_flags mf = {0};
    struct flags_cmd cmd = {
        .name = "kperf manifests",
        .usage = usage_text,
        .groups = untitled,
        .n_groups = 1,
        .help_width = 21,
        .tables = {{own_flags, sizeof(own_flags) / sizeof(own_flags[0]), &mf}},
    };
    struct run_options ro;
    struct plan_opts po;
    struct plan *plan = NULL;
    struct k8s_deploy d;
    struct kp_err err;
    json_t *docs = NULL;
    json_t *jobs = NULL;
    int rc = 2;
    int prc;

    kp_err_clear(&err);
    memset(&d, 0, sizeof(d));
    run_options_init(&ro);
    prc = run_flags_parse_as(&cmd, &ro, argc, argv, &err);
    if (prc == 1) {
        flags_help(stdout, &cmd);
        rc = 0;
        goto out;
    }
    if (prc != 0)
        goto out;
    rc = 1;
    if (mf.from_yaml) {
        if (convert_yaml(mf.from_yaml, &err) == 0)
            rc = 0;
        goto out;
    }
    if (mf.baseline) {
        if (baseline_configmap(mf.baseline, ro.namespace_name, mf.json, &err) == 0)
            rc = 0;
        goto out;
    }
    if (mf.storage_class && !mf.history_claim) {
        kp_err_set(&err, "--storage-class applies to --history-claim only");
        rc = 2;
        goto out;
    }
    if (mf.history_claim) {
        if (history_claim(&ro, mf.storage_class, mf.json, &err) == 0)
            rc = 0;
        goto out;
    }
    plan_opts_from_run_options(&ro, &po);
    plan = plan_new(&po);
    if (k8s_deploy_init(&d, &ro, plan, NULL, ro.node_a, &err) != 0)
        goto out;
    docs = k8s_deploy_server_objects(&d, NULL);
    add_lease(docs, &d, &ro);
    if (ro.all_nodes) { /* the sweep's servers: on every eligible node but A, known at run time */
        json_t *hosts = json_pack("[s]", "EVERY-ELIGIBLE-NODE-BUT-A");
        if (d.set.pod_network)
            json_array_append_new(docs, k8s_deploy_sweep_daemonset(&d, "pod", hosts));
        if (d.set.host_network)
            json_array_append_new(docs, k8s_deploy_sweep_daemonset(&d, "host", hosts));
        json_decref(hosts);
    }
    jobs = client_jobs(&d, &ro, plan);
    json_array_extend(docs, jobs);
    if (print_docs(docs, mf.json, &err) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    json_decref(jobs);
    json_decref(docs);
    k8s_deploy_cleanup(&d);
    plan_free(plan);
    run_options_cleanup(&ro);
    return rc;
}
