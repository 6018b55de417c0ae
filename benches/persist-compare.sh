#!/usr/bin/env bash
# RDB persistence, side by side with a reference server (default: redis-server 7.0 at
# /usr/bin/redis-server), measured in one run on this machine (issue 8's figures).
#   usage: benches/persist-compare.sh OURS_BIN [REF_BIN]
# Each server runs alone, in its own temp dir, with `--save '' --appendonly no`, pinned to
# CPU 0 (SERVER_CPU); every load tool, probe and sampler runs on CPU 1 (LOAD_CPU). A BGSAVE
# child inherits the parent's pinning, so it shares CPU 0 with the parent (both servers alike).
#   A. load   : KEYS keys (default 10,000,000) `key:%012d` with 100-byte values, SETs generated
#               once as RESP streams of CHUNK (default 1,000,000) commands, each fed with one
#               `redis-cli --pipe` (chunks keep each pipe's start-up short; a single
#               stream works too); VALUES=random: printable bytes LZF cannot shrink, the default;
#               VALUES=x: 100 'x's, which it can;
#   B. SAVE   : wall time of the command (as the client sees it) and the file's size;
#   C. load   : each server restarted on the other's file, then on its own: time from the
#               process start to the first PONG (LOADING replies retried every 5 ms), and the
#               "DB loaded from disk: N seconds" log line;
#   D. BGSAVE under a write load, on the server just restarted on its own file:
#               `redis-benchmark -t set -r KEYS -d 100 -c 50 -P 1 --precision 3 --csv`, sized
#               from a short calibration to last DURATION s (default 20) or longer when this
#               server's SAVE time says the snapshot needs more; BGSAVE sent BGSAVE_AT s in
#               (default 3). A sampler reads parent and child RSS (statm) every 50 ms and PSS
#               (smaps_rollup, a walk of every page table: tens of ms of CPU at 2 GB) every
#               PSS_MS (default 500); peak extra = max(parent + child) during the snapshot -
#               the parent's value just before BGSAVE (PSS sums count each page once; RSS
#               sums count the pages parent and child still share twice). A probe client
#               sends the same SET every ~1 ms and splits its latencies into "during the
#               snapshot" (in flight at any time from BGSAVE sent to rdb_bgsave_in_progress:0,
#               polled every 20 ms) and the rest. INFO's latest_fork_usec and
#               rdb_last_cow_size are printed as the server gives them.
# PERF=1 adds an untimed extra load of each server's own file under `perf record -g` and
# prints the top symbols. Needs python3, taskset, redis-cli, redis-benchmark.
# Memory: one server at a time; at 10M keys each holds ~2 GB, and WORK (TMPDIR) gets the
# 1.5 GB RESP stream plus both RDB files (~1.2 GB each with VALUES=random).
set -euo pipefail
OURS=$1; REF=${2:-/usr/bin/redis-server}
KEYS=${KEYS:-10000000}; DURATION=${DURATION:-20}; BGSAVE_AT=${BGSAVE_AT:-3}
VALUES=${VALUES:-random}; PERF=${PERF:-0}; CHUNK=${CHUNK:-1000000}; PSS_MS=${PSS_MS:-500}
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}
BENCH=${BENCH:-$(command -v redis-benchmark)}; CLI=${CLI:-$(command -v redis-cli)}
case $VALUES in random|x) ;; *) echo "VALUES must be random or x" >&2; exit 2;; esac
# Absolute, but not through symlinks: /usr/bin/redis-server links to redis-check-rdb, which
# picks its role from argv[0].
abs() { case $1 in /*) echo "$1";; */*) echo "$PWD/$1";; *) command -v "$1";; esac; }
OURS=$(abs "$OURS"); REF=$(abs "$REF")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/persist-compare.XXXXXX")
pids=()
forget() { local keep=() p; for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; pids=("${keep[@]}"); }
cleanup() {
  local p
  touch "$WORK/stop" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A private copy, so that a rebuild during the run does not change the server between phases.
cp "$OURS" "$WORK/ferrokey-server"; OURS_SRC=$OURS; OURS=$WORK/ferrokey-server
on_load() { taskset -c "$LOAD_CPU" "$@"; }
PY=$WORK/helper.py
cat >"$PY" <<'PY'
import os, random, socket, sys, time

def enc(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)

class Conn:
    def __init__(self, port, timeout=None):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.s.settimeout(timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        l, _, self.buf = self.buf.partition(b"\r\n")
        return l
    def exact(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        d, self.buf = self.buf[:n], self.buf[n:]
        return d
    def reply(self):
        l = self.line()
        t, rest = l[:1], l[1:]
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self.exact(n + 2)[:-2]
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        return l  # +simple, -error, :int kept with their type byte
    def cmd(self, *args):
        self.s.sendall(enc(args))
        return self.reply()

def info(c, section):
    text = c.cmd("INFO", section).decode()
    return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l and not l.startswith("#"))

def rollup(pid):
    """(pss_kb, rss_kb) of one process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            d = {}
            for l in f:
                k, _, v = l.partition(":")
                if k in ("Rss", "Pss"):
                    d[k] = int(v.split()[0])
            return d["Pss"], d["Rss"]
    except (OSError, KeyError):
        return None

def children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out

def gen(n, mode, chunk, prefix):
    """SET key:%012d <100 bytes> for 0..n, as RESP streams of `chunk` commands each, in the
    files prefix.000, prefix.001..."""
    rnd = random.Random(8)
    alpha = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    blob = bytes(rnd.choice(alpha) for _ in range(4096 + 100))
    head, mid = b"*3\r\n$3\r\nSET\r\n$16\r\n", b"\r\n$100\r\n"
    xs = b"x" * 100
    for c, first in enumerate(range(0, n, chunk)):
        with open("%s.%03d" % (prefix, c), "wb") as out:
            for start in range(first, min(n, first + chunk), 100000):
                parts = []
                for i in range(start, min(n, first + chunk, start + 100000)):
                    o = (i * 131) % 4096
                    v = blob[o:o + 100] if mode == "random" else xs
                    parts.append(b"%skey:%012d%s%s\r\n" % (head, i, mid, v))
                out.write(b"".join(parts))

def ready(port, pid, limit_s=1800):
    """Prints the time (ns) of the first PONG; fails if the server exits first."""
    deadline = time.time() + limit_s
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            sys.exit(f"server {pid} exited before answering PING")
        try:
            c = Conn(port, timeout=5)
            while True:
                r = c.cmd("PING")
                if r == b"+PONG":
                    print(time.time_ns())
                    return
                time.sleep(0.005)  # -LOADING
        except (OSError, EOFError):
            time.sleep(0.005)
    sys.exit("server did not answer PING in time")

def timed(port, *args):
    """Runs one command; prints 'seconds reply'."""
    c = Conn(port)
    t = time.perf_counter()
    r = c.cmd(*args)
    dt = time.perf_counter() - t
    print("%.3f %s" % (dt, r.decode() if isinstance(r, bytes) else r))

def field(port, section, name):
    print(info(Conn(port), section).get(name, "n/a"))

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024

def rss_kb(pid):
    """RSS from statm: O(1) for the kernel, unlike smaps_rollup's page-table walk."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE_KB
    except (OSError, IndexError):
        return None

def sampler(pid, out, stop, pss_ms):
    """Every 50 ms: parent and children RSS; every pss_ms: their PSS too (-1 otherwise). A
    smaps_rollup read walks every page table of a 2 GB process (tens of ms of CPU), so PSS
    is read less often."""
    next_pss = 0
    with open(out, "w") as f:
        while not os.path.exists(stop):
            t = time.time_ns()
            kids = children(pid)
            want_pss = t >= next_pss
            if want_pss:
                next_pss = t + pss_ms * 1_000_000
                p = rollup(pid)
                if p is None:
                    break
                pp, pr = p
                cp = cr = 0
                for k in kids:
                    r = rollup(k)
                    if r:
                        cp += r[0]; cr += r[1]
            else:
                pr = rss_kb(pid)
                if pr is None:
                    break
                pp = cp = -1
                cr = sum(rss_kb(k) or 0 for k in kids)
            f.write("%d %d %d %d %d %d\n" % (t, pp, pr, cp, cr, len(kids)))
            time.sleep(max(0.0, 0.05 - (time.time_ns() - t) / 1e9))

def probe(port, keys, out, stop):
    c = Conn(port)
    rnd = random.Random(9)
    val = b"x" * 100
    rows = []
    while not os.path.exists(stop):
        req = enc([b"SET", b"key:%012d" % rnd.randrange(keys), val])
        t = time.time_ns()
        c.s.sendall(req)
        c.line()
        rows.append((t, time.time_ns() - t))
        time.sleep(0.001)
    with open(out, "w") as f:
        f.writelines("%d %d\n" % r for r in rows)

def bgsave(port, pid, at_s, out):
    """Waits at_s, notes the parent's memory, sends BGSAVE and waits for its end."""
    time.sleep(at_s)
    c = Conn(port)
    pss, rss = rollup(pid)
    t0 = time.time_ns()
    r = c.cmd("BGSAVE")
    if not r.startswith(b"+"):
        sys.exit("BGSAVE failed: %r" % r)
    while True:
        time.sleep(0.02)
        if info(c, "persistence").get("rdb_bgsave_in_progress") == "0":
            break
    t1 = time.time_ns()
    with open(out, "w") as f:
        f.write("%d %d %d %d\n" % (t0, t1, pss, rss))

def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]

def analyze(bg, mem, lat):
    t0, t1, pss0, rss0 = map(int, open(bg).read().split())
    peak_pss = peak_rss = 0
    child_seen = 0
    for l in open(mem):
        t, pp, pr, cp, cr, n = map(int, l.split())
        if t0 <= t <= t1 + 60_000_000:
            if pp >= 0:
                peak_pss = max(peak_pss, pp + cp)
            peak_rss = max(peak_rss, pr + cr)
            child_seen = max(child_seen, n)
    inside, outside = [], []
    worst = {"in": (0, 0), "out": (0, 0)}
    for l in open(lat):
        t, d = map(int, l.split())
        # During the snapshot: any request in flight between BGSAVE and its end (one sent
        # just before BGSAVE still waits out the fork).
        side = "in" if t <= t1 and t + d >= t0 else "out"
        (inside if side == "in" else outside).append(d / 1e6)
        worst[side] = max(worst[side], (d, t))
    kv = {
        "bg_s": "%.2f" % ((t1 - t0) / 1e9),
        "pss0_mb": "%.1f" % (pss0 / 1024), "rss0_mb": "%.1f" % (rss0 / 1024),
        "xpss_mb": "%.1f" % ((peak_pss - pss0) / 1024),
        "xrss_mb": "%.1f" % ((peak_rss - rss0) / 1024),
        "child_seen": child_seen,
        "in_n": len(inside), "out_n": len(outside),
    }
    for name, v in (("in", inside), ("out", outside)):
        for q, label in ((0.5, "p50"), (0.99, "p99"), (1.0, "max")):
            kv["%s_%s" % (name, label)] = "%.3f" % pct(v, q)
    for side in ("in", "out"):  # when the slowest probe was sent, in s from BGSAVE
        kv[side + "_max_at"] = "%.2f" % ((worst[side][1] - t0) / 1e9) if worst[side][1] else "-"
    for k, v in kv.items():
        print("%s=%s" % (k, v))

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "gen": gen(int(args[0]), args[1], int(args[2]), args[3])
elif cmd == "ready": ready(int(args[0]), int(args[1]))
elif cmd == "timed": timed(int(args[0]), *args[1:])
elif cmd == "field": field(int(args[0]), args[1], args[2])
elif cmd == "sampler": sampler(int(args[0]), args[1], args[2], int(args[3]))
elif cmd == "probe": probe(int(args[0]), int(args[1]), args[2], args[3])
elif cmd == "bgsave": bgsave(int(args[0]), int(args[1]), float(args[2]), args[3])
elif cmd == "analyze": analyze(*args)
else: sys.exit("unknown helper command " + cmd)
PY
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
# start_server BIN DIR: sets SPID, PORT, T_START (ns); the caller waits with `ready`.
start_server() {
  PORT=$(free_port)
  T_START=$(date +%s%N)
  taskset -c "$SERVER_CPU" "$1" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$2" --dbfilename dump.rdb --logfile "$2/server.log" >>"$2/stdout.log" 2>&1 &
  SPID=$!; pids+=("$SPID")
}
ready() { on_load python3 "$PY" ready "$PORT" "$SPID"; }
stop_server() {
  kill -TERM "$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
  forget "$SPID"
}
info_field() { python3 "$PY" field "$PORT" "$1" "$2"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b-a)/1e9}'; }
loaded_log() { grep -o 'DB loaded from disk: [0-9.]* seconds' "$1/server.log" | tail -1 | awk '{print $5}'; }
who_bin() { if [ "$1" = ours ]; then echo "$OURS"; else echo "$REF"; fi; }
other() { if [ "$1" = ours ]; then echo ref; else echo ours; fi; }
# The probe shares CPU 1 with redis-benchmark, which keeps it busy: under SCHED_FIFO (when
# allowed; RT=0 turns it off) it runs as soon as it wakes, so its latency is the server's.
rt_probe=()
if [ "${RT:-1}" = 1 ] && chrt -f 10 true 2>/dev/null; then rt_probe=(chrt -f 20); fi
declare -A R

