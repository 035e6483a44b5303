#!/usr/bin/env python3
"""The Python package against the Python sitemap libraries, side by side in one run.

    bench/python/setup.sh              # a venv (bench/python/.venv) with the peers and mapwright
    bench/python/.venv/bin/python bench/python/bench.py [--runs 3] [--skip-slow]

Corpus: ../shared/bench's generator (s50k.xml: 50,000 URLs, 10 MB; big/: an index of 20
gzipped parts, 1,000,000 URLs), served on 127.0.0.1 for the peers that fetch by URL.
Every case runs in a fresh interpreter (imports done before the clock starts); it reports
URLs, wall seconds, CPU seconds of the process (user + system, every thread: mapwright's
reader thread and HTTP runtime included; the loopback server's are nobody's) and peak RSS,
medians of --runs; URLs/s is per CPU second, which stays meaningful on a loaded machine
where wall time is mostly waiting for a core. The URL count is checked against the
corpus so a fast wrong answer shows as MISMATCH. Writes the table to stdout and, with
--out, to a Markdown file.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--shared", default=os.environ.get("SHARED") or str(REPO.parent / "shared"),
                help="the shared/ folder (default: beside the clone, or $SHARED)")
ap.add_argument("--corpus", default=os.path.join(tempfile.gettempdir(), "mapwright-py-bench"),
                help="where the corpus is generated (default: the system's temporary folder)")
ap.add_argument("--port", type=int, default=8799, help="loopback port of the corpus server")
ap.add_argument("--runs", type=int, default=3, help="timed runs per fast case (slow ones run once)")
ap.add_argument("--skip-slow", action="store_true", help="skip USP and advertools on the 1M-URL index")
ap.add_argument("--out", help="write the Markdown table here too")
ap.add_argument("--only", help="run only the cases whose 'library what corpus' matches this regular expression")
a = ap.parse_args()

BASE = f"http://127.0.0.1:{a.port}"
subprocess.run([sys.executable, os.path.join(a.shared, "bench", "gen_corpus.py"), "--out", a.corpus, "--base-url", BASE],
               check=True, stdout=subprocess.DEVNULL)
S50K = os.path.join(a.corpus, "s50k.xml")
INDEX_PATH = os.path.join(a.corpus, "big", "sitemap_index.xml")
S50K_URL = f"{BASE}/s50k.xml"
INDEX_URL = f"{BASE}/big/sitemap_index.xml"

# Each case: (peer, what, corpus, expected URLs, slow, code). The code sets `n` (URLs seen);
# SETUP runs before the clock.
LXML_LOOP = """
from lxml import etree
import gzip
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
def lxml_count(path):
    n = 0
    f = open(path, "rb")
    if f.peek(2)[:2] == b"\\x1f\\x8b":
        f = gzip.GzipFile(fileobj=f)
    children = []
    for _, el in etree.iterparse(f, events=("end",), tag=(NS + "url", NS + "sitemap")):
        loc = el.findtext(NS + "loc")
        if el.tag == NS + "url":
            n += 1
        else:
            children.append(os.path.join(os.path.dirname(path), loc.rsplit("/", 1)[-1]))
        el.clear(keep_tail=False)
        while el.getprevious() is not None:
            del el.getparent()[0]
    for c in children:
        n += lxml_count(c)
    return n
"""
USP_COUNT = """
from usp.fetch_parse import SitemapFetcher
def usp_count(url):
    def walk(sm):
        return len(sm.pages) + sum(walk(s) for s in sm.sub_sitemaps)
    return walk(SitemapFetcher(url=url, recursion_level=0).sitemap())
