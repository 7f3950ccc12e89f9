/* SPDX-License-Identifier: Apache-2.0 */
/* report_scan.c - report_load (report.h): reads a report file without ever holding the whole
 * document as a tree. Owns the scanner; validation is report_validate.c's, the stored rows
 * report_lazy.c's and report_pack.c's, the report itself report.c's (report_adopt). */
#include "controller/report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/report_file.h"
#include "controller/report/report_int.h"
#include "controller/report/report_lazy.h"
#include "controller/report/report_pack.h"
#include "controller/report/report_validate.h"
#include "controller/report/urlcred.h"

/* The loader walks the top-level object and its results[] by hand and hands every other value
 * to jansson (JSON_DISABLE_EOF_CHECK parses one value and says where it ended). Each row is
 * validated and packed (report_pack.h) as soon as it is parsed, so memory holds the file's
 * bytes, the packed rows, and one row's full tree at a time, never the whole document as a
 * tree (15-20x the file for histograms). */
struct scan {
    const char *path;
    const char *b;
    size_t len, i;
    struct kp_err *err;
    struct report_row_info *info; /* ours: report_row_info of each row, by index */
    size_t n_info, cap_info;      /* entries used (the rest zero), allocated */
};

static void skip_ws(struct scan *sc)
{
    while (sc->i < sc->len && strchr(" \t\r\n", sc->b[sc->i]) && sc->b[sc->i])
        sc->i++;
}

static int line_at(const struct scan *sc, size_t pos)
{
    int line = 1;

    for (size_t k = 0; k < pos && k < sc->len; k++)
        line += sc->b[k] == '\n';
    return line;
}

static int scan_fail(struct scan *sc, const char *what)
{
    kp_err_set(sc->err, "%s: invalid JSON at line %d: %s", sc->path, line_at(sc, sc->i), what);
    return report_one_line(sc->err);
}

/* Parses one JSON value at the cursor and moves past it. NULL with err. */
static json_t *scan_value(struct scan *sc)
{
    json_error_t jerr;
    json_t *v;

    skip_ws(sc);
    v = json_loadb(sc->b + sc->i, sc->len - sc->i,
                   JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!v) {
        kp_err_set(sc->err, "%s: invalid JSON at line %d: %s", sc->path,
                   line_at(sc, sc->i) + jerr.line - 1, jerr.text);
        report_one_line(sc->err);
        return NULL;
    }
    sc->i += (size_t)jerr.position;
    return v;
}

/* Expects one of `chars` (after white space) and returns it, or 0 with err. */
static char scan_punct(struct scan *sc, const char *chars, const char *what)
{
    skip_ws(sc);
    if (sc->i < sc->len && sc->b[sc->i] && strchr(chars, sc->b[sc->i]))
        return sc->b[sc->i++];
    scan_fail(sc, what);
    return 0;
}

