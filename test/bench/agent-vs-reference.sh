#!/usr/bin/env bash
# test/bench/agent-vs-reference.sh - kperf-agent side by side with the reference tools
# (iperf3, iperf 2, sockperf, qperf from Debian) on the same path, in one run, interleaved,
# printing the median of the pair-wise ratios with its interval and a verdict against the
# row's target (test/bench/ratios.py), and every raw value. A benchmark, not a test: it asserts
# nothing and is not run by ctest. Method and results: docs/benchmark.md.
#
# Fairness rules, each one found by measuring:
# * Order alternates (A B, then B A, ...): the 2-vCPU guests here switch between a fast and a
#   slow state (TCP_RR p50 17.6 us vs 23 us) for seconds at a time; a fixed order would charge
#   the switch to one tool.
# * Every measurement is pinned at exec: servers on CPU 0, clients on CPU 0 ("same") or
#   CPU 1 ("split"). Streams run split. Unpinned runs let the scheduler decide the result.
# * sockperf reports only its "valid duration": it drops a 400 ms warm-up and a 50 ms
#   cool-down (its own output: "RunTime=3.001 sec; Warm up time=400 msec" ... "[Valid
#   Duration] RunTime=2.550 sec"), so kperf's RR runs get the same window (--omit 400ms and
#   a duration 450 ms shorter).
# * Output is parsed after each tool exits, never by a process running beside it.
# * The streams sweep (group "sweep": N = 1, 2, 4, 8, 32, 128 streams against iperf -P N and
#   iperf3 -P N) measures how a tool uses both cores, so its servers and clients run
#   unpinned (servers of their own, started without taskset), and the three tools rotate order.
# * UDP_STREAM (group "udp") runs at 1G and 5G against iperf3 -u -b, same datagram size (1472),
#   pinned like streams; it compares the achieved (receiver's) rate, loss and jitter.
# * Every reading is checked for plausibility before a ratio is printed: the rate must equal
#   the receiver's bytes over its duration, and that duration must match the requested one.
#
# Paths: "veth" = two network namespaces joined by a veth pair (198.18.64.0/24),
#        "loopback" = 127.0.0.1 inside the server namespace (the ceiling).
# Usage: sudo test/bench/agent-vs-reference.sh [--bin DIR] [--pairs 5] [--seconds 3]
#                                              [--paths veth,loopback]
#                                              [--groups stream,rr,crr,sweep,udp] [--out FILE.md]
# shellcheck disable=SC2046,SC2086 # lists of samples and flag sets are passed as words on purpose
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bin_dir="$(cd "$here/../.." && pwd)/build/bin"
pairs=5
secs=3
paths="veth,loopback"
groups="stream,rr,crr,sweep,udp"
sweep_n="1 2 4 8 32 128"
udp_rates="1G 5G"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin_dir="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    --seconds) secs="$2"; shift 2 ;;
    --paths) paths="$2"; shift 2 ;;
    --groups) groups="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "agent-vs-reference: unknown flag $1 (see --help)" >&2; exit 2 ;;
  esac
done

agent="$bin_dir/kperf-agent"
[ "$(id -u)" = 0 ] || { echo "agent-vs-reference: needs root (network namespaces)" >&2; exit 2; }
[ -x "$agent" ] || { echo "agent-vs-reference: $agent not found; build first (scripts/setup.sh)" >&2; exit 2; }
for t in iperf3 iperf sockperf qperf taskset python3; do
  command -v "$t" >/dev/null || { echo "agent-vs-reference: $t missing: apt-get install iperf3 iperf sockperf qperf util-linux python3" >&2; exit 2; }
done

id=$$
ns_c="kpb-$id-c"
ns_s="kpb-$id-s"
if_c="kpb${id}c"
if_s="kpb${id}s"
ip_c=198.18.64.1
ip_s=198.18.64.2
pids=()
tmp=$(mktemp -d /tmp/kperf-bench.XXXXXX)

cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  ip netns del "$ns_c" 2>/dev/null || true
  ip netns del "$ns_s" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns_c"
