/* SPDX-License-Identifier: Apache-2.0 */
/* html_util.h - the one HTML escape every page of kperf uses (run report, compare, watch,
 * history trend). Owns escaping only; layout belongs to each page. */
#ifndef KPERF_REPORT_HTML_UTIL_H
#define KPERF_REPORT_HTML_UTIL_H

#include <stdio.h>

/* Writes s to out with & < > " ' as entities, so the text is safe in element content and in
 * quoted attributes. Other control characters than newline and tab become a space (a report
 * field must not smuggle a NUL-like or escape byte into the page). s NULL writes nothing. */
void html_esc(const char *s, FILE *out);

#endif
