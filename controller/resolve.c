/* SPDX-License-Identifier: Apache-2.0 */
/* resolve.c - see resolve.h. */
#include "controller/resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/kp_alloc.h"

static int literal(const char *host, char *out, size_t cap)
{
    struct in6_addr a6;
    struct in_addr a4;

    if (inet_pton(AF_INET, host, &a4) == 1)
        return inet_ntop(AF_INET, &a4, out, (socklen_t)cap) ? AF_INET : -1;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return inet_ntop(AF_INET6, &a6, out, (socklen_t)cap) ? AF_INET6 : -1;
    return 0;
}

int resolve_host(const char *host, enum run_ip_family family, char *out, size_t cap,
                 struct kp_err *err)
{
    struct addrinfo hints, *res = NULL, *pick = NULL;
    int want = family == RUN_IPV4 ? AF_INET : family == RUN_IPV6 ? AF_INET6 : AF_UNSPEC;
    int lit = literal(host, out, cap), rc;

    if (lit < 0)
        return kp_err_set(err, "--external-server: '%s': address too long", host);
    if (lit > 0) {
        if (want != AF_UNSPEC && lit != want)
            return kp_err_set(err, "--external-server: %s is not an %s address (--ip-family %s)",
                              host, want == AF_INET ? "IPv4" : "IPv6",
                              want == AF_INET ? "ipv4" : "ipv6");
        return 0;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = want;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 && want != AF_UNSPEC) {
        /* the name may exist in the other family only: say so rather than "not known" */
        struct addrinfo *any = NULL;
        hints.ai_family = AF_UNSPEC;
        if (getaddrinfo(host, NULL, &hints, &any) == 0) {
            freeaddrinfo(any);
            rc = EAI_NODATA;
        }
    }
    if (rc == EAI_NODATA || (rc == 0 && !res) || (rc == EAI_ADDRFAMILY && want != AF_UNSPEC))
        return kp_err_set(err, "--external-server: '%s' has no %s address", host,
                          want == AF_INET6  ? "IPv6"
                          : want == AF_INET ? "IPv4"
                                            : "IP");
    if (rc != 0)
        return kp_err_set(err, "--external-server: '%s' does not resolve (%s)", host,
                          rc == EAI_SYSTEM ? "system error" : gai_strerror(rc));
    /* the first IPv4 answer when the family is open: every cluster has IPv4 */
    for (struct addrinfo *ai = res; ai && !pick; ai = ai->ai_next)
        if (ai->ai_family == AF_INET)
            pick = ai;
    for (struct addrinfo *ai = res; ai && !pick; ai = ai->ai_next)
        if (ai->ai_family == AF_INET6)
            pick = ai;
    if (!pick) {
        freeaddrinfo(res);
        return kp_err_set(err, "--external-server: '%s' has no IP address", host);
    }
    rc = getnameinfo(pick->ai_addr, pick->ai_addrlen, out, (socklen_t)cap, NULL, 0, NI_NUMERICHOST);
    freeaddrinfo(res);
    if (rc != 0)
        return kp_err_set(err, "--external-server: '%s': %s", host, gai_strerror(rc));
    return 0;
}

int resolve_external(struct run_options *o, struct kp_err *err)
{
    char addr[INET6_ADDRSTRLEN + 16];

    if (!o->external_host)
        return 0;
    if (resolve_host(o->external_host, o->ip_family, addr, sizeof(addr), err) != 0)
        return -1;
    if (literal(o->external_host, addr + 0, sizeof(addr)) > 0) {
        /* an address: written back normalised, no name to keep */
        free(o->external_host);
        o->external_host = kp_xstrdup(addr);
        return 0;
    }
    free(o->external_name);
    o->external_name = o->external_host;
    o->external_host = kp_xstrdup(addr);
    return 0;
}
