#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_emfile.sh - a server out of file descriptors (ulimit -n 32) under a flood of idle
# connections: it must not spin (libuv's reserve-descriptor trick), must log a bounded number
# of lines, and must serve again once the flood is gone.
. "$(dirname "$0")/agent_common.inc"
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }

: > "$WORK/server.log"
(ulimit -n 32 && exec "$AGENT" server --port 0 --bind 127.0.0.1 --handshake-timeout 4s) \
    2> "$WORK/server.log" &
SRV_PID=$!
wait_for 30 "the server to announce its port" server_announced || { cat "$WORK/server.log"; exit 1; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$SRV_PID/stat"; }

# 80 connections held open for 2 s: far more than the server has descriptors
# (it says "holding" once all 80 are made, then holds them until told to let go: a file)
python3 - "$PORT" "$WORK/let-go" > "$WORK/flood.out" <<'PY' &
import os, socket, sys, time
socks = []
for _ in range(80):
    try:
        socks.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2))
    except OSError:
        pass
print("holding", flush=True)
end = time.time() + 60  # bounds a hang: the test lets go ~2 s after "holding"
while not os.path.exists(sys.argv[2]) and time.time() < end:
    time.sleep(0.05)
PY
flood=$!
wait_for 30 "the flood's 80 connections" grep -q holding "$WORK/flood.out"
t0=$(cpu_ticks)
sleep 1.5 # the window the server's CPU time is measured over, not a wait for an event
t1=$(cpu_ticks)
: > "$WORK/let-go"
ticks=$((t1 - t0))
check "no busy loop while out of descriptors ($ticks ticks of CPU in 1.5 s)" [ "$ticks" -lt 30 ]
wait "$flood"
# libuv accepts and closes what it cannot hold, usually without telling us: no log spam
check "log stays bounded ($(wc -l < "$WORK/server.log") lines)" [ "$(wc -l < "$WORK/server.log")" -lt 40 ]
# the server frees its descriptors as it sees the flood's connections close (bound: a hang)
serves_again() { client --tests TCP_RR,TCP_STREAM --duration 300ms --json > "$WORK/after.json" 2> "$WORK/after.err"; }
check "serves again after the flood" \
    wait_for 30 "a client to be served after the flood" serves_again
check "results present" jqt "$WORK/after.json" '(.results|length) == 2'
stop_server
finish
