/* SPDX-License-Identifier: Apache-2.0 */
/* test_evidence.c - which counters mark a row, a row's evidence summed over its samples and
 * both sides, the table's marker, and compare's list of the moved counters of both reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/report/evidence.h"

static void test_evidence_classes(void **state)
{
    (void)state;
    assert_string_equal(evidence_class("qdisc.eth0.overlimits"), "shaping");
    assert_string_equal(evidence_class("qdisc.eth0.drops"), "drop");
    assert_string_equal(evidence_class("ethtool.eth0.bw_in_allowance_exceeded"), "shaping");
    assert_string_equal(evidence_class("ethtool.eth0.rx_missed"), "drop");
    assert_string_equal(evidence_class("nic.eth0.rx_dropped"), "drop");
    assert_string_equal(evidence_class("TcpExt.ListenOverflows"), "overflow");
    assert_string_equal(evidence_class("conntrack.insert_failed"), "overflow");
    assert_string_equal(evidence_class("softnet.dropped"), "drop");
    assert_null(evidence_class("Tcp.RetransSegs")); /* explains, does not mark */
    assert_null(evidence_class("softnet.time_squeeze"));
    assert_null(evidence_class("nic.eth0.rx_packets"));
}

static json_t *row_of(const char *samples_json)
{
    json_error_t e;
    json_t *samples = json_loads(samples_json, 0, &e), *row;

    assert_non_null(samples);
    row = json_pack("{s:s, s:s, s:s, s:b, s:o}", "scenario", "pod-to-pod", "placement",
                    "other-node", "test", "TCP_STREAM", "reverse", 0, "samples", samples);
    return row;
}

static void test_evidence_of_row_sums_samples(void **state)
{
    json_t *row = row_of(
        "[{\"counters\": {\"client\": {\"v\": 1, \"deltas\": {\"qdisc.eth0.overlimits\": 500, "
        "\"Tcp.RetransSegs\": 4}, \"conntrack_count\": 7, \"conntrack_max\": 100},"
        " \"server\": {\"v\": 1, \"deltas\": {}}}},"
        " {\"counters\": {\"client\": {\"v\": 1, \"deltas\": {\"qdisc.eth0.overlimits\": 316}}}}]");
    json_t *ev = evidence_of_row(row), *moved;
    char text[256], mark[32];
    (void)state;

    assert_non_null(ev);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(json_object_get(ev, "client"), "deltas"),
                                           "qdisc.eth0.overlimits")),
        816);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(ev, "client"), "conntrack_count")), 7);
    moved = json_object_get(ev, "moved");
    assert_int_equal(json_array_size(moved), 1); /* retransmits are evidence, not a mark */
    json_object_set_new(row, "evidence", ev);
    assert_int_equal(evidence_moved_text(row, text, sizeof(text)), 1);
    assert_string_equal(text, "client qdisc.eth0.overlimits +816");
    assert_string_equal(evidence_marker(row, mark, sizeof(mark)), "!shaping");
    {
        json_t *both = evidence_compare(NULL, row);
        evidence_compare_text(both, text, sizeof(text));
        assert_string_equal(text, "NEW client qdisc.eth0.overlimits +816");
        json_decref(both);
    }
    json_decref(row);
}

static void test_evidence_none_without_counters(void **state)
{
    json_t *row = row_of("[{\"throughput_mbps\": 5}]");
    char mark[32];
    (void)state;

    assert_null(evidence_of_row(row));
    assert_string_equal(evidence_marker(row, mark, sizeof(mark)), "");
    json_decref(row);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evidence_classes),
        cmocka_unit_test(test_evidence_of_row_sums_samples),
        cmocka_unit_test(test_evidence_none_without_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
