/* SPDX-License-Identifier: Apache-2.0 */
/* compare_render.c - writes a comparison (compare_render of compare.h): the table and Markdown
 * text (provenance differences, one line per compared metric with its evidence, rows and
 * metrics only one side has), the JSON document written one row at a time, and the HTML page
 * through render_compare_html.h. Owns the layout; the verdicts are made by compare.c. */
#include "controller/report/compare.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/compare_int.h"
#include "controller/report/evidence.h"
#include "controller/report/kprofile.h"
#include "controller/report/netpol.h"
#include "controller/report/provenance.h"
#include "controller/report/readiness.h"
#include "controller/report/render_compare_html.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_pack.h"

/* As json_dumpf(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) would, writing rows[] one row
 * at a time (expanded just before it is written). Returns 0 or -1. */
static int write_json(const json_t *doc, FILE *out)
{
    const size_t prec = JSON_REAL_PRECISION(10);
    const char *key;
    const json_t *v;
    bool first = true;
    int rc = 0;

    fputc('{', out);
    json_object_foreach((json_t *)doc, key, v)
    {
        json_t *k = json_string(key);
        fputs(first ? "\n  " : ",\n  ", out);
        first = false;
        rc |= report_dump_flags(k, 1, prec, out);
        json_decref(k);
        fputs(": ", out);
        if (strcmp(key, "rows") != 0 || json_array_size(v) == 0) {
            rc |= report_dump_flags(v, 1, prec, out);
            continue;
        }
        fputc('[', out);
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *row = report_lazy_expand(json_array_get(v, i));
            fputs(i ? ",\n    " : "\n    ", out);
            rc |= row ? report_dump_flags(row, 2, prec, out) : -1;
            json_decref(row);
        }
        fputs("\n  ]", out);
    }
    fputs(first ? "}" : "\n}", out);
    return rc;
}

#define CCELL 96
#define NCOLS 9

static const char *evidence(const json_t *m, char *buf, size_t len)
{
    const char *method = json_string_value(json_object_get(m, "method"));
    long long na = json_integer_value(json_object_get(m, "n_base"));
    /* (history rows carry n_runs instead) */
    long long nb = json_integer_value(json_object_get(m, "n_new"));
    const json_t *ci = json_object_get(m, "diff_ci95");

    if (strcmp(method, "history") == 0 || strcmp(method, "needs-history") == 0)
        snprintf(buf, len, "%lld runs: spread %.3g, z=%+.1f%s",
                 (long long)json_integer_value(json_object_get(m, "n_runs")),
                 json_number_value(json_object_get(m, "spread")),
                 json_number_value(json_object_get(m, "z")),
                 strcmp(method, "history") == 0 ? "" : ", needs 2 runs");
    else if (strcmp(method, "mann-whitney-u") == 0)
        snprintf(buf, len, "U test p=%.3g, n=%lld/%lld",
                 json_number_value(json_object_get(m, "p_value")), na, nb);
    else if (strcmp(method, "welch-ci95") == 0)
        snprintf(buf, len, "Welch 95%% CI [%.4g, %.4g], n=%lld/%lld, low confidence",
                 json_number_value(json_array_get(ci, 0)), json_number_value(json_array_get(ci, 1)),
                 na, nb);
    else if (strcmp(method, "two-proportion") == 0)
        snprintf(buf, len, "two-proportion test p=%.3g, n=%lld/%lld",
                 json_number_value(json_object_get(m, "p_value")), na, nb);
    else if (strcmp(method, "needs-samples") == 0)
        snprintf(buf, len, "tail percentile: no verdict from one sample (use --samples >= 2)");
    else if (json_number_value(json_object_get(m, "noise_pct")) > 0)
        snprintf(buf, len, "in-run spread +-%.1f%%, n=%lld/%lld, low confidence",
                 json_number_value(json_object_get(m, "noise_pct")), na, nb);
    else
        snprintf(buf, len, "threshold only (no spread known), n=%lld/%lld, low confidence", na, nb);
    return buf;
}