echo "persist-compare: KEYS=$KEYS VALUES=$VALUES ours=$OURS_SRC ref=$REF work=$WORK" >&2
echo "generating the RESP stream..." >&2
python3 "$PY" gen "$KEYS" "$VALUES" "$CHUNK" "$WORK/load.resp"

# A, B: load through --pipe, SAVE, keep the file.
for who in ours ref; do
  dir=$WORK/$who.a; mkdir -p "$dir"
  start_server "$(who_bin "$who")" "$dir"; ready >/dev/null
  t0=$(date +%s%N)
  for f in "$WORK"/load.resp.*; do
    out=$(on_load "$CLI" -p "$PORT" --pipe <"$f" 2>&1) \
      || { echo "$who: redis-cli --pipe <$f failed: $out" >&2; tail -3 "$dir/server.log" >&2; exit 1; }
  done
  t1=$(date +%s%N)
  R[$who.pipe]=$(secs "$t0" "$t1")
  R[$who.keys]=$("$CLI" -p "$PORT" dbsize)
  [ "${R[$who.keys]}" = "$KEYS" ] || { echo "$who: dbsize ${R[$who.keys]}, expected $KEYS" >&2; exit 1; }
  R[$who.used]=$(awk -v b="$(info_field memory used_memory)" 'BEGIN{printf "%.1f", b/1e6}')
  R[$who.rss]=$(awk -v k="$(grep VmRSS /proc/"$SPID"/status | awk '{print $2}')" 'BEGIN{printf "%.1f", k*1024/1e6}')
  read -r s reply < <(python3 "$PY" timed "$PORT" SAVE)
  [ "$reply" = "+OK" ] || { echo "$who: SAVE replied $reply" >&2; exit 1; }
  R[$who.save]=$s
  mv "$dir/dump.rdb" "$WORK/$who.rdb"
  R[$who.size]=$(awk -v b="$(stat -c %s "$WORK/$who.rdb")" 'BEGIN{printf "%.1f", b/1e6}')
  echo "$who: SAVE ${R[$who.save]} s, ${R[$who.size]} MB" >&2
  stop_server
  rm -rf "$dir"
