#!/usr/bin/env bash
# Server instructions per request, counted by valgrind's callgrind: a figure that this
# machine's noise does not move, where server CPU time per request (compare.sh) drifts by
# 10-20% between runs. User-space instructions only (the kernel's share of a request is not
# counted), SET+GET of 16-byte values over 1M random keys, 50 clients.
#
#   usage: benches/instr-per-request.sh BIN [PIPELINE] [REQUESTS_PER_TEST]
#
# The server runs under callgrind; after a warm-up of 20,000 requests the counters are zeroed
# and REQUESTS_PER_TEST SETs and as many GETs are sent; the instructions counted until the dump
# are divided by the requests. Works for any valkey-server compatible binary (ferrokey,
# valkey-server, redis-server). Prints `BIN -P PIPELINE instructions/request N`.
# SERVER_ARGS adds arguments to the server's command line (`--latency-tracking no`).
# ACL_USER=1 runs the load as a user limited to `~key:* +@read +@write` (issue 20's check)
# instead of the default user, which may do everything and is not checked.
set -euo pipefail
BIN=$1
P=${2:-16}
N=${3:-100000}
BENCH=${BENCH:-$(command -v valkey-benchmark || command -v redis-benchmark)}
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
dir=$(mktemp -d)
valgrind --tool=callgrind ${CG_ARGS:-} --callgrind-out-file="$dir/cg.out" "$BIN" --port "$port" \
    --bind 127.0.0.1 --save '' --appendonly no ${SERVER_ARGS:-} >"$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; if [ -n "${KEEP:-}" ]; then cp "$dir"/cg.out* "$KEEP"/ 2>/dev/null; fi; rm -rf "$dir"' EXIT
for _ in $(seq 300); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
auth=()
if [ "${ACL_USER:-0}" = 1 ]; then
    redis-cli -p "$port" ACL SETUSER app on '>apppw' '~key:*' '+@read' '+@write' >/dev/null
    auth=(--user app -a apppw)
fi
"$BENCH" -p "$port" "${auth[@]}" -t set,get -n 20000 -r 1000000 -d 16 -c 50 -P "$P" -q >/dev/null
callgrind_control -z "$pid" >/dev/null
"$BENCH" -p "$port" "${auth[@]}" -t set,get -n "$N" -r 1000000 -d 16 -c 50 -P "$P" -q >/dev/null
callgrind_control -d "$pid" >/dev/null
sleep 1
# The dump made after the workload holds the most instructions of the files written.
ir=$(for f in "$dir"/cg.out*; do grep -h '^summary:\|^totals:' "$f" | head -1; done |
    awk '{print $2}' | sort -n | tail -1)
awk -v b="$BIN" -v p="$P" -v i="$ir" -v n="$N" \
    -v a="${SERVER_ARGS:-}${auth[*]:+ ${auth[*]}}" \
    'BEGIN { printf "%s %s -P %s instructions/request %.0f\n", b, a, p, i / (2 * n) }'
