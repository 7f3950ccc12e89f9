#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_loopback.sh - every test type over loopback, forward and reverse, and the figures are
# consistent: bytes sent = bytes received, RR ops / duration = ops_per_sec, histogram count =
# ops, no UDP loss at a low rate, per-stream bytes add up, intervals and samples are there;
# --profile's kernel samples, or its reason when the kernel refuses them.
# The server's start-up line is the one docs/external.md shows (scripts/check-docs.py).
. "$(dirname "$0")/agent_common.inc"

start_server
check "the server prints the listening line docs/external.md shows" \
    python3 "$KPERF_SRC/scripts/check-docs.py" check "$KPERF_SRC/docs/external.md" agent_loopback.sh "$WORK/server.log"

# --- every test, forward ---------------------------------------------------------------------
client --tests all --duration 1s --streams 3 --udp-rate 20M --interval 250ms --json \
    > "$WORK/fwd.json" 2> "$WORK/fwd.err"
rc=$?
check "client exits 0 for all tests (rc $rc: $(head -c 300 "$WORK/fwd.err"))" [ "$rc" -eq 0 ]
check "document validates against kperf.result/v1" "$AGENT" validate "$WORK/fwd.json"
F="$WORK/fwd.json"
check "6 results, 0 errors" jqt "$F" '(.results|length) == 6 and (.errors|length) == 0'
check "results in run order" jqt "$F" \
    '[.results[].test] == ["TCP_RR","TCP_CRR","TCP_STREAM","TCP_STREAM_MULTI","UDP_RR","UDP_STREAM"]'
for t in TCP_RR TCP_CRR UDP_RR; do
    R=".results[] | select(.test == \"$t\")"
    check "$t: ops > 50" jqt "$F" "$R | .ops > 50"
    check "$t: ops / duration = ops_per_sec" jqt "$F" \
        "$R | ((.ops / .duration_s - .ops_per_sec) | fabs) < 0.0001 * .ops_per_sec"
    check "$t: histogram count = ops" jqt "$F" "$R | .histogram.count == .ops"
    check "$t: min <= p50 <= p99 <= max" jqt "$F" \
        "$R | .latency_us as \$l | \$l.min <= \$l.p50 and \$l.p50 <= \$l.p99 and \$l.p99 <= \$l.max"
    # not ended early; a busy machine's late timer may lengthen it (2 s: ran to no default)
    check "$t: duration the 1 s asked" jqt "$F" "$R | .duration_s > 0.95 and .duration_s < 2"
    check "$t: ops_per_sec intervals" jqt "$F" "$R | (.intervals|length) >= 3 and (.intervals[0].ops_per_sec > 0)"
done
check "UDP_RR: nothing lost on loopback" jqt "$F" \
    '.results[] | select(.test == "UDP_RR") | .udp.lost == 0 and .udp.sent == .udp.received'
check "TCP_RR: TCP_INFO mss > 0" jqt "$F" '.results[] | select(.test == "TCP_RR") | .tcp.mss > 0'
for t in TCP_STREAM TCP_STREAM_MULTI UDP_STREAM; do
    R=".results[] | select(.test == \"$t\")"
    check "$t: bytes received = bytes sent (> 0)" jqt "$F" "$R | .bytes == .bytes_sent and .bytes > 0"
    check "$t: throughput = bytes / duration" jqt "$F" \
        "$R | ((.bytes * 8 / .duration_s / 1e6 - .throughput_mbps) | fabs) < 0.001 * .throughput_mbps + 0.001"
    check "$t: throughput intervals" jqt "$F" "$R | (.intervals|length) >= 3 and .intervals[1].throughput_mbps > 0"
done
check "TCP_STREAM_MULTI: 3 streams adding up" jqt "$F" \
    '.results[] | select(.test == "TCP_STREAM_MULTI") | (.streams|length) == 3 and ([.streams[].bytes]|add) == .bytes and all(.streams[]; .bytes > 0)'
check "UDP_STREAM at 20 Mbit/s: no loss, in order" jqt "$F" \
    '.results[] | select(.test == "UDP_STREAM") | .udp.lost == 0 and .udp.loss_pct == 0 and .udp.sent == .udp.received and .udp.out_of_order == 0'
