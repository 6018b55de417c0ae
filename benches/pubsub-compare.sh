#!/usr/bin/env bash
# Pub/sub fan-out, side by side with a reference server (default: Debian's redis-server), in
# one run on this machine (issue 7's figure): one publisher (redis-benchmark running
# PUBLISH with 64-byte messages, -P 16) and SUBS subscribers (redis-cli SUBSCRIBE, output
# discarded). Reports deliveries per second (publishes/s x subscribers that received them)
# and the server's CPU time (utime+stime) per delivered message.
#   usage: benches/pubsub-compare.sh OURS_BIN [REF_BIN] [SUBS] [N]
set -euo pipefail
OURS=$1; REF=${2:-$(command -v redis-server)}; SUBS=${3:-50}; N=${4:-200000}
BENCH=${BENCH:-$(command -v valkey-benchmark || command -v redis-benchmark)}
MSG=$(head -c 64 /dev/zero | tr '\0' 'm')
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
declare -A R
for who in ours ref; do
  bin=$OURS; [ "$who" = ref ] && bin=$REF
  port=$(free_port)
  taskset -c 0 "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --client-output-buffer-limit "pubsub 0 0 0" >/dev/null 2>&1 &
  pid=$!; pids+=("$pid")
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  subs=()
  for _ in $(seq "$SUBS"); do
    taskset -c 1 redis-cli -p "$port" subscribe chan >/dev/null 2>&1 &
    subs+=($!); pids+=($!)
  done
  for _ in $(seq 100); do
    n=$(redis-cli -p "$port" pubsub numsub chan | tail -1)
    [ "$n" = "$SUBS" ] && break; sleep 0.1
  done
  tick=$(getconf CLK_TCK)
  c0=$(awk '{print $14+$15}' /proc/"$pid"/stat); t0=$(date +%s.%N)
  out=$(taskset -c 1 "$BENCH" -p "$port" -n "$N" -c 1 -P 16 -q publish chan "$MSG" 2>&1 | tr '\r' '\n' | grep 'requests per second' | tail -1)
  c1=$(awk '{print $14+$15}' /proc/"$pid"/stat); t1=$(date +%s.%N)
  R[$who.rate]=$(awk -v n="$N" -v s="$SUBS" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", n*s/(b-a)}')
  R[$who.cpu]=$(awk -v c0="$c0" -v c1="$c1" -v tick="$tick" -v n="$N" -v s="$SUBS" 'BEGIN{printf "%.3f", (c1-c0)/tick*1e6/(n*s)}')
  R[$who.pub]=$out
  for p in "${subs[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
printf '%-40s %12s %12s %8s\n' figure ours reference ratio
printf '%-40s %12s %12s %8s\n' "deliveries per second ($SUBS subscribers)" "${R[ours.rate]}" "${R[ref.rate]}" \
  "$(awk -v a="${R[ours.rate]}" -v b="${R[ref.rate]}" 'BEGIN{printf "%.3f", a/b}')"
printf '%-40s %12s %12s %8s\n' "server cpu us per delivered message" "${R[ours.cpu]}" "${R[ref.cpu]}" \
  "$(awk -v a="${R[ours.cpu]}" -v b="${R[ref.cpu]}" 'BEGIN{printf "%.3f", a/b}')"
echo "ours: ${R[ours.pub]}"
echo "reference: ${R[ref.pub]}"
