/* SPDX-License-Identifier: Apache-2.0 */
/* test_runner.c - the runner against a scripted fake backend: call order, one client per test
 * or per group, skips and errors reaching the report, --samples auto, a failed prepare, and
 * SIGINT in the middle of a measurement (cleanup still runs, the rest is listed as not run), and
 * a sweep's second look at its outliers (a node slow once is cleared, a slow node stays). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/testkind.h"
#include "controller/backend.h"
#include "controller/plan.h"
#include "controller/report/report.h"
#include "controller/run_options.h"
#include "controller/runner.h"
#include "test/unit/report_fixture.h"

struct fake {
    struct backend base;
    bool batches;
    bool fail_prepare;
    int fail_call;      /* run_client call number that fails (1-based), 0 = none */
    int interrupt_call; /* run_client call number during which SIGINT arrives, 0 = none */
    int lost_call;      /* run_client call number from which the backend is lost, 0 = none */
    bool constant;      /* identical figures each sample (auto stops early) */
    bool sweep;         /* prepare expands the plan into a ring of SWEEP_NODES nodes */
    int slow;           /* sweep: node index (1-based) whose pairs are 3x slower; 0 = none */
    bool slow_once;     /* ... only the first time each of its pairs runs */
    int pair_runs[8];   /* sweep: run_client calls per client node index */
    long svc_fail;      /* services_apply: the size that fails + 1, 0 = none */
    int calls;
    int cleanups;
    int interrupts;
    char log[4096]; /* "scenario/placement/TEST[,TEST][/r]x<samples>;" per call */
    uint64_t rng;
};

#define SWEEP_NODES 6
static const char *const sweep_names[SWEEP_NODES] = {"n1", "n2", "n3", "n4", "n5", "n6"};

static int fake_prepare(struct backend *b, struct plan *plan, struct kp_err *err)
{
    struct fake *f = (struct fake *)b;

    if (f->fail_prepare)
        return kp_err_set(err, "no cluster here");
    if (f->sweep)
        plan_expand_sweep(plan, sweep_names, SWEEP_NODES);
    plan_skip(plan, SCENARIO_POD_TO_SERVICE, PLACEMENT_OTHER_NODE, "no second node");
    return 0;
}

/* sweep: the index of a node name (0-based), -1 when not a sweep node */
static int sweep_index(const char *name)
{
    for (int i = 0; name && i < SWEEP_NODES; i++)
        if (strcmp(sweep_names[i], name) == 0)
            return i;
    return -1;
}

/* sweep: 3 when the pair of client node index c touches the slow node (and is slow this time) */
static double sweep_factor(struct fake *f, const struct plan_group *g)
{
    int c = sweep_index(g->node), slow = f->slow - 1;

    if (c < 0)
        return 1;
    f->pair_runs[c]++;
    if (slow < 0 || (c != slow && (c + 1) % SWEEP_NODES != slow))
        return 1;
    return f->slow_once && f->pair_runs[c] > 1 ? 1 : 3;
}

static json_t *sample_for(struct fake *f, enum test_kind t, int sample, bool reverse, double factor)
{
    double jitter = f->constant ? 0 : 400 * fx_uniform(&f->rng);

    if (testkind_get(t)->latency) {
        uint64_t rng = f->constant ? 7 : fx_next(&f->rng);
        return fx_latency_sample(testkind_name(t), sample, &rng, (20 + jitter / 10) * factor, 200,
                                 NULL, NULL);
    }
    return fx_stream_sample(testkind_name(t), sample, reverse, 900 + jitter, 0);
}

static int fake_run_client(struct backend *b, const struct run_spec *spec, json_t **doc,
                           struct kp_err *err)
{
    struct fake *f = (struct fake *)b;
    size_t off = strlen(f->log);
    json_t *results = json_array();
    double factor = sweep_factor(f, spec->group);

