/* SPDX-License-Identifier: Apache-2.0 */
/* test_provenance.c - provenance differences ranked: a changed datapath setting first (the
 * likely explanation), then versions, then the rest; stable within a class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/report/provenance.h"

static void test_provenance_kinds(void **state)
{
    (void)state;
    assert_string_equal(provenance_kind("cni.settings.host_routing"), "setting");
    assert_string_equal(provenance_kind("kube_proxy_mode"), "setting");
    assert_string_equal(provenance_kind("kube_proxy_mode_source"), "other");
    assert_string_equal(provenance_kind("mtu.pod"), "setting");
    assert_string_equal(provenance_kind("nodes[server].net.nics[0].speed_mbps"), "setting");
    assert_string_equal(provenance_kind("nodes[server].net.sysctls.tcp_congestion_control"),
                        "setting");
    assert_string_equal(provenance_kind("nodes[client].mtu"), "setting");
    assert_string_equal(provenance_kind("nodes[server].kernel"), "version");
    /* the external host (metadata.external, pod-to-external) like a node */
    assert_string_equal(provenance_kind("external.net.nics[0].speed_mbps"), "setting");
    assert_string_equal(provenance_kind("external.net.sysctls.tcp_congestion_control"), "setting");
    assert_string_equal(provenance_kind("external.kernel"), "version");
    assert_string_equal(provenance_kind("external.hostname"), "other");
    assert_string_equal(provenance_kind("cni.version"), "version");
    assert_string_equal(provenance_kind("cni.settings.image"), "version");
    assert_string_equal(provenance_kind("nodes[server].net.nics[0].driver_version"), "version");
    assert_string_equal(provenance_kind("nodes[server].name"), "other");
    assert_string_equal(provenance_kind("nodes[server].zone"), "other");
}

static void test_provenance_setting_first_and_printed_as_likely(void **state)
{
    json_t *diff = json_pack("[{s:s,s:s,s:s}, {s:s,s:s,s:s}, {s:s,s:s,s:s}, {s:s,s:s,s:s}]",
                             "field", "nodes[server].name", "base", "a", "new", "b", "field",
                             "nodes[server].kernel", "base", "6.1", "new", "6.8", "field",
                             "cni.settings.host_routing", "base", "bpf", "new", "legacy", "field",
                             "nodes[server].net.nics[0].combined_queues", "base", "8", "new", "2");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    provenance_rank(diff);
    assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 0), "field")),
                        "cni.settings.host_routing");
    assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 1), "field")),
                        "nodes[server].net.nics[0].combined_queues");
    assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 2), "kind")),
                        "version");
    assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 3), "field")),
                        "nodes[server].name");
    provenance_print_likely(diff, "  ", f);
    fclose(f);
    assert_string_equal(buf, "  Likely explanation: cni.settings.host_routing changed from bpf "
                             "to legacy (and 1 more setting below)\n");
    free(buf);
    json_decref(diff);
}

static void test_provenance_no_setting_no_likely_line(void **state)
{
    json_t *diff =
        json_pack("[{s:s,s:s,s:s}]", "field", "nodes[server].kernel", "base", "6.1", "new", "6.8");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    provenance_rank(diff);
    provenance_print_likely(diff, "", f);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
    json_decref(diff);
}

/* issue 31's facts: each new datapath setting, when it changes between two reports, is listed
 * first and printed as the likely explanation; where kube-proxy's mode was read, a fact one run
 * could not read, and image versions are not */
static void test_provenance_new_facts_changed_first(void **state)
{
    static const char *const settings[][3] = {
        {"kube_proxy_mode", "iptables", "ipvs"},
        {"cni.settings.prefix_delegation", "false", "true"},
        {"cni.settings.custom_networking", "false", "true"},
        {"cni.settings.pod_sg_enforcing_mode", "strict", "standard"},
        {"cni.settings.network_policy_enforcing_mode", "standard", "strict"},
        {"cni.settings.external_snat", "false", "true"},
        {"cni.settings.ipv6", "false", "true"},
        {"cni.settings.routing_mode", "tunnel", "native"},
        {"cni.settings.tunnel_protocol", "vxlan", "geneve"},
        {"cni.settings.bpf_masquerade", "false", "true"},
        {"cni.settings.kube_proxy_replacement", "false", "true"},
        {"cni.settings.wireguard", "false", "true"},
        {"cni.settings.ipsec", "false", "true"},
        {"cni.settings.lb_mode", "snat", "dsr"},
        {"cni.settings.host_legacy_routing", "false", "true"},
        {"cni.settings.network_mode", "vpc-cni-route-eni", "vpc-cni-direct-eni"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        json_t *mb = json_object(), *mn = json_object();
        json_t *diff;
        char *buf = NULL, *want;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        const char *field = settings[i][0];
        char *dot = strrchr(field, '.');
        json_t *b = json_string(settings[i][1]), *n = json_string(settings[i][2]);

        /* the metadata shape: cni.settings.X nested, kube_proxy_mode at the top */
        if (dot) {
            json_object_set_new(mb, "cni", json_pack("{s:{s:o}}", "settings", dot + 1, b));
            json_object_set_new(mn, "cni", json_pack("{s:{s:o}}", "settings", dot + 1, n));
        } else {
            json_object_set_new(mb, field, b);
            json_object_set_new(mn, field, n);
        }
        json_object_set_new(mb, "kube_proxy_mode_source", json_string("a"));
        json_object_set_new(mn, "kube_proxy_mode_source", json_string("b"));
        json_object_set_new(mb, "kubernetes_version", json_string("v1.30.1"));
        json_object_set_new(mn, "kubernetes_version", json_string("v1.30.2"));
        diff = provenance_diff(mb, mn, NULL);
        assert_int_equal(json_array_size(diff), 3);
        assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 0), "field")),
                            field);
        assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 2), "field")),
                            "kube_proxy_mode_source");
        provenance_print_likely(diff, "", f);
        fclose(f);
        want = kp_xasprintf("Likely explanation: %s changed from %s to %s\n", field, settings[i][1],
                            settings[i][2]);
        assert_string_equal(buf, want);
        free(want);
        free(buf);
        json_decref(diff);
        json_decref(mb);
        json_decref(mn);
    }
}

static void test_provenance_unread_fact_is_not_the_explanation(void **state)
{
    json_t *diff =
        json_pack("[{s:s,s:s,s:s}, {s:s,s:s,s:s}]", "field", "kube_proxy_mode", "base", "ipvs",
                  "new", "unknown (forbidden: configmaps \"kube-proxy-config\" is forbidden)",
                  "field", "nodes[server].kernel", "base", "6.1", "new", "6.8");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    provenance_rank(diff);
    assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 0), "kind")),
                        "version");
    assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 1), "kind")),
                        "unread");
    provenance_print_likely(diff, "", f);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
    json_decref(diff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provenance_kinds),
        cmocka_unit_test(test_provenance_setting_first_and_printed_as_likely),
        cmocka_unit_test(test_provenance_no_setting_no_likely_line),
        cmocka_unit_test(test_provenance_new_facts_changed_first),
        cmocka_unit_test(test_provenance_unread_fact_is_not_the_explanation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
