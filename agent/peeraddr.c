/* SPDX-License-Identifier: Apache-2.0 */
/* peeraddr.c - see peeraddr.h. */
#include "agent/peeraddr.h"

#include <netinet/in.h>
#include <string.h>

void peeraddr_unmap(const struct sockaddr *sa, struct sockaddr_storage *out)
{
    memset(out, 0, sizeof(*out));
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            struct sockaddr_in *in = (struct sockaddr_in *)out;
            in->sin_family = AF_INET;
            in->sin_port = in6->sin6_port;
            memcpy(&in->sin_addr, in6->sin6_addr.s6_addr + 12, 4);
            return;
        }
        memcpy(out, in6, sizeof(*in6));
    } else if (sa->sa_family == AF_INET) {
        memcpy(out, sa, sizeof(struct sockaddr_in));
    } else {
        out->ss_family = sa->sa_family;
    }
}

int peeraddr_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
    struct sockaddr_storage x, y;

    peeraddr_unmap(a, &x);
    peeraddr_unmap(b, &y);
    if (x.ss_family != y.ss_family)
        return 0;
    if (x.ss_family == AF_INET)
        return ((const struct sockaddr_in *)&x)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)&y)->sin_addr.s_addr;
    if (x.ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)&x)->sin6_addr,
                      &((const struct sockaddr_in6 *)&y)->sin6_addr, 16) == 0;
    return 0;
}
