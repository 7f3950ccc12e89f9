/* SPDX-License-Identifier: Apache-2.0 */
/* evidence.c - see evidence.h. */
#include "controller/report/evidence.h"

#include <stdio.h>
#include <string.h>

#include "base/rowkey.h"
#include "base/textsafe.h"
#include "controller/report/report.h"

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n >= t && strcmp(s + n - t, tail) == 0;
}

const char *evidence_class(const char *c)
{
    static const char *const drops[] = {
        "softnet.dropped",  "conntrack.drop",    "conntrack.early_drop", "Udp.RcvbufErrors",
        "Udp.SndbufErrors", "Udp6.RcvbufErrors", "Udp6.SndbufErrors",    "TcpExt.TCPBacklogDrop",
    };
    static const char *const overflows[] = {"TcpExt.ListenOverflows", "TcpExt.ListenDrops",
                                            "conntrack.insert_failed"};
    static const char *const nic_drops[] = {".rx_dropped",       ".tx_dropped",
                                            ".rx_missed_errors", ".rx_over_errors",
                                            ".rx_fifo_errors",   ".tx_fifo_errors"};

    if (strncmp(c, "qdisc.", 6) == 0)
        return ends_with(c, ".overlimits") ? "shaping" : ends_with(c, ".drops") ? "drop" : NULL;
    if (strncmp(c, "ethtool.", 8) == 0)
        return strstr(c, "allowance") ? "shaping" : "drop"; /* the agent keeps only these */
    if (strncmp(c, "nic.", 4) == 0) {
        for (size_t i = 0; i < sizeof(nic_drops) / sizeof(nic_drops[0]); i++)
            if (ends_with(c, nic_drops[i]))
                return "drop";
        return NULL;
    }
    for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
        if (strcmp(c, drops[i]) == 0)
            return "drop";
    for (size_t i = 0; i < sizeof(overflows) / sizeof(overflows[0]); i++)
        if (strcmp(c, overflows[i]) == 0)
            return "overflow";
    return NULL;
}

/* Adds one sample's side (the agent's counters object) into acc. */
static void add_side(json_t *acc, const json_t *side)
{
    json_t *deltas = json_object_get(acc, "deltas");
    const char *key;
    json_t *v;

    json_object_set_new(acc, "samples",
                        json_integer(json_integer_value(json_object_get(acc, "samples")) + 1));
    json_object_foreach(json_object_get(side, "deltas"), key, v)
    {
        json_int_t had = json_integer_value(json_object_get(deltas, key));
        json_object_set_new(deltas, key, json_integer(had + json_integer_value(v)));
    }
    for (const char *const *g = (const char *const[]){"conntrack_count", "conntrack_max", NULL}; *g;
         g++) {
        json_t *now = json_object_get(side, *g);
        if (json_is_integer(now) &&
            json_integer_value(now) > json_integer_value(json_object_get(acc, *g)))
            json_object_set(acc, *g, now);
    }
}

static void add_moved(json_t *moved, const char *side, const json_t *acc)
{
    const char *key;
    json_t *v;

    json_object_foreach(json_object_get(acc, "deltas"), key, v)
    {
        const char *cls = evidence_class(key);
        if (cls && json_integer_value(v) > 0)
            json_array_append_new(moved, json_pack("{s:s, s:s, s:O, s:s}", "side", side, "counter",
                                                   key, "delta", v, "class", cls));
    }
}

