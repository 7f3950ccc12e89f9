/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cleanup.c - 'kperf cleanup': finds what earlier kperf runs left in the cluster (by the
 * app.kubernetes.io/managed-by=kperf label) and removes it, workloads first, namespaces last
 * (k8s_cleanup.h). --dry-run only lists. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/flags.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "controller/k8s/k8s_cleanup.h"
#include "controller/k8s/k8s_lock.h"
#include "controller/kube/kube.h"

struct cleanup_flags {
    const char *kubeconfig; /* borrowed from argv, as the other strings; NULL = default */
    const char *context;
    const char *ns;
    const char *run_id;
    uint64_t timeout_ms;
    bool dry_run;
    bool force;
    int verbose;
};

static int set_timeout(void *ctx, const struct flag *f, const char *v, struct kp_err *err)
{
    (void)f;
    return units_parse_duration_ms(v, &((struct cleanup_flags *)ctx)->timeout_ms, err);
}

#define AT(field) .offset = offsetof(struct cleanup_flags, field)

static const struct flag flag_table[] = {
    {.name = "kubeconfig",
     .arg = "FILE",
     .help = "kubeconfig (default $KUBECONFIG, ~/.kube/config, in-cluster)",
     .kind = FLAG_STRING,
     AT(kubeconfig)},
    {.name = "context",
     .arg = "NAME",
     .help = "kubeconfig context",
     .kind = FLAG_STRING,
     AT(context)},
    {.name = "namespace",
     .short_name = 'n',
     .arg = "NS",
     .help = "only look in NS (default: every namespace you may list)",
     .kind = FLAG_STRING,
     AT(ns)},
    {.name = "run-id",
     .arg = "ID",
     .help = "only the objects of this run",
     .kind = FLAG_STRING,
     AT(run_id)},
    {.name = "timeout",
     .arg = "D",
     .help = "longest wait for leases to be watched, pods and namespaces\n"
             "to go (default 2m)",
     .fn = set_timeout},
    {.name = "dry-run",
     .help = "list what would be removed, remove nothing",
     .kind = FLAG_BOOL,
     AT(dry_run)},
    {.name = "force",
     .help = "also remove runs whose lease is renewed (a kperf is running\n"
             "them: it stops with an error), without watching first",
     .kind = FLAG_BOOL,
     AT(force)},
    {.short_name = 'v', .help = "more detail on stderr", .kind = FLAG_COUNT, AT(verbose)},
    {.name = "help", .short_name = 'h', .help = "show this help", .kind = FLAG_HELP},
};

const struct flag *cmd_cleanup_flags(size_t *n)
{
    *n = sizeof(flag_table) / sizeof(flag_table[0]);
    return flag_table;
}

static const char *const group_titles[] = {"Flags"};

static const char usage_text[] =
    "Usage: kperf cleanup [flags]\n\n"
    "Removes every object earlier kperf runs left in the cluster (label\n"
    "app.kubernetes.io/managed-by=kperf): client Jobs and server DaemonSets first,\n"
    "their pods awaited until gone, then NetworkPolicies, Services, Secrets,\n"
    "ServiceAccounts, the runs' Leases and the namespaces kperf created.\n\n"
    "A run with a Lease is removed only once its Lease has expired by observation:\n"
    "watched for a whole lease period (default 30s, at most --timeout) without a\n"
    "renewal, its kperf was killed. A run whose Lease is renewed meanwhile is in\n"
    "progress: it is kept, one line each, saying when it was last renewed.\n"
    "--force removes those too, deleting the Lease first, and says what it destroys;\n"
    "the kperf running such a run stops at once with an error naming the cause.\n";

static const char *rid_of(const struct k8s_leftover *l)
{
    return *l->run_id ? l->run_id : "(no run id)";
}

/* Says why a run is kept (its Lease is renewed, deleted or not watched long enough) and
 * returns true; false for a run to remove. */
static bool say_kept(const struct k8s_leftover *l)
{
    const char *why;

    switch (l->lease) {
    case K8S_LEASE_HELD:
        why = "its lease was renewed while watched: a kperf is running it";
        break;
    case K8S_LEASE_GONE:
        why = "its lease was deleted while watched: its kperf (or another cleanup) is removing "
              "it";
        break;
    case K8S_LEASE_FOUND:
        why = "its lease could not be watched for a whole lease period within --timeout";
        break;
    default:
        return false;
    }
    fprintf(stderr,
            "keeping run %s in namespace %s: %s (last renewed at %s by %s); remove it "
            "anyway with --force\n",
            rid_of(l), l->ns, why, l->renewed ? l->renewed : "?", l->holder ? l->holder : "?");
    return true;
}

