/* SPDX-License-Identifier: Apache-2.0 */
/* test_cni_json.c - the CNI documents of --cni-conf: a bridge plugin's 1.0.0 result (dual-stack,
 * interfaces on both sides) and a 0.4.0 ptp result give the pod's addresses, prefixes and
 * default routes; bad results, error documents and VERSION answers; conflist checks and the
 * chained stdin config (name, cniVersion, prevResult). Running the plugins needs root:
 * e2e.local_cni does that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_err.h"
#include "controller/local/cni_json.h"

/* As the bridge plugin (1.1.1) prints it for ADD with host-local, dual-stack. */
static const char bridge_result[] =
    "{\"cniVersion\":\"1.0.0\",\"interfaces\":["
    "{\"name\":\"cni0\",\"mac\":\"6a:3c:aa:01:02:03\"},"
    "{\"name\":\"veth31eeec3b\",\"mac\":\"4e:11:22:33:44:55\"},"
    "{\"name\":\"eth0\",\"mac\":\"ee:11:22:33:44:66\",\"sandbox\":\"/run/netns/kpl1-n1p1\"}],"
    "\"ips\":[{\"interface\":2,\"address\":\"198.18.16.2/24\",\"gateway\":\"198.18.16.1\"},"
    "{\"interface\":2,\"address\":\"2001:2:0:10::2/64\",\"gateway\":\"2001:2:0:10::1\"}],"
    "\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"198.18.16.1\"},{\"dst\":\"::/0\"}],"
    "\"dns\":{}}";

static void test_cni_json_bridge_result(void **state)
{
    struct kp_err err = {{0}};
    struct cni_result r;
    json_t *doc = cni_result_parse(bridge_result, strlen(bridge_result), &r, &err);
    const struct cni_ip *v4, *v6;

    (void)state;
    if (!doc)
        fail_msg("%s", kp_err_msg(&err));
    assert_int_equal(r.n_ips, 2);
    assert_int_equal(r.n_ifaces, 3);
    assert_false(r.ifaces[0].in_sandbox);
    assert_true(r.ifaces[2].in_sandbox);
    assert_string_equal(r.ifaces[1].name, "veth31eeec3b");
    v4 = cni_result_ip(&r, false);
    v6 = cni_result_ip(&r, true);
    assert_non_null(v4);
    assert_non_null(v6);
    assert_string_equal(v4->addr, "198.18.16.2");
    assert_int_equal(v4->prefix, 24);
    assert_string_equal(v4->gateway, "198.18.16.1");
    assert_string_equal(v6->addr, "2001:2:0:10::2");
    assert_int_equal(v6->prefix, 64);
    assert_true(v6->v6);
    assert_true(r.default_route[0]);
    assert_true(r.default_route[1]);
    assert_string_equal(json_string_value(json_object_get(doc, "cniVersion")), "1.0.0");
    json_decref(doc);
}

/* 0.4.0: "version" per IP; an address of the host's side (interface 0) is not the pod's. */
static void test_cni_json_ptp_040_result(void **state)
{
    static const char text[] =
        "{\"cniVersion\":\"0.4.0\",\"interfaces\":[{\"name\":\"veth0a\"},"
        "{\"name\":\"eth0\",\"sandbox\":\"/run/netns/p\"}],"
        "\"ips\":[{\"version\":\"4\",\"interface\":0,\"address\":\"198.18.17.1/32\"},"
        "{\"version\":\"4\",\"interface\":1,\"address\":\"198.18.17.5/24\","
        "\"gateway\":\"198.18.17.1\"}]}";
    struct kp_err err = {{0}};
    struct cni_result r;
    json_t *doc = cni_result_parse(text, strlen(text), &r, &err);

    (void)state;
    assert_non_null(doc);
    assert_string_equal(cni_result_ip(&r, false)->addr, "198.18.17.5");
    assert_null(cni_result_ip(&r, true));
    assert_false(r.default_route[0]); /* no routes: kperf says which one to add */
    json_decref(doc);
}

