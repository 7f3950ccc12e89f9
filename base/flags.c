/* SPDX-License-Identifier: Apache-2.0 */
/* flags.c - see flags.h. One argument at a time: find its row (long name, short name or the
 * positional row), take its value, hand it to the row's handler or typed target. */
#include "base/flags.h"

#include <ctype.h>
#include <string.h>

#include "base/kp_err.h"

/* A row and the ctx of its table. */
struct hit {
    const struct flag *f;
    void *ctx;
};

/* -h/--help of a command whose tables do not list it (a row there takes precedence). */
static const struct flag implicit_help = {.name = "help", .short_name = 'h', .kind = FLAG_HELP};

/* Finds the row with long name name[0..len), short name c (when name is NULL), or the
 * positional row (when both are NULL / 0). */
static struct hit find(const struct flags_cmd *cmd, const char *name, size_t len, char c)
{
    for (size_t t = 0; t < FLAGS_MAX_TABLES; t++) {
        const struct flags_table *tab = &cmd->tables[t];
        for (size_t i = 0; i < tab->n_flags; i++) {
            const struct flag *f = &tab->flags[i];
            bool match = name
                             ? f->name && strlen(f->name) == len && strncmp(f->name, name, len) == 0
                             : f->short_name == c && (c || !f->name);
            if (match)
                return (struct hit){f, tab->ctx};
        }
    }
    if (name ? len == 4 && strncmp(name, "help", 4) == 0 : c == 'h')
        return (struct hit){&implicit_help, NULL};
    return (struct hit){NULL, NULL};
}

/* "--name", or "-x" for a short-only flag. */
static void label_of(const struct flag *f, char *buf, size_t len)
{
    if (f->name)
        snprintf(buf, len, "--%s", f->name);
    else
        snprintf(buf, len, "-%c", f->short_name);
}

/* True when msg mentions label as a whole flag ("--output" is not in "--output-dir"). */
static bool names_flag(const char *msg, const char *label)
{
    size_t len = strlen(label);

    for (const char *p = strstr(msg, label); p; p = strstr(p + 1, label)) {
        unsigned char next = (unsigned char)p[len];
        if (!isalnum(next) && next != '-')
            return true;
    }
    return false;
}

/* Applies one occurrence of h with value. Returns 0, 1 for help, or -1. */
static int apply(const struct hit *h, const char *label, const char *value, struct kp_err *err)
{
    void *field = h->f->kind == FLAG_CALL || h->f->kind == FLAG_HELP
                      ? NULL
                      : (char *)h->ctx + h->f->offset; /* a typed target */

    switch (h->f->kind) {
    case FLAG_STRING:
        *(const char **)field = value;
        return 0;
    case FLAG_BOOL:
        *(bool *)field = true;
        return 0;
    case FLAG_COUNT:
        (*(int *)field)++;
        return 0;
    case FLAG_HELP:
        return 1;
    case FLAG_CALL:
        break;
    }
    kp_err_clear(err);
    if (h->f->fn(h->ctx, h->f, value, err) == 0)
        return 0;
    if (label && !names_flag(kp_err_msg(err), label))
        kp_err_prefix(err, "%s", label);
    return -1;
}

/* Parses the flag argv[*i] (and its value from argv[*i + 1] if it takes one there). */
static int parse_flag(const struct flags_cmd *cmd, int argc, char **argv, int *i,
                      struct kp_err *err)
{
    const char *a = argv[*i];
    const char *val = NULL;
    char label[128];
    size_t times = 1;
    struct hit h;

