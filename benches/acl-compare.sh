#!/usr/bin/env bash
# The cost of ACL checks (issue 20), on one server, side by side in one run:
#   1. GET and SET at -P 16 (50 clients, 2,000,000 requests, keys app:<rand 100000>) as the
#      default user (no check: it may do everything) and as a user limited to
#      `~app:* +@read +@write` (each command's bit, each key against the pattern), runs
#      alternating, RUNS (default 3) of each: server CPU per request (utime + stime from
#      /proc/PID/stat over the run, over the requests);
#   2. AUTH with a wrong password, 100,000 times from 10 clients (user names u0..u99999,
#      so the refusals do not fold into one ACL LOG entry), while a probe
#      client sends PING one at a time: the probe's worst and median round trip, the ACL
#      LOG length (bounded by acllog-max-len, 128) and acl_access_denied_auth.
#   usage: benches/acl-compare.sh BIN        (server on CPU 0, load on CPU 1)
#   A summary gives the medians and, per round, the limited user's cost over the default's.
set -euo pipefail
BIN=${1:?usage: benches/acl-compare.sh BIN}
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}; RUNS=${RUNS:-3}; N=${N:-2000000}; CLIENTS=${CLIENTS:-50}
tick=$(getconf CLK_TCK)
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" "$BIN" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
cli() { redis-cli -p "$port" "$@"; }
cli ACL SETUSER app on '>apppw' '~app:*' '+@read' '+@write' >/dev/null
taskset -c "$LOAD_CPU" redis-benchmark -p "$port" -q -n 200000 -P 16 -r 100000 SET app:__rand_int__ vvvvvvvv >/dev/null
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
measure() { # WHO CMD...
  local who=$1; shift
  local auth=()
  if [ "$who" = app ]; then auth=(--user app -a apppw); fi
  local c0 c1 out
  c0=$(cpu)
  out=$(taskset -c "$LOAD_CPU" redis-benchmark -p "$port" "${auth[@]}" -q -n "$N" -P 16 -c "$CLIENTS" -r 100000 "$@" 2>&1 | tr '\r' '\n' | grep 'per second' | tail -1)
  c1=$(cpu)
  awk -v a="$c0" -v b="$c1" -v t="$tick" -v n="$N" -v who="$who" -v what="$1" -v o="$out" \
    'BEGIN{printf "%-8s %-4s cpu_us_per_request=%6.3f   %s\n", who, what, (b-a)/t*1e6/n, o}' |
    tee -a "$runs_log"
}
runs_log=$(mktemp)
for run in $(seq "$RUNS"); do
  for who in default app; do
    measure "$who" SET app:__rand_int__ vvvvvvvv
    measure "$who" GET app:__rand_int__
  done
done
# Each round runs default and limited back to back, so a round's ratio is the check's cost
# under the same machine load; the median over the rounds discards the rounds that other
# work on the machine disturbed.
python3 - "$runs_log" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    who, what, _, cpu = line.split()[:4]
    runs.setdefault((who, what), []).append(float(cpu))
for what in ("SET", "GET"):
    d, a = runs[("default", what)], runs[("app", what)]
    ratios = [y / x - 1 for x, y in zip(d, a)]
    print(f"{what}: median cpu_us default {statistics.median(d):.3f}, limited "
          f"{statistics.median(a):.3f}; per-round cost median {statistics.median(ratios):+.1%} "
          f"(rounds: {' '.join(f'{r:+.1%}' for r in ratios)})")
PY
rm -f "$runs_log"
echo "--- AUTH flood"
# redis-benchmark stops at the first error reply: 10 Python clients (processes, on the load
# CPU) send the AUTHs, pipelined 100 at a time, and count the WRONGPASS replies, while a
# probe (a process on the server's CPU, so that the load's own scheduling is not what it
# measures) PINGs one at a time until they are done.
probe_out=$(mktemp)
taskset -c "$SERVER_CPU" python3 - "$port" > "$probe_out" <<'PY' &
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
lat = []
end = time.time() + 30
while time.time() < end and not os.path.exists("/tmp/acl-flood-done-" + sys.argv[1]):
    t = time.perf_counter()
    s.sendall(b"PING\r\n")
    assert s.recv(64) == b"+PONG\r\n"
    lat.append((time.perf_counter() - t) * 1e6)
lat.sort()
print(f"probe meanwhile: {len(lat)} PINGs, median {lat[len(lat)//2]:.0f} us, "
      f"p99 {lat[int(len(lat)*0.99)]:.0f} us, worst {lat[-1]:.0f} us")
PY
probe=$!
sleep 0.3
c0=$(cpu)
taskset -c "$LOAD_CPU" python3 - "$port" <<'PY'
import socket, sys, time
from multiprocessing import Pool
PORT = int(sys.argv[1])
def client(i):
    s = socket.create_connection(("127.0.0.1", PORT))
    f = s.makefile("rb")
    wrong = 0
    for batch in range(100):
        cmds = b"".join(
            b"*3\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n$9\r\nwrongpass\r\n" % (len(u), u)
            for u in (b"u%d" % (i * 10000 + batch * 100 + k) for k in range(100)))
        s.sendall(cmds)
        for _ in range(100):
            wrong += f.readline().startswith(b"-WRONGPASS")
    return wrong
t = time.time()
with Pool(10) as p:
    n = sum(p.map(client, range(10)))
print(f"AUTH flood: {n} WRONGPASS replies to 100000 AUTHs from 10 clients in {time.time() - t:.2f} s")
PY
c1=$(cpu)
touch "/tmp/acl-flood-done-$port"
wait $probe
rm -f "/tmp/acl-flood-done-$port"
cat "$probe_out"; rm -f "$probe_out"
awk -v a="$c0" -v b="$c1" -v t="$tick" 'BEGIN{printf "server CPU per refused AUTH: %.2f us (probe PINGs included)\n", (b-a)/t*1e6/100000}'
echo "ACL LOG entries: $(cli ACL LOG 100000 | grep -c '^count$' || true) (acllog-max-len $(cli CONFIG GET acllog-max-len | tail -1))"
cli INFO stats | grep acl_access_denied_auth
