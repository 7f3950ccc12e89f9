/* SPDX-License-Identifier: Apache-2.0 */
/* test_logdoc.c - the agent's document is found in a pod log whatever stderr lines the runtime
 * merged before, inside or after it; the text ends where the JSON value ends; a log without a
 * document gives NULL; a broken document is handed on whole, for its parser to report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/logdoc.h"

/* The document every test embeds, as the agent prints it (indented). */
static const char doc_text[] = "{\n"
                               "  \"schema\": \"kperf.result/v1\",\n"
                               "  \"results\": [\n"
                               "    {\n"
                               "      \"test\": \"TCP_RR\",\n"
                               "      \"ops\": 1234\n"
                               "    }\n"
                               "  ]\n"
                               "}\n";

/* Parses what logdoc_extract found in log and checks it is the document above. */
static void assert_doc(const char *log)
{
    size_t n = 99;
    char *text = logdoc_extract(log, strlen(log), &n);
    json_error_t jerr;
    json_t *want = json_loads(doc_text, 0, &jerr);
    json_t *got;

    assert_non_null(text);
    got = json_loadb(text, n, 0, &jerr);
    assert_non_null(got);
    assert_true(json_equal(want, got));
    assert_int_equal(text[n - 1], '}'); /* the text ends with the value */
    json_decref(got);
    json_decref(want);
    free(text);
}

static void test_alone(void **state)
{
    (void)state;
    assert_doc(doc_text);
}

static void test_lines_around(void **state)
{
    char log[1024];

    (void)state;
    snprintf(log, sizeof(log),
             "kperf-agent: warning: TCP_INFO unavailable\n%skperf-agent: error: TCP_CRR sample 0: "
             "connect: timed out\n",
             doc_text);
    assert_doc(log);
}

/* The runtime read the stderr pipe before the rest of stdout: a status line in the middle. */
static void test_line_inside(void **state)
{
    char log[1024];
    const char *cut = strstr(doc_text, "      \"ops\"");
    int head = (int)(cut - doc_text);

    (void)state;
    snprintf(log, sizeof(log), "%.*skperf-agent: status udp ok 100 0 last 0.000\n%s", head,
             doc_text, cut);
    assert_non_null(strstr(log, "\"TCP_RR\",\nkperf-agent: status"));
    assert_doc(log);
    /* the same without the filter does not parse: the test would catch its removal */
    json_error_t jerr;
    json_t *raw = json_loads(log, JSON_DISABLE_EOF_CHECK, &jerr);
    assert_null(raw);
}

static void test_no_document(void **state)
{
    size_t n = 7;
    const char *log = "kperf-agent: error: --server is required\n  {not at a line start\n";

    (void)state;
    assert_null(logdoc_extract(log, strlen(log), &n));
    assert_int_equal(n, 0);
    assert_null(logdoc_extract("", 0, &n));
}

/* A broken document is handed on to its end, so the caller's parser says what is wrong. */
static void test_broken(void **state)
{
    size_t n = 0;
    const char *log = "{\n  \"schema\": \"kperf.result/v1\",\n  \"results\": [\n";
    char *text = logdoc_extract(log, strlen(log), &n);

    (void)state;
    assert_non_null(text);
    assert_int_equal(n, strlen(log));
    assert_string_equal(text, log);
    free(text);
}

/* Only the first value: a second document (another container's restart) is not glued on. */
static void test_first_value(void **state)
{
    char log[2048];
    size_t n = 0;
    char *text;

    (void)state;
    snprintf(log, sizeof(log), "%s%s", doc_text, "{\"schema\": \"other\"}\n");
    text = logdoc_extract(log, strlen(log), &n);
    assert_non_null(text);
    assert_int_equal(n, strlen(doc_text) - 1); /* up to the closing brace */
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alone),       cmocka_unit_test(test_lines_around),
        cmocka_unit_test(test_line_inside), cmocka_unit_test(test_no_document),
        cmocka_unit_test(test_broken),      cmocka_unit_test(test_first_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
