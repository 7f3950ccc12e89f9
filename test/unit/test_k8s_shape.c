/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_shape.c - nodes of the same shape (issue 30): the node group label, the shape score
 * (arch and instance type required, node group then zone preferred), --nodes-from's
 * substitution of a node that is gone or cordoned (and its refusal when no node has the shape),
 * and the ranked table with why each node is excluded (cordoned, other instance type, virtual,
 * Windows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_shape.h"

static json_t *node(const char *name, const char *type, const char *zone, const char *group)
{
    json_t *n =
        json_pack("{s:{s:s, s:{s:s, s:s, s:s, s:s}}, s:{}, s:{s:[{s:s, s:s}]}}", "metadata", "name",
                  name, "labels", "kubernetes.io/arch", "amd64", "kubernetes.io/os", "linux",
                  "node.kubernetes.io/instance-type", type, "topology.kubernetes.io/zone", zone,
                  "spec", "status", "conditions", "type", "Ready", "status", "True");
    if (group)
        json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"),
                            "eks.amazonaws.com/nodegroup", json_string(group));
    return n;
}

static void set_label(json_t *n, const char *k, const char *v)
{
    json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"), k,
                        json_string(v));
}

/* n-2 cordoned, n-3 and n-4 like the report's nodes, n-5 another instance type, n-6 Fargate,
 * n-7 Windows */
static json_t *cluster(void)
{
    json_t *all = json_array(), *n2 = node("n-2", "m5.large", "a", "perf");
    json_t *n6 = node("n-6", "m5.large", "a", "perf"), *n7 = node("n-7", "m5.large", "b", "perf");

    json_object_set_new(json_object_get(n2, "spec"), "unschedulable", json_true());
    set_label(n6, "eks.amazonaws.com/compute-type", "fargate");
    set_label(n7, "kubernetes.io/os", "windows");
    json_array_append_new(all, n2);
    json_array_append_new(all, node("n-4", "m5.large", "b", "perf"));
    json_array_append_new(all, node("n-3", "m5.large", "a", "perf"));
    json_array_append_new(all, node("n-5", "c5.xlarge", "a", "perf"));
    json_array_append_new(all, n6);
    json_array_append_new(all, n7);
    return all;
}

static json_t *eligible_of(const json_t *all)
{
    json_t *out = json_array(), *n;
    size_t i;

    json_array_foreach(all, i, n)
    {
        if (k8s_facts_node_eligible(n, NULL, NULL))
            json_array_append(out, n);
    }
    return out;
}

/* a saved run on n-old-1 (server, zone a) and n-2 (client, zone b) of group perf */
static json_t *report(void)
{
    return json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s, s:s}]}}",
                     "metadata", "nodes", "name", "n-old-1", "role", "server", "arch", "amd64",
                     "instance_type", "m5.large", "zone", "a", "node_group",
                     "eks.amazonaws.com/nodegroup=perf", "name", "n-2", "role", "client", "arch",
                     "amd64", "instance_type", "m5.large", "zone", "b", "node_group",
                     "eks.amazonaws.com/nodegroup=perf");
}

static void test_k8s_shape_group_and_score(void **state)
{
    json_t *n = node("x", "m5.large", "a", NULL), *rep = report();
    const json_t *want =
        json_array_get(json_object_get(json_object_get(rep, "metadata"), "nodes"), 0);
    char *g, *why = NULL;
    (void)state;

    assert_null(k8s_shape_node_group(n));
    set_label(n, "alpha.eksctl.io/nodegroup-name", "perf");
    set_label(n, "tke.cloud.tencent.com/nodepool-id", "np-1");
    g = k8s_shape_node_group(n);
    assert_string_equal(g, "alpha.eksctl.io/nodegroup-name=perf"); /* the more specific */
    free(g);
    assert_int_equal(k8s_shape_score(want, n, &why), 1); /* zone only */
    assert_null(why);
    set_label(n, "eks.amazonaws.com/nodegroup", "perf");
    assert_int_equal(k8s_shape_score(want, n, NULL), 3);
    set_label(n, "kubernetes.io/arch", "arm64");
    assert_int_equal(k8s_shape_score(want, n, &why), -1);
    assert_string_equal(why, "arch arm64, not amd64");
    free(why);
    set_label(n, "kubernetes.io/arch", "amd64");
    set_label(n, "node.kubernetes.io/instance-type", "c5.xlarge");
    assert_int_equal(k8s_shape_score(want, n, &why), -1);
    assert_string_equal(why, "instance type c5.xlarge, not m5.large");
    free(why);
    json_decref(rep);
    json_decref(n);
}

