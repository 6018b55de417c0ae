#!/usr/bin/env bash
# Server CPU per request of two builds, measured alternately in the same minute: both servers
# run at once (pinned to CPU 0, the load to CPU 1), and each round measures A then B with the
# load of ../shared/bench/compare.sh (SET+GET, 16-byte values, 1M random keys, 50 clients).
# Where compare.sh measures one server after the other, this spreads the machine's drift
# over both. Prints one "A B" line of us/request per round; compare the medians, and run it
# in both orders (the first of a pair pays a little more: A against itself reads ~1.03).
#
#   usage: benches/cpu-alternating.sh BIN_A BIN_B [PIPELINE] [ROUNDS]
set -euo pipefail
A=$1; B=$2; P=${3:-1}; R=${4:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
CPU_PER_OP=${CPU_PER_OP:-$HERE/../../shared/bench/cpu-per-op.sh}
BENCH=${BENCH:-$(command -v valkey-benchmark || command -v redis-benchmark)}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
pa=$(free_port); taskset -c 0 "$A" --port "$pa" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & ia=$!
pb=$(free_port); taskset -c 0 "$B" --port "$pb" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & ib=$!
trap 'kill $ia $ib 2>/dev/null || true' EXIT
for port in "$pa" "$pb"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
run() { "$CPU_PER_OP" "$1" "$2" taskset -c 1 "$BENCH" -t set,get -n 200000 -r 1000000 -d 16 -c 50 -P "$P" |
  sed -E 's/server_cpu_us_per_req=([0-9.]+).*/\1/'; }
for _ in $(seq "$R"); do
  echo "$(run "$pa" "$ia") $(run "$pb" "$ib")"
done
