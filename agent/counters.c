/* SPDX-License-Identifier: Apache-2.0 */
/* counters.c - see counters.h: the model, the parsers and the JSON. */
#include "agent/counters.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

#define MAX_COLS 64

void counters_snap_init(struct counters_snap *s)
{
    s->sources = 0;
    s->n = 0;
    s->conntrack_count = -1;
    s->conntrack_max = -1;
}

void counters_add(struct counters_snap *s, const char *name, uint64_t value)
{
    size_t len = strlen(name);

    if (len == 0 || len >= COUNTERS_NAME_MAX)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->c[i].name, name) == 0) {
            s->c[i].value += value;
            return;
        }
    if (s->n >= COUNTERS_MAX)
        return;
    memcpy(s->c[s->n].name, name, len + 1);
    s->c[s->n++].value = value;
}

uint64_t counters_get(const struct counters_snap *s, const char *name, int *found)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->c[i].name, name) == 0) {
            if (found)
                *found = 1;
            return s->c[i].value;
        }
    if (found)
        *found = 0;
    return 0;
}

/* Splits line (modified) at blanks into at most max words; returns how many. */
static size_t split(char *line, char **w, size_t max)
{
    size_t n = 0;

    for (char *save = NULL, *t = strtok_r(line, " \t", &save); t && n < max;
         t = strtok_r(NULL, " \t", &save))
        w[n++] = t;
    return n;
}

/* The next line of *p (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p)
{
    char *line = *p, *end;

    if (!line || !*line)
        return NULL;
    end = strchr(line, '\n');
    if (end) {
        *end = '\0';
        *p = end + 1;
    } else {
        *p = NULL;
    }
    return line;
}

static int kept_section(const char *sec)
{
    return strcmp(sec, "Ip:") == 0 || strcmp(sec, "Tcp:") == 0 || strcmp(sec, "Udp:") == 0 ||
           strcmp(sec, "TcpExt:") == 0 || strcmp(sec, "Icmp:") == 0;
}

/* Of the Icmp: section only the unreachables sent and received (a node refusing connections:
 * the capacity ramp's first counter, docs/report.md "Connection capacity"). */
static int kept_counter(const char *sec, const char *name)
{
    return strcmp(sec, "Icmp:") != 0 || strcmp(name, "OutDestUnreachs") == 0 ||
           strcmp(name, "InDestUnreachs") == 0;
}

int counters_parse_snmp(const char *text, struct counters_snap *s)
{
    char *copy = kp_xstrdup(text ? text : ""), *p = copy, *names, *values;
    int pairs = 0, rc = -1;

    while ((names = next_line(&p)) && (values = next_line(&p))) {
        char *nw[MAX_COLS * 4], *vw[MAX_COLS * 4];
        size_t nn = split(names, nw, MAX_COLS * 4), nv = split(values, vw, MAX_COLS * 4);
        if (nn < 2 || nn != nv || strcmp(nw[0], vw[0]) != 0 || !strchr(nw[0], ':'))
            goto out;
        pairs++;
        if (!kept_section(nw[0]))
            continue;
        for (size_t i = 1; i < nn; i++) {
            char name[COUNTERS_NAME_MAX];
            char *end;
            long long v = strtoll(vw[i], &end, 10);
            /* gauges (Tcp.MaxConn, Tcp.CurrEstab) are not counters */
            if (*end || v < 0 || strcmp(nw[i], "CurrEstab") == 0 || !kept_counter(nw[0], nw[i]))
                continue;
            snprintf(name, sizeof(name), "%.*s.%s", (int)(strlen(nw[0]) - 1), nw[0], nw[i]);
            counters_add(s, name, (uint64_t)v);
        }
    }
    rc = pairs > 0 ? 0 : -1;
out:
    free(copy);
    return rc;
}

int counters_parse_snmp6(const char *text, struct counters_snap *s)
{
    char *copy = kp_xstrdup(text ? text : ""), *p = copy, *line;
    int lines = 0;

    while ((line = next_line(&p))) {
        char *w[3], name[COUNTERS_NAME_MAX];
        if (split(line, w, 3) != 2) {
            free(copy);
            return -1;
        }
        lines++;
        if (strncmp(w[0], "Udp6", 4) != 0)
            continue;
        snprintf(name, sizeof(name), "Udp6.%s", w[0] + 4);
        counters_add(s, name, strtoull(w[1], NULL, 10));
    }
    free(copy);
    return lines > 0 ? 0 : -1;
}