"""
CASES = [
    ("mapwright", "read: iterate entries", "s50k.xml", 50_000, False,
     "import mapwright", "n = sum(1 for e in mapwright.read(S50K))"),
    ("mapwright", "read: iterate, 4 fields read", "s50k.xml", 50_000, False,
     "import mapwright",
     "n = 0\nfor e in mapwright.read(S50K):\n    e.loc; e.lastmod; e.changefreq; e.priority\n    n += 1"),
    ("mapwright", "read: iterate entries (by URL)", "s50k.xml", 50_000, False,
     "import mapwright", "n = sum(1 for e in mapwright.read(S50K_URL))"),
    ("lxml", "iterparse loop, builds nothing", "s50k.xml", 50_000, False, LXML_LOOP, "n = lxml_count(S50K)"),
    ("ultimate-sitemap-parser", "SitemapFetcher (by URL)", "s50k.xml", 50_000, False, USP_COUNT, "n = usp_count(S50K_URL)"),
    ("advertools", "sitemap_to_df (by URL)", "s50k.xml", 50_000, False,
     "import logging, advertools as adv\nlogging.disable(logging.WARNING)",
     "n = int(adv.sitemap_to_df(S50K_URL)['loc'].notna().sum())"),
    ("mapwright", "to_pandas", "s50k.xml", 50_000, False, "import mapwright, pandas",
     "n = len(mapwright.to_pandas(S50K))"),
    ("mapwright", "to_pandas (by URL)", "s50k.xml", 50_000, False, "import mapwright, pandas",
     "n = len(mapwright.to_pandas(S50K_URL))"),
    ("mapwright", "discover: iterate entries (by URL)", "1M index", 1_000_000, False, "import mapwright",
     "n = sum(1 for e in mapwright.discover(INDEX_URL, mode='sitemap', scope=False))"),
    ("mapwright", "to_pandas (by URL)", "1M index", 1_000_000, False, "import mapwright, pandas",
     "n = len(mapwright.to_pandas(INDEX_URL))"),
    ("lxml", "iterparse loop, builds nothing (local files)", "1M index", 1_000_000, False, LXML_LOOP,
     "n = lxml_count(INDEX_PATH)"),
    ("ultimate-sitemap-parser", "SitemapFetcher (by URL)", "1M index", 1_000_000, True, USP_COUNT,
     "n = usp_count(INDEX_URL)"),
    ("advertools", "sitemap_to_df (by URL)", "1M index", 1_000_000, True,
     "import logging, advertools as adv\nlogging.disable(logging.WARNING)",
     "n = int(adv.sitemap_to_df(INDEX_URL)['loc'].notna().sum())"),
]

RUNNER = """
import os, sys, time, resource, json
S50K, S50K_URL, INDEX_PATH, INDEX_URL = {paths!r}
{setup}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t, c = time.perf_counter(), cpu()
{code}
elapsed, cpu_s = time.perf_counter() - t, cpu() - c
print(json.dumps({{"n": n, "s": elapsed, "cpu": cpu_s, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def run_case(setup: str, code: str) -> dict:
    script = RUNNER.format(paths=(S50K, S50K_URL, INDEX_PATH, INDEX_URL), setup=textwrap.dedent(setup), code=code)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(a.port), "--bind", "127.0.0.1", "--directory", a.corpus],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", a.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        rows = []
        for peer, what, corpus, expected, slow, setup, code in CASES:
            if slow and a.skip_slow:
                continue
            if a.only and not re.search(a.only, f"{peer} {what} {corpus}"):
                continue
            results = [run_case(setup, code) for _ in range(1 if slow or corpus == "1M index" else a.runs)]
            ok = [r for r in results if "error" not in r]
            if not ok:
                rows.append((peer, what, corpus, None, None, None, None, results[0]["error"]))
                print(f"{peer} {what} {corpus}: ERROR {results[0]['error']}", file=sys.stderr)
                continue
            secs = statistics.median(r["s"] for r in ok)
            cpu = statistics.median(r["cpu"] for r in ok)
            n = ok[0]["n"]
            note = "" if n == expected else f"MISMATCH: {n} URLs"
            rss = max(r["rss_mb"] for r in ok)
            rows.append((peer, what, corpus, secs, cpu, n / cpu, rss, note))
            print(f"{peer:24} {what:44} {corpus:9} {secs:8.3f} s {cpu:8.3f} cpu-s {n / cpu:12,.0f} URLs/cpu-s {rss:7.0f} MB {note}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
    table = render(rows)
    print(table)
    if a.out:
        pathlib.Path(a.out).write_text(table)


def render(rows) -> str:
    import platform

    def peer_version(name: str) -> str:
        try:
            from importlib.metadata import version

            return version(name)
        except Exception:
            return "?"

    lines = [
        f"Python {platform.python_version()}, {os.cpu_count()} cores; "
        + ", ".join(f"{p} {peer_version(p)}" for p in ("mapwright", "ultimate-sitemap-parser", "advertools", "lxml", "pandas")),
        "",
        "| library | what | corpus | wall s | CPU s | URLs per CPU s | peak RSS (MB) | note |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for peer, what, corpus, secs, cpu, rate, rss, note in rows:
        if secs is None:
            lines.append(f"| {peer} | {what} | {corpus} | | | | | error: {note} |")
        else:
            lines.append(f"| {peer} | {what} | {corpus} | {secs:.3f} | {cpu:.3f} | {rate:,.0f} | {rss:.0f} | {note} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
