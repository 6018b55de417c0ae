#!/usr/bin/env bash
# Aggregate types, side by side with a reference server (default: Debian's redis-server),
# measured in one run on this machine (issue 6's figures).
#   usage: benches/types-compare.sh OURS_BIN [REF_BIN] [SCALE]
# Memory: each workload is loaded into an empty server with `redis-cli --pipe`, and the
# used_memory delta is divided by the number of elements (fields, items, members):
#   hash  : 1M hashes of 4 short fields       (HSET h:N f1 v1 .. f4 v4)
#   list  : 100k lists of 100 small elements  (RPUSH l:N 0..99)
#   set   : 1M sets of 5 integers             (SADD s:N 1 2 3 4 5)
#   zset  : 100k sorted sets of 50 members    (ZADD z:N 1 m1 .. 50 m50)
#   biglist: one list of 10M elements         (RPUSH big, 1000 elements per command)
# SCALE (default 1) divides every count, for a quick run.
# CPU: `redis-benchmark -t lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,
# lrange_600 -P 16`, server pinned to CPU 0 and the load to CPU 1, server CPU (utime+stime)
# per request over the whole run, plus each test's requests per second.
set -euo pipefail
OURS=$1; REF=${2:-$(command -v redis-server)}; SCALE=${3:-1}
BENCH=${BENCH:-$(command -v valkey-benchmark || command -v redis-benchmark)}
TESTS=lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,lrange_600
N_BENCH=${N_BENCH:-200000}
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
used() { redis-cli -p "$1" info memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)/\1/p'; }
gen() { # WORKLOAD -> RESP commands on stdout; prints the element count on fd 3
  python3 - "$1" "$SCALE" <<'PY'
import sys
w, scale = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
def cmd(args):
    b = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        b.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(b)
n = 0
buf = []
def emit(args):
    buf.append(cmd(args))
    if len(buf) >= 10000:
        out.write(b"".join(buf)); buf.clear()
if w == "hash":
    for i in range(1_000_000 // scale):
        emit(["HSET", "h:%d" % i, "f1", "v1", "f2", "v2", "f3", "v3", "f4", "v4"]); n += 4
elif w == "list":
    items = [str(j) for j in range(100)]
    for i in range(100_000 // scale):
        emit(["RPUSH", "l:%d" % i] + items); n += 100
elif w == "set":
    for i in range(1_000_000 // scale):
        emit(["SADD", "s:%d" % i, 1, 2, 3, 4, 5]); n += 5
elif w == "zset":
    pairs = []
    for j in range(1, 51):
        pairs += [j, "m%d" % j]
    for i in range(100_000 // scale):
        emit(["ZADD", "z:%d" % i] + pairs); n += 50
elif w == "biglist":
    for i in range(10_000_000 // 1000 // scale):
        emit(["RPUSH", "big"] + [str(i * 1000 + j) for j in range(1000)]); n += 1000
out.write(b"".join(buf))
out.flush()
print(n, file=sys.stderr)
PY
}
declare -A R
WORKLOADS="hash list set zset biglist"
for who in ours ref; do
  bin=$OURS; [ "$who" = ref ] && bin=$REF
  port=$(free_port); pid=$(start "$bin" "$port")
  for w in $WORKLOADS; do
    redis-cli -p "$port" flushall >/dev/null
    sleep 0.5
    before=$(used "$port")
    n=$( { gen "$w" | taskset -c 1 redis-cli -p "$port" --pipe >/dev/null; } 2>&1 | tail -1)
    after=$(used "$port")
    R[$who.$w]=$(awk -v a="$before" -v b="$after" -v n="$n" 'BEGIN{printf "%.2f", (b-a)/n}')
    R[$who.$w.enc]=$(case $w in hash) k=h:0;; list) k=l:0;; set) k=s:0;; zset) k=z:0;; biglist) k=big;; esac; redis-cli -p "$port" object encoding "$k")
  done
  redis-cli -p "$port" flushall >/dev/null
  tick=$(getconf CLK_TCK)
  c0=$(awk '{print $14+$15}' /proc/"$pid"/stat)
  R[$who.rps]=$(taskset -c 1 "$BENCH" -p "$port" -t "$TESTS" -n "$N_BENCH" -r 100000 -P 16 -q 2>&1 | tr '\r' '\n' | grep 'requests per second' | sed -E 's/^([A-Z_0-9]+[^:]*): ([0-9.]+) requests.*/\1=\2/' | tr '\n' ' ')
  c1=$(awk '{print $14+$15}' /proc/"$pid"/stat)
  ntests=$(echo "$TESTS" | tr ',' '\n' | wc -l)
  R[$who.cpu]=$(awk -v c0="$c0" -v c1="$c1" -v tick="$tick" -v n="$N_BENCH" -v t="$ntests" 'BEGIN{printf "%.3f", (c1-c0)/tick*1e6/(n*t)}')
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
printf '%-34s %12s %12s %8s\n' figure ours reference ratio
for w in $WORKLOADS; do
  printf '%-34s %12s %12s %8s\n' "$w used_memory B/element" "${R[ours.$w]}" "${R[ref.$w]}" \
    "$(awk -v a="${R[ours.$w]}" -v b="${R[ref.$w]}" 'BEGIN{printf "%.3f", a/b}')"
  printf '%-34s %12s %12s\n' "  encoding" "${R[ours.$w.enc]}" "${R[ref.$w.enc]}"
done
printf '%-34s %12s %12s %8s\n' "cpu us/req ($TESTS -P 16)" "${R[ours.cpu]}" "${R[ref.cpu]}" \
  "$(awk -v a="${R[ours.cpu]}" -v b="${R[ref.cpu]}" 'BEGIN{printf "%.3f", a/b}')"
echo "ours rps: ${R[ours.rps]}"
echo "reference rps: ${R[ref.rps]}"
