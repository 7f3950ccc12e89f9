/* SPDX-License-Identifier: Apache-2.0 */
/* units.h - parsing and printing of the units every flag uses: durations (10s, 2m, 500ms;
 * a bare number is seconds), sizes (64, 1K, 1M; powers of 1024), rates (1G = 10^9 bit/s;
 * powers of 1000) and percentages (5%, 5). Knows nothing of flags or JSON. */
#ifndef KPERF_BASE_UNITS_H
#define KPERF_BASE_UNITS_H

#include "base/kp_err.h"

#include <stddef.h>
#include <stdint.h>

struct kp_err;

/* "10s" -> 10000. Accepts us, ms, s, m, h and fractions ("1.5s"). Rejects negatives,
 * garbage and values above 30 days. Returns 0 or -1 with err. */
KP_MUST_CHECK int units_parse_duration_ms(const char *s, uint64_t *ms, struct kp_err *err);

/* "1K" -> 1024, "64" -> 64; K/M/G/T with optional "i"/"iB"/"B". Returns 0 or -1. */
KP_MUST_CHECK int units_parse_size(const char *s, uint64_t *bytes, struct kp_err *err);

/* "1G" -> 1000000000 bit/s; K/M/G/T, optional "bit"/"bps"/"b". Returns 0 or -1. */
KP_MUST_CHECK int units_parse_rate_bps(const char *s, uint64_t *bps, struct kp_err *err);

/* "5%" or "5" -> 5.0; [0, 1000]. Returns 0 or -1. */
KP_MUST_CHECK int units_parse_percent(const char *s, double *pct, struct kp_err *err);

/* Prints a duration for humans: "850ms", "12.3s", "2m05s", "1h02m". Returns buf. */
const char *units_format_duration(uint64_t ms, char *buf, size_t len);

/* Prints a rate for humans: "940 Mbit/s", "13.7 Gbit/s". Returns buf. */
const char *units_format_rate(double bps, char *buf, size_t len);

#endif
