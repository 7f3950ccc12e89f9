/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the kperf-agent command: `server`, `client`, `probe`, `dns` (dns_cmd.c), `validate` and
 * `node-facts`, their flags parsed through the tables of agent_flags.h (base/flags.h). Prints
 * results (stdout) and errors (stderr); picks the exit code: 0 ok, 1 a test or the server failed, 2
 * usage. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/client.h"
#include "agent/counters.h"
#include "agent/nicinfo.h"
#include "agent/probe.h"
#include "agent/server.h"
#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/result.h"
#include "base/safefile.h"
#include "cmd/kperf-agent/agent_flags.h"
#include "cmd/kperf-agent/connwait_cmd.h"
#include "cmd/kperf-agent/dns_cmd.h"

/* --- parsing and help --------------------------------------------------------------------- */

static const char *const group_titles[] = {"Server flags", "Client flags", "Probe flags"};

/* The command `name` with one table (and --help's layout); ctx NULL: for --help only. */
static struct flags_cmd agent_cmd(const char *name, const struct flag *flags, size_t n, void *ctx)
{
    return (struct flags_cmd){
        .name = name,
        .usage = "kperf-agent " KPERF_VERSION " - the kperf measurement engine\n\n"
                 "Usage:\n  kperf-agent server [flags]\n"
                 "  kperf-agent client --server HOST[:PORT] --tests LIST [flags]\n"
                 "  kperf-agent probe --server HOST[:PORT] [flags]   outages (docs/watch.md)\n"
                 "  kperf-agent dns --name NAME --server IP [flags]   DNS lookups (dns --help)\n"
                 "  kperf-agent connect-wait --target IP [flags]   connects until one succeeds\n"
                 "  kperf-agent validate [FILE]   check a kperf.result/v1 document (stdin)\n"
                 "  kperf-agent node-facts [IFACE] NIC and TCP sysctl facts of this network "
                 "namespace (JSON)\n"
                 "  kperf-agent counters [NETNS]   the counters' cost and what moved over 20 "
                 "snapshots (JSON)\n",
        .groups = group_titles,
        .n_groups = 3,
        .footer = "\nDurations: 500ms, 10s, 2m. Sizes: 64, 1K, 1M. Rates (bit/s): 500M, 1G.\n"
                  "Client exit code: 0 all tests ok, 1 a test failed (JSON still printed with "
                  "errors[]), 2 usage.\n",
        .help_width = 24,
        .flush_left = true,
        .tables = {{flags, n, ctx}},
    };
}

#define SERVER_CMD(ctx)                                                                            \
    agent_cmd("kperf-agent server", agent_server_flags, agent_server_nflags, ctx)
#define PROBE_CMD(ctx) agent_cmd("kperf-agent probe", agent_probe_flags, agent_probe_nflags, ctx)
#define CLIENT_CMD(ctx)                                                                            \
    agent_cmd("kperf-agent client", agent_client_flags, agent_client_nflags, ctx)

/* The --help of every command: both tables. */
static void usage(FILE *f)
{
    struct flags_cmd cmd = SERVER_CMD(NULL);

    cmd.tables[1] = CLIENT_CMD(NULL).tables[0];
    cmd.tables[2] = PROBE_CMD(NULL).tables[0];
    flags_help(f, &cmd);
}

/* --- commands ----------------------------------------------------------------------------- */

static void on_ready(const char *addr, uint16_t port, void *arg)
{
    (void)port, (void)arg;
    fprintf(stderr, "kperf-agent: listening on %s (tcp+udp)\n", addr);
    fflush(stderr);
}

