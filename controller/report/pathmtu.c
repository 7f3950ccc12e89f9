/* SPDX-License-Identifier: Apache-2.0 */
/* pathmtu.c - see pathmtu.h. */
#include "controller/report/pathmtu.h"

#include <stdio.h>
#include <string.h>

#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/html_util.h"
#include "controller/report/report.h"

/* worst last */
static const char *const order[] = {"unknown", "ok", "reduced", "black-hole"};
#define N_ORDER (sizeof(order) / sizeof(order[0]))

static int rank(const char *v)
{
    for (size_t i = 0; v && i < N_ORDER; i++)
        if (strcmp(v, order[i]) == 0)
            return (int)i;
    return -1;
}

bool pathmtu_verdict_known(const char *v)
{
    return rank(v) >= 0;
}

json_t *pathmtu_of_row(const json_t *row)
{
    static const char *const keys[] = {"path", "client", "server", "icmp", "tcp_full_mss"};
    const json_t *smp, *worst = NULL;
    int best = -1;
    size_t i;
    json_t *out;

    json_array_foreach(json_object_get(row, "samples"), i, smp)
    {
        const json_t *mtu = json_object_get(smp, "mtu");
        int r = rank(json_string_value(json_object_get(mtu, "verdict")));
        if (r > best)
            best = r, worst = mtu;
    }
    if (!worst)
        return NULL;
    out = json_pack("{s:s}", "verdict", order[best]);
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        if (json_object_get(worst, keys[k]))
            json_object_set(out, keys[k], json_object_get(worst, keys[k]));
    return out;
}

bool pathmtu_black_hole(const json_t *row)
{
    const char *v = json_string_value(json_object_get(json_object_get(row, "path_mtu"), "verdict"));
    return v && strcmp(v, "black-hole") == 0;
}

json_t *pathmtu_compare(const json_t *base_row, const json_t *new_row)
{
    json_t *out = json_array();

    if (base_row && pathmtu_black_hole(base_row))
        json_array_append_new(out, json_string("base"));
    if (new_row && pathmtu_black_hole(new_row))
        json_array_append_new(out, json_string("new"));
    return out;
}

size_t pathmtu_marker(const json_t *row, char *buf, size_t used, size_t len)
{
    int n;

    if (!pathmtu_black_hole(row) || used >= len)
        return used;
    n = snprintf(buf + used, len - used, "%s!pmtu-black-hole", used ? " " : "");
    return n < 0 ? used : used + (size_t)n < len ? used + (size_t)n : len - 1;
}

const char *pathmtu_text(const json_t *row, char *buf, size_t len)
{
    const json_t *p = json_object_get(row, "path_mtu");
    const char *v = json_string_value(json_object_get(p, "verdict"));
    long long path = (long long)json_integer_value(json_object_get(p, "path"));
    long long cl = (long long)json_integer_value(json_object_get(p, "client"));
    long long icmp = (long long)json_integer_value(json_object_get(p, "icmp"));
    const json_t *tcp = json_object_get(p, "tcp_full_mss");
    char why[64] = "";

    buf[0] = '\0';
    if (!v)
        return buf;
    if (path && path < cl)
        snprintf(why, sizeof(why), icmp ? ", ICMP said %lld" : ", no ICMP", icmp);
    snprintf(buf, len, "path MTU %lld %s %lld%s%s: %s", path, path < cl ? "<" : "of", cl, why,
             json_is_false(tcp) ? ", full-MSS TCP stalled" : "",
             strcmp(v, "black-hole") == 0 ? "black hole" : v);
    return buf;
}

void pathmtu_print(const struct report *rep, const char *bullet, FILE *out)
{
    bool first = true;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i);
        char text[160], label[256];
        struct rowkey k;
        if (!row || !pathmtu_black_hole(row))
            continue;
        if (first)
            fprintf(out, "\n!pmtu-black-hole: packets of the interface MTU are lost on the path "
                         "and no ICMP says so (path MTU probe, docs/report.md):\n");
        first = false;
        rowkey_of(row, &k);
        textsafe_line(out, "%s%s: %s", bullet, rowkey_label(&k, label, sizeof(label)),
                      pathmtu_text(row, text, sizeof(text)));
    }
}

static void html_rows(const struct report *rep, bool holes, FILE *out)
{
    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i);
        char text[160], label[256];
        struct rowkey k;
        if (!row || !json_object_get(row, "path_mtu") || pathmtu_black_hole(row) != holes)
            continue;
        rowkey_of(row, &k);
        fputs(holes ? "<li><b>! " : "<li>", out);
        html_esc(rowkey_label(&k, label, sizeof(label)), out);
        fputs(": ", out);
        html_esc(pathmtu_text(row, text, sizeof(text)), out);
        fputs(holes ? "</b></li>\n" : "</li>\n", out);
    }
}

void pathmtu_html(const struct report *rep, FILE *out)
{
    bool any = false;

    for (size_t i = 0; i < report_row_count(rep) && !any; i++)
        any = report_row(rep, i) && json_object_get(report_row(rep, i), "path_mtu");
    if (!any)
        return;
    fputs("<h2>Path MTU</h2>\n<p>The largest packet each path carried (path MTU probe: "
          "don't-fragment datagrams, then a transfer at full MSS) against the interfaces' MTU. "
          "A black hole (!) loses larger packets without the ICMP that would say so.</p>\n<ul>\n",
          out);
    html_rows(rep, true, out);
    html_rows(rep, false, out);
    fputs("</ul>\n", out);
}
