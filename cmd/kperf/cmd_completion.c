/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_completion.c - 'kperf completion bash|zsh|fish': prints a shell completion script for
 * kperf and kubectl-kperf, generated from the commands' flag tables (names, short names, which
 * take a value), with the values kperf accepts for --scenarios and --tests (plan and testkind
 * names, comma lists), -o/--output and --format (per command), --image-pull-policy and the
 * script's own argument; files for FILE/.json arguments, directories for DIR, kubeconfig
 * contexts (kubectl config get-contexts, when kubectl is there) for --context. zsh uses the
 * bash script through bashcompinit. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/flags.h"
#include "base/testkind.h"
#include "cmd/kperf/commands.h"
#include "cmd/kperf/run_flags.h"
#include "controller/plan.h"

/* A subcommand: its flag tables (a second one: manifests takes every run flag) and the values
 * of its -o/--output (what its set_output accepts). */
struct sub {
    const char *name;
    const char *summary; /* fish's description */
    const struct flag *(*flags)(size_t *n);
    const struct flag *(*more)(size_t *n);
    const char *outputs;
};

static const struct sub subs[] = {
    {"run", "measure pod networking", run_flags_table, NULL, "table markdown json csv openmetrics"},
    {"compare", "compare two reports", cmd_compare_flags, NULL, "table markdown json html"},
    {"report", "re-render a saved report.json", cmd_report_flags, NULL,
     "table markdown csv html json openmetrics"},
    {"history", "keep reports in a history directory", cmd_history_flags, NULL, NULL},
    {"cleanup", "remove what earlier runs left", cmd_cleanup_flags, NULL, NULL},
    {"manifests", "print the objects a run would create", cmd_manifests_flags, run_flags_table,
     "table markdown json csv"},
    {"watch", "probe every path while something happens", cmd_watch_flags, run_flags_table,
     "table markdown json"},
    {"version", "print the version", NULL, NULL, NULL},
    {"completion", "print a shell completion script", NULL, NULL, NULL},
};
#define N_SUBS (sizeof(subs) / sizeof(subs[0]))

static const char usage_text[] =
    "Usage: kperf completion bash|zsh|fish\n\n"
    "Prints a completion script for kperf (and kubectl-kperf) on stdout:\n"
    "  source <(kperf completion bash)           # bash, e.g. in ~/.bashrc\n"
    "  source <(kperf completion zsh)            # zsh, e.g. in ~/.zshrc\n"
    "  kperf completion fish | source            # fish\n";

/* How a flag's value is completed. */
enum value_kind { V_NONE, V_WORDS, V_LIST, V_FILE, V_DIR, V_CONTEXT };

/* The kind and (for V_WORDS/V_LIST) the space-separated values of flag f of sub s in buf. */
static enum value_kind value_of(const struct sub *s, const struct flag *f, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    if (strcmp(f->name, "scenarios") == 0) {
        len += (size_t)snprintf(buf, cap, "all");
        for (int i = 0; i < SCENARIO_COUNT && len < cap; i++)
            len += (size_t)snprintf(buf + len, cap - len, " %s", plan_scenario_name(i));
        return V_LIST;
    }
    if (strcmp(f->name, "tests") == 0) {
        len += (size_t)snprintf(buf, cap, "all");
        for (int i = 0; i < TEST_COUNT && len < cap; i++)
            len += (size_t)snprintf(buf + len, cap - len, " %s", testkind_name(i));
        return V_LIST;
    }
    if (strcmp(f->name, "output") == 0 && s->outputs) {
        snprintf(buf, cap, "%s", s->outputs);
        return V_WORDS;
    }
    if (strcmp(f->name, "format") == 0) {
        snprintf(buf, cap, "yaml json");
        return V_WORDS;
    }
    if (strcmp(f->name, "image-pull-policy") == 0) {
        snprintf(buf, cap, "Always IfNotPresent Never");
        return V_WORDS;
    }
    if (strcmp(f->name, "arch") == 0) {
        snprintf(buf, cap, "amd64 arm64 any mixed");
        return V_WORDS;
    }
    if (strcmp(f->name, "context") == 0)
        return V_CONTEXT;
    if (strcmp(f->arg, "DIR") == 0)
        return V_DIR;
    if (strstr(f->arg, "FILE") || strstr(f->arg, ".json"))
        return V_FILE;
    return V_NONE;
}