ip netns add "$ns_s"
ip link add "$if_c" netns "$ns_c" type veth peer name "$if_s" netns "$ns_s"
ip -n "$ns_c" addr add "$ip_c/24" dev "$if_c"
ip -n "$ns_s" addr add "$ip_s/24" dev "$if_s"
for n in "$ns_c" "$ns_s"; do ip -n "$n" link set lo up; done
ip -n "$ns_c" link set "$if_c" up
ip -n "$ns_s" link set "$if_s" up

in_s() { ip netns exec "$ns_s" "$@"; }
in_c() { ip netns exec "$ns_c" "$@"; }

# --- servers, started once, all in the server namespace -------------------------------
start_server() { # name cmd...
  local name=$1; shift
  # pinned to CPU 0 from exec (threads inherit it); `taskset` and `ip netns exec` exec the
  # command, so $! is the server itself (RSS needs that)
  taskset -c 0 ip netns exec "$ns_s" "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  eval "pid_$name=$!"
}
start_server kperf "$agent" server --port 5201
start_server iperf3 iperf3 -s -p 5202
start_server iperf2 iperf -s -p 5203
start_server sockperf_tcp sockperf sr --tcp -p 5204
start_server sockperf_udp sockperf sr -p 5205
start_server qperf qperf -lp 5206
# the streams sweep: unpinned servers of their own (threads may use every core)
start_free() { # name cmd...
  local name=$1; shift
  ip netns exec "$ns_s" "$@" >>"$tmp/$name.log" 2>&1 &
  pids+=($!)
  eval "pid_$name=$!"
}
start_free kperf_free "$agent" server --port 5211
start_free iperf3_free iperf3 -s -p 5212
start_free iperf2_free iperf -s -p 5213
for _ in $(seq 50); do
  grep -q "listening on" "$tmp/kperf.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "listening on" "$tmp/kperf.log" || { echo "kperf-agent server did not start:"; cat "$tmp/kperf.log"; exit 1; }
sleep 0.5 # the reference servers print nothing when ready

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# shellcheck disable=SC2154 # pid_kperf is set by eval above
idle_rss=$(rss_kib "$pid_kperf")

