/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_watch.c - 'kperf watch': probes every path of the matrix at a low rate while something
 * happens (a command given after `--`, or just for --duration), then reports per path the
 * probes lost, outages, the longest gap, resets and latency (docs/watch.md). --local only for
 * now: builds the local cluster (backend_local), starts one `kperf-agent probe` per path in
 * the path's client namespace, stops them with SIGTERM and collects their kperf.probe/v1
 * documents into one kperf.watch/v1 document.
 * Exit codes: 0 no outage above --max-outage, 3 one was, 1 error, 2 usage, 130/143 signal
 * (the partial report is still printed). The cluster is removed in every case. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/flags.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/subproc.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/run_flags.h"
#include "cmd/kperf/watch_status.h"
#include "controller/backend.h"
#include "controller/local/backend_local.h"
#include "controller/plan.h"
#include "controller/report/watch_render.h"
#include "controller/run_options.h"

#define MAX_PATHS   16
#define PROBE_GRACE 5000 /* ms a probe may take to write its document after SIGTERM */

struct watch_flags {
    uint64_t settle_ms;
    uint64_t max_outage_ms;
    unsigned rate;
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
};

const struct flag *cmd_watch_flags(size_t *n)
{
    *n = sizeof(own_flags) / sizeof(own_flags[0]);
    return own_flags;
}

static const char usage_text[] =
    "kperf watch - what a disruption does to live pod traffic\n\n"
    "Usage:\n"
    "  kperf watch --local [flags] [-- COMMAND [ARGS...]]\n\n"
    "Probes every path (default: all scenarios, both placements) with UDP and TCP\n"
    "request/response at --rate per second and a fresh TCP connect every 100 ms, until\n"
    "--duration passes (default 10s without a command; no limit with one), Ctrl-C, or\n"
    "COMMAND finishes plus --settle. COMMAND sees KPERF_LOCAL_RUN_ID and the namespaces\n"
    "KPERF_LOCAL_NS_UNDERLAY, _NODE1, _NODE2, _EXTERNAL (docs/watch.md).\n"
    "Exit codes: 0 ok, 3 an outage longer than --max-outage, 1 error, 2 usage.\n";

static const char *const watch_groups[] = {"Watch flags", "Run flags (scenarios, placements, "
                                                          "output, local cluster)"};

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

struct path {
    const struct plan_group *g;
    char *name; /* "pod-to-pod/same-node" */
    char *out, *log;
    pid_t pid;
    bool ready;
};

/* The first line of path containing mark (or the last line when mark is NULL) into buf. */
static bool log_line(const char *path, const char *mark, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    bool found = false;

    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!mark || strstr(line, mark)) {
            size_t n = strlen(line) < len ? strlen(line) : len - 1; /* truncated to fit buf */
            memcpy(buf, line, n);
            buf[n] = '\0';
            found = true;
            if (mark)
                break;
        }
    }
    fclose(f);
    return found;
}

/* Waits until every probe printed its "probing" line. */
static int wait_probes(struct path *p, size_t n, uint64_t timeout_ms, struct kp_err *err)
{
    uint64_t end = clock_now_ms() + timeout_ms;
    char line[512];

    for (;;) {
        bool all = true;
        for (size_t i = 0; i < n; i++) {
            if (p[i].ready)
                continue;
            p[i].ready = log_line(p[i].log, "kperf-agent: probing", line, sizeof(line));
            if (p[i].ready)
                continue;
            if (!subproc_alive(p[i].pid)) {
                p[i].pid = 0;
                if (!log_line(p[i].log, NULL, line, sizeof(line)))
                    snprintf(line, sizeof(line), "no output");
                return kp_err_set(err, "probe of %s exited at start: %s", p[i].name, line);
            }
            all = false;
        }
        if (all)
            return 0;
        if (sig_first)
            return kp_err_set(err, "interrupted");
        if (clock_now_ms() >= end)
            return kp_err_set(err, "probes not running after %llums",
                              (unsigned long long)timeout_ms);
        clock_sleep_ms(20);
    }
}

/* Starts argv with env added; same process group, so a terminal's Ctrl-C reaches it too. Its
 * stdout goes to our stderr: our stdout carries the report only (-o json > file). */
