/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_compare.c - 'kperf compare BASE.json NEW.json [--threshold 5%] [-o FORMAT]': the nightly
 * "did it get slower" answer. Exit 0 = no regression, 3 = a regression beyond the threshold,
 * 1 = unreadable or mismatched files, 2 = usage. The work is in controller/report/compare.h. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"

static const char usage_text[] =
    "Usage: kperf compare BASE.json NEW.json [--threshold 5%] [-o table|markdown|json]\n\n"
    "Matches the rows of two reports by scenario, placement and test, shows the change of every\n"
    "key metric and marks it regression, improvement or within noise, decided from the samples\n"
    "(method: docs/compare.md). Differences in nodes, kernel, MTU and versions are listed "
    "first.\n\n"
    "  -t, --threshold PCT   smallest change that counts (default 5%)\n"
    "      --alpha P         significance level of the tests (default 0.05)\n"
    "  -o, --output FORMAT   table (default), markdown or json\n"
    "  -h, --help            this help\n\n"
    "Exit status: 0 no regression, 3 regression beyond the threshold, 1 error, 2 usage.\n";

struct compare_flags {
    struct compare_opts opts;
    enum report_format fmt;
    const char *base;
    const char *cur;
};

/* One line on stderr, as for every kperf error; the usage is one --help away. Returns 2. */
static int usage_error(const char *what)
{
    fprintf(stderr, "kperf: error: %s. Run 'kperf compare --help' for usage.\n", what);
    return 2;
}

static int flag_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int flag_error(const char *fmt, ...)
{
    char what[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return usage_error(what);
}

/* Parses argv into f. Returns 0, 1 for --help (exit 0), or 2 for a usage error. */
static int parse_flags(int argc, char **argv, struct compare_flags *f)
{
    static const struct option opts[] = {{"threshold", required_argument, NULL, 't'},
                                         {"alpha", required_argument, NULL, 'a'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct kp_err err = {{0}};
    char *end;
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "t:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (units_parse_percent(optarg, &f->opts.threshold_pct, &err) != 0)
                return flag_error("--threshold: %s", kp_err_msg(&err));
            break;
        case 'a':
            f->opts.alpha = strtod(optarg, &end);
            if (*end || !(f->opts.alpha > 0 && f->opts.alpha < 1))
                return flag_error("--alpha: '%s' is not a number between 0 and 1", optarg);
            break;
        case 'o':
            if (report_format_parse(optarg, &f->fmt, &err) != 0 ||
                (f->fmt != REPORT_TABLE && f->fmt != REPORT_MARKDOWN && f->fmt != REPORT_JSON))
                return flag_error("--output: compare prints table, markdown or json, not '%s'",
                                  optarg);
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 1;
        default:
            return flag_error("unknown flag, or flag without its value: '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return usage_error("'kperf compare' takes BASE.json and NEW.json");
    f->base = argv[optind];
    f->cur = argv[optind + 1];
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_flags f = {.fmt = REPORT_TABLE};
    struct kp_err err = {{0}};
    struct report *base = NULL, *cur = NULL;
    struct compare *cmp = NULL;
    int rc;

    compare_opts_init(&f.opts);
    rc = parse_flags(argc, argv, &f);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    rc = 1;
    if (!(base = report_load(f.base, &err)) || !(cur = report_load(f.cur, &err))) {
        fprintf(stderr, "kperf: error: %s. Compare two report.json files of 'kperf run'.\n",
                kp_err_msg(&err));
        goto out;
    }
    cmp = compare_reports(base, cur, &f.opts, &err);
    if (!cmp) {
        fprintf(stderr, "kperf: error: comparing %s with %s: %s\n", f.base, f.cur,
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
