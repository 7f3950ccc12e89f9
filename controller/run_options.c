/* SPDX-License-Identifier: Apache-2.0 */
/* run_options.c - see run_options.h. The flags that fill the struct are parsed in
 * cmd/kperf/run_flags.c; the checks that combine values are here. */
#include "controller/run_options.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/testkind.h"
#include "controller/backend.h"
#include "controller/plan.h"

/* set by CMake on this file only (KPERF_AGENT_IMAGE_REPO, KPERF_AGENT_IMAGE_DIGEST cache
 * variables), so a release build changes one object file */
#ifndef KPERF_AGENT_IMAGE_REPO
#define KPERF_AGENT_IMAGE_REPO "ghcr.io/kperf/kperf-agent"
#endif
#ifndef KPERF_AGENT_IMAGE_DIGEST
#define KPERF_AGENT_IMAGE_DIGEST ""
#endif

const char *run_options_default_image(void)
{
    static const char digest[] = KPERF_AGENT_IMAGE_DIGEST;

    if (digest[0])
        return KPERF_AGENT_IMAGE_REPO ":" KPERF_VERSION "@" KPERF_AGENT_IMAGE_DIGEST;
    return KPERF_AGENT_IMAGE_REPO ":" KPERF_VERSION;
}

void run_options_init(struct run_options *o)
{
    memset(o, 0, sizeof(*o));
    o->scenarios = 1u << SCENARIO_POD_TO_POD;
    o->placements = PLACEMENT_BOTH_MASK;
    o->tests = TEST_DEFAULT_MASK;
    o->duration_ms = 10000;
    /* the per-second series lets a one-sample `kperf compare` see the in-run spread */
    o->interval_ms = 1000;
    o->samples = 1;
    o->samples_max = 1;
    o->streams = 4;
    o->timeout_ms = 120000;
    o->lease_ms = 30000;
    o->parallel = 4;
    o->confirm_outliers = 8;
    o->pod_churn = -1; /* not given: none on Kubernetes, LOCAL_READY_DEFAULT_PODS with --local */
    o->output = RUN_OUTPUT_TABLE;
    o->mtu = 1500;
    o->port = TESTKIND_DEFAULT_PORT;
    o->external_port = TESTKIND_DEFAULT_PORT;
}

static void labels_free(struct run_label *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].key);
        free(l[i].value);
    }
    free(l);
}

void run_options_cleanup(struct run_options *o)
{
    for (size_t i = 0; i < o->n_profile_rows; i++)
        free(o->profile_rows[i]);
    free(o->profile_rows);
    free(o->output_dir);
    free(o->history_dir);
    free(o->push_gateway);
    free(o->push_gateway_password_file);
    free(o->termination_message_path);
    kp_free_secret(o->push_gateway_password);
    free(o->cluster_name);
    free(o->kubeconfig);
    free(o->context);
    free(o->namespace_name);
    free(o->host_namespace_name);
    free(o->image);
    free(o->image_pull_secret);
    free(o->image_pull_policy);
    free(o->arch);
    for (size_t i = 0; i < o->n_node_selector; i++) {
        free(o->node_selector[i].key);
        free(o->node_selector[i].value);
    }
    free(o->node_selector);
    for (size_t i = 0; i < o->n_tolerations; i++) {
        free(o->tolerations[i].key);
        free(o->tolerations[i].value);
        free(o->tolerations[i].effect);
    }
    free(o->tolerations);
    free(o->node_a);
    free(o->node_b);
    free(o->nodes_from);
    free(o->external_host);
    free(o->external_name);
    free(o->external_token_file);
    kp_free_secret(o->external_token);
    for (size_t i = 0; i < o->n_local_faults; i++)
        free(o->local_faults[i]);
    free(o->local_faults);
    free(o->cni_conf);
    free(o->cni_path);
    labels_free(o->pod_labels, o->n_pod_labels);
    labels_free(o->pod_annotations, o->n_pod_annotations);
    labels_free(o->agent_requests, o->n_agent_requests);
    labels_free(o->agent_limits, o->n_agent_limits);
    free(o->priority_class);
    free(o->pod_overlay);
    memset(o, 0, sizeof(*o));
}

