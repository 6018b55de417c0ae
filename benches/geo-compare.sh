#!/usr/bin/env bash
# GEOSEARCH's server CPU per call, side by side (issue 19): for each server, a geo index of
# 1,000,000 members spread uniformly over lon -5..10, lat 42..51 (about 0.9 per km^2, the
# same points for every server, loaded with redis-cli --pipe), then 3 runs of
#   redis-benchmark -n 200000 -P 16 -c 50 -r 1000000 \
#     GEOSEARCH geo FROMLONLAT 2.3__rand_int__ 48.8__rand_int__ BYRADIUS $RADIUS_KM km
# (about 70 members within the default 5 km), with the server pinned to CPU 0 and the load
# to CPU 1; utime+stime of the server pid over each run, divided by the calls.
#   usage: benches/geo-compare.sh BIN [BIN ...]      (RADIUS_KM=5, CALLS=200000)
set -euo pipefail
tick=$(getconf CLK_TCK)
radius=${RADIUS_KM:-5}
calls=${CALLS:-200000}
data=$(mktemp /tmp/geo-compare.XXXXXX)
trap 'rm -f "$data"' EXIT
# 1000 GEOADDs of 1000 members each, as RESP, from a fixed seed.
python3 - "$data" <<'EOF'
import random, sys
rnd = random.Random(19)
with open(sys.argv[1], "wb") as f:
    for batch in range(1000):
        args = [b"GEOADD", b"geo"]
        for i in range(1000):
            args += [b"%.6f" % rnd.uniform(-5, 10), b"%.6f" % rnd.uniform(42, 51), b"m%d" % (batch * 1000 + i)]
        f.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
EOF
for bin in "$@"; do
  port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
  taskset -c 0 "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  taskset -c 1 redis-cli -p "$port" --pipe < "$data" >/dev/null
  members=$(redis-cli -p "$port" zcard geo)
  found=$(redis-cli -p "$port" geosearch geo fromlonlat 2.3 48.8 byradius "$radius" km | wc -l)
  for run in 1 2 3; do
    c0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(taskset -c 1 redis-benchmark -p "$port" -q -n "$calls" -P 16 -c 50 -r 1000000 \
      GEOSEARCH geo FROMLONLAT '2.3__rand_int__' '48.8__rand_int__' BYRADIUS "$radius" km \
      2>&1 | tr '\r' '\n' | grep 'per second' | tail -1)
    c1=$(awk '{print $14+$15}' /proc/$pid/stat)
    awk -v a="$c0" -v b="$c1" -v t="$tick" -v n="$calls" -v o="$out" -v s="$(basename "$bin")" \
      -v m="$members" -v f="$found" -v r="$radius" \
      'BEGIN{printf "%s members=%d radius_km=%s found=%d cpu_us_per_call=%.2f %s\n", s, m, r, f, (b-a)/t*1e6/n, o}'
  done
  kill $pid; wait $pid 2>/dev/null || true
done
