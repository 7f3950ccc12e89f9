/* SPDX-License-Identifier: Apache-2.0 */
/* verdict_out.c - the verdict's ways out of kperf (verdict_out.h): a file, a push, a POST. */
#include "cmd/kperf/verdict_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_err.h"
#include "controller/report/notify.h"
#include "controller/report/pushgw.h"
#include "controller/report/verdict.h"

void verdict_out_termination(const struct verdict_out *o, const char *line)
{
    const char *path = o->termination_path;
    size_t len = strlen(line);
    FILE *f;

    if (!path && access(VERDICT_OUT_DEFAULT_PATH, W_OK) == 0)
        path = VERDICT_OUT_DEFAULT_PATH;
    if (!path || !path[0])
        return;
    if (len > VERDICT_MESSAGE_MAX - 1)
        len = VERDICT_MESSAGE_MAX - 1; /* what a kubelet keeps */
    f = fopen(path, "w");
    if (!f || fwrite(line, 1, len, f) != len || fputc('\n', f) == EOF || fflush(f) != 0) {
        fprintf(stderr, "kperf: warning: termination message %s: %s\n", path,
                strerror(errno ? errno : EIO));
    }
    if (f)
        fclose(f);
}

static void push_verdict(const struct verdict_out *o, const json_t *doc, const char *cluster,
                         int status)
{
    struct pushgw_opts po = {
        .password = o->push_password, .run_status = -1, .attempts = PUSHGW_ATTEMPTS};
    struct kp_err err = {{0}};
    char *body = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&body, &len);

    if (!mem)
        abort(); /* out of memory */
    verdict_openmetrics(doc, cluster, status, mem);
    fclose(mem);
    if (pushgw_push_text(o->push_gateway, PUSHGW_VERDICT_JOB, cluster, body, len, &po, &err) != 0)
        fprintf(stderr, "kperf: warning: the verdict was not pushed: %s (exit status unchanged)\n",
                kp_err_msg(&err));
    free(body);
}

void verdict_out_compare(const struct verdict_out *o, const json_t *doc, const char *cluster,
                         int status)
{
    char *line = verdict_line(doc, status);
    struct kp_err err = {{0}};

    verdict_out_termination(o, line);
    if (o->push_gateway)
        push_verdict(o, doc, cluster, status);
    if (o->notify_url) {
        json_t *msg = verdict_slack(doc, status, cluster, o->report_url);
        if (notify_post(o->notify_url, msg, NOTIFY_ATTEMPTS, &err) != 0)
            fprintf(stderr, "kperf: warning: %s (exit status unchanged)\n", kp_err_msg(&err));
        json_decref(msg);
    }
    free(line);
}
