/* SPDX-License-Identifier: Apache-2.0 */
/* hostfacts.c - see hostfacts.h. */
#include "agent/hostfacts.h"

#include <ctype.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/nicinfo.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"

char *hostfacts_cpu_model(const char *cpuinfo)
{
    static const char *const keys[] = {"model name", "Processor", "cpu model"};

    for (size_t k = 0; cpuinfo && k < sizeof(keys) / sizeof(keys[0]); k++) {
        size_t kl = strlen(keys[k]);
        for (const char *line = cpuinfo; line && *line;) {
            const char *end = strchr(line, '\n');
            size_t n = end ? (size_t)(end - line) : strlen(line);
            if (n > kl && strncmp(line, keys[k], kl) == 0 &&
                (line[kl] == ':' || line[kl] == ' ' || line[kl] == '\t')) {
                const char *v = memchr(line, ':', n);
                if (v) {
                    const char *stop = line + n;
                    v++;
                    while (v < stop && isspace((unsigned char)*v))
                        v++;
                    while (stop > v && isspace((unsigned char)stop[-1]))
                        stop--;
                    if (stop > v)
                        return kp_xstrndup(v, (size_t)(stop - v));
                }
            }
            line = end ? end + 1 : NULL;
        }
    }
    return NULL;
}

static char *read_small(const char *path, size_t cap)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n;

    if (!f)
        return NULL;
    buf = kp_xmalloc(cap + 1);
    n = fread(buf, 1, cap, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static json_t *os_image(void)
{
    char *text = read_small("/etc/os-release", 8192);
    json_t *out = NULL;

    for (char *line = text; line && *line && !out;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            size_t n = strlen(v);
            if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                v[n - 1] = '\0';
                v++;
            }
            out = json_string(v);
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    return out;
}

json_t *hostfacts_collect(int fd)
{
    char host[256], kernel[256], machine[64], ifname[IF_NAMESIZE + 1] = "";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char *cpuinfo = read_small("/proc/cpuinfo", 1 << 16);
    char *model = hostfacts_cpu_model(cpuinfo);
    json_t *f = json_object(), *os = os_image();

    sysinfo_host(host, sizeof(host), kernel, sizeof(kernel));
    json_object_set_new(f, "hostname", json_string(host));
    json_object_set_new(f, "kernel", json_string(kernel));
    sysinfo_machine(machine, sizeof(machine));
    json_object_set_new(f, "machine", json_string(machine));
    if (os)
        json_object_set_new(f, "os_image", os);
    if (cpus > 0)
        json_object_set_new(f, "cpus", json_integer(cpus));
    if (model)
        json_object_set_new(f, "cpu_model", json_string(model));
    if (fd >= 0 && sysinfo_socket_ifname(fd, ifname, sizeof(ifname)) == 0)
        json_object_set_new(f, "interface", json_string(ifname));
    json_object_set_new(f, "net", nicinfo_node_facts(ifname[0] ? ifname : NULL));
    free(model);
    free(cpuinfo);
    return f;
}

char *hostfacts_text(const json_t *facts, size_t max)
{
    json_t *copy = json_deep_copy(facts);
    char *text = NULL;

    for (int round = 0; copy && round < 3; round++) {
        if (round == 1)
            json_object_del(json_object_get(copy, "net"), "sysctls");
        if (round == 2)
            json_object_del(copy, "net");
        text = json_dumps(copy, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_SORT_KEYS);
        if (text && strlen(text) <= max)
            break;
        free(text);
        text = NULL;
    }
    json_decref(copy);
    return text;
}