check "UDP_STREAM paced to ~20 Mbit/s" jqt "$F" \
    '.results[] | select(.test == "UDP_STREAM") | .throughput_mbps > 18 and .throughput_mbps < 21'
check "CPU seconds of both sides" jqt "$F" 'all(.results[]; .cpu_seconds.client > 0 and .cpu_seconds.server >= 0)'
check "node CPU sums to ~100%" jqt "$F" \
    'all(.results[]; .node_cpu.client | (.user_pct + .system_pct + .softirq_pct + .irq_pct + .steal_pct + .iowait_pct + .idle_pct) > 90)'
check "loopback MTU on both sides" jqt "$F" '.mtu.client == 65536 and .mtu.server == 65536'

# --- reverse: the server sends ---------------------------------------------------------------
client --tests TCP_STREAM,TCP_STREAM_MULTI,UDP_STREAM --reverse --streams 2 --duration 1s \
    --udp-rate 20M --json > "$WORK/rev.json" 2> "$WORK/rev.err"
rc=$?
check "reverse: client exits 0 (rc $rc: $(head -c 300 "$WORK/rev.err"))" [ "$rc" -eq 0 ]
R="$WORK/rev.json"
check "reverse: validates" "$AGENT" validate "$R"
check "reverse: all marked reverse" jqt "$R" '(.results|length) == 3 and all(.results[]; .reverse)'
check "reverse: bytes received = bytes sent" jqt "$R" 'all(.results[]; .bytes == .bytes_sent and .bytes > 0)'
check "reverse UDP: no loss" jqt "$R" '.results[] | select(.test == "UDP_STREAM") | .udp.lost == 0 and .udp.received > 1000'
check "reverse TCP: server's TCP_INFO reported" jqt "$R" '.results[] | select(.test == "TCP_STREAM") | .tcp.mss > 0'

# --- placement: client and server share this kernel ---------------------------------------
# A TCP stream test with no more streams than CPUs is placed for a shared machine: the client's
# streams share half the CPUs and write 64 KiB (docs/benchmark.md, "Same kernel"); so is one
# with more than 16 streams per CPU, at the usual 128 KiB; in between, or with an explicit
# --stream-threads, a thread per stream; in between on more than one CPU the sender also keeps
# at most 128 KiB unsent per stream (docs/benchmark.md, "Little unsent"). The CPU count under a
# CPU quota: agent_cpu_limit.sh.
ncpu=$(nproc)
half=$(( ncpu / 2 > 0 ? ncpu / 2 : 1 ))
low=$(( ncpu > 1 ? 131072 : 0 ))
check "placement: one stream, same kernel: 1 thread, 64 KiB writes" jqt "$F" \
    '.results[] | select(.test == "TCP_STREAM") | (.placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == {"same_kernel": true, "client_threads": 1, "msg_size_bytes": 65536, "low_unsent_bytes": 0}'
if [ 3 -le "$ncpu" ]; then want3="{\"same_kernel\": true, \"client_threads\": $(( half < 3 ? half : 3 )), \"msg_size_bytes\": 65536, \"low_unsent_bytes\": 0}"
else want3="{\"same_kernel\": true, \"client_threads\": 0, \"msg_size_bytes\": 131072, \"low_unsent_bytes\": $low}"; fi
check "placement: 3 streams on $ncpu CPUs" jqt "$F" \
    ".results[] | select(.test == \"TCP_STREAM_MULTI\") | (.placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == $want3"
