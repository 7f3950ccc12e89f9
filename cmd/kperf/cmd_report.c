/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_report.c - 'kperf report FILE.json [-o FORMAT] [--output-dir DIR]': re-renders a saved
 * kperf.report/v1 file. Flag parsing only; the work is in controller/report/report.h. */
#include <stddef.h>
#include <stdio.h>

#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "controller/report/pushgw.h"
#include "controller/report/report.h"

static const char usage_text[] =
    "Usage: kperf report FILE.json [-o table|markdown|csv|html|json|openmetrics]\n"
    "                    [--output-dir DIR] [--noisy-cv PCT] [--push-gateway URL\n"
    "                    [--push-gateway-password-file FILE]]\n\n"
    "Re-renders a saved report (report.json of 'kperf run --output-dir', schema "
    "kperf.report/v1).\n";

struct report_flags {
    enum report_format fmt;
    const char *dir;                /* borrowed from argv; NULL = none */
    const char *push;               /* --push-gateway; borrowed from argv; NULL = none */
    const char *push_password_file; /* borrowed from argv; NULL = none */
    const char *path;               /* borrowed from argv */
    int n_paths;
    double noisy_cv_pct; /* < 0: keep the report's */
};

static int set_output(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    (void)fl;
    return report_format_parse(v, &((struct report_flags *)ctx)->fmt, err);
}

static int set_noisy_cv(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    (void)fl;
    return units_parse_percent(v, &((struct report_flags *)ctx)->noisy_cv_pct, err);
}

static int set_push(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    (void)fl;
    if (pushgw_url_check(v, err) != 0)
        return -1;
    ((struct report_flags *)ctx)->push = v;
    return 0;
}

static int add_path(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct report_flags *f = ctx;

    (void)fl, (void)err;
    f->path = v;
    f->n_paths++; /* more than one: refused after the parse */
    return 0;
}

static const struct flag flag_table[] = {
    {.name = "output",
     .short_name = 'o',
     .arg = "FORMAT",
     .help = "table (default), markdown, csv, html, json or\nopenmetrics, on stdout",
     .fn = set_output},
    {.name = "output-dir",
     .arg = "DIR",
     .help = "also write report.json, report.md, report.csv, report.html to DIR",
     .kind = FLAG_STRING,
     .offset = offsetof(struct report_flags, dir)},
    {.name = "push-gateway",
     .arg = "URL",
     .help = "also PUT the metrics (OpenMetrics) to this Prometheus\n"
             "Pushgateway (job kperf, instance = the report's cluster)",
     .fn = set_push},
    {.name = "push-gateway-password-file",
     .arg = "FILE",
     .help = "the Pushgateway's basic-auth password, from FILE (else\n"
             "$KPERF_PUSHGATEWAY_PASSWORD, else the URL's user-info)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct report_flags, push_password_file)},
    {.name = "noisy-cv",
     .arg = "PCT",
     .help = "flag metrics whose CV across samples exceeds PCT (default: the\n"
             "report's own setting, 10%); recomputes aggregates from the samples",
     .fn = set_noisy_cv},
    {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
    {.fn = add_path}, /* FILE.json */
};

const struct flag *cmd_report_flags(size_t *n)
{
    *n = sizeof(flag_table) / sizeof(flag_table[0]);
    return flag_table;
}

static const char *const untitled[] = {NULL};

/* Parses argv into f. Returns 0, 1 for --help (printed), or -1 with err (a usage error). */
static int parse_flags(int argc, char **argv, struct report_flags *f, struct kp_err *err)
{
    struct flags_cmd cmd = {
        .name = "kperf report",
        .usage = usage_text,
        .groups = untitled,
        .n_groups = 1,
        .help_width = 21,
        .tables = {{flag_table, sizeof(flag_table) / sizeof(flag_table[0]), f}},
    };
    int rc = flags_parse(&cmd, argc, argv, NULL, err);

    if (rc == 1)
        flags_help(stdout, &cmd);
    if (rc == 0 && f->n_paths != 1) {
        kp_err_set(err, "'kperf report' takes exactly one FILE.json");
        return flags_hint(&cmd, err);
    }
    if (rc == 0 && f->push_password_file && !f->push) {
        kp_err_set(err, "--push-gateway-password-file needs --push-gateway");
        return flags_hint(&cmd, err);
    }
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct report_flags f = {.fmt = REPORT_TABLE, .noisy_cv_pct = -1};
    struct kp_err err = {{0}};
    struct report *rep;
    char *password = NULL; /* kp_free_secret */
    int rc = parse_flags(argc, argv, &f, &err);

    if (rc == 0 && f.push && pushgw_password(f.push_password_file, &password, &err) != 0)
        rc = kp_err_prefix(&err, "--push-gateway-password-file");
    if (rc < 0)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    rep = report_load(f.path, &err);
    if (!rep) {
        fprintf(stderr, "kperf: error: %s. Pass a report.json written by 'kperf run'.\n",
                kp_err_msg(&err));
        kp_free_secret(password);
        return 1;
    }
    if (f.noisy_cv_pct >= 0)
        report_judge_noise(rep, f.noisy_cv_pct);
    rc = 0;
    if (report_render(rep, f.fmt, stdout, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        rc = 1;
    }
    if (rc == 0 && f.dir && report_write_dir(rep, f.dir, &err) != 0) {
        fprintf(stderr, "kperf: error: %s. Pass a writable --output-dir.\n", kp_err_msg(&err));
        rc = 1;
    }
    if (rc == 0 && f.push && pushgw_push(rep, f.push, password, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        rc = 1;
    }
    report_free(rep);
    kp_free_secret(password);
    return rc;
}