    f->calls++;
    off +=
        (size_t)snprintf(f->log + off, sizeof(f->log) - off, "%s/%s/",
                         plan_scenario_name(spec->group->scenario), spec->group->placement_label);
    for (size_t i = 0; i < spec->n_tests; i++)
        off += (size_t)snprintf(f->log + off, sizeof(f->log) - off, "%s%s", i ? "," : "",
                                testkind_name(spec->tests[i]));
    snprintf(f->log + off, sizeof(f->log) - off, "%sx%d;", spec->group->reverse ? "/r" : "",
             spec->samples);
    assert_true(spec->timeout_ms > spec->duration_ms);
    if (f->calls == f->interrupt_call) {
        raise(SIGINT); /* the runner's handler calls interrupt(): we stop like a killed client */
        json_decref(results);
        return kp_err_set(err, "interrupted");
    }
    if (f->calls == f->fail_call) {
        json_decref(results);
        return kp_err_set(err, "client exited with status 1: connection refused");
    }
    if (f->lost_call && f->calls >= f->lost_call) { /* the namespace went: the wait aborted */
        json_decref(results);
        return kp_err_set(err, "interrupted");
    }
    for (size_t i = 0; i < spec->n_tests; i++)
        for (int s = 0; s < spec->samples; s++)
            json_array_append_new(results,
                                  sample_for(f, spec->tests[i], s, spec->group->reverse, factor));
    *doc = fx_agent_doc(results, NULL);
    json_object_set_new(json_object_get(*doc, "params"), "reverse",
                        json_boolean(spec->group->reverse));
    if (spec->group->scenario == SCENARIO_POD_TO_EXTERNAL) /* kperf-agent --server-facts */
        json_object_set_new(*doc, "server_facts",
                            json_pack("{s:s, s:s, s:i, s:{s:[{s:s, s:s, s:i}]}}", "hostname",
                                      "ip-10-0-0-7", "kernel",
                                      f->calls == 3 ? "6.1.0-first" : "6.1.0-later", "cpus", 8,
                                      "net", "nics", "name", "ens5", "driver", "ena", "mtu", 9001));
    return 0;
}

