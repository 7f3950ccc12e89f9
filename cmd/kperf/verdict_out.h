/* SPDX-License-Identifier: Apache-2.0 */
/* verdict_out.h - where kperf run's and kperf compare's verdict goes besides stdout and the exit
 * status: the container's termination message (--termination-message-path), kperf compare's
 * gauges (--push-gateway) and a chat message (--notify, --report-url). None of them changes
 * the exit status: a failure is one warning line on stderr (docs/exit-status.md). */
#ifndef KPERF_CMD_VERDICT_OUT_H
#define KPERF_CMD_VERDICT_OUT_H

#include <jansson.h>

#define VERDICT_OUT_DEFAULT_PATH                                                                   \
    "/dev/termination-log" /* a pod's, when it exists and is writable */

struct verdict_out {
    const char *termination_path; /* NULL: the default when in a pod; "": none (borrowed) */
    const char *push_gateway;     /* NULL: no push (borrowed) */
    const char *push_password;    /* NULL: the URL's (borrowed) */
    const char *notify_url;       /* NULL: no message (borrowed) */
    const char *report_url;       /* base of the HTML pages named in the message (borrowed) */
};

/* Writes line (borrowed, one line) as the termination message: to o->termination_path, or to
 * VERDICT_OUT_DEFAULT_PATH when that is NULL and the file exists and is writable (a pod);
 * nothing otherwise. A write that fails is a warning. */
void verdict_out_termination(const struct verdict_out *o, const char *line);

/* Everything a comparison sends out: the termination message (verdict_line), the gauges
 * (verdict_openmetrics, job kperf_verdict, retried) and the --notify message (retried). doc is
 * the kperf.compare/v1 document (borrowed), status the exit status. Warnings only. */
void verdict_out_compare(const struct verdict_out *o, const json_t *doc, const char *cluster,
                         int status);

#endif