static void test_k8s_shape_substitutes_gone_and_cordoned_nodes(void **state)
{
    json_t *all = cluster(), *el = eligible_of(all), *rep = report(), *subst = NULL;
    char *a = NULL, *b = NULL;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_shape_nodes_from(rep, all, el, NULL, &a, &b, &subst, &err), 0);
    assert_string_equal(a, "n-3"); /* zone a, group perf; n-5 is another type */
    assert_string_equal(b, "n-4"); /* zone b; n-2 cordoned, n-7 Windows */
    assert_int_equal(json_array_size(subst), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(subst, 0), "was")),
                        "n-old-1");
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(subst, 0), "why")),
                           "node n-old-1 is gone (no node of that name); same shape: arch amd64, "
                           "instance type m5.large, zone a"));
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(subst, 1), "why")),
                           "node n-2 can no longer run agents: cordoned"));
    /* the report's node lines say which node each stands in for */
    json_t *facts =
        json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:O}", "nodes", "name", "n-3", "role", "server",
                  "name", "n-4", "role", "client", "nodes_substituted", subst);
    k8s_shape_mark(facts);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(facts, "nodes"), 0), "in_place_of")),
                        "n-old-1");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(facts, "nodes"), 1), "in_place_of")),
                        "n-2");
    json_decref(facts);
    free(a);
    free(b);
    json_decref(subst);
    /* no node of the shape: refused, saying why */
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(rep, "metadata"), "nodes"), 0),
        "instance_type", json_string("m6i.metal"));
    assert_int_equal(k8s_shape_nodes_from(rep, all, el, NULL, &a, &b, &subst, &err), -1);
    assert_null(a);
    assert_non_null(strstr(kp_err_msg(&err), "the server node: node n-old-1 is gone"));
    assert_non_null(strstr(kp_err_msg(&err), "no other eligible node has its shape"));
    json_decref(subst);
    json_decref(rep);
    json_decref(el);
    json_decref(all);
}

static void test_k8s_shape_ranked_table(void **state)
{
    json_t *all = cluster(), *rep = report(), *rank;
    const json_t *want =
        json_array_get(json_object_get(json_object_get(rep, "metadata"), "nodes"), 0);
    const char *names[] = {"n-3", "n-4", "n-2", "n-5", "n-6", "n-7"};
    const char *why[] = {NULL,
                         NULL,
                         "cordoned",
                         "different shape: instance type c5.xlarge, not m5.large",
                         "virtual node (eks.amazonaws.com/compute-type=fargate)",
                         "OS windows, not linux"};
    char *text;
    (void)state;

    rank = k8s_shape_rank(all, NULL, want);
    assert_int_equal(json_array_size(rank), 6);
    for (size_t i = 0; i < 6; i++) {
        const json_t *r = json_array_get(rank, i);
        const char *ex = json_string_value(json_object_get(r, "excluded"));
        assert_string_equal(json_string_value(json_object_get(r, "name")), names[i]);
        if (!why[i]) {
            assert_null(ex);
            assert_int_equal(json_integer_value(json_object_get(r, "rank")), (json_int_t)i + 1);
        } else {
            assert_non_null(ex);
            assert_non_null(strstr(ex, why[i]));
            assert_null(json_object_get(r, "rank"));
        }
    }
    text = k8s_shape_table(rank);
    assert_non_null(strstr(text, "rank node"));
    assert_non_null(strstr(text, "\n1    n-3 "));
    free(text);
    json_decref(rank);
    json_decref(rep);
    json_decref(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_shape_group_and_score),
        cmocka_unit_test(test_k8s_shape_substitutes_gone_and_cordoned_nodes),
        cmocka_unit_test(test_k8s_shape_ranked_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
