/* SPDX-License-Identifier: Apache-2.0 */
/* local_ready.c - see local_ready.h. */
#include "controller/local/local_ready.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/subproc.h"
#include "base/testkind.h"
#include "controller/agent_args.h"
#include "controller/backend.h"
#include "controller/local/localnet.h"

#define READY_MAX_OUT (1u << 20)

/* Sleeps ms unless cancelled (checked every 20 ms). Returns 0, or -1 when cancelled. */
static int nap(uint64_t ms, volatile sig_atomic_t *cancel)
{
    uint64_t end = clock_now_ms() + ms;

    for (;;) {
        uint64_t now = clock_now_ms();
        if (cancel && *cancel)
            return -1;
        if (now >= end)
            return 0;
        clock_sleep_ms(end - now < 20 ? end - now : 20);
    }
}

/* The agent's first answered connection from inside pod ns, in CLOCK_REALTIME seconds, or 0. */
static double first_answer(const struct local_ready_opts *o, const char *ns, struct kp_err *err)
{
    const char *prefix[] = {"ip", "netns", "exec", ns, NULL};
    static const enum test_kind tests[] = {TEST_TCP_RR};
    struct run_spec spec = {.tests = tests,
                            .n_tests = 1,
                            .samples = 1,
                            .duration_ms = LOCAL_READY_TEST_MS,
                            .timeout_ms = o->timeout_ms};
    struct agent_args_opts ao = {.prefix = prefix,
                                 .agent = o->agent,
                                 .host = o->server,
                                 .port = o->port,
                                 .token_file = o->token_file};
    struct subproc_opts so = {.timeout_ms = o->timeout_ms,
                              .max_out = READY_MAX_OUT,
                              .cancel = o->cancel,
                              .stdin_null = true};
    struct subproc_result r = {0};
    char **argv = agent_args_client(&spec, &ao);
    json_t *doc = NULL;
    double t = 0;

    if (subproc_run((const char *const *)argv, &so, &r, err) == 0) {
        doc = r.out_len ? json_loadb(r.out, r.out_len, 0, NULL) : NULL;
        t = json_number_value(json_object_get(doc, "first_answer_unix_s"));
        if (t <= 0) {
            const char *e = r.err ? r.err + strspn(r.err, "\n ") : "";
            kp_err_set(err, "no answered packet (agent exit %d%s%.*s)", r.exit_code, *e ? ": " : "",
                       (int)strcspn(e, "\n"), e);
        }
    }
    json_decref(doc);
    subproc_result_cleanup(&r);
    agent_args_free(argv);
    return t;
}

static void segment(json_t *rec, const char *name, double from, double to)
{
    double d = to - from;

    if (from > 0 && to > 0)
        json_object_set_new(rec, name, json_real(d > 0 ? d : 0.0));
}

/* One pod: its record (new reference). */
static json_t *one_pod(const struct local_ready_opts *o, enum localnet_ns node, int slot)
{
    const char *node_name = node == LN_NODE1 ? "node1" : "node2";
    char ns[64];
    double created = clock_unix_s(), running = 0, answer = 0;
    json_t *rec;
    struct kp_err err, rm;

    kp_err_clear(&err);
    localnet_pod_ns(o->ln, node, slot, ns, sizeof(ns));
    rec = json_pack("{s:s, s:s, s:s, s:f}", "pod", ns, "node", node_name, "kind", "churn",
                    "created_unix_s", created);
    if (localnet_pod_sandbox(o->ln, node, slot, &err) != 0)
        goto done;
    if (nap(o->delay_ms[node == LN_NODE2], o->cancel) != 0) { /* the node's cni-add-delay */
        kp_err_set(&err, "interrupted");
        goto done;
    }
    if (localnet_pod_network(o->ln, node, slot, &err) != 0)
        goto done;
    running = clock_unix_s();
    answer = first_answer(o, ns, &err);
done:
    if (running <= 0 || answer <= 0)
        kp_log(KP_LOG_WARN, "readiness pod %s: %s", ns, kp_err_msg(&err));
    kp_err_clear(&rm);
    if (localnet_pod_remove(o->ln, node, slot, &rm) != 0)
        kp_log(KP_LOG_WARN, "removing readiness pod %s: %s (cleanup will retry)", ns,
               kp_err_msg(&rm));
    segment(rec, "scheduling_s", created, created); /* no scheduler: 0 */
    segment(rec, "network_s", created, running);
    segment(rec, "first_packet_s", running, answer);
    if (running > 0 && answer > 0)
        json_object_set_new(rec, "total_s", json_real(answer > created ? answer - created : 0.0));
    return rec;
}

/* The pods of one node, in a thread of their own for node 2. */
struct node_run {
    const struct local_ready_opts *o;
    enum localnet_ns node;
    int n;
    json_t *pods; /* the thread's until joined */
};

static void *node_main(void *arg)
{
    struct node_run *r = arg;

    for (int slot = 0; slot < r->n && !(r->o->cancel && *r->o->cancel); slot++)
        json_array_append_new(r->pods, one_pod(r->o, r->node, slot));
    return NULL;
}

json_t *local_ready_measure(const struct local_ready_opts *o)
{
    int n = o->pods_per_node < LOCALNET_MAX_PODS ? o->pods_per_node : LOCALNET_MAX_PODS;
    struct node_run runs[2] = {{o, LN_NODE1, n, json_array()}, {o, LN_NODE2, n, json_array()}};
    pthread_t t;
    sigset_t all, old;
    bool threaded;
    struct kp_err err;

    kp_err_clear(&err);
    if (localnet_pods_reserve(o->ln, n, &err) != 0) {
        kp_log(KP_LOG_WARN, "readiness pods: %s", kp_err_msg(&err));
        json_decref(runs[1].pods);
        return runs[0].pods;
    }
    /* both nodes at once, as a scheduler would start pods; one node's delay is not the other's */
    sigfillset(&all); /* signals stay with the main thread */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    threaded = pthread_create(&t, NULL, node_main, &runs[1]) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    node_main(&runs[0]);
    if (threaded)
        pthread_join(t, NULL);
    else
        node_main(&runs[1]);
    json_array_extend(runs[0].pods, runs[1].pods);
    json_decref(runs[1].pods);
    return runs[0].pods;
}
