/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_watch.c - 'kperf watch': probes every path of the matrix at a low rate while something
 * happens (a command given after `--`, or just for --duration), then reports per path the
 * probes lost, outages, the longest gap, resets and latency (docs/watch.md). Gets the backend
 * from backend_pick.h (--local: the local cluster; else the cluster of the kubeconfig, deployed
 * as `kperf run` does) and drives it through its ops only: starts one `kperf-agent probe` per
 * path (watch_probes.h) and, with --readiness-every, its readiness pods, stops them and
 * collects their documents into one kperf.watch/v1 document.
 * Exit codes: 0 no outage above --max-outage, 3 one was, 1 error, 2 usage, 130/143 signal
 * (the partial report is still printed). The cluster is removed in every case. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/portable.h"
#include "base/safefile.h"
#include "base/subproc.h"
#include "base/units.h"
#include "cmd/kperf/backend_pick.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/run_flags.h"
#include "cmd/kperf/watch_probes.h"
#include "cmd/kperf/watch_status.h"
#include "controller/backend.h"
#include "controller/plan.h"
#include "controller/report/urlcred.h"
#include "controller/report/watch_readiness.h"
#include "controller/report/watch_render.h"
#include "controller/run_options.h"

#define JOB_DEADLINE_S 86400 /* a cluster probe Job's limit when the watch has no --duration */

struct watch_flags {
    uint64_t settle_ms;
    uint64_t max_outage_ms;
    unsigned rate;
    uint64_t readiness_every_ms; /* 0 = no readiness pods */
};

static int set_settle(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    (void)f;
    return units_parse_duration_ms(v, &((struct watch_flags *)ctx)->settle_ms, err);
}

static int set_max_outage(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    (void)f;
    return units_parse_duration_ms(v, &((struct watch_flags *)ctx)->max_outage_ms, err);
}

static int set_readiness_every(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    uint64_t ms;
    (void)f;

    if (units_parse_duration_ms(v, &ms, err) != 0)
        return kp_err_prefix(err, "--readiness-every");
    if (ms != 0 && ms < 1000)
        return kp_err_set(err, "--readiness-every: '%s' is under 1s (0 turns it off)", v);
    ((struct watch_flags *)ctx)->readiness_every_ms = ms;
    return 0;
}

static int set_rate(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    char *end;
    unsigned long n;
    (void)f;

    errno = 0;
    n = strtoul(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n == 0 || n > 1000)
        return kp_err_set(err, "--rate: '%s' is not a number of probes per second in 1..1000", v);
    ((struct watch_flags *)ctx)->rate = (unsigned)n;
    return 0;
}

static const struct flag own_flags[] = {
    {.name = "settle",
     .arg = "DUR",
     .help = "keep probing this long after the command ends (default 5s)",
     .fn = set_settle},
    {.name = "max-outage",
     .arg = "DUR",
     .help = "exit 3 when an outage lasts longer (default 1s)",
     .fn = set_max_outage},
    {.name = "rate",
     .arg = "N",
     .help = "UDP and TCP request/response probes per second per path (default 100)",
     .fn = set_rate},
    {.name = "readiness-every",
     .arg = "DUR",
     .help = "a new pod per node every DUR, timed until its network answers (cluster only; "
             "default 0: off)",
     .fn = set_readiness_every},
};

const struct flag *cmd_watch_flags(size_t *n)
{
    *n = sizeof(own_flags) / sizeof(own_flags[0]);
    return own_flags;
}

static const char usage_text[] =
    "kperf watch - what a disruption does to live pod traffic\n\n"
    "Usage:\n"
    "  kperf watch [flags] [-- COMMAND [ARGS...]]          a Kubernetes cluster\n"
    "  kperf watch --local [flags] [-- COMMAND [ARGS...]]  the local cluster\n\n"
    "Probes every path (default: all scenarios, both placements) with UDP and TCP\n"
    "request/response at --rate per second and a fresh TCP connect every 100 ms, until\n"
    "--duration passes (default 10s without a command; no limit with one), Ctrl-C, or\n"
    "COMMAND finishes plus --settle. On a cluster, COMMAND sees KPERF_RUN_ID and\n"
    "KPERF_NAMESPACE; with --local, KPERF_LOCAL_RUN_ID and the namespaces\n"
    "KPERF_LOCAL_NS_UNDERLAY, _NODE1, _NODE2, _EXTERNAL (docs/watch.md).\n"
    "Exit codes: 0 ok, 3 an outage longer than --max-outage, 1 error, 2 usage.\n";

static const char *const watch_groups[] = {"Watch flags", "Run flags (scenarios, placements, "
                                                          "output, cluster, local cluster)"};

/* ---- signals ---- */

