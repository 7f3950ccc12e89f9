/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_names.c - label keys and values, names and quantities as the API server has them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "controller/kube/kube_names.h"

static void test_kube_names_keys(void **state)
{
    struct kp_err err;
    (void)state;
    assert_int_equal(kube_names_check_key("team", &err), 0);
    assert_int_equal(kube_names_check_key("karpenter.sh/do-not-disrupt", &err), 0);
    assert_int_equal(kube_names_check_key("a.b-c/X_y.z", &err), 0);
    assert_int_equal(kube_names_check_key("", &err), -1);
    assert_int_equal(kube_names_check_key("a b", &err), -1);
    assert_int_equal(kube_names_check_key("-a", &err), -1);
    assert_int_equal(kube_names_check_key("Example.com/a", &err), -1); /* prefix lowercase */
    assert_int_equal(kube_names_check_key("/a", &err), -1);
    assert_int_equal(kube_names_check_key("a/", &err), -1);
    assert_int_equal(kube_names_check_key(
                         "a234567890123456789012345678901234567890123456789012345678901234", &err),
                     -1); /* 64 characters */
}

static void test_kube_names_values_and_subdomains(void **state)
{
    struct kp_err err;
    (void)state;
    assert_int_equal(kube_names_check_label_value("", &err), 0);
    assert_int_equal(kube_names_check_label_value("v1.2_3-x", &err), 0);
    assert_int_equal(kube_names_check_label_value("a/b", &err), -1);
    assert_int_equal(kube_names_check_label_value("x-", &err), -1);
    assert_int_equal(kube_names_check_subdomain("system-node-critical", &err), 0);
    assert_int_equal(kube_names_check_subdomain("a.b", &err), 0);
    assert_int_equal(kube_names_check_subdomain("A", &err), -1);
    assert_int_equal(kube_names_check_subdomain("a..b", &err), -1);
    assert_int_equal(kube_names_check_subdomain("a.", &err), -1);
}

static void test_kube_names_quantities(void **state)
{
    struct kp_err err;
    double q = 0;
    (void)state;
    assert_int_equal(kube_names_parse_quantity("100m", &q, &err), 0);
    assert_float_equal(q, 0.1, 1e-12);
    assert_int_equal(kube_names_parse_quantity("64Mi", &q, &err), 0);
    assert_float_equal(q, 64.0 * 1048576, 0.5);
    assert_int_equal(kube_names_parse_quantity("1.5", &q, &err), 0);
    assert_float_equal(q, 1.5, 1e-12);
    assert_int_equal(kube_names_parse_quantity("2G", &q, &err), 0);
    assert_float_equal(q, 2e9, 0.5);
    assert_int_equal(kube_names_parse_quantity("1e3", &q, &err), 0);
    assert_float_equal(q, 1000, 1e-9);
    assert_int_equal(kube_names_parse_quantity("1E", &q, &err), 0); /* exa */
    assert_float_equal(q, 1e18, 1e3);
    assert_int_equal(kube_names_parse_quantity("abc", &q, &err), -1);
    assert_int_equal(kube_names_parse_quantity("-1", &q, &err), -1);
    assert_int_equal(kube_names_parse_quantity("1Mb", &q, &err), -1);
    assert_int_equal(kube_names_parse_quantity("0x10", &q, &err), -1);
    assert_int_equal(kube_names_parse_quantity("inf", &q, &err), -1);
    assert_int_equal(kube_names_parse_quantity("", &q, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kube_names_keys),
        cmocka_unit_test(test_kube_names_values_and_subdomains),
        cmocka_unit_test(test_kube_names_quantities),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
