#!/usr/bin/env python3
"""The crawl benchmark: mapwright generate crawl against sitemap-generator (npm) on the same
generated site (crates/mapwright-crawl/examples/bench_site.rs, on 127.0.0.1), each timed with
/usr/bin/time -v like ../../../shared/bench/bench_runner.py: wall time, user+sys CPU, peak RSS.
Both crawl with 8 requests in flight; every listed URL is counted from the files written.

    python3 bench/crawl/bench.py [--pages 100000] [--peer-pages 10000] [--out RESULTS.md]

Needs: cargo (builds the release binaries), node + `npm install` in bench/crawl.
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time, urllib.request, gzip, glob, datetime, platform

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
REL = os.path.join(ROOT, "target", "release")


def timed(cmd, cwd=None):
    """Runs cmd under /usr/bin/time -v; returns (wall s, cpu s, peak KiB, stdout)."""
    t = subprocess.run(["/usr/bin/time", "-v"] + cmd, cwd=cwd, capture_output=True, text=True)
    if t.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({t.returncode}):\n{t.stderr[-3000:]}")
    err = t.stderr
    def field(name):
        return re.search(re.escape(name) + r": (.*)", err).group(1).strip()
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(p) for p in wall.split(":")]
    secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss = int(field("Maximum resident set size (kbytes)"))
    return secs, cpu, rss, t.stdout


def count_locs(out):
    n = 0
    for f in glob.glob(os.path.join(out, "*.xml*")):
        data = gzip.open(f).read() if f.endswith(".gz") else open(f, "rb").read()
        if b"<urlset" in data:
            n += data.count(b"<loc>")
    return n


def serve(pages, port):
    p = subprocess.Popen([os.path.join(REL, "examples", "bench_site"), str(port), str(pages)], stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/robots.txt", timeout=1).read()
            return p
        except OSError:
            time.sleep(0.1)
    p.kill()
    sys.exit("bench_site did not start")


def run_one(name, pages, port, cmd_of):
    server = serve(pages, port)
    out = tempfile.mkdtemp(prefix="crawl-bench-")
    try:
        wall, cpu, rss, stdout = timed(cmd_of(f"http://127.0.0.1:{port}/", out), cwd=HERE)
        urls = count_locs(out)
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(out, ignore_errors=True)
    row = dict(name=name, pages=pages, wall=wall, cpu=cpu, rss=rss, urls=urls, pps=urls / wall, cpu_per_page=cpu / max(urls, 1))
    print(f"{name}: {pages} pages: {urls} listed in {wall:.1f} s ({row['pps']:.0f} pages/s), "
          f"{cpu:.1f} CPU s ({row['cpu_per_page'] * 1e6:.0f} us/page), peak {rss / 1024:.0f} MiB", flush=True)
    return row


def mapwright_cmd(url, out):
    return [os.path.join(REL, "mapwright"), "generate", "crawl", url, "--out", out, "--concurrency", "8", "--quiet"]


def peer_cmd(url, out):
    return ["node", os.path.join(HERE, "sitemap_generator.cjs"), url, out, "8"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--peer-pages", type=int, default=10_000, help="site size for sitemap-generator (and mapwright again)")
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "mapwright", "--bin", "mapwright"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "mapwright-crawl", "--example", "bench_site"],
                   cwd=ROOT, check=True)
    rows = [run_one("mapwright generate crawl", a.pages, a.port, mapwright_cmd)]
    if a.peer_pages != a.pages:
        rows.append(run_one("mapwright generate crawl", a.peer_pages, a.port, mapwright_cmd))
    rows.append(run_one("sitemap-generator 8.5.1 (npm)", a.peer_pages, a.port, peer_cmd))
    with open(a.out + ".rows", "w") as f:
        f.write(repr(rows))
    print(f"rows saved to {a.out}.rows")


if __name__ == "__main__":
    main()
