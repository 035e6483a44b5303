#!/usr/bin/env python3
"""Side-by-side benchmark of `mapwright generate list` against the peer harness's writers:
sitemap.js's SitemapAndIndexStream (Node) and the bare hand-written Rust writer
(rust-peers' baseline_write: BufWriter + write!, no checks), plain and gzipped, in one run.

Every run is timed whole-process with /usr/bin/time -v (wall time and peak RSS); the median
of --runs is reported. mapwright reads N records from a CSV file made by gen_input.py with the
harness's record(i) formula (not timed); the peers build the same records in memory. Each
tool's output is recounted (<url> elements in its files) so a fast wrong answer shows.

usage: bench.py [--n 10000000] [--runs 3] [--sitemapjs-n 1000000] [--work /tmp/mapwright-bench]
Needs: node + npm (sitemap.js is installed with `npm ci` into --work, not into shared/),
cargo, python3, /usr/bin/time. Peers' code is copied from shared/bench, never committed here."""
import argparse
import gzip
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=10_000_000)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--sitemapjs-n", type=int, default=1_000_000,
                help="N for sitemap.js (13k URLs/s gzipped: 10M would take 13 minutes a run)")
ap.add_argument("--sitemapjs-runs", type=int, default=1)
ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "mapwright-bench"))
# shared/ beside the clone, as the tests find it.
ap.add_argument("--shared", default=os.environ.get("SHARED") or os.path.join(os.path.dirname(REPO), "shared"))
ap.add_argument("--skip", default="", help="comma-separated tools to skip: mapwright,baseline,sitemapjs")
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)
skip = set(filter(None, a.skip.split(",")))


def sh(cmd, **kw):
    print("+", " ".join(cmd) if isinstance(cmd, list) else cmd, file=sys.stderr)
    subprocess.run(cmd, check=True, **kw)


# Builds: ours (release, the workspace's flate2 with zlib-rs), the baseline with the same
# compressor (--features zlib-rs), sitemap.js from the harness's lock file.
sh(["cargo", "build", "--release", "--quiet", "-p", "mapwright"], cwd=REPO)
target = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=REPO,
                        capture_output=True, text=True, check=True).stdout
target_dir = re.search(r'"target_directory":"([^"]+)"', target).group(1)
MAPWRIGHT = os.path.join(target_dir, "release", "mapwright")
peers = os.path.join(a.work, "rust-peers")
if "baseline" not in skip:
    if not os.path.exists(peers):
        shutil.copytree(os.path.join(a.shared, "bench", "rust-peers"), peers, ignore=shutil.ignore_patterns("target"))
    sh(["cargo", "build", "--release", "--quiet", "--features", "zlib-rs", "--bin", "baseline_write"], cwd=peers)
BASELINE = os.path.join(peers, "target", "release", "baseline_write")
node = os.path.join(a.work, "node")
if "sitemapjs" not in skip:
    if not os.path.exists(os.path.join(node, "node_modules", "sitemap")):
        shutil.copytree(os.path.join(a.shared, "bench", "node"), node, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("node_modules"))
        sh(["npm", "ci", "--no-audit", "--no-fund"], cwd=node,
           env=dict(os.environ, npm_config_cache=os.path.join(a.work, "npm-cache")))


def ensure_input(n):
    path = os.path.join(a.work, f"input-{n}.csv")
    if not os.path.exists(path):
        sh([sys.executable, os.path.join(HERE, "gen_input.py"), str(n), path, "--shared", a.shared])
    return path


def count_urls(out):
    total = 0
    for name in os.listdir(out):
        p = os.path.join(out, name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(p, "rb") as f:
            while True:
                chunk = f.read(1 << 24)
                if not chunk:
                    break
                total += chunk.count(b"<url>")
    return total


def timed(cmd):
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {cmd}\n{r.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    h, m, s = wall.groups()
    secs = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return secs, rss


def run(tool, mode, n, runs):
    out = os.path.join(a.work, f"out-{tool}-{mode}")
    if tool == "mapwright":
        cmd = [MAPWRIGHT, "generate", "list", ensure_input(n), "--base-url", "https://www.example.com/",
               "--out", out, "--quiet"] + (["--gzip"] if mode == "gz" else [])
    elif tool == "baseline":
        cmd = [BASELINE, str(n), out, mode]
    else:
        cmd = ["node", os.path.join(node, "sitemapjs_write.mjs"), str(n), out, mode]
    times, rsss = [], []
    for i in range(runs):
        shutil.rmtree(out, ignore_errors=True)
        if tool == "mapwright":
            os.makedirs(out)
        secs, rss = timed(cmd)
        times.append(secs)
        rsss.append(rss)
        print(f"  {tool} {mode} n={n} run {i + 1}: {secs:.2f} s, {rss / 1024:.1f} MB", file=sys.stderr)
    got = count_urls(out)
    med = statistics.median(times)
    return dict(tool=tool, mode=mode, n=n, secs=med, lo=min(times), hi=max(times), rss_mb=max(rsss) / 1024,
                urls_s=n / med, ok=got == n, counted=got)


rows = []
for mode in ("plain", "gz"):
    if "mapwright" not in skip:
        rows.append(run("mapwright", mode, a.n, a.runs))
    if "baseline" not in skip:
        rows.append(run("baseline", mode, a.n, a.runs))
    if "sitemapjs" not in skip:
        rows.append(run("sitemapjs", mode, a.sitemapjs_n, a.sitemapjs_runs))

names = {"mapwright": "mapwright generate list (CSV in)", "baseline": "hand-written writer (Rust, zlib-rs)",
         "sitemapjs": "sitemap.js 9.0.1 SitemapAndIndexStream"}
print(f"| tool | mode | URLs | median s (min-max) | URLs/s | peak RSS MB | vs baseline | vs sitemap.js | count |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    base = next((b for b in rows if b["tool"] == "baseline" and b["mode"] == r["mode"]), None)
    sjs = next((b for b in rows if b["tool"] == "sitemapjs" and b["mode"] == r["mode"]), None)
    vb = f"{r['urls_s'] / base['urls_s'] * 100:.0f} %" if base else "-"
    vs = f"{r['urls_s'] / sjs['urls_s']:.0f}x" if sjs else "-"
    print(f"| {names[r['tool']]} | {r['mode']} | {r['n']:,} | {r['secs']:.2f} ({r['lo']:.2f}-{r['hi']:.2f}) | "
          f"{r['urls_s']:,.0f} | {r['rss_mb']:.1f} | {vb} | {vs} | {'OK' if r['ok'] else 'MISMATCH ' + str(r['counted'])} |")
