/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_run.c - 'kperf run': parse the flags (run_flags), pick the backend, run the plan
 * (runner), print the report and choose the exit code: 0 ok, 1 a measurement or the cleanup
 * failed, 2 usage, 4 the cluster could not start kperf's pods (no pod network, unschedulable,
 * an image that will not pull: the rows that could run are measured, the others carry the
 * cause), 130/143 interrupted by SIGINT/SIGTERM (the partial report is printed); the table is
 * docs/exit-status.md. A Pushgateway that fails after its retries is a warning: it never hides
 * the run's own status (the nightly's compare still runs). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "cmd/kperf/backend_pick.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/history_store.h"
#include "cmd/kperf/run_flags.h"
#include "cmd/kperf/verdict_out.h"
#include "controller/backend.h"
#include "controller/plan.h"
#include "controller/report/history.h"
#include "controller/report/pushgw.h"
#include "controller/report/report.h"
#include "controller/report/report_rotate.h"
#include "controller/report/verdict.h"
#include "controller/resolve.h"
#include "controller/run_options.h"
#include "controller/runner.h"

static bool stderr_is_tty(void)
{
    const char *term = getenv("TERM");

    return isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

/* Writes --output-dir, expanding {time}; with DIR/{time}, also points DIR/latest at the run
 * and applies --keep-runs. Returns 0 or -1 (error printed). */
static int write_output_dir(const struct report *rep, const struct run_options *ro)
{
    struct kp_err err = {{0}};
    const char *start =
        json_string_value(json_object_get(report_metadata_const(rep), "start_time"));
    char *dir = report_dir_expand(ro->output_dir, start), *slash;
    size_t removed = 0;
    int rc = -1;

    if (report_write_dir(rep, dir, &err) != 0) {
        fprintf(stderr, "kperf: error: %s. Pass a writable --output-dir.\n", kp_err_msg(&err));
        goto out;
    }
    kp_log(KP_LOG_INFO, "report written to %s/report.{json,md,csv,html}", dir);
    slash = strrchr(ro->output_dir, '/');
    if (strcmp(slash ? slash + 1 : ro->output_dir, REPORT_DIR_TIME) == 0) {
        slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        if (report_dir_rotate(slash ? dir : ".", slash ? slash + 1 : dir, ro->keep_runs, &removed,
                              &err) != 0) {
            fprintf(stderr, "kperf: error: --output-dir history: %s\n", kp_err_msg(&err));
            goto out;
        }
        if (removed)
            kp_log(KP_LOG_INFO, "--keep-runs %u: removed %zu older run folder(s)", ro->keep_runs,
                   removed);
    }
    rc = 0;
out:
    free(dir);
    return rc;
}

/* Prints the report on stdout, writes --output-dir and pushes to --push-gateway (each one
 * tried even when an earlier one failed). An interrupted run's report is partial: it is
 * printed and written, but it neither replaces the last full run's metrics in the gateway nor
 * enters the history that later runs are judged against. Returns 0 or -1 (errors printed). */
static int emit_report(const struct report *rep, const struct run_options *ro, bool complete,
                       int status)
{
    struct pushgw_opts po = {
        .password = ro->push_gateway_password, .run_status = status, .attempts = PUSHGW_ATTEMPTS};
    struct kp_err err = {{0}};
    int rc = 0;

    if (report_render(rep, (enum report_format)ro->output, stdout, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        rc = -1;
    }
    if (ro->output_dir && write_output_dir(rep, ro) != 0)
        rc = -1;
    if (!complete) {
        if (ro->push_gateway || ro->history_dir)
            fprintf(stderr, "kperf: the run was interrupted: its partial report is not pushed "
                            "to the gateway or kept in the history\n");
        return rc;
    }
    if (ro->push_gateway && pushgw_push_opts(rep, ro->push_gateway, &po, &err) != 0)
        fprintf(stderr, "kperf: warning: the metrics were not pushed: %s (exit status unchanged)\n",
                kp_err_msg(&err));
    if (ro->history_dir) {
        char *path = NULL;
        struct history_cluster hc = {ro->kubeconfig, ro->context, ro->namespace_name};
        if (history_store_add(ro->history_dir, &hc, rep, NULL,
                              ro->keep_runs ? ro->keep_runs : HISTORY_DEFAULT_KEEP, &path,
                              &err) != 0) {
            fprintf(stderr, "kperf: error: --history %s: %s\n", ro->history_dir, kp_err_msg(&err));
            rc = -1;
        } else {
            kp_log(KP_LOG_INFO, "report kept in the history as %s", path);
        }
        free(path);
    }
    return rc;
}

#define KPERF_EXIT_CLUSTER VERDICT_EXIT_CLUSTER /* docs/exit-status.md */

static int exit_code(int run_rc, const struct runner_outcome *out, const struct report *rep)
{
    if (out->signal)
        return 128 + out->signal;
    if (out->n_cluster_failed > 0)
        return KPERF_EXIT_CLUSTER;
    if (run_rc != 0 || out->cleanup_failed || out->n_failed > 0 || report_error_count(rep) > 0)
        return 1;
    return 0;
}

/* The run's termination message: "kperf: ok (exit 0): 6 rows measured" and the like. */
static void terminate(const struct run_options *ro, int code, const struct runner_outcome *out,
                      const struct report *rep, const struct kp_err *err)
{
    struct verdict_out vo = {.termination_path = ro->termination_message_path};
    char *line;

    if (out->n_cluster_failed)
        line = kp_xasprintf("kperf: %s (exit %d): the cluster could not start kperf's pods (%s): "
                            "%zu failure%s",
                            verdict_status_word(code), code, out->cause, out->n_cluster_failed,
                            out->n_cluster_failed == 1 ? "" : "s");
    else if (code > 128)
        line = kp_xasprintf("kperf: interrupted (exit %d)", code);
    else if (kp_err_is_set(err))
        line = kp_xasprintf("kperf: error (exit %d): %s", code, kp_err_msg(err));
    else
        line = kp_xasprintf("kperf: %s (exit %d): %zu row%s, %zu with errors",
                            verdict_status_word(code), code, report_row_count(rep),
                            report_row_count(rep) == 1 ? "" : "s", report_error_count(rep));
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    verdict_out_termination(&vo, line);
    free(line);
}

int cmd_run(int argc, char **argv)
{
    struct run_options ro;
    struct runner_outcome out = {0};
    struct plan_opts po;
    struct kp_err err = {{0}};
    struct backend *b = NULL;
    struct plan *plan = NULL;
    struct report *rep = NULL;
    int rc, code = 1;

    run_options_init(&ro);
    rc = run_flags_parse(&ro, argc, argv, &err);
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        else
            run_flags_help(stdout);
        run_options_cleanup(&ro);
        return rc < 0 ? 2 : 0;
    }
    /* the agent cannot resolve names: the controller does, once, before anything starts */
    if (resolve_external(&ro, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        run_options_cleanup(&ro);
        return 2;
    }
    if (backend_pick_check(&ro, &err) != 0 || /* a bad --local-fault SPEC is a usage error */
        (ro.history_dir && history_store_check(ro.history_dir, &err) != 0)) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        run_options_cleanup(&ro);
        return 2;
    }
    kp_log_set_level(ro.verbose >= 2 ? KP_LOG_DEBUG : ro.verbose == 1 ? KP_LOG_INFO : KP_LOG_WARN);
    b = backend_pick(&ro, &err);
    if (!b) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        goto out;
    }
    plan_opts_from_run_options(&ro, &po);
    plan = plan_new(&po);
    rep = report_new();
    struct runner_opts o = {
        .ro = &ro,
        .progress_out = stderr,
        .tty = stderr_is_tty() && ro.verbose == 0, /* -v lines would break a status line */
        .handle_signals = true,
    };
    if (ro.cluster_name)
        json_object_set_new(report_metadata(rep), "cluster", json_string(ro.cluster_name));
    rc = runner_run(b, plan, rep, &o, &out, &err);
    if (rc != 0 && !out.signal) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    } else if (emit_report(rep, &ro, out.signal == 0, exit_code(rc, &out, rep)) != 0) {
        rc = -1;
    }
    if (out.n_cpu_limited)
        fprintf(stderr,
                "kperf: warning: %zu client run%s held to a CPU limit (as low as %.3g CPU, "
                "placement.client_cpu_quota_millicores): stream rates measure that limit as much "
                "as the network; kperf's agents set none, so remove it (a LimitRange default in "
                "the namespace, or the cgroup kperf runs in)\n",
                out.n_cpu_limited, out.n_cpu_limited == 1 ? " was" : "s were",
                out.min_cpu_quota_millis / 1000.0);
    if (kp_err_is_set(&out.stopped))
        fprintf(stderr, "kperf: error: the run stopped: %s\n", kp_err_msg(&out.stopped));
    if (out.cleanup_failed)
        fprintf(stderr, "kperf: error: cleanup: %s\n", kp_err_msg(&out.cleanup_err));
    if (out.n_cluster_failed && !out.signal)
        fprintf(stderr,
                "kperf: error: the cluster could not start kperf's pods (%s%s): %zu "
                "failure%s not of the network measured (exit %d); the rows' errors say where\n",
                out.cause, out.n_cluster_failed > 1 ? ", ..." : "", out.n_cluster_failed,
                out.n_cluster_failed == 1 ? "" : "s", KPERF_EXIT_CLUSTER);
    code = exit_code(rc, &out, rep);
    terminate(&ro, code, &out, rep, rc != 0 ? &err : &out.stopped);
out:
    report_free(rep);
    plan_free(plan);
    if (b)
        b->ops->destroy(b);
    run_options_cleanup(&ro);
    return code;
}
