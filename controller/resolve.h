/* SPDX-License-Identifier: Apache-2.0 */
/* resolve.h - turns the name given to --external-server into an address, in the controller.
 * The agent is a static binary that cannot resolve names (no NSS), so every backend dials the
 * address found here. Owns the choice of family: --ip-family ipv4 or ipv6 asks for that family
 * only; the default (and both) takes the resolver's first answer, IPv4 before IPv6 when a name
 * has both (the families every cluster has). Knows nothing of backends. */
#ifndef KPERF_CONTROLLER_RESOLVE_H
#define KPERF_CONTROLLER_RESOLVE_H

#include <stddef.h>

#include "base/kp_err.h"
#include "controller/run_options.h"

/* A numeric address (IPv4 or IPv6, no brackets) for host into out[cap]: an address literal
 * as it is written (normalised), a name through getaddrinfo. Returns 0, or -1 with one line in
 * err ("--external-server: 'x.invalid' does not resolve (Name or service not known)", or "has
 * no IPv6 address" for a family that the name lacks). */
KP_MUST_CHECK int resolve_host(const char *host, enum run_ip_family family, char *out, size_t cap,
                               struct kp_err *err);

/* Resolves o->external_host in place when it is a name: external_host becomes the address and
 * external_name keeps the name (for the report). No-op without --external-server or for an
 * address. Returns 0, or -1 with err (a usage error). */
KP_MUST_CHECK int resolve_external(struct run_options *o, struct kp_err *err);

#endif
