#!/usr/bin/env bash
# Hash field expiration (issue 21), BIN and optionally REF_BIN (the Valkey 9.1 oracle, or
# benches/valkey-jemalloc), each on its own server in turn:
#   1. memory: 1M hashes of 10 fields (f0..f9, 8-byte values) as listpacks without TTLs,
#      the same as hashtables without TTLs (hash-max-listpack-entries 0), and the same
#      with a TTL (HPEXPIRE 3600) on 5 fields of each; used_memory of each load (after
#      FLUSHALL and a fresh fill) and the bytes per volatile field:
#        (with TTLs - hashtables without) / 5M   (the TTL's own cost)
#        (with TTLs - listpacks without) / 5M    (what the issue asks: the conversion too)
#   2. stall: 1M hashes with 5 of their 10 fields due in the same second (HPEXPIREAT, 5M
#      fields), while a probe client on the server's CPU PINGs one at a time from 2 s
#      before that second until expired_fields reaches 5M (or 60 s): the probe's median,
#      p99 and worst round trip, and how long reclaiming took.
#   usage: benches/hfe-compare.sh BIN [REF_BIN]   (server on CPU 0, load on CPU 1)
#   PART=memory or PART=stall runs one part only; LEAD_S (default 60) is how far ahead of
#   the load the fields' second is set (the load must end before it: the run says so when
#   it did not, and its figures are then void).
set -euo pipefail
BIN=${1:?usage: benches/hfe-compare.sh BIN [REF_BIN]}
REF=${2:-}
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}; N=${N:-1000000}
PART=${PART:-both}; LEAD_S=${LEAD_S:-60}
here=$(cd "$(dirname "$0")" && pwd)

# RESP for N hashes: HSET h:i f0 v.. f9 v..; with ttl=1 also HPEXPIRE/HPEXPIREAT on f0..f4.
gen() { # TTLMODE (none | rel | at:<unix-ms>)
  python3 - "$N" "$1" <<'PY'
import sys
n, mode = int(sys.argv[1]), sys.argv[2]
out = sys.stdout.buffer
def cmd(*a):
    b = b"*%d\r\n" % len(a)
    for x in a:
        b += b"$%d\r\n%s\r\n" % (len(x), x)
    return b
buf = []
for i in range(n):
    k = b"h:%d" % i
    args = [b"HSET", k]
    for j in range(10):
        args += [b"f%d" % j, b"v%07d" % i]
    buf.append(cmd(*args))
    if mode == "rel":
        buf.append(cmd(b"HPEXPIRE", k, b"3600000", b"FIELDS", b"5", b"f0", b"f1", b"f2", b"f3", b"f4"))
    elif mode.startswith("at:"):
        buf.append(cmd(b"HPEXPIREAT", k, mode[3:].encode(), b"FIELDS", b"5", b"f0", b"f1", b"f2", b"f3", b"f4"))
    if len(buf) >= 20000:
        out.write(b"".join(buf)); buf = []
out.write(b"".join(buf))
PY
}

run_server() { # BIN -> sets port, pid
  port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
  taskset -c "$SERVER_CPU" "$1" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
}
cli() { redis-cli -p "$port" "$@"; }
used() { cli INFO memory | tr -d '\r' | awk -F: '/^used_memory:/{print $2}'; }
load() { gen "$1" | taskset -c "$LOAD_CPU" redis-cli -p "$port" --pipe >/dev/null; }

memory() { # BIN
  run_server "$1"
  cli FLUSHALL >/dev/null; load none; sleep 1; local lp; lp=$(used)
  cli FLUSHALL >/dev/null; cli CONFIG SET hash-max-listpack-entries 0 >/dev/null
  load none; sleep 1; local ht; ht=$(used)
  cli FLUSHALL >/dev/null; cli CONFIG SET hash-max-listpack-entries 128 >/dev/null
  load rel; sleep 1; local vol; vol=$(used)
  echo "$(basename "$1"): used_memory listpacks $lp, hashtables $ht, with 5 TTLs a hash $vol"
  awk -v lp="$lp" -v ht="$ht" -v v="$vol" -v n="$N" 'BEGIN{
    printf "  bytes per volatile field: %.1f over hashtables without TTLs, %.1f over listpacks without TTLs\n", (v-ht)/(5*n), (v-lp)/(5*n)}'
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

stall() { # BIN
  run_server "$1"
  local now at
  now=$(python3 -c 'import time;print(int(time.time()*1000))')
  at=$(( (now / 1000 + LEAD_S) * 1000 + 500 ))  # the middle of a second LEAD_S from now
  load "at:$at"
  now=$(python3 -c 'import time;print(int(time.time()*1000))')
  if [ "$now" -gt $(( at - 2000 )) ]; then
    echo "  the load ended $(( now - at + 2000 )) ms too late: raise LEAD_S"; kill "$pid"; return
  fi
  python3 - "$port" "$at" "$N" <<'PY'
import socket, sys, time
port, at, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
def call(b):
    s.sendall(b)
    return s.recv(65536)
def expired_fields():
    s.sendall(b"INFO stats\r\n")
    data = b""
    while b"\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n")
    size = int(head[1:])
    while len(body) < size + 2:
        body += s.recv(65536)
    for line in body.decode().split("\r\n"):
        if line.startswith("expired_fields:"):
            return int(line.split(":")[1])
    return 0
base = expired_fields()
while time.time() * 1000 < at - 2000:
    time.sleep(0.05)
lat, t_done = [], None
end = at / 1000 + 60
while time.time() < end:
    t = time.perf_counter()
    assert call(b"PING\r\n") == b"+PONG\r\n"
    lat.append((time.perf_counter() - t) * 1e6)
    if len(lat) % 500 == 0 and time.time() * 1000 > at and expired_fields() - base >= 5 * n:
        t_done = time.time() * 1000 - at
        break
lat.sort()
print(f"  probe: {len(lat)} PINGs, median {lat[len(lat)//2]:.0f} us, p99 {lat[int(len(lat)*0.99)]:.0f} us, "
      f"worst {lat[-1]:.0f} us; all {5*n} fields reclaimed "
      + (f"{t_done:.0f} ms after their second" if t_done is not None else "NOT within 60 s"))
PY
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

if [ "$PART" != stall ]; then
  echo "=== 1. memory, $N hashes of 10 fields, TTLs on 5"
  memory "$BIN"
  if [ -n "$REF" ]; then memory "$REF"; fi
fi
if [ "$PART" != memory ]; then
  echo "=== 2. event-loop stall, $((5 * N)) fields due in the same second"
  echo "$(basename "$BIN"):"; stall "$BIN"
  if [ -n "$REF" ]; then echo "$(basename "$REF"):"; stall "$REF"; fi
fi
