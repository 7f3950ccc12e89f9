/* SPDX-License-Identifier: Apache-2.0 */
/* token.h - reads the per-run secret from a token file, exactly: the bytes of the file, less
 * one trailing newline. Owns the checks on the file (regular file, size cap, no NUL bytes,
 * who else may read it); knows nothing of how the token is used (proto.h's MACs). */
#ifndef KPERF_BASE_TOKEN_H
#define KPERF_BASE_TOKEN_H

#include <stddef.h>

#include "base/kp_err.h"

#define TOKEN_MAX_LEN 4096 /* bytes, after the trailing newline is removed */

/* Reads the token in path into *buf (NUL-terminated, *len bytes before the NUL; caller frees
 * with kp_free_secret) and returns 0. The file must be a regular file (a FIFO, device or
 * directory is refused at once, without blocking), hold 1..TOKEN_MAX_LEN bytes after one
 * trailing "\n" (or "\r\n") is removed, and contain no NUL byte; nothing else is trimmed.
 * A file that users other than the owner can read (world-readable, or group-readable by a
 * group other than this process's own) is accepted with a warning (kp_log WARN). Returns -1
 * with err naming the file and the reason; *buf is then NULL and nothing secret is left in
 * memory. */
KP_MUST_CHECK int token_read(const char *path, char **buf, size_t *len, struct kp_err *err);

#endif