static json_t *fake_describe(struct backend *b)
{
    json_t *d =
        json_pack("{s:[{s:s}], s:{s:s}}", "nodes", "name", "fake-node", "cni", "name", "fake");
    json_t *pairs, *nodes;

    if (!((struct fake *)b)->sweep)
        return d;
    pairs = json_array();
    nodes = json_array();
    for (int i = 0; i < SWEEP_NODES; i++) {
        json_array_append_new(pairs,
                              json_pack("{s:s, s:s, s:i}", "client", sweep_names[i], "server",
                                        sweep_names[(i + 1) % SWEEP_NODES], "round", i % 2));
        json_array_append_new(
            nodes, json_pack("{s:s, s:s}", "name", sweep_names[i], "instance_type", "m5"));
    }
    json_object_set_new(
        d, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    return d;
}

/* --services with several sizes: logs "S<count>;"; svc_fail's size fails */
static int fake_services_apply(struct backend *b, unsigned count, json_t **md, struct kp_err *err)
{
    struct fake *f = (struct fake *)b;
    size_t off = strlen(f->log);

    snprintf(f->log + off, sizeof(f->log) - off, "S%u;", count);
    *md = NULL;
    if (f->svc_fail == (long)count + 1)
        return kp_err_set(err, "creating Service 7 of %u: forbidden", count);
    *md = json_pack("{s:i, s:{s:{s:f}}}", "count", (int)count, "programming", "fake-node",
                    "latency_s", 0.5);
    return 0;
}

static void fake_interrupt(struct backend *b)
{
    ((struct fake *)b)->interrupts++;
}

static const char *fake_lost(struct backend *b)
{
    struct fake *f = (struct fake *)b;

    return f->lost_call && f->calls >= f->lost_call ? "namespace kperf-x was deleted" : NULL;
}

static int fake_cleanup(struct backend *b, struct kp_err *err)
{
    (void)err;
    ((struct fake *)b)->cleanups++;
    return 0;
}

static void fake_destroy(struct backend *b)
{
    (void)b;
}

static struct backend_ops fake_ops = {
    .name = "fake",
    .prepare = fake_prepare,
    .run_client = fake_run_client,
    .describe = fake_describe,
    .services_apply = fake_services_apply,
    .interrupt = fake_interrupt,
    .lost = fake_lost,
    .cleanup = fake_cleanup,
    .destroy = fake_destroy,
};

struct run {
    struct run_options ro;
    struct fake f;
    struct backend_ops ops;
    struct report *rep;
    struct runner_outcome out;
    struct kp_err err;
    int rc;
};

/* Runs the plan of ro (after adjust) on a fake configured by the caller. */
static void run(struct run *r)
{
    struct plan_opts po;
    struct plan *p;
    FILE *devnull = fopen("/dev/null", "w");
    struct runner_opts o = {.ro = &r->ro, .progress_out = devnull, .handle_signals = true};

    r->ops = fake_ops;
    r->ops.batches_tests = r->f.batches;
    r->f.base.ops = &r->ops;
    r->f.rng = 42;
    plan_opts_from_run_options(&r->ro, &po);
    p = plan_new(&po);
    r->rep = report_new();
    r->rc = runner_run(&r->f.base, p, r->rep, &o, &r->out, &r->err);
    plan_free(p);
    fclose(devnull);
}

static void run_free(struct run *r)
{
    report_free(r->rep);
    run_options_cleanup(&r->ro);
}

static const json_t *row(const struct report *rep, const char *scenario, const char *placement,
                         const char *test, bool reverse)
{
    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *w = report_row(rep, i);
        if (strcmp(json_string_value(json_object_get(w, "scenario")), scenario) == 0 &&
            strcmp(json_string_value(json_object_get(w, "placement")), placement) == 0 &&
            strcmp(json_string_value(json_object_get(w, "test")), test) == 0 &&
            json_is_true(json_object_get(w, "reverse")) == reverse)
            return w;
    }
    return NULL;
}

static size_t n_samples(const json_t *w)
{
    return json_array_size(json_object_get(w, "samples"));
}

static bool skipped_with(const struct report *rep, const char *scenario, const char *placement,
                         const char *reason)
{
    const json_t *s = report_skipped(rep);

    for (size_t i = 0; i < json_array_size(s); i++) {
        const json_t *e = json_array_get(s, i);
        if (strcmp(json_string_value(json_object_get(e, "scenario")), scenario) == 0 &&
            strcmp(json_string_value(json_object_get(e, "placement")), placement) == 0 &&
            strstr(json_string_value(json_object_get(e, "reason")), reason))
            return true;
    }
    return false;
}

