/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_report.c - libFuzzer target for report input: the bytes are read as a saved report
 * (report_from_json, then every renderer and a comparison with itself), as a report file
 * (report_load's own walk of the top level and results[]: it must accept exactly what
 * report_from_json accepts of the same bytes) and as an agent document (report_group_add_doc,
 * report_finish, every renderer). Any input must give a report or one
 * error line, without crashes, leaks or unbounded memory. Corpus: test/fuzz/corpus/report/. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    kp_alloc_init_json();
    sink = fopen("/dev/null", "w");
    return 0;
}

static void check_err(const struct kp_err *err)
{
    if (!err->msg[0] || strchr(err->msg, '\n'))
        __builtin_trap(); /* a failure must say why, in one line */
}

static void render_all(const struct report *rep)
{
    static const enum report_format fmts[] = {REPORT_TABLE, REPORT_MARKDOWN, REPORT_CSV,
                                              REPORT_HTML, REPORT_JSON};
    struct kp_err err;

    for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
        kp_err_clear(&err);
        if (report_render(rep, fmts[i], sink, &err) != 0)
            check_err(&err); /* a loaded report renders, or says why */
    }
}

static void as_report(const json_t *doc)
{
    struct kp_err err;
    struct compare_opts opts;
    struct compare *cmp;
    struct report *rep;

    kp_err_clear(&err);
    rep = report_from_json(doc, &err);
    if (!rep) {
        check_err(&err);
        return;
    }
    render_all(rep);
    compare_opts_init(&opts);
    cmp = compare_reports(rep, rep, &opts, &err);
    if (cmp) {
        if (compare_regression_count(cmp) != 0)
            __builtin_trap(); /* a report cannot regress against itself */
        kp_err_clear(&err);
        if (compare_render(cmp, REPORT_TABLE, sink, &err) != 0)
            check_err(&err);
        kp_err_clear(&err);
        if (compare_render(cmp, REPORT_JSON, sink, &err) != 0)
            check_err(&err);
        compare_free(cmp);
    }
    report_free(rep);
}

static void as_agent_doc(const json_t *doc)
{
    struct kp_err err;
    struct report *rep = report_new();

    kp_err_clear(&err);
    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err) !=
        0) {
        check_err(&err);
    } else if (report_finish(rep, &err) == 0) {
        render_all(rep);
    } else {
        check_err(&err);
    }
    report_free(rep);
}

/* The bytes as a file through report_load: loaded exactly when report_from_json accepts the
 * parsed document (doc NULL: not JSON, never loaded); a loaded report renders like the other. */
static void as_file(const uint8_t *data, size_t size, const json_t *doc)
{
    struct kp_err err;
    struct report *rep, *ref;
    char path[64];
    int fd = memfd_create("report", 0);

    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        if (fd >= 0)
            close(fd);
        return;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    kp_err_clear(&err);
    rep = report_load(path, &err);
    close(fd);
    if (!rep)
        check_err(&err);
    kp_err_clear(&err);
    ref = doc ? report_from_json(doc, &err) : NULL;
    /* the file loader and the document reader must agree, except that jansson's json_loadb
     * lets a NUL byte between tokens pass where the loader (rightly: RFC 8259) refuses it */
    if (!rep != !ref && !(ref && memchr(data, 0, size)))
        __builtin_trap();
    if (rep)
        render_all(rep);
    report_free(rep);
    report_free(ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *doc;

    if (size > 1 << 20)
        return 0;
    doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    as_file(data, size, doc);
    if (!doc)
        return 0;
    as_report(doc);
    as_agent_doc(doc);
    json_decref(doc);
    return 0;
}