int run_options_validate(struct run_options *o, struct kp_err *err)
{
    if (o->n_netpol_rules > 0 && o->all_nodes)
        return kp_err_set(err, "--netpol-rules cannot go with --all-nodes (a sweep's rows are "
                               "per node): measure the policy sizes on one pair");
    if (o->n_netpol_rules > 0 &&
        !(o->scenarios & ((1u << SCENARIO_POD_TO_POD) | (1u << SCENARIO_POD_TO_SERVICE))))
        return kp_err_set(err, "--netpol-rules selects the server pods: add pod-to-pod or "
                               "pod-to-service to --scenarios");
    if (o->n_services_sizes > 1 && o->n_netpol_rules > 0)
        return kp_err_set(err, "--services with several sizes cannot go with --netpol-rules: "
                               "measure one of them per run");
    if (o->n_services_sizes > 1 && o->all_nodes)
        return kp_err_set(err, "--services with several sizes cannot go with --all-nodes (a "
                               "sweep's rows are per node): measure the sizes on one pair");
    if (o->n_services_sizes > 1 && !(o->scenarios & (1u << SCENARIO_POD_TO_SERVICE)))
        return kp_err_set(err, "--services with several sizes measures the pod-to-service rows "
                               "at each: add pod-to-service to --scenarios");
    if (!o->local && o->mtu != 1500)
        return kp_err_set(err, "--mtu applies to --local only (a cluster's MTU is its own)");
    if (o->local && (o->scenarios & (1u << SCENARIO_POD_TO_DNS)))
        return kp_err_set(err, "--scenarios pod-to-dns: --local runs no cluster DNS to measure; "
                               "run it on a cluster (or kube-sim up --dns, docs/kube-sim.md)");
    if (o->all_nodes && (o->scenarios & (1u << SCENARIO_POD_TO_DNS)))
        return kp_err_set(err, "--scenarios pod-to-dns measures every node already: run it "
                               "without --all-nodes (docs/kubernetes.md, \"DNS per node\")");
    if (!o->local && o->n_local_faults > 0)
        return kp_err_set(err, "--local-fault applies to --local only");
    if (!o->local && (o->cni_conf || o->cni_path))
        return kp_err_set(err, "--cni-conf and --cni-path apply to --local only (a cluster's CNI "
                               "is its own)");
    if (o->cni_path && !o->cni_conf)
        return kp_err_set(err, "--cni-path needs --cni-conf FILE (the conflist whose plugins it "
                               "finds)");
    if (o->local && o->history_dir && strncmp(o->history_dir, "configmap:", 10) == 0)
        return kp_err_set(err, "--history configmap:NAME keeps the history in a cluster: with "
                               "--local give a directory");
    if (o->node_a && o->nodes_from)
        return kp_err_set(err, "--nodes and --nodes-from cannot be used together");
    if (o->keep_runs > 0) {
        const char *last = o->output_dir ? strrchr(o->output_dir, '/') : NULL;

        last = last ? last + 1 : o->output_dir;
        if (!(last && strcmp(last, "{time}") == 0) && !o->history_dir)
            return kp_err_set(err, "--keep-runs needs --output-dir DIR/{time} (one folder per "
                                   "run, named after its start time) or --history DIR");
    }
    if (o->capacity) /* the ramp follows the TCP_CRR row */
        o->tests |= 1u << TEST_TCP_CRR;
    if (o->push_gateway_password_file && !o->push_gateway)
        return kp_err_set(err, "--push-gateway-password-file needs --push-gateway");
    if (o->external_token_file && !o->external_host && !o->local)
        return kp_err_set(err, "--external-token-file needs --external-server (or --local, whose "
                               "external host kperf starts itself)");
    if (o->omit_ms >= 3600000)
        return kp_err_set(err, "--omit: must be below 1h");
    if (o->interval_ms && o->interval_ms > o->duration_ms) {
        if (o->interval_ms != 1000)
            return kp_err_set(err, "--interval: longer than --duration");
        o->interval_ms = 0; /* the default series does not fit a sub-second run: none */
    }
    return 0;
}