static pid_t start_command(char **argv, char **env, struct kp_err *err)
{
    pid_t pid = fork();

    if (pid < 0)
        return kp_err_set(err, "fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
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

static json_t *load_probe(const struct path *p, char *why, size_t len)
{
    json_error_t jerr;
    json_t *doc = json_load_file(p->out, 0, &jerr);

    if (!doc) {
        char line[400] = "";
        if (!log_line(p->log, NULL, line, sizeof(line)))
            snprintf(line, sizeof(line), "%s", jerr.text);
        snprintf(why, len, "no probe document (%s)", line);
    }
    return doc;
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
    struct path paths[MAX_PATHS];
    size_t n_paths;
    json_t *command; /* {"argv": [...], "exit_code": N|null} */
};

static int start_probes(struct watch *w, struct kp_err *err)
{
    char rate[16];
    const char *args[] = {"--rate", rate, "--status", "500ms", "--output", NULL, NULL};

    snprintf(rate, sizeof(rate), "%u", w->wf.rate);
    for (size_t i = 0; i < plan_group_count(w->plan) && w->n_paths < MAX_PATHS; i++) {
        const struct plan_group *g = plan_group_get(w->plan, i);
        struct path *p = &w->paths[w->n_paths];
        if (g->skipped || g->reverse || g->placement == PLACEMENT_NODE)
            continue;
        p->g = g;
        p->name = kp_xasprintf("%s/%s", plan_scenario_name(g->scenario), g->placement_label);
        p->out = kp_xasprintf("%s/probe-%zu.json", backend_local_run_dir(w->b), w->n_paths);
        p->log = kp_xasprintf("%s/probe-%zu.log", backend_local_run_dir(w->b), w->n_paths);
        args[5] = p->out;
        w->n_paths++;
        if (backend_local_spawn_probe(w->b, g, args, p->log, &p->pid, err) != 0)
            return kp_err_prefix(err, "probe of %s", p->name);
    }
    if (w->n_paths == 0)
        return kp_err_set(err, "no path to probe (every scenario was skipped)");
    return wait_probes(w->paths, w->n_paths, w->ro.timeout_ms, err);
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
        fprintf(stderr, "\033[%zuA", w->n_paths + 1);
    fprintf(stderr, "\r\033[Kwatching for %.0f s\n", elapsed_s);
    for (size_t i = 0; i < w->n_paths; i++) {
        watch_status_phrase(w->paths[i].log, st, sizeof(st));
        fprintf(stderr, "\r\033[K  %-26s %s\n", w->paths[i].name, st);
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
        char **env = backend_local_env(w->b);
        json_t *argv = json_array();
        for (size_t i = 0; w->cmd[i]; i++)
            json_array_append_new(argv, json_string(w->cmd[i]));
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
        for (size_t i = 0; i < w->n_paths; i++) {
            if (w->paths[i].pid && !subproc_alive(w->paths[i].pid)) {
                w->paths[i].pid = 0;
                kp_log(KP_LOG_WARN, "the probe of %s ended early", w->paths[i].name);
            }
        }
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

/* SIGTERM to every probe at once, then each is waited for (its document comes at the end). */
static void stop_probes(struct watch *w)
{
    for (size_t i = 0; i < w->n_paths; i++)
        if (w->paths[i].pid > 0)
            kill(w->paths[i].pid, SIGTERM);
    for (size_t i = 0; i < w->n_paths; i++) {
        if (w->paths[i].pid > 0)
            (void)subproc_stop(w->paths[i].pid, PROBE_GRACE);
        w->paths[i].pid = 0;
    }
}

static json_t *collect(struct watch *w, double start_unix, double end_unix)
{
    json_t *paths = json_array();
    json_t *facts = w->b->ops->describe(w->b);
    json_t *run_id = json_incref(json_object_get(facts, "run_id"));

    json_decref(facts);
    for (size_t i = 0; i < w->n_paths; i++) {
        const struct path *p = &w->paths[i];
        char why[512] = "";
        json_t *doc = load_probe(p, why, sizeof(why));
        json_array_append_new(paths,
                              json_pack("{s:s, s:s, s:s, s:o, s:o}", "path", p->name, "scenario",
                                        plan_scenario_name(p->g->scenario), "placement",
                                        p->g->placement_label, "probe", doc ? doc : json_null(),
                                        "error", doc ? json_null() : json_string(why)));
    }
    return json_pack("{s:s, s:o, s:f, s:f, s:f, s:I, s:o, s:o}", "schema", WATCH_SCHEMA, "run_id",
                     run_id ? run_id : json_null(), "start_unix_s", start_unix, "duration_s",
                     end_unix - start_unix, "max_outage_s", (double)w->wf.max_outage_ms / 1000.0,
                     "rate_per_s", (json_int_t)w->wf.rate, "command",
                     w->command ? w->command : json_null(), "paths", paths);
}

/* --output-dir: watch.json, watch.md and watch.html. Returns 0 or -1 with err. */
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
        FILE *f = fopen(path, "w");
        int bad;
        if (!f) {
            kp_err_set(err, "cannot write %s: %s", path, strerror(errno));
            free(path);
            return -1;
        }
        watch_render(doc, files[i].fmt, f);
        bad = ferror(f) | fclose(f);
        if (bad) {
            kp_err_set(err, "cannot write %s", path);
            free(path);
            return -1;
        }
        free(path);
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
    if (!w->ro.local) {
        kp_err_set(err, "kperf watch needs --local for now (Kubernetes clusters: not yet)");
        return flags_hint(&cmd, err);
    }
    if (w->ro.output == RUN_OUTPUT_CSV) {
        kp_err_set(err, "--output: kperf watch prints table, markdown or json");
        return flags_hint(&cmd, err);
    }
    if (!flag_given(nflags, argv, "--scenarios"))
        w->ro.scenarios = SCENARIO_ALL_MASK;
    /* without a command the watch ends after --duration (default 10s); with one, only when
     * --duration is given */
    if (!w->cmd || flag_given(nflags, argv, "--duration"))
        w->duration_ms = w->ro.duration_ms;
    return 0;
}

static void free_watch(struct watch *w)
{
    for (size_t i = 0; i < w->n_paths; i++) {
        free(w->paths[i].name);
        free(w->paths[i].out);
        free(w->paths[i].log);
    }
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
    json_t *doc = NULL;
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
    w.b = backend_local_new(&w.ro, &err);
    if (!w.b) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        free_watch(&w);
        return 1;
    }
    plan_opts_from_run_options(&w.ro, &po);
    w.plan = plan_new(&po);
    signals_install(w.b);
    kp_log(KP_LOG_INFO, "building the local cluster");
    rc = w.b->ops->prepare(w.b, w.plan, &err);
    if (rc == 0)
        rc = start_probes(&w, &err);
    if (rc == 0) {
        fprintf(stderr, "kperf: watching %zu paths%s\n", w.n_paths,
                w.cmd ? " while the command runs" : "");
        start_unix = unix_now();
        rc = watch_loop(&w, &err);
    }
    stop_probes(&w);
    if (rc == 0)
        doc = collect(&w, start_unix, unix_now());
    else if (!sig_first)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
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