static void test_runner_one_client_per_test_in_plan_order(void **state)
{
    struct run r = {0};

    (void)state;
    run_options_init(&r.ro);
    r.ro.scenarios = (1u << SCENARIO_POD_TO_SERVICE) | (1u << SCENARIO_POD_TO_EXTERNAL);
    r.ro.tests = (1u << TEST_TCP_RR) | (1u << TEST_TCP_STREAM);
    r.ro.samples = r.ro.samples_max = 2;
    r.ro.external_name = kp_xstrdup("ec2.example");
    run(&r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.f.log, "pod-to-service/same-node/TCP_RRx2;"
                                 "pod-to-service/same-node/TCP_STREAMx2;"
                                 "pod-to-external/external/TCP_RRx2;"
                                 "pod-to-external/external/TCP_STREAMx2;"
                                 "pod-to-external/external/TCP_STREAM/rx2;");
    assert_int_equal(r.f.cleanups, 1);
    assert_int_equal(r.out.n_client_runs, 5);
    assert_int_equal(r.out.n_failed, 0);
    assert_int_equal(r.out.signal, 0);
    assert_int_equal(n_samples(row(r.rep, "pod-to-service", "same-node", "TCP_RR", false)), 2);
    assert_non_null(row(r.rep, "pod-to-external", "external", "TCP_STREAM", true));
    assert_non_null(row(r.rep, "pod-to-external", "external", "TCP_STREAM", false));
    /* the backend's skip is listed, never dropped */
    assert_true(skipped_with(r.rep, "pod-to-service", "other-node", "no second node"));
    /* metadata from the runner and from describe() */
    const json_t *md = report_metadata_const(r.rep);
    assert_string_equal(json_string_value(json_object_get(md, "backend")), "fake");
    assert_non_null(json_object_get(md, "start_time"));
    assert_non_null(json_object_get(md, "end_time"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "cni"), "name")),
                        "fake");
    assert_int_equal(json_array_size(json_object_get(md, "nodes")), 1);
    /* the external host's facts, from the first pod-to-external document, under the name given
     * to --external-server */
    const json_t *ext = json_object_get(md, "external");
    assert_string_equal(json_string_value(json_object_get(ext, "name")), "ec2.example");
    assert_string_equal(json_string_value(json_object_get(ext, "hostname")), "ip-10-0-0-7");
    assert_string_equal(json_string_value(json_object_get(ext, "kernel")), "6.1.0-first");
    assert_int_equal(json_integer_value(json_object_get(ext, "cpus")), 8);
    assert_int_equal(
        json_integer_value(json_object_get(
            json_array_get(json_object_get(json_object_get(ext, "net"), "nics"), 0), "mtu")),
        9001);
    run_free(&r);
}

/* metadata.arguments is the command line with every URL's user-info removed */
static void test_runner_arguments_without_url_passwords(void **state)
{
    char *argv[] = {"run", "--push-gateway", "https://me:S3cret@pg:9091",
                    "--push-gateway=http://:S3cret@pg/", NULL};
    struct run r = {0};
    const json_t *args;

    (void)state;
    run_options_init(&r.ro);
    r.ro.tests = 1u << TEST_TCP_RR;
    r.ro.argc = 4;
    r.ro.argv = argv;
    run(&r);
    assert_int_equal(r.rc, 0);
    args = json_object_get(report_metadata_const(r.rep), "arguments");
    assert_int_equal(json_array_size(args), 5);
    assert_string_equal(json_string_value(json_array_get(args, 0)), "kperf");
    assert_string_equal(json_string_value(json_array_get(args, 2)), "--push-gateway");
    assert_string_equal(json_string_value(json_array_get(args, 3)), "https://pg:9091/");
    assert_string_equal(json_string_value(json_array_get(args, 4)), "--push-gateway=http://pg/");
    run_free(&r);
}

static void test_runner_batching_backend_gets_whole_groups(void **state)
{
    struct run r = {0};

    (void)state;
    run_options_init(&r.ro);
    r.f.batches = true;
    run(&r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.f.log, "pod-to-pod/same-node/TCP_RR,TCP_STREAM,TCP_STREAM_MULTIx1;"
                                 "pod-to-pod/other-node/TCP_RR,TCP_STREAM,TCP_STREAM_MULTIx1;");
    assert_non_null(row(r.rep, "pod-to-pod", "other-node", "TCP_STREAM_MULTI", false));
    run_free(&r);
}

static void test_runner_failed_client_is_a_row_error_and_the_run_goes_on(void **state)
{
    struct run r = {0};

    (void)state;
    run_options_init(&r.ro);
    r.f.fail_call = 2;
    run(&r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.f.calls, 6);
    assert_int_equal(r.out.n_failed, 1);
    assert_int_equal(report_error_count(r.rep), 1);
    const json_t *w = row(r.rep, "pod-to-pod", "same-node", "TCP_STREAM", false);
    assert_non_null(w);
    char *errors = json_dumps(json_object_get(w, "errors"), 0);
    assert_non_null(strstr(errors, "connection refused"));
    free(errors);
    assert_int_equal(r.f.cleanups, 1);
    run_free(&r);
}

