/* SPDX-License-Identifier: Apache-2.0 */
/* dnsmsg.c - encode a DNS query, check a reply (dnsmsg.h). Every length read from a reply is
 * checked against the message's end before it is used. */
#include "agent/dnsmsg.h"

#include <ctype.h>
#include <string.h>

#include "base/kp_err.h"

#define HDR         12
#define FLAG_QR     0x8000u
#define FLAG_RD     0x0100u
#define FLAG_TC     0x0200u
#define OPCODE_MASK 0x7800u
#define CLASS_IN    1
#define MAX_NAME    253
#define MAX_LABEL   63
#define MAX_PTRS    16 /* compression pointers followed in one name: a loop ends here */

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

int dnsmsg_encode(const char *name, uint16_t qtype, uint16_t id, uint8_t *buf, size_t cap,
                  size_t *len, struct kp_err *err)
{
    size_t n = strlen(name), off = HDR, i = 0;

    if (n > 0 && name[n - 1] == '.')
        n--;
    if (n == 0 || n > MAX_NAME)
        return kp_err_set(err, "DNS name '%s': must be 1 to %d characters", name, MAX_NAME);
    if (cap < HDR + n + 2 + 4)
        return kp_err_set(err, "DNS name '%s': no room for the query", name);
    memset(buf, 0, HDR);
    put16(buf, id);
    put16(buf + 2, FLAG_RD);
    put16(buf + 4, 1); /* one question */
    while (i < n) {
        size_t j = i;
        while (j < n && name[j] != '.')
            j++;
        if (j == i || j - i > MAX_LABEL)
            return kp_err_set(err, "DNS name '%s': labels must be 1 to %d bytes", name, MAX_LABEL);
        buf[off++] = (uint8_t)(j - i);
        memcpy(buf + off, name + i, j - i);
        off += j - i;
        i = j + 1;
        if (j + 1 == n) /* "a..": an empty last label */
            return kp_err_set(err, "DNS name '%s': empty label", name);
    }
    buf[off++] = 0;
    put16(buf + off, qtype);
    put16(buf + off + 2, CLASS_IN);
    *len = off + 4;
    return 0;
}

int dnsmsg_id(const uint8_t *msg, size_t len)
{
    return len < 2 ? -1 : get16(msg);
}

void dnsmsg_set_id(uint8_t *msg, uint16_t id)
{
    put16(msg, id);
}

/* Skips the name at *off in msg (labels, or a compression pointer that ends it). Returns 0 with
 * *off past it, or -1 when it runs past the end or uses a reserved label type. */
static int skip_name(const uint8_t *msg, size_t len, size_t *off)
{
    size_t p = *off;

    for (;;) {
        if (p >= len)
            return -1;
        if ((msg[p] & 0xc0) == 0xc0) {
            if (p + 2 > len)
                return -1;
            *off = p + 2;
            return 0;
        }
        if (msg[p] & 0xc0)
            return -1;
        if (msg[p] == 0) {
            *off = p + 1;
            return 0;
        }
        p += 1u + msg[p];
    }
}

/* Compares the question of the reply at roff with the query's at HDR (names without case, a
 * pointer in the reply's question followed at most MAX_PTRS times). Returns 0 when equal with
 * *end past the reply's question, -1 otherwise. */
static int same_question(const uint8_t *r, size_t rlen, size_t roff, const uint8_t *q, size_t qlen,
                         size_t *end)
{
    size_t qo = HDR, ro = roff, after = 0;
    unsigned ptrs = 0;

    for (;;) {
        if (ro >= rlen || qo >= qlen)
            return -1;
        if ((r[ro] & 0xc0) == 0xc0) {
            if (ro + 2 > rlen || ++ptrs > MAX_PTRS)
                return -1;
            if (!after)
                after = ro + 2;
            ro = (size_t)(get16(r + ro) & 0x3fff);
            continue;
        }
        if (r[ro] != q[qo] || ro + 1u + r[ro] > rlen || qo + 1u + q[qo] > qlen)
            return -1;
        if (r[ro] == 0)
            break;
        for (size_t k = 1; k <= r[ro]; k++)
            if (tolower(r[ro + k]) != tolower(q[qo + k]))
                return -1;
        qo += 1u + q[qo];
        ro += 1u + r[ro];
    }
    if (!after)
        after = ro + 1;
    qo++;
    if (after + 4 > rlen || qo + 4 > qlen || memcmp(r + after, q + qo, 4) != 0)
        return -1;
    *end = after + 4;
    return 0;
}

int dnsmsg_parse_reply(const uint8_t *reply, size_t len, const uint8_t *query, size_t qlen,
                       struct dnsmsg_reply *r, struct kp_err *err)
{
    uint16_t flags, qtype;
    unsigned an;
    size_t off;

    memset(r, 0, sizeof(*r));
    if (len < HDR || qlen < HDR + 5)
        return kp_err_set(err, "DNS reply of %zu bytes: shorter than a header", len);
    flags = get16(reply + 2);
    r->id = get16(reply);
    r->rcode = flags & 0xf;
    r->truncated = (flags & FLAG_TC) != 0;
    if (!(flags & FLAG_QR))
        return kp_err_set(err, "DNS message is not a response");
    if (r->id != get16(query))
        return kp_err_set(err, "DNS reply id %u, expected %u", r->id, get16(query));
    if ((flags & OPCODE_MASK) != (get16(query + 2) & OPCODE_MASK))
        return kp_err_set(err, "DNS reply has another opcode");
    if (get16(reply + 4) != 1)
        return kp_err_set(err, "DNS reply has %u questions, expected 1", get16(reply + 4));
    if (same_question(reply, len, HDR, query, qlen, &off) != 0)
        return kp_err_set(err, "DNS reply's question is not the query's (or is cut short)");
    qtype = get16(query + qlen - 4);
    an = get16(reply + 6);
    for (unsigned i = 0; i < an; i++) {
        uint16_t rdlen;
        if (skip_name(reply, len, &off) != 0 || off + 10 > len)
            return kp_err_set(err, "DNS reply cut short in answer %u of %u", i + 1, an);
        rdlen = get16(reply + off + 8);
        if (off + 10 + rdlen > len)
            return kp_err_set(err, "DNS reply cut short in answer %u of %u", i + 1, an);
        if (get16(reply + off) == qtype)
            r->answers++;
        off += 10u + rdlen;
    }
    return 0;
}
