/* SPDX-License-Identifier: Apache-2.0 */
/* dnsmsg.h - the few DNS messages the DNS probe needs (RFC 1035): a one-question query encoded
 * by hand, and the check of a reply against it (header, id, question echoed, answer records
 * walked within bounds). Owns the wire format only; dnsprobe.c sends and times them. No
 * resolver library: a stub query and the header of its reply are all a latency probe reads. */
#ifndef KPERF_AGENT_DNSMSG_H
#define KPERF_AGENT_DNSMSG_H

#include "base/kp_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNSMSG_TYPE_A    1
#define DNSMSG_TYPE_AAAA 28
#define DNSMSG_QUERY_MAX 512 /* a query of a name of at most 253 characters fits */

struct kp_err;

/* What a reply said. */
struct dnsmsg_reply {
    uint16_t id;
    int rcode;        /* 0 NOERROR, 3 NXDOMAIN, ... */
    bool truncated;   /* TC: a UDP answer too big for the datagram */
    unsigned answers; /* answer records of the question's type (CNAMEs and others not counted) */
};

/* Encodes a standard query (RD set) for name (dotted, trailing dot optional; labels of 1 to 63
 * bytes, at most 253 characters) of qtype, class IN, with id, into buf (cap bytes). Sets *len.
 * Returns 0 or -1 with err (bad name, no room). */
KP_MUST_CHECK int dnsmsg_encode(const char *name, uint16_t qtype, uint16_t id, uint8_t *buf,
                                size_t cap, size_t *len, struct kp_err *err);

/* The id of a message of len bytes (a query made by dnsmsg_encode, or a reply); -1 if len < 2. */
int dnsmsg_id(const uint8_t *msg, size_t len);

/* Sets the id of an encoded message in place (len >= 2). */
void dnsmsg_set_id(uint8_t *msg, uint16_t id);

/* Checks that reply (len bytes, borrowed) answers query (qlen bytes, made by dnsmsg_encode):
 * a response (QR), the same id and opcode, one question equal to the query's (names compared
 * without case), and every answer record inside the message. Fills *r. Returns 0, or -1 with
 * err: short or malformed message, not a response, another id, another question. A truncated
 * (TC) reply is a valid one: r->truncated says so. */
KP_MUST_CHECK int dnsmsg_parse_reply(const uint8_t *reply, size_t len, const uint8_t *query,
                                     size_t qlen, struct dnsmsg_reply *r, struct kp_err *err);

#endif
