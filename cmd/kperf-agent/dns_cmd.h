/* SPDX-License-Identifier: Apache-2.0 */
/* dns_cmd.h - `kperf-agent dns`: its flag table and the command (agent/dnsprobe.h does the
 * lookups). Prints the JSON result on stdout, errors on stderr. */
#ifndef KPERF_CMD_DNS_CMD_H
#define KPERF_CMD_DNS_CMD_H

/* argv[0..argc) are the flags after "dns"; argv[-1] is "dns" itself. Returns the exit code: 0
 * ran (whatever was lost), 1 could not run, 2 usage. */
int dns_cmd_run(int argc, char **argv);

#endif
