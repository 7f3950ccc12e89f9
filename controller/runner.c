/* SPDX-License-Identifier: Apache-2.0 */
/* runner.c - see runner.h. */
#include "controller/runner.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/testkind.h"
#include "base/units.h"
#include "controller/backend.h"
#include "controller/capacity_ramp.h"
#include "controller/plan.h"
#include "controller/progress.h"
#include "controller/report/readiness.h"
#include "controller/report/report.h"
#include "controller/report/urlcred.h"
#include "controller/run_options.h"
#include "controller/runner_netpol.h"
#include "controller/runner_services.h"

#define AUTO_CI_PCT 5.0 /* --samples auto: stop when the 95% CI is within +-5% of the mean */

/* Signal state: one run at a time per process. */
static struct backend *volatile sig_backend;
static volatile sig_atomic_t sig_count;
static volatile sig_atomic_t sig_first;
static volatile sig_atomic_t sig_cleaning;
/* the backend's reason to stop (backend_ops.lost), once seen; borrowed from the backend */
static const char *lost_reason;

/* true once the run must stop measuring: a signal, or a backend that lost its ground */
static bool halted(void)
{
    return sig_first || lost_reason;
}

/* Looks at the backend's lost() (after a failed step): true when the run must stop. */
static bool check_lost(struct backend *b)
{
    if (!lost_reason && b->ops->lost)
        lost_reason = b->ops->lost(b);
    return lost_reason != NULL;
}

static void on_signal(int sig)
{
    static const char again[] = "\nkperf: cleaning up; press Ctrl-C again to quit at once "
                                "(the next run removes what is left)\n";
    struct backend *b = sig_backend;
    int saved = errno;

    sig_count++;
    if (!sig_first)
        sig_first = sig;
    if (sig_count >= 3 && sig_cleaning)
        _exit(128 + sig);
    if (sig_cleaning) {
        ssize_t w = write(STDERR_FILENO, again, sizeof(again) - 1);
        (void)w;
    }
    if (b)
        b->ops->interrupt(b);
    errno = saved;
}

struct sig_saved {
    struct sigaction int_old, term_old;
    bool installed;
};

static void signals_install(struct backend *b, struct sig_saved *s)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: blocking waits return EINTR */
    sigemptyset(&sa.sa_mask);
    sig_backend = b;
    sig_count = 0;
    sig_first = 0;
    sig_cleaning = 0;
    sigaction(SIGINT, &sa, &s->int_old);
    sigaction(SIGTERM, &sa, &s->term_old);
    s->installed = true;
}

static void signals_restore(struct sig_saved *s)
{
    if (!s->installed)
        return;
    sigaction(SIGINT, &s->int_old, NULL);
    sigaction(SIGTERM, &s->term_old, NULL);
    sig_backend = NULL;
}

void runner_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- metadata ---- */

static json_t *mask_names(unsigned mask, int count, const char *(*name)(int))
{
    json_t *a = json_array();

    for (int i = 0; i < count; i++)
        if (mask & (1u << i))
            json_array_append_new(a, json_string(name(i)));
    return a;
}

static const char *scenario_name_i(int i)
{
    return plan_scenario_name((enum scenario)i);
}

static const char *test_name_i(int i)
{
    return testkind_name((enum test_kind)i);
}

