/* SPDX-License-Identifier: Apache-2.0 */
/* dns_cmd.c - `kperf-agent dns` (dns_cmd.h): one flag table, one handler per flag kind. */
#include "cmd/kperf-agent/dns_cmd.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/dnsmsg.h"
#include "agent/dnsprobe.h"
#include "base/flags.h"
#include "base/kp_err.h"
#include "base/units.h"

enum { D_PORT, D_RATE, D_DURATION, D_TIMEOUT, D_PROTO, D_TYPE };

struct dns_cli {
    struct dnsprobe_opts o;
};

static int set_value(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    struct dnsprobe_opts *o = &((struct dns_cli *)ctx)->o;
    uint64_t ms;
    char *end;
    unsigned long n;

    switch (f->id) {
    case D_PORT:
    case D_RATE:
        n = strtoul(v, &end, 10);
        if (*v < '0' || *v > '9' || *end || n == 0 || n > (f->id == D_PORT ? 65535ul : 10000ul))
            return kp_err_set(err, "--%s: '%s' is not a number from 1 to %s", f->name, v,
                              f->id == D_PORT ? "65535" : "10000");
        if (f->id == D_PORT)
            o->port = (uint16_t)n;
        else
            o->rate = (unsigned)n;
        return 0;
    case D_DURATION:
    case D_TIMEOUT:
        if (units_parse_duration_ms(v, &ms, err) != 0)
            return kp_err_prefix(err, "--%s", f->name);
        if (ms == 0)
            return kp_err_set(err, "--%s: must be more than 0", f->name);
        *(f->id == D_DURATION ? &o->duration_ms : &o->timeout_ms) = ms;
        return 0;
    case D_PROTO:
        if (strcmp(v, "udp") != 0 && strcmp(v, "tcp") != 0)
            return kp_err_set(err, "--proto: '%s' is not udp or tcp", v);
        o->tcp = v[0] == 't';
        return 0;
    default: /* D_TYPE */
        if (strcmp(v, "A") != 0 && strcmp(v, "AAAA") != 0)
            return kp_err_set(err, "--type: '%s' is not A or AAAA", v);
        o->qtype = v[1] ? DNSMSG_TYPE_AAAA : DNSMSG_TYPE_A;
        return 0;
    }
}

#define VAL(nm, metavar, num, text)                                                                \
    {                                                                                              \
        .name = nm, .arg = metavar, .help = text, .fn = set_value, .id = num                       \
    }

static const struct flag dns_flags[] = {
    {.name = "name",
     .arg = "NAME",
     .help = "the name looked up, e.g. kubernetes.default.svc.cluster.local",
     .kind = FLAG_STRING,
     .offset = offsetof(struct dns_cli, o.name)},
    {.name = "server",
     .arg = "IP",
     .help = "the DNS server's address (the cluster DNS's ClusterIP)",
     .kind = FLAG_STRING,
     .offset = offsetof(struct dns_cli, o.server)},
    VAL("port", "N", D_PORT, "the DNS server's port (53)"),
    VAL("rate", "N", D_RATE, "lookups per second (10)"),
    VAL("duration", "D", D_DURATION, "send lookups for D (10s)"),
    VAL("timeout", "D", D_TIMEOUT, "a lookup unanswered after D is lost (2s)"),
    VAL("proto", "udp|tcp", D_PROTO, "udp (default) or tcp: a connection per lookup"),
    VAL("type", "A|AAAA", D_TYPE, "the record type asked for (A)"),
    {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
};

static const char *const dns_groups[] = {"Flags"};

int dns_cmd_run(int argc, char **argv)
{
    struct dns_cli c;
    struct flags_cmd cmd = {
        .name = "kperf-agent dns",
        .usage = "Usage: kperf-agent dns --name NAME --server IP [flags]\n"
                 "  lookups at a fixed rate, straight to one DNS server; prints JSON "
                 "(docs/kube-sim.md, \"Cluster DNS\")\n",
        .groups = dns_groups,
        .n_groups = 1,
        .help_width = 22,
        .flush_left = true,
        .tables = {{dns_flags, sizeof(dns_flags) / sizeof(dns_flags[0]), &c}},
    };
    struct kp_err err;
    json_t *doc;
    int rc;

    memset(&c, 0, sizeof(c));
    dnsprobe_opts_default(&c.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc == 0 && (!c.o.name || !c.o.server)) {
        kp_err_set(&err, "--name and --server are required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc > 0) {
        flags_help(stdout, &cmd);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    doc = dnsprobe_run(&c.o, &err);
    if (!doc) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 1;
    }
    rc = json_dumpf(doc, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF &&
                 fflush(stdout) == 0
             ? 0
             : 1;
    json_decref(doc);
    return rc;
}
