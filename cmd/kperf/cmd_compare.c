/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_compare.c - 'kperf compare BASE.json NEW.json [--threshold 5%] [-o FORMAT]': the nightly
 * "did it get slower" answer. Exit 0 = no regression, 3 = a regression beyond the threshold,
 * 5 = inconclusive (worse beyond a threshold but within the noise), 1 = unreadable or
 * mismatched files, 2 = usage (docs/exit-status.md). The work is in controller/report/compare.h;
 * the verdict's termination message, gauges and chat message in verdict_out.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/textsafe.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/history_store.h"
#include "cmd/kperf/judge_flags.h"
#include "cmd/kperf/verdict_out.h"
#include "controller/report/compare.h"
#include "controller/report/history.h"
#include "controller/report/notify.h"
#include "controller/report/pushgw.h"
#include "controller/report/render_openmetrics.h"
#include "controller/report/report.h"
#include "controller/report/verdict.h"

static const char usage_text[] =
    "Usage: kperf compare BASE.json NEW.json [--threshold latency=5%,loss=0.1pp]\n"
    "                     [--thresholds FILE] [-o table|markdown|json|html]\n"
    "       kperf compare --baseline DIR|configmap:NAME [--runs 5] [--first-run-ok] [--strict]\n"
    "                     NEW.json\n"
    "       (either form: [--strict-evidence] [--push-gateway URL] [--notify URL\n"
    "       [--report-url BASE]] [--termination-message-path FILE])\n\n"
    "Matches the rows of two reports by scenario, placement and test, shows the change of every\n"
    "metric (latency, op/s, conn/s, Mb/s, retransmits, UDP loss and jitter, CPU per Gbit/s) and\n"
    "marks it regression, improvement or within noise, decided from the samples, or with\n"
    "--baseline from the spread between earlier runs (method: docs/compare.md). Differences in\n"
    "nodes, kernel, MTU and versions are listed first.\n";

struct compare_flags {
    struct judge_flags judge; /* first: the shared setters' context (judge_flags.h) */
    enum report_format fmt;
    const char *files[2]; /* BASE.json, NEW.json; borrowed from argv */
    int n_files;
    const char *baseline; /* --baseline DIR: NEW.json only */
    const char *cluster;  /* --cluster NAME, the history key */
    bool first_run_ok;    /* --first-run-ok: no comparable run yet is exit 0 */
    bool strict;          /* --strict: an unreadable run in DIR fails instead of being skipped */
    struct history_cluster hc;      /* --kubeconfig, --context, -n: where configmap:NAME is */
    const char *push_password_file; /* --push-gateway-password-file FILE */
    struct verdict_out out;         /* --termination-message-path, --push-gateway, --notify */
};

static int set_push(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;

    (void)fl;
    f->out.push_gateway = v;
    return pushgw_url_check(v, err);
}

static int set_notify(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;

    (void)fl;
    f->out.notify_url = v;
    return notify_url_check(v, err);
}

static int set_alpha(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;
    char *end;

    (void)fl;
    f->judge.opts.alpha = strtod(v, &end);
    if (*end || !(f->judge.opts.alpha > 0 && f->judge.opts.alpha < 1))
        return kp_err_set(err, "--alpha: '%s' is not a number between 0 and 1", v);
    return 0;
}

static int set_output(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;

    (void)fl;
    if (report_format_parse(v, &f->fmt, err) != 0 ||
        (f->fmt != REPORT_TABLE && f->fmt != REPORT_MARKDOWN && f->fmt != REPORT_JSON &&
         f->fmt != REPORT_HTML))
        return kp_err_set(err, "--output: compare prints table, markdown, json or html, not '%s'",
                          v);
    return 0;
}

static int add_file(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;

    (void)fl, (void)err;
    if (f->n_files < 2)
        f->files[f->n_files] = v;
    f->n_files++; /* more than two: refused after the parse */
    return 0;
}

