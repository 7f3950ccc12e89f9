/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_dns.h - pod-to-dns on Kubernetes (docs/kubernetes.md, "DNS per node"): the cluster DNS
 * (the ClusterIP of Service kube-system/kube-dns) found in prepare, one group per node, and
 * per node one Job of kperf's (its namespace, labels, image, pod template) whose two
 * containers run `kperf-agent dns` at once, over UDP and over TCP, looking up kperf's own
 * Service (kperf-svc-a.<namespace>.svc.cluster.local; A, or AAAA for an IPv6 group). Their two
 * documents become one kperf.result/v1 document (base/dnsresult.h): rows UDP_RR and TCP_CRR of
 * pod-to-dns node:<name>. The first group's run starts the Jobs of up to K8S_DNS_PARALLEL
 * nodes at once; later groups collect theirs. Sits beside k8s_client.c (calls what sits below it,
 * nothing above). */
#ifndef KPERF_K8S_K8S_DNS_H
#define KPERF_K8S_K8S_DNS_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/plan.h"

struct k8s_backend;
struct k8s_deploy;

#define K8S_DNS_UDP_RATE      20   /* lookups per second over UDP */
#define K8S_DNS_TCP_RATE      5    /* and over TCP (a connection each: the server forks, ...) */
#define K8S_DNS_TIMEOUT_MS    3000 /* a lookup unanswered after this is lost */
#define K8S_DNS_PARALLEL      8    /* nodes measured at once (their Jobs started together) */
#define K8S_DNS_SERVICE_NS    "kube-system"
#define K8S_DNS_SERVICE       "kube-dns"
#define K8S_DNS_TCP_CONTAINER "dns-tcp" /* the first container is the client's ("client") */

/* When the plan has pod-to-dns: finds the cluster DNS's ClusterIPs (b->dns_ip) and expands the
 * group to one per eligible node; without the Service (or the right to read it) skips the
 * scenario with why. Call once nodes and families are chosen. */
void k8s_dns_plan(struct k8s_backend *b, struct plan *plan);

/* The Job of a pod-to-dns group for spec, run step `step`, on the node whose hostname label is
 * client_host, asking server (the cluster DNS) for name (type AAAA when aaaa). New reference;
 * *name_out: its name (caller frees). Pure. */
json_t *k8s_dns_make_job(const struct k8s_deploy *d, const struct run_spec *spec, unsigned step,
                         const char *client_host, const char *server, const char *name, int aaaa,
                         char **name_out);

/* Runs the group of spec on its node: creates the Job, waits for its pod, reads both
 * documents, deletes the Job (unless --keep). 0 with *doc (kperf.result/v1, new reference), or
 * -1 with err. */
KP_MUST_CHECK int k8s_dns_run(struct k8s_backend *b, const struct run_spec *spec, json_t **doc,
                              struct kp_err *err);

#endif
