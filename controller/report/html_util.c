/* SPDX-License-Identifier: Apache-2.0 */
/* html_util.c - HTML escaping (html_util.h). */
#include "controller/report/html_util.h"

void html_esc(const char *s, FILE *out)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        case '\n':
        case '\t':
            fputc(c, out);
            break;
        default:
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
        }
    }
}
