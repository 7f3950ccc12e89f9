/* SPDX-License-Identifier: Apache-2.0 */
/* report_file.h - reads a whole file into memory, at most a cap in bytes, whatever the file
 * is: a regular file, a pipe, /dev/stdin, a FIFO or a character device. The size the file
 * claims (st_size) is never trusted: bytes are read in a loop and the read stops with an error
 * as soon as one byte more than the cap has arrived, so a larger input costs at most cap + 1
 * bytes of memory and no more reading. Used by report_load (kperf report, kperf compare).
 * Owns nothing beyond the buffer it hands back. */
#ifndef KPERF_REPORT_REPORT_FILE_H
#define KPERF_REPORT_REPORT_FILE_H

#include <stddef.h>

#include "base/kp_err.h"

struct kp_err;

/* Reads path (opened read-only; a FIFO blocks until a writer opens it, as for any reader)
 * into *buf (ours until the caller frees it; NUL-terminated, *len bytes before the NUL).
 * A file of exactly cap bytes is accepted; cap + 1 is refused with "PATH: more than N bytes".
 * An empty file gives *len == 0. Directories and unreadable paths are refused.
 * Returns 0, or -1 with err (one line naming path) and *buf NULL. */
KP_MUST_CHECK int report_file_read(const char *path, size_t cap, char **buf, size_t *len,
                                   struct kp_err *err);

/* mkdir -p: dir and every missing parent, 0755 (a fresh volume has no /history/nights
 * yet). 0, or -1 with err naming the folder that could not be made. */
KP_MUST_CHECK int report_make_dirs(const char *dir, struct kp_err *err);

#endif