/* --services 0,20,60: the backend asked for each size once, before its first row; a size that
 * fails fails its rows with the reason and the run goes on; each size in services_sizes */
static void test_runner_services_sizes_once_each_before_their_rows(void **state)
{
    struct run r = {0};
    const json_t *sizes;
    char *errors;

    (void)state;
    run_options_init(&r.ro);
    r.ro.scenarios = (1u << SCENARIO_POD_TO_POD) | (1u << SCENARIO_POD_TO_SERVICE);
    r.ro.placements = 1u << PLACEMENT_SAME_NODE;
    r.ro.tests = 1u << TEST_TCP_RR;
    r.ro.services_sizes[0] = 0;
    r.ro.services_sizes[1] = 20;
    r.ro.services_sizes[2] = 60;
    r.ro.n_services_sizes = 3;
    r.ro.services = 60;
    r.f.svc_fail = 20 + 1;
    run(&r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.f.log, "pod-to-pod/same-node/TCP_RRx1;S0;pod-to-service/same-node/"
                                 "TCP_RRx1;S20;S60;pod-to-service/same-node/services-60/"
                                 "TCP_RRx1;");
    assert_int_equal(r.out.n_failed, 1);
    assert_null(row(r.rep, "pod-to-service", "same-node/services-20", "TCP_RR", false));
    assert_int_equal(report_error_count(r.rep), 1);
    errors = json_dumps(report_errors(r.rep), 0);
    assert_non_null(strstr(errors, "same-node/services-20"));
    assert_non_null(strstr(errors, "services 20: creating Service 7 of 20: forbidden"));
    free(errors);
    assert_non_null(row(r.rep, "pod-to-service", "same-node/services-60", "TCP_RR", false));
    sizes = json_object_get(report_metadata(r.rep), "services_sizes");
    assert_int_equal(json_array_size(sizes), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(sizes, i), "count")),
                         r.ro.services_sizes[i]);
    assert_non_null(json_object_get(json_array_get(sizes, 0), "programming"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(sizes, 1), "error")),
                        "creating Service 7 of 20: forbidden");
    assert_null(json_object_get(report_metadata(r.rep), "services"));
    assert_int_equal(r.f.cleanups, 1);
    run_free(&r);
    /* a backend that cannot make Services refuses several sizes before preparing */
    memset(&r, 0, sizeof(r));
    run_options_init(&r.ro);
    r.ro.scenarios = 1u << SCENARIO_POD_TO_SERVICE;
    r.ro.services_sizes[1] = 20;
    r.ro.n_services_sizes = 2;
    fake_ops.services_apply = NULL;
    run(&r);
    fake_ops.services_apply = fake_services_apply;
    assert_int_equal(r.rc, -1);
    assert_non_null(strstr(kp_err_msg(&r.err), "--services with several sizes needs a cluster"));
    assert_int_equal(r.f.calls, 0);
    run_free(&r);
}

static void test_runner_failed_prepare_still_cleans_up(void **state)
{
    struct run r = {0};

    (void)state;
    run_options_init(&r.ro);
    r.f.fail_prepare = true;
    run(&r);
    assert_int_equal(r.rc, -1);
    assert_string_equal(kp_err_msg(&r.err), "no cluster here");
    assert_int_equal(r.f.calls, 0);
    assert_int_equal(r.f.cleanups, 1);
    run_free(&r);
}