static void metric_cells(const json_t *row, const json_t *m, char (*c)[CCELL])
{
    const char *verdict = json_string_value(json_object_get(m, "verdict"));
    const json_t *abs = json_object_get(m, "delta_abs");
    char label[CCELL], scen[CCELL];
    struct rowkey k;

    rowkey_of(row, &k);
    /* IPv4 is every earlier report's family: only other families are named */
    snprintf(scen, sizeof(scen), "%s%s%s", k.scenario, *rowkey_family_label(&k) ? "/" : "",
             rowkey_family_label(&k));
    textsafe(scen, c[0], CCELL);
    textsafe(k.placement, c[1], CCELL);
    textsafe(rowkey_test_label(&k, label, sizeof(label)), c[2], CCELL);
    snprintf(c[3], CCELL, "%s", json_string_value(json_object_get(m, "metric")));
    for (int s = 0; s < 2; s++) { /* small values (CPU s/Gbit) keep 4 digits */
        double v = json_number_value(json_object_get(m, s ? "new" : "base"));
        snprintf(c[4 + s], CCELL, fabs(v) < 1 && v != 0 ? "%.4g" : "%.2f", v);
    }
    if (abs)
        snprintf(c[6], CCELL, "%+.2f%s", json_number_value(abs),
                 strcmp(json_string_value(json_object_get(m, "group")), "loss") == 0 ? "pp" : "");
    else if (json_is_null(json_object_get(m, "delta_pct")))
        snprintf(c[6], CCELL, "from 0");
    else
        snprintf(c[6], CCELL, "%+.1f%%", json_number_value(json_object_get(m, "delta_pct")));
    /* "!": drop, shaping or overflow counters moved, or the path was a path MTU black hole,
     * on a side (listed under the table) */
    snprintf(c[7], CCELL, "%s%s", strcmp(verdict, "regression") == 0 ? "REGRESSION" : verdict,
             json_object_get(row, "counters_moved") || json_object_get(row, "path_mtu_black_hole")
                 ? " !"
                 : "");
    evidence(m, c[8], CCELL);
}

static void print_cells(char (*c)[CCELL], const size_t *width, bool markdown, FILE *out)
{
    for (size_t k = 0; k < NCOLS; k++) {
        bool right = k >= 4 && k <= 6;
        fputs(markdown ? "| " : k ? " | " : "", out);
        if (right)
            fprintf(out, "%*s", (int)width[k], c[k]);
        else if (markdown || k + 1 < NCOLS)
            fprintf(out, "%-*s", (int)width[k], c[k]);
        else
            fputs(c[k], out);
        if (markdown)
            fputc(' ', out);
    }
    fputs(markdown ? "|\n" : "\n", out);
}

/* Calls fn for the cells of every compared metric, in order, expanding one stored row at a
 * time (report_lazy.h). */
static void each_metric_line(const json_t *rows, void (*fn)(char (*c)[CCELL], void *ctx), void *ctx)
{
    char line[NCOLS][CCELL];
    const json_t *m;
    size_t k;

    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = report_lazy_expand(json_array_get(rows, i));
        json_array_foreach(json_object_get(row, "metrics"), k, m)
        {
            memset(line, 0, sizeof(line));
            metric_cells(row, m, line);
            fn(line, ctx);
        }
        json_decref(row);
    }
}

static void widen(char (*c)[CCELL], void *ctx)
{
    size_t *width = ctx;

    for (size_t k = 0; k < NCOLS; k++)
        if (strlen(c[k]) > width[k])
            width[k] = strlen(c[k]);
}

struct print_ctx {
    const size_t *width;
    bool markdown;
    FILE *out;
};

static void print_line_cb(char (*c)[CCELL], void *ctx)
{
    const struct print_ctx *p = ctx;

    print_cells(c, p->width, p->markdown, p->out);
}

/* The table of metrics, in two passes over the rows (widths, then lines) so that it costs one
 * line of cells, not all of them. */
