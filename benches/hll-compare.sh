#!/usr/bin/env bash
# PFCOUNT of the union of 8 dense HyperLogLogs: server CPU per call, side by side (issue 19).
# For each server, 3 runs of
#   redis-benchmark -n 200000 -P 16 -c 50 PFCOUNT hll:1 ... hll:8
# after filling hll:1..hll:8 with 20000 distinct elements each (dense: past
# hll-sparse-max-bytes), with the server pinned to CPU 0 and the load to CPU 1; utime+stime of
# the server from /proc/PID/stat over the benchmark only (the fill is not counted). The count
# each server gives is printed too: equal inputs must give equal counts.
#   usage: benches/hll-compare.sh BIN [BIN ...]
set -euo pipefail
tick=$(getconf CLK_TCK)
requests=200000
keys=(hll:1 hll:2 hll:3 hll:4 hll:5 hll:6 hll:7 hll:8)
fill() { # PFADD lines: 8 keys x 20 lines x 1000 elements, overlapping between keys
  for k in 1 2 3 4 5 6 7 8; do
    for line in $(seq 0 19); do
      printf 'PFADD hll:%s' "$k"
      seq -f " e%.0f" $(( k * 5000 + line * 1000 )) $(( k * 5000 + line * 1000 + 999 )) | tr -d '\n'
      printf '\n'
    done
  done
}
for bin in "$@"; do
  for run in 1 2 3; do
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    taskset -c 0 "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    fill | redis-cli -p "$port" >/dev/null
    for k in "${keys[@]}"; do
      enc=$(redis-cli -p "$port" PFDEBUG ENCODING "$k")
      [ "$enc" = dense ] || { echo "$k is $enc, not dense" >&2; kill $pid; exit 1; }
    done
    count=$(redis-cli -p "$port" PFCOUNT "${keys[@]}")
    c0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(taskset -c 1 redis-benchmark -p "$port" -q -n $requests -P 16 -c 50 PFCOUNT "${keys[@]}" 2>&1 | tr '\r' '\n' | grep 'per second' | tail -1)
    c1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill $pid; wait $pid 2>/dev/null || true
    awk -v a=$c0 -v b=$c1 -v t=$tick -v n=$requests -v o="$out" -v c=$count -v bn="$(basename $bin)" \
      'BEGIN{printf "%s cpu_us_per_call=%.3f count=%s %s\n", bn, (b-a)/t*1e6/n, c, o}'
  done
done
