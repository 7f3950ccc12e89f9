/* SPDX-License-Identifier: Apache-2.0 */
/* cni_json.c - see cni_json.h. */
#include "controller/local/cni_json.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"

#define MAX_DOC (1024u * 1024u)

static bool type_ok(const char *t)
{
    if (!t || !*t || strlen(t) > 64 || strcmp(t, ".") == 0 || strcmp(t, "..") == 0)
        return false;
    for (const char *p = t; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return false;
    return true;
}

/* "0.3.0" and later: the versions whose results carry "ips" and "interfaces". */
static bool version_ok(const char *v)
{
    int major = 0, minor = 0, patch = 0;

    if (!v || sscanf(v, "%d.%d.%d", &major, &minor, &patch) != 3)
        return false;
    return major > 0 || minor >= 3;
}

static int check_plugins(const json_t *plugins, struct kp_err *err)
{
    size_t i;
    const json_t *p;

    if (!json_is_array(plugins) || json_array_size(plugins) == 0)
        return kp_err_set(err, "\"plugins\" must be a non-empty array");
    json_array_foreach(plugins, i, p)
    {
        const char *t = json_string_value(json_object_get(p, "type"));
        const json_t *ipam = json_object_get(p, "ipam");
        if (!json_is_object(p))
            return kp_err_set(err, "plugins[%zu] is not an object", i);
        if (!type_ok(t))
            return kp_err_set(err, "plugins[%zu] has no valid \"type\" (a plugin binary's name)",
                              i);
        if (ipam && !type_ok(json_string_value(json_object_get(ipam, "type"))))
            return kp_err_set(err, "plugins[%zu].ipam has no valid \"type\"", i);
    }
    return 0;
}

json_t *cni_conflist_parse(const char *text, size_t len, struct kp_err *err)
{
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    const char *name, *version;

    if (!doc)
        return kp_err_set(err, "not JSON: %s (line %d)", jerr.text, jerr.line), NULL;
    if (!json_is_object(doc))
        goto bad;
    if (!json_object_get(doc, "plugins") && json_object_get(doc, "type")) {
        /* a single network configuration: a list of that one plugin */
        json_t *list =
            json_pack("{s:O, s:O, s:[O]}", "cniVersion", json_object_get(doc, "cniVersion"), "name",
                      json_object_get(doc, "name"), "plugins", doc);
        json_decref(doc);
        doc = list;
        if (!doc)
            return kp_err_set(err, "a network configuration needs \"cniVersion\" and \"name\""),
                   NULL;
    }
    name = json_string_value(json_object_get(doc, "name"));
    version = json_string_value(json_object_get(doc, "cniVersion"));
    if (!name || !*name) {
        kp_err_set(err, "no \"name\"");
        goto fail;
    }
    if (!version_ok(version)) {
        kp_err_set(err, "\"cniVersion\" %s: kperf needs 0.3.0 or later",
                   version ? version : "is missing");
        goto fail;
    }
    if (check_plugins(json_object_get(doc, "plugins"), err) != 0)
        goto fail;
    return doc;
bad:
    kp_err_set(err, "not a CNI network configuration list (an object with \"plugins\")");
fail:
    json_decref(doc);
    return NULL;
}

char *cni_plugin_config(const json_t *conflist, size_t i, const json_t *prev)
{
    json_t *conf = json_deep_copy(json_array_get(json_object_get(conflist, "plugins"), i));
    char *text;

    json_object_set(conf, "name", json_object_get(conflist, "name"));
    json_object_set(conf, "cniVersion", json_object_get(conflist, "cniVersion"));
    if (prev)
        json_object_set(conf, "prevResult", (json_t *)prev);
    text = json_dumps(conf, JSON_COMPACT);
    json_decref(conf);
    return text;
}

/* "198.18.16.2/24" into ip (address, prefix, family). */
static int parse_cidr(const char *cidr, struct cni_ip *ip)
{
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    unsigned char buf[16];
    char *end = NULL;
    long prefix;
    size_t n;

    if (!slash || (n = (size_t)(slash - cidr)) >= sizeof(ip->addr))
        return -1;
    memcpy(ip->addr, cidr, n);
    ip->addr[n] = '\0';
    ip->v6 = strchr(ip->addr, ':') != NULL;
    if (inet_pton(ip->v6 ? AF_INET6 : AF_INET, ip->addr, buf) != 1)
        return -1;
    prefix = strtol(slash + 1, &end, 10);
    if (end == slash + 1 || *end || prefix < 0 || prefix > (ip->v6 ? 128 : 32))
        return -1;
    ip->prefix = (int)prefix;
    return 0;
}

static int parse_ifaces(const json_t *ifaces, struct cni_result *r, struct kp_err *err)
{
    size_t i;
    const json_t *it;

    json_array_foreach(ifaces, i, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (r->n_ifaces >= CNI_MAX_IFACES)
            return kp_err_set(err, "more than %d interfaces", CNI_MAX_IFACES);
        if (!name || !*name || strlen(name) >= CNI_IFNAME_LEN)
            return kp_err_set(err, "interfaces[%zu] has no valid name", i);
        snprintf(r->ifaces[r->n_ifaces].name, CNI_IFNAME_LEN, "%s", name);
        r->ifaces[r->n_ifaces++].in_sandbox =
            json_string_length(json_object_get(it, "sandbox")) > 0;
    }
    return 0;
}

static int parse_ips(const json_t *ips, struct cni_result *r, struct kp_err *err)
{
    size_t i;
    const json_t *it;

    json_array_foreach(ips, i, it)
    {
        struct cni_ip *ip = &r->ips[r->n_ips];
        const char *cidr = json_string_value(json_object_get(it, "address"));
        const char *gw = json_string_value(json_object_get(it, "gateway"));
        const json_t *idx = json_object_get(it, "interface");
        if (r->n_ips >= CNI_MAX_IPS)
            return kp_err_set(err, "more than %d IPs", CNI_MAX_IPS);
        if (parse_cidr(cidr, ip) != 0)
            return kp_err_set(err, "ips[%zu].address %s is not an address/prefix", i,
                              cidr ? cidr : "is missing");
        snprintf(ip->gateway, sizeof(ip->gateway), "%s", gw && strlen(gw) < CNI_ADDR_LEN ? gw : "");
        ip->iface = -1;
        if (json_is_integer(idx)) {
            json_int_t k = json_integer_value(idx);
            if (k < 0 || (size_t)k >= r->n_ifaces)
                return kp_err_set(err, "ips[%zu].interface %lld names no interface", i,
                                  (long long)k);
            ip->iface = (int)k;
        }
        r->n_ips++;
    }
    return 0;
}

json_t *cni_result_parse(const char *text, size_t len, struct cni_result *r, struct kp_err *err)
{
    json_error_t jerr;
    json_t *doc;
    size_t i;
    const json_t *rt;

    memset(r, 0, sizeof(*r));
    if (len > MAX_DOC)
        return kp_err_set(err, "result larger than %u bytes", MAX_DOC), NULL;
    doc = json_loadb(text, len, 0, &jerr);
    if (!json_is_object(doc)) {
        kp_err_set(err, "result is not a JSON object%s%s", doc ? "" : ": ", doc ? "" : jerr.text);
        goto fail;
    }
    if (parse_ifaces(json_object_get(doc, "interfaces"), r, err) != 0 ||
        parse_ips(json_object_get(doc, "ips"), r, err) != 0)
        goto fail;
    if (r->n_ips == 0) {
        kp_err_set(err, "result has no IP address (no \"ips\")");
        goto fail;
    }
    json_array_foreach(json_object_get(doc, "routes"), i, rt)
    {
        const char *dst = json_string_value(json_object_get(rt, "dst"));
        if (dst && strcmp(dst, "0.0.0.0/0") == 0)
            r->default_route[0] = true;
        else if (dst && strcmp(dst, "::/0") == 0)
            r->default_route[1] = true;
    }
    return doc;
fail:
    json_decref(doc);
    return NULL;
}

const struct cni_ip *cni_result_ip(const struct cni_result *r, bool v6)
{
    for (size_t i = 0; i < r->n_ips; i++) {
        const struct cni_ip *ip = &r->ips[i];
        if (ip->v6 == v6 && (ip->iface < 0 || r->ifaces[ip->iface].in_sandbox))
            return ip;
    }
    return NULL;
}

/* Copies s into out, control characters as spaces. */
static void safe_copy(char *out, size_t n, const char *s)
{
    size_t k = 0;

    for (; s && *s && k + 1 < n; s++)
        out[k++] = (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s;
    out[k] = '\0';
}

bool cni_error_parse(const char *text, size_t len, long *code, char *msg, size_t msg_len)
{
    json_t *doc = len && len <= MAX_DOC ? json_loadb(text, len, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(doc, "msg"));
    const char *d = json_string_value(json_object_get(doc, "details"));
    bool ok = json_is_integer(json_object_get(doc, "code")) && m;

    if (ok) {
        char *both = d && *d && strcmp(d, m) != 0 ? kp_xasprintf("%s: %s", m, d) : kp_xstrdup(m);
        *code = (long)json_integer_value(json_object_get(doc, "code"));
        safe_copy(msg, msg_len, both);
        free(both);
    }
    json_decref(doc);
    return ok;
}

bool cni_version_parse(const char *text, size_t len, const char *want, json_t **supported,
                       bool *supports)
{
    json_t *doc = len && len <= MAX_DOC ? json_loadb(text, len, 0, NULL) : NULL;
    json_t *list = json_object_get(doc, "supportedVersions");
    size_t i;
    const json_t *v;

    *supported = NULL;
    *supports = false;
    if (!json_is_array(list)) {
        json_decref(doc);
        return false;
    }
    json_array_foreach(list, i, v)
    {
        if (want && json_is_string(v) && strcmp(json_string_value(v), want) == 0)
            *supports = true;
    }
    *supported = json_incref(list);
    json_decref(doc);
    return true;
}