many=$(( 16 * ncpu + 1 ))
if [ "$many" -le 128 ]; then
    client --tests TCP_STREAM_MULTI --streams "$many" --duration 300ms --json > "$WORK/plm.json" 2>/dev/null
    check "placement: $many streams on $ncpu CPUs share $half threads, 128 KiB writes" jqt "$WORK/plm.json" \
        "(.results[0].placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == {\"same_kernel\": true, \"client_threads\": $half, \"msg_size_bytes\": 131072, \"low_unsent_bytes\": 0} and (.results[0].streams | length) == $many and all(.results[0].streams[]; .bytes > 0)"
    # the server's pool shares its threads' CPU time out among the streams by their calls: each
    # stream gets some, and all of them together no more than the pool's CPUs over the test
    check "placement: $many pooled streams each have a server CPU share, $ncpu CPUs' worth at most" jqt "$WORK/plm.json" \
        "all(.results[0].streams[]; .cpu_seconds.server > 0) and ([.results[0].streams[].cpu_seconds.server] | add) <= $ncpu * 0.3 * 1.5"
    client --tests TCP_STREAM_MULTI --streams $(( 16 * ncpu )) --duration 300ms --json > "$WORK/plm16.json" 2>/dev/null
    check "placement: 16 streams per CPU keep a thread each" jqt "$WORK/plm16.json" \
        "(.results[0].placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == {\"same_kernel\": true, \"client_threads\": 0, \"msg_size_bytes\": 131072, \"low_unsent_bytes\": $low}"
fi
# a thread per stream keeps little unsent only with more than one CPU to spread over: on one
# CPU the streams' threads would take turns more often (docs/benchmark.md, "Little unsent")
taskset -c 0 "$AGENT" client --server "127.0.0.1:$PORT" --tests TCP_STREAM_MULTI --streams 3 --duration 300ms --json > "$WORK/pl1cpu.json" 2>/dev/null
check "placement: 3 streams on one CPU (counted: client_cpus 1): a thread each, no low-unsent mark" jqt "$WORK/pl1cpu.json" \
    '(.results[0].placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == {"same_kernel": true, "client_threads": 0, "msg_size_bytes": 131072, "low_unsent_bytes": 0} and .results[0].placement.client_cpus == 1 and .results[0].bytes > 0'
if [ "$ncpu" -eq 2 ]; then
    client --tests TCP_STREAM_MULTI --streams 3 --reverse --duration 300ms --json > "$WORK/pl3r.json" 2>/dev/null
    check "placement: 3 streams reversed on 2 CPUs: the request carries the low-unsent mark and every reversed stream delivers" jqt "$WORK/pl3r.json" \
        '.results[0].placement.low_unsent_bytes == 131072 and .results[0].bytes == .results[0].bytes_sent and all(.results[0].streams[]; .bytes > 0)'
fi
check "placement: reverse too" jqt "$R" \
    '.results[] | select(.test == "TCP_STREAM") | .placement.same_kernel and .placement.client_threads == 1'
check "placement: none on UDP" jqt "$F" '.results[] | select(.test == "UDP_STREAM") | has("placement") | not'
client --tests TCP_STREAM --stream-threads 0 --duration 300ms --json > "$WORK/pl0.json" 2>/dev/null
check "placement: --stream-threads 0 keeps a thread per stream, 128 KiB" jqt "$WORK/pl0.json" \
    '(.results[0].placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == {"same_kernel": true, "client_threads": 0, "msg_size_bytes": 131072, "low_unsent_bytes": 0}'
client --tests TCP_STREAM --msg-size 100000 --duration 300ms --json > "$WORK/pl1.json" 2>/dev/null
check "placement: --msg-size is kept" jqt "$WORK/pl1.json" \
    '(.results[0].placement | {same_kernel, client_threads, msg_size_bytes, low_unsent_bytes}) == {"same_kernel": true, "client_threads": 1, "msg_size_bytes": 100000, "low_unsent_bytes": 0} and .results[0].bytes > 0'

# --- warm-up and samples ---------------------------------------------------------------------
client --tests TCP_RR,TCP_STREAM --duration 500ms --omit 300ms --samples 2 --json \
    > "$WORK/omit.json" 2>/dev/null
O="$WORK/omit.json"
check "samples: 2 per test, numbered" jqt "$O" '[.results[] | [.test, .sample]] == [["TCP_RR",0],["TCP_RR",1],["TCP_STREAM",0],["TCP_STREAM",1]]'
# 0.5 s of the 0.8 s: under 0.75 s proves the omitted 0.3 s is out, whatever the machine's load
check "omit: measured window ~0.5 s" jqt "$O" 'all(.results[]; .duration_s > 0.45 and .duration_s < 0.75)'
check "aggregates: one per test, 2 samples, ops summed" jqt "$O" \
    '(.aggregates|length) == 2 and all(.aggregates[]; .samples == 2) and (.aggregates[0].ops == ([.results[] | select(.test == "TCP_RR") | .ops] | add))'