static const struct flag flag_table[] = {
    {.name = "threshold",
     .short_name = 't',
     .arg = "SPEC",
     .help = "smallest change that counts: 5% for all, or latency=5%,loss=0.1pp,... "
             "(defaults: docs/compare.md)",
     .fn = judge_set_threshold},
    {.name = "thresholds",
     .arg = "FILE",
     .help = "thresholds from a YAML mapping (latency: 5%)",
     .fn = judge_set_thresholds_file},
    {.name = "baseline",
     .arg = "DIR",
     .help = "judge NEW.json against the last runs in a history directory\n(kperf history), "
             "or in ConfigMaps: configmap:NAME (kperf run\n--history configmap:NAME)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, baseline)},
    {.name = "runs",
     .arg = "N",
     .help = "with --baseline: how many earlier comparable runs (default 5)",
     .fn = judge_set_runs},
    {.name = "first-run-ok",
     .help = "with --baseline: no comparable run in DIR yet (the first\nnight) is exit 0, not 1",
     .kind = FLAG_BOOL,
     .offset = offsetof(struct compare_flags, first_run_ok)},
    {.name = "strict",
     .help = "with --baseline: an unreadable run in DIR is an error, not\nskipped with a warning",
     .kind = FLAG_BOOL,
     .offset = offsetof(struct compare_flags, strict)},
    {.name = "strict-evidence",
     .help = "no verdict for a row whose drop, shaping or overflow\ncounters moved, or whose path "
             "was a path MTU black hole,\non either side (exit 1 naming them)",
     .kind = FLAG_BOOL,
     .offset = offsetof(struct compare_flags, judge.opts.strict_evidence)},
    {.name = "cluster",
     .arg = "NAME",
     .help = "the cluster of the history key (--baseline) and of the\npushed gauges (default: "
             "the report's)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, cluster)},
    {.name = "kubeconfig",
     .arg = "FILE",
     .help = "with --baseline configmap:NAME: the cluster's kubeconfig\n(default $KUBECONFIG, "
             "~/.kube/config, in-cluster)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, hc.kubeconfig)},
    {.name = "context",
     .arg = "NAME",
     .help = "with --baseline configmap:NAME: the kubeconfig context",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, hc.context)},
    {.name = "namespace",
     .short_name = 'n',
     .arg = "NS",
     .help = "with --baseline configmap:NAME: its namespace (default the\ncontext's)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, hc.ns)},
    {.name = "termination-message-path",
     .arg = "FILE",
     .help = "write the one-line verdict there (default: /dev/termination-log\nin a pod; '' none)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, out.termination_path)},
    {.name = "push-gateway",
     .arg = "URL",
     .help = "push kperf_verdict per row and kperf_compare_status (retried;\na failure warns)",
     .fn = set_push},
    {.name = "push-gateway-password-file",
     .arg = "FILE",
     .help = "the gateway's basic-auth password (docs/prometheus.md)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, push_password_file)},
    {.name = "notify",
     .arg = "URL",
     .help = "POST a Slack-compatible message with the verdict (retried; a\nfailure warns)",
     .fn = set_notify},
    {.name = "report-url",
     .arg = "BASE",
     .help = "with --notify: link BASE/report.html and BASE/compare.html",
     .kind = FLAG_STRING,
     .offset = offsetof(struct compare_flags, out.report_url)},
    {.name = "alpha",
     .arg = "P",
     .help = "significance level of the tests (default 0.05)",
     .fn = set_alpha},
    {.name = "output",
     .short_name = 'o',
     .arg = "FORMAT",
     .help = "table (default), markdown, json or html (base vs new side\nby side, one page)",
     .fn = set_output},
    {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
    {.fn = add_file}, /* BASE.json NEW.json */
};

const struct flag *cmd_compare_flags(size_t *n)
{
    *n = sizeof(flag_table) / sizeof(flag_table[0]);
    return flag_table;
}

static const char *const untitled[] = {NULL};

/* Parses argv into f. Returns 0, 1 for --help (printed), or -1 with err (a usage error). */
static int parse_flags(int argc, char **argv, struct compare_flags *f, struct kp_err *err)
{
    struct flags_cmd cmd = {
        .name = "kperf compare",
        .usage = usage_text,
        .groups = untitled,
        .n_groups = 1,
        .footer = "\nExit status: 0 no regression, 3 regression beyond the threshold, 5 "
                  "inconclusive\n(worse beyond the threshold, within the noise), 1 error, 2 "
                  "usage (docs/exit-status.md).\n",
        .help_width = 22,
        .tables = {{flag_table, sizeof(flag_table) / sizeof(flag_table[0]), f}},
    };
    int rc = flags_parse(&cmd, argc, argv, NULL, err);

    if (rc == 1)
        flags_help(stdout, &cmd);
    if (rc == 0 && !f->baseline && f->n_files != 2) {
        kp_err_set(err, "'kperf compare' takes BASE.json and NEW.json");
        return flags_hint(&cmd, err);
    }
    if (rc == 0 && (f->first_run_ok || f->strict) && !f->baseline) {
        kp_err_set(err, "--%s applies to --baseline DIR only",
                   f->first_run_ok ? "first-run-ok" : "strict");
        return flags_hint(&cmd, err);
    }
    if (rc == 0 && (f->hc.kubeconfig || f->hc.context || f->hc.ns) &&
        !(f->baseline && history_store_in_cluster(f->baseline))) {
        kp_err_set(err, "--kubeconfig, --context and --namespace apply to --baseline "
                        "configmap:NAME only");
        return flags_hint(&cmd, err);
    }
    if (rc == 0 && f->baseline && history_store_check(f->baseline, err) != 0)
        return flags_hint(&cmd, err);
    if (rc == 0 && f->out.report_url && !f->out.notify_url) {
        kp_err_set(err, "--report-url applies to --notify URL only");
        return flags_hint(&cmd, err);
    }
    if (rc == 0 && f->baseline && f->n_files != 1) {
        kp_err_set(err, "'kperf compare --baseline DIR' takes NEW.json only");
        return flags_hint(&cmd, err);
    }
    return rc;
}

/* --baseline DIR NEW.json: the last f->judge.runs readable comparable runs of the history,
 * oldest first; an unreadable one is skipped with a warning (or fails with --strict). */
static struct compare *against_history(const struct compare_flags *f, const struct report *cur,
                                       bool *first_run, struct kp_err *err)
{
    struct history_store_runs hs;
    struct history_runs h;
    struct compare *cmp = NULL;
    char *key;

    if (history_store_load(f->baseline, &f->hc, cur, f->cluster, (size_t)f->judge.runs, f->strict,
                           &hs, err) != 0) {
        history_store_runs_free(&hs);
        return NULL;
    }
    h = hs.runs;
    key = history_key(cur, f->cluster);
    for (size_t i = 0; i < h.n_skipped; i++)
        judge_warn_skipped(h.skipped[i], h.why[i]);
    if (h.n == 0 && f->first_run_ok && h.n_skipped == 0) {
        fprintf(stderr,
                "kperf: %s has no earlier run comparable with %s yet (%.*s): the first run, "
                "nothing to judge\n",
                f->baseline, f->files[0], (int)(strrchr(key, '/') - key), key);
        *first_run = true;
        goto out;
    }
    if (h.n == 0) {
        kp_err_set(err,
                   "%s has no earlier %srun comparable with %s (same cluster, node pair and CNI: "
                   "%.*s)",
                   f->baseline, h.n_skipped ? "readable " : "", f->files[0],
                   (int)(strrchr(key, '/') - key), key);
        goto out;
    }
    fprintf(stderr, "kperf: judging %s against %zu earlier run%s of %.*s in %s", f->files[0], h.n,
            h.n == 1 ? "" : "s", (int)(strrchr(key, '/') - key), key, f->baseline);
    if (h.n_skipped)
        fprintf(stderr, " (%zu unreadable skipped)", h.n_skipped);
    fputc(':', stderr);
    for (size_t i = 0; i < h.n; i++) { /* which runs, oldest first: a bad night can be found */
        char safe[256];
        const char *slash = strrchr(h.paths[i], '/');
        fprintf(stderr, " %s", textsafe(slash ? slash + 1 : h.paths[i], safe, sizeof(safe)));
    }
    fputc('\n', stderr);
    cmp = compare_history((const struct report *const *)h.reps, h.n, cur, &f->judge.opts, err);
    if (cmp)
        compare_note_baseline(cmp, h.n, h.n_skipped);
out:
    history_store_runs_free(&hs);
    free(key);
    return cmp;
}

/* The termination message of a comparison that could not be made (exit 1): its reason. */
static void terminate_error(const struct compare_flags *f, const struct kp_err *err)
{
    char *line = kp_xasprintf("kperf: error (exit 1): %s", kp_err_msg(err));

    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    verdict_out_termination(&f->out, line);
    free(line);
}

/* The comparison to render: NEW against the history (--baseline) or BASE against NEW. NULL with
 * the error printed (*first_run set when there is nothing to judge yet: exit 0). */
static struct compare *make_compare(struct compare_flags *f, struct report **base,
                                    struct report **cur, bool *first_run, struct kp_err *err)
{
    struct compare *cmp;

    if (f->baseline) {
        if (!(*cur = report_load(f->files[0], err))) {
            fprintf(stderr, "kperf: error: %s. Compare a report.json of 'kperf run'.\n",
                    kp_err_msg(err));
            return NULL;
        }
        if (!(cmp = against_history(f, *cur, first_run, err)) && !*first_run)
            fprintf(stderr, "kperf: error: --baseline: %s\n", kp_err_msg(err));
        return cmp;
    }
    if (!(*base = report_load(f->files[0], err)) || !(*cur = report_load(f->files[1], err))) {
        fprintf(stderr, "kperf: error: %s. Compare two report.json files of 'kperf run'.\n",
                kp_err_msg(err));
        return NULL;
    }
    cmp = compare_reports(*base, *cur, &f->judge.opts, err);
    if (!cmp)
        fprintf(stderr, "kperf: error: comparing %s with %s: %s\n", f->files[0], f->files[1],
                kp_err_msg(err));
    return cmp;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_flags f = {.fmt = REPORT_TABLE, .judge.runs = 5};
    struct kp_err err = {{0}};
    struct report *base = NULL, *cur = NULL;
    struct compare *cmp = NULL;
    char *password = NULL;
    bool first_run = false;
    json_t *doc = NULL;
    int rc;

    compare_opts_init(&f.judge.opts);
    rc = parse_flags(argc, argv, &f, &err);
    if (rc == 0 && f.out.push_gateway &&
        pushgw_password(f.push_password_file, &password, &err) != 0) {
        kp_err_prefix(&err, "--push-gateway-password-file");
        rc = -1;
    }
    if (rc < 0)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    if (rc != 0) {
        kp_free_secret(password);
        return rc == 1 ? 0 : 2;
    }
    f.out.push_password = password;
    rc = VERDICT_EXIT_ERROR;
    if (!(cmp = make_compare(&f, &base, &cur, &first_run, &err))) {
        if (first_run) {
            verdict_out_termination(&f.out, "kperf: ok (exit 0): the first run, nothing to judge "
                                            "against yet");
            rc = VERDICT_EXIT_OK;
        } else {
            terminate_error(&f, &err);
        }
        goto out;
    }
    if (compare_render(cmp, f.fmt, stdout, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        goto out;
    }
    doc = compare_to_json(cmp);
    rc = verdict_status(doc);
    if (compare_refused_count(cmp) > 0) {
        size_t n = compare_refused_count(cmp), holes = compare_refused_pmtu_count(cmp);
        fprintf(stderr,
                "kperf: error: %zu row%s cannot be judged: %s (listed after the table; "
                "--strict-evidence). Remove the cause and run again, or compare without "
                "--strict-evidence\n",
                n, n == 1 ? "" : "s",
                holes == 0 ? "drop, shaping or overflow counters moved"
                : holes == n
                    ? "path MTU black hole"
                    : "drop, shaping or overflow counters moved, or a path MTU black hole");
        rc = 1;
    }
    verdict_out_compare(
        &f.out, doc, f.cluster && f.cluster[0] ? f.cluster : render_openmetrics_cluster(cur), rc);
out:
    json_decref(doc);
    compare_free(cmp);
    report_free(cur);
    report_free(base);
    kp_free_secret(password);
    return rc;
}
