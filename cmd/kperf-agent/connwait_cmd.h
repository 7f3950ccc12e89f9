/* SPDX-License-Identifier: Apache-2.0 */
/* connwait_cmd.h - `kperf-agent connect-wait`: fresh TCP connects to one address at a fixed
 * pace until one succeeds; prints when (wall clock) as JSON. kperf's Service programming
 * latency (docs/kubernetes.md, "Services at scale") runs it on each node against a Service
 * whose endpoints are about to appear. */
#ifndef KPERF_CMD_CONNWAIT_CMD_H
#define KPERF_CMD_CONNWAIT_CMD_H

/* argv[0..argc) are the flags after "connect-wait"; argv[-1] is the command itself. Returns
 * the exit code: 0 connected, 1 gave up (the JSON says so) or could not run, 2 usage. */
int connwait_cmd_run(int argc, char **argv);

#endif
