/* SPDX-License-Identifier: Apache-2.0 */
/* flags.h - the command-line parser of both binaries: a table of flags per command, the argv
 * walk (kubectl-like syntax) and the --help text generated from the same table, so the two
 * never disagree. Owns the syntax only; what a value means is the business of the handler or
 * the typed target of its row. Prints nothing and never exits: the caller (cmd/) does.
 *
 * Syntax: --flag value, --flag=value, -x value, -xVALUE, -x=VALUE; -vv applies -v twice (any
 * short flag without a value); -h/--help in every command; `--` ends the flags (what follows
 * is positional); an argument that does not start with '-' (or is "-") is positional.
 * Positional arguments go to the table's positional row (no name, no short name), anywhere on
 * the line; a command without one takes flags only. With stop_at_arg the first positional
 * argument ends the parse instead (a subcommand name: the rest belongs to it).
 *
 * Errors are one line: "unknown flag '--bogus'", "--duration needs a value (DUR)",
 * "--local takes no value", "unexpected argument 'x' (kperf run takes flags only)", or the
 * handler's message, which should name its flag ("--streams: '0' is not ..."); a message that
 * does not gets "--name: " in front. Every one ends with the --help pointer (flags_hint). */
#ifndef KPERF_BASE_FLAGS_H
#define KPERF_BASE_FLAGS_H

#include "base/kp_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct kp_err;
struct flag;

/* Applies one flag: value is its argument (borrowed from argv), NULL for a flag without one; ctx
 * is the table's. For the positional row, value is the argument. Returns 0 or -1 with err. */
typedef int flag_fn(void *ctx, const struct flag *f, const char *value, struct kp_err *err);

enum flag_kind {
    FLAG_CALL = 0, /* calls fn */
    FLAG_STRING,   /* const char * at ctx + offset = the value (borrowed from argv) */
    FLAG_BOOL,     /* bool at ctx + offset = true; takes no value */
    FLAG_COUNT,    /* int at ctx + offset += 1; takes no value (-vv: 2) */
    FLAG_HELP,     /* ends the parse: flags_parse returns 1 */
};

struct flag {
    const char *name; /* long name without "--"; NULL = short only (with short_name 0 too:
                         the positional row) */
    char short_name;  /* 0 = none */
    const char *arg;  /* metavariable in --help ("DUR"); NULL = takes no value */
    const char *help; /* '\n' starts a continuation line; NULL = not listed in --help */
    int group;        /* index into flags_cmd.groups: where --help lists it */
    int id;           /* free for the handler: which flag of its group this is */
    enum flag_kind kind;
    flag_fn *fn;   /* FLAG_CALL */
    size_t offset; /* typed targets: offsetof(the ctx struct, the field) */
};

/* One table and the object its handlers and targets write to. */
struct flags_table {
    const struct flag *flags; /* borrowed (static) */
    size_t n_flags;
    void *ctx; /* borrowed: handed to fn; typed targets are offsets into it */
};

#define FLAGS_MAX_TABLES 3

/* A command: its name for messages, its --help layout and its tables (a command's own flags
 * and, for `kperf manifests`, those of `kperf run`). Built by the caller, on its stack. */
struct flags_cmd {
    const char *name;          /* "kperf run": in messages and the --help pointer */
    const char *usage;         /* --help: printed first, as is */
    const char *const *groups; /* --help: group titles by flag.group; a NULL title prints none */
    int n_groups;
    const char *footer; /* --help: printed last, as is; NULL = none */
    int help_width;     /* --help: width of the flag column */
    bool flush_left;    /* --help: long-only flags start at the margin, not under "--" */
    bool stop_at_arg;   /* the first positional argument ends the parse */
    struct flags_table tables[FLAGS_MAX_TABLES]; /* unused slots are all zero */
};

/* Parses argv[1..argc) (argv[0] is the command) through cmd's tables, in order. Returns 0 when
 * parsed, 1 when -h/--help was given (the rest is not parsed), or -1 with one line in err. With
 * cmd->stop_at_arg, *next (if not NULL) is the index of the first positional argument (argc
 * when there is none); otherwise argc. argv is not modified. */
KP_MUST_CHECK int flags_parse(const struct flags_cmd *cmd, int argc, char **argv, int *next,
                              struct kp_err *err);

/* Appends the --help pointer to err: ". Run '<cmd->name> --help' for usage." For usage errors
 * found after flags_parse (a missing positional, flags that do not go together). Returns -1. */
int flags_hint(const struct flags_cmd *cmd, struct kp_err *err);

/* Prints the --help text: usage, then each group ("\n", its title and ":\n" unless NULL, its
 * rows in table order as "  <-x, --name ARG padded to help_width> <help>"), then footer. */
void flags_help(FILE *f, const struct flags_cmd *cmd);

/* The program as the user invoked it, for every text that shows a command line: the word `name`
 * (e.g. "kperf") is printed as `as` (e.g. "kubectl kperf" when run as the kubectl plugin
 * kubectl-kperf) where it starts a command, i.e. when a space follows and it is at the start of
 * a line (after indentation), after "Usage: " or after a quote (' or `). Prose ("earlier kperf
 * runs") and other words ("kperf-agent") are left alone. Applies to flags_hint, flags_help and
 * flags_fputs; process-wide, set once before any of them (not thread-safe). NULL as: off. */
void flags_set_invocation(const char *name, const char *as);

/* Writes s to f with the invocation substitution above; for the callers' own usage texts. */
void flags_fputs(FILE *f, const char *s);

#endif
