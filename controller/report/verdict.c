/* SPDX-License-Identifier: Apache-2.0 */
/* verdict.c - the verdict of a comparison for the people and machines around a nightly
 * (verdict.h): the exit status, the termination message's line, the gauges, the chat message.
 * Everything is read from the kperf.compare/v1 document, so the compare renderers and this
 * module cannot disagree on a row's verdict. */
#include "controller/report/verdict.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"
#include "controller/report/render_openmetrics.h"

/* A row worth naming: its verdict, key and the metric that moved most that way. */
struct moved {
    struct rowkey k;
    const char *verdict, *metric; /* borrowed from the document */
    double delta_pct;             /* NAN when the base was 0 */
    int rank;                     /* 0 regression, 1 inconclusive, 2 improvement */
};

static long count_at(const json_t *doc, const char *key)
{
    return (long)json_integer_value(json_object_get(json_object_get(doc, "summary"), key));
}

const char *verdict_status_word(int status)
{
    switch (status) {
    case VERDICT_EXIT_OK:
        return "ok";
    case VERDICT_EXIT_REGRESSION:
        return "regression";
    case VERDICT_EXIT_INCONCLUSIVE:
        return "inconclusive";
    case VERDICT_EXIT_CLUSTER:
        return "could not measure";
    case VERDICT_EXIT_USAGE:
        return "usage";
    default:
        return "error";
    }
}

int verdict_status(const json_t *doc)
{
    if (count_at(doc, "regressions") > 0 || count_at(doc, "failed_in_new") > 0 ||
        count_at(doc, "readiness_regressions") > 0 || count_at(doc, "netpol_regressions") > 0)
        return VERDICT_EXIT_REGRESSION;
    if (count_at(doc, "inconclusive") > 0)
        return VERDICT_EXIT_INCONCLUSIVE;
    return VERDICT_EXIT_OK;
}

static int rank_of(const char *v)
{
    if (!v)
        return -1;
    if (strcmp(v, "regression") == 0)
        return 0;
    if (strcmp(v, "inconclusive") == 0)
        return 1;
    if (strcmp(v, "improvement") == 0)
        return 2;
    return -1;
}

static int by_rank_then_size(const void *a, const void *b)
{
    const struct moved *x = a, *y = b;
    double dx = isnan(x->delta_pct) ? INFINITY : fabs(x->delta_pct);
    double dy = isnan(y->delta_pct) ? INFINITY : fabs(y->delta_pct);

    if (x->rank != y->rank)
        return x->rank - y->rank;
    return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/* The rows of doc whose verdict is not "within noise", most important first (*n of them;
 * caller frees the array; its strings are the document's). */
static struct moved *moved_rows(const json_t *doc, size_t *n)
{
    const json_t *rows = json_object_get(doc, "rows"), *row, *m;
    struct moved *out = kp_xcalloc(json_array_size(rows) + 1, sizeof(*out));
    size_t i, j;

    *n = 0;
    json_array_foreach(rows, i, row)
    {
        struct moved *mv = &out[*n];
        double best = -1;

        mv->verdict = json_string_value(json_object_get(row, "verdict"));
        if ((mv->rank = rank_of(mv->verdict)) < 0)
            continue;
        rowkey_of(row, &mv->k);
        mv->delta_pct = NAN;
        json_array_foreach(json_object_get(row, "metrics"), j, m)
        {
            const json_t *d = json_object_get(m, "delta_pct");
            double size = json_is_number(d) ? fabs(json_number_value(d)) : INFINITY;

            if (!json_string_value(json_object_get(m, "verdict")) ||
                strcmp(json_string_value(json_object_get(m, "verdict")), mv->verdict) != 0 ||
                size <= best)
                continue;
            best = size;
            mv->metric = json_string_value(json_object_get(m, "metric"));
            mv->delta_pct = json_is_number(d) ? json_number_value(d) : NAN;
        }
        (*n)++;
    }
    qsort(out, *n, sizeof(*out), by_rank_then_size);
    return out;
}

/* "pod-to-pod same-node TCP_RR p99 +23.1%" into buf[len]. */
static const char *moved_text(const struct moved *mv, char *buf, size_t len)
{
    char key[200], change[32];

    rowkey_label(&mv->k, key, sizeof(key));
    if (isnan(mv->delta_pct))
        snprintf(change, sizeof(change), "from 0");
    else
        snprintf(change, sizeof(change), "%+.1f%%", mv->delta_pct);
    snprintf(buf, len, "%s %s %s", key, mv->metric ? mv->metric : "?", change);
    for (char *p = buf; *p; p++) /* one line, whatever a scenario name holds */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return buf;
}

char *verdict_line(const json_t *doc, int status)
{
    size_t n, shown = 0, rows = json_array_size(json_object_get(doc, "rows"));
    struct moved *mv = moved_rows(doc, &n);
    char *line = NULL, item[300];
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);
    long failed = count_at(doc, "failed_in_new");

    if (!f)
        abort(); /* out of memory, as kp_xmalloc */
    fprintf(f, "kperf: %s (exit %d): ", verdict_status_word(status), status);
    if (status == VERDICT_EXIT_OK)
        fprintf(f, "no regression in %zu row%s compared", rows, rows == 1 ? "" : "s");
    else
        fprintf(f, "%zu of %zu row%s", n, rows, rows == 1 ? "" : "s");
    if (failed > 0)
        fprintf(f, ", %ld failed in the new run", failed);
    for (size_t i = 0; i < n && shown < VERDICT_TOP_ROWS; i++) {
        if (status == VERDICT_EXIT_OK || mv[i].rank == 2)
            break; /* improvements are not what a failed night is about */
        fprintf(f, "%s%s", shown ? ", " : ": ", moved_text(&mv[i], item, sizeof(item)));
        shown++;
    }
    fclose(f);
    free(mv);
    for (char *p = line; *p; p++) /* one line, whatever a scenario name holds */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    if (strlen(line) >= VERDICT_MESSAGE_MAX)
        strcpy(line + VERDICT_MESSAGE_MAX - 4, "...");
    return line;
}