static void fill_metadata(json_t *md, const struct backend *b, const struct run_options *ro)
{
    char now[32];
    json_t *args = json_array();
    json_t *params;

    runner_utc_now(now, sizeof(now));
    json_object_set_new(md, "kperf_version", json_string(KPERF_VERSION));
    json_object_set_new(md, "backend", json_string(b->ops->name));
    json_object_set_new(md, "start_time", json_string(now));
    json_array_append_new(args, json_string("kperf"));
    for (int i = 0; i < ro->argc; i++) { /* a URL's user:password@ is kept out of reports */
        char *arg = urlcred_redact(ro->argv[i]);

        json_array_append_new(args, json_string(arg));
        free(arg);
    }
    json_object_set_new(md, "arguments", args);
    params = json_pack("{s:o, s:o, s:f, s:i, s:b, s:i, s:f}", "scenarios",
                       mask_names(ro->scenarios, SCENARIO_COUNT, scenario_name_i), "tests",
                       mask_names(ro->tests, TEST_COUNT, test_name_i), "duration_s",
                       ro->duration_ms / 1000.0, "samples", ro->samples, "samples_auto",
                       ro->samples_auto, "streams", ro->streams, "omit_s", ro->omit_ms / 1000.0);
    if (ro->capacity)
        json_object_set_new(params, "capacity", json_true());
    /* agent defaults are left out rather than written as 0 */
    if (ro->interval_ms)
        json_object_set_new(params, "interval_s", json_real(ro->interval_ms / 1000.0));
    if (ro->msg_size_bytes)
        json_object_set_new(params, "msg_size_bytes", json_integer((json_int_t)ro->msg_size_bytes));
    if (ro->udp_rate_bps)
        json_object_set_new(params, "udp_rate_bps", json_integer((json_int_t)ro->udp_rate_bps));
    if (ro->local)
        json_object_set_new(params, "mtu", json_integer(ro->mtu));
    if (ro->n_netpol_rules) {
        json_t *sizes = json_array();
        for (size_t i = 0; i < ro->n_netpol_rules; i++)
            json_array_append_new(sizes, json_integer(ro->netpol_rules[i]));
        json_object_set_new(params, "netpol_rules", sizes);
    }
    json_object_set_new(md, "params", params);
}

static void merge_describe(json_t *md, struct backend *b)
{
    json_t *d = b->ops->describe(b);
    const char *key;
    json_t *v;

    json_object_foreach(d, key, v) json_object_set(md, key, v);
    json_decref(d);
}

/* metadata.readiness from the backend's pod readiness records, when it measures them */
static void add_readiness(json_t *md, struct backend *b)
{
    json_t *pods = b->ops->readiness ? b->ops->readiness(b) : NULL;

    if (pods)
        json_object_set_new(md, "readiness", readiness_metadata(pods));
    json_decref(pods);
}

/* ---- one step ---- */

/* Short result of a client document for the progress line: the first result's key figure. */
static void summarize(const json_t *doc, char *buf, size_t len)
{
    const json_t *results = json_object_get(doc, "results");
    const json_t *errors = json_object_get(doc, "errors");
    const json_t *r = json_array_get(results, json_array_size(results) - 1);
    const json_t *lat = json_object_get(r, "latency_us");
    const json_t *tp = json_object_get(r, "throughput_mbps");

    buf[0] = '\0';
    if (json_array_size(errors) > 0) {
        const char *e = json_string_value(json_object_get(json_array_get(errors, 0), "error"));
        snprintf(buf, len, "%s", e ? e : "error");
    } else if (lat && json_is_number(json_object_get(lat, "p50"))) {
        const json_t *load = json_object_get(json_object_get(r, "load"), "throughput_mbps");
        char rate[32] = "";
        if (json_is_number(load)) /* TCP_RR_LOADED: and what loaded the path */
            units_format_rate(json_number_value(load) * 1e6, rate, sizeof(rate));
        snprintf(
            buf, len, "p50 %.1f us, %.0f op/s%s%s", json_number_value(json_object_get(lat, "p50")),
            json_number_value(json_object_get(r, "ops_per_sec")), rate[0] ? " under " : "", rate);
    } else if (json_is_number(tp)) {
        units_format_rate(json_number_value(tp) * 1e6, buf, len);
    }
}

struct step {
    json_t *md; /* the report's metadata (borrowed): where the external host's facts go */
    const struct plan_group *g;
    struct report_group *rg; /* where the group's results go (borrowed from the report) */
    const char *head;        /* the label's scenario and placement columns, made per group */
    bool *measured; /* per test of the group: a sample was taken (not cut by an interrupt) */
    const enum test_kind *tests;
    size_t n_tests;
    int samples;
};

