/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_compare.c - 'kperf compare BASE.json NEW.json [--threshold 5%] [-o FORMAT]': the nightly
 * "did it get slower" answer. Exit 0 = no regression, 3 = a regression beyond the threshold,
 * 1 = unreadable or mismatched files, 2 = usage. The work is in controller/report/compare.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/flags.h"
#include "base/kp_err.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"

static const char usage_text[] =
    "Usage: kperf compare BASE.json NEW.json [--threshold 5%] [-o table|markdown|json|html]\n\n"
    "Matches the rows of two reports by scenario, placement and test, shows the change of every\n"
    "key metric and marks it regression, improvement or within noise, decided from the samples\n"
    "(method: docs/compare.md). Differences in nodes, kernel, MTU and versions are listed "
    "first.\n";

struct compare_flags {
    struct compare_opts opts;
    enum report_format fmt;
    const char *files[2]; /* BASE.json, NEW.json; borrowed from argv */
    int n_files;
};

static int set_threshold(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;

    (void)fl;
    return units_parse_percent(v, &f->opts.threshold_pct, err);
}

static int set_alpha(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct compare_flags *f = ctx;
    char *end;

    (void)fl;
    f->opts.alpha = strtod(v, &end);
    if (*end || !(f->opts.alpha > 0 && f->opts.alpha < 1))
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
     .arg = "PCT",
     .help = "smallest change that counts (default 5%)",
     .fn = set_threshold},
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
        .footer = "\nExit status: 0 no regression, 3 regression beyond the threshold, 1 error, 2 "
                  "usage.\n",
        .help_width = 21,
        .tables = {{flag_table, sizeof(flag_table) / sizeof(flag_table[0]), f}},
    };
    int rc = flags_parse(&cmd, argc, argv, NULL, err);

    if (rc == 1)
        flags_help(stdout, &cmd);
    if (rc == 0 && f->n_files != 2) {
        kp_err_set(err, "'kperf compare' takes BASE.json and NEW.json");
        return flags_hint(&cmd, err);
    }
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_flags f = {.fmt = REPORT_TABLE};
    struct kp_err err = {{0}};
    struct report *base = NULL, *cur = NULL;
    struct compare *cmp = NULL;
    int rc;

    compare_opts_init(&f.opts);
    rc = parse_flags(argc, argv, &f, &err);
    if (rc < 0)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    rc = 1;
    if (!(base = report_load(f.files[0], &err)) || !(cur = report_load(f.files[1], &err))) {
        fprintf(stderr, "kperf: error: %s. Compare two report.json files of 'kperf run'.\n",
                kp_err_msg(&err));
        goto out;
    }
    cmp = compare_reports(base, cur, &f.opts, &err);
    if (!cmp) {
        fprintf(stderr, "kperf: error: comparing %s with %s: %s\n", f.files[0], f.files[1],
                kp_err_msg(&err));
        goto out;
    }
    if (compare_render(cmp, f.fmt, stdout, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        goto out;
    }
    rc = compare_regression_count(cmp) > 0 ? 3 : 0;
out:
    compare_free(cmp);
    report_free(cur);
    report_free(base);
    return rc;
}
