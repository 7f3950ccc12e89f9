/* SPDX-License-Identifier: Apache-2.0 */
/* test_yaml_load.c - the guarded YAML loader: scalars as strings (kubeconfig) or typed by the
 * YAML 1.2 core rules (manifests), the first document or all, duplicate keys, and every limit
 * and refusal with its message and fault: size, depth, node count, aliases, keys, syntax. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/yaml_load.h"

/* A compact, key-sorted dump of what text loads to with o (caller frees), or NULL on failure. */
static char *load(const char *text, const struct yaml_load_opts *o, struct kp_err *err)
{
    json_t *out = NULL;
    char *s;

    kp_err_clear(err);
    if (yaml_load(text, strlen(text), o, &out, err) != 0) {
        assert_null(out);
        return NULL;
    }
    s = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(out);
    return s;
}

static void assert_loads(const char *text, const struct yaml_load_opts *o, const char *want)
{
    struct kp_err err;
    char *got = load(text, o, &err);

    if (!got)
        fail_msg("%s: %s", text, kp_err_msg(&err));
    assert_string_equal(got, want);
    free(got);
}

static void assert_refused(const char *text, const struct yaml_load_opts *o, const char *want)
{
    struct kp_err err;
    char *got = load(text, o, &err);

    if (got)
        fail_msg("%s loaded as %s", text, got);
    assert_string_equal(kp_err_msg(&err), want);
}

static void test_yaml_load_kubeconfig_guard(void **state)
{
    static const struct yaml_load_opts o = {
        .max_bytes = 1 << 20, .max_depth = 8, .max_nodes = 100, .doc_kind = "a kubeconfig"};
    char many[1024];
    (void)state;

    /* scalars stay strings, quoted or not */
    assert_loads("a: [1, 2, {b: c}]\n\"q\": 'x'\nt: true\nn: ~\ne:\n", &o,
                 "{\"a\":[\"1\",\"2\",{\"b\":\"c\"}],\"e\":\"\",\"n\":\"~\",\"q\":\"x\","
                 "\"t\":\"true\"}");
    /* node count limit: the root and 99 scalars fit */
    strcpy(many, "[");
    for (int i = 0; i < 120; i++)
        strcat(many, "1,");
    strcat(many, "1]");
    assert_refused(many, &o, "line 1 column 200: document has too many nodes");
    /* anchors are harmless, aliases are refused */
    assert_loads("a: &x 1\n", &o, "{\"a\":\"1\"}");
    assert_refused("a: &x 1\nb: *x\n", &o,
                   "line 2 column 4: YAML aliases (*name) are not allowed in a kubeconfig");
    /* an empty file is an empty object; a later document is not even read */
    assert_loads("", &o, "{}");
    assert_loads("a: 1\n---\nb: [\n", &o, "{\"a\":\"1\"}");
    /* the last of two equal keys wins */
    assert_loads("a: 1\na: 2\n", &o, "{\"a\":\"2\"}");
}

static void test_yaml_load_typed_scalars(void **state)
{
    static const struct yaml_load_opts o = {
        .max_bytes = 1 << 20, .max_depth = 8, .typed_scalars = true, .all_documents = true};
    (void)state;

    assert_loads("i: 42\nneg: -7\nr: 1.5\nb: true\nf: False\nn: ~\nN: null\ne:\n", &o,
                 "[{\"N\":null,\"b\":true,\"e\":null,\"f\":false,\"i\":42,\"n\":null,"
                 "\"neg\":-7,\"r\":1.5}]");
    /* quoted or tagged scalars, YAML 1.1 words, hex and nan stay strings; keys are never typed */
    assert_loads("s: '42'\nt: !!str 7\nk: yes\nh: 0x1F\nx: .nan\ntrue: 1\n", &o,
                 "[{\"h\":\"0x1F\",\"k\":\"yes\",\"s\":\"42\",\"t\":\"7\",\"true\":1,"
                 "\"x\":\".nan\"}]");
}