static void test_runner_sigint_stops_cleans_up_and_lists_the_rest(void **state)
{
    struct run r = {0};
    struct sigaction before, after;

    (void)state;
    sigaction(SIGINT, NULL, &before);
    run_options_init(&r.ro);
    r.ro.scenarios = SCENARIO_ALL_MASK;
    r.f.interrupt_call = 2; /* during pod-to-pod same-node TCP_STREAM */
    run(&r);
    sigaction(SIGINT, NULL, &after);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.out.signal, SIGINT);
    assert_int_equal(r.f.interrupts, 1);
    assert_int_equal(r.f.calls, 2); /* nothing started after the signal */
    assert_int_equal(r.f.cleanups, 1);
    assert_int_equal(r.out.n_failed, 0); /* an interrupt is not a failed measurement */
    assert_int_equal(report_error_count(r.rep), 0);
    /* measured so far: kept; the interrupted test and the rest: listed as not run */
    assert_int_equal(n_samples(row(r.rep, "pod-to-pod", "same-node", "TCP_RR", false)), 1);
    assert_true(skipped_with(r.rep, "pod-to-pod", "other-node", "interrupted"));
    assert_true(skipped_with(r.rep, "pod-to-external", "external", "interrupted"));
    const json_t *w = row(r.rep, "pod-to-pod", "same-node", "TCP_STREAM", false);
    assert_non_null(w);
    assert_int_equal(n_samples(w), 0);
    /* the handlers are restored */
    assert_ptr_equal(before.sa_handler, after.sa_handler);
    run_free(&r);
}

/* a backend that lost its namespace: the run stops at once, fails with the reason, keeps
 * what it measured and lists the rest as not run */
static void test_runner_lost_backend_stops_the_run(void **state)
{
    struct run r = {0};

    (void)state;
    run_options_init(&r.ro);
    r.ro.scenarios = SCENARIO_ALL_MASK;
    r.f.lost_call = 2;
    run(&r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.out.signal, 0);
    assert_int_equal(r.f.calls, 2); /* nothing started after it */
    assert_int_equal(r.f.cleanups, 1);
    assert_string_equal(kp_err_msg(&r.out.stopped), "namespace kperf-x was deleted");
    assert_true(r.out.n_failed > 0);
    assert_int_equal(n_samples(row(r.rep, "pod-to-pod", "same-node", "TCP_RR", false)), 1);
    assert_true(skipped_with(r.rep, "pod-to-pod", "other-node", "stopped early"));
    run_free(&r);
}

static void test_runner_samples_auto_bounded(void **state)
{
    struct run steady = {0}, noisy = {0};

    (void)state;
    run_options_init(&steady.ro);
    steady.ro.tests = 1u << TEST_TCP_STREAM;
    steady.ro.placements = 1u << PLACEMENT_SAME_NODE;
    steady.ro.samples_auto = true;
    steady.ro.samples = 3;
    steady.ro.samples_max = 10;
    steady.f.constant = true;
    run(&steady);
    /* identical samples: the interval is narrow at the minimum */
    assert_int_equal(steady.f.calls, 3);
    assert_int_equal(n_samples(row(steady.rep, "pod-to-pod", "same-node", "TCP_STREAM", false)), 3);
    run_free(&steady);

    run_options_init(&noisy.ro);
    noisy.ro.tests = 1u << TEST_TCP_STREAM;
    noisy.ro.placements = 1u << PLACEMENT_SAME_NODE;
    noisy.ro.samples_auto = true;
    noisy.ro.samples = 3;
    noisy.ro.samples_max = 5;
    run(&noisy); /* 900..1300 Mb/s: never within 5%, stops at the bound */
    assert_int_equal(noisy.f.calls, 5);
    assert_string_equal(noisy.f.log, "pod-to-pod/same-node/TCP_STREAMx1;"
                                     "pod-to-pod/same-node/TCP_STREAMx1;"
                                     "pod-to-pod/same-node/TCP_STREAMx1;"
                                     "pod-to-pod/same-node/TCP_STREAMx1;"
                                     "pod-to-pod/same-node/TCP_STREAMx1;");
    run_free(&noisy);
}

