#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_probe_memory.sh - hours of `kperf-agent probe`, time-compressed, keep its memory flat.
# 30 s at 5000 UDP and 5000 TCP request/response probes per second and a fresh connect every
# 5 ms is 150,000 probes per kind (25 minutes at the default 100/s; 300,000+ in all), through
# what a long watch meets: about 25 short outages (the server stopped with SIGSTOP for 0.3 s:
# losses, no reset), three server restarts (resets, reconnects, new sessions) and session
# renewals every 5 s. Resident memory (VmRSS, sampled every second) may not grow by more than
# 1 MiB between the warm-up (5 s in, after the first restart) and the end, and the peak
# (VmHWM) may not exceed the warm-up RSS by more than 1 MiB: per-interval counters, a bounded
# ring and at most 512 outage records, never a record per probe (agent/probe_track.h).
# A leak of even 8 bytes per probe would be 2.4 MB here. Takes ~35 s.
. "$(dirname "$0")/agent_common.inc"
# under ASan freed memory waits in its quarantine and every allocation carries redzones: the
# resident size is the sanitizer's, not the agent's (leaks are LSan's there, at exit)
agent_sanitized && { echo "SKIP: AddressSanitizer build: RSS is not the agent's"; exit 77; }

DURATION=30
RATE=5000
printf 'sekret\n' > "$WORK/token"; chmod 600 "$WORK/token"
start_server --token-file "$WORK/token"
# shellcheck disable=SC2153 # PORT: set by start_server
SPORT=$PORT

restart_server() {
    kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=""
    sleep 0.3
    start_server --token-file "$WORK/token" --port "$SPORT"
}

rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null; }

"$AGENT" probe --server "127.0.0.1:$SPORT" --token-file "$WORK/token" --rate "$RATE" \
    --connect-every 5ms --session 5s --duration "${DURATION}s" -o "$WORK/m.json" \
    2> "$WORK/m.err" &
PP=$!

# one step a second: sample RSS, then disturb the path (restarts at 4, 12, 20 s; a 0.3 s
# stop of the server in every other second); the last sample is at DURATION - 2 s
RSS_WARM=""
RSS_END=""
RSS_MAX=0
HWM_END=0
for t in $(seq 1 $((DURATION - 2))); do
    sleep 0.7
    r=$(rss "$PP")
    [ -n "$r" ] || break
    [ "$t" -eq 5 ] && RSS_WARM=$r
    if [ "$t" -ge 5 ]; then
        RSS_END=$r
        [ "$r" -gt "$RSS_MAX" ] && RSS_MAX=$r
        HWM_END=$(hwm "$PP")
    fi
    case $t in
    4 | 12 | 20) restart_server ;;
    *)
        kill -STOP "$SRV_PID"; sleep 0.3; kill -CONT "$SRV_PID" ;;
    esac
done
echo "VmRSS: warm-up ${RSS_WARM:-?} kB, end ${RSS_END:-?} kB, max ${RSS_MAX} kB; VmHWM ${HWM_END} kB"
wait "$PP"; rc=$?
M="$WORK/m.json"
jq -c '.probes | map_values({sent, lost, outages_total, c: .connection})' "$M" 2>/dev/null
check "exit 0 (rc $rc: $(head -c 300 "$WORK/m.err"))" [ "$rc" -eq 0 ]
check "RSS sampled through the run" [ -n "$RSS_WARM" ] && [ -n "$RSS_END" ]
check "over 120,000 probes per kind (10+ minutes at 100/s)" jqt "$M" \
    '.probes.udp.sent > 120000 and .probes.tcp.sent > 120000 and .probes.connect.sent > 3000'
# (a restart that meets a session renewal in flight is absorbed by it: not every one resets)
check "the restarts: resets and reconnects on every session kind" jqt "$M" \
    '[.probes.udp, .probes.tcp] | all(.connection.resets >= 2 and .connection.reconnect_s_max > 0)'
check "the stops and restarts: 10+ outages per request/response kind" jqt "$M" \
    '[.probes.udp, .probes.tcp] | all(.outages_total >= 10 and .lost > 0)'
check "sessions renewed" jqt "$M" '[.probes.udp, .probes.tcp] | all(.connection.renewals >= 1)'
check "VmRSS flat: ${RSS_WARM:-?} kB at 5 s, ${RSS_END:-?} kB at $((DURATION - 2)) s (< 1024 kB growth)" \
    [ "$((${RSS_END:-999999} - ${RSS_WARM:-0}))" -lt 1024 ]
check "VmRSS never above warm-up + 1024 kB (max ${RSS_MAX} kB)" \
    [ "$((RSS_MAX - ${RSS_WARM:-0}))" -lt 1024 ]
check "VmHWM within warm-up + 1024 kB (${HWM_END} kB)" [ "$((HWM_END - ${RSS_WARM:-0}))" -lt 1024 ]

stop_server
finish
