/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_history.c - 'kperf history add DIR REPORT.json', 'kperf history list DIR' and 'kperf
 * history report DIR -o html': a directory of past reports keyed by cluster, node pair, CNI and
 * version (controller/report/history.h), which 'kperf compare --baseline DIR' judges new runs
 * against, and its trend page (history_html.h). Exit 0 ok, 1 error, 2 usage. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/flags.h"
#include "base/kp_err.h"
#include "base/textsafe.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/judge_flags.h"
#include "controller/report/compare.h"
#include "controller/report/history.h"
#include "controller/report/history_html.h"
#include "controller/report/report.h"

static const char usage_text[] =
    "Usage: kperf history add DIR REPORT.json [--keep 30] [--cluster NAME]\n"
    "       kperf history list DIR\n"
    "       kperf history report DIR -o html [--runs 5] [--threshold SPEC] [--strict]\n\n"
    "Keeps reports in DIR/<cluster>/<node pair>/<cni>/<version>/<start time>.json (each written\n"
    "whole or not at all; each version folder keeps its newest --keep runs). 'kperf compare\n"
    "--baseline DIR NEW.json' judges a run against the last comparable ones (docs/compare.md);\n"
    "'report' draws every metric of every row over the runs, regressions by the same rule marked.\n"
    "A run that cannot be read is skipped with a warning naming it, unless --strict.\n";

struct history_flags {
    struct judge_flags judge; /* first: the shared setters' context; report only */
    const char *args[3];      /* add DIR FILE / list DIR; borrowed from argv */
    int n_args;
    const char *cluster;
    long keep;
    bool strict; /* report: an unreadable run fails instead of being skipped */
};

static int set_output(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    (void)ctx, (void)fl;
    if (strcmp(v, "html") != 0)
        return kp_err_set(err, "--output: history report prints html, not '%s'", v);
    return 0;
}

static int set_keep(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct history_flags *f = ctx;
    char *end;

    (void)fl;
    f->keep = strtol(v, &end, 10);
    if (*end || end == v || f->keep < 1 || f->keep > 100000)
        return kp_err_set(err, "--keep: '%s' is not a number of runs from 1 to 100000", v);
    return 0;
}

static int add_arg(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct history_flags *f = ctx;

    (void)fl, (void)err;
    if (f->n_args < 3)
        f->args[f->n_args] = v;
    f->n_args++;
    return 0;
}

static const struct flag flag_table[] = {
    {.name = "keep",
     .arg = "N",
     .help = "runs kept per cluster, node pair, CNI and version (default 30)",
     .fn = set_keep},
    {.name = "cluster",
     .arg = "NAME",
     .help = "the cluster name of the key (default: the report's metadata.cluster, else backend)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct history_flags, cluster)},
    {.name = "runs",
     .arg = "N",
     .help = "report: judge each run against the N before it (default 5)",
     .fn = judge_set_runs},
    {.name = "threshold",
     .arg = "SPEC",
     .help = "report: thresholds as in kperf compare (latency=5%,loss=0.1pp)",
     .fn = judge_set_threshold},
    {.name = "thresholds",
     .arg = "FILE",
     .help = "report: thresholds from a YAML mapping (latency: 5%)",
     .fn = judge_set_thresholds_file},
    {.name = "strict",
     .help = "report: an unreadable run is an error, not skipped with a\nwarning",
     .kind = FLAG_BOOL,
     .offset = offsetof(struct history_flags, strict)},
    {.name = "output",
     .short_name = 'o',
     .arg = "FORMAT",
     .help = "report: html (the trend page, the only format)",
     .fn = set_output},
    {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
    {.fn = add_arg}, /* add DIR FILE | list DIR | report DIR */
};

const struct flag *cmd_history_flags(size_t *n)
{
    *n = sizeof(flag_table) / sizeof(flag_table[0]);
    return flag_table;
}

static const char *const untitled[] = {NULL};

static int list(const char *dir)
{
    struct kp_err err = {{0}};
    char **paths;
    long n = history_list(dir, &paths, &err);
    size_t skip = strlen(dir) + 1;
    char safe[1024];

    if (n < 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        return 1;
    }
    printf("%ld run%s in %s (cluster/node pair/cni/version/run)\n", n, n == 1 ? "" : "s",
           textsafe(dir, safe, sizeof(safe)));
    for (long i = 0; i < n; i++)
        printf("%s\n", textsafe(paths[i] + skip, safe, sizeof(safe)));
    history_paths_free(paths, n);
    return 0;
}

static int add(const struct history_flags *f)
{
    struct kp_err err = {{0}};
    struct report *rep = report_load(f->args[2], &err);
    char *path = NULL;

    if (!rep) {
        fprintf(stderr, "kperf: error: %s. Add a report.json of 'kperf run'.\n", kp_err_msg(&err));
        return 1;
    }
    if (history_add(f->args[1], rep, f->cluster, (size_t)f->keep, &path, &err) != 0) {
        fprintf(stderr, "kperf: error: history %s: %s\n", f->args[1], kp_err_msg(&err));
        report_free(rep);
        return 1;
    }
    printf("%s\n", path);
    free(path);
    report_free(rep);
    return 0;
}

static void warn_skip(const char *path, const char *why, void *arg)
{
    (void)arg;
    judge_warn_skipped(path, why);
}

static int trend(const struct history_flags *f)
{
    struct kp_err err = {{0}};
    struct history_trend_opts o = {.compare = &f->judge.opts,
                                   .runs = (size_t)f->judge.runs,
                                   .strict = f->strict,
                                   .on_skip = warn_skip};

    if (history_trend_html(f->args[1], &o, stdout, &err) != 0) {
        fprintf(stderr, "kperf: error: history report %s: %s\n", f->args[1], kp_err_msg(&err));
        return 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "kperf: error: cannot write the trend page\n");
        return 1;
    }
    return 0;
}

int cmd_history(int argc, char **argv)
{
    struct history_flags f = {.keep = HISTORY_DEFAULT_KEEP, .judge.runs = 5};
    struct flags_cmd cmd = {
        .name = "kperf history",
        .usage = usage_text,
        .groups = untitled,
        .n_groups = 1,
        .help_width = 23,
        .tables = {{flag_table, sizeof(flag_table) / sizeof(flag_table[0]), &f}},
    };
    struct kp_err err = {{0}};
    int rc;

    compare_opts_init(&f.judge.opts);
    rc = flags_parse(&cmd, argc, argv, NULL, &err);

    if (rc == 1) {
        flags_help(stdout, &cmd);
        return 0;
    }
    if (rc == 0) {
        bool is_add = f.n_args == 3 && strcmp(f.args[0], "add") == 0;
        bool is_list = f.n_args == 2 && strcmp(f.args[0], "list") == 0;
        if (is_add)
            return add(&f);
        if (is_list)
            return list(f.args[1]);
        if (f.n_args == 2 && strcmp(f.args[0], "report") == 0)
            return trend(&f);
        kp_err_set(&err, "'kperf history' takes 'add DIR REPORT.json', 'list DIR' or 'report DIR'");
        flags_hint(&cmd, &err);
    }
    fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    return 2;
}