/* a sweep with node n3 slow (its pairs n2->n3 and n3->n4 3x slower): the verdict's outliers */
static json_t *sweep_run(struct run *r, bool slow_once, int confirm)
{
    struct kp_err err = {{0}};
    json_t *sweep;

    run_options_init(&r->ro);
    r->ro.scenarios = 1u << SCENARIO_POD_TO_POD;
    r->ro.tests = 1u << TEST_TCP_RR;
    r->ro.all_nodes = true;
    r->ro.placements = 1u << PLACEMENT_OTHER_NODE; /* the sweep's groups replace it */
    r->ro.confirm_outliers = confirm;
    r->f.sweep = true;
    r->f.constant = true; /* the same histogram for every healthy pair */
    r->f.slow = 3;
    r->f.slow_once = slow_once;
    run(r);
    assert_int_equal(r->rc, 0);
    assert_int_equal(report_finish(r->rep, &err), 0);
    sweep = json_object_get(report_metadata(r->rep), "sweep");
    assert_non_null(sweep);
    return json_object_get(sweep, "outliers");
}

static void test_runner_sweep_second_look_clears_a_node_slow_once(void **state)
{
    struct run r = {0};
    const json_t *outliers = sweep_run(&r, true, 8);

    (void)state;
    /* 6 pairs, then n3's two pairs again (client n2 and client n3), nothing else */
    assert_int_equal(r.f.calls, 8);
    assert_int_equal(r.f.pair_runs[1], 2);
    assert_int_equal(r.f.pair_runs[2], 2);
    assert_int_equal(r.f.pair_runs[0] + r.f.pair_runs[3] + r.f.pair_runs[4] + r.f.pair_runs[5], 4);
    assert_int_equal(json_array_size(outliers), 0);
    assert_string_equal(
        json_string_value(json_array_get(
            json_object_get(json_object_get(report_metadata(r.rep), "sweep"), "confirmed"), 0)),
        "n3");
    assert_int_equal(n_samples(row(r.rep, "pod-to-pod", "node:n3", "TCP_RR", false)), 2);
    assert_int_equal(n_samples(row(r.rep, "pod-to-pod", "node:n1", "TCP_RR", false)), 1);
    run_free(&r);
}

static void test_runner_sweep_second_look_keeps_a_slow_node(void **state)
{
    struct run r = {0};
    const json_t *outliers = sweep_run(&r, false, 8);

    (void)state;
    assert_int_equal(r.f.calls, 8);
    assert_int_equal(json_array_size(outliers), 1);
    assert_string_equal(json_string_value(json_array_get(outliers, 0)), "n3");
    run_free(&r);
}

static void test_runner_sweep_without_second_look(void **state)
{
    struct run r = {0};
    const json_t *outliers = sweep_run(&r, true, 0);

    (void)state;
    assert_int_equal(r.f.calls, 6); /* --confirm-outliers 0: one pass */
    assert_int_equal(json_array_size(outliers), 1);
    assert_string_equal(json_string_value(json_array_get(outliers, 0)), "n3");
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runner_one_client_per_test_in_plan_order),
        cmocka_unit_test(test_runner_arguments_without_url_passwords),
        cmocka_unit_test(test_runner_batching_backend_gets_whole_groups),
        cmocka_unit_test(test_runner_failed_client_is_a_row_error_and_the_run_goes_on),
        cmocka_unit_test(test_runner_failed_prepare_still_cleans_up),
        cmocka_unit_test(test_runner_services_sizes_once_each_before_their_rows),
        cmocka_unit_test(test_runner_sigint_stops_cleans_up_and_lists_the_rest),
        cmocka_unit_test(test_runner_lost_backend_stops_the_run),
        cmocka_unit_test(test_runner_samples_auto_bounded),
        cmocka_unit_test(test_runner_sweep_second_look_clears_a_node_slow_once),
        cmocka_unit_test(test_runner_sweep_second_look_keeps_a_slow_node),
        cmocka_unit_test(test_runner_sweep_without_second_look),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