/* argv[0..argc) are the flags after "server"; argv[-1] is "server" itself. */
static int cmd_server(int argc, char **argv)
{
    struct server_cli c;
    struct flags_cmd cmd = SERVER_CMD(&c);
    struct kp_err err;
    int rc;

    memset(&c, 0, sizeof(c));
    server_opts_default(&c.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc != 0) {
        kp_free_secret(c.token);
        if (rc > 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level((enum kp_log_level)agent_flags_verbosity());
    rc = server_run(&c.o, on_ready, NULL, &err);
    kp_free_secret(c.token);
    if (rc != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 1;
    }
    return 0;
}

/* One table row: a sample (its index) or an aggregate ("all"). */
static void print_row(const json_t *r, const char *which)
{
    double v = 0, p50 = 0, p99 = 0, re = 0, loss = 0;
    char val[32];
    const char *dir = json_is_true(json_object_get(r, "reverse")) ? "reverse" : "forward";

    if (result_number(r, "throughput_mbps", &v) == 0)
        snprintf(val, sizeof(val), "%.1f Mbit/s", v);
    else if (result_number(r, "ops_per_sec", &v) == 0)
        snprintf(val, sizeof(val), "%.0f op/s", v);
    else
        snprintf(val, sizeof(val), "-");
    result_number(r, "latency_us.p50", &p50);
    result_number(r, "latency_us.p99", &p99);
    result_number(r, "tcp.retransmits", &re);
    result_number(r, "udp.loss_pct", &loss);
    printf("%-17s %-3s %-7s %14s %10.1f %10.1f %10.0f %10.2f\n", result_test(r), which, dir, val,
           p50, p99, re, loss);
}

static void print_table(const json_t *doc)
{
    const json_t *aggs = json_object_get(doc, "aggregates");
    const json_t *a;
    size_t i;

    printf("%-17s %-3s %-7s %14s %10s %10s %10s %10s\n", "TEST", "#", "DIR", "RESULT", "p50_us",
           "p99_us", "retrans", "loss_%");
    for (i = 0; i < result_count(doc); i++) {
        char which[16];
        snprintf(which, sizeof(which), "%d",
                 (int)json_integer_value(json_object_get(result_get(doc, i), "sample")));
        print_row(result_get(doc, i), which);
    }
    /* with several samples, the aggregate of each test too */
    json_array_foreach(aggs, i, a)
    {
        if (json_integer_value(json_object_get(a, "samples")) > 1)
            print_row(a, "all");
    }
    for (i = 0; i < result_error_count(doc); i++) {
        const json_t *e = result_error_get(doc, i);
        printf("%-17s %-3d FAILED: %s\n", result_test(e),
               (int)json_integer_value(json_object_get(e, "sample")),
               json_string_value(json_object_get(e, "error")));
    }
}

/* argv[0..argc) are the flags after "client"; argv[-1] is "client" itself. */
static int cmd_client(int argc, char **argv)
{
    struct client_cli c;
    struct flags_cmd cmd = CLIENT_CMD(&c);
    struct kp_err err;
    json_t *doc;
    unsigned failed = 0;
    int rc;

    memset(&c, 0, sizeof(c));
    client_opts_default(&c.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc == 0 && !c.have_server) {
        kp_err_set(&err, "--server is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc == 0 && c.o.ntests == 0) {
        kp_err_set(&err, "--tests is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc != 0) {
        free(c.host);
        kp_free_secret(c.token);
        if (rc > 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level((enum kp_log_level)agent_flags_verbosity());
    doc = client_run(&c.o, &failed);
    if (c.json) {
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0 ||
            fputc('\n', stdout) == EOF)
            failed++;
    } else {
        print_table(doc);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "kperf-agent: error: cannot write the result to stdout: %s\n",
                strerror(errno));
        failed++;
    }
    for (size_t i = 0; i < result_error_count(doc); i++) {
        const json_t *e = result_error_get(doc, i);
        fprintf(stderr, "kperf-agent: error: %s sample %d: %s\n", result_test(e),
                (int)json_integer_value(json_object_get(e, "sample")),
                json_string_value(json_object_get(e, "error")));
    }
    json_decref(doc);
    free(c.host);
    kp_free_secret(c.token);
    return failed ? 1 : 0;
}

static volatile sig_atomic_t probe_stop;

static void on_probe_ready(void *arg)
{
    fprintf(stderr, "kperf-agent: probing %s\n", (const char *)arg);
    fflush(stderr);
}

static int fill_doc(FILE *f, void *arg, struct kp_err *err)
{
    if (json_dumpf(arg, f, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0)
        return kp_err_set(err, "cannot write the document: %s", strerror(errno ? errno : EIO));
    return 0;
}

/* Writes doc to path whole or not at all (base/safefile.h), so a reader never sees half of it
 * and a planted link is refused. */
static int write_doc(const json_t *doc, const char *path)
{
    struct kp_err err = {{0}};

    if (safefile_write(path, fill_doc, (void *)doc, &err) != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return -1;
    }
    return 0;
}

static void on_probe_signal(int sig)
{
    (void)sig;
    probe_stop = 1;
}

/* argv[0..argc) are the flags after "probe"; argv[-1] is "probe" itself. Prints one
 * kperf.probe/v1 document at the end (docs/watch.md). */
static int cmd_probe(int argc, char **argv)
{
    struct probe_cli c;
    struct flags_cmd cmd = PROBE_CMD(&c);
    struct sigaction sa;
    char what[300];
    struct kp_err err;
    json_t *doc;
    int rc;

    memset(&c, 0, sizeof(c));
    probe_opts_default(&c.o);
    client_opts_default(&c.srv.o);
    kp_err_clear(&err);
    rc = flags_parse(&cmd, argc + 1, argv - 1, NULL, &err);
    if (rc == 0 && !c.srv.have_server) {
        kp_err_set(&err, "--server is required");
        rc = flags_hint(&cmd, &err);
    }
    if (rc != 0) {
        free(c.srv.host);
        kp_free_secret(c.srv.token);
        if (rc > 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level((enum kp_log_level)agent_flags_verbosity());
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_probe_signal; /* no SA_RESTART: the waits end at once */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
        fprintf(stderr, "kperf-agent: error: sigaction: %s\n", strerror(errno));
        return 1;
    }
    c.o.on_ready = on_probe_ready;
    snprintf(what, sizeof(what), "%s port %u", c.o.host, c.o.port);
    c.o.ready_arg = what;
    doc = probe_run(&c.o, &probe_stop, &err);
    free(c.srv.host);
    kp_free_secret(c.srv.token);
    if (!doc) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
        return 1;
    }
    if (c.output) {
        rc = write_doc(doc, c.output) == 0 ? 0 : 1;
        json_decref(doc);
        return rc;
    }
    rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) == 0 &&
                 fputc('\n', stdout) != EOF && fflush(stdout) == 0
             ? 0
             : 1;
    json_decref(doc);
    if (rc != 0)
        fprintf(stderr, "kperf-agent: error: cannot write the probe document to stdout: %s\n",
                strerror(errno));
    return rc;
}

/* `kperf-agent node-facts [IFACE]`: the NIC and TCP sysctl facts (agent/nicinfo.h) as JSON. */
static int cmd_node_facts(int argc, char **argv)
{
    json_t *facts;
    int rc;

    if (argc > 1 || (argc == 1 && argv[0][0] == '-')) {
        fprintf(stderr, "kperf-agent: error: node-facts takes one optional interface name\n");
        return 2;
    }
    facts = nicinfo_node_facts(argc == 1 ? argv[0] : NULL);
    rc = json_dumpf(facts, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ? 0 : 1;
    json_decref(facts);
    return rc;
}

/* `kperf-agent counters [NETNS]`: 20 snapshots of the counters (agent/counters.h) back to back
 * in this namespace or /run/netns/NETNS's path: {"snapshot_us" (mean), "counters" (read in one),
 * "delta" (first to last)}; for docs/report.md's cost figure and to see what a node reads. */
static int cmd_counters(int argc, char **argv)
{
    enum { ROUNDS = 20 };
    struct counters_snap *first = kp_xmalloc(sizeof(*first)), *last = kp_xmalloc(sizeof(*last));
    const char *ns = argc == 1 ? argv[0] : NULL;
    struct timespec t0, t1;
    struct kp_err err;
    int rc = 1;

    if (argc > 1 || (ns && ns[0] == '-')) {
        fprintf(stderr, "kperf-agent: error: counters takes one optional namespace path\n");
        rc = 2;
        goto out;
    }
    kp_err_clear(&err);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < ROUNDS; i++)
        if (counters_take(i ? last : first, ns, &err) != 0) {
            fprintf(stderr, "kperf-agent: error: counters: %s\n", kp_err_msg(&err));
            goto out;
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    {
        double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                    1e3 / ROUNDS;
        json_t *doc = json_pack("{s:f, s:i, s:o}", "snapshot_us", us, "counters", (int)last->n,
                                "delta", counters_delta_json(first, last));
        rc = json_dumpf(doc, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ? 0 : 1;
        json_decref(doc);
    }
out:
    free(first);
    free(last);
    return rc;
}

/* `kperf-agent validate [FILE]`: checks a kperf.result/v1 document (stdin by default). */
static int cmd_validate(int argc, char **argv)
{
    FILE *f = argc > 0 ? fopen(argv[0], "rb") : stdin;
    size_t cap = 1 << 20, len = 0;
    char *buf;
    json_t *doc = NULL;
    struct kp_err err;
    int rc = 1;

    if (!f) {
        fprintf(stderr, "kperf-agent: error: cannot open %s: %s\n", argv[0], strerror(errno));
        return 1;
    }
    buf = kp_xmalloc(cap);
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0 || len > RESULT_MAX_BYTES)
            break;
        if (len == cap)
            buf = kp_xrealloc(buf, cap *= 2);
    }
    if (f != stdin)
        fclose(f);
    kp_err_clear(&err);
    if (result_parse(buf, len, &doc, &err) != 0) {
        fprintf(stderr, "kperf-agent: error: %s\n", kp_err_msg(&err));
    } else {
        printf("ok: %zu results, %zu errors\n", result_count(doc), result_error_count(doc));
        rc = 0;
    }
    json_decref(doc);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    kp_log_set_prog("kperf-agent");
    /* The server writes through libuv, which uses write(2), not send(MSG_NOSIGNAL): a client
     * that resets mid-write must cost one connection (EPIPE), not the process. Likewise a
     * closed stdout pipe must be a write error. Here, not in agent/: the disposition is the
     * process's, so only main may choose it. */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
        fprintf(stderr, "kperf-agent: error: cannot ignore SIGPIPE: %s\n", strerror(errno));
        return 1;
    }
    kp_alloc_init_json();
    if (argc >= 2 && strcmp(argv[1], "server") == 0)
        return cmd_server(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "client") == 0)
        return cmd_client(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "probe") == 0)
        return cmd_probe(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "dns") == 0)
        return dns_cmd_run(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "connect-wait") == 0)
        return connwait_cmd_run(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "node-facts") == 0)
        return cmd_node_facts(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "counters") == 0)
        return cmd_counters(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "validate") == 0)
        return cmd_validate(argc - 2, argv + 2);
    if (argc >= 2 && (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0)) {
        printf("kperf-agent %s\n", KPERF_VERSION);
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
