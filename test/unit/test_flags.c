/* SPDX-License-Identifier: Apache-2.0 */
/* test_flags.c - the table-driven flag parser: every accepted syntax, typed targets and
 * handlers, positional arguments, `--`, -vv counting, stop at a subcommand, each usage error
 * (one line naming the flag, with the --help pointer), and the --help text from the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/flags.h"
#include "base/kp_err.h"

#define MAX_ARGV 16

struct opts {
    const char *name; /* --name, -N: FLAG_STRING */
    bool dry_run;     /* --dry-run: FLAG_BOOL */
    int verbose;      /* -v, --verbose: FLAG_COUNT */
    int level;        /* --level, -l: a handler, 0..9 */
    int level_calls;  /* how often the handler ran */
    const char *args[4];
    int n_args;
};

enum { G_MAIN, G_MORE, G_EMPTY };

static int set_level(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    struct opts *o = ctx;

    (void)f;
    o->level_calls++;
    if (strcmp(v, "named") == 0) /* a message that names its flag already */
        return kp_err_set(err, "--level wants a digit");
    if (strlen(v) != 1 || v[0] < '0' || v[0] > '9')
        return kp_err_set(err, "'%s' is not a digit", v);
    o->level = v[0] - '0';
    return 0;
}

static int add_arg(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    struct opts *o = ctx;

    (void)f;
    if (o->n_args == 4)
        return kp_err_set(err, "too many arguments");
    o->args[o->n_args++] = v;
    return 0;
}

#define AT(field) .offset = offsetof(struct opts, field)

static const struct flag table[] = {
    {.name = "name",
     .short_name = 'N',
     .arg = "NAME",
     .help = "a name",
     .kind = FLAG_STRING,
     AT(name)},
    {.name = "level",
     .short_name = 'l',
     .arg = "N",
     .help = "a level, 0 to 9;\nsecond line",
     .fn = set_level},
    {.name = "dry-run", .help = "change nothing", .group = G_MORE, .kind = FLAG_BOOL, AT(dry_run)},
    {.name = "verbose",
     .short_name = 'v',
     .help = "more",
     .group = G_MORE,
     .kind = FLAG_COUNT,
     AT(verbose)},
    {.name = "secret", .arg = "S", .kind = FLAG_STRING, AT(name)}, /* not in --help */
};

static const struct flag with_args[] = {
    {.name = "level", .short_name = 'l', .arg = "N", .help = "a level", .fn = set_level},
    {.name = "help", .short_name = 'h', .help = "this help", .kind = FLAG_HELP},
    {.fn = add_arg},
};

static const char *const titles[] = {"Main", NULL, "Empty"};

static struct flags_cmd make_cmd(const struct flag *flags, size_t n, struct opts *o)
{
    return (struct flags_cmd){
        .name = "prog sub",
        .usage = "Usage: prog sub [flags]\n",
        .groups = titles,
        .n_groups = 3,
        .footer = "\nThe end.\n",
        .help_width = 18,
        .tables = {{flags, n, o}},
    };
}

/* Parses "sub" + args through cmd into *o (zeroed first); message in *err. */
static int parse_with(const struct flags_cmd *cmd, struct opts *o, struct kp_err *err, ...)
{
    char *argv[MAX_ARGV] = {"sub"};
    int argc = 1;
    va_list ap;

    va_start(ap, err);
    for (char *a = va_arg(ap, char *); a && argc < MAX_ARGV - 1; a = va_arg(ap, char *))
        argv[argc++] = a;
    va_end(ap);
    memset(o, 0, sizeof(*o));
    kp_err_clear(err);
    return flags_parse(cmd, argc, argv, NULL, err);
}

#define PARSE(o, err, ...)                                                                         \
    parse_with((struct flags_cmd[]){make_cmd(table, sizeof(table) / sizeof(table[0]), (o))}, (o),  \
               (err), __VA_ARGS__, NULL)
#define PARSE_ARGS(o, err, ...)                                                                    \
    parse_with((struct flags_cmd[]){make_cmd(with_args, 3, (o))}, (o), (err), __VA_ARGS__, NULL)

