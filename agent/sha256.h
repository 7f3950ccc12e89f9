/* SPDX-License-Identifier: Apache-2.0 */
/* sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), written from the specs so the
 * agent needs no crypto library; plus a constant-time compare and kernel random bytes.
 * Owns nothing beyond the caller's buffers; used only for the protocol's token check. */
#ifndef KPERF_AGENT_SHA256_H
#define KPERF_AGENT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"

#define SHA256_LEN 32

struct sha256 {
    uint32_t h[8];
    uint64_t total_len;
    uint8_t block[64];
    size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]); /* wipes s */

/* One-shot digest of data. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

/* HMAC-SHA256 of msg under key (any length). */
void hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                 uint8_t out[SHA256_LEN]);

/* 1 when the n bytes of a and b are equal, in time independent of where they differ. */
int sha256_ct_equal(const void *a, const void *b, size_t n);

/* Fills buf with n bytes from the kernel's CSPRNG (getrandom). Returns 0 or -1. */
KP_MUST_CHECK int sha256_random(void *buf, size_t n);

#endif
