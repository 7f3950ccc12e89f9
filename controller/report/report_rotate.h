/* SPDX-License-Identifier: Apache-2.0 */
/* report_rotate.h - dated report folders for a nightly job's history (docs/history-volume.md):
 * `kperf run --output-dir /history/{time} --keep-runs N` writes each run into a folder named
 * after its start time, points /history/latest at it and keeps the newest N run folders.
 * Owns the folder naming, the "latest" link and retention; writing a report folder is
 * report_write_dir's. */
#ifndef KPERF_REPORT_REPORT_ROTATE_H
#define KPERF_REPORT_REPORT_ROTATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/kp_err.h"

#define REPORT_DIR_TIME        "{time}" /* replaced by the run's start, YYYYMMDDTHHMMSSZ */
#define REPORT_DIR_LATEST      "latest" /* the symlink to the newest run folder */
#define REPORT_DIR_NAME_LEN    16       /* strlen("20261201T021700Z") */
#define REPORT_DIR_MAX_ENTRIES 100000   /* a history folder with more entries is refused */

/* pattern with every {time} replaced by start_time (RFC 3339 UTC, "2026-12-01T02:17:00Z") in
 * the compact form 20261201T021700Z; the current time when start_time is NULL or not of that
 * form. Caller frees. */
char *report_dir_expand(const char *pattern, const char *start_time);

/* True when name looks like a run folder (YYYYMMDDTHHMMSSZ, digits where digits go). */
bool report_dir_is_run_name(const char *name);

/* After a run was written to dir/name: points dir/latest at name (a relative symlink, replaced
 * atomically) and, when keep > 0, removes the oldest run folders of dir (by name) until keep
 * remain. A run folder is removed only when it holds nothing but report.{json,md,csv,html}
 * (and their temp files); one that holds anything else is left and counted as kept. *removed
 * gets the number removed. Returns 0 or -1 with err. */
KP_MUST_CHECK int report_dir_rotate(const char *dir, const char *name, unsigned keep,
                                    size_t *removed, struct kp_err *err);

#endif
