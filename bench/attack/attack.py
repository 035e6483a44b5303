#!/usr/bin/env python3
"""The attacks of issue 14 items 1 and 7 against a release build of `mapwright serve`, on
loopback only, each bounded in count and time, with the server's peak memory and /healthz
latency recorded.

Each attack runs against a fresh server (SQLite in a temporary data directory), so the peak
resident memory (VmHWM of /proc/PID/status) is that attack's. While an attack runs, a prober
asks GET /healthz every 100 ms on a new connection from another loopback address (127.0.0.2),
as a monitoring system would, and records how long each answer took (5 s timeout = failure).

  signup-limited   400 concurrent sign-ups from one address, default limits (10 a minute)
  signup-pool      the same with --sign-up-limit-per-minute 100000: every request reaches
                   the bounded hashing pool (one argon2 per core; the rest answered 429)
  slowloris        1,000 connections sending a header line every second, never finishing
  idle             20,000 connections opened and left idle (two client processes of 10,000:
                   one process may not hold 20,000 sockets under a 20,000 file limit)

usage: attack.py [--seconds 20] [--binary PATH] [--only NAME,...] [--out RESULTS.json]
Needs: python3 (standard library only), a release build (`cargo build --release -p mapwright`,
done here unless --binary is given). Linux (/proc).
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def release_binary():
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "mapwright"], cwd=REPO, check=True)
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout
    target = re.search(r'"target_directory":"([^"]+)"', meta).group(1)
    return os.path.join(target, "release", "mapwright")


class Server:
    """`mapwright serve --listen 127.0.0.1:0` on a temporary data directory."""

    def __init__(self, binary, extra):
        self.dir = tempfile.TemporaryDirectory(prefix="mapwright-attack-")
        self.log = open(os.path.join(self.dir.name, "serve.log"), "w+")
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", self.dir.name, *extra],
            stdout=subprocess.DEVNULL, stderr=self.log, env={**os.environ, "RUST_LOG": "warn,mapwright=info"})
        deadline = time.time() + 30
        while True:
            self.log.seek(0)
            m = re.search(r"listening on http://([0-9.]+):(\d+)", self.log.read())
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                break
            if self.proc.poll() is not None or time.time() > deadline:
                self.log.seek(0)
                sys.exit("serve did not start: " + self.log.read())
            time.sleep(0.05)

    def status(self, key):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])  # kB
        return 0

    def open_fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.dir.cleanup()


async def probe(server, until, samples, failures):
    """GET /healthz every 100 ms from 127.0.0.2 until `until`."""
    while time.time() < until:
        started = time.perf_counter()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(server.host, server.port, local_addr=("127.0.0.2", 0)), 5)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            response = await asyncio.wait_for(reader.read(), 5)
            writer.close()
            if response.startswith(b"HTTP/1.1 200"):
                samples.append((time.perf_counter() - started) * 1000)
            else:
                failures.append(response[:40].decode(errors="replace"))
        except Exception as e:  # a timeout or a refused connection is a failed probe
            failures.append(type(e).__name__)
        await asyncio.sleep(0.1)


async def signup_flood(server, seconds, count=400):
    """`count` concurrent sign-ups (new addresses), again and again until the time is up."""
    statuses = {}
    until = time.time() + seconds
    round_ = 0

    async def one(n):
        body = json.dumps({"email": f"flood{round_}-{n}@example.com", "password": "a long passphrase"}).encode()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(server.host, server.port), 10)
            writer.write(b"POST /api/v1/signup HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            response = await asyncio.wait_for(reader.read(), 30)
            writer.close()
            key = response[9:12].decode() or "closed"
        except Exception as e:
            key = type(e).__name__
        statuses[key] = statuses.get(key, 0) + 1

    while time.time() < until:
        await asyncio.gather(*(one(n) for n in range(count)))
        round_ += 1
    return {"rounds": round_, "statuses": statuses}


async def slowloris(server, seconds, count=1000):
    """`count` connections that send a header line every second and never end the headers."""
    conns, closed = [], 0
    for _ in range(count):
        try:
            _, writer = await asyncio.open_connection(server.host, server.port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
            conns.append(writer)
        except OSError:
            closed += 1
    until, line = time.time() + seconds, 0
    reopened = 0
    while time.time() < until:
        await asyncio.sleep(1)
        line += 1
        for i, writer in enumerate(conns):
            if writer.is_closing() or writer.transport.get_extra_info("socket") is None:
                continue
            try:
                writer.write(b"X-Slow-%d: 1\r\n" % line)
                await asyncio.wait_for(writer.drain(), 0.01)
            except Exception:
                closed += 1
                writer.close()
                # Keep the pressure on: open another one in its place.
                try:
                    _, new = await asyncio.open_connection(server.host, server.port)
                    new.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
                    conns[i] = new
                    reopened += 1
                except OSError:
                    pass
    for writer in conns:
        writer.close()
    return {"connections": count, "closed_by_server": closed, "reopened": reopened}


def idle_worker(host, port, count, seconds, result):
    """Opens `count` plain sockets and leaves them idle (a process of its own)."""
    import socket
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks, failed = [], 0
    until = time.time() + seconds
    for _ in range(count):
        if time.time() > until:
            break
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((host, port))
            socks.append(s)
        except OSError:
            failed += 1
            s.close()
    opened = len(socks)
    while time.time() < until:
        time.sleep(0.5)
    # How many the server had closed (a read that returns at once with EOF or an error).
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    result.put({"opened": opened, "connect_failed": failed, "closed_by_server": closed})


async def idle_flood(server, seconds, count=20000, processes=2):
    result = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=idle_worker,
                                       args=(server.host, server.port, count // processes, seconds, result))
               for _ in range(processes)]
    for w in workers:
        w.start()
    while any(w.is_alive() for w in workers) and result.qsize() < processes:
        await asyncio.sleep(0.2)
    parts = [result.get() for _ in workers]
    for w in workers:
        w.join()
    return {k: sum(p[k] for p in parts) for k in parts[0]}


ATTACKS = {
    "signup-limited": ([], signup_flood),
    "signup-pool": (["--sign-up-limit-per-minute", "100000"], signup_flood),
    "slowloris": ([], slowloris),
    "idle": ([], idle_flood),
}


async def run(binary, name, seconds):
    extra, attack = ATTACKS[name]
    server = Server(binary, extra)
    try:
        baseline = server.status("VmRSS")
        samples, failures, peak_fds = [], [], 0
        until = time.time() + seconds
        prober = asyncio.create_task(probe(server, until + 1, samples, failures))

        async def fds():
            nonlocal peak_fds
            while time.time() < until + 1:
                peak_fds = max(peak_fds, server.open_fds())
                await asyncio.sleep(0.5)
        watcher = asyncio.create_task(fds())
        detail = await attack(server, seconds)
        await prober
        await watcher
        after = server.status("VmRSS")
        peak = server.status("VmHWM")
    finally:
        server.stop()
    latency = sorted(samples)
    pct = lambda p: round(latency[min(len(latency) - 1, int(p * len(latency)))], 1) if latency else None
    return {
        "attack": name, "seconds": seconds, "detail": detail,
        "rss_start_mb": round(baseline / 1024, 1), "rss_peak_mb": round(peak / 1024, 1),
        "rss_after_mb": round(after / 1024, 1), "peak_open_fds": peak_fds,
        "healthz": {"answered": len(latency), "failed": len(failures), "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                    "max_ms": round(latency[-1], 1) if latency else None,
                    "failures": sorted(set(failures))[:5]},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20, help="length of each attack (bounded: at most 120)")
    ap.add_argument("--binary", help="a built mapwright (else cargo build --release)")
    ap.add_argument("--only", default="", help="comma-separated attacks: " + ",".join(ATTACKS))
    ap.add_argument("--out", default=os.path.join(HERE, "results.json"))
    a = ap.parse_args()
    seconds = max(1, min(a.seconds, 120))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    binary = a.binary or release_binary()
    names = [n for n in (a.only.split(",") if a.only else ATTACKS) if n]
    results = []
    for name in names:
        print(f"== {name} ({seconds} s)", file=sys.stderr)
        result = asyncio.run(run(binary, name, seconds))
        print(json.dumps(result), file=sys.stderr)
        results.append(result)
    with open(a.out, "w") as f:
        json.dump({"cores": os.cpu_count(), "open_file_limit": hard, "results": results}, f, indent=2)
    print(f"{'attack':16} {'RSS peak MB':>11} {'after MB':>9} {'fds':>6} {'healthz ok':>10} {'fail':>5} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    for r in results:
        h = r["healthz"]
        print(f"{r['attack']:16} {r['rss_peak_mb']:>11} {r['rss_after_mb']:>9} {r['peak_open_fds']:>6} "
              f"{h['answered']:>10} {h['failed']:>5} {h['p50_ms']!s:>7} {h['p99_ms']!s:>7} {h['max_ms']!s:>7}")


if __name__ == "__main__":
    main()