static void print_metrics_table(const json_t *doc, bool markdown, FILE *out)
{
    static const char *const head[NCOLS] = {"Scenario", "Node",  "Test",    "Metric",  "Base",
                                            "New",      "Delta", "Verdict", "Evidence"};
    const json_t *rows = json_object_get(doc, "rows");
    size_t k, width[NCOLS];
    char header[NCOLS][CCELL];
    struct print_ctx pc = {.width = width, .markdown = markdown, .out = out};

    for (k = 0; k < NCOLS; k++) {
        snprintf(header[k], CCELL, "%s", head[k]);
        width[k] = 0;
    }
    widen(header, width);
    each_metric_line(rows, widen, width);
    fputc('\n', out);
    print_cells(header, width, markdown, out);
    if (markdown) {
        for (k = 0; k < NCOLS; k++)
            fprintf(out, "|%.*s%s", (int)width[k] + 1,
                    "----------------------------------------------------------------------"
                    "--------------------------",
                    k >= 4 && k <= 6 ? ":" : "-");
        fputs("|\n", out);
    } else {
        size_t total = 0;
        for (k = 0; k < NCOLS; k++)
            total += width[k] + 3;
        for (k = 0; k + 3 < total; k++)
            fputc('-', out);
        fputc('\n', out);
    }
    each_metric_line(rows, print_line_cb, &pc);
}

/* rowkey_label of row or key object r */
static const char *label_of(const json_t *r, char *buf, size_t len)
{
    struct rowkey k;

    rowkey_of(r, &k);
    return rowkey_label(&k, buf, len);
}

static void print_keys(const json_t *keys, const char *title, const char *bullet, FILE *out)
{
    const json_t *key;
    size_t i;
    char label[256];

    if (json_array_size(keys) == 0)
        return;
    fprintf(out, "\n%s\n", title);
    json_array_foreach(keys, i, key)
    {
        textsafe_line(out, "%s%s", bullet, label_of(key, label, sizeof(label)));
    }
}

/* The rows whose verdicts carry "!": which counters moved, on which report and side. */
static void print_moved(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *r;
    size_t i;
    bool first = true;

    json_array_foreach(rows, i, r)
    {
        json_t *row = report_lazy_expand((json_t *)r); /* new reference */
        const json_t *moved = json_object_get(row, "counters_moved");
        char label[256], text[1024];
        if (moved) {
            if (first)
                fprintf(out, "\n! drop, shaping or overflow counters moved (the verdict may "
                             "reflect them, not the network under test):\n");
            first = false;
            evidence_compare_text(moved, text, sizeof(text));
            textsafe_line(out, "%s%s: %s", bullet, label_of(row, label, sizeof(label)), text);
        }
        json_decref(row);
    }
}

/* The rows whose both reports carry a kernel profile (kperf run --profile): the row's verdict
 * and the kernel functions whose share changed most (kprofile.h). */
static void print_profiles(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *r;
    size_t i;
    bool first = true;

    json_array_foreach(rows, i, r)
    {
        json_t *row = report_lazy_expand((json_t *)r); /* new reference */
        const json_t *d = json_object_get(row, "profile_diff");
        char label[256];
        if (d) {
            if (first)
                fprintf(out, "\nKernel profile (share of the measurement's kernel samples whose "
                             "stack held the function, BASE -> NEW):\n");
            first = false;
            textsafe_line(out, "%s%s: %s (%lld -> %lld samples)", bullet,
                          label_of(row, label, sizeof(label)),
                          json_string_value(json_object_get(row, "verdict")),
                          (long long)json_integer_value(json_object_get(d, "base_samples")),
                          (long long)json_integer_value(json_object_get(d, "new_samples")));
            kprofile_diff_print(d, "    ", out);
        }
        json_decref(row);
    }
}

