/* SPDX-License-Identifier: Apache-2.0 */
/* report_render.c - the output formats of a report (report.h: report_format_parse,
 * report_render): the format names, the dispatch to the renderers (render_text.c,
 * render_html.c, render_openmetrics.c) and the JSON document written one row at a time. The
 * model is report.c's; writing files is report_write_dir's. */
#include "controller/report/report.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/kp_err.h"
#include "controller/report/render_html.h"
#include "controller/report/render_openmetrics.h"
#include "controller/report/render_text.h"
#include "controller/report/report_int.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_pack.h"

int report_format_parse(const char *s, enum report_format *fmt, struct kp_err *err)
{
    static const struct {
        const char *name;
        enum report_format fmt;
    } formats[] = {{"table", REPORT_TABLE},
                   {"markdown", REPORT_MARKDOWN},
                   {"md", REPORT_MARKDOWN},
                   {"json", REPORT_JSON},
                   {"csv", REPORT_CSV},
                   {"html", REPORT_HTML},
                   {"openmetrics", REPORT_OPENMETRICS}};

    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (strcmp(s, formats[i].name) == 0) {
            *fmt = formats[i].fmt;
            return 0;
        }
    }
    return kp_err_set(
        err, "unknown output format '%s' (table, markdown, json, csv, html, openmetrics)", s);
}

/* The report as JSON_INDENT(2) would print report_to_json's document, written one row at a
 * time: each row is expanded (report_pack.h) just before it is written and dropped after, so
 * the output costs one row's tree, not a copy of the report. Full precision: samples stay
 * verbatim. Returns 0 or -1. */
static int write_json(const struct report *rep, FILE *out)
{
    json_t *doc = report_doc_shared(rep), *v, *row;
    const char *key;
    bool first = true;
    int rc = 0;

    fputc('{', out);
    json_object_foreach(doc, key, v)
    {
        json_t *k = json_string(key);
        fputs(first ? "\n  " : ",\n  ", out);
        first = false;
        rc |= report_dump_at(k, 1, out);
        json_decref(k);
        fputs(": ", out);
        if (strcmp(key, "results") != 0 || json_array_size(v) == 0) {
            rc |= report_dump_at(v, 1, out);
            continue;
        }
        fputc('[', out);
        for (size_t i = 0; i < json_array_size(v); i++) {
            row = report_row_unpacked(report_row(rep, i));
            fputs(i ? ",\n    " : "\n    ", out);
            rc |= report_dump_at(row, 2, out);
            json_decref(row);
        }
        fputs("\n  ]", out);
    }
    fputs(first ? "}\n" : "\n}\n", out);
    json_decref(doc);
    return rc;
}

int report_render(const struct report *rep, enum report_format fmt, FILE *out, struct kp_err *err)
{
    int rc = 0;

    switch (fmt) {
    case REPORT_TABLE:
        render_text_table(rep, out);
        break;
    case REPORT_MARKDOWN:
        render_text_markdown(rep, out);
        break;
    case REPORT_CSV:
        render_text_csv(rep, out);
        break;
    case REPORT_HTML:
        render_html(rep, out);
        break;
    case REPORT_OPENMETRICS:
        render_openmetrics(rep, out);
        break;
    case REPORT_JSON:
        rc = write_json(rep, out);
        break;
    }
    /* flushed here: a full disk or a closed pipe often shows only when the buffer goes out */
    if (rc != 0 || fflush(out) != 0 || ferror(out))
        return kp_err_set(err, "cannot write the report: %s", strerror(errno ? errno : EIO));
    return 0;
}
