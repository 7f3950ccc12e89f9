/* SPDX-License-Identifier: Apache-2.0 */
/* localnet_cni.c - the pods of localnet.h when a CNI conflist makes their network
 * (`--cni-conf`, local_cni.h): ADD for each pod with the node's namespace as the "host", then
 * what a cluster's node-to-node routing does, from what the plugins gave: each pod address is
 * routed to its node from the other node (a /32 or /128 via the node's underlay address, so it
 * works whether the nodes share one IPAM range or not), the nodes answer ARP (proxy_arp) and,
 * for the other node's IPv6 pods, NDP (proxy entries on the interfaces facing their pods) for
 * pods that think the other node's pods are on their link (the bridge plugin's shared subnet).
 * DEL at removal, teardown and for a killed run's leftovers. */
#include "controller/local/localnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "controller/local/local_cni.h"
#include "controller/local/localnet_int.h"

static struct ln_cni_pod *find(struct localnet *ln, const char *ns)
{
    for (size_t i = 0; i < ln->n_cni_pods; i++)
        if (strcmp(ln->cni_pods[i].ns, ns) == 0)
            return &ln->cni_pods[i];
    return NULL;
}

size_t localnet_cni_reserve(struct localnet *ln, enum localnet_ns node, const char *ns)
{
    struct ln_cni_pod *p;

    if ((p = find(ln, ns)))
        return (size_t)(p - ln->cni_pods);
    ln->cni_pods = kp_xrealloc(ln->cni_pods, (ln->n_cni_pods + 1) * sizeof(*ln->cni_pods));
    p = &ln->cni_pods[ln->n_cni_pods];
    memset(p, 0, sizeof(*p));
    snprintf(p->ns, sizeof(p->ns), "%s", ns);
    snprintf(p->id, sizeof(p->id), "%s", ns);
    p->node = node;
    return ln->n_cni_pods++;
}

static void pod_of(const struct localnet *ln, const struct ln_cni_pod *p, struct local_cni_pod *cp)
{
    *cp = (struct local_cni_pod){
        .node_ns = ln->ns[p->node], .pod_ns = p->ns, .id = p->id, .ifname = "eth0"};
}

/* `ip -batch` text for node `on`: the routes to (add) or from (del) pod p's addresses, which
 * live on the other node, and the proxy NDP entries for them. Caller frees. */
static char *routes_text(const struct localnet *ln, const struct ln_cni_pod *p, bool add)
{
    int on = p->node == LN_NODE1 ? 1 : 0; /* the other node's index */
    const char *via4 = localnet_addr(p->node == LN_NODE1 ? LA_NODE1 : LA_NODE2, LOCALNET_IPV4);
    const char *via6 = localnet_addr(p->node == LN_NODE1 ? LA_NODE1 : LA_NODE2, LOCALNET_IPV6);
    char *text = kp_xstrdup("");

    for (size_t i = 0; i < p->r.n_ips; i++) {
        const struct cni_ip *ip = &p->r.ips[i];
        char *t;
        if (ip->iface >= 0 && !p->r.ifaces[ip->iface].in_sandbox)
            continue; /* an address of the node's side (a gateway): not the pod's */
        t = kp_xasprintf("%sroute %s %s/%d via %s dev eth0%s\n", text, add ? "replace" : "del",
                         ip->addr, ip->v6 ? 128 : 32, ip->v6 ? via6 : via4,
                         ip->v6 ? "" : " onlink");
        free(text);
        text = t;
        for (size_t k = 0; ip->v6 && k < ln->n_host_ifs[on]; k++) {
            t = kp_xasprintf("%sneigh %s proxy %s dev %s\n", text, add ? "replace" : "del",
                             ip->addr, ln->host_ifs[on][k]);
            free(text);
            text = t;
        }
    }
    return text;
}

