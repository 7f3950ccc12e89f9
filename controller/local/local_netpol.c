/* SPDX-License-Identifier: Apache-2.0 */
/* local_netpol.c - the run's NetworkPolicy in the local cluster (local_netpol.h). */
#include "controller/local/local_netpol.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/subproc.h"
#include "controller/local/localnet.h"

#define TABLE "kperf_netpol"

/* Appends printf output to a growing string. */
static void add(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < *cap - *len)
            break;
        *cap = *cap * 2 + (size_t)(n > 0 ? n : 0);
        *buf = kp_xrealloc(*buf, *cap);
    }
    *len += (size_t)n;
}

/* "{ a, b }" of the addresses of one family (v6: those with ':'), or NULL when none. */
static char *addr_set(const char *const *addrs, size_t n, int v6)
{
    size_t len = 0, cap = 64;
    char *s = kp_xmalloc(cap);
    int k = 0;

    s[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (addrs[i] && (strchr(addrs[i], ':') != NULL) == (v6 != 0))
            add(&s, &len, &cap, "%s%s", k++ ? ", " : "{ ", addrs[i]);
    if (!k) {
        free(s);
        return NULL;
    }
    add(&s, &len, &cap, " }");
    return s;
}

char *local_netpol_text(unsigned rules, const char *const *servers, size_t n_servers,
                        const char *const *allow, size_t n_allow)
{
    size_t len = 0, cap = 1024 + (size_t)rules * 64;
    char *t = kp_xmalloc(cap);

    add(&t, &len, &cap,
        "table inet " TABLE " {\n  chain np {\n"
        "    ct state established,related accept\n"
        "    counter comment \"new flows\"\n");
    for (unsigned i = 1; i < rules; i++) { /* the rules - 1 that admit nothing of kperf's */
        if (i & 1)
            add(&t, &len, &cap, "    ip saddr 192.0.2.%u tcp dport %u accept\n", i % 256,
                10000 + i);
        else
            add(&t, &len, &cap, "    ip6 saddr 2001:db8::%x tcp dport %u accept\n", i, 10000 + i);
    }
    for (int v6 = 0; v6 < 2; v6++) { /* the one that admits kperf's clients */
        char *a = addr_set(allow, n_allow, v6);
        if (a)
            add(&t, &len, &cap, "    %s saddr %s accept\n", v6 ? "ip6" : "ip", a);
        free(a);
    }
    add(&t, &len, &cap,
        "    meta l4proto { tcp, udp } counter drop\n  }\n"
        "  chain np_fwd {\n    type filter hook forward priority 0;\n");
    for (int v6 = 0; v6 < 2; v6++) {
        char *s = addr_set(servers, n_servers, v6);
        if (s)
            add(&t, &len, &cap, "    %s daddr %s counter jump np\n", v6 ? "ip6" : "ip", s);
        free(s);
    }
    add(&t, &len, &cap, "  }\n}\n");
    return t;
}

/* Sums the "counter packets N" of the lines of the listing that hold `marker`. */
static unsigned long long packets_on(const char *listing, const char *marker)
{
    unsigned long long sum = 0, n;
    const char *line = listing;

    while (line && *line) {
        const char *eol = strchr(line, '\n');
        const char *m = strstr(line, marker), *c = strstr(line, "counter packets ");
        if (m && c && (!eol || (m < eol && c < eol)) && sscanf(c, "counter packets %llu", &n) == 1)
            sum += n;
        line = eol ? eol + 1 : NULL;
    }
    return sum;
}

/* Logs what the policy in ns saw (flows that entered it, TCP/UDP packets it dropped); nothing
 * when there is none. */
static void log_counters(struct localnet *ln, enum localnet_ns ns, const char *node)
{
    const char *argv[] = {"ip",   "netns", "exec", localnet_ns_name(ln, ns), "nft", "list", "table",
                          "inet", TABLE,   NULL};
    struct subproc_opts o = {.timeout_ms = 30000, .stdin_null = true};
    struct subproc_result r;
    struct kp_err err = {{0}};

    if (subproc_run(argv, &o, &r, &err) == 0 && r.exit_code == 0 && r.out)
        kp_log(KP_LOG_INFO,
               "netpol: %s: %llu packets to the servers, %llu new flows met the rules, %llu "
               "packets dropped",
               node, packets_on(r.out, "jump np"), packets_on(r.out, "\"new flows\""),
               packets_on(r.out, " drop"));
    subproc_result_cleanup(&r);
}

int local_netpol_apply(struct localnet *ln, unsigned rules, struct kp_err *err)
{
    static const enum localnet_addr srv[] = {LA_POD_SERVER1, LA_POD_SERVER2};
    static const enum localnet_addr ok[] = {LA_POD_CLIENT, LA_NODE1, LA_NODE2};
    static const enum localnet_ns nodes[] = {LN_NODE1, LN_NODE2};
    const char *servers[4], *allow[6];
    size_t ns = 0, na = 0;
    char *text = NULL, *path = NULL;
    int rc = 0;

    for (int f = LOCALNET_IPV4; f <= LOCALNET_IPV6; f++) {
        for (size_t i = 0; i < 2; i++)
            if ((servers[ns] = localnet_addr_of(ln, srv[i], (enum localnet_family)f)))
                ns++;
        for (size_t i = 0; i < 3; i++)
            if ((allow[na] = localnet_addr_of(ln, ok[i], (enum localnet_family)f)))
                na++;
    }
    /* one transaction per node: the table made if missing, deleted, and (rules > 0) made anew,
     * so the policy of one size replaces the other with no moment without one */
    {
        char body[64], *rs = rules > 0 ? local_netpol_text(rules, servers, ns, allow, na) : NULL;
        text = kp_xasprintf("table inet " TABLE "\ndelete table inet " TABLE "\n%s", rs ? rs : "");
        free(rs);
        snprintf(body, sizeof(body), "netpol-%u.nft", rules);
        path = localnet_write(ln, body, text, err);
        if (!path)
            rc = -1;
    }
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        log_counters(ln, nodes[i], i ? "node2" : "node1");
        rc = subproc_check((const char *const[]){"ip", "netns", "exec",
                                                 localnet_ns_name(ln, nodes[i]), "nft", "-f", path,
                                                 NULL},
                           err);
    }
    free(path);
    free(text);
    return rc;
}
