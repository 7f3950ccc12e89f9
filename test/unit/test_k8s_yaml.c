/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_yaml.c - JSON -> YAML -> JSON keeps types; ambiguous strings stay strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_yaml.h"

static char *emit_to_string(const json_t *docs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kp_err err;

    assert_non_null(f);
    assert_int_equal(k8s_yaml_emit(f, docs, &err), 0);
    fclose(f);
    return buf;
}

static void test_k8s_yaml_round_trip_keeps_types(void **state)
{
    json_t *docs =
        json_pack("[{s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}, s:[i, f, b, b, n], s:{}, s:[]},"
                  " {s:s}]",
                  "kind", "ConfigMap", "data", "mode", "0440", "yes", "yes", "on", "on", "empty",
                  "", "num", "5201", "multi", "line one\nline two", "colon", "a: b", "list", 42,
                  1.5, 1, 0, "emptyobj", "emptyarr", "kind", "Second");
    json_array_append_new(json_object_get(json_array_get(docs, 0), "list"), json_real(2.0));
    char *yaml = emit_to_string(docs);
    json_t *back = NULL;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_yaml_parse(yaml, strlen(yaml), "mem", &back, &err), 0);
    assert_true(json_equal(docs, back));
    /* the quoted forms are what kubectl would also read as strings */
    assert_non_null(strstr(yaml, "\"0440\""));
    assert_non_null(strstr(yaml, "\"yes\""));
    assert_non_null(strstr(yaml, "\"5201\""));
    free(yaml);
    json_decref(back);
    json_decref(docs);
}

static void test_k8s_yaml_parse_multi_document_with_comments(void **state)
{
    const char *text = "# leading comment\n"
                       "---\n"
                       "apiVersion: v1\n"
                       "kind: ServiceAccount\n"
                       "metadata: {name: kperf, labels: {a: 'true'}}\n"
                       "---\n"
                       "# empty document above is skipped\n"
                       "---\n"
                       "kind: X\n"
                       "spec:\n"
                       "  replicas: 3\n"
                       "  ratio: 0.25\n"
                       "  flag: true\n"
                       "  nothing: ~\n"
                       "  items:\n"
                       "    - one\n"
                       "    - 2\n";
    json_t *docs = NULL;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_yaml_parse(text, strlen(text), "mem", &docs, &err), 0);
    assert_int_equal(json_array_size(docs), 2);
    json_t *spec = json_object_get(json_array_get(docs, 1), "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "replicas")), 3);
    assert_true(json_is_real(json_object_get(spec, "ratio")));
    assert_true(json_is_true(json_object_get(spec, "flag")));
    assert_true(json_is_null(json_object_get(spec, "nothing")));
    assert_int_equal(json_integer_value(json_array_get(json_object_get(spec, "items"), 1)), 2);
    json_t *labels =
        json_object_get(json_object_get(json_array_get(docs, 0), "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, "a")), "true");
    json_decref(docs);
}

static void test_k8s_yaml_parse_refuses_aliases_duplicates_and_bad_syntax(void **state)
{
    const char *alias = "a: &x {b: 1}\nc: *x\n";
    const char *dup = "a: 1\na: 2\n";
    const char *bad = "a: [1, 2\n";
    json_t *docs = NULL;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_yaml_parse(alias, strlen(alias), "alias.yaml", &docs, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "alias"));
    assert_int_equal(k8s_yaml_parse(dup, strlen(dup), "dup.yaml", &docs, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "duplicate key 'a'"));
    assert_int_equal(k8s_yaml_parse(bad, strlen(bad), "bad.yaml", &docs, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "bad.yaml:"));
}

static void test_k8s_yaml_parse_limits_depth(void **state)
{
    char text[4 * (K8S_YAML_MAX_DEPTH + 10) + 1];
    size_t n = 0;
    json_t *docs = NULL;
    struct kp_err err;
    (void)state;

    for (int i = 0; i < K8S_YAML_MAX_DEPTH + 5; i++)
        text[n++] = '[';
    for (int i = 0; i < K8S_YAML_MAX_DEPTH + 5; i++)
        text[n++] = ']';
    text[n] = '\0';
    assert_int_equal(k8s_yaml_parse(text, n, "deep", &docs, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "deeper"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_yaml_round_trip_keeps_types),
        cmocka_unit_test(test_k8s_yaml_parse_multi_document_with_comments),
        cmocka_unit_test(test_k8s_yaml_parse_refuses_aliases_duplicates_and_bad_syntax),
        cmocka_unit_test(test_k8s_yaml_parse_limits_depth),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
