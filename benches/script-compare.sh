#!/usr/bin/env bash
# Scripting, side by side with a reference server (default: the Valkey 9.1 oracle,
# target/oracle/valkey-server), measured in one run on this machine (issue 17's figures).
#   usage: benches/script-compare.sh OURS_BIN [REF_BIN] [N]
# CPU: a script doing one GET and one SET of its key, called as EVALSHA and as FCALL of the
# same body registered as a function:
#   redis-benchmark -n N -P 16 EVALSHA <sha> 1 key   /   ... FCALL getset 1 key
# server pinned to CPU 0, load to CPU 1, server CPU (utime+stime) per call over the run, best
# of 3 runs, with the calls per second of the best run.
# redis-py: the `Lock` acquire/release loop (SET NX PX, then the release script by EVALSHA)
# from one Python client, loops per second, best of 3 (needs `pip install redis`, which this
# script does into target/pyredis when the module is missing).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OURS=$1; REF=${2:-$HERE/../target/oracle/valkey-server}; N=${3:-1000000}
BENCH=${BENCH:-$(command -v valkey-benchmark || command -v redis-benchmark)}
LOCK_LOOPS=${LOCK_LOOPS:-20000}
BODY="local v = server.call('GET', KEYS[1]) server.call('SET', KEYS[1], 'x') return v"
LIB="#!lua name=bench
server.register_function('getset', function(keys, args) local v = server.call('GET', keys[1]) server.call('SET', keys[1], 'x') return v end)"
PYDIR=$HERE/../target/pyredis
python3 -c 'import redis' 2>/dev/null || [ -d "$PYDIR/redis" ] || pip install --quiet --target "$PYDIR" redis
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
start() { # BIN PORT -> pid
  taskset -c 0 "$1" --port "$2" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
  local pid=$!; pids+=("$pid")
  for _ in $(seq 100); do redis-cli -p "$2" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$2" ping >/dev/null || { echo "server $1 did not start" >&2; exit 1; }
  echo "$pid"
}
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
run_one() { # PORT PID ARGS... -> "us_per_call calls_per_s"
  local port=$1 pid=$2; shift 2
  local c0 c1 out
  c0=$(cpu "$pid")
  out=$(taskset -c 1 "$BENCH" -p "$port" -n "$N" -P 16 -c 50 -q "$@" 2>&1 | tr '\r' '\n' | grep 'requests per second' | tail -1)
  c1=$(cpu "$pid")
  awk -v c0="$c0" -v c1="$c1" -v n="$N" -v tick="$(getconf CLK_TCK)" -v o="$out" \
    'BEGIN{rps=o; sub(/ requests per second.*/, "", rps); sub(/.* /, "", rps); printf "%.3f %s\n", (c1-c0)/tick*1e6/n, rps}'
}
best_of_3() { # PORT PID ARGS...
  local best="" line
  for _ in 1 2 3; do
    line=$(run_one "$@")
    best=$(printf '%s\n%s\n' "$best" "$line" | awk 'NF' | sort -n | head -1)
  done
  echo "$best"
}
lock_loop() { # PORT -> loops per second, best of 3
  PYTHONPATH=$PYDIR taskset -c 1 python3 - "$1" "$LOCK_LOOPS" <<'EOF'
import sys, time, redis
r = redis.Redis(port=int(sys.argv[1]))
n = int(sys.argv[2])
best = 0
for _ in range(3):
    t = time.perf_counter()
    for _ in range(n):
        lock = r.lock('bench:lock', timeout=10)
        assert lock.acquire(blocking=False)
        lock.release()
    best = max(best, n / (time.perf_counter() - t))
print(f"{best:.0f}")
EOF
}
declare -A R
for who in ours ref; do
  bin=$OURS; [ "$who" = ref ] && bin=$REF
  port=$(free_port); pid=$(start "$bin" "$port")
  sha=$(redis-cli -p "$port" script load "$BODY")
  redis-cli -p "$port" function load "$LIB" >/dev/null
  R[$who.evalsha]=$(best_of_3 "$port" "$pid" EVALSHA "$sha" 1 key)
  R[$who.fcall]=$(best_of_3 "$port" "$pid" FCALL getset 1 key)
  R[$who.lock]=$(lock_loop "$port")
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
printf '%-34s %16s %16s %8s\n' figure ours reference ratio
for f in evalsha fcall; do
  o=${R[ours.$f]}; r=${R[ref.$f]}
  printf '%-34s %16s %16s %8s\n' "cpu us/call $f -P 16" "${o%% *}" "${r%% *}" \
    "$(awk -v a="${o%% *}" -v b="${r%% *}" 'BEGIN{printf "%.3f", a/b}')"
  printf '%-34s %16s %16s\n' "  calls/s $f -P 16" "${o##* }" "${r##* }"
done
printf '%-34s %16s %16s %8s\n' "redis-py Lock loops/s" "${R[ours.lock]}" "${R[ref.lock]}" \
  "$(awk -v a="${R[ours.lock]}" -v b="${R[ref.lock]}" 'BEGIN{printf "%.3f", a/b}')"