# --- one measurement each: print one number ---------------------------------------------
# Each tool writes to a file that is parsed after it exits: a parser started alongside would
# share the pinned CPU with the measurement. (It did: python3 via pyenv takes ~0.4 s of CPU to
# start; kperf piped into it saw 5x more >0.5 ms stalls than sockperf piped into awk.)
out() { "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }; }
# Every figure comes from test/bench/refparse.py, which reads the tool's own summary and checks
# it against a second reading of the same output (sum of streams, bytes over time, operations
# over time) before it is used; a reading it cannot trust stops the benchmark. (iperf 2's
# "-y C" has no sum line for -P 4: a harness that read it printed one stream as the total.)
parse() { # kind: parse the saved output; "parse KIND all": stderr too (sockperf reports there)
  local f="$tmp/out"
  if [ "${2:-}" = all ]; then cat "$tmp/err" >>"$tmp/out"; fi
  python3 "$here/refparse.py" "$1" "$f" "$secs" || {
    cp "$f" "/tmp/kperf-bench-unparsed.$1"; echo "bench: output kept in /tmp/kperf-bench-unparsed.$1" >&2
    rm -f "$tmp/out" "$tmp/err"; return 1; }
  rm -f "$tmp/out" "$tmp/err"
}
kperf_c() { out in_c_or_s "$agent" client --server "$host:5201" --duration "${secs}s" --json "$@"; }
in_c_or_s() { if [ "$path" = loopback ]; then in_s "$@"; else in_c "$@"; fi; }

m_kperf_stream1() { kperf_c --tests TCP_STREAM && parse kperf-stream; }
m_kperf_stream4() { kperf_c --tests TCP_STREAM_MULTI --streams 4 && parse kperf-stream; }
m_iperf3_stream1() { out in_c_or_s iperf3 -c "$host" -p 5202 -t "$secs" -J && parse iperf3; }
m_iperf3_stream4() { out in_c_or_s iperf3 -c "$host" -p 5202 -t "$secs" -P 4 -J && parse iperf3; }
m_iperf2_stream4() { out in_c_or_s iperf -c "$host" -p 5203 -t "$secs" -P 4 -f m && parse iperf2; }
# the sweep: $n streams, unpinned servers
m_kperf_sweep() { out in_c_or_s "$agent" client --server "$host:5211" --duration "${secs}s" --json --tests TCP_STREAM_MULTI --streams "$n" && parse kperf-stream; }
m_iperf3_sweep() { out in_c_or_s iperf3 -c "$host" -p 5212 -t "$secs" -P "$n" -J && parse iperf3; }
m_iperf2_sweep() { out in_c_or_s iperf -c "$host" -p 5213 -t "$secs" -P "$n" -f m && parse iperf2; }
# UDP_STREAM at $rate, 1472-byte datagrams: "Mb/s loss_pct jitter_us" of the receiver
m_kperf_udp() { kperf_c --tests UDP_STREAM --udp-rate "$rate" --msg-size 1472 && parse kperf-udp; }
# -w 4M: the socket buffers kperf-agent asks for on its UDP sockets (4 MiB receive)
m_iperf3_udp() { out in_c_or_s iperf3 -c "$host" -p 5202 -t "$secs" -u -b "$rate" -l 1472 -w 4M -J && parse iperf3-udp; }
# the RR runs measure sockperf's window: 400 ms warm-up omitted, 50 ms shorter end
rr_window() { echo "--omit 400ms --duration $((secs * 1000 - 450))ms"; }
m_kperf_tcprr() { kperf_c --tests TCP_RR --msg-size 64 $(rr_window) && parse kperf-rr; }
m_kperf_udprr() { kperf_c --tests UDP_RR --msg-size 64 $(rr_window) && parse kperf-rr; }
m_kperf_crr() { kperf_c --tests TCP_CRR && parse kperf-crr; }
m_sockperf_tcprr() { out in_c_or_s sockperf pp --tcp -i "$host" -p 5204 -t "$secs" -m 64 --full-rtt && parse sockperf all; }
m_sockperf_udprr() { out in_c_or_s sockperf pp -i "$host" -p 5205 -t "$secs" -m 64 --full-rtt && parse sockperf all; }
# qperf reports one-way latency (half the round trip): refparse doubles it to compare with RR
m_qperf_tcplat() { out in_c_or_s qperf "$host" -lp 5206 -t "$secs" -m 64 -vv tcp_lat && parse qperf-lat; }

# client pinning: "same" = client on the servers' core, "split" = the other core
run_pinned() { # mode fn
  local mode=$1 fn=$2 cpu=1
  [ "$mode" = same ] && cpu=0
  taskset -c "$cpu" bash -c "$(declare -f); $fn"
}
run_free() { bash -c "$(declare -f); $1"; } # the sweep: the scheduler places everything
# A reference server that died under a sweep run (iperf 2.1.8's server aborted once after
# -P 128) is started again and that one run repeated; the summary says so. Any other failure,
# and any failure of kperf, still stops the benchmark.
restarts=""
alive() { # pid: running, not a zombie
  kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}
sweep_reading() { # tool: sets $reading (in this shell, so a restart is seen by the rest)
  reading=$(run_free "m_$1_sweep") || true
  [ -z "$reading" ] && [ "$1" != kperf ] || return 0
  local pid
  eval "pid=\$pid_$1_free"
  alive "$pid" && return 0
  echo "agent-vs-reference: the $1 server (sweep) died: $(tail -1 "$tmp/$1_free.log"); started again, run repeated" >&2
  restarts+="$1 server (sweep) died at $path, $n streams, pair $i; started again, run repeated. "
  case $1 in
    iperf3) start_free iperf3_free iperf3 -s -p 5212 ;;
    iperf2) start_free iperf2_free iperf -s -p 5213 ;;
  esac
  sleep 0.5 # the reference servers print nothing when ready
  reading=$(run_free "m_$1_sweep") || true
}

want() { [[ ",$groups," == *",$1,"* ]]; }
declare -A vals
record() { # key "value" | key "mean p50" (RR: stored as key_mean and key_p50)
  local a b c
  [ -n "$2" ] || { echo "agent-vs-reference: no trusted figure for $1; stopping (no ratio printed)" >&2; exit 1; }
  read -r a b c <<<"$2"
  if [ -n "$c" ]; then # UDP: rate, loss, jitter
    vals["$1_rate"]+="$a "; vals["$1_loss"]+="$b "; vals["$1_jitter"]+="$c "
  elif [ -n "$b" ]; then vals["$1_mean"]+="$a "; vals["$1_p50"]+="$b "; else vals["$1"]+="$a "; fi
}

median() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print("%.2f" % statistics.median(v) if v else "n/a")' "$@"; }
# The ratio column is the median of the pair-wise ratios; test/bench/ratios.py adds its
# distribution-free interval (>= 90% coverage) and a verdict against the row's target.
ratio_summary() { python3 "$here/ratios.py" "$1" "$2" "$3"; } # a-list b-list target

export agent secs tmp ns_c ns_s here
for path in ${paths//,/ }; do
  if [ "$path" = loopback ]; then host=127.0.0.1; else host=$ip_s; fi
  export path host
  echo "== path $path ($pairs interleaved pairs of ${secs}s runs)" >&2
  for i in $(seq "$pairs"); do
    # odd pairs run kperf first, even pairs the reference first
    both() { # key-a fn-a key-b fn-b [mode]
      local mode=${5:-split}
      if [ $((i % 2)) = 1 ]; then
        record "$1" "$(run_pinned "$mode" "$2")"; record "$3" "$(run_pinned "$mode" "$4")"
      else
        record "$3" "$(run_pinned "$mode" "$4")"; record "$1" "$(run_pinned "$mode" "$2")"
      fi
    }
    if want stream; then
      both "$path.stream1.kperf" m_kperf_stream1 "$path.stream1.iperf3" m_iperf3_stream1
      both "$path.stream4.kperf" m_kperf_stream4 "$path.stream4.iperf3" m_iperf3_stream4
      both "$path.stream4b.kperf" m_kperf_stream4 "$path.stream4b.iperf2" m_iperf2_stream4
    fi
    want rr && for mode in same split; do
      both "$path.tcprr_$mode.kperf" m_kperf_tcprr "$path.tcprr_$mode.sockperf" m_sockperf_tcprr "$mode"
      record "$path.tcprr_$mode.qperf" "$(run_pinned $mode m_qperf_tcplat)"
      both "$path.udprr_$mode.kperf" m_kperf_udprr "$path.udprr_$mode.sockperf" m_sockperf_udprr "$mode"
    done
    want crr && record "$path.crr.kperf" "$(run_pinned split m_kperf_crr)"
    if want sweep; then
      for n in $sweep_n; do
        export n
        # three tools, order rotated: kperf first on odd pairs, last on even ones
        if [ $((i % 2)) = 1 ]; then order="kperf iperf3 iperf2"; else order="iperf2 iperf3 kperf"; fi
        for t in $order; do sweep_reading "$t"; record "$path.sweep$n.$t" "$reading"; done
      done
    fi
    if want udp; then
      for rate in $udp_rates; do
        export rate
        both "$path.udp$rate.kperf" m_kperf_udp "$path.udp$rate.iperf3" m_iperf3_udp
      done
    fi
    echo "   pair $i done" >&2
  done
done

# client RSS with 32 streams (peak, VmHWM), on the veth path
ip netns exec "$ns_c" "$agent" client --server "$ip_s:5201" --tests TCP_STREAM_MULTI --streams 32 --duration 2s --json >"$tmp/c32.json" &
cpid=$!
hwm=0
while kill -0 "$cpid" 2>/dev/null; do
  h=$(awk '/^VmHWM/ {print $2}' "/proc/$cpid/status" 2>/dev/null || echo 0)
  [ "${h:-0}" -gt "$hwm" ] && hwm=$h
  sleep 0.05
done
wait "$cpid" || true

row() { printf '| %-10s | %-38s | %12s | %12s | %6s | %-15s | %-9s | %-12s |\n' "$@"; }
tally="" # one word per row with a target: met, within_noise, missed
cmp() { # path metric a-list b-list target: one row, the ratio with its interval and verdict
  local med lo_hi cov verdict
  read -r med lo_hi cov verdict <<<"$(ratio_summary "$3" "$4" "$5")"
  [ "$verdict" = - ] || tally+="$verdict "
  row "$1" "$2" "$(median $3)" "$(median $4)" "$med" "$lo_hi ${cov/-/}" "$5" "${verdict//_/ }"
}
{
  echo
  echo "kperf-agent vs reference tools — $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs, ${pairs} pairs x ${secs}s"
  echo
  row path metric kperf reference ratio "interval" target verdict
  row ---- ------ ----- --------- ----- -------- ------ -------
  for path in ${paths//,/ }; do
    v() { echo "${vals[$path.$1]:-}"; }
    want stream && cmp "$path" "TCP_STREAM Mb/s vs iperf3 -P1" "$(v stream1.kperf)" "$(v stream1.iperf3)" ">= 1.00"
    want stream && cmp "$path" "TCP_STREAM_MULTI(4) vs iperf3 -P4" "$(v stream4.kperf)" "$(v stream4.iperf3)" ">= 1.00"
    want stream && cmp "$path" "TCP_STREAM_MULTI(4) vs iperf -P4" "$(v stream4b.kperf)" "$(v stream4b.iperf2)" "report"
    want rr && for mode in same split; do
      cmp "$path" "TCP_RR mean us vs sockperf ($mode)" "$(v tcprr_$mode.kperf_mean)" "$(v tcprr_$mode.sockperf_mean)" "<= 1.05"
      cmp "$path" "TCP_RR p50 us vs sockperf ($mode)" "$(v tcprr_$mode.kperf_p50)" "$(v tcprr_$mode.sockperf_p50)" "<= 1.05"
      cmp "$path" "TCP_RR mean us vs qperf x2 ($mode)" "$(v tcprr_$mode.kperf_mean)" "$(v tcprr_$mode.qperf)" "report"
      cmp "$path" "UDP_RR mean us vs sockperf ($mode)" "$(v udprr_$mode.kperf_mean)" "$(v udprr_$mode.sockperf_mean)" "<= 1.05"
      cmp "$path" "UDP_RR p50 us vs sockperf ($mode)" "$(v udprr_$mode.kperf_p50)" "$(v udprr_$mode.sockperf_p50)" "<= 1.05"
    done
    want sweep && for n in $sweep_n; do
      cmp "$path" "streams $n Mb/s vs iperf3 -P$n (free)" "$(v sweep$n.kperf)" "$(v sweep$n.iperf3)" ">= 1.00"
      cmp "$path" "streams $n Mb/s vs iperf -P$n (free)" "$(v sweep$n.kperf)" "$(v sweep$n.iperf2)" ">= 1.00"
    done
    want udp && for rate in $udp_rates; do
      cmp "$path" "UDP_STREAM $rate rate Mb/s vs iperf3 -u" "$(v udp$rate.kperf_rate)" "$(v udp$rate.iperf3_rate)" ">= 1.00"
      row "$path" "UDP_STREAM $rate loss % vs iperf3 -u" "$(median $(v udp$rate.kperf_loss))" "$(median $(v udp$rate.iperf3_loss))" "-" "-" "report" ""
      row "$path" "UDP_STREAM $rate jitter us vs iperf3 -u" "$(median $(v udp$rate.kperf_jitter))" "$(median $(v udp$rate.iperf3_jitter))" "-" "-" "report" ""
    done
    # no Debian tool measures connect + transaction + close (iperf 2.1.8 --connect-only paces
    # its connects), so TCP_CRR is reported alone
    want crr && row "$path" "TCP_CRR conn/s (no reference)" "$(median $(v crr.kperf))" "-" "-" "-" "report" ""
  done
  echo
  count() { local w n=0; for w in $tally; do [ "$w" = "$1" ] && n=$((n + 1)); done; echo "$n"; }
  echo "Targets: $(count met) met, $(count within_noise) missed within noise (the interval reaches the target), $(count missed) missed"
  echo
  echo "Raw values, in run order (pairs alternate which tool runs first):"
  for k in $(printf '%s\n' "${!vals[@]}" | sort); do echo "  $k: ${vals[$k]}"; done
  echo
  echo "kperf-agent server RSS idle: $((idle_rss / 1024)) MiB ($idle_rss KiB; target <= 8 MiB)"
  echo "kperf-agent client peak RSS, 32 streams: $((hwm / 1024)) MiB ($hwm KiB; target <= 32 MiB)"
  echo "Reference servers restarted: ${restarts:-none}"
} | tee ${out:+"$out"}