static void test_yaml_load_yaml11_bools(void **state)
{
    static const struct yaml_load_opts o = {.max_bytes = 1 << 20,
                                            .max_depth = 8,
                                            .typed_scalars = true,
                                            .yaml11_bools = true,
                                            .all_documents = true};
    (void)state;

    /* go-yaml v2's booleans; quoted ones and other words stay strings */
    assert_loads("a: yes\nb: Off\nc: N\nd: 'on'\ne: yess\nf: true\n", &o,
                 "[{\"a\":true,\"b\":false,\"c\":false,\"d\":\"on\",\"e\":\"yess\",\"f\":true}]");
    /* and its integers (strconv.ParseInt base 0 after removing '_'); near misses stay strings */
    assert_loads("a: 0x1F\nb: 0o17\nc: 017\nd: -0b101\ne: 1_000\nf: 0x\ng: 2024-01-02\nh: '0x1F'\n",
                 &o,
                 "[{\"a\":31,\"b\":15,\"c\":15,\"d\":-5,\"e\":1000,\"f\":\"0x\","
                 "\"g\":\"2024-01-02\",\"h\":\"0x1F\"}]");
}

static void test_yaml_load_documents(void **state)
{
    static const struct yaml_load_opts all = {
        .max_bytes = 1 << 20, .max_depth = 8, .typed_scalars = true, .all_documents = true};
    (void)state;

    /* empty and null documents are left out */
    assert_loads("---\na: 1\n---\n---\n~\n---\n- b\n", &all, "[{\"a\":1},[\"b\"]]");
    assert_loads("", &all, "[]");
    /* with all documents, a broken later one fails the load */
    assert_refused("a: 1\n---\nb: [\n", &all,
                   "line 4 column 1: invalid YAML: did not find expected node content "
                   "while parsing a flow node (started at line 4)");
}

static void test_yaml_load_duplicate_and_complex_keys(void **state)
{
    struct yaml_load_fault fault;
    const struct yaml_load_opts o = {
        .max_bytes = 1 << 20, .max_depth = 8, .unique_keys = true, .fault = &fault};
    (void)state;

    assert_refused("a: 1\nb: {c: 2}\na: 3\n", &o, "line 3 column 1: duplicate key 'a'");
    assert_int_equal(fault.fail, YAML_LOAD_DUPLICATE_KEY);
    assert_int_equal(fault.line, 3);
    assert_int_equal(fault.column, 1);
    assert_refused("? [a]\n: b\n", &o, "line 1 column 3: mapping keys must be plain strings");
    assert_int_equal(fault.fail, YAML_LOAD_KEY);
    assert_loads("a: 1\nb: {a: 2}\n", &o, "{\"a\":\"1\",\"b\":{\"a\":\"2\"}}"); /* other maps */
    assert_int_equal(fault.fail, YAML_LOAD_OK);
}

static void test_yaml_load_limits(void **state)
{
    struct yaml_load_fault fault;
    struct yaml_load_opts o = {.max_bytes = 64, .max_depth = 3, .fault = &fault};
    size_t n = 100000;
    char *deep = kp_xmalloc(2 * n + 1);
    json_t *out = NULL;
    struct kp_err err;
    (void)state;

    assert_loads("[[[]]]", &o, "[[[]]]");
    assert_refused("[[[[]]]]", &o, "line 1 column 4: nesting is too deep");
    assert_int_equal(fault.fail, YAML_LOAD_TOO_DEEP);
    assert_int_equal(fault.column, 4);
    assert_loads("a: {b: {c: x}}", &o, "{\"a\":{\"b\":{\"c\":\"x\"}}}"); /* scalars are no level */
    assert_refused("a: b\nc: *d\n", &o, "line 2 column 4: YAML aliases (*name) are not allowed");
    assert_int_equal(fault.fail, YAML_LOAD_ALIAS);
    assert_refused("a: [1, 2\n", &o,
                   "line 2 column 1: invalid YAML: did not find expected ',' or ']' while "
                   "parsing a flow sequence (started at line 1)");
    assert_int_equal(fault.fail, YAML_LOAD_SYNTAX);
    memset(deep, 'x', 65);
    deep[65] = '\0';
    assert_refused(deep, &o, "file is larger than 64 bytes");
    assert_int_equal(fault.fail, YAML_LOAD_TOO_BIG);
    /* deep nesting costs the heap a frame per allowed level, never the C stack */
    o.max_bytes = 2 * n;
    o.max_depth = 64;
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    assert_int_equal(yaml_load(deep, 2 * n, &o, &out, &err), -1);
    assert_string_equal(kp_err_msg(&err), "line 1 column 65: nesting is too deep");
    assert_null(out);
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_load_kubeconfig_guard),
        cmocka_unit_test(test_yaml_load_typed_scalars),
        cmocka_unit_test(test_yaml_load_yaml11_bools),
        cmocka_unit_test(test_yaml_load_documents),
        cmocka_unit_test(test_yaml_load_duplicate_and_complex_keys),
        cmocka_unit_test(test_yaml_load_limits),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
