/* SPDX-License-Identifier: Apache-2.0 */
/* watch_status.h - the live status of `kperf watch`: a probe's latest status line
 * ("kperf-agent: status udp ok 500 0 tcp down 500 120 connect lossy 50 2 last 2.010", printed
 * by `kperf-agent probe --status`, agent/probe.c) read from the end of its log and turned into
 * one short phrase for the terminal. Reads a file; prints nothing. */
#ifndef KPERF_CMD_WATCH_STATUS_H
#define KPERF_CMD_WATCH_STATUS_H

#include <stddef.h>

/* "DOWN   udp lost 120 of 500, last outage 2.010 s": the worst state of the kinds (DOWN, lossy,
 * ok), the UDP probes lost and sent, the latest outage when there was one; "starting" when
 * the log holds no status line yet (or cannot be read). Looks at the last 2 KiB only. */
void watch_status_phrase(const char *log_path, char *buf, size_t len);

#endif