static void test_cni_json_bad_results(void **state)
{
    static const char *const bad[][2] = {
        {"not json", "not a JSON object"},
        {"[]", "not a JSON object"},
        {"{\"cniVersion\":\"1.0.0\"}", "no IP address"},
        {"{\"ips\":[{\"address\":\"198.18.16.2\"}]}", "not an address/prefix"},
        {"{\"ips\":[{\"address\":\"198.18.16.300/24\"}]}", "not an address/prefix"},
        {"{\"ips\":[{\"address\":\"198.18.16.2/33\"}]}", "not an address/prefix"},
        {"{\"ips\":[{\"address\":\"198.18.16.2/24\",\"interface\":3}]}", "names no interface"},
        {"{\"interfaces\":[{\"mac\":\"x\"}],\"ips\":[]}", "has no valid name"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct kp_err err = {{0}};
        struct cni_result r;
        json_t *doc = cni_result_parse(bad[i][0], strlen(bad[i][0]), &r, &err);
        if (doc)
            fail_msg("accepted %s", bad[i][0]);
        if (!strstr(kp_err_msg(&err), bad[i][1]))
            fail_msg("%s: got '%s', want '%s'", bad[i][0], kp_err_msg(&err), bad[i][1]);
    }
}

static void test_cni_json_error_document(void **state)
{
    static const char host_local[] =
        "{\"code\":999,\"msg\":\"failed to allocate for range 0: no IP addresses available in "
        "range set: 198.18.18.1-198.18.18.2\"}";
    static const char with_details[] = "{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"try "
                                       "again\",\"details\":\"line1\\nline2\"}";
    char msg[128];
    long code = 0;

    (void)state;
    assert_true(cni_error_parse(host_local, strlen(host_local), &code, msg, sizeof(msg)));
    assert_int_equal(code, 999);
    assert_non_null(strstr(msg, "no IP addresses available"));
    assert_true(cni_error_parse(with_details, strlen(with_details), &code, msg, sizeof(msg)));
    assert_int_equal(code, 11);
    assert_string_equal(msg, "try again: line1 line2"); /* one line */
    assert_false(cni_error_parse("panic: oops", 11, &code, msg, sizeof(msg)));
    assert_false(cni_error_parse("{\"msg\":\"no code\"}", 17, &code, msg, sizeof(msg)));
    assert_false(cni_error_parse("", 0, &code, msg, sizeof(msg)));
}

static void test_cni_json_version_answer(void **state)
{
    static const char answer[] = "{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[\"0.3.0\","
                                 "\"0.3.1\",\"0.4.0\",\"1.0.0\"]}";
    json_t *sup = NULL;
    bool supports = false;

    (void)state;
    assert_true(cni_version_parse(answer, strlen(answer), "1.0.0", &sup, &supports));
    assert_true(supports);
    assert_int_equal(json_array_size(sup), 4);
    json_decref(sup);
    assert_true(cni_version_parse(answer, strlen(answer), "1.1.0", &sup, &supports));
    assert_false(supports);
    json_decref(sup);
    assert_false(cni_version_parse("CNI bridge plugin", 17, "1.0.0", &sup, &supports));
    assert_null(sup);
}

static void test_cni_json_conflist_checks(void **state)
{
    static const char *const bad[][2] = {
        {"{", "not JSON"},
        {"[]", "not a CNI network configuration list"},
        {"{\"cniVersion\":\"1.0.0\",\"plugins\":[{\"type\":\"bridge\"}]}", "no \"name\""},
        {"{\"cniVersion\":\"0.2.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"bridge\"}]}",
         "0.3.0 or later"},
        {"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[]}", "non-empty array"},
        {"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"../sh\"}]}",
         "no valid \"type\""},
        {"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"b\",\"ipam\":{}}]}",
         "ipam has no valid"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct kp_err err = {{0}};
        json_t *l = cni_conflist_parse(bad[i][0], strlen(bad[i][0]), &err);
        if (l)
            fail_msg("accepted %s", bad[i][0]);
        if (!strstr(kp_err_msg(&err), bad[i][1]))
            fail_msg("%s: got '%s', want '%s'", bad[i][0], kp_err_msg(&err), bad[i][1]);
    }
}

/* A single .conf becomes a list of one; each plugin's stdin carries the list's name and
 * version, and the previous result from the second plugin on. */
static void test_cni_json_chained_config(void **state)
{
    static const char conf[] = "{\"cniVersion\":\"1.0.0\",\"name\":\"one\",\"type\":\"ptp\"}";
    static const char list[] = "{\"cniVersion\":\"1.0.0\",\"name\":\"two\",\"plugins\":["
                               "{\"type\":\"bridge\",\"bridge\":\"cni0\"},{\"type\":\"portmap\"}]}";
    struct kp_err err = {{0}};
    json_t *l1 = cni_conflist_parse(conf, strlen(conf), &err);
    json_t *l2 = cni_conflist_parse(list, strlen(list), &err);
    json_t *prev = json_pack("{s:s}", "cniVersion", "1.0.0");
    char *c0, *c1;
    json_t *j0, *j1;

    (void)state;
    assert_non_null(l1);
    assert_non_null(l2);
    assert_int_equal(json_array_size(json_object_get(l1, "plugins")), 1);
    c0 = cni_plugin_config(l2, 0, NULL);
    c1 = cni_plugin_config(l2, 1, prev);
    j0 = json_loads(c0, 0, NULL);
    j1 = json_loads(c1, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j0, "name")), "two");
    assert_string_equal(json_string_value(json_object_get(j0, "cniVersion")), "1.0.0");
    assert_string_equal(json_string_value(json_object_get(j0, "bridge")), "cni0");
    assert_null(json_object_get(j0, "prevResult"));
    assert_string_equal(json_string_value(json_object_get(j1, "type")), "portmap");
    assert_true(json_equal(json_object_get(j1, "prevResult"), prev));
    json_decref(j0);
    json_decref(j1);
    free(c0);
    free(c1);
    json_decref(prev);
    json_decref(l1);
    json_decref(l2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cni_json_bridge_result),
        cmocka_unit_test(test_cni_json_ptp_040_result),
        cmocka_unit_test(test_cni_json_bad_results),
        cmocka_unit_test(test_cni_json_error_document),
        cmocka_unit_test(test_cni_json_version_answer),
        cmocka_unit_test(test_cni_json_conflist_checks),
        cmocka_unit_test(test_cni_json_chained_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
