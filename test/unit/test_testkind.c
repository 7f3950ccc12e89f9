/* SPDX-License-Identifier: Apache-2.0 */
/* test_testkind.c - the vocabulary of test kinds: names round-trip, the wire ids are the
 * protocol's (each value asserted explicitly), the canonical order, and the properties each
 * test has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/testkind.h"

static void test_testkind_names_round_trip(void **state)
{
    (void)state;
    for (int k = 0; k < TEST_COUNT; k++) {
        const struct testkind *tk = testkind_get((enum test_kind)k);
        assert_non_null(tk);
        assert_int_equal(tk->kind, k);
        assert_string_equal(testkind_name((enum test_kind)k), tk->name);
        assert_ptr_equal(testkind_by_name(tk->name), tk);
        assert_ptr_equal(testkind_by_name_icase(tk->name), tk);
        assert_ptr_equal(testkind_by_wire(tk->wire), tk);
    }
    /* documents and the protocol spell names exactly; flags may use any case */
    assert_null(testkind_by_name("tcp_rr"));
    assert_ptr_equal(testkind_by_name_icase("tcp_rr"), testkind_get(TEST_TCP_RR));
    assert_ptr_equal(testkind_by_name_icase("Udp_Stream"), testkind_get(TEST_UDP_STREAM));
    assert_null(testkind_by_name("TCP_RRR"));
    assert_null(testkind_by_name("TCP_R"));
    assert_null(testkind_by_name(""));
    assert_null(testkind_by_name(NULL));
    assert_null(testkind_by_name_icase(NULL));
    assert_null(testkind_get(TEST_COUNT));
    assert_null(testkind_get((enum test_kind) - 1));
    assert_string_equal(testkind_name(TEST_COUNT), "?");
}

/* The wire ids are the agent protocol (docs/protocol.md): they must never change. */
static void test_testkind_wire_ids_are_the_protocol(void **state)
{
    (void)state;
    assert_int_equal(testkind_get(TEST_TCP_RR)->wire, 1);
    assert_int_equal(testkind_get(TEST_TCP_CRR)->wire, 2);
    assert_int_equal(testkind_get(TEST_TCP_STREAM)->wire, 3);
    assert_int_equal(testkind_get(TEST_TCP_STREAM_MULTI)->wire, 4);
    assert_int_equal(testkind_get(TEST_UDP_RR)->wire, 5);
    assert_int_equal(testkind_get(TEST_UDP_STREAM)->wire, 6);
    assert_int_equal(testkind_get(TEST_TCP_RR_LOADED)->wire, 7);
    assert_null(testkind_by_wire(0));
    assert_null(testkind_by_wire(8));
    assert_null(testkind_by_wire(255));
    assert_null(testkind_by_wire(256 + 1)); /* no truncation to a byte */
}

/* Reports list latency tests first, then throughput tests, in this order. */
static void test_testkind_canonical_order(void **state)
{
    static const char *const order[] = {"TCP_RR",        "TCP_CRR",    "UDP_RR",
                                        "TCP_RR_LOADED", "TCP_STREAM", "TCP_STREAM_MULTI",
                                        "UDP_STREAM"};
    (void)state;
    assert_int_equal(TEST_COUNT, sizeof(order) / sizeof(order[0]));
    for (int k = 0; k < TEST_COUNT; k++) {
        assert_string_equal(testkind_name((enum test_kind)k), order[k]);
        if (k > 0 && testkind_get((enum test_kind)k)->latency)
            assert_true(testkind_get((enum test_kind)(k - 1))->latency);
    }
}

static void test_testkind_properties(void **state)
{
    static const struct {
        enum test_kind k;
        bool latency, udp, reversible, multi_stream, conn_per_txn, loaded;
    } want[] = {
        {TEST_TCP_RR, true, false, false, false, false, false},
        {TEST_TCP_CRR, true, false, false, false, true, false},
        {TEST_UDP_RR, true, true, false, false, false, false},
        {TEST_TCP_RR_LOADED, true, false, false, false, false, true},
        {TEST_TCP_STREAM, false, false, true, false, false, false},
        {TEST_TCP_STREAM_MULTI, false, false, true, true, false, false},
        {TEST_UDP_STREAM, false, true, true, false, false, false},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const struct testkind *tk = testkind_get(want[i].k);
        assert_int_equal(tk->latency, want[i].latency);
        assert_int_equal(tk->udp, want[i].udp);
        assert_int_equal(tk->reversible, want[i].reversible);
        assert_int_equal(tk->multi_stream, want[i].multi_stream);
        assert_int_equal(tk->conn_per_txn, want[i].conn_per_txn);
        assert_int_equal(tk->loaded, want[i].loaded);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_testkind_names_round_trip),
        cmocka_unit_test(test_testkind_wire_ids_are_the_protocol),
        cmocka_unit_test(test_testkind_canonical_order),
        cmocka_unit_test(test_testkind_properties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
