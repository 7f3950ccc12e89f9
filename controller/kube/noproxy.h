/* SPDX-License-Identifier: Apache-2.0 */
/* noproxy.h - Go's NO_PROXY rules (golang.org/x/net/http/httpproxy, which kubectl uses), not
 * libcurl's: entries are "*", an IP, a CIDR, a domain (also matching its subdomains), ".domain"
 * or "*.domain" (subdomains only), each with an optional ":port"; comma-separated, trimmed and
 * case-insensitive. Owns the matching only; which proxy applies is kube/http_attempt.c's. */
#ifndef KPERF_KUBE_NOPROXY_H
#define KPERF_KUBE_NOPROXY_H

/* 1 when no_proxy (NULL = empty) says that a request to host (a name or an IP, no brackets)
 * on port (decimal) goes direct, else 0. Loopback is not special here: the caller checks it. */
int noproxy_match(const char *no_proxy, const char *host, const char *port);

#endif
