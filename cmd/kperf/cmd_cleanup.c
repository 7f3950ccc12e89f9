/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cleanup.c - 'kperf cleanup': finds what earlier kperf runs left in the cluster (by the
 * app.kubernetes.io/managed-by=kperf label) and removes it, workloads first, namespaces last
 * (k8s_cleanup.h). --dry-run only lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/units.h"
#include "cmd/kperf/commands.h"
#include "controller/k8s/k8s_cleanup.h"
#include "controller/kube/kube.h"

struct cleanup_flags {
    const char *kubeconfig;
    const char *context;
    const char *ns;
    const char *run_id;
    uint64_t timeout_ms;
    int dry_run;
    int verbose;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: kperf cleanup [flags]\n\n"
            "Removes every object earlier kperf runs left in the cluster (label\n"
            "app.kubernetes.io/managed-by=kperf): client Jobs and server DaemonSets first,\n"
            "their pods awaited until gone, then Services, Secrets, ServiceAccounts and the\n"
            "namespaces kperf created.\n\n"
            "Flags:\n"
            "  --kubeconfig FILE    kubeconfig (default $KUBECONFIG, ~/.kube/config, in-cluster)\n"
            "  --context NAME       kubeconfig context\n"
            "  -n, --namespace NS   only look in NS (default: every namespace you may list)\n"
            "  --run-id ID          only the objects of this run\n"
            "  --timeout D          longest wait for pods and namespaces to go (default 2m)\n"
            "  --dry-run            list what would be removed, remove nothing\n"
            "  -v                   more detail on stderr\n");
}

/* Returns 0, 1 for --help, or -1 with the reason. */
static int parse(int argc, char **argv, struct cleanup_flags *f, struct kp_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (strcmp(a, "--dry-run") == 0) {
            f->dry_run = 1;
            continue;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "-vv") == 0) {
            f->verbose += (int)strlen(a) - 1;
            continue;
        }
        if (strcmp(a, "--kubeconfig") == 0)
            dst = &f->kubeconfig;
        else if (strcmp(a, "--context") == 0)
            dst = &f->context;
        else if (strcmp(a, "-n") == 0 || strcmp(a, "--namespace") == 0)
            dst = &f->ns;
        else if (strcmp(a, "--run-id") == 0)
            dst = &f->run_id;
        else if (strcmp(a, "--timeout") != 0)
            return kp_err_set(err, "unknown flag '%s'", a);
        if (i + 1 >= argc)
            return kp_err_set(err, "%s needs a value", a);
        if (dst) {
            *dst = argv[++i];
        } else if (units_parse_duration_ms(argv[++i], &f->timeout_ms, err) != 0) {
            return kp_err_prefix(err, "--timeout");
        }
    }
    return 0;
}

int cmd_cleanup(int argc, char **argv)
{
    struct cleanup_flags f = {.timeout_ms = 120000};
    struct kube_client *kc = NULL;
    struct k8s_leftover *l = NULL;
    size_t n = 0;
    unsigned removed = 0;
    struct kp_err err;
    int rc = 2;
    int prc;

    kp_err_clear(&err);
    prc = parse(argc, argv, &f, &err);
    if (prc == 1) {
        usage(stdout);
        return 0;
    }
    if (prc != 0) {
        fprintf(stderr, "kperf: error: %s. Run 'kperf cleanup --help'\n", kp_err_msg(&err));
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
    for (size_t i = 0; i < n; i++) {
        const char *rid = *l[i].run_id ? l[i].run_id : NULL;
        fprintf(stderr, "%s run %s in namespace %s%s\n", f.dry_run ? "would remove" : "removing",
                rid ? rid : "(no run id)", l[i].ns, l[i].ns_owned ? " (and the namespace)" : "");
        if (f.dry_run)
            continue;
        if (k8s_cleanup_run(kc, l[i].ns, rid, l[i].ns_owned, f.timeout_ms, &removed, &err) != 0)
            goto out;
    }
    if (n == 0)
        fprintf(stderr, "nothing of kperf's found\n");
    else if (!f.dry_run)
        fprintf(stderr, "removed %zu run(s), %u object(s)\n", n, removed);
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "kperf: error: %s\n", kp_err_msg(&err));
    k8s_cleanup_leftovers_free(l, n);
    kube_client_free(kc);
    return rc;
}
