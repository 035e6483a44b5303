#!/usr/bin/env python3
"""The Python package against the Python sitemap libraries, side by side in one run.

    bench/python/setup.sh              # a venv (bench/python/.venv) with the peers and mapwright
    bench/python/.venv/bin/python bench/python/bench.py [--runs 3] [--skip-slow]

Corpus: made by gen_corpus.py beside this script, so the run needs no network and no file from
outside the clone (s50k.xml: 50,000 URLs, 10 MB; big/: an index of 20 gzipped parts,
1,000,000 URLs), served on 127.0.0.1 for the peers that fetch by URL; and, in the same run,
the small files (small/: 24 urlsets of 1 to 259 URLs, 685 in all, the sizes of the real files
of the team's shared/realworld, written in the shapes of the generators that wrote those;
`--real DIR` reads a realworld folder's files instead), each read in a loop until it has
taken REAL_MIN_CPU seconds of CPU (after one read not timed), so a file's figure is a rate and
not one clock tick; per file, the rate is compared with the bare lxml loop's on the same file.
A peer that is not installed (bench/python/setup.sh installs them) gives an error row.
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
ap.add_argument("--real", help="a realworld folder (manifest.json, files/) to read instead of the generated small files")
ap.add_argument("--corpus", default=os.path.join(tempfile.gettempdir(), "mapwright-py-bench"),
                help="where the corpus is generated (default: the system's temporary folder)")
ap.add_argument("--port", type=int, default=8799, help="loopback port of the corpus server")
ap.add_argument("--runs", type=int, default=3, help="timed runs per fast case (slow ones run once)")
ap.add_argument("--skip-slow", action="store_true", help="skip USP and advertools on the 1M-URL index")
ap.add_argument("--out", help="write the Markdown table here too")
ap.add_argument("--only", help="run only the cases whose 'library what corpus' matches this regular expression")
ap.add_argument("--skip-real", action="store_true", help="skip the small files")
a = ap.parse_args()

BASE = f"http://127.0.0.1:{a.port}"
subprocess.run([sys.executable, str(HERE / "gen_corpus.py"), "--out", a.corpus, "--base-url", BASE],
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

# The small files: the generated ones (small/MANIFEST.json), or with --real every urlset of a
# realworld folder whose URLs lxml counts (its manifest's url_count): not the empty one, not
# the ones that are not well-formed (lxml stops on them; mapwright too, with the position).
if a.real:
    REALWORLD = pathlib.Path(a.real)
    REAL_FILES = [(f["file"], f["url_count"]) for f in json.loads((REALWORLD / "manifest.json").read_text())
                  if f["kind"] == "urlset" and f["url_count"] > 0 and not f["file"].startswith("broken-")]
    REAL_DIR = REALWORLD / "files"
else:
    REAL_DIR = pathlib.Path(a.corpus) / "small"
    REAL_FILES = [(f["file"], f["url_count"]) for f in json.loads((REAL_DIR / "MANIFEST.json").read_text())]
REAL_MIN_CPU = 0.05
# Each real case: (peer, what, by URL?, setup defining `one(source) -> URLs`).
REAL_CASES = [
    ("mapwright", "read: iterate entries", False, "import mapwright\ndef one(src):\n    return sum(1 for e in mapwright.read(src))"),
    ("lxml", "iterparse loop, builds nothing", False, LXML_LOOP + "\none = lxml_count"),
    ("mapwright", "read: iterate entries (by URL)", True, "import mapwright\ndef one(src):\n    return sum(1 for e in mapwright.read(src))"),
    ("mapwright", "to_pandas (by URL)", True, "import mapwright, pandas\ndef one(src):\n    return len(mapwright.to_pandas(src))"),
    ("advertools", "sitemap_to_df (by URL)", True,
     "import logging, advertools as adv\nlogging.disable(logging.WARNING)\n"
     "def one(src):\n    return int(adv.sitemap_to_df(src)['loc'].notna().sum())"),
    ("ultimate-sitemap-parser", "SitemapFetcher (by URL)", True, USP_COUNT + "\none = usp_count"),
]
REAL_RUNNER = """
import os, sys, time, resource, json
{setup}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
out = {{}}
for name, src in {sources!r}:
    n = one(src)
    reps, t, c = 0, time.perf_counter(), cpu()
    while reps < 3 or cpu() - c < {min_cpu}:
        n = one(src)
        reps += 1
    out[name] = [n, reps, time.perf_counter() - t, cpu() - c]
