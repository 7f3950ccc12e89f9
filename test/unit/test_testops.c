/* SPDX-License-Identifier: Apache-2.0 */
/* test_testops.c - the agent's ops table agrees with the vocabulary (base/testkind.h): every
 * wire id finds the entry of its own kind, and what each entry can do follows from what the
 * kind is (UDP kinds take datagrams and no data connection, TCP kinds the reverse; reversible
 * kinds have a reverse loop; TCP_CRR opens no connection before START; the client-side
 * composite has no server side). An entry pointing at the wrong side fails here, not in an
 * e2e run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/proto.h"
#include "agent/testops.h"
#include "base/testkind.h"

static void test_testops_every_wire_id_finds_its_kind(void **state)
{
    (void)state;
    for (int k = 0; k < TEST_COUNT; k++) {
        const struct testkind *tk = testkind_get((enum test_kind)k);
        const struct test_ops *ops = testops_get(tk->wire);
        assert_non_null(ops);
        assert_int_equal(ops->kind, k);
        assert_true(ops->default_msg_size >= 1);
    }
    assert_null(testops_get(0));
    assert_null(testops_get(200));
    assert_ptr_equal(testops_get(PROTO_UDP_STREAM),
                     testops_get(testkind_get(TEST_UDP_STREAM)->wire));
}

static void test_testops_sides_follow_the_kind(void **state)
{
    (void)state;
    for (int k = 0; k < TEST_COUNT; k++) {
        const struct testkind *tk = testkind_get((enum test_kind)k);
        const struct test_ops *ops = testops_get(tk->wire);
        if (tk->loaded) { /* client-side composite: two samples, no loop or server side */
            assert_null(ops->client_loop);
            assert_null(ops->attach);
            assert_null(ops->udp);
            continue;
        }
        assert_non_null(ops->client_loop);
        assert_true((ops->client_loop_reverse != NULL) == tk->reversible);
        assert_true((ops->udp != NULL) == tk->udp);
        assert_true((ops->attach != NULL) == !tk->udp);
        /* a connection per transaction: nothing opened before START */
        assert_true((ops->client_open == NULL) == tk->conn_per_txn);
        /* stream kinds wait for data in flight after STOP; latency kinds report at once */
        assert_true((ops->stop != NULL) == !tk->latency);
    }
}

static void test_testops_udp_sizes_hold_a_header(void **state)
{
    (void)state;
    assert_true(testops_get(PROTO_UDP_RR)->default_msg_size >= PROTO_MIN_UDP_SIZE);
    assert_true(testops_get(PROTO_UDP_STREAM)->default_msg_size >= PROTO_MIN_UDP_SIZE);
    assert_int_equal(testops_get(PROTO_TCP_STREAM)->default_msg_size, 128 * 1024);
    assert_int_equal(testops_get(PROTO_TCP_RR)->default_msg_size, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_testops_every_wire_id_finds_its_kind),
        cmocka_unit_test(test_testops_sides_follow_the_kind),
        cmocka_unit_test(test_testops_udp_sizes_hold_a_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
