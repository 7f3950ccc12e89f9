/* SPDX-License-Identifier: Apache-2.0 */
/* cni_json.h - the JSON documents of the CNI spec (1.0, and the 0.3.0 to 0.4.0 results that
 * chained plugins may still return) as `kperf run --local --cni-conf` uses them: the network
 * configuration list a user gives, the configuration each plugin reads on stdin (conflist
 * chaining with prevResult), a plugin's result (its IPs, interfaces and routes), its error
 * ({code, msg, details}) and its VERSION answer. Pure parsing and building: runs nothing
 * (local_cni.c runs the plugins). */
#ifndef KPERF_LOCAL_CNI_JSON_H
#define KPERF_LOCAL_CNI_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/kp_err.h"

struct kp_err;

#define CNI_MAX_IPS    8
#define CNI_MAX_IFACES 16
#define CNI_ADDR_LEN   46 /* INET6_ADDRSTRLEN */
#define CNI_IFNAME_LEN 16 /* IFNAMSIZ */

struct cni_ip {
    char addr[CNI_ADDR_LEN];    /* "198.18.16.2" (no prefix) */
    int prefix;                 /* 24 */
    bool v6;                    /* an IPv6 address */
    char gateway[CNI_ADDR_LEN]; /* "" when none */
    int iface;                  /* index into cni_result.ifaces, or -1 when not given */
};

struct cni_iface {
    char name[CNI_IFNAME_LEN];
    bool in_sandbox; /* has a "sandbox": the pod's interface; otherwise the node's */
};

/* What kperf needs of a result: the addresses and on which side each interface lives. */
struct cni_result {
    struct cni_ip ips[CNI_MAX_IPS];
    size_t n_ips;
    struct cni_iface ifaces[CNI_MAX_IFACES];
    size_t n_ifaces;
    bool default_route[2]; /* [0] IPv4, [1] IPv6: a route to 0.0.0.0/0 or ::/0 */
};

/* Checks a network configuration list (or a single network configuration, which becomes a
 * list of one plugin): an object with a "name", a "cniVersion" of at least 0.3.0 and
 * "plugins", an array of objects each with a "type" made of letters, digits, '-', '_' and
 * '.'. Returns a new reference to the list, or NULL with a one-line reason in err. */
json_t *cni_conflist_parse(const char *text, size_t len, struct kp_err *err);

/* What plugin i of the list reads on stdin: its object with the list's "name" and
 * "cniVersion" and, when prev is not NULL, "prevResult" (borrowed). Caller frees the text. */
char *cni_plugin_config(const json_t *conflist, size_t i, const json_t *prev);

/* Parses a plugin's result document into r. Returns a new reference to the whole document (the
 * next plugin's prevResult), or NULL with err when it is not a result with at least one IP. */
json_t *cni_result_parse(const char *text, size_t len, struct cni_result *r, struct kp_err *err);

/* The first IP of the family on an interface in the sandbox (or on no named interface), or
 * NULL. Borrowed from r. */
const struct cni_ip *cni_result_ip(const struct cni_result *r, bool v6);

/* Reads a CNI error document: true with its code and "msg[: details]" in msg (made safe for a
 * one-line message); false when text is not one. */
bool cni_error_parse(const char *text, size_t len, long *code, char *msg, size_t msg_len);

/* Reads a VERSION answer: true with its "cniVersion" and "supportedVersions" (a new reference
 * to the array) when it is one, and whether `want` is among the supported versions. */
bool cni_version_parse(const char *text, size_t len, const char *want, json_t **supported,
                       bool *supports);

#endif