/* results[]: each row parsed, validated and packed in turn. */
static int scan_rows(struct scan *sc, json_t *rows)
{
    char c, path[48];
    json_t *stored;

    if (!scan_punct(sc, "[", "results: expected an array"))
        return -1;
    skip_ws(sc);
    if (sc->i < sc->len && sc->b[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    do {
        json_t *row = scan_value(sc);
        if (!row)
            return -1;
        snprintf(path, sizeof(path), "results[%zu]", json_array_size(rows));
        if (json_array_size(rows) >= REPORT_MAX_ENTRIES) {
            json_decref(row);
            return kp_err_set(sc->err, "%s: more than %d results", sc->path, REPORT_MAX_ENTRIES);
        }
        if (report_validate_row(row, path, sc->err) != 0) {
            json_decref(row);
            report_one_line(sc->err);
            return kp_err_prefix(sc->err, "%s", sc->path);
        }
        /* as text until read, unless mostly packed parts (report_lazy.h) */
        stored = report_lazy_store(row, report_pack_row(row));
        if (stored) {
            size_t at = json_array_size(rows);
            if (at >= sc->cap_info) { /* entries of rows kept as trees stay zero */
                size_t cap = sc->cap_info ? 2 * sc->cap_info : 64;
                while (cap <= at)
                    cap *= 2;
                sc->info = kp_xrealloc(sc->info, cap * sizeof(*sc->info));
                memset(&sc->info[sc->cap_info], 0, (cap - sc->cap_info) * sizeof(*sc->info));
                sc->cap_info = cap;
            }
            report_info_copy(row, &sc->info[at]);
            sc->n_info = at + 1;
        }
        json_array_append_new(rows, stored ? stored : json_incref(row));
        json_decref(row);
    } while ((c = scan_punct(sc, ",]", "expected ',' or ']' after a result")) == ',');
    return c ? 0 : -1;
}

/* The whole document: {key: value, ...} with "results" walked by scan_rows. The top-level
 * fields (all but results) are then validated as a document with no rows. */
static struct report *scan_report(struct scan *sc)
{
    json_t *top = json_object(), *rows = NULL, *key;
    struct report *rep = NULL;
    char c;

    skip_ws(sc);
    if (sc->i >= sc->len || sc->b[sc->i] != '{') {
        kp_err_set(sc->err, "%s: expected a JSON object, not a kperf report", sc->path);
        goto out;
    }
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->len && sc->b[sc->i] == '}') {
        sc->i++;
        goto end;
    }
    do {
        json_t *v;
        skip_ws(sc);
        if (sc->i >= sc->len || sc->b[sc->i] != '"') {
            scan_fail(sc, "expected a string as object key");
            goto out;
        }
        if (!(key = scan_value(sc)))
            goto out;
        if (json_object_get(top, json_string_value(key)) ||
            (rows && strcmp(json_string_value(key), "results") == 0)) {
            kp_err_set(sc->err, "%s: invalid JSON at line %d: duplicate object key", sc->path,
                       line_at(sc, sc->i));
            json_decref(key);
            goto out;
        }
        if (!scan_punct(sc, ":", "':' expected")) {
            json_decref(key);
            goto out;
        }
        if (strcmp(json_string_value(key), "results") == 0) {
            rows = json_array();
            json_decref(key);
            if (scan_rows(sc, rows) != 0)
                goto out;
            continue;
        }
        v = scan_value(sc);
        if (!v) {
            json_decref(key);
            goto out;
        }
        json_object_set_new(top, json_string_value(key), v);
        json_decref(key);
    } while ((c = scan_punct(sc, ",}", "expected ',' or '}'")) == ',');
    if (!c)
        goto out;
end:
    skip_ws(sc);
    if (sc->i < sc->len) {
        scan_fail(sc, "end of file expected");
        goto out;
    }
    /* the document without its rows (already checked one by one) */
    if (rows)
        json_object_set_new(top, "results", json_array());
    rep = report_adopt(top, rows, sc->info, sc->n_info, sc->err);
    rows = NULL;
    sc->info = NULL;
    sc->n_info = sc->cap_info = 0;
    if (!rep)
        kp_err_prefix(sc->err, "%s", sc->path);
out:
    json_decref(rows);
    json_decref(top);
    return rep;
}

struct report *report_load(const char *path, struct kp_err *err)
{
    struct scan sc = {.path = path, .err = err};
    struct report *rep;
    char *buf;

    if (report_file_read(path, REPORT_MAX_FILE_BYTES, &buf, &sc.len, err) != 0)
        return NULL;
    if (sc.len == 0) {
        free(buf);
        kp_err_set(err, "%s: empty file, not a kperf report", path);
        return NULL;
    }
    sc.b = buf;
    rep = scan_report(&sc);
    free(buf);
    report_infos_free(sc.info, sc.cap_info); /* NULL unless the load failed */
    if (rep) /* a file from before URLs lost their user-info: it is not rendered again */
        urlcred_redact_strings(json_object_get(report_metadata(rep), "arguments"));
    return rep;
}
