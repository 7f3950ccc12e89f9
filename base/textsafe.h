/* SPDX-License-Identifier: Apache-2.0 */
/* textsafe.h - makes text from a file (a report's error messages, node names, CNI settings) safe
 * to print on a terminal or open in a spreadsheet. Terminal: every control character (C0
 * 0x00-0x1f including tab and newline, DEL, the C1 controls U+0080-U+009F, which start escape
 * sequences on some terminals) and the Unicode bidirectional overrides (U+202A-U+202E,
 * U+2066-U+2069, which reorder what is shown) become '?'. Spreadsheet: a CSV cell that starts
 * with '=', '+', '-' or '@' is a formula to Excel and LibreOffice, so it gets a leading "'".
 * Owns nothing. */
#ifndef KPERF_BASE_TEXTSAFE_H
#define KPERF_BASE_TEXTSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Replaces the characters above in s, in place (the text never grows); returns s. */
char *textsafe_inplace(char *s);

/* A safe copy of s (NULL: "") into buf[len] (truncated, NUL-terminated); returns buf. */
const char *textsafe(const char *s, char *buf, size_t len);

/* Prints the formatted text with the characters above replaced, then one '\n' (so the format
 * itself must not hold a line break). Long lines are cut at 4 KiB. */
void textsafe_line(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when a CSV cell with this text would be read as a formula ('=', '+', '-', '@' first). */
bool textsafe_csv_formula(const char *s);

#endif