int counters_parse_softnet(const char *text, struct counters_snap *s)
{
    char *copy = kp_xstrdup(text ? text : ""), *p = copy, *line;
    uint64_t dropped = 0, squeezed = 0;
    int cpus = 0;

    while ((line = next_line(&p))) {
        char *w[MAX_COLS];
        if (split(line, w, MAX_COLS) < 3) {
            free(copy);
            return -1;
        }
        dropped += strtoull(w[1], NULL, 16);
        squeezed += strtoull(w[2], NULL, 16);
        cpus++;
    }
    free(copy);
    if (cpus == 0)
        return -1;
    counters_add(s, "softnet.dropped", dropped);
    counters_add(s, "softnet.time_squeeze", squeezed);
    return 0;
}

int counters_parse_conntrack(const char *text, struct counters_snap *s)
{
    static const char *const keep[] = {"insert_failed", "drop",           "early_drop",
                                       "invalid",       "search_restart", "clash_resolve"};
    char *copy = kp_xstrdup(text ? text : ""), *p = copy, *line, *hw[MAX_COLS];
    uint64_t sum[MAX_COLS] = {0};
    size_t nh = 0;
    int cpus = 0, rc = -1;

    line = next_line(&p);
    if (line)
        nh = split(line, hw, MAX_COLS);
    if (nh == 0 || strcmp(hw[0], "entries") != 0)
        goto out;
    while ((line = next_line(&p))) {
        char *w[MAX_COLS];
        if (split(line, w, MAX_COLS) != nh)
            goto out;
        for (size_t i = 0; i < nh; i++)
            sum[i] += strtoull(w[i], NULL, 16);
        cpus++;
    }
    if (cpus == 0)
        goto out;
    for (size_t i = 0; i < nh; i++)
        for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
            if (strcmp(hw[i], keep[k]) == 0) {
                char name[COUNTERS_NAME_MAX];
                snprintf(name, sizeof(name), "conntrack.%s", hw[i]);
                counters_add(s, name, sum[i]);
            }
    rc = 0;
out:
    free(copy);
    return rc;
}

static const struct {
    enum counters_source bit;
    const char *name;
} source_names[] = {
    {COUNTERS_SNMP, "snmp"},       {COUNTERS_NETSTAT, "netstat"},     {COUNTERS_SNMP6, "snmp6"},
    {COUNTERS_SOFTNET, "softnet"}, {COUNTERS_CONNTRACK, "conntrack"}, {COUNTERS_QDISC, "qdisc"},
    {COUNTERS_LINK, "link"},       {COUNTERS_ETHTOOL, "ethtool"},
};

json_t *counters_delta_json(const struct counters_snap *before, const struct counters_snap *after)
{
    json_t *doc = json_pack("{s:i}", "v", COUNTERS_VERSION);
    json_t *src = json_array(), *deltas = json_object();
    unsigned both = before->sources & after->sources;

    for (size_t i = 0; i < sizeof(source_names) / sizeof(source_names[0]); i++)
        if (both & source_names[i].bit)
            json_array_append_new(src, json_string(source_names[i].name));
    for (size_t i = 0; i < after->n; i++) {
        int found;
        uint64_t b = counters_get(before, after->c[i].name, &found);
        if (found && after->c[i].value > b)
            json_object_set_new(deltas, after->c[i].name,
                                json_integer((json_int_t)(after->c[i].value - b)));
    }
    json_object_set_new(doc, "sources", src);
    json_object_set_new(doc, "deltas", deltas);
    if ((both & COUNTERS_CONNTRACK) && after->conntrack_count >= 0)
        json_object_set_new(doc, "conntrack_count", json_integer(after->conntrack_count));
    if ((both & COUNTERS_CONNTRACK) && after->conntrack_max >= 0)
        json_object_set_new(doc, "conntrack_max", json_integer(after->conntrack_max));
    return doc;
}

/* Removes the deltas whose name starts with one of the prefixes. */
static void drop_prefixed(json_t *deltas, const char *const *prefixes)
{
    const char *key;
    json_t *v, *tmp;

    json_object_foreach_safe(deltas, tmp, key, v)
    {
        for (const char *const *p = prefixes; *p; p++)
            if (strncmp(key, *p, strlen(*p)) == 0) {
                json_object_del(deltas, key);
                break;
            }
    }
}

char *counters_text(json_t *delta, size_t max)
{
    static const char *const first[] = {"Ip.", "TcpExt.TCP", NULL};
    static const char *const second[] = {"Tcp.", "TcpExt.", "Udp.", "Udp6.", NULL};
    const char *const *rounds[] = {NULL, first, second};

    for (size_t r = 0; r < sizeof(rounds) / sizeof(rounds[0]); r++) {
        char *text;
        if (rounds[r]) {
            drop_prefixed(json_object_get(delta, "deltas"), rounds[r]);
            json_object_set_new(delta, "trimmed", json_true());
        }
        text = json_dumps(delta, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (text && strlen(text) <= max)
            return text;
        free(text);
    }
    return NULL;
}