json_t *evidence_of_row(const json_t *row)
{
    static const char *const sides[] = {"client", "server"};
    json_t *ev = json_pack("{s:i}", "v", EVIDENCE_VERSION), *moved = json_array(), *smp;
    size_t i;
    bool any = false;

    json_array_foreach(json_object_get(row, "samples"), i, smp)
    {
        json_t *c = json_object_get(smp, "counters");
        for (size_t k = 0; k < 2; k++) {
            json_t *side = json_object_get(c, sides[k]);
            if (!json_is_object(side) || !json_object_get(side, "deltas"))
                continue;
            if (!json_object_get(ev, sides[k]))
                json_object_set_new(ev, sides[k], json_pack("{s:{}, s:i}", "deltas", "samples", 0));
            add_side(json_object_get(ev, sides[k]), side);
            any = true;
        }
    }
    if (!any) {
        json_decref(ev);
        json_decref(moved);
        return NULL;
    }
    for (size_t k = 0; k < 2; k++)
        if (json_object_get(ev, sides[k]))
            add_moved(moved, sides[k], json_object_get(ev, sides[k]));
    json_object_set_new(ev, "moved", moved);
    return ev;
}

size_t evidence_moved_text(const json_t *row, char *buf, size_t len)
{
    const json_t *moved = json_object_get(json_object_get(row, "evidence"), "moved"), *m;
    size_t i, used = 0;

    if (len)
        buf[0] = '\0';
    json_array_foreach(moved, i, m)
    {
        int w = snprintf(buf + used, len - used, "%s%s %s +%lld", i ? ", " : "",
                         json_string_value(json_object_get(m, "side")),
                         json_string_value(json_object_get(m, "counter")),
                         (long long)json_integer_value(json_object_get(m, "delta")));
        if (w < 0 || (size_t)w >= len - used) {
            if (len > 4)
                strcpy(buf + len - 4, "...");
            break;
        }
        used += (size_t)w;
    }
    return json_array_size(moved);
}

const char *evidence_marker(const json_t *row, char *buf, size_t len)
{
    const json_t *moved = json_object_get(json_object_get(row, "evidence"), "moved"), *m;
    static const char *const classes[] = {"shaping", "drop", "overflow"};
    size_t i, used = 0;

    buf[0] = '\0';
    for (size_t c = 0; c < 3; c++)
        json_array_foreach(moved, i, m)
        {
            if (strcmp(json_string_value(json_object_get(m, "class")), classes[c]) != 0)
                continue;
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                     used ? "," : "!", classes[c]);
            break;
        }
    if (used >= len && len > 0)
        buf[len - 1] = '\0';
    return buf;
}

void evidence_print(const struct report *rep, const char *bullet, FILE *out)
{
    bool first = true;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i);
        char text[1024], label[256];
        struct rowkey k;
        if (!row || evidence_moved_text(row, text, sizeof(text)) == 0)
            continue;
        if (first)
            fprintf(out, "\n! drop, shaping or overflow counters moved during the row "
                         "(evidence; kperf compare names them):\n");
        first = false;
        rowkey_of(row, &k);
        textsafe_line(out, "%s%s: %s", bullet, rowkey_label(&k, label, sizeof(label)), text);
    }
}

json_t *evidence_compare(const json_t *base_row, const json_t *new_row)
{
    const json_t *rows[2] = {base_row, new_row}, *m;
    json_t *out = json_array();
    size_t i;

    for (int r = 0; r < 2; r++)
        json_array_foreach(json_object_get(json_object_get(rows[r], "evidence"), "moved"), i, m)
        {
            json_t *c = json_deep_copy(m);
            json_object_set_new(c, "report", json_string(r ? "new" : "base"));
            json_array_append_new(out, c);
        }
    return out;
}

void evidence_compare_text(const json_t *moved, char *buf, size_t len)
{
    const json_t *m;
    size_t i, used = 0;

    if (len)
        buf[0] = '\0';
    json_array_foreach(moved, i, m)
    {
        int w = snprintf(
            buf + used, len - used, "%s%s %s %s +%lld", i ? ", " : "",
            strcmp(json_string_value(json_object_get(m, "report")), "new") == 0 ? "NEW" : "BASE",
            json_string_value(json_object_get(m, "side")),
            json_string_value(json_object_get(m, "counter")),
            (long long)json_integer_value(json_object_get(m, "delta")));
        if (w < 0 || (size_t)w >= len - used) {
            if (len > 4)
                strcpy(buf + len - 4, "...");
            return;
        }
        used += (size_t)w;
    }
}