static void test_flags_long_and_short_forms(void **state)
{
    struct opts o;
    struct kp_err err;

    (void)state;
    assert_int_equal(PARSE(&o, &err, "--name", "a", "--level", "3"), 0);
    assert_string_equal(o.name, "a");
    assert_int_equal(o.level, 3);
    assert_int_equal(PARSE(&o, &err, "--name=b", "--level=4"), 0);
    assert_string_equal(o.name, "b");
    assert_int_equal(o.level, 4);
    assert_int_equal(PARSE(&o, &err, "--name=", "-l", "5"), 0); /* an empty value is a value */
    assert_string_equal(o.name, "");
    assert_int_equal(o.level, 5);
    assert_int_equal(PARSE(&o, &err, "-Nc", "-l6"), 0);
    assert_string_equal(o.name, "c");
    assert_int_equal(o.level, 6);
    assert_int_equal(PARSE(&o, &err, "-N=d", "-l=7"), 0);
    assert_string_equal(o.name, "d");
    assert_int_equal(o.level, 7);
    /* a value that looks like a flag is still the value */
    assert_int_equal(PARSE(&o, &err, "--name", "--level"), 0);
    assert_string_equal(o.name, "--level");
    assert_int_equal(o.level_calls, 0);
    /* the last one wins */
    assert_int_equal(PARSE(&o, &err, "--name", "x", "-N", "y"), 0);
    assert_string_equal(o.name, "y");
}

static void test_flags_typed_targets_and_counting(void **state)
{
    struct opts o;
    struct kp_err err;

    (void)state;
    assert_int_equal(PARSE(&o, &err, "--dry-run", "-v", "--verbose"), 0);
    assert_true(o.dry_run);
    assert_int_equal(o.verbose, 2);
    assert_int_equal(PARSE(&o, &err, "-vvv"), 0);
    assert_int_equal(o.verbose, 3);
    assert_false(o.dry_run);
    assert_int_equal(PARSE(&o, &err, "-vx"), -1);
    assert_string_equal(kp_err_msg(&err),
                        "--verbose takes no value. Run 'prog sub --help' for usage.");
}

