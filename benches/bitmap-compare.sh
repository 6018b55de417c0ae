#!/usr/bin/env bash
# BITCOUNT and BITOP AND over 1 MiB and 64 MiB values: server CPU per call, side by side
# (issue 19).
#   usage: benches/bitmap-compare.sh BIN [BIN ...]
# For each server, RUNS (default 3) runs of each row; every run starts the server afresh on a
# free 127.0.0.1 port (`--save '' --appendonly no`), pinned to CPU 0 (SERVER_CPU), loads keys
# a and b with the same random bytes for every server (redis-cli -x SET), then runs
#   redis-benchmark -n N -c 1 BITCOUNT a          (N: 20000 at 1 MiB, 300 at 64 MiB)
#   redis-benchmark -n N -c 1 BITOP AND d a b     (N: 5000 at 1 MiB, 60 at 64 MiB)
# with the load pinned to CPU 1 (LOAD_CPU); a PING row (20000 calls) first gives the cost of
# a request that does nothing, to subtract (on a VM most of it is the kernel's cross-CPU
# wake-up, in stime). CPU per call = the server's utime + stime (all of its threads, from
# /proc/PID/stat, in clock ticks) over the run, divided by N: so what BITOP's destination
# costs to free counts too, wherever the server frees it. Each N gives about a second of
# server CPU or more, so the 10 ms clock tick is about 1% or less.
# Memory: 2 x 64 MiB values and BITOP's 64 MiB result per server, one server at a time.
set -euo pipefail
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}; RUNS=${RUNS:-3}
tick=$(getconf CLK_TCK)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bitmap-compare.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# The values: random bytes from a fixed seed, the same for every server and run.
for mib in 1 64; do
  python3 -c "import random,sys;r=random.Random($mib);sys.stdout.buffer.write(r.randbytes($mib<<20))" > "$WORK/a$mib"
  python3 -c "import random,sys;r=random.Random($mib+100);sys.stdout.buffer.write(r.randbytes($mib<<20))" > "$WORK/b$mib"
done

# measure BIN MIB N COMMAND...: one measured run of one server.
measure() {
  local bin=$1 mib=$2 n=$3; shift 3
  local port c0 c1 out
  port=$(free_port)
  taskset -c "$SERVER_CPU" "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$port" -x SET a < "$WORK/a$mib" >/dev/null
  redis-cli -p "$port" -x SET b < "$WORK/b$mib" >/dev/null
  # One call first, so that the destination exists and every measured BITOP replaces it.
  redis-cli -p "$port" "$@" >/dev/null
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  out=$(taskset -c "$LOAD_CPU" redis-benchmark -p "$port" -q -n "$n" -c 1 "$@" 2>&1 | tr '\r' '\n' | grep 'per second' | tail -1)
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  local what="$*"
  if [ "$1" != PING ]; then what="$what ($mib MiB)"; fi
  awk -v a="$c0" -v b="$c1" -v t="$tick" -v n="$n" -v name="$(basename "$bin")" -v what="$what" -v o="$out" \
    'BEGIN{printf "%-22s %-28s cpu_us_per_call=%10.1f   %s\n", name, what, (b-a)/t*1e6/n, o}'
}

for spec in "1 20000 PING" "1 20000 BITCOUNT a" "64 300 BITCOUNT a" "1 5000 BITOP AND d a b" "64 60 BITOP AND d a b"; do
  read -r mib n cmd <<< "$spec"
  for run in $(seq "$RUNS"); do
    for bin in "$@"; do
      # shellcheck disable=SC2086
      measure "$bin" "$mib" "$n" $cmd
    done
  done
done
