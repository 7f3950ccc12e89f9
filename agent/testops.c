/* SPDX-License-Identifier: Apache-2.0 */
/* testops.c - see testops.h. The table, one entry per test kind in base/testkind.h's order;
 * the functions live with the state they touch (client_*.c, session*.c). */
#include "agent/testops.h"

#include "agent/client_int.h"
#include "agent/proto.h"
#include "agent/server_int.h"

static const struct test_ops ops[TEST_COUNT] = {
    [TEST_TCP_RR] =
        {
            .kind = TEST_TCP_RR,
            .default_msg_size = 1,
            .client_open = client_open_tcp,
            .client_loop = client_loop_tcp_rr,
            .attach = session_attach_stream,
            .data = session_tcp_echo,
            .start = session_rr_start,
        },
    [TEST_TCP_CRR] =
        {
            .kind = TEST_TCP_CRR,
            .default_msg_size = 1,
            .client_loop = client_loop_tcp_crr,
            .attach = session_attach_txn,
            .data = session_tcp_crr,
        },
    [TEST_UDP_RR] =
        {
            .kind = TEST_UDP_RR,
            .default_msg_size = PROTO_MIN_UDP_SIZE,
            .client_open = client_open_udp,
            .client_loop = client_loop_udp_rr,
            .udp = session_udp_rr,
        },
    [TEST_TCP_RR_LOADED] =
        {
            .kind = TEST_TCP_RR_LOADED,
            /* a client-side composite of a TCP_RR and a TCP_STREAM_MULTI sample
             * (client_loaded.c); a server refuses it in TEST_REQ */
            .default_msg_size = 1,
        },
    [TEST_TCP_STREAM] =
        {
            .kind = TEST_TCP_STREAM,
            .default_msg_size = 128 * 1024,
            .client_open = client_open_tcp,
            .client_loop = client_loop_stream_send,
            .client_loop_reverse = client_loop_stream_recv,
            .attach = session_attach_stream,
            .data_eof = session_stream_eof,
            .start = session_stream_start,
            .started = session_stream_started,
            .stop = session_stream_stopped,
        },
    [TEST_TCP_STREAM_MULTI] =
        {
            .kind = TEST_TCP_STREAM_MULTI,
            .default_msg_size = 128 * 1024,
            .client_open = client_open_tcp,
            .client_loop = client_loop_stream_send,
            .client_loop_reverse = client_loop_stream_recv,
            .attach = session_attach_stream,
            .data_eof = session_stream_eof,
            .start = session_stream_start,
            .started = session_stream_started,
            .stop = session_stream_stopped,
        },
    [TEST_UDP_STREAM] =
        {
            .kind = TEST_UDP_STREAM,
            .default_msg_size = 1472,
            .client_open = client_open_udp,
            .client_loop = client_loop_udp_send,
            .client_loop_reverse = client_loop_udp_recv,
            .started = session_udp_started,
            .stop = session_udp_stopped,
            .udp = session_udp_stream,
        },
};

const struct test_ops *testops_get(unsigned wire)
{
    const struct testkind *tk = testkind_by_wire(wire);

    return tk ? &ops[tk->kind] : NULL;
}