/* Runs routes_text in the other node's namespace. */
static int publish(struct localnet *ln, const struct ln_cni_pod *p, bool add, struct kp_err *err)
{
    enum localnet_ns other = p->node == LN_NODE1 ? LN_NODE2 : LN_NODE1;
    char *text = routes_text(ln, p, add);
    char *file = kp_xasprintf("ip-%s-%s.batch", p->ns, add ? "add" : "del");
    char *path = *text ? localnet_write(ln, file, text, err) : NULL;
    int rc = *text ? -1 : 0;

    if (path) {
        /* -force: a route a removal finds already gone is no reason to stop */
        rc = add ? localnet_cmd(NULL, err, "ip", "-n", ln->ns[other], "-batch", path, NULL)
                 : localnet_cmd(NULL, err, "ip", "-force", "-n", ln->ns[other], "-batch", path,
                                NULL);
        unlink(path);
    }
    free(path);
    free(file);
    free(text);
    return rc;
}

/* ADD only (no routes): the pod's result in p. */
static int add_pod(struct localnet *ln, struct ln_cni_pod *p, struct kp_err *err)
{
    struct local_cni_pod cp;

    pod_of(ln, p, &cp);
    p->state = LN_CNI_ADDING;
    p->result = local_cni_add(ln->cni, &cp, &p->r, ln->cancel, err);
    if (!p->result) {
        p->state = LN_CNI_GONE; /* local_cni_add ran DEL */
        return -1;
    }
    p->state = LN_CNI_UP;
    return 0;
}

int localnet_cni_attach(struct localnet *ln, const char *ns, struct kp_err *err)
{
    struct ln_cni_pod *p = find(ln, ns);
    struct kp_err rm;

    if (!p)
        return kp_err_set(err, "pod %s was not reserved", ns);
    if (add_pod(ln, p, err) != 0)
        return -1;
    if (publish(ln, p, true, err) != 0) {
        kp_err_clear(&rm);
        if (localnet_cni_detach(ln, ns, &rm) != 0)
            kp_log(KP_LOG_WARN, "after failing to route pod %s: %s", ns, kp_err_msg(&rm));
        return -1;
    }
    return 0;
}

int localnet_cni_detach(struct localnet *ln, const char *ns, struct kp_err *err)
{
    struct ln_cni_pod *p = find(ln, ns);
    struct local_cni_pod cp;
    struct kp_err one;
    int rc;

    if (!p || p->state == LN_CNI_RESERVED || p->state == LN_CNI_GONE)
        return 0;
    kp_err_clear(&one);
    if (p->state == LN_CNI_UP && publish(ln, p, false, &one) != 0)
        kp_log(KP_LOG_DEBUG, "routes of pod %s: %s", ns, kp_err_msg(&one));
    pod_of(ln, p, &cp);
    rc = local_cni_del(ln->cni, &cp, p->result, err);
    p->state = LN_CNI_GONE;
    json_decref(p->result);
    p->result = NULL;
    return rc;
}

int localnet_cni_teardown(struct localnet *ln, struct kp_err *err)
{
    struct kp_err one;
    int rc = 0;

    for (size_t i = ln->n_cni_pods; i-- > 0;) {
        kp_err_clear(&one);
        if (localnet_cni_detach(ln, ln->cni_pods[i].ns, &one) != 0 && rc == 0) {
            kp_err_set(err, "%s", kp_err_msg(&one));
            rc = -1;
        }
    }
    return rc;
}

/* Remembers the node-side interfaces of p's result (dedup) for proxy NDP. */
static void note_host_ifs(struct localnet *ln, const struct ln_cni_pod *p)
{
    int n = p->node == LN_NODE1 ? 0 : 1;

    for (size_t i = 0; i < p->r.n_ifaces; i++) {
        bool known = p->r.ifaces[i].in_sandbox;
        for (size_t k = 0; k < ln->n_host_ifs[n] && !known; k++)
            known = strcmp(ln->host_ifs[n][k], p->r.ifaces[i].name) == 0;
        if (!known && ln->n_host_ifs[n] < LN_CNI_MAX_IFS)
            snprintf(ln->host_ifs[n][ln->n_host_ifs[n]++], CNI_IFNAME_LEN, "%s",
                     p->r.ifaces[i].name);
    }
}

