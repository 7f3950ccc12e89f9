/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_proto.c - libFuzzer target for the agent wire protocol (agent/proto.c). The input is a
 * byte stream as a server or client would read it: the first byte picks a read size, and the
 * bytes are fed through a small reassembly buffer exactly like the server's control path
 * (decode header, decode message, consume, keep the rest). Every decoded message must encode
 * back to the same bytes, and decoding must never read past what it was given.
 * Corpus: test/fuzz/corpus/proto/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proto.h"
#include "base/kp_err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUF_LEN (PROTO_HEADER_LEN + PROTO_MAX_PAYLOAD)

static void check_round_trip(const uint8_t *wire, size_t len, const struct proto_msg *m)
{
    static uint8_t out[BUF_LEN];
    size_t n = proto_encode(m, out, sizeof(out));

    /* a decoded message re-encodes to the very same bytes */
    if (n != len || memcmp(out, wire, len) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf; /* heap, exactly BUF_LEN, so ASan catches any over-read */
    size_t have = 0, pos = 1, chunk;
    struct proto_msg m;
    struct kp_err err;

    if (size < 1)
        return 0;
    chunk = (size_t)(data[0] % 64) + 1;
    buf = malloc(BUF_LEN);
    if (!buf)
        return 0;
    while (pos < size) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        if (n > BUF_LEN - have)
            n = BUF_LEN - have;
        memcpy(buf + have, data + pos, n);
        have += n;
        pos += n;
        for (;;) {
            size_t used = 0;
            enum proto_status st;
            kp_err_clear(&err);
            st = proto_decode(buf, have, &m, &used, &err);
            if (st == PROTO_AGAIN)
                break;
            if (st == PROTO_ERROR) {
                if (!kp_err_is_set(&err))
                    abort(); /* every rejection says why */
                free(buf);
                return 0;
            }
            if (used < PROTO_HEADER_LEN || used > have)
                abort();
            check_round_trip(buf, used, &m);
            if (m.type == PROTO_TEST_REQ && proto_check_test_req(&m.u.test_req, &err) != 0)
                abort();
            memmove(buf, buf + used, have - used);
            have -= used;
        }
        if (have == BUF_LEN)
            abort(); /* a full buffer without a decision would stall a connection */
    }
    if (size >= 1 + PROTO_MIN_UDP_SIZE) {
        uint64_t a, b, c;
        proto_udp_get(data + 1, &a, &b, &c);
    }
    free(buf);
    return 0;
}
