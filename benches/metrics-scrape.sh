#!/usr/bin/env bash
# The Prometheus endpoint under load (issue 22): a server with N keys (default 1M, DEBUG
# POPULATE) and 100 connected clients, SCRAPES scrapes of /metrics (default 100) 20 ms
# apart (from a niced process), while a probe client PINGs one at a time. Prints each side's figures: the scrape
# durations (median, p99, worst) and the probe's round trips (median, p99, worst) with the
# scrapes and, for reference, during as long a stretch without them.
#   usage: benches/metrics-scrape.sh BIN     (server on CPU 0, scrapes and probe on CPU 1)
set -euo pipefail
BIN=${1:?usage: benches/metrics-scrape.sh BIN}
SERVER_CPU=${SERVER_CPU:-0}; LOAD_CPU=${LOAD_CPU:-1}; N=${N:-1000000}; SCRAPES=${SCRAPES:-100}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
port=$(free_port); mport=$(free_port)
taskset -c "$SERVER_CPU" "$BIN" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --enable-debug-command yes --metrics-port "$mport" >/dev/null 2>&1 & pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" DEBUG POPULATE "$N" >/dev/null
taskset -c "$LOAD_CPU" python3 - "$port" "$mport" "$SCRAPES" <<'PY'
import multiprocessing, os, socket, sys, time
port, mport, scrapes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def scrape():
    s = socket.create_connection(("127.0.0.1", mport))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    body = b""
    while True:
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        body += chunk
    s.close()
    assert body.startswith(b"HTTP/1.1 200"), body[:80]
    return len(body)
def scraper(n, out):
    # Its own process, so the probe never waits for it on the interpreter's lock, and a
    # nicer one, so that on the shared CPU the probe runs first; 20 ms apart, so the probe
    # sees each scrape among ordinary round trips.
    os.nice(10)
    durations, size = [], 0
    for _ in range(n):
        time.sleep(0.02)
        t = time.perf_counter()
        size = scrape()
        durations.append((time.perf_counter() - t) * 1e6)
    out.put((durations, size))
def stats(xs):
    xs = sorted(xs)
    return f"median {xs[len(xs)//2]:.0f} us, p99 {xs[int(len(xs)*0.99)]:.0f} us, worst {xs[-1]:.0f} us"
def probe_while(alive):
    lat = []
    while alive():
        t = time.perf_counter()
        probe.sendall(b"PING\r\n")
        assert probe.recv(64) == b"+PONG\r\n"
        lat.append((time.perf_counter() - t) * 1e6)
    return lat
if __name__ == "__main__":
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(99)]
    probe = socket.create_connection(("127.0.0.1", port))
    out = multiprocessing.Queue()
    child = multiprocessing.Process(target=scraper, args=(scrapes, out))
    t0 = time.perf_counter()
    child.start()
    lat = probe_while(child.is_alive)
    durations, size = out.get()
    took = time.perf_counter() - t0
    child.join()
    print(f"{scrapes} scrapes of {size} bytes in {took:.2f} s: {stats(durations)}")
    print(f"  probe during the scrapes ({len(lat)} PINGs): {stats(lat)}")
    end = time.perf_counter() + took
    lat = probe_while(lambda: time.perf_counter() < end)
    print(f"  probe without scrapes ({len(lat)} PINGs): {stats(lat)}")
PY