int localnet_cni_build(struct localnet *ln, struct kp_err *err)
{
    static const enum localnet_ns pods[3] = {LN_POD_CLIENT, LN_POD_SERVER1, LN_POD_SERVER2};
    size_t idx[3];

    for (int i = 0; i < 3; i++)
        idx[i] = localnet_cni_reserve(ln, pods[i] == LN_POD_SERVER2 ? LN_NODE2 : LN_NODE1,
                                      ln->ns[pods[i]]);
    if (localnet_write_state(ln, err) != 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        struct ln_cni_pod *p = &ln->cni_pods[idx[i]];
        if (add_pod(ln, p, err) != 0)
            return -1;
        note_host_ifs(ln, p);
        for (int fam = 0; fam < 2; fam++) {
            const struct cni_ip *ip = cni_result_ip(&p->r, fam == 1);
            if (ip)
                snprintf(ln->pod_addr[i][fam], CNI_ADDR_LEN, "%s", ip->addr);
        }
    }
    for (int i = 0; i < 3; i++) /* after all: proxy NDP needs every node's interfaces */
        if (publish(ln, &ln->cni_pods[idx[i]], true, err) != 0)
            return -1;
    for (int i = 0; i < 3; i++) { /* as a runtime may: CHECK that what ADD made is in place */
        struct local_cni_pod cp;
        struct kp_err check;
        pod_of(ln, &ln->cni_pods[idx[i]], &cp);
        kp_err_clear(&check);
        /* a warning: kubelet and containerd do not CHECK, and a plugin's CHECK may fail on
         * what kperf adds beside it (routes, proxy entries) while the network works */
        if (local_cni_check(ln->cni, &cp, ln->cni_pods[idx[i]].result, &check) != 0)
            kp_log(KP_LOG_WARN, "%s", kp_err_msg(&check));
    }
    return 0;
}

void localnet_cni_state(const struct localnet *ln, FILE *f)
{
    if (!ln->cni || !ln->cni_copy)
        return;
    fprintf(f, "cni %s %s\n", ln->cni_copy, local_cni_path(ln->cni));
    for (size_t i = 0; i < ln->n_cni_pods; i++)
        fprintf(f, "cnipod %s %s\n", ln->ns[ln->cni_pods[i].node], ln->cni_pods[i].ns);
}

int localnet_cni_leftovers(const char *copy, const char *cni_path, char **pods, int n,
                           struct kp_err *err)
{
    struct local_cni *c = local_cni_load(copy, cni_path, 30000, err);
    int rc = 0;

    if (!c)
        return -1;
    for (int i = 0; i < n; i++) { /* "NODE_NS POD_NS" */
        char node[64], pod[64];
        struct local_cni_pod cp = {.node_ns = node, .pod_ns = pod, .id = pod, .ifname = "eth0"};
        struct kp_err one;
        if (sscanf(pods[i], "%63s %63s", node, pod) != 2 || !localnet_name_is_ours(node) ||
            !localnet_name_is_ours(pod))
            continue;
        kp_err_clear(&one);
        if (local_cni_del(c, &cp, NULL, &one) != 0 && rc == 0)
            rc = kp_err_set(err, "%s", kp_err_msg(&one));
    }
    local_cni_free(c);
    return rc;
}

int localnet_cni_require(const struct localnet *ln, enum localnet_family family, struct kp_err *err)
{
    int fam = family == LOCALNET_IPV6 ? 1 : 0;
    const char *name = fam ? "IPv6" : "IPv4";

    for (size_t i = 0; ln->cni && i < ln->n_cni_pods && i < 3; i++) {
        const struct ln_cni_pod *p = &ln->cni_pods[i];
        if (!cni_result_ip(&p->r, fam == 1))
            return kp_err_set(err,
                              "the CNI conflist %s gave pod %s no %s address, which --ip-family "
                              "asks for. Add an %s range to its IPAM, or measure the other family",
                              local_cni_name(ln->cni), p->ns, name, name);
        if (!p->r.default_route[fam])
            return kp_err_set(err,
                              "the CNI conflist %s gave pod %s no %s default route: other-node, "
                              "service and external paths need one. Add {\"dst\": \"%s\"} to its "
                              "IPAM routes",
                              local_cni_name(ln->cni), p->ns, name, fam ? "::/0" : "0.0.0.0/0");
    }
    return 0;
}
