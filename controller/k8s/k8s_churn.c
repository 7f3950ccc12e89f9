/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_churn.c - see k8s_churn.h. */
#include "controller/k8s/k8s_churn.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_wait.h"

#define CHURN_TEST_MS 1000

struct churn {
    struct k8s_backend *b;
    struct plan_group *groups; /* one per node, borrowed node names */
    struct run_spec *specs;
    size_t n_nodes;
    enum test_kind tests[1];
    unsigned ok, failed;
};

/* collects the n runs of one wave (all started): one watch times them all, then each is
 * finished (its log read, its Job deleted) */
static int collect_wave(struct churn *c, struct k8s_client_run **runs, size_t n, struct kp_err *err)
{
    struct k8s_backend *b = c->b;
    json_t *times = json_object();
    char *sel = kp_xasprintf("%s=%s,%s=client", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_ROLE);
    struct k8s_wait_opts wo = {
        .ns = b->d.ns,
        .selector = sel,
        .owner = "pod-churn",
        .what = "the --pod-churn burst",
        .goal = K8S_WAIT_ALL_FINISHED,
        .want = n,
        .timeout_ms = k8s_deploy_spec_ms(&c->specs[0]) + b->ro->timeout_ms,
        .stage_times = times,
    };
    struct kp_err werr;
    int rc = 0;

    for (size_t i = 0; i < n; i++)
        json_object_set_new(times, k8s_client_job_name(runs[i]), json_pack("[f, f]", 0.0, 0.0));
    kp_err_clear(&werr);
    if (k8s_wait_pods(b->kc, &wo, NULL, &werr) != 0) {
        if (b->stop) {
            rc = kp_err_set(err, "interrupted");
        } else {
            kp_log(KP_LOG_WARN, "pod churn: %s", kp_err_msg(&werr));
        }
    }
    for (size_t i = 0; i < n; i++) {
        json_t *doc = NULL;
        const json_t *t = json_object_get(times, k8s_client_job_name(runs[i]));
        struct k8s_pod_times pt = {json_number_value(json_array_get(t, 0)),
                                   json_number_value(json_array_get(t, 1))};
        struct kp_err e;

        if (rc != 0) {
            k8s_client_abandon(b, runs[i]);
            continue;
        }
        k8s_client_set_times(runs[i], &pt);
        kp_err_clear(&e);
        if (k8s_client_finish(b, runs[i], &doc, &e) != 0) {
            kp_log(KP_LOG_WARN, "pod churn: %s", kp_err_msg(&e));
            c->failed++;
            if (b->stop)
                rc = kp_err_set(err, "interrupted");
        } else {
            c->ok++;
        }
        json_decref(doc);
    }
    json_decref(times);
    free(sel);
    return rc;
}

/* starts up to `want` runs from number *next on (round robin over the nodes) */
static int start_wave(struct churn *c, size_t *next, size_t want, struct k8s_client_run **runs,
                      size_t *started, struct kp_err *err)
{
    *started = 0;
    while (*started < want) {
        struct k8s_client_run *cr = NULL;
        if (k8s_client_start(c->b, &c->specs[*next % c->n_nodes], &cr, err) != 0)
            return -1;
        k8s_client_mark_churn(cr);
        runs[(*started)++] = cr;
        (*next)++;
    }
    return 0;
}

int k8s_churn_run(struct k8s_backend *b, struct kp_err *err)
{
    struct churn c = {.b = b, .tests = {TEST_TCP_RR}};
    size_t total, next = 0;
    struct k8s_client_run *runs[K8S_CHURN_WAVE];
    int rc = 0;

    if (b->ro->pod_churn <= 0)
        return 0;
    c.n_nodes = json_array_size(b->nodes);
    c.groups = kp_xcalloc(c.n_nodes + 1, sizeof(*c.groups));
    c.specs = kp_xcalloc(c.n_nodes + 1, sizeof(*c.specs));
    for (size_t i = 0; i < c.n_nodes; i++) {
        struct plan_group *g = &c.groups[i];
        g->scenario = SCENARIO_POD_TO_POD;
        g->placement = PLACEMENT_NODE;
        g->node = (char *)k8s_facts_node_name(json_array_get(b->nodes, i));
        g->placement_label = (char *)"churn";
        g->tests[0] = TEST_TCP_RR;
        g->n_tests = 1;
        g->ip_family = b->ip_families[0];
        run_spec_init(&c.specs[i], b->ro, g, c.tests, 1, 1);
        c.specs[i].duration_ms = CHURN_TEST_MS;
        c.specs[i].omit_ms = 0;
        c.specs[i].interval_ms = 0;
    }
    total = c.n_nodes * (size_t)b->ro->pod_churn;
    kp_log(KP_LOG_INFO, "pod churn: %zu pods (%d per node on %zu nodes), at most %d at once", total,
           b->ro->pod_churn, c.n_nodes, K8S_CHURN_WAVE);
    while (rc == 0 && next < total) {
        size_t want = total - next < K8S_CHURN_WAVE ? total - next : K8S_CHURN_WAVE, started;
        int src = start_wave(&c, &next, want, runs, &started, err);
        if (started > 0 && collect_wave(&c, runs, started, err) != 0)
            rc = -1;
        if (src != 0) {
            kp_err_prefix(err, "pod churn");
            rc = -1;
        }
    }
    if (rc == 0)
        kp_log(KP_LOG_INFO, "pod churn: %u pods measured, %u failed", c.ok, c.failed);
    free(c.groups);
    free(c.specs);
    return rc;
}