static void step_label(const struct step *s, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s", s->head);

    for (size_t i = 0; i < s->n_tests && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "",
                                testkind_name(s->tests[i]));
    if (s->g->reverse && off < len)
        snprintf(buf + off, len - off, " (reverse)");
}

/* Records a failed client run against every test of the step, in its direction. */
/* cause (may be NULL): why the cluster could not start the step's pod (the row's errors[]
 * entries carry it as "cause") */
static void step_error(const struct step *s, const char *msg, const char *cause)
{
    if (s->n_tests > 1 && !s->g->reverse) {
        report_group_error_cause(s->rg, msg, cause);
        return;
    }
    for (size_t i = 0; i < s->n_tests; i++)
        report_group_error_test_cause(s->rg, s->tests[i], msg, cause);
}

/* counts a failure the backend puts on the cluster (backend_ops.failure_cause); its cause */
static const char *cluster_cause(struct backend *b, struct runner_outcome *out)
{
    const char *cause = b->ops->failure_cause ? b->ops->failure_cause(b) : NULL;

    if (!cause)
        return NULL;
    if (out->n_cluster_failed++ == 0)
        snprintf(out->cause, sizeof(out->cause), "%s", cause);
    return cause;
}

/* The external server's host facts (the agent document's "server_facts", FACTS in
 * docs/protocol.md) as metadata.external, once, beside the nodes: its name (the one given to
 * --external-server, else its host name), address, kernel, OS, CPUs and NIC. */
static void note_external(json_t *md, const struct run_options *ro, const json_t *doc)
{
    static const char *const keys[] = {"kernel",    "os_image",  "cpus",
                                       "cpu_model", "interface", "net"};
    const json_t *f = json_object_get(doc, "server_facts");
    const json_t *server = json_object_get(doc, "server");
    const char *host = json_string_value(json_object_get(server, "host"));
    json_t *ext;

    if (!md || !json_is_object(f) || json_object_get(md, "external"))
        return;
    ext = json_object();
    if (ro->external_name)
        json_object_set_new(ext, "name", json_string(ro->external_name));
    else if (json_is_string(json_object_get(f, "hostname")))
        json_object_set(ext, "name", json_object_get(f, "hostname"));
    json_object_set_new(ext, "role", json_string("external server"));
    if (json_is_string(json_object_get(f, "hostname")))
        json_object_set(ext, "hostname", json_object_get(f, "hostname"));
    if (host)
        json_object_set_new(ext, "address", json_string(host));
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (json_object_get(f, keys[i]))
            json_object_set(ext, keys[i], json_object_get(f, keys[i]));
    json_object_set_new(md, "external", ext);
}

/* The smallest CPU quota the client of doc was held to in a stream test (results[].placement
 * .client_cpu_quota_millicores), 0 when none. */
static unsigned doc_cpu_quota(const json_t *doc)
{
    const json_t *r;
    size_t i;
    unsigned min = 0;

    json_array_foreach(json_object_get(doc, "results"), i, r)
    {
        json_int_t q = json_integer_value(
            json_object_get(json_object_get(r, "placement"), "client_cpu_quota_millicores"));
        if (q > 0 && q <= UINT_MAX && (!min || (unsigned)q < min))
            min = (unsigned)q;
    }
    return min;
}

/* A backend that knows a document's errors are the cluster's (a sweep pair against a node
 * whose CNI went down) marks them "cause"; the agent schema has no such field, so it is taken
 * off here (into cause, "" when none) and put on the report's rows after the document. */
static void take_cause(json_t *doc, char *cause, size_t len)
{
    size_t i;
    json_t *e;

    *cause = '\0';
    json_array_foreach(json_object_get(doc, "errors"), i, e)
    {
        const char *c = json_string_value(json_object_get(e, "cause"));
        if (c && !*cause)
            snprintf(cause, len, "%s", c);
        json_object_del(e, "cause");
    }
}

