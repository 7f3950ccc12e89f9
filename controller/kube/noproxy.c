/* SPDX-License-Identifier: Apache-2.0 */
/* noproxy.c - see noproxy.h. The order of the checks follows httpproxy's config.init: "*",
 * CIDR, then host[:port] split as net.SplitHostPort does, then IP, then domain. */
#include "controller/kube/noproxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

struct ip {
    int family; /* 0 = not an IP */
    unsigned char b[16];
};

static struct ip parse_ip(const char *s)
{
    struct ip ip = {0};

    if (inet_pton(AF_INET, s, ip.b) == 1)
        ip.family = AF_INET;
    else if (inet_pton(AF_INET6, s, ip.b) == 1)
        ip.family = AF_INET6;
    if (ip.family == AF_INET6 && !memcmp(ip.b, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
        memmove(ip.b, ip.b + 12, 4); /* Go compares ::ffff:a.b.c.d as a.b.c.d */
        ip.family = AF_INET;
    }
    return ip;
}

static int ip_equal(const struct ip *a, const struct ip *b)
{
    return a->family && a->family == b->family &&
           !memcmp(a->b, b->b, a->family == AF_INET ? 4 : 16);
}

/* "addr/bits" as net.ParseCIDR: 1 and *match set when it is one. */
static int cidr(const char *p, const struct ip *host, int *match)
{
    const char *slash = strchr(p, '/');
    char *addr, *end;
    struct ip net;
    long bits;
    int max;

    if (!slash || !isdigit((unsigned char)slash[1]))
        return 0;
    addr = kp_xstrndup(p, (size_t)(slash - p));
    net = parse_ip(addr);
    free(addr);
    max = net.family == AF_INET ? 32 : 128;
    bits = strtol(slash + 1, &end, 10);
    if (!net.family || *end || bits > max)
        return 0;
    *match = 0;
    if (host->family != net.family)
        return 1;
    for (long i = 0; i < bits; i++) {
        unsigned char m = (unsigned char)(0x80 >> (i % 8));
        if ((host->b[i / 8] & m) != (net.b[i / 8] & m))
            return 1;
    }
    *match = 1;
    return 1;
}

/* net.SplitHostPort: "[v6]:port" or "host:port" with exactly one colon; else 0. */
static int split_host_port(char *p, char **host, char **port)
{
    char *colon;

    if (p[0] == '[') {
        char *end = strchr(p, ']');
        if (!end || end[1] != ':')
            return 0;
        *end = '\0';
        *host = p + 1;
        *port = end + 2;
        return !strchr(*port, ':');
    }
    colon = strchr(p, ':');
    if (!colon || strchr(colon + 1, ':'))
        return 0;
    *colon = '\0';
    *host = p;
    *port = colon + 1;
    return 1;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* One lower-cased, trimmed, non-empty entry against the request. */
static int entry_match(char *p, const char *host, const struct ip *hip, const char *port)
{
    char *phost = p, *pport = "";
    struct ip eip;
    int m = 0;

    if (!strcmp(p, "*") || (cidr(p, hip, &m) && m))
        return 1;
    if (strchr(p, '/') && cidr(p, hip, &m))
        return 0;
    if (split_host_port(p, &phost, &pport) && !*phost)
        return 0; /* ":80": no host part, ignored as Go does */
    if (*pport && strcmp(pport, port) != 0)
        return 0;
    eip = parse_ip(phost);
    if (eip.family)
        return ip_equal(&eip, hip);
    if (!strncmp(phost, "*.", 2))
        phost++;
    if (phost[0] == '.')
        return has_suffix(host, phost);
    return !strcmp(host, phost) || (has_suffix(host, phost) && strlen(host) > strlen(phost) &&
                                    host[strlen(host) - strlen(phost) - 1] == '.');
}

int noproxy_match(const char *no_proxy, const char *host, const char *port)
{
    char *list, *save = NULL, *lhost;
    struct ip hip;
    int hit = 0;

    if (!no_proxy || !*no_proxy)
        return 0;
    lhost = kp_xstrdup(host);
    for (char *c = lhost; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    hip = parse_ip(lhost);
    list = kp_xstrdup(no_proxy);
    for (char *e = strtok_r(list, ",", &save); e && !hit; e = strtok_r(NULL, ",", &save)) {
        size_t n;
        while (isspace((unsigned char)*e))
            e++;
        n = strlen(e);
        while (n > 0 && isspace((unsigned char)e[n - 1]))
            e[--n] = '\0';
        for (char *c = e; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        if (*e)
            hit = entry_match(e, lhost, &hip, port);
    }
    free(list);
    free(lhost);
    return hit;
}