done
rm -f "$WORK"/load.resp.*

# C: loads; then D on the server restarted on its own file.
for who in ours ref; do
  bin=$(who_bin "$who"); oth=$(other "$who")
  dir=$WORK/$who.x; mkdir -p "$dir"; ln "$WORK/$oth.rdb" "$dir/dump.rdb"
  start_server "$bin" "$dir"
  if t1=$(ready); then
    R[$who.xload]=$(secs "$T_START" "$t1"); R[$who.xlog]=$(loaded_log "$dir")
    R[$who.xkeys]=$("$CLI" -p "$PORT" dbsize)
  else
    echo "$who failed to load $oth's file:" >&2; tail -5 "$dir/server.log" >&2
    R[$who.xload]=failed; R[$who.xlog]=failed; R[$who.xkeys]=0
  fi
  stop_server; rm -rf "$dir"

  if [ "$PERF" = 1 ]; then
    dir=$WORK/$who.perf; mkdir -p "$dir"; ln "$WORK/$who.rdb" "$dir/dump.rdb"
    start_server "$bin" "$dir"
    taskset -c "$LOAD_CPU" perf record -q -g -p "$SPID" -o "$WORK/$who.perf.data" >/dev/null 2>&1 &
    perf_pid=$!; pids+=("$perf_pid")
    ready >/dev/null
    kill -INT "$perf_pid"; wait "$perf_pid" || true; forget "$perf_pid"
    stop_server
    echo "== perf: $who loading its own file (top symbols, self time) ==" >&2
    perf report -i "$WORK/$who.perf.data" --no-children --sort symbol --stdio 2>/dev/null \
      | grep -E '^ +[0-9.]+%' | head -20 >&2 || true
    rm -rf "$dir" "$WORK/$who.perf.data"
  fi

  dir=$WORK/$who.c; mkdir -p "$dir"; ln "$WORK/$who.rdb" "$dir/dump.rdb"
  start_server "$bin" "$dir"
  t1=$(ready)
  R[$who.load]=$(secs "$T_START" "$t1"); R[$who.loadlog]=$(loaded_log "$dir")
  R[$who.lkeys]=$("$CLI" -p "$PORT" dbsize)
  echo "$who: load own file ${R[$who.load]} s (log ${R[$who.loadlog]}), other's ${R[$who.xload]} s" >&2

  # D: BGSAVE under a write load.
  bench=(-p "$PORT" -t set -r "$KEYS" -d 100 -c 50 -P 1 --precision 3 --csv)
  rps=$(on_load "$BENCH" "${bench[@]}" -n 100000 | tail -1 | tr -d '"' | cut -d, -f2)
  want=$(awk -v d="$DURATION" -v a="$BGSAVE_AT" -v s="${R[$who.save]}" \
    'BEGIN{w=a+2.5*s+3; print (w>d)?w:d}')
  n=$(awk -v r="$rps" -v w="$want" 'BEGIN{printf "%d", r*w}')
  rm -f "$WORK/stop"
  # Started directly (not through on_load) so that $! is the tool itself (taskset execs it).
  taskset -c "$LOAD_CPU" python3 "$PY" sampler "$SPID" "$WORK/mem" "$WORK/stop" "$PSS_MS" &
  sp=$!; pids+=("$sp")
  taskset -c "$LOAD_CPU" "${rt_probe[@]}" python3 "$PY" probe "$PORT" "$KEYS" "$WORK/lat" "$WORK/stop" &
  pp=$!; pids+=("$pp")
  taskset -c "$LOAD_CPU" "$BENCH" "${bench[@]}" -n "$n" >"$WORK/bench.csv" 2>/dev/null &
  bp=$!; pids+=("$bp")
  on_load python3 "$PY" bgsave "$PORT" "$SPID" "$BGSAVE_AT" "$WORK/bg"
  wait "$bp" || { echo "$who: redis-benchmark failed" >&2; exit 1; }
  forget "$bp"
  if ! kill -0 "$sp" 2>/dev/null; then echo "$who: the sampler ended early" >&2; fi
  touch "$WORK/stop"; wait "$sp" || true; wait "$pp" || true; forget "$sp"; forget "$pp"
  read -r t0 t1 _ _ <"$WORK/bg"
  bench_end=$(date +%s%N)
  R[$who.outlasted]=no; [ "$t1" -le "$bench_end" ] || R[$who.outlasted]=yes
  IFS=, read -r _ R[$who.rps] _ _ R[$who.p50] _ R[$who.p99] R[$who.max] \
    < <(tail -1 "$WORK/bench.csv" | tr -d '"')
  while IFS='=' read -r k v; do R[$who.$k]=$v; done \
    < <(python3 "$PY" analyze "$WORK/bg" "$WORK/mem" "$WORK/lat")
  R[$who.n]=$n
  R[$who.fork]=$(info_field stats latest_fork_usec)
  cow=$(info_field persistence rdb_last_cow_size)
  R[$who.cow]=$(awk -v b="$cow" 'BEGIN{if (b ~ /^[0-9]+$/) printf "%.1f", b/1e6; else print b}')
  R[$who.bgstatus]=$(info_field persistence rdb_last_bgsave_status)
  R[$who.bgtime]=$(info_field persistence rdb_last_bgsave_time_sec)
  echo "$who: BGSAVE ${R[$who.bg_s]} s, status ${R[$who.bgstatus]}, load $n SETs at ${R[$who.rps]}/s" >&2
  stop_server
  rm -rf "$dir" "$WORK/mem" "$WORK/lat" "$WORK/bg" "$WORK/bench.csv"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b+0 != 0) printf "%.3f", a/b; else print "-"}'; }