/* Runs one client for step s; adds its document or error to the step's report group, and
 * counts a client held to a CPU quota in out. Returns true when ok. */
static bool run_step(struct backend *b, const struct step *s, struct progress *pg,
                     const struct run_options *ro, struct runner_outcome *out)
{
    unsigned quota;
    const struct plan_group *g = s->g;
    uint64_t per = ro->duration_ms + ro->omit_ms;
    struct run_spec spec;
    struct kp_err err = {{0}};
    json_t *doc = NULL;
    char label[256], result[256], cause[32];
    bool ok = false;

    run_spec_init(&spec, ro, g, s->tests, s->n_tests, s->samples);
    spec.timeout_ms = per * s->n_tests * (uint64_t)s->samples + ro->timeout_ms;
    step_label(s, label, sizeof(label));
    progress_begin(pg, label, s->n_tests * (size_t)s->samples, per * s->n_tests * s->samples);
    if (b->ops->run_client(b, &spec, &doc, &err) != 0) {
        if (check_lost(b))
            kp_err_set(&err, "%s", lost_reason);
        else if (!sig_first) /* an interrupted measurement is not an error of the row */
            step_error(s, kp_err_msg(&err), cluster_cause(b, out));
        progress_end(pg, false, kp_err_msg(&err));
        return false;
    }
    if (s->g->scenario == SCENARIO_POD_TO_EXTERNAL)
        note_external(s->md, ro, doc);
    quota = doc_cpu_quota(doc);
    if (quota) {
        out->n_cpu_limited++;
        if (!out->min_cpu_quota_millis || quota < out->min_cpu_quota_millis)
            out->min_cpu_quota_millis = quota;
    }
    take_cause(doc, cause, sizeof(cause));
    if (report_group_add_doc(s->rg, doc, &err) != 0) {
        step_error(s, kp_err_msg(&err), NULL);
        progress_end(pg, false, kp_err_msg(&err));
    } else {
        summarize(doc, result, sizeof(result));
        ok = json_array_size(json_object_get(doc, "errors")) == 0;
        if (!ok && *cause) { /* the backend put the document's errors on the cluster */
            if (out->n_cluster_failed++ == 0)
                snprintf(out->cause, sizeof(out->cause), "%s", cause);
            for (size_t i = 0; i < s->n_tests; i++)
                report_group_tag_cause(s->rg, s->tests[i], cause);
        }
        progress_end(pg, ok, result);
    }
    json_decref(doc);
    return ok;
}

/* --samples auto: one sample at a time until every test's interval is narrow enough. */
static bool auto_done(const struct step *s)
{
    for (size_t i = 0; i < s->n_tests; i++)
        if (!report_group_ci_narrow_enough(s->rg, s->tests[i], AUTO_CI_PCT))
            return false;
    return true;
}

static void mark_measured(struct step *s, bool ok)
{
    if (!ok && halted())
        return; /* cut short by the interrupt: listed as not run */
    for (size_t i = 0; i < s->n_tests; i++)
        s->measured[s->tests + i - s->g->tests] = true;
}

static void run_chunk(struct backend *b, struct step *s, struct progress *pg,
                      const struct runner_opts *o, struct runner_outcome *out)
{
    const struct run_options *ro = o->ro;
    bool ok;

    if (!ro->samples_auto) {
        s->samples = ro->samples;
        out->n_client_runs++;
        ok = run_step(b, s, pg, ro, out);
        out->n_failed += !ok && !halted();
        mark_measured(s, ok);
        return;
    }
    s->samples = 1;
    for (int k = 0; k < ro->samples_max && !halted(); k++) {
        if (k >= ro->samples && auto_done(s))
            break;
        if (k >= ro->samples) /* beyond the planned minimum */
            progress_add_total(pg, s->n_tests, (ro->duration_ms + ro->omit_ms) * s->n_tests);
        out->n_client_runs++;
        ok = run_step(b, s, pg, ro, out);
        out->n_failed += !ok && !halted();
        mark_measured(s, ok || k > 0);
        if (!ok)
            break;
    }
}