/* Calls fn for every named row of s (both tables; a name seen before is skipped). */
static void each_flag(const struct sub *s,
                      void (*fn)(const struct sub *, const struct flag *, void *), void *ctx)
{
    const struct flag *tabs[2] = {NULL, NULL};
    size_t ns[2] = {0, 0};

    if (s->flags)
        tabs[0] = s->flags(&ns[0]);
    if (s->more)
        tabs[1] = s->more(&ns[1]);
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < ns[t]; i++) {
            const struct flag *f = &tabs[t][i];
            bool seen = false;
            if ((!f->name && !f->short_name) || !f->help)
                continue; /* the positional row; a test-only flag left out of --help */
            for (int u = 0; u <= t && !seen; u++) {
                for (size_t j = 0; j < (u == t ? i : ns[u]) && !seen; j++) {
                    const struct flag *g = &tabs[u][j];
                    seen = f->name && g->name && strcmp(f->name, g->name) == 0;
                }
            }
            if (!seen)
                fn(s, f, ctx);
        }
    }
}

/* Whether s takes positional arguments (files: compare, report). */
static bool has_positional(const struct sub *s)
{
    size_t n = 0;
    const struct flag *tab = s->flags ? s->flags(&n) : NULL;

    for (size_t i = 0; i < n; i++) {
        if (!tab[i].name && !tab[i].short_name)
            return true;
    }
    return false;
}

/* ---- bash (and zsh through bashcompinit) ---- */

static void bash_word(const struct sub *s, const struct flag *f, void *ctx)
{
    (void)s, (void)ctx;
    if (f->name)
        printf(" --%s", f->name);
    if (f->short_name)
        printf(" -%c", f->short_name);
}

static void bash_value(const struct sub *s, const struct flag *f, void *ctx)
{
    static const char *const kinds[] = {"none", "words", "list", "file", "dir", "context"};
    char buf[256];
    enum value_kind k;

    (void)ctx;
    if (!f->arg)
        return;
    k = value_of(s, f, buf, sizeof(buf));
    printf("        ");
    if (f->name)
        printf("--%s", f->name);
    if (f->short_name)
        printf("%s-%c", f->name ? "|" : "", f->short_name);
    printf(") kind=%s values=\"%s\" ;;\n", kinds[k], buf);
}

static void print_bash(void)
{
    printf("# kperf completion bash: completion for kperf and kubectl-kperf (kperf %s).\n"
           "#   source <(kperf completion bash)\n"
           "_kperf_reply() { # KIND VALUES FLAGS CUR\n"
           "    local pre=\n"
           "    case $1 in\n"
           "    words) COMPREPLY=($(compgen -W \"$2\" -- \"$4\")) ;;\n"
           "    list)\n"
           "        [[ $4 == *,* ]] && pre=${4%%,*},\n"
           "        COMPREPLY=($(compgen -P \"$pre\" -W \"$2\" -- \"${4##*,}\")) ;;\n"
           "    file) COMPREPLY=($(compgen -f -- \"$4\")) ;;\n"
           "    dir) COMPREPLY=($(compgen -d -- \"$4\")) ;;\n"
           "    context)\n"
           "        COMPREPLY=($(compgen -W \"$(kubectl config get-contexts -o name 2>/dev/null)\" "
           "-- \"$4\")) ;;\n"
           "    none) COMPREPLY=() ;;\n"
           "    flags) COMPREPLY=($(compgen -W \"$3\" -- \"$4\")) ;;\n"
           "    esac\n"
           "}\n"
           "_kperf() {\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= i kind= values= flags= pos=0\n"
           "    [ \"$COMP_CWORD\" -ge 1 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
           "    if [ \"$cur\" = = ]; then\n"
           "        cur=\n"
           "    elif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -ge 2 ]; then\n"
           "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
           "    fi\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
           "        case ${COMP_WORDS[i]} in\n"
           "        -*) ;;\n"
           "        *) cmd=${COMP_WORDS[i]}; break ;;\n"
           "        esac\n"
           "    done\n"
           "    COMPREPLY=()\n"
           "    if [ -z \"$cmd\" ]; then\n"
           "        _kperf_reply words \"",
           KPERF_VERSION);
    for (size_t i = 0; i < N_SUBS; i++)
        printf("%s ", subs[i].name);
    printf("--help --version\" \"\" \"$cur\"\n"
           "        return\n"
           "    fi\n"
           "    case $cmd in\n");
    for (size_t i = 0; i < N_SUBS; i++) {
        const struct sub *s = &subs[i];
        printf("    %s)\n        flags=\"%s", s->name, s->flags ? "" : "--help -h");
        each_flag(s, bash_word, NULL);
        printf("\"\n");
        if (strcmp(s->name, "completion") == 0)
            printf("        pos=1 values=\"bash zsh fish\"\n");
        else if (has_positional(s))
            printf("        pos=1\n");
        printf("        case $prev in\n");
        each_flag(s, bash_value, NULL);
        printf("        esac\n        ;;\n");
    }
    printf("    esac\n"
           "    if [ -n \"$kind\" ]; then\n"
           "        _kperf_reply \"$kind\" \"$values\" \"\" \"$cur\"\n"
           "    elif [[ $cur == -* ]] || [ \"$pos\" = 0 ]; then\n"
           "        _kperf_reply flags \"\" \"$flags\" \"$cur\"\n"
           "    elif [ -n \"$values\" ]; then\n"
           "        _kperf_reply words \"$values\" \"\" \"$cur\"\n"
           "    else\n"
           "        _kperf_reply file \"\" \"\" \"$cur\"\n"
           "    fi\n"
           "}\n"
           "complete -F _kperf kperf kubectl-kperf\n");
}

