#!/usr/bin/env bash
# XADD's server CPU per request, side by side (issue 18): for each server, 3 runs of
#   redis-benchmark -n 1000000 -P 16 -c 50 -r 1000 XADD s:__rand_int__ MAXLEN ~ 1000 * <5 fields>
# with the server pinned to CPU 0 and the load to CPU 1; utime+stime of the server over the run.
#   usage: benches/stream-xadd.sh BIN [BIN ...]
set -euo pipefail
tick=$(getconf CLK_TCK)
for bin in "$@"; do
  for run in 1 2 3; do
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    taskset -c 0 "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    c0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(taskset -c 1 redis-benchmark -p "$port" -q -n 1000000 -P 16 -c 50 -r 1000 XADD 's:__rand_int__' MAXLEN '~' 1000 '*' f1 v1234567 f2 v1234567 f3 v1234567 f4 v1234567 f5 v1234567 2>&1 | tr '\r' '\n' | grep 'per second' | tail -1)
    c1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill $pid; wait $pid 2>/dev/null || true
    awk -v a=$c0 -v b=$c1 -v t=$tick -v o="$out" -v n="$(basename $bin)" 'BEGIN{printf "%s cpu_us_per_req=%.3f %s\n", n, (b-a)/t*1e6/1000000, o}'
  done
done