static void run_group(struct backend *b, const struct plan_group *g, struct report_group *rg,
                      bool *measured, struct progress *pg, const struct runner_opts *o,
                      struct runner_outcome *out, json_t *md, bool second_look)
{
    char head[256]; /* as long as the label: truncates where the label would */
    struct step s = {.md = md, .g = g, .rg = rg, .head = head, .measured = measured};

    /* columns, so that the finished lines on a terminal line up */
    snprintf(head, sizeof(head), "%-15s %-10s %s%s", plan_scenario_name(g->scenario),
             g->placement_label, g->ip_family ? g->ip_family : "", g->ip_family ? " " : "");

    if (b->ops->batches_tests) {
        s.tests = g->tests;
        s.n_tests = g->n_tests;
        run_chunk(b, &s, pg, o, out);
    }
    for (size_t i = 0; i < g->n_tests && !halted() && !b->ops->batches_tests; i++) {
        s.tests = &g->tests[i];
        s.n_tests = 1;
        run_chunk(b, &s, pg, o, out);
    }
    /* --capacity: the ramp, after the row (not again in a sweep's second look: the first
     * pass's ramp stands) */
    for (size_t i = 0; i < g->n_tests && o->ro->capacity && !halted() && !second_look; i++)
        if (g->tests[i] == TEST_TCP_CRR)
            (void)capacity_ramp_run(b, o->ro, g, rg, pg, head, halted);
}

/* ---- the run ---- */

/* The report group of every plan group, made once the plan is final (prepare may expand it,
 * plan_expand_sweep). An array parallel to the plan's groups rather than a field of struct
 * plan_group: the plan knows nothing of reports (plan.h), and the runner is where the two
 * meet. Caller frees the array (the groups belong to the report). */
static struct report_group **report_groups(const struct plan *plan, struct report *rep)
{
    size_t n = plan_group_count(plan);
    struct report_group **rgs = kp_xcalloc(n + 1, sizeof(*rgs));

    for (size_t i = 0; i < n; i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        rgs[i] = report_group_get_family(rep, plan_scenario_name(g->scenario), g->placement_label,
                                         g->ip_family, g->reverse);
    }
    return rgs;
}

/* One line on stderr for group i, skipped (at set-up, or while the run goes on: a node gone
 * NotReady): the report lists it too, but a person watching the run learns it as it happens.
 * A reverse group skipped for its forward group's reason adds no line. */
static void say_skip(const struct plan *plan, size_t i, enum kp_log_level level)
{
    const struct plan_group *g = plan_group_get(plan, i);
    const struct plan_group *prev = i > 0 ? plan_group_get(plan, i - 1) : NULL;

    if (g->reverse && prev && prev->skipped && prev->scenario == g->scenario &&
        strcmp(prev->placement_label, g->placement_label) == 0 &&
        strcmp(prev->skip_reason, g->skip_reason) == 0)
        return;
    kp_log(level, "skipped %s %s%s%s%s: %s", plan_scenario_name(g->scenario), g->placement_label,
           g->ip_family ? " " : "", g->ip_family ? g->ip_family : "",
           g->reverse ? " (reverse)" : "", g->skip_reason);
}

/* Skips in the report: one line per skipped group; a reverse group skipped for the same
 * reason as its forward group adds nothing (one line already covers the placement). */