static void om_label(FILE *out, const char *name, const char *value, bool last)
{
    fprintf(out, "%s=\"", name);
    render_openmetrics_label_value(value ? value : "", out);
    fputs(last ? "\"}" : "\",", out);
}

static int gauge_value(const char *verdict)
{
    switch (rank_of(verdict)) {
    case 0:
        return VERDICT_EXIT_REGRESSION;
    case 1:
        return VERDICT_EXIT_INCONCLUSIVE;
    case 2:
        return -1;
    default:
        return 0;
    }
}

void verdict_openmetrics(const json_t *doc, const char *cluster, int status, FILE *out)
{
    const json_t *row;
    size_t i;

    fputs("# HELP kperf_verdict Verdict of a compared row: 3 regression, 5 inconclusive, 0 "
          "within noise, -1 improvement\n# TYPE kperf_verdict gauge\n",
          out);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        struct rowkey k;

        rowkey_of(row, &k);
        fputs("kperf_verdict{", out);
        om_label(out, "scenario", k.scenario, false);
        om_label(out, "placement", k.placement, false);
        om_label(out, "test", k.test, false);
        om_label(out, "direction", k.reverse ? "reverse" : "forward", false);
        om_label(out, "ip_family", k.ip_family, false);
        om_label(out, "cluster", cluster, true);
        fprintf(out, " %d\n", gauge_value(json_string_value(json_object_get(row, "verdict"))));
    }
    fputs("# HELP kperf_compare_status Exit status of kperf compare: 0 ok, 3 regression, 5 "
          "inconclusive (docs/exit-status.md)\n# TYPE kperf_compare_status gauge\n"
          "kperf_compare_status{",
          out);
    om_label(out, "cluster", cluster, true);
    fprintf(out, " %d\n# EOF\n", status);
}

json_t *verdict_slack(const json_t *doc, int status, const char *cluster,
                      const char *report_url_base)
{
    char *line = verdict_line(doc, status), item[300];
    size_t n;
    struct moved *mv = moved_rows(doc, &n);
    json_t *blocks = json_array(), *msg;
    char *head = kp_xasprintf("*kperf %s* on cluster `%s` (exit %d)", verdict_status_word(status),
                              cluster, status);
    FILE *f;
    char *list = NULL;
    size_t len = 0;

    json_array_append_new(blocks, json_pack("{s:s, s:{s:s, s:s}}", "type", "section", "text",
                                            "type", "mrkdwn", "text", head));
    if (!(f = open_memstream(&list, &len)))
        abort();
    for (size_t i = 0; i < n && i < VERDICT_TOP_ROWS; i++)
        fprintf(f, "%s• %s: %s", i ? "\n" : "", mv[i].verdict,
                moved_text(&mv[i], item, sizeof(item)));
    fclose(f);
    if (len)
        json_array_append_new(blocks, json_pack("{s:s, s:{s:s, s:s}}", "type", "section", "text",
                                                "type", "mrkdwn", "text", list));
    if (report_url_base) {
        size_t b = strlen(report_url_base);
        while (b > 0 && report_url_base[b - 1] == '/')
            b--;
        char *links = kp_xasprintf("<%.*s/report.html|report> · <%.*s/compare.html|comparison>",
                                   (int)b, report_url_base, (int)b, report_url_base);
        json_array_append_new(blocks, json_pack("{s:s, s:[{s:s, s:s}]}", "type", "context",
                                                "elements", "type", "mrkdwn", "text", links));
        free(links);
    }
    msg = json_pack("{s:s, s:o}", "text", line, "blocks", blocks);
    free(list);
    free(head);
    free(mv);
    free(line);
    return msg;
}