print(json.dumps(out))
"""


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


def run_real(setup: str, by_url: bool) -> dict:
    """{file: (URLs, CPU s per read, wall s per read)} of one pass over the real files, in a fresh interpreter."""
    sources = [(name, f"{BASE}/realworld/{name}" if by_url else str(REAL_DIR / name)) for name, _ in REAL_FILES]
    script = REAL_RUNNER.format(setup=textwrap.dedent(setup), sources=sources, min_cpu=REAL_MIN_CPU)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return {k: (n, c / reps, s / reps) for k, (n, reps, s, c) in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def real_rows() -> list:
    """Per real case: (peer, what, {file: (URLs, CPU s, wall s)} medians of --runs, note)."""
    rows = []
    for peer, what, by_url, setup in REAL_CASES:
        if a.only and not re.search(a.only, f"{peer} {what} realworld"):
            continue
        passes = [run_real(setup, by_url) for _ in range(a.runs)]
        ok = [p for p in passes if "error" not in p]
        if not ok:
            rows.append((peer, what, {}, f"error: {passes[0]['error']}"))
            print(f"{peer} {what} realworld: ERROR {passes[0]['error']}", file=sys.stderr)
            continue
        per_file = {name: (ok[0][name][0], statistics.median(p[name][1] for p in ok), statistics.median(p[name][2] for p in ok))
                    for name, _ in REAL_FILES}
        wrong = [f"{name} {per_file[name][0]}/{expected}" for name, expected in REAL_FILES if per_file[name][0] != expected]
        rows.append((peer, what, per_file, f"MISMATCH: {', '.join(wrong)}" if wrong else ""))
        urls = sum(v[0] for v in per_file.values())
        cpu = sum(v[1] for v in per_file.values())
        print(f"{peer:24} {what:44} realworld {cpu:8.4f} cpu-s {urls / cpu:12,.0f} URLs/cpu-s {rows[-1][3]}", file=sys.stderr)
    return rows


def main() -> None:
    # The small files are served beside the corpus, at /realworld/.
    link = pathlib.Path(a.corpus) / "realworld"
    if link.is_symlink():
        link.unlink()
    link.symlink_to(REAL_DIR)
    load_before = os.getloadavg()
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
        reals = [] if a.skip_real else real_rows()
    finally:
        server.terminate()
        server.wait()
    table = render(rows, reals, load_before, os.getloadavg())
    print(table)
    if a.out:
        pathlib.Path(a.out).write_text(table)


def render(rows, reals, load_before, load_after) -> str:
    import platform

    def peer_version(name: str) -> str:
        try:
            from importlib.metadata import version

            return version(name)
        except Exception:
            return "?"

    lines = [
        f"Python {platform.python_version()}, {os.cpu_count()} cores; "
        + ", ".join(f"{p} {peer_version(p)}" for p in ("mapwright-sitemaps", "ultimate-sitemap-parser", "advertools", "lxml", "pandas")),
        f"Load average (1, 5, 15 min) at the start {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"at the end {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}.",
        "",
        "| library | what | corpus | wall s | CPU s | URLs per CPU s | peak RSS (MB) | note |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for peer, what, corpus, secs, cpu, rate, rss, note in rows:
        if secs is None:
            lines.append(f"| {peer} | {what} | {corpus} | | | | | error: {note} |")
        else:
            lines.append(f"| {peer} | {what} | {corpus} | {secs:.3f} | {cpu:.3f} | {rate:,.0f} | {rss:.0f} | {note} |")
    if reals:
        lines += render_real(rows, reals)
    return "\n".join(lines) + "\n"


def render_real(rows, reals) -> list:
    """The real files: each case over all of them (URLs per CPU second of one pass), its ratio to
    the bare lxml loop file by file (lowest, median, highest), and the same ratio on s50k.xml from
    the table above; then file by file."""
    def rate(per_file, name=None):
        items = [per_file[name]] if name else list(per_file.values())
        return sum(v[0] for v in items) / sum(v[1] for v in items)

    base = {(p, w): f for p, w, f, _ in reals}
    lxml = base.get(("lxml", "iterparse loop, builds nothing"))
    adv = base.get(("advertools", "sitemap_to_df (by URL)"))
    # The same case on s50k.xml (the same peer and "what", by URL where the real one is).
    synthetic = {(r[0], r[1]): r[5] for r in rows if r[2] == "s50k.xml" and r[5]}
    s_lxml = synthetic.get(("lxml", "iterparse loop, builds nothing"))
    s_adv = synthetic.get(("advertools", "sitemap_to_df (by URL)"))
    n_files, n_urls = len(REAL_FILES), sum(n for _, n in REAL_FILES)
    lines = [
        "",
        f"Small files: {n_files} urlsets of {a.real or 'small/ (generated)'}, {n_urls} URLs (1 to {max(n for _, n in REAL_FILES)} a file); "
        f"each read in a loop for {REAL_MIN_CPU} CPU s after one untimed read, medians of {a.runs} passes. "
        "Ratios: per real file, the CPU of one read by the peer over the CPU of one read by the case (lowest / median / highest); "
        "on s50k.xml, of URLs per CPU second in this run.",
        "",
        "| library | what | URLs per CPU s (all files) | x lxml loop, real files | x lxml loop, s50k.xml | x advertools, real files | x advertools, s50k.xml | note |",
        "|---|---|---:|---|---:|---|---:|---|",
    ]

    def spread(per_file, ref):
        # Per file, how many times less CPU one read of it takes: the same file read by both, so
        # a URL one of them drops (a relative <loc>, which mapwright does not list) does not turn
        # a speed into a zero.
        if not ref:
            return ""
        ratios = sorted(ref[f][1] / per_file[f][1] for f in per_file)
        return f"{ratios[0]:.2f} / {statistics.median(ratios):.2f} / {ratios[-1]:.2f}"

    for peer, what, per_file, note in reals:
        if not per_file:
            lines.append(f"| {peer} | {what} | | | | | | {note} |")
            continue
        s = synthetic.get((peer, what))
        on_lxml = f"{s / s_lxml:.2f}" if s and s_lxml else ""
        on_adv = f"{s / s_adv:.2f}" if s and s_adv else ""
        lines.append(f"| {peer} | {what} | {rate(per_file):,.0f} | {spread(per_file, lxml)} | {on_lxml} | "
                     f"{spread(per_file, adv)} | {on_adv} | {note} |")
    names = [f"{p} {w}" for p, w, f, _ in reals if f]
    lines += ["", "URLs per CPU second, file by file:", "",
              "| file | URLs | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for name, expected in REAL_FILES:
        cells = [f"{rate(f, name):,.0f}" for _, _, f, _ in reals if f]
        lines.append(f"| {name} | {expected} | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    main()
