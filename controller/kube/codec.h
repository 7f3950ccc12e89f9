/* SPDX-License-Identifier: Apache-2.0 */
/* codec.h - small encoders the client needs: base64 (kubeconfig *-data fields, exec cluster
 * info), URL query escaping (selectors, continue tokens) and RFC 3339 timestamps (exec plugin
 * expiry). No allocation limits here: callers bound their inputs. */
#ifndef KPERF_KUBE_CODEC_H
#define KPERF_KUBE_CODEC_H

#include <stddef.h>
#include <time.h>

/* Decodes standard base64 (padding optional, whitespace ignored). Returns 0 with *out
 * (NUL-terminated, caller frees) and *out_len, or -1 if the text is not base64. */
int codec_b64_decode(const char *in, size_t len, char **out, size_t *out_len);

/* Encodes standard base64 with padding. Caller frees. */
char *codec_b64_encode(const char *in, size_t len);

/* Percent-encodes everything but RFC 3986 unreserved characters. Caller frees. */
char *codec_query_escape(const char *s);

/* Parses "2026-01-01T12:14:00Z" / "...+01:00" / fractional seconds into a UTC time_t.
 * Returns 0 or -1. */
int codec_rfc3339_parse(const char *s, time_t *out);

/* The "exp" claim (a number, seconds since the epoch) of a JWT's claims part, given as the
 * base64url text between the two dots. Returns 0 with *exp (0 when there is no "exp"), or -1
 * when the part is not base64url JSON. */
int codec_jwt_exp(const char *claims_b64url, size_t len, long long *exp);

#endif
