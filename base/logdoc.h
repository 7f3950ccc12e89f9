/* SPDX-License-Identifier: Apache-2.0 */
/* logdoc.h - the JSON document an agent printed into a log that also holds the agent's own
 * stderr lines. A container runtime (containerd, CRI-O, kube-sim) reads a container's stdout
 * and stderr on separate pipes and merges them line by line in the order its readers get to
 * them, not in the order the program wrote them: a status or warning line ("kperf-agent: ...")
 * can land between two lines of the pretty-printed document even though the agent flushed the
 * document first (seen at 250 nodes: one result was unreadable). Owns finding the document:
 * the first line that starts with '{', then every following line except the agent's own
 * (those that start with LOGDOC_AGENT_PREFIX, which no line of an indented JSON document can),
 * up to the end of the first JSON value. Knows nothing of what the document means. */
#ifndef KPERF_BASE_LOGDOC_H
#define KPERF_BASE_LOGDOC_H

#include <stddef.h>

#define LOGDOC_AGENT_PREFIX "kperf-agent: "

/* The document's text in log[0..len), without the agent's lines that interrupted it; *n is
 * its length up to the end of the first JSON value (or to the end of the log when the text
 * does not parse, so that the caller's parser reports what is wrong). Returns a new
 * NUL-terminated string (free it), or NULL when no line starts with '{'. */
char *logdoc_extract(const char *log, size_t len, size_t *n);

#endif
