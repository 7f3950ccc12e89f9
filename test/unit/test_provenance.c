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

#include "controller/report/provenance.h"

static void test_provenance_kinds(void **state)
{
    (void)state;
    assert_string_equal(provenance_kind("cni.settings.host_routing"), "setting");
    assert_string_equal(provenance_kind("kube_proxy_mode"), "setting");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provenance_kinds),
        cmocka_unit_test(test_provenance_setting_first_and_printed_as_likely),
        cmocka_unit_test(test_provenance_no_setting_no_likely_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