static void add_skips(const struct plan *plan, struct report_group *const *rgs)
{
    const struct plan_group *prev = NULL;

    for (size_t i = 0; i < plan_group_count(plan); prev = plan_group_get(plan, i), i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        if (!g->skipped)
            continue;
        /* a sweep pair is skipped for its node (NotReady, tainted): worth a warning; the other
         * skips are choices (no --external-server) or said by the backend already */
        say_skip(plan, i, g->placement == PLACEMENT_NODE ? KP_LOG_WARN : KP_LOG_INFO);
        if (!g->reverse) {
            report_group_skip(rgs[i], g->skip_reason);
            continue;
        }
        if (prev && prev->skipped && prev->scenario == g->scenario &&
            strcmp(prev->placement_label, g->placement_label) == 0 &&
            strcmp(prev->skip_reason, g->skip_reason) == 0)
            continue;
        for (size_t t = 0; t < g->n_tests; t++)
            report_group_skip_test(rgs[i], g->tests[t], g->skip_reason);
    }
}

/* Lists what an interrupt left unmeasured (never dropped silently). */
static void skip_unmeasured(const struct plan_group *g, struct report_group *rg,
                            const bool *measured)
{
    const char *why = sig_first ? "not run: interrupted" : "not run: the run stopped early";
    bool any = false;

    for (size_t t = 0; t < g->n_tests; t++)
        any = any || measured[t];
    if (!any && !g->reverse) { /* one line for a whole group */
        report_group_skip(rg, why);
        return;
    }
    for (size_t t = 0; t < g->n_tests; t++)
        if (!measured[t])
            report_group_skip_test(rg, g->tests[t], why);
}

static void run_groups(struct backend *b, const struct plan *plan, struct report_group *const *rgs,
                       struct progress *pg, const struct runner_opts *o, struct runner_outcome *out,
                       json_t *md)
{
    struct runner_netpol policy = {0};
    struct runner_services svc = {0};
    size_t n = plan_group_count(plan);
    bool *measured = kp_xcalloc(n * TEST_COUNT + 1, sizeof(bool)); /* ours: freed below */
    bool *was_skipped = kp_xcalloc(n + 1, sizeof(bool));           /* ours: freed below */

    for (size_t i = 0; i < n; i++)
        was_skipped[i] = plan_group_get(plan, i)->skipped;
    for (size_t i = 0; i < n && !halted(); i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        if (!g->skipped) {
            if (runner_netpol_ready(b, g->netpol_rules, rgs[i], &policy, out) &&
                runner_services_ready(b, g, rgs[i], &svc, out, md))
                run_group(b, g, rgs[i], &measured[i * TEST_COUNT], pg, o, out, md, false);
        } else if (!was_skipped[i]) {
            /* skipped by the backend while running (a sweep node that went NotReady) */
            say_skip(plan, i, KP_LOG_WARN);
            if (g->reverse)
                for (size_t t = 0; t < g->n_tests; t++)
                    report_group_skip_test(rgs[i], g->tests[t], g->skip_reason);
            else
                report_group_skip(rgs[i], g->skip_reason);
            was_skipped[i] = true;
        }
    }
    if (!halted()) /* its counters read, the policy goes before the readiness pods come */
        (void)runner_netpol_ready(b, 0, NULL, &policy, out);
    for (size_t i = 0; i < n && halted(); i++) /* skipped after the interrupt: listed too */
        if (plan_group_get(plan, i)->skipped && !was_skipped[i])
            report_group_skip(rgs[i], plan_group_get(plan, i)->skip_reason);
    free(was_skipped);
    for (size_t i = 0; i < n && halted(); i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        if (!g->skipped)
            skip_unmeasured(g, rgs[i], &measured[i * TEST_COUNT]);
    }
    free(measured);
}

/* ---- a second look at a sweep's outliers ---- */

static bool in_names(const json_t *names, const char *name)
{
    size_t i;
    const json_t *v;

    json_array_foreach(names, i, v)
    {
        if (name && json_string_value(v) && strcmp(json_string_value(v), name) == 0)
            return true;
    }
    return false;
}

/* the nodes to look at again: the first `cap` outliers and suspects of the verdict so far (new
 * array) */
