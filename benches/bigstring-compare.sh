#!/usr/bin/env bash
# Editing and reading big strings, side by side with Valkey (issue 14's figures), in one run
# on this machine.
#   usage: benches/bigstring-compare.sh [OURS_BIN] [REF_BIN]
#   defaults: target/release/ferrokey-server and $FERROKEY_VALKEY_SERVER, else
#   target/oracle/valkey-server.
# Each server runs alone (started, measured, stopped, then the other) on a free 127.0.0.1
# port with `--save '' --appendonly no --proto-max-bulk-len 512mb`, pinned to CPU 0
# (SERVER_CPU); the client (python3, raw RESP over TCP, in this file) runs on CPU 1
# (LOAD_CPU). Every command waits for its reply before the next one is sent.
#   1. build 8 MiB from 2,048 APPENDs of 4 KiB (fresh key): total time;
#   2. on a 64 MiB value: 200 SETRANGEs of 16 bytes at spread offsets, then 50 INCRs that
#      fail (not an integer): total time;
#   3. on a 512 MiB value (made by one SETRANGE at offset 512 MiB - 1): the median of
#      REPS (default 5) runs of `SETRANGE k 100 x`, of a failing `INCRBY k 5`, of a failing
#      `APPEND k x` (beyond proto-max-bulk-len), of `LCS k k LEN` (refused: its table
#      exceeds proto-max-bulk-len); GET and DUMP of the value (median of GET_REPS, default
#      3: from sending the command to the last byte of the reply), and the worst PING round
#      trip a second client (its own process, also on LOAD_CPU) sees while each GET and
#      DUMP is served.
# The replies of the refused commands are printed once per server, to compare.
# Memory: up to about 2.5 GB at a time (the value, a reply buffer, the client's copy); the
# server is flushed and stopped before the next starts.
set -euo pipefail
OURS=${1:-target/release/ferrokey-server}
REF=${2:-${FERROKEY_VALKEY_SERVER:-target/oracle/valkey-server}}
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}
REPS=${REPS:-5}; GET_REPS=${GET_REPS:-3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bigstring-compare.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

cat > "$WORK/client.py" <<'PY'
import json, socket, statistics, subprocess, sys, time

port, reps, get_reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
MIB = 1 << 20

def connect():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

class Conn:
    def __init__(self):
        self.s = connect()
        self.buf = bytearray()

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, (bytes, bytearray)) else str(a).encode()
            out.append(b"$%d\r\n" % len(a))
            out.append(a)
            out.append(b"\r\n")
        self.s.sendall(b"".join(out))

    def fill(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise EOFError
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        i = self.buf.index(b"\r\n")
        l = bytes(self.buf[:i])
        del self.buf[: i + 2]
        return l

    def reply(self):
        l = self.line()
        t = l[:1]
        if t in (b"+", b"-", b":"):
            return l.decode()
        if t == b"$":
            n = int(l[1:])
            if n < 0:
                return None
            # Read the body straight into one buffer (a big GET is 512 MiB).
            body = bytearray(n + 2)
            view = memoryview(body)
            have = min(len(self.buf), n + 2)
            view[:have] = self.buf[:have]
            del self.buf[:have]
            while have < n + 2:
                got = self.s.recv_into(view[have:])
                if not got:
                    raise EOFError
                have += got
            return body[:n]
        raise ValueError(l)

    def call(self, *args):
        self.send(*args)
        return self.reply()

def timed(c, *args):
    t = time.perf_counter()
    r = c.call(*args)
    return time.perf_counter() - t, r

def median_of(c, n, *args):
    times, r = [], None
    for _ in range(n):
        dt, r = timed(c, *args)
        times.append(dt)
    return statistics.median(times), r

PINGER = r"""
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def ping():
    t = time.perf_counter()
    s.sendall(b"PING\r\n")
    got = b""
    while not got.endswith(b"\r\n"):
        got += s.recv(64)
    return time.perf_counter() - t
ping()
print("ready", flush=True)
sys.stdin.readline()  # go
worst = 0.0
import select
while not select.select([sys.stdin], [], [], 0)[0]:
    worst = max(worst, ping())
print(worst, flush=True)
"""

def with_pings(c, *args):
    """Time one command and the worst PING round trip that a second client, in its own
    process (no shared interpreter lock), sees meanwhile."""
    p = subprocess.Popen([sys.executable, "-c", PINGER, str(port)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    p.stdin.write("go\n"); p.stdin.flush()
    time.sleep(0.01)
    dt, r = timed(c, *args)
    p.stdin.write("stop\n"); p.stdin.flush()
    worst = float(p.stdout.readline())
    p.wait()
    return dt, worst, len(r) if r is not None else -1

c = Conn()
res, replies = {}, {}
c.call("FLUSHALL")

# 1. 2,048 APPENDs of 4 KiB.
chunk = bytes(range(256)) * 16
t = time.perf_counter()
for _ in range(2048):
    c.call("APPEND", "grow", chunk)
res["append 2048 x 4 KiB (8 MiB)"] = time.perf_counter() - t
assert c.call("STRLEN", "grow") == ":%d" % (2048 * 4096)
c.call("DEL", "grow")

# 2. 64 MiB: 200 SETRANGEs and 50 failing INCRs.
c.call("SETRANGE", "v64", 64 * MIB - 1, "x")
t = time.perf_counter()
for i in range(200):
    c.call("SETRANGE", "v64", (i * 335_544) % (64 * MIB - 16), b"0123456789abcdef")
for _ in range(50):
    r = c.call("INCR", "v64")
    assert r.startswith("-ERR"), r
res["64 MiB: 200 SETRANGE + 50 failing INCR"] = time.perf_counter() - t
c.call("DEL", "v64")

# 3. 512 MiB.
c.call("SETRANGE", "big", 512 * MIB - 1, "x")
assert c.call("STRLEN", "big") == ":%d" % (512 * MIB)
for name, args in [
    ("512 MiB: SETRANGE k 100 x", ("SETRANGE", "big", 100, "x")),
    ("512 MiB: INCRBY k 5 (fails)", ("INCRBY", "big", 5)),
    ("512 MiB: APPEND k x (fails)", ("APPEND", "big", "x")),
    ("512 MiB: LCS k k LEN (refused)", ("LCS", "big", "big", "LEN")),
]:
    res[name], replies[name] = median_of(c, reps, *args)
gets, get_pings, dumps, dump_pings = [], [], [], []
for _ in range(get_reps):
    dt, ping, n = with_pings(c, "GET", "big")
    assert n == 512 * MIB, n
    gets.append(dt); get_pings.append(ping)
for _ in range(get_reps):
    dt, ping, n = with_pings(c, "DUMP", "big")
    assert n > 0, n
    dumps.append(dt); dump_pings.append(ping)
res["512 MiB: GET k"] = statistics.median(gets)
res["512 MiB: worst PING during GET"] = statistics.median(get_pings)
res["512 MiB: DUMP k"] = statistics.median(dumps)
res["512 MiB: worst PING during DUMP"] = statistics.median(dump_pings)
c.call("FLUSHALL")
print(json.dumps({"times": res, "replies": {k: str(v) for k, v in replies.items()}}))
PY

run_one() {  # bin out_json
  local bin=$1 out=$2 port pid
  port=$(free_port)
  taskset -c "$SERVER_CPU" "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --proto-max-bulk-len 512mb --dir "$WORK" >"$WORK/server.log" 2>&1 &
  pid=$!; pids+=("$pid")
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  taskset -c "$LOAD_CPU" python3 "$WORK/client.py" "$port" "$REPS" "$GET_REPS" >"$out"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

run_one "$OURS" "$WORK/ours.json"
run_one "$REF" "$WORK/ref.json"

python3 - "$WORK/ours.json" "$WORK/ref.json" <<'PY'
import json, sys
ours, ref = (json.load(open(p)) for p in sys.argv[1:3])
print("%-42s %12s %12s %8s" % ("seconds", "ferrokey", "valkey", "ratio"))
for k, v in ours["times"].items():
    r = ref["times"][k]
    print("%-42s %12.6f %12.6f %8.2f" % (k, v, r, v / r if r else float("inf")))
print()
for k, v in ours["replies"].items():
    print("%s\n  ferrokey: %s\n  valkey:   %s" % (k, v, ref["replies"][k]))
PY