/* The rows whose verdicts carry "!" for a path MTU black hole, and in which report. */
static void print_black_holes(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *r, *side;
    size_t i, k;
    bool first = true;

    json_array_foreach(rows, i, r)
    {
        json_t *row = report_lazy_expand((json_t *)r); /* new reference */
        const json_t *holes = json_object_get(row, "path_mtu_black_hole");
        char label[256], text[48] = "black hole in ";
        json_array_foreach(holes, k, side)
        {
            snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s", k ? " and " : "",
                     json_string_value(side) && strcmp(json_string_value(side), "new") == 0
                         ? "NEW"
                         : "BASE");
        }
        if (json_array_size(holes) > 0) {
            if (first)
                fprintf(out, "\n! path MTU black hole (packets of the interface MTU lost without "
                             "ICMP; the verdict may reflect it):\n");
            first = false;
            textsafe_line(out, "%s%s: %s", bullet, label_of(row, label, sizeof(label)), text);
        }
        json_decref(row);
    }
}

static void print_failed(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *r;
    size_t i;
    char label[256];

    if (json_array_size(rows) == 0)
        return;
    fprintf(out, "\nFAILED in NEW (measured in BASE; counted as regressions):\n");
    json_array_foreach(rows, i, r)
    {
        textsafe_line(out, "%s%s: %s", bullet, label_of(r, label, sizeof(label)),
                      json_string_value(json_object_get(r, "error")));
    }
}

/* Metrics of a compared row that only one side measured (e.g. node CPU unreadable in NEW). */
static void print_missing(const json_t *rows, const char *bullet, FILE *out)
{
    const json_t *m;
    size_t i, k;
    bool title = false;
    char label[256];

    for (i = 0; i < json_array_size(rows); i++) {
        json_t *r = report_lazy_expand(json_array_get(rows, i));
        json_array_foreach(json_object_get(r, "missing_metrics"), k, m)
        {
            if (!title)
                fprintf(out, "\nMetrics measured on one side only (not compared):\n");
            title = true;
            textsafe_line(out, "%s%s: %s only in %s", bullet, label_of(r, label, sizeof(label)),
                          json_string_value(json_object_get(m, "metric")),
                          strcmp(json_string_value(json_object_get(m, "measured_in")), "base") == 0
                              ? "BASE"
                              : "NEW");
        }
        json_decref(r);
    }
}

