#!/usr/bin/env bash
# The cost of the per-command latency histograms (issue 22), on one server, side by side in
# one run: SET and GET at -P 16 (50 clients, N requests, keys lt:<rand 100000>, 16-byte
# values) with `latency-tracking yes` and `no` (switched by CONFIG SET between runs,
# alternating, RUNS (default 3) of each): server CPU per request, from INFO's
# used_cpu_sys + used_cpu_user before and after each run, over the requests. The server is
# pinned to one CPU and the load to another.
#   usage: benches/latency-tracking.sh BIN        (server on CPU 0, load on CPU 1)
#   env:   N (default 2000000), RUNS (3), SERVER_CPU (0), LOAD_CPU (1)
set -euo pipefail
BIN=${1:?usage: benches/latency-tracking.sh BIN}
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}; RUNS=${RUNS:-3}; N=${N:-2000000}
BENCH=${BENCH:-$(command -v valkey-benchmark || command -v redis-benchmark)}
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" "$BIN" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
cli() { redis-cli -p "$port" "$@"; }
# Fill the keys GET reads, and warm up.
taskset -c "$LOAD_CPU" "$BENCH" -p "$port" -q -n 200000 -P 16 -r 100000 -d 16 -t set >/dev/null
# Server CPU seconds so far (user + system), from INFO.
cpu() { cli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(sys|user):/{s+=$2} END{printf "%.6f", s}'; }
measure() { # TRACKING TEST
  local tracking=$1 test=$2 c0 c1 out
  cli CONFIG SET latency-tracking "$tracking" >/dev/null
  c0=$(cpu)
  out=$(taskset -c "$LOAD_CPU" "$BENCH" -p "$port" -q -n "$N" -P 16 -c 50 -r 100000 -d 16 -t "$test" 2>&1 |
    tr '\r' '\n' | grep 'per second' | tail -1)
  c1=$(cpu)
  awk -v a="$c0" -v b="$c1" -v n="$N" -v tr="$tracking" -v t="$test" -v o="$out" \
    'BEGIN{printf "latency-tracking %-3s %-3s cpu_us_per_request=%6.3f   %s\n", tr, t, (b-a)*1e6/n, o}'
}
for _ in $(seq "$RUNS"); do
  for tracking in yes no; do
    measure "$tracking" set
    measure "$tracking" get
  done
done
# The histograms were fed: the percentiles of what was measured.
cli CONFIG SET latency-tracking yes >/dev/null
cli INFO latencystats | grep -E '_(get|set):' || true