/* Says what is about to be removed, and why it may be. */
static void say_removed(const struct k8s_leftover *l, bool dry_run)
{
    const char *what = dry_run ? "would remove" : "removing";

    if (l->lease == K8S_LEASE_EXPIRED)
        fprintf(stderr,
                "%s run %s in namespace %s%s: its lease expired (not renewed during %llu s of "
                "watching; last renewed at %s; its kperf was killed)\n",
                what, rid_of(l), l->ns, l->ns_owned ? " (and the namespace)" : "",
                (unsigned long long)(l->obs.period_ms / 1000), l->renewed ? l->renewed : "?");
    else if (l->lease != K8S_LEASE_NONE)
        fprintf(stderr,
                "--force: %s run %s in namespace %s%s, its lease first, although a kperf may be "
                "running it (lease held by %s, last renewed at %s): that kperf stops with an "
                "error\n",
                what, rid_of(l), l->ns, l->ns_owned ? " (and the namespace)" : "",
                l->holder ? l->holder : "?", l->renewed ? l->renewed : "?");
    else
        fprintf(stderr, "%s run %s in namespace %s%s (it has no lease)\n", what, rid_of(l), l->ns,
                l->ns_owned ? " (and the namespace)" : "");
}

int cmd_cleanup(int argc, char **argv)
{
    struct cleanup_flags f = {.timeout_ms = 120000};
    struct flags_cmd cmd = {
        .name = "kperf cleanup",
        .usage = usage_text,
        .groups = group_titles,
        .n_groups = 1,
        .help_width = 22,
        .tables = {{flag_table, sizeof(flag_table) / sizeof(flag_table[0]), &f}},
    };
    struct kube_client *kc = NULL;
    struct k8s_leftover *l = NULL;
    size_t n = 0;
    unsigned removed = 0;
    size_t kept = 0, gone = 0;
    struct kp_err err;
    int rc = 2;
    int prc;

    kp_err_clear(&err);
    prc = flags_parse(&cmd, argc, argv, NULL, &err);
    if (prc == 1) {
        flags_help(stdout, &cmd);
        return 0;
    }
    if (prc != 0) {
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
        return 2;
    }
    kp_log_set_level(f.verbose >= 2 ? KP_LOG_DEBUG : f.verbose ? KP_LOG_INFO : KP_LOG_WARN);
    rc = 1;
    struct kube_client_opts ko = {.kubeconfig = f.kubeconfig,
                                  .context = f.context,
                                  .ns = f.ns,
                                  .qps = 50,
                                  .burst = 100,
                                  .timeout_ms = 30000};
    if (kube_client_new(&ko, &kc, &err) != 0 ||
        k8s_cleanup_find(kc, f.ns, f.run_id, &l, &n, &err) != 0)
        goto out;
    if (!f.force && k8s_cleanup_observe_ms(l, n)) {
        uint64_t ms = k8s_cleanup_observe_ms(l, n);
        fprintf(stderr,
                "watching the leases of the runs found for up to %llu s: runs in progress renew "
                "theirs (--force skips this)\n",
                (unsigned long long)((ms < f.timeout_ms ? ms : f.timeout_ms) / 1000));
        if (k8s_cleanup_observe(kc, l, n, f.timeout_ms, &err) != 0)
            goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!f.force && say_kept(&l[i])) {
            kept++;
            continue;
        }
        say_removed(&l[i], f.dry_run);
        if (f.dry_run)
            continue;
        if ((l[i].lease != K8S_LEASE_EXPIRED && k8s_cleanup_drop_lease(kc, &l[i], &err) != 0) ||
            k8s_cleanup_run(kc, l[i].ns, *l[i].run_id ? l[i].run_id : NULL, l[i].ns_owned,
                            f.timeout_ms, &removed, &err) != 0 ||
            (*l[i].run_id && k8s_lock_forget(kc, l[i].run_id, &err) != 0))
            goto out;
        gone++;
    }
    if (n == 0)
        fprintf(stderr, "nothing of kperf's found\n");
    else if (!f.dry_run)
        fprintf(stderr, "removed %zu run(s), %u object(s); kept %zu run(s) in progress\n", gone,
                removed, kept);
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    k8s_cleanup_leftovers_free(l, n);
    kube_client_free(kc);
    return rc;
}