static json_t *outliers_to_confirm(struct report *rep, int cap)
{
    const json_t *sweep = json_object_get(report_metadata(rep), "sweep");
    const json_t *outliers;
    json_t *names = json_array();
    struct kp_err err = {{0}};
    size_t i;
    const json_t *v;

    if (report_finish(rep, &err) != 0) { /* the verdict cannot be made: the cmd says why */
        kp_log(KP_LOG_DEBUG, "sweep: no second look: %s", kp_err_msg(&err));
        return names;
    }
    /* the outliers (to clear one that was slow once), then the suspects (an outlier only when
     * slow again), each list the worst first */
    for (int l = 0; l < 2; l++) {
        outliers = json_object_get(sweep, l ? "suspects" : "outliers");
        json_array_foreach(outliers, i, v)
        {
            if (json_array_size(names) < (size_t)cap)
                json_array_append(names, (json_t *)v);
        }
    }
    return names;
}

/* true when group g's pair has a node of `names` at one end (metadata.sweep.pairs) */
static bool pair_touches(const json_t *pairs, const struct plan_group *g, const json_t *names)
{
    size_t i;
    const json_t *p;

    if (g->skipped || g->placement != PLACEMENT_NODE || !g->node)
        return false;
    if (in_names(names, g->node))
        return true;
    json_array_foreach(pairs, i, p)
    {
        const char *c = json_string_value(json_object_get(p, "client"));
        if (c && strcmp(c, g->node) == 0 &&
            in_names(names, json_string_value(json_object_get(p, "server"))))
            return true;
    }
    return false;
}

/* A sweep's verdict from one short measurement per pair flags nodes whose pairs only shared
 * CPUs, links or a noisy moment with other pairs. So before the verdict the two pairs of each
 * flagged node (up to --confirm-outliers nodes) are measured once more, one pair at a time with
 * nothing else of kperf running, and the sample joins the row (latency histograms merge,
 * scalars take the median of samples: report.h). A slow node is slow again and stays flagged;
 * a node slow only the first time is no longer an outlier. The nodes looked at again are listed
 * in metadata.sweep.confirmed (returned: a new array; NULL outside a sweep or with
 * --confirm-outliers 0). After it, a flagged node not measured again is a suspect (outlier.h). */
static json_t *confirm_outliers(struct backend *b, const struct plan *plan,
                                struct report_group *const *rgs, struct report *rep,
                                struct progress *pg, const struct runner_opts *o,
                                struct runner_outcome *out)
{
    json_t *sweep = json_object_get(report_metadata(rep), "sweep");
    const json_t *pairs = json_object_get(sweep, "pairs");
    size_t n = plan_group_count(plan);
    json_t *names;
    bool *measured;

    if (!sweep || halted() || o->ro->confirm_outliers <= 0)
        return NULL; /* no second look: no "confirmed", the first verdict stands */
    names = outliers_to_confirm(rep, o->ro->confirm_outliers);
    if (json_array_size(names) == 0)
        return names;
    progress_phase(pg, "sweep: a second look at %zu flagged node%s, one pair at a time",
                   json_array_size(names), json_array_size(names) == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        if (pair_touches(pairs, g, names))
            progress_add_total(pg, g->n_tests * (size_t)o->ro->samples,
                               (o->ro->duration_ms + o->ro->omit_ms) * g->n_tests *
                                   (uint64_t)o->ro->samples);
    }
    measured = kp_xcalloc(TEST_COUNT, sizeof(bool)); /* the first pass marked them already */
    for (size_t i = 0; i < n && !halted(); i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        if (pair_touches(pairs, g, names))
            run_group(b, g, rgs[i], measured, pg, o, out, report_metadata(rep), true);
    }
    free(measured);
    return names;
}

