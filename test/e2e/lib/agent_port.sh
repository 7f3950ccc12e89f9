# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# agent_port.sh - for e2e tests that start a kperf-agent server with `--port 0` (sourced): the
# kernel picks a free port and the server announces it on stderr. A fixed random port once
# collided with another test's listener in CI; port 0 cannot.
# announced_port LOG PID: prints the port announced in LOG by the server PID, waiting up to 30 s
# (returns 1, printing nothing, when the server exits or never announces one). The bound only
# stops a hang: natively it takes ~10 ms, but agent_arm64.sh's server starts under qemu-user
# and deb_install.sh's in a chroot, on a machine that may be busy.
announced_port() {
    local log="$1" pid="$2" port _
    for _ in $(seq 1 600); do
        port=$(sed -n 's/^kperf-agent: listening on [^ ]*:\([0-9][0-9]*\) (tcp+udp)$/\1/p' "$log")
        [ -n "$port" ] && { echo "$port"; return 0; }
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05 # bounded wait for the announcement, not a timing assertion
    done
    return 1
}
