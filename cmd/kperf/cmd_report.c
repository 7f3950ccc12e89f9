/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_report.c - 'kperf report FILE.json [-o FORMAT] [--output-dir DIR]': re-renders a saved
 * kperf.report/v1 file. Flag parsing only; the work is in controller/report/report.h. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/kp_err.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "controller/report/report.h"

static const char usage_text[] =
    "Usage: kperf report FILE.json [-o table|markdown|csv|html|json] [--output-dir DIR]\n"
    "                    [--noisy-cv PCT]\n\n"
    "Re-renders a saved report (report.json of 'kperf run --output-dir', schema "
    "kperf.report/v1).\n\n"
    "  -o, --output FORMAT   table (default), markdown, csv, html or json, on stdout\n"
    "      --output-dir DIR  also write report.json, report.md, report.csv, report.html to DIR\n"
    "      --noisy-cv PCT    flag metrics whose CV across samples exceeds PCT (default: the\n"
    "                        report's own setting, 10%); recomputes aggregates from the samples\n"
    "  -h, --help            this help\n";

struct report_flags {
    enum report_format fmt;
    const char *dir;
    const char *path;
    double noisy_cv_pct; /* < 0: keep the report's */
};

/* Parses argv into f. Returns 0, 1 for --help (exit 0), or 2 for a usage error. */
static int parse_flags(int argc, char **argv, struct report_flags *f)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"output-dir", required_argument, NULL, 'd'},
                                         {"noisy-cv", required_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct kp_err err = {{0}};
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (report_format_parse(optarg, &f->fmt, &err) != 0) {
                fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
                return 2;
            }
            break;
        case 'd':
            f->dir = optarg;
            break;
        case 'n':
            if (units_parse_percent(optarg, &f->noisy_cv_pct, &err) != 0) {
                fprintf(stderr, "kperf: error: --noisy-cv: %s\n", kp_err_msg(&err));
                return 2;
            }
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 1;
        default:
            fprintf(stderr,
                    "kperf: error: unknown flag, or flag without its value: '%s'. Run 'kperf "
                    "report --help' for usage.\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "kperf: error: 'kperf report' takes exactly one FILE.json. Run 'kperf "
                        "report --help' for usage.\n");
        return 2;
    }
    f->path = argv[optind];
    return 0;
}

int cmd_report(int argc, char **argv)
{
    struct report_flags f = {REPORT_TABLE, NULL, NULL, -1};
    struct kp_err err = {{0}};
    struct report *rep;
    int rc = parse_flags(argc, argv, &f);

    if (rc != 0)
        return rc == 1 ? 0 : rc;
    rep = report_load(f.path, &err);
    if (!rep) {
        fprintf(stderr, "kperf: error: %s. Pass a report.json written by 'kperf run'.\n",
                kp_err_msg(&err));
        return 1;
    }
    if (f.noisy_cv_pct >= 0) {
        report_set_noisy_cv_pct(rep, f.noisy_cv_pct);
        if (report_finish(rep, &err) != 0) {
            fprintf(stderr, "kperf: error: %s: %s\n", f.path, kp_err_msg(&err));
            report_free(rep);
            return 1;
        }
    }
    rc = 0;
    if (report_render(rep, f.fmt, stdout, &err) != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        rc = 1;
    }
    if (rc == 0 && f.dir && report_write_dir(rep, f.dir, &err) != 0) {
        fprintf(stderr, "kperf: error: %s. Pass a writable --output-dir.\n", kp_err_msg(&err));
        rc = 1;
    }
    report_free(rep);
    return rc;
}