static struct progress *progress_for(const struct plan *plan, const struct runner_opts *o)
{
    struct progress_opts po = {
        .out = o->progress_out ? o->progress_out : stderr,
        .tty = o->tty,
        .quiet = o->quiet,
        .total = plan_measurement_count(plan),
        .expected_total_ms = plan_expected_ms(plan),
    };

    return progress_new(&po);
}

int runner_run(struct backend *b, struct plan *plan, struct report *rep,
               const struct runner_opts *o, struct runner_outcome *out, struct kp_err *err)
{
    struct sig_saved saved = {0};
    struct progress *pg = NULL;
    struct report_group **rgs = NULL;
    char now[32], outcome[160];
    int rc = -1;

    memset(out, 0, sizeof(*out));
    lost_reason = NULL;
    if (o->handle_signals)
        signals_install(b, &saved);
    fill_metadata(report_metadata(rep), b, o->ro);
    pg = progress_for(plan, o);
    if (o->ro->netpol_readiness && !b->ops->netpol_readiness) {
        kp_err_set(err, "--netpol-readiness needs a cluster: run it without --local");
        goto cleanup;
    }
    if (runner_services_check(b, o->ro, err) != 0)
        goto cleanup;
    progress_phase(pg, "preparing the %s backend", b->ops->name);
    b->progress = pg;
    if (b->ops->prepare(b, plan, err) != 0) {
        if (check_lost(b))
            kp_err_set(err, "%s", lost_reason);
        else
            (void)cluster_cause(b, out);
        goto cleanup;
    }
    rc = 0;
    merge_describe(report_metadata(rep), b);
    rgs = report_groups(plan, rep); /* ours: freed below */
    add_skips(plan, rgs);
    progress_set_total(pg, plan_measurement_count(plan), plan_expected_ms(plan)); /* skips */
    run_groups(b, plan, rgs, pg, o, out, report_metadata(rep));
    if (json_object_get(report_metadata(rep), "sweep")) { /* nodes found NotReady while running */
        json_t *confirmed;
        merge_describe(report_metadata(rep), b);
        confirmed = confirm_outliers(b, plan, rgs, rep, pg, o, out);
        merge_describe(report_metadata(rep), b); /* and during the second look */
        if (confirmed)
            json_object_set_new(json_object_get(report_metadata(rep), "sweep"), "confirmed",
                                confirmed);
    }
    if (o->ro->netpol_readiness && !halted() && !check_lost(b)) {
        progress_phase(pg, "NetworkPolicy enforcement readiness");
        runner_netpol_readiness(b, report_metadata(rep), out);
    }
    add_readiness(report_metadata(rep), b);
    if (check_lost(b)) {
        kp_err_set(&out->stopped, "%s", lost_reason);
        out->n_failed++;
    }
cleanup:
    sig_cleaning = 1;
    progress_phase(pg, "cleaning up");
    if (b->ops->cleanup(b, &out->cleanup_err) != 0)
        out->cleanup_failed = true;
    out->signal = sig_first;
    runner_utc_now(now, sizeof(now));
    json_object_set_new(report_metadata(rep), "end_time", json_string(now));
    if (rc == 0) {
        struct kp_err ferr = {{0}};
        if (report_finish(rep, &ferr) != 0)
            kp_log(KP_LOG_WARN, "report: %s", kp_err_msg(&ferr));
    }
    snprintf(outcome, sizeof(outcome), "%s%s",
             out->signal
                 ? (out->signal == SIGINT ? "interrupted (SIGINT)" : "interrupted (SIGTERM)")
             : rc != 0 || lost_reason ? "failed"
                                      : "done",
             out->cleanup_failed ? ", cleanup incomplete" : "");
    if (rc == 0 || out->signal)
        progress_finish(pg, outcome); /* a failed prepare speaks through err alone */
    b->progress = NULL;
    progress_free(pg);
    free(rgs);
    if (rc != 0 && sig_first && !kp_err_is_set(err))
        kp_err_set(err, "interrupted");
    signals_restore(&saved);
    return rc;
}
