/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the kperf command: a table of subcommands and the global flags, nothing else. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "cmd/kperf/commands.h"
#include "controller/run_options.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", cmd_run, "measure pod networking (in a cluster, or --local with network namespaces)"},
    {"compare", cmd_compare, "compare two reports and flag regressions beyond noise"},
    {"history", cmd_history, "keep reports in a history directory: add, list"},
    {"report", cmd_report, "re-render a saved report.json as table, markdown, csv or html"},
    {"cleanup", cmd_cleanup, "remove everything earlier kperf runs left in the cluster"},
    {"manifests", cmd_manifests, "print the objects a run would create, as YAML"},
    {"completion", cmd_completion, "print a shell completion script: bash, zsh or fish"},
    {"watch", cmd_watch, "probe every path while something happens; report outages"},
};

static void usage(FILE *f)
{
    fprintf(f, "kperf %s - Kubernetes pod-network performance, measured properly\n\n",
            KPERF_VERSION);
    flags_fputs(f, "Usage: kperf <command> [flags]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n\n", "version", "print the version and the default agent image");
    flags_fputs(f, "Run 'kperf <command> --help' for a command's flags.\n");
}

/* Installed as kubectl-kperf (a link to kperf), kubectl runs it for `kubectl kperf ...`
 * (plugin discovery), with argv[0] the path of the link: usage and hints then show the
 * command lines the user types, "kubectl kperf run ...". */
static void set_invocation(const char *argv0)
{
    const char *base = argv0 ? strrchr(argv0, '/') : NULL;

    base = base ? base + 1 : argv0;
    if (base && strcmp(base, "kubectl-kperf") == 0)
        flags_set_invocation("kperf", "kubectl kperf");
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    kp_log_set_prog("kperf");
    set_invocation(argv[0]);
    kp_alloc_init_json();
    /* The API client sets CURLOPT_NOSIGNAL, so libcurl leaves SIGPIPE to us (TLS writes through
     * OpenSSL can raise it), and a closed pipe on stdout or to a child must be a write error,
     * not death. Here, not in a library: the disposition is the process's. */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
        fprintf(stderr, "kperf: error: cannot ignore SIGPIPE: %s\n", strerror(errno));
        return 1;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        fprintf(stderr, "kperf: error: cannot initialise libcurl\n");
        return 1;
    }
    return dispatch(argc, argv);
}

struct global_flags {
    bool version;
};

/* The flags before the command (-h/--help is every parser's). */
static const struct flag global_flags[] = {
    {.name = "version", .kind = FLAG_BOOL, .offset = offsetof(struct global_flags, version)},
};

/* Parses the global flags, then runs the command named by the first argument. Returns the exit
 * code. */
static int dispatch(int argc, char **argv)
{
    struct global_flags g = {0};
    struct flags_cmd cmd = {
        .name = "kperf",
        .stop_at_arg = true,
        .tables = {{global_flags, sizeof(global_flags) / sizeof(global_flags[0]), &g}},
    };
    struct kp_err err = {{0}};
    int next;
    int rc = flags_parse(&cmd, argc, argv, &next, &err);

    if (rc < 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    if (rc == 1 || (next < argc && strcmp(argv[next], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (g.version || (next < argc && strcmp(argv[next], "version") == 0)) {
        /* one line: scripts read the second word as the version */
        printf("kperf %s (default agent image %s)\n", KPERF_VERSION, run_options_default_image());
        return 0;
    }
    if (next == argc) {
        usage(stderr);
        return 2;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[next], commands[i].name) == 0)
            return commands[i].fn(argc - next, argv + next);
    }
    fprintf(stderr, "kperf: error: unknown command '%s'. ", argv[next]);
    flags_fputs(stderr, "Run 'kperf --help' for the list.\n");
    return 2;
}
