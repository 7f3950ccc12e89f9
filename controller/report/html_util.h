/* SPDX-License-Identifier: Apache-2.0 */
/* html_util.h - what every page of kperf shares (run report, compare, watch, history trend):
 * the one HTML escape and the way numbers are written for people (never in exponent
 * notation, dates as dates, durations with units). Layout belongs to each page. */
#ifndef KPERF_REPORT_HTML_UTIL_H
#define KPERF_REPORT_HTML_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Writes s to out with & < > " ' as entities, so the text is safe in element content and in
 * quoted attributes. Other control characters than newline and tab become a space (a report
 * field must not smuggle a NUL-like or escape byte into the page). s NULL writes nothing. */
void html_esc(const char *s, FILE *out);

/* Writes v into buf (of size n) as people write it: never exponent notation (1796310000, not
 * 1.79631e+09; 0.00001, not 1e-05), at most `decimals` decimals (0 to 9), trailing zeros and
 * a trailing point dropped, "-0" as "0"; NaN and infinities as "-". Returns buf. */
char *html_number_fmt(double v, int decimals, char *buf, size_t n);

/* html_number_fmt with about `digits` significant digits (1 to 9) below 10^digits, and no
 * decimals from there on: 48090, 123.4, 0.01234 for 4. Returns buf. */
char *html_number_sig(double v, int digits, char *buf, size_t n);

/* v written to out with three decimals (html_number_fmt), or below 1 with four significant
 * digits (html_number_sig: 0.0000125, not 0). */
void html_number(double v, FILE *out);

/* Writes the number v stored under `key` (may be NULL) with its unit, read from the key's
 * suffix: *_unix_s as a UTC date ("2026-12-03 15:00:00 UTC"), *_ms as "12 ms" (or "1.5 s"
 * from 1000 ms on), *_s as "4.5 s"; any other key as html_number. */
void html_number_for_key(const char *key, double v, FILE *out);

#endif