row_plain() { printf '%-46s %12s %12s\n' "$1" "${R[ours.$2]}" "${R[ref.$2]}"; }
row() { printf '%-46s %12s %12s %8s\n' "$1" "${R[ours.$2]}" "${R[ref.$2]}" "$(ratio "${R[ours.$2]}" "${R[ref.$2]}")"; }
echo
echo "persist-compare: $KEYS keys, 100-byte values ($VALUES), server on CPU $SERVER_CPU, tools on CPU $LOAD_CPU${rt_probe:+, probe under SCHED_FIFO}"
printf '%-46s %12s %12s %8s\n' figure ferrokey redis ratio
row "keys loaded (dbsize)" keys
row "redis-cli --pipe load, s" pipe
row "used_memory after load, MB" used
row "RSS after load, MB" rss
row "SAVE wall time, s" save
row "RDB file size, MB" size
row "load own file: start to first PONG, s" load
row "load own file: 'DB loaded from disk', s" loadlog
row "load other's file: start to first PONG, s" xload
row "load other's file: 'DB loaded from disk', s" xlog
row "load other's file: keys" xkeys
row "BGSAVE: sent to done (polled 20 ms), s" bg_s
row "BGSAVE: rdb_last_bgsave_time_sec" bgtime
row_plain "BGSAVE: rdb_last_bgsave_status" bgstatus
row "BGSAVE: INFO latest_fork_usec" fork
row "BGSAVE: INFO rdb_last_cow_size, MB" cow
row "parent PSS before BGSAVE, MB" pss0_mb
row "parent RSS before BGSAVE, MB" rss0_mb
row "peak extra PSS (parent+child), MB" xpss_mb
row "peak extra RSS (parent+child), MB" xrss_mb
row "write load: SETs (-c 50 -P 1)" n
row "write load: requests/s" rps
row "write load, whole run: p50 ms" p50
row "write load, whole run: p99 ms" p99
row "write load, whole run: max ms" max
row "probe SET during BGSAVE: samples" in_n
row "probe SET during BGSAVE: p50 ms" in_p50
row "probe SET during BGSAVE: p99 ms" in_p99
row "probe SET during BGSAVE: max ms" in_max
row_plain "  sent at, s after BGSAVE" in_max_at
row "probe SET outside BGSAVE: samples" out_n
row "probe SET outside BGSAVE: p50 ms" out_p50
row "probe SET outside BGSAVE: p99 ms" out_p99
row "probe SET outside BGSAVE: max ms" out_max
row_plain "  sent at, s after BGSAVE" out_max_at
row_plain "BGSAVE outlasted the write load" outlasted
