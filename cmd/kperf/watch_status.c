/* SPDX-License-Identifier: Apache-2.0 */
/* watch_status.c - see watch_status.h. */
#include "cmd/kperf/watch_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void watch_status_phrase(const char *log_path, char *buf, size_t len)
{
    char tail[2048], *line = NULL, *save = NULL, *end;
    FILE *f = fopen(log_path, "r");
    size_t n;
    const char *state = "starting";
    unsigned long long sent = 0, lost = 0;
    double last = 0;

    snprintf(buf, len, "%s", state);
    if (!f)
        return;
    if (fseek(f, -(long)(sizeof(tail) - 1), SEEK_END) != 0)
        rewind(f);
    n = fread(tail, 1, sizeof(tail) - 1, f);
    fclose(f);
    tail[n] = '\0';
    end = strrchr(tail, '\n'); /* a line still being written is not read */
    if (!end)
        return;
    end[1] = '\0';
    for (char *l = strtok_r(tail, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (strncmp(l, "kperf-agent: status ", 20) == 0)
            line = l;
    if (!line)
        return;
    state = "ok";
    save = NULL;
    for (char *t = strtok_r(line + 20, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (strcmp(t, "last") == 0) {
            char *v = strtok_r(NULL, " ", &save);
            last = v ? strtod(v, NULL) : 0;
            continue;
        }
        char *st = strtok_r(NULL, " ", &save), *se = strtok_r(NULL, " ", &save),
             *lo = strtok_r(NULL, " ", &save);
        if (!st || !se || !lo)
            break;
        if (strcmp(st, "down") == 0 || (strcmp(st, "lossy") == 0 && strcmp(state, "ok") == 0))
            state = strcmp(st, "down") == 0 ? "DOWN" : "lossy";
        if (strcmp(t, "udp") == 0) {
            sent = strtoull(se, NULL, 10);
            lost = strtoull(lo, NULL, 10);
        }
    }
    if (last > 0)
        snprintf(buf, len, "%-6s udp lost %llu of %llu, last outage %.3f s", state, lost, sent,
                 last);
    else
        snprintf(buf, len, "%-6s udp lost %llu of %llu", state, lost, sent);
}