/* One --profile item against a row's scenario, placement and test. */
static bool profile_item_matches(const char *item, const char *scenario, const char *placement,
                                 const char *test)
{
    char buf[256];
    char *parts[3] = {NULL, NULL, NULL}, *save = NULL;
    size_t n = 0;

    snprintf(buf, sizeof(buf), "%s", item);
    for (char *t = strtok_r(buf, "/", &save); t && n < 3; t = strtok_r(NULL, "/", &save))
        parts[n++] = t;
    if (n == 0)
        return false;
    if (n == 1 && strcmp(parts[0], "all") == 0)
        return true;
    if (fnmatch(parts[n - 1], test, 0) != 0)
        return false;
    if (n >= 2 && fnmatch(parts[0], scenario, 0) != 0)
        return false;
    return n < 3 || fnmatch(parts[1], placement, 0) == 0;
}

unsigned run_profile_tests(const struct run_options *o, const struct plan_group *g)
{
    unsigned mask = 0;

    if (!g)
        return 0;
    for (size_t t = 0; t < g->n_tests; t++)
        for (size_t i = 0; i < o->n_profile_rows; i++)
            if (profile_item_matches(o->profile_rows[i], plan_scenario_name(g->scenario),
                                     g->placement_label ? g->placement_label
                                                        : plan_placement_name(g->placement),
                                     testkind_name(g->tests[t])))
                mask |= 1u << g->tests[t];
    return mask;
}

void run_spec_init(struct run_spec *spec, const struct run_options *ro, const struct plan_group *g,
                   const enum test_kind *tests, size_t n_tests, int samples)
{
    *spec = (struct run_spec){
        .group = g,
        .tests = tests,
        .n_tests = n_tests,
        .samples = samples,
        .duration_ms = ro->duration_ms,
        .omit_ms = ro->omit_ms,
        .interval_ms = ro->interval_ms,
        .no_counters = ro->no_counters,
        .profile_tests = run_profile_tests(ro, g),
        .streams = ro->streams,
        .msg_size_bytes = ro->msg_size_bytes,
        .udp_rate_bps = ro->udp_rate_bps,
    };
}

static const char *family_name(const char *f)
{
    if (strcmp(f, "IPv4") == 0)
        return "IPv4";
    if (strcmp(f, "IPv6") == 0)
        return "IPv6";
    return NULL;
}

int run_ip_families_choose(enum run_ip_family want, const char *const *cluster, size_t n_cluster,
                           const char *out[2], size_t *n_out, struct kp_err *err)
{
    const char *have[2] = {"IPv4", NULL};
    size_t n = 0;
    const char *need;

    for (size_t i = 0; i < n_cluster && n < 2; i++) {
        const char *f = family_name(cluster[i]);
        if (f && (n == 0 || strcmp(have[0], f) != 0))
            have[n++] = f;
    }
    if (n == 0)
        n = 1;
    *n_out = 0;
    if (want == RUN_IP_DEFAULT || want == RUN_IP_BOTH) {
        if (want == RUN_IP_BOTH && n < 2)
            return kp_err_set(err,
                              "--ip-family both: the cluster is %s-only (both needs a "
                              "dual-stack cluster)",
                              have[0]);
        for (size_t i = 0; i < n; i++)
            out[i] = have[i];
        *n_out = n;
        return 0;
    }
    need = want == RUN_IPV6 ? "IPv6" : "IPv4";
    for (size_t i = 0; i < n; i++)
        if (strcmp(have[i], need) == 0) {
            out[0] = have[i];
            *n_out = 1;
            return 0;
        }
    return kp_err_set(err, "--ip-family %s: the cluster has no %s (it is %s-only)",
                      want == RUN_IPV6 ? "ipv6" : "ipv4", need, have[0]);
}
