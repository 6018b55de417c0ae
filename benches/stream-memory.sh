#!/usr/bin/env bash
# Memory per stream entry, side by side with reference servers (issue 18's figures):
# used_memory after minus before, divided by the entries, for
#   A: 1,000,000 entries of 5 small fields (f1..f5, values of 8 bytes) in one stream;
#   B: 100,000 streams of 10 such entries each.
# Loaded with `redis-cli --pipe` (explicit ids, so every server stores the same entries).
#   usage: benches/stream-memory.sh BIN [BIN ...]
set -euo pipefail
N=${N:-1000000}; STREAMS=${STREAMS:-100000}
tmp=$(mktemp -d); pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
python3 - "$tmp" "$N" "$STREAMS" <<'PY'
import sys
d, n, streams = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def cmd(args):
    out = b'*%d\r\n' % len(args)
    for a in args:
        a = a.encode()
        out += b'$%d\r\n%s\r\n' % (len(a), a)
    return out
with open(d + '/one', 'wb') as f:
    for i in range(1, n + 1):
        f.write(cmd(['XADD', 'big', '%d-%d' % (1700000000000 + i // 7, i % 7)]
                    + sum([['f%d' % k, 'v%07d' % ((i * 7 + k) % 10000000)] for k in range(1, 6)], [])))
with open(d + '/many', 'wb') as f:
    for s in range(streams):
        for i in range(1, 11):
            f.write(cmd(['XADD', 'st:%d' % s, '%d-%d' % (1700000000000 + i, 0)]
                        + sum([['f%d' % k, 'v%07d' % ((s * 10 + i + k) % 10000000)] for k in range(1, 6)], [])))
PY
used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1=="used_memory"{print $2}'; }
printf '%-40s %14s %14s\n' server "B/entry 1x1M" "B/entry 100kx10"
for bin in "$@"; do
  row=()
  for load in one many; do
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & pid=$!; pids+=("$pid")
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    before=$(used "$port")
    redis-cli -p "$port" --pipe < "$tmp/$load" >/dev/null
    after=$(used "$port")
    entries=$([ "$load" = one ] && echo "$N" || echo $((STREAMS * 10)))
    row+=("$(awk -v a="$after" -v b="$before" -v n="$entries" 'BEGIN{printf "%.1f", (a-b)/n}')")
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
  printf '%-40s %14s %14s\n' "$(basename "$bin")" "${row[0]}" "${row[1]}"
done