/* ---- fish ---- */

/* Prints s in single quotes for fish (\ and ' escaped); up to the first newline. */
static void fish_quote(const char *s)
{
    putchar('\'');
    for (; *s && *s != '\n'; s++) {
        if (*s == '\'' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('\'');
}

static void fish_flag(const struct sub *s, const struct flag *f, void *ctx)
{
    char buf[256];

    (void)ctx;
    printf("complete -c $c -n '__fish_seen_subcommand_from %s'", s->name);
    if (f->name)
        printf(" -l %s", f->name);
    if (f->short_name)
        printf(" -s %c", f->short_name);
    if (f->arg) {
        switch (value_of(s, f, buf, sizeof(buf))) {
        case V_WORDS:
        case V_LIST:
            printf(" -x -a '%s'", buf);
            break;
        case V_FILE:
            printf(" -r -F");
            break;
        case V_DIR:
            printf(" -x -a '(__fish_complete_directories)'");
            break;
        case V_CONTEXT:
            printf(" -x -a '(kubectl config get-contexts -o name 2>/dev/null)'");
            break;
        case V_NONE:
            printf(" -x");
            break;
        }
    }
    if (f->help) {
        printf(" -d ");
        fish_quote(f->help);
    }
    putchar('\n');
}

static void print_fish(void)
{
    printf("# kperf completion fish: completion for kperf and kubectl-kperf (kperf %s).\n"
           "#   kperf completion fish | source\n"
           "for c in kperf kubectl-kperf\n"
           "complete -c $c -f\n",
           KPERF_VERSION);
    for (size_t i = 0; i < N_SUBS; i++) {
        printf("complete -c $c -n __fish_use_subcommand -a %s -d ", subs[i].name);
        fish_quote(subs[i].summary);
        putchar('\n');
    }
    for (size_t i = 0; i < N_SUBS; i++) {
        if (has_positional(&subs[i]))
            printf("complete -c $c -n '__fish_seen_subcommand_from %s' -F\n", subs[i].name);
        each_flag(&subs[i], fish_flag, NULL);
    }
    printf("complete -c $c -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n"
           "end\n");
}

int cmd_completion(int argc, char **argv)
{
    static const struct flag table[] = {
        {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
    };
    struct flags_cmd cmd = {
        .name = "kperf completion",
        .usage = usage_text,
        .stop_at_arg = true,
        .tables = {{table, 1, NULL}},
    };
    struct kp_err err = {{0}};
    int next = argc;
    int rc = flags_parse(&cmd, argc, argv, &next, &err);

    if (rc == 1) {
        flags_help(stdout, &cmd);
        return 0;
    }
    if (rc == 0 && next == argc - 1) {
        if (strcmp(argv[next], "bash") == 0) {
            print_bash();
            return 0;
        }
        if (strcmp(argv[next], "zsh") == 0) {
            printf("#compdef kperf kubectl-kperf\n"
                   "# kperf completion zsh: the bash completion through zsh's bashcompinit.\n"
                   "autoload -U +X bashcompinit && bashcompinit\n");
            print_bash();
            return 0;
        }
        if (strcmp(argv[next], "fish") == 0) {
            print_fish();
            return 0;
        }
    }
    if (rc == 0) {
        kp_err_set(&err, "'kperf completion' takes one shell: bash, zsh or fish");
        flags_hint(&cmd, &err);
    }
    fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    return 2;
}