check "omit: params recorded" jqt "$O" '.params.omit_s == 0.3 and .params.samples == 2'

# --- back to back at the largest size -----------------------------------------------------
# Four 128-stream samples in a row, forward and reverse: a finished test's data connections
# are closed when the client closes them, not held until the server's 2 s drain timeout (they
# were, and the third test in a row was refused at the per-source connection limit).
for dir in "" --reverse; do
    client --tests TCP_STREAM_MULTI --streams 128 --samples 4 --duration 200ms $dir --json \
        > "$WORK/b2b.json" 2> "$WORK/b2b.err"
    rc=$?
    check "4 x 128 streams back to back${dir:+ ($dir)}: exit 0 (rc $rc: $(head -c 300 "$WORK/b2b.err"))" \
        [ "$rc" -eq 0 ]
    check "4 x 128 streams back to back${dir:+ ($dir)}: 4 results of 128 streams" jqt "$WORK/b2b.json" \
        '(.errors|length) == 0 and (.results|length) == 4 and all(.results[]; (.streams|length) == 128)'
done

# --- many clients at once ------------------------------------------------------------------
pids=""
for t in TCP_RR TCP_CRR TCP_STREAM_MULTI UDP_RR UDP_STREAM; do
    client --tests "$t" --duration 1s --streams 2 --udp-rate 20M --json > "$WORK/conc.$t.json" 2>&1 &
    pids="$pids $!"
done
conc_ok=1
for p in $pids; do wait "$p" || conc_ok=0; done
check "5 clients at once: all succeed" [ "$conc_ok" -eq 1 ]
check "5 clients at once: each got its result" \
    bash -c "for f in '$WORK'/conc.*.json; do jq -e '(.results|length) == 1' \"\$f\" > /dev/null || exit 1; done"

# --- the kernel profile (--profile, docs/profile.md) ------------------------------------------
# as root: the window's kernel samples, symbolized (the send path of a stream is in them); as an
# unprivileged user (kernel.perf_event_paranoid >= 1 refuses system-wide sampling): the
# sample says why in profile.error and the measurement runs all the same
client --tests TCP_RR,TCP_STREAM --duration 1s --profile TCP_STREAM --json > "$WORK/prof.json" 2> "$WORK/prof.err"
rc=$?
check "--profile: client exits 0 ($(head -c 300 "$WORK/prof.err"))" [ "$rc" -eq 0 ]
check "--profile: document validates" "$AGENT" validate "$WORK/prof.json"
check "--profile: only the named test is profiled" jqt "$WORK/prof.json" \
    '[.results[] | has("profile")] == [false, true]'
check "--profile: TCP_STREAM has samples and names tcp_sendmsg" jqt "$WORK/prof.json" \
    '.results[1].profile | .samples > 50 and .hz > 0 and ([.functions[].name] | index("tcp_sendmsg") != null)'
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$AGENT" client --server "127.0.0.1:$PORT" \
        --tests TCP_STREAM --duration 300ms --profile all --json > "$WORK/noperm.json" 2> "$WORK/noperm.err"
    rc=$?
    check "--profile unprivileged: client exits 0 ($(head -c 300 "$WORK/noperm.err"))" [ "$rc" -eq 0 ]
    check "--profile unprivileged: the reason in profile.error, the throughput measured" jqt "$WORK/noperm.json" \
        '.results[0] | (.profile | keys) == ["error"] and (.profile.error | test("CAP_PERFMON")) and .throughput_mbps > 0'
    check "--profile unprivileged: document validates" "$AGENT" validate "$WORK/noperm.json"
fi

# --- human table -----------------------------------------------------------------------------
client --tests TCP_RR --duration 300ms > "$WORK/table.txt" 2>&1
check "table output without --json" grep -q '^TCP_RR ' "$WORK/table.txt"

stop_server
finish