static struct backend *volatile sig_backend;
static volatile sig_atomic_t sig_first;

static void on_signal(int sig)
{
    struct backend *b = sig_backend;

    if (!sig_first)
        sig_first = sig;
    if (b)
        b->ops->interrupt(b);
}

static void signals_install(struct backend *b)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    sig_backend = b;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* ---- helpers ---- */

static bool flag_given(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);

    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
            return true;
    return false;
}

/* Starts argv with env added; same process group, so a terminal's Ctrl-C reaches it too. Its
 * stdout goes to our stderr: our stdout carries the report only (-o json > file). */
static pid_t start_command(char **argv, char **env, struct kp_err *err)
{
    pid_t pid = fork();

    if (pid < 0)
        return kp_err_set(err, "fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        kp_die_with_parent(SIGTERM);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            _exit(127);
        for (size_t i = 0; env[i]; i++)
            putenv(env[i]);
        execvp(argv[0], argv);
        fprintf(stderr, "kperf: error: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the command ---- */

struct watch {
    struct run_options ro;
    struct watch_flags wf;
    char **cmd;           /* after `--`; NULL = none */
    uint64_t duration_ms; /* 0 = none */
    struct backend *b;
    struct plan *plan;
    struct watch_probes wp;
    struct backend_ready *ready; /* --readiness-every */
    json_t *command;             /* {"argv": [...], "exit_code": N|null} */
};

static int start_probes(struct watch *w, struct kp_err *err)
{
    struct watch_probe_opts o = {.rate = w->wf.rate,
                                 .timeout_ms = w->ro.timeout_ms,
                                 .deadline_s = JOB_DEADLINE_S,
                                 .signal = &sig_first};

    if (w->duration_ms) /* the Job ends on its own if kperf cannot stop it */
        o.deadline_s = (w->duration_ms + 2 * w->ro.timeout_ms) / 1000 + 60;
    w->wp.b = w->b;
    return watch_probes_start(&w->wp, w->plan, &o, err);
}

/* ---- the live status (a TTY only): one line per path, redrawn ---- */

static bool stderr_is_tty(void)
{
    const char *term = getenv("TERM");
    return isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

static void draw_status(const struct watch *w, bool redraw, double elapsed_s)
{
    char st[160];

    if (redraw)
        fprintf(stderr, "\033[%zuA", w->wp.n + 1);
    fprintf(stderr, "\r\033[Kwatching for %.0f s\n", elapsed_s);
    for (size_t i = 0; i < w->wp.n; i++) {
        watch_status_phrase(w->wp.paths[i].log, st, sizeof(st));
        fprintf(stderr, "\r\033[K  %-26s %s\n", w->wp.paths[i].name, st);
    }
    fflush(stderr);
}

/* Runs until the duration, a signal, or the command's end plus settle. */
static int watch_loop(struct watch *w, struct kp_err *err)
{
    uint64_t t0 = clock_now_ms(), done_at = 0, next_draw = t0;
    bool tty = stderr_is_tty() && w->ro.verbose == 0, drawn = false;
    pid_t cmd_pid = 0;
    int status;

    if (w->cmd) {
        char **env = watch_probes_env(&w->wp);
        json_t *argv = json_array();
        for (size_t i = 0; w->cmd[i]; i++) { /* no URL's user:password@ in watch.json */
            char *arg = urlcred_redact(w->cmd[i]);

            json_array_append_new(argv, json_string(arg));
            free(arg);
        }
        w->command = json_pack("{s:o, s:n}", "argv", argv, "exit_code");
        cmd_pid = start_command(w->cmd, env, err);
        /* the child has its copy; ours are no longer needed */
        for (size_t i = 0; env[i]; i++)
            free(env[i]);
        free(env);
        if (cmd_pid < 0)
            return -1;
    }
    while (!sig_first) {
        uint64_t now = clock_now_ms();
        if (cmd_pid > 0 && waitpid(cmd_pid, &status, WNOHANG) == cmd_pid) {
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            json_object_set_new(w->command, "exit_code", json_integer(code));
            json_object_set_new(w->command, "end_s", json_real((double)(now - t0) / 1000.0));
            if (code != 0)
                kp_log(KP_LOG_WARN, "the command exited with status %d", code);
            cmd_pid = 0;
            done_at = now;
        }
        if (done_at && now >= done_at + w->wf.settle_ms)
            break;
        if (w->duration_ms && now >= t0 + w->duration_ms)
            break;
        if (tty && now >= next_draw) {
            draw_status(w, drawn, (double)(now - t0) / 1000.0);
            drawn = true;
            next_draw = now + 500;
        }
        for (size_t i = 0; i < w->wp.n; i++)
            (void)watch_probes_alive(&w->wp, i);
        clock_sleep_ms(50);
    }
    if (cmd_pid > 0) { /* still running at the end: stop it */
        kp_log(KP_LOG_WARN, "stopping the command (still running at the end of the watch)");
        kill(cmd_pid, SIGTERM);
        for (int i = 0; i < 40 && waitpid(cmd_pid, &status, WNOHANG) == 0; i++)
            clock_sleep_ms(50);
        if (waitpid(cmd_pid, &status, WNOHANG) == 0) {
            kill(cmd_pid, SIGKILL);
            (void)waitpid(cmd_pid, &status, 0);
        }
    }
    return 0;
}

static json_t *collect(struct watch *w, double start_unix, double end_unix)
{
    json_t *paths = json_array();
    json_t *facts = w->b->ops->describe(w->b);
    json_t *run_id = json_incref(json_object_get(facts, "run_id"));

    json_decref(facts);
    for (size_t i = 0; i < w->wp.n; i++) {
        const struct watch_path *p = &w->wp.paths[i];
        char why[512] = "";
        json_t *doc = watch_probes_doc(&w->wp, p, why, sizeof(why));
        const char *cn = watch_probes_node(&w->wp, p, false);
        const char *sn = watch_probes_node(&w->wp, p, true);
        json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o}", "path", p->name, "scenario",
                              plan_scenario_name(p->g->scenario), "placement",
                              p->g->placement_label, "probe", doc ? doc : json_null(), "error",
                              doc ? json_null() : json_string(why));
        if (cn) /* a cluster's nodes: which CNI restarts a path goes through */
            json_object_set_new(o, "client_node", json_string(cn));
        if (cn)
            json_object_set_new(o, "server_node", sn ? json_string(sn) : json_null());
        json_array_append_new(paths, o);
    }
    return json_pack("{s:s, s:o, s:f, s:f, s:f, s:I, s:o, s:o}", "schema", WATCH_SCHEMA, "run_id",
                     run_id ? run_id : json_null(), "start_unix_s", start_unix, "duration_s",
                     end_unix - start_unix, "max_outage_s", (double)w->wf.max_outage_ms / 1000.0,
                     "rate_per_s", (json_int_t)w->wf.rate, "command",
                     w->command ? w->command : json_null(), "paths", paths);
}

struct watch_file {
    const json_t *doc;
    enum watch_format fmt;
};

static int fill_watch(FILE *f, void *arg, struct kp_err *err)
{
    const struct watch_file *wf = arg;

    (void)err; /* a write error shows at the commit's flush */
    watch_render(wf->doc, wf->fmt, f);
    return 0;
}

/* --output-dir: watch.json, watch.md and watch.html, each whole or not at all (base/safefile.h).
 * Returns 0 or -1 with err. */
static int write_dir(const json_t *doc, const char *dir, struct kp_err *err)
{
    static const struct {
        const char *name;
        enum watch_format fmt;
    } files[] = {
        {"watch.json", WATCH_JSON}, {"watch.md", WATCH_MARKDOWN}, {"watch.html", WATCH_HTML}};

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return kp_err_set(err, "cannot create %s: %s", dir, strerror(errno));
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char *path = kp_xasprintf("%s/%s", dir, files[i].name);
        struct watch_file wf = {doc, files[i].fmt};
        int rc = safefile_write(path, fill_watch, &wf, err);
        free(path);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int parse(struct watch *w, int argc, char **argv, struct kp_err *err)
{
    struct flags_cmd cmd = {
        .name = "kperf watch",
        .usage = usage_text,
        .groups = watch_groups,
        .n_groups = 1,
        .footer = "\nEvery `kperf run` flag applies as well (kperf run --help): --scenarios,\n"
                  "--same-node, --other-node, --duration, --timeout, -o, -v, --mtu...\n",
        .help_width = 21,
        .tables = {{own_flags, sizeof(own_flags) / sizeof(own_flags[0]), &w->wf}},
    };
    int nflags = argc, rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            nflags = i;
            if (i + 1 < argc)
                w->cmd = argv + i + 1;
            break;
        }
    }
    rc = run_flags_parse_as(&cmd, &w->ro, nflags, argv, err);
    if (rc == 1) {
        flags_help(stdout, &cmd);
        return 1;
    }
    if (rc != 0)
        return -1;
    if (w->ro.output == RUN_OUTPUT_CSV) {
        kp_err_set(err, "--output: kperf watch prints table, markdown or json");
        return flags_hint(&cmd, err);
    }
    if (w->ro.n_services_sizes > 1) { /* sizes are rows of kperf run (plan.h) */
        kp_err_set(err, "--services: kperf watch takes one size (several: kperf run)");
        return flags_hint(&cmd, err);
    }
    if (!flag_given(nflags, argv, "--scenarios"))
        w->ro.scenarios = SCENARIO_ALL_MASK;
    /* without a command the watch ends after --duration (default 10s); with one, only when
     * --duration is given */
    if (!w->cmd || flag_given(nflags, argv, "--duration"))
        w->duration_ms = w->ro.duration_ms;
    if (w->ro.local && w->wf.readiness_every_ms) {
        kp_err_set(err, "--readiness-every: a Kubernetes cluster only (not with --local)");
        return flags_hint(&cmd, err);
    }
    return 0;
}

static void free_watch(struct watch *w)
{
    watch_probes_free(&w->wp);
    plan_free(w->plan);
    if (w->b)
        w->b->ops->destroy(w->b);
    run_options_cleanup(&w->ro);
}

int cmd_watch(int argc, char **argv)
{
    struct watch w;
    struct plan_opts po;
    struct kp_err err = {{0}}, cerr = {{0}};
    json_t *doc = NULL, *ready;
    double start_unix = 0;
    int rc, code = 1;

    memset(&w, 0, sizeof(w));
    w.wf = (struct watch_flags){.settle_ms = 5000, .max_outage_ms = 1000, .rate = 100};
    run_options_init(&w.ro);
    rc = parse(&w, argc, argv, &err);
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        run_options_cleanup(&w.ro);
        return rc < 0 ? 2 : 0;
    }
    kp_log_set_level(w.ro.verbose >= 2   ? KP_LOG_DEBUG
                     : w.ro.verbose == 1 ? KP_LOG_INFO
                                         : KP_LOG_WARN);
    w.b = backend_pick(&w.ro, &err);
    if (!w.b) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        free_watch(&w);
        return 1;
    }
    plan_opts_from_run_options(&w.ro, &po);
    w.plan = plan_new(&po);
    signals_install(w.b);
    kp_log(KP_LOG_INFO, w.ro.local ? "building the local cluster" : "deploying the servers");
    rc = w.b->ops->prepare(w.b, w.plan, &err);
    if (rc == 0)
        rc = start_probes(&w, &err);
    if (rc == 0) {
        fprintf(stderr, "kperf: watching %zu paths%s\n", w.wp.n,
                w.cmd ? " while the command runs" : "");
        start_unix = unix_now();
        if (w.wf.readiness_every_ms && !w.b->ops->ready_start)
            rc = kp_err_set(&err, "--readiness-every: the %s backend makes no readiness pods",
                            w.b->ops->name);
        else if (w.wf.readiness_every_ms)
            rc = w.b->ops->ready_start(w.b, w.wf.readiness_every_ms, &w.ready, &err);
        if (rc == 0)
            rc = watch_loop(&w, &err);
    }
    /* before the probes: the readiness pods use the main API client */
    ready = w.ready ? w.b->ops->ready_stop(w.ready) : NULL;
    w.ready = NULL;
    watch_probes_stop(&w.wp);
    if (rc == 0)
        doc = collect(&w, start_unix, unix_now());
    else if (!sig_first)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    if (doc && ready)
        json_object_set_new(doc, "readiness",
                            watch_readiness_build(ready, start_unix,
                                                  (double)w.wf.readiness_every_ms / 1000.0,
                                                  (double)w.ro.timeout_ms / 1000.0));
    json_decref(ready);
    if (w.b->ops->cleanup(w.b, &cerr) != 0)
        fprintf(stderr, "kperf: error: cleanup: %s\n", kp_err_msg(&cerr));
    sig_backend = NULL;
    if (doc) {
        watch_render(doc,
                     (enum watch_format)(w.ro.output == RUN_OUTPUT_JSON       ? WATCH_JSON
                                         : w.ro.output == RUN_OUTPUT_MARKDOWN ? WATCH_MARKDOWN
                                                                              : WATCH_TABLE),
                     stdout);
        fflush(stdout);
        code = watch_longest_outage(doc) * 1000.0 > (double)w.wf.max_outage_ms ? 3 : 0;
        if (w.ro.output_dir && write_dir(doc, w.ro.output_dir, &err) != 0) {
            fprintf(stderr, "kperf: error: %s. Pass a writable --output-dir.\n", kp_err_msg(&err));
            code = 1;
        } else if (w.ro.output_dir) {
            kp_log(KP_LOG_INFO, "written to %s/watch.{json,md,html}", w.ro.output_dir);
        }
        for (size_t i = 0; i < json_array_size(json_object_get(doc, "paths")); i++)
            if (json_is_string(
                    json_object_get(json_array_get(json_object_get(doc, "paths"), i), "error")))
                code = code ? code : 1;
    }
    if (sig_first)
        code = 128 + sig_first;
    json_decref(doc);
    free_watch(&w);
    return code;
}