    if (a[1] == '-') {
        const char *eq = strchr(a + 2, '=');
        h = find(cmd, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0);
        val = eq ? eq + 1 : NULL;
    } else {
        h = find(cmd, NULL, 0, a[1]);
        if (a[2])
            val = a[2] == '=' ? a + 3 : a + 2; /* -ocsv, -o=csv */
    }
    if (!h.f)
        return kp_err_set(err, "unknown flag '%s'", a);
    label_of(h.f, label, sizeof(label));
    if (!h.f->arg && val) {
        /* -vv: a short flag without a value, repeated */
        if (a[1] == '-' || strspn(a + 1, (char[]){a[1], '\0'}) != strlen(a + 1))
            return kp_err_set(err, "%s takes no value", label);
        times = strlen(a + 1);
        val = NULL;
    }
    if (h.f->arg && !val) {
        if (*i + 1 >= argc)
            return kp_err_set(err, "%s needs a value (%s)", label, h.f->arg);
        val = argv[++*i];
    }
    for (; times > 0; times--) {
        int rc = apply(&h, label, val, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int parse_positional(const struct flags_cmd *cmd, const char *a, struct kp_err *err)
{
    struct hit h = find(cmd, NULL, 0, 0);

    if (!h.f)
        return kp_err_set(err, "unexpected argument '%s' (%s takes flags only)", a, cmd->name);
    return apply(&h, NULL, a, err);
}

int flags_parse(const struct flags_cmd *cmd, int argc, char **argv, int *next, struct kp_err *err)
{
    bool flags_done = false;
    int rc = 0;

    if (next)
        *next = argc;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];

        if (!flags_done && strcmp(a, "--") == 0) {
            flags_done = true;
        } else if (flags_done || a[0] != '-' || !a[1]) {
            if (cmd->stop_at_arg) {
                if (next)
                    *next = i;
                return 0;
            }
            rc = parse_positional(cmd, a, err);
        } else {
            rc = parse_flag(cmd, argc, argv, &i, err);
        }
    }
    if (rc < 0)
        flags_hint(cmd, err);
    return rc;
}

/* flags_set_invocation: the word and what it is printed as (both NULL: no substitution). */
static const char *inv_name;
static const char *inv_as;

void flags_set_invocation(const char *name, const char *as)
{
    inv_name = as ? name : NULL;
    inv_as = as;
}

/* Whether s[i..] is the invocation word starting a command (see flags.h). */
static bool starts_command(const char *s, size_t i)
{
    size_t n = strlen(inv_name);
    size_t j = i;

    if (strncmp(s + i, inv_name, n) != 0 || s[i + n] != ' ')
        return false;
    if (i > 0 && (s[i - 1] == '\'' || s[i - 1] == '`'))
        return true;
    if (i >= 7 && strncmp(s + i - 7, "Usage: ", 7) == 0)
        return true;
    while (j > 0 && s[j - 1] == ' ')
        j--;
    return j == 0 || s[j - 1] == '\n';
}

void flags_fputs(FILE *f, const char *s)
{
    size_t i = 0, from = 0;

    if (!inv_name) {
        fputs(s, f);
        return;
    }
    for (; s[i]; i++) {
        if (!starts_command(s, i))
            continue;
        fwrite(s + from, 1, i - from, f);
        fputs(inv_as, f);
        i += strlen(inv_name) - 1;
        from = i + 1;
    }
    fputs(s + from, f);
}

int flags_hint(const struct flags_cmd *cmd, struct kp_err *err)
{
    if (err) {
        size_t len = strlen(err->msg);
        size_t n = inv_name ? strlen(inv_name) : 0;
        bool sub = n && strncmp(cmd->name, inv_name, n) == 0 &&
                   (cmd->name[n] == ' ' || cmd->name[n] == '\0');

        snprintf(err->msg + len, sizeof(err->msg) - len, ". Run '%s%s --help' for usage.",
                 sub ? inv_as : "", cmd->name + (sub ? n : 0));
    }
    return -1;
}

/* One row: "  -x, --name ARG   help", continuation lines of help aligned under the first. */
static void help_row(FILE *out, const struct flags_cmd *cmd, const struct flag *f)
{
    char lhs[128];
    const char *h = f->help;
    int n = 0;

    if (f->short_name)
        n = snprintf(lhs, sizeof(lhs), "-%c%s", f->short_name, f->name ? ", " : "");
    else if (!cmd->flush_left)
        n = snprintf(lhs, sizeof(lhs), "    ");
    snprintf(lhs + n, sizeof(lhs) - (size_t)n, "%s%s%s%s", f->name ? "--" : "",
             f->name ? f->name : "", f->arg ? " " : "", f->arg ? f->arg : "");
    while (h) {
        const char *nl = strchr(h, '\n');
        int len = nl ? (int)(nl - h) : (int)strlen(h);
        fprintf(out, "  %-*s %.*s\n", cmd->help_width, lhs, len, h);
        lhs[0] = '\0';
        h = nl ? nl + 1 : NULL;
    }
}

void flags_help(FILE *out, const struct flags_cmd *cmd)
{
    flags_fputs(out, cmd->usage);
    for (int g = 0; g < cmd->n_groups; g++) {
        bool listed = false;
        for (size_t t = 0; t < FLAGS_MAX_TABLES; t++) {
            const struct flags_table *tab = &cmd->tables[t];
            for (size_t i = 0; i < tab->n_flags; i++) {
                const struct flag *f = &tab->flags[i];
                if (f->group != g || !f->help)
                    continue;
                if (!listed && cmd->groups[g])
                    fprintf(out, "\n%s:\n", cmd->groups[g]);
                else if (!listed)
                    fputc('\n', out);
                listed = true;
                help_row(out, cmd, f);
            }
        }
    }
    if (cmd->footer)
        flags_fputs(out, cmd->footer);
}
