#!/usr/bin/env python3
"""A consumer-group work queue (issue 18): 4 producers XADD entries (5 small fields, 10 per
round trip) to one stream while 8 consumers of one group loop on XREADGROUP COUNT 10 BLOCK
1000 ... > and XACK what they got, until every entry is acknowledged. The server is pinned
to CPU 0 and the 12 clients (processes) to CPU 1. Prints, per server and run, the entries per
second (wall time until the last XACK) and the server CPU per entry (utime+stime over the
run / entries).

    usage: benches/stream-workqueue.py BIN [BIN ...]   (ENTRIES=200000 RUNS=3 by default)
"""
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import time

ENTRIES = int(os.environ.get("ENTRIES", "200000"))
RUNS = int(os.environ.get("RUNS", "3"))
PRODUCERS, CONSUMERS, BATCH = 4, 8, 10
FIELDS = [b"f1", b"v1234567", b"f2", b"v1234567", b"f3", b"v1234567", b"f4", b"v1234567", b"f5", b"v1234567"]


def enc(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 16)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self.line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b":"):
            return rest
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError(line)

    def cmd(self, *args):
        self.s.sendall(enc(args))
        return self.read()


def producer(port, n):
    c = Conn(port)
    sent = 0
    while sent < n:
        k = min(BATCH, n - sent)
        c.s.sendall(b"".join(enc([b"XADD", b"q", b"*"] + FIELDS) for _ in range(k)))
        for _ in range(k):
            c.read()
        sent += k


def consumer(port, name, done):
    c = Conn(port)
    while True:
        r = c.cmd(b"XREADGROUP", b"GROUP", b"g", name, b"COUNT", BATCH, b"BLOCK", 1000, b"STREAMS", b"q", b">")
        if r is None:
            if done.value:
                return
            continue
        ids = [e[0] for e in r[0][1]]
        c.cmd(b"XACK", b"q", b"g", *ids)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return int(parts[11]) + int(parts[12])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def run(binary):
    port = free_port()
    server = subprocess.Popen(
        ["taskset", "-c", "0", binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            c = Conn(port)
            break
        except OSError:
            time.sleep(0.1)
    c.cmd(b"XGROUP", b"CREATE", b"q", b"g", b"$", b"MKSTREAM")
    os.sched_setaffinity(0, {1})
    done = mp.Value("b", 0)
    consumers = [mp.Process(target=consumer, args=(port, b"c%d" % i, done)) for i in range(CONSUMERS)]
    for p in consumers:
        p.start()
    time.sleep(0.5)
    cpu0, t0 = cpu_ticks(server.pid), time.time()
    producers = [mp.Process(target=producer, args=(port, ENTRIES // PRODUCERS)) for _ in range(PRODUCERS)]
    for p in producers:
        p.start()
    for p in producers:
        p.join()
    while True:
        pending = c.cmd(b"XPENDING", b"q", b"g")
        info = c.cmd(b"XINFO", b"GROUPS", b"q")[0]
        lag = dict(zip(info[::2], info[1::2]))[b"lag"]
        if int(pending[0]) == 0 and lag == b"0":
            break
        time.sleep(0.001)
    t1, cpu1 = time.time(), cpu_ticks(server.pid)
    done.value = 1
    for p in consumers:
        p.join()
    server.kill()
    server.wait()
    tick = os.sysconf("SC_CLK_TCK")
    cpu_us = (cpu1 - cpu0) / tick * 1e6 / ENTRIES
    print(f"{os.path.basename(binary)} entries_per_s={ENTRIES / (t1 - t0):.0f} server_cpu_us_per_entry={cpu_us:.2f}", flush=True)


if __name__ == "__main__":
    for binary in sys.argv[1:]:
        for _ in range(RUNS):
            run(binary)
