/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_arch.c - the --arch rule over Node objects: which architecture a run measures, which
 * nodes it leaves out, the cross-architecture partner of --arch mixed, and the eligibility
 * reason a node of another architecture gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_arch.h"
#include "controller/k8s/k8s_facts.h"

/* A Ready node; arch as the label (label=1) or only in status.nodeInfo (label=0), or NULL. */
static json_t *node(const char *name, const char *arch, int label, const char *zone)
{
    json_t *n = json_pack("{s:{s:s, s:{s:s}}, s:{s:[{s:s, s:s}], s:{}}}", "metadata", "name", name,
                          "labels", "kubernetes.io/hostname", name, "status", "conditions", "type",
                          "Ready", "status", "True", "nodeInfo");
    json_t *labels = json_object_get(json_object_get(n, "metadata"), "labels");

    if (arch && label)
        json_object_set_new(labels, "kubernetes.io/arch", json_string(arch));
    if (arch && !label)
        json_object_set_new(json_object_get(json_object_get(n, "status"), "nodeInfo"),
                            "architecture", json_string(arch));
    if (zone)
        json_object_set_new(labels, "topology.kubernetes.io/zone", json_string(zone));
    return n;
}

/* node-1..3 amd64 (node-2 through nodeInfo only), node-0 and node-4 arm64 */
static json_t *cluster(void)
{
    return json_pack("[o, o, o, o, o]", node("node-3", "amd64", 1, "z1"),
                     node("node-0", "arm64", 1, "z2"), node("node-2", "amd64", 0, "z1"),
                     node("node-1", "amd64", 1, "z2"), node("node-4", "arm64", 1, "z1"));
}

static const json_t *named(const json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(nodes, i, n)
    {
        if (strcmp(k8s_facts_node_name(n), name) == 0)
            return n;
    }
    return NULL;
}

static void test_k8s_arch_default_is_the_most_common_or_node_a(void **state)
{
    json_t *nodes = cluster();
    const char *arch = NULL;
    char *note = NULL;
    struct kp_err err = {{0}};
    (void)state;

    assert_int_equal(k8s_arch_pick(nodes, NULL, NULL, &arch, &note, &err), 0);
    assert_string_equal(arch, "amd64");
    assert_non_null(strstr(note, "measuring the amd64 nodes only (eligible: amd64 x3, arm64 x2)"));
    free(note);
    /* --nodes A names an arm64 node: A's architecture wins */
    assert_int_equal(k8s_arch_pick(nodes, NULL, "node-4", &arch, &note, &err), 0);
    assert_string_equal(arch, "arm64");
    free(note);
    /* explicit, any, mixed */
    assert_int_equal(k8s_arch_pick(nodes, "arm64", NULL, &arch, &note, &err), 0);
    assert_string_equal(arch, "arm64");
    assert_null(note);
    assert_int_equal(k8s_arch_pick(nodes, "any", NULL, &arch, &note, &err), 0);
    assert_null(arch);
    assert_int_equal(k8s_arch_pick(nodes, "mixed", NULL, &arch, &note, &err), 0);
    assert_null(arch);
    json_decref(nodes);
}

