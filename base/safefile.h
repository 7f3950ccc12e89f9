/* SPDX-License-Identifier: Apache-2.0 */
/* safefile.h - the one way kperf writes a file a person reads later (reports, history runs,
 * watch documents, the agent's --output, the local backend's state): all or nothing, never
 * through a link someone planted, never torn by a second writer.
 *
 * A write of DIR/NAME: takes an exclusive flock on DIR (waits up to a bound, then refuses),
 * removes temporary files of crashed writers (.kperf-*.tmp, and the history's old .tmp-XXXXXX:
 * under the lock no live writer owns one), refuses when NAME exists and is not a regular file
 * (a symbolic link, a folder, a FIFO), creates a new file under a random name with
 * O_EXCL|O_NOFOLLOW|O_CLOEXEC and mode 0666 less the umask, lets the caller write it, flushes,
 * fsyncs, renames it over NAME, fsyncs DIR and releases the lock. A failure at any step unlinks
 * the temporary file: a reader sees the old NAME or the new one, whole. Where DIR cannot be
 * locked (flock unsupported, e.g. some network filesystems), the write goes on unlocked (the
 * random name still keeps each file whole) and only leftovers older than an hour are removed.
 * Knows nothing of what is written. docs/report.md "Output files". */
#ifndef KPERF_BASE_SAFEFILE_H
#define KPERF_BASE_SAFEFILE_H

#include <stdio.h>

#include "base/kp_err.h"

#define SAFEFILE_LOCK_WAIT_MS 30000u /* a second writer waits this long for the folder */
#define SAFEFILE_TMP_PREFIX   ".kperf-"
#define SAFEFILE_TMP_SUFFIX   ".tmp"

struct safefile; /* opaque: one file being written */

struct safefile_opts {
    unsigned lock_wait_ms; /* 0: SAFEFILE_LOCK_WAIT_MS */
};

/* Begins writing path (DIR/NAME; DIR must exist): lock, cleanup, checks and the temporary file
 * as above. o may be NULL (defaults). *out (caller ends it with safefile_close) or -1 with err. */
KP_MUST_CHECK int safefile_begin(const char *path, const struct safefile_opts *o,
                                 struct safefile **out, struct kp_err *err);

/* The stream to write the content to (borrowed until safefile_commit or safefile_close). */
FILE *safefile_stream(struct safefile *sf);

/* Flushes, fsyncs and renames the content over the target, then fsyncs the folder. The folder
 * stays locked until safefile_close (a caller may tidy it, e.g. history retention). Returns 0,
 * or -1 with err naming the target (the temporary file is gone, the target untouched). */
KP_MUST_CHECK int safefile_commit(struct safefile *sf, struct kp_err *err);

/* Removes the temporary file if not committed, releases the lock, frees sf. NULL is a no-op. */
void safefile_close(struct safefile *sf);

/* Writes the content fill writes to its stream (fill returns 0, or -1 with err) to path as
 * above, in one call. Returns 0 or -1 with err. */
typedef int safefile_fill_fn(FILE *f, void *arg, struct kp_err *err);
KP_MUST_CHECK int safefile_write(const char *path, safefile_fill_fn *fill, void *arg,
                                 struct kp_err *err);

/* Writes text to path as above (a whole small file). Returns 0 or -1 with err. */
KP_MUST_CHECK int safefile_write_text(const char *path, const char *text, struct kp_err *err);

/* Points the symbolic link path at target (any text), replacing an existing link atomically
 * under the folder's lock; refuses when path exists and is not a symbolic link. 0 or -1. */
KP_MUST_CHECK int safefile_symlink(const char *target, const char *path, struct kp_err *err);

#endif
