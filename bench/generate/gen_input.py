#!/usr/bin/env python3
"""Writes the benchmark input of `mapwright generate list`: N records of the peer harness's
formula (shared/bench/python/records.py, the same as rust-peers' record(i) and node's
records.mjs) as CSV with a header: loc,lastmod,changefreq,priority.

usage: gen_input.py N OUT.csv [--shared DIR]"""
import argparse
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("out")
# shared/ beside the clone, as the tests find it.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ap.add_argument("--shared", default=os.environ.get("SHARED") or os.path.join(os.path.dirname(REPO), "shared"))
a = ap.parse_args()
sys.path.insert(0, os.path.join(a.shared, "bench", "python"))
from records import record  # noqa: E402

with open(a.out + ".tmp", "w", buffering=1 << 20) as f:
    f.write("loc,lastmod,changefreq,priority\n")
    for i in range(a.n):
        loc, lastmod, cf, pr = record(i)
        f.write(f"{loc},{lastmod},{cf},{pr:.1f}\n")
os.replace(a.out + ".tmp", a.out)