static void test_k8s_arch_tie_and_single_architecture(void **state)
{
    json_t *tie = json_pack("[o, o]", node("b", "amd64", 1, NULL), node("a", "arm64", 1, NULL));
    json_t *one = json_pack("[o, o]", node("b", "amd64", 1, NULL), node("a", NULL, 0, NULL));
    const char *arch = NULL;
    char *note = NULL;
    struct kp_err err = {{0}};
    (void)state;

    /* a tie: the first node's in name order */
    assert_int_equal(k8s_arch_pick(tie, NULL, NULL, &arch, &note, &err), 0);
    assert_string_equal(arch, "arm64");
    free(note);
    /* one architecture (a node saying nothing does not count): no note */
    assert_int_equal(k8s_arch_pick(one, NULL, NULL, &arch, &note, &err), 0);
    assert_string_equal(arch, "amd64");
    assert_null(note);
    assert_int_equal(k8s_arch_pick(one, "arm64", NULL, &arch, &note, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--arch arm64: no eligible node is arm64 (eligible: "
                                          "amd64 x1)");
    assert_int_equal(k8s_arch_pick(one, "mixed", NULL, &arch, &note, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "one architecture (amd64 x1)"));
    json_decref(tie);
    json_decref(one);
}

static void test_k8s_arch_apply_keeps_one_architecture_and_pairs_within_it(void **state)
{
    json_t *nodes = cluster();
    const json_t *a = NULL, *b = NULL;
    const char *arch = NULL, *note = NULL;
    struct kp_err err = {{0}};
    (void)state;

    assert_int_equal(k8s_arch_apply(&nodes, NULL, NULL, &arch, &err), 0);
    assert_string_equal(arch, "amd64");
    assert_int_equal(json_array_size(nodes), 3);
    assert_null(named(nodes, "node-0"));
    assert_null(named(nodes, "node-4"));
    /* the pair is now the first same-zone amd64 pair: node-2 and node-3 (z1) */
    assert_int_equal(k8s_facts_choose_pair(nodes, NULL, NULL, &a, &b, &note, &err), 0);
    assert_string_equal(k8s_facts_node_name(a), "node-2");
    assert_string_equal(k8s_facts_node_name(b), "node-3");
    json_decref(nodes);

    /* --arch any: every node, and the first same-zone pair in name order mixes: node-0
     * (arm64) and node-1 (amd64) share z2 */
    nodes = cluster();
    assert_int_equal(k8s_arch_apply(&nodes, "any", NULL, &arch, &err), 0);
    assert_null(arch);
    assert_int_equal(json_array_size(nodes), 5);
    assert_int_equal(k8s_facts_choose_pair(nodes, NULL, NULL, &a, &b, &note, &err), 0);
    assert_string_equal(k8s_facts_node_name(a), "node-0");
    assert_string_equal(k8s_facts_node_name(b), "node-1");
    json_decref(nodes);
}

static void test_k8s_arch_mixed_partner_crosses(void **state)
{
    json_t *nodes = cluster();
    const json_t *a = named(nodes, "node-2"), *b = named(nodes, "node-3");
    struct kp_err err = {{0}};
    (void)state;

    /* node-2 (amd64, z1): the arm64 node of z1 (node-4) before node-0 (z2) */
    assert_int_equal(k8s_arch_cross_partner(nodes, a, &b, 0, &err), 0);
    assert_string_equal(k8s_facts_node_name(b), "node-4");
    /* a B named by --nodes of the same architecture is an error, not replaced */
    b = named(nodes, "node-3");
    assert_int_equal(k8s_arch_cross_partner(nodes, a, &b, 1, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--arch mixed: nodes node-2 and node-3 are both amd64");
    /* a B of another architecture is kept */
    b = named(nodes, "node-0");
    assert_int_equal(k8s_arch_cross_partner(nodes, a, &b, 1, &err), 0);
    assert_string_equal(k8s_facts_node_name(b), "node-0");
    json_decref(nodes);
}

static void test_k8s_arch_eligibility_names_the_architecture(void **state)
{
    json_t *nodes = cluster();
    struct k8s_node_filter f = {.arch = "amd64"};
    char *why = NULL;
    (void)state;

    assert_true(k8s_facts_node_eligible(named(nodes, "node-2"), &f, &why)); /* via nodeInfo */
    assert_false(k8s_facts_node_eligible(named(nodes, "node-4"), &f, &why));
    assert_string_equal(why, "architecture arm64, not amd64 (--arch; --arch any lets pairs mix "
                             "architectures)");
    free(why);
    assert_string_equal(k8s_facts_node_arch(named(nodes, "node-2")), "amd64");
    json_decref(nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_arch_default_is_the_most_common_or_node_a),
        cmocka_unit_test(test_k8s_arch_tie_and_single_architecture),
        cmocka_unit_test(test_k8s_arch_apply_keeps_one_architecture_and_pairs_within_it),
        cmocka_unit_test(test_k8s_arch_mixed_partner_crosses),
        cmocka_unit_test(test_k8s_arch_eligibility_names_the_architecture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
