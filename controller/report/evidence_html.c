/* SPDX-License-Identifier: Apache-2.0 */
/* evidence_html.c - the HTML report's per-row evidence panel (evidence.h): for every row with
 * counters, its moved drop, shaping and overflow counters first, then every counter that moved
 * on each side, the conntrack table's size against its maximum, and the path MTU probe's line. */
#include "controller/report/evidence.h"

#include <stdbool.h>
#include <string.h>

#include "base/rowkey.h"
#include "controller/report/capacity.h"
#include "controller/report/html_util.h"
#include "controller/report/kprofile.h"
#include "controller/report/pathmtu.h"
#include "controller/report/report.h"

static void side_rows(const char *side, const json_t *acc, FILE *out)
{
    const char *key;
    json_t *v;

    json_object_foreach(json_object_get(acc, "deltas"), key, v)
    {
        const char *cls = evidence_class(key);
        fprintf(out, "<tr%s><td>%s</td><td>", cls ? " class=\"moved\"" : "", side);
        html_esc(key, out);
        fprintf(out, "</td><td>%lld</td><td>%s</td></tr>\n", (long long)json_integer_value(v),
                cls ? cls : "");
    }
    if (json_is_integer(json_object_get(acc, "conntrack_max")))
        fprintf(out,
                "<tr><td>%s</td><td>conntrack entries / max (largest seen)</td>"
                "<td>%lld / %lld</td><td></td></tr>\n",
                side, (long long)json_integer_value(json_object_get(acc, "conntrack_count")),
                (long long)json_integer_value(json_object_get(acc, "conntrack_max")));
}

static void panel(const json_t *row, FILE *out)
{
    const json_t *ev = json_object_get(row, "evidence");
    char label[256], text[1024];
    struct rowkey k;
    size_t moved = evidence_moved_text(row, text, sizeof(text));

    rowkey_of(row, &k);
    fprintf(out, "<details class=\"evidence\"%s><summary>",
            moved || pathmtu_black_hole(row) ? " open" : "");
    html_esc(rowkey_label(&k, label, sizeof(label)), out);
    fputs(moved ? ": <b>! " : ": ", out);
    html_esc(moved ? text : "no drop, shaping or overflow counter moved", out);
    fputs(moved ? "</b></summary>\n" : "</summary>\n", out);
    fputs("<table><tr><th>side</th><th>counter</th><th>delta</th><th>marks as</th></tr>\n", out);
    side_rows("client", json_object_get(ev, "client"), out);
    side_rows("server", json_object_get(ev, "server"), out);
    fputs("</table>", out);
    if (json_object_get(row, "path_mtu")) { /* pathmtu.h: the probe's line, also in "Path MTU" */
        fputs(pathmtu_black_hole(row) ? "<p><b>! " : "<p>", out);
        html_esc(pathmtu_text(row, text, sizeof(text)), out);
        fputs(pathmtu_black_hole(row) ? "</b></p>" : "</p>", out);
    }
    kprofile_html(row, out); /* kprofile.h: with kperf run --profile */
    capacity_html(row, out); /* capacity.h: the --capacity ramp of a TCP_CRR row */
    fputs("</details>\n", out);
}

void evidence_html(const struct report *rep, FILE *out)
{
    bool any = false;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i);
        if (!row || (!json_object_get(row, "evidence") && !json_object_get(row, "profile")))
            continue;
        if (!any)
            fputs("<h2>Evidence</h2>\n<p>Kernel and NIC counters that moved during each row "
                  "(summed over its samples; client and server node). A row whose drop, "
                  "shaping or overflow counters moved is open and marked !.</p>\n"
                  "<style>tr.moved td{font-weight:bold;color:#a00}</style>\n",
                  out);
        any = true;
        panel(row, out);
    }
}
