#!/usr/bin/env bash
# Replication lag and the primary's CPU per request under a steady write load (issue 16):
#
#   [BENCH_CORE=0|1] benches/repl-lag.sh PRIMARY_BIN REPLICA_BIN [REQUESTS]
#
# The primary runs on core 0, the replica on core 1, and redis-benchmark (`-t set -d 100 -r
# 1000000 -c 50`) on BENCH_CORE: core 1 by default, beside the replica, or core 0, beside the
# primary, which leaves the replica a core of its own as it would have on its own machine
# (with two cores, one of the servers must share with the load). The kernel's TCP congestion
# control (printed as tcp_cc) changes the tail on loopback: see the README. While the load runs, a sampler reads the replica's
# `slave_repl_offset` and then the primary's `master_repl_offset` every 10 ms; the lag of a
# sample is their difference in bytes (an upper bound: the primary's is read second), also
# given in milliseconds of the stream's average rate (a faster primary writes more bytes in
# the same time). The
# primary's CPU time (user + system, from /proc) per request is measured twice, first with no
# replica, then with the replica attached. Servers are started on free ports here and
# stopped by their PIDs.
set -euo pipefail
P=${1:?primary binary}; R=${2:?replica binary}; N=${3:-2000000}
. "$(dirname "$0")/repl-pair.sh"
start_pair "$P" "$R"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
load() { taskset -c "${BENCH_CORE:-1}" redis-benchmark -p "$PP" -t set -n "$N" -d 100 -r 1000000 -c 50 -q > /dev/null; }
per_request() {  # CPU microseconds per request of the primary over one load run
  local a b; a=$(cpu_ticks $PPID_); load; b=$(cpu_ticks $PPID_)
  echo "scale=3; ($b - $a) * 1000000 / $HZ / $N" | bc
}
ALONE=$(per_request)
follow_primary
python3 - "$PP" "$RP" > "$D/lag" <<'PY' &
import socket, sys, time
def conn(port):
    s = socket.create_connection(("127.0.0.1", int(port))); return s
def offset(s, field):
    s.sendall(b"INFO replication\r\n")
    data = b""
    while True:
        data += s.recv(65536)
        head, _, rest = data.partition(b"\r\n")
        if head.startswith(b"$") and len(rest) >= int(head[1:]) + 2:
            break
    for line in rest.decode().split("\r\n"):
        if line.startswith(field + ":"):
            return int(line.split(":")[1])
p, r = conn(sys.argv[1]), conn(sys.argv[2])
end = time.time() + 600
while time.time() < end:
    ro = offset(r, "slave_repl_offset"); po = offset(p, "master_repl_offset")
    print(po - ro, time.time(), po, flush=True)
    time.sleep(0.01)
PY
SAMPLER=$!
WITH=$(per_request)
kill $SAMPLER 2>/dev/null || true
# The stream's rate while the load ran (bytes per ms), to express the lag in time too.
RATE=$(awk 'NR == 1 {t0 = $2; o0 = $3} {t1 = $2; o1 = $3} END {printf "%.3f", (o1 - o0) / ((t1 - t0) * 1000)}' "$D/lag")
cut -d' ' -f1 "$D/lag" | sort -n > "$D/lag.sorted"
COUNT=$(wc -l < "$D/lag.sorted")
pct() { sed -n "$(( ($1 * COUNT + 99) / 100 ))p" "$D/lag.sorted"; }
ms() { echo "scale=2; $1 / $RATE" | bc; }
P50=$(pct 50); P99=$(pct 99)
printf 'tcp_cc=%s bench_core=%s primary=%s replica=%s requests=%s cpu_us_per_req_alone=%s cpu_us_per_req_with_replica=%s lag_bytes_p50=%s lag_bytes_p99=%s stream_bytes_per_ms=%s lag_ms_p50=%s lag_ms_p99=%s samples=%s\n' \
  "$(sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null || echo unknown)" "${BENCH_CORE:-1}" "$(basename "$P")" "$(basename "$R")" "$N" "$ALONE" "$WITH" "$P50" "$P99" "$RATE" "$(ms "$P50")" "$(ms "$P99")" "$COUNT"