static void print_text(const struct compare *cmp, bool markdown, FILE *out)
{
    const json_t *doc = cmp->doc, *d;
    const char *bullet = markdown ? "- " : "  ";
    size_t i;

    const char *key;
    const json_t *t;
    int k = 0;

    fprintf(out, "%skperf compare: thresholds ", markdown ? "## " : "");
    json_object_foreach((json_t *)json_object_get(doc, "thresholds"), key, t)
    {
        fprintf(out, "%s%s %s", k++ ? ", " : "", key, json_string_value(t));
    }
    if (json_object_get(doc, "baseline_runs"))
        fprintf(out,
                "; judged against the last %lld comparable runs (BASE = their median; a change "
                "must exceed %g spreads between runs)\n",
                (long long)json_integer_value(json_object_get(doc, "baseline_runs")),
                json_number_value(json_object_get(doc, "history_z")));
    else
        fprintf(out, "; significance level %g\n", json_number_value(json_object_get(doc, "alpha")));
    if ((d = json_object_get(doc, "history")) &&
        json_integer_value(json_object_get(d, "runs_skipped")))
        fprintf(out, "%sRests on %lld runs of the history; %lld unreadable run(s) skipped\n",
                bullet, (long long)json_integer_value(json_object_get(d, "runs_used")),
                (long long)json_integer_value(json_object_get(d, "runs_skipped")));
    if (json_array_size(json_object_get(doc, "provenance")) > 0) {
        fprintf(out,
                "\nProvenance differences (a changed node, kernel or version explains many "
                "regressions):\n%s",
                markdown ? "\n" : "");
        provenance_print_likely(json_object_get(doc, "provenance"), bullet, out);
        json_array_foreach(json_object_get(doc, "provenance"), i, d)
        {
            const char *b = json_string_value(json_object_get(d, "base"));
            const char *n = json_string_value(json_object_get(d, "new"));
            json_int_t rows = json_integer_value(json_object_get(d, "rows"));
            char in_rows[48] = "";
            if (rows > 0) /* a sample placement: in how many matched rows */
                snprintf(in_rows, sizeof(in_rows), " (in %" JSON_INTEGER_FORMAT " row%s)", rows,
                         rows == 1 ? "" : "s");
            textsafe_line(out, "%s%s: %s -> %s%s", bullet,
                          json_string_value(json_object_get(d, "field")), b ? b : "(absent)",
                          n ? n : "(absent)", in_rows);
        }
    } else {
        fprintf(out, "\nSame provenance (nodes, kernel, MTU, CNI, versions).\n");
    }
    print_metrics_table(doc, markdown, out);
    print_moved(json_object_get(doc, "rows"), bullet, out);
    print_black_holes(json_object_get(doc, "rows"), bullet, out);
    print_profiles(json_object_get(doc, "rows"), bullet, out);
    print_failed(json_object_get(doc, "failed_in_new"), bullet, out);
    print_keys(json_object_get(doc, "only_in_base"), "Only in BASE (not compared):", bullet, out);
    print_keys(json_object_get(doc, "only_in_new"), "Only in NEW (not compared):", bullet, out);
    print_missing(json_object_get(doc, "rows"), bullet, out);
    readiness_compare_print(json_object_get(doc, "readiness"), markdown, out);
    if (json_array_size(json_object_get(doc, "readiness")) > 0)
        fprintf(
            out, "\nPod network readiness: %zu regression%s, %zu improvement%s (threshold %s)\n",
            cmp->readiness_regressions, cmp->readiness_regressions == 1 ? "" : "s",
            cmp->readiness_improvements, cmp->readiness_improvements == 1 ? "" : "s",
            json_string_value(json_object_get(json_object_get(doc, "thresholds"), "readiness")));
    netpol_compare_print(json_object_get(doc, "netpol"), markdown, out);
    if (json_array_size(json_object_get(doc, "netpol")) > 0)
        fprintf(
            out,
            "\nNetworkPolicy enforcement readiness: %zu regression%s, %zu improvement%s "
            "(threshold %s)\n",
            cmp->netpol_regressions, cmp->netpol_regressions == 1 ? "" : "s",
            cmp->netpol_improvements, cmp->netpol_improvements == 1 ? "" : "s",
            json_string_value(json_object_get(json_object_get(doc, "thresholds"), "readiness")));
    fprintf(out, "\n%zu regression%s, %zu improvement%s beyond the thresholds in %zu rows compared",
            cmp->regressions, cmp->regressions == 1 ? "" : "s", cmp->improvements,
            cmp->improvements == 1 ? "" : "s", json_array_size(json_object_get(doc, "rows")));
    if (cmp->failed_in_new)
        fprintf(out, "; %zu row%s failed in NEW", cmp->failed_in_new,
                cmp->failed_in_new == 1 ? "" : "s");
    if (cmp->refused)
        fprintf(out, "; %zu row%s not judged (--strict-evidence)", cmp->refused,
                cmp->refused == 1 ? "" : "s");
    if (cmp->inconclusive)
        fprintf(out, "; %zu inconclusive (worse beyond the threshold, within the noise)",
                cmp->inconclusive);
    fputc('\n', out);
}

int compare_render(const struct compare *cmp, enum report_format fmt, FILE *out, struct kp_err *err)
{
    int rc = 0;

    switch (fmt) {
    case REPORT_TABLE:
    case REPORT_MARKDOWN:
        print_text(cmp, fmt == REPORT_MARKDOWN, out);
        break;
    case REPORT_JSON:
        rc = write_json(cmp->doc, out);
        fputc('\n', out);
        break;
    case REPORT_HTML:
        render_compare_html(cmp->doc, out);
        break;
    default:
        return kp_err_set(err, "compare prints table, markdown, json or html only");
    }
    /* flushed here: a full disk or a closed pipe often shows only when the buffer goes out */
    if (rc != 0 || fflush(out) != 0 || ferror(out))
        return kp_err_set(err, "cannot write the comparison: %s", strerror(errno ? errno : EIO));
    return 0;
}