static void test_flags_usage_errors(void **state)
{
    static const struct {
        const char *args[3];
        const char *want;
    } cases[] = {
        {{"--bogus"}, "unknown flag '--bogus'. Run 'prog sub --help' for usage."},
        {{"-x"}, "unknown flag '-x'. Run 'prog sub --help' for usage."},
        {{"--name"}, "--name needs a value (NAME). Run 'prog sub --help' for usage."},
        {{"-l"}, "--level needs a value (N). Run 'prog sub --help' for usage."},
        {{"--dry-run=yes"}, "--dry-run takes no value. Run 'prog sub --help' for usage."},
        {{"--help=1"}, "--help takes no value. Run 'prog sub --help' for usage."},
        {{"pos"},
         "unexpected argument 'pos' (prog sub takes flags only). Run 'prog sub --help' "
         "for usage."},
        {{"-"}, "unexpected argument '-' (prog sub takes flags only)"},
        {{"--", "--name"}, "unexpected argument '--name' (prog sub takes flags only)"},
        /* a handler's message gets the flag's name unless it has it already */
        {{"--level", "x"}, "--level: 'x' is not a digit. Run 'prog sub --help' for usage."},
        {{"-l", "x"}, "--level: 'x' is not a digit."},
        {{"--level", "named"}, "--level wants a digit. Run 'prog sub --help' for usage."},
        /* the error is the first one met */
        {{"--bogus", "--name"}, "unknown flag '--bogus'"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct opts o;
        struct kp_err err;
        int rc = PARSE(&o, &err, cases[i].args[0], cases[i].args[1], cases[i].args[2]);
        if (rc != -1 || strncmp(kp_err_msg(&err), cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("case %zu (%s): rc %d, message '%s'", i, cases[i].args[0], rc,
                     kp_err_msg(&err));
        assert_null(strchr(kp_err_msg(&err), '\n'));
    }
}

static void test_flags_help_stops_the_parse(void **state)
{
    struct opts o;
    struct kp_err err;

    (void)state;
    /* -h/--help work without a row of their own, anywhere, and end the parse */
    assert_int_equal(PARSE(&o, &err, "--help", "--level", "x"), 1);
    assert_int_equal(o.level_calls, 0);
    assert_int_equal(PARSE(&o, &err, "--level", "2", "-h", "--bogus"), 1);
    assert_int_equal(o.level, 2);
    assert_int_equal(PARSE_ARGS(&o, &err, "a", "-h"), 1);
    /* an error before it wins */
    assert_int_equal(PARSE(&o, &err, "--bogus", "--help"), -1);
}

static void test_flags_positional_arguments(void **state)
{
    struct opts o;
    struct kp_err err;

    (void)state;
    /* anywhere among the flags, in order */
    assert_int_equal(PARSE_ARGS(&o, &err, "a", "-l", "1", "b", "--level=2", "c"), 0);
    assert_int_equal(o.n_args, 3);
    assert_string_equal(o.args[0], "a");
    assert_string_equal(o.args[1], "b");
    assert_string_equal(o.args[2], "c");
    assert_int_equal(o.level, 2);
    /* `--` ends the flags; "-" is an argument */
    assert_int_equal(PARSE_ARGS(&o, &err, "-", "--", "-l", "--"), 0);
    assert_int_equal(o.n_args, 3);
    assert_string_equal(o.args[0], "-");
    assert_string_equal(o.args[1], "-l");
    assert_string_equal(o.args[2], "--");
    assert_int_equal(o.level_calls, 0);
    /* the positional handler's error is its own: no flag name in front */
    assert_int_equal(PARSE_ARGS(&o, &err, "1", "2", "3", "4", "5"), -1);
    assert_string_equal(kp_err_msg(&err), "too many arguments. Run 'prog sub --help' for usage.");
}

static int set_other(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    (void)f, (void)err;
    *(const char **)ctx = v;
    return 0;
}

static void test_flags_two_tables_and_stop_at_arg(void **state)
{
    static const struct flag other[] = {{.name = "other", .arg = "X", .fn = set_other}};
    struct opts o = {0};
    const char *other_value = NULL;
    struct flags_cmd cmd = make_cmd(table, sizeof(table) / sizeof(table[0]), &o);
    char *argv[] = {"prog", "--other", "o", "-v", "run", "--bogus", "x"};
    char *copy[7];
    struct kp_err err;
    int next = -1;

    (void)state;
    cmd.tables[1] = (struct flags_table){other, 1, &other_value};
    cmd.stop_at_arg = true;
    memcpy(copy, argv, sizeof(argv));
    kp_err_clear(&err);
    assert_int_equal(flags_parse(&cmd, 7, argv, &next, &err), 0);
    assert_int_equal(next, 4); /* "run": the rest is its own */
    assert_string_equal(other_value, "o");
    assert_int_equal(o.verbose, 1);
    assert_memory_equal(copy, argv, sizeof(argv)); /* argv is left alone */

    assert_int_equal(flags_parse(&cmd, 4, argv, &next, &err), 0);
    assert_int_equal(next, 4); /* no command: argc */
    assert_int_equal(flags_parse(&cmd, 4, (char *[]){"prog", "--", "-v", "x"}, &next, &err), 0);
    assert_int_equal(next, 2); /* after `--`, "-v" is the command */
}

static void test_flags_hint(void **state)
{
    struct opts o;
    struct flags_cmd cmd = make_cmd(table, 1, &o);
    struct kp_err err;

    (void)state;
    kp_err_set(&err, "'prog sub' takes FILE");
    assert_int_equal(flags_hint(&cmd, &err), -1);
    assert_string_equal(kp_err_msg(&err),
                        "'prog sub' takes FILE. Run 'prog sub --help' for usage.");
    assert_int_equal(flags_hint(&cmd, NULL), -1);
}

static char *help_of(const struct flags_cmd *cmd)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    flags_help(f, cmd);
    fclose(f);
    return buf;
}

static void test_flags_help_from_the_table(void **state)
{
    struct opts o;
    struct flags_cmd cmd = make_cmd(table, sizeof(table) / sizeof(table[0]), &o);
    char *text;

    (void)state;
    /* titled and untitled groups, empty ones left out, rows without help hidden, continuation
     * lines aligned, "    " in place of "-x, " */
    text = help_of(&cmd);
    assert_string_equal(text, "Usage: prog sub [flags]\n"
                              "\n"
                              "Main:\n"
                              "  -N, --name NAME    a name\n"
                              "  -l, --level N      a level, 0 to 9;\n"
                              "                     second line\n"
                              "\n"
                              "      --dry-run      change nothing\n"
                              "  -v, --verbose      more\n"
                              "\n"
                              "The end.\n");
    free(text);

    /* flush left, a short-only flag, a second table, no footer */
    static const struct flag more[] = {
        {.short_name = 'q', .help = "quiet", .group = G_MAIN, .kind = FLAG_COUNT},
        {.name = "long-name-beyond",
         .arg = "THE-COLUMN",
         .help = "pushes its text right",
         .group = G_MAIN,
         .fn = set_level}};
    cmd.tables[0].n_flags = 2;
    cmd.tables[1] = (struct flags_table){more, 2, NULL};
    cmd.flush_left = true;
    cmd.footer = NULL;
    text = help_of(&cmd);
    assert_string_equal(text, "Usage: prog sub [flags]\n"
                              "\n"
                              "Main:\n"
                              "  -N, --name NAME    a name\n"
                              "  -l, --level N      a level, 0 to 9;\n"
                              "                     second line\n"
                              "  -q                 quiet\n"
                              "  --long-name-beyond THE-COLUMN pushes its text right\n");
    free(text);
}

static char *fputs_of(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    flags_fputs(f, s);
    fclose(f);
    return buf;
}

/* Run as the kubectl plugin: command lines say "kubectl prog", prose and other words do not */
static void test_flags_invocation(void **state)
{
    struct opts o;
    struct flags_cmd cmd = make_cmd(table, 1, &o);
    struct kp_err err;
    char *text;

    (void)state;
    flags_set_invocation("prog", "kubectl prog");
    text = fputs_of("Usage: prog sub [flags]\n"
                    "       prog sub --x FILE\n"
                    "Every 'prog sub' flag; earlier prog runs, prog-agent, `prog sub`.\n"
                    "  prog sub -v\n"
                    "prog\n");
    assert_string_equal(text, "Usage: kubectl prog sub [flags]\n"
                              "       kubectl prog sub --x FILE\n"
                              "Every 'kubectl prog sub' flag; earlier prog runs, prog-agent, "
                              "`kubectl prog sub`.\n"
                              "  kubectl prog sub -v\n"
                              "prog\n");
    free(text);
    text = help_of(&cmd);
    assert_non_null(strstr(text, "Usage: kubectl prog sub [flags]\n"));
    free(text);
    kp_err_set(&err, "bad");
    flags_hint(&cmd, &err);
    assert_string_equal(kp_err_msg(&err), "bad. Run 'kubectl prog sub --help' for usage.");

    /* off again: as written */
    flags_set_invocation("prog", NULL);
    text = fputs_of("Usage: prog sub\n");
    assert_string_equal(text, "Usage: prog sub\n");
    free(text);
    kp_err_set(&err, "bad");
    flags_hint(&cmd, &err);
    assert_string_equal(kp_err_msg(&err), "bad. Run 'prog sub --help' for usage.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_long_and_short_forms),
        cmocka_unit_test(test_flags_typed_targets_and_counting),
        cmocka_unit_test(test_flags_usage_errors),
        cmocka_unit_test(test_flags_help_stops_the_parse),
        cmocka_unit_test(test_flags_positional_arguments),
        cmocka_unit_test(test_flags_two_tables_and_stop_at_arg),
        cmocka_unit_test(test_flags_hint),
        cmocka_unit_test(test_flags_help_from_the_table),
        cmocka_unit_test(test_flags_invocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
