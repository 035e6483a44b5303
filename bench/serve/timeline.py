#!/usr/bin/env python3
"""A timeline per sitemap read from the log of `mapwright serve` run with
RUST_LOG=mapwright_server::jobs=debug (bench/serve/refetch.sh keeps it with SERVE_LOG=PREFIX).

usage: bench/serve/timeline.py LOG [START]

START (Unix seconds, e.g. the `submitted at` refetch.sh prints) is time zero; without it, the
first lease. One line per read, in lease order: when it was leased, its body received whole
(only when it had a key to compare with), read and staged, merged, and done, in ms from zero;
then where the time between the first lease and the last `fetched` went.
"""
import re
import sys
from datetime import datetime

EVENTS = {
    "leased": "leased",
    "body received whole": "received",
    "read and staged": "staged",
    "merged": "merged",
    "fetched": "done",
}
LINE = re.compile(r"^(\S+)\s+\w+\s+\S+: (.*?)(?: (\w+=.*))?$")


def main():
    log = sys.argv[1]
    start = float(sys.argv[2]) if len(sys.argv) > 2 else None
    reads = []  # one dict per read, in lease order
    current = {}  # sitemap id -> its read under way
    with open(log, encoding="utf-8", errors="replace") as f:
        for raw in f:
            m = LINE.match(raw.strip())
            if not m:
                continue
            stamp, message, fields = m.group(1), m.group(2), m.group(3) or ""
            event = EVENTS.get(message)
            sitemap = re.search(r"\bsitemap=(\d+)", fields)
            if not event or not sitemap:
                continue
            t = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
            sid = int(sitemap.group(1))
            if event == "leased":
                current[sid] = {"sitemap": sid, "leased": t}
                reads.append(current[sid])
            elif sid in current:
                current[sid][event] = t
    if not reads:
        print("no reads in the log (was RUST_LOG=mapwright_server::jobs=debug set?)")
        return
    zero = start if start is not None else reads[0]["leased"]
    cols = ["leased", "received", "staged", "merged", "done"]
    print("sitemap " + " ".join(f"{c:>9}" for c in cols) + "  (ms from zero)")
    for r in reads:
        cells = [f"{1000 * (r[c] - zero):9.0f}" if c in r else f"{'-':>9}" for c in cols]
        print(f"{r['sitemap']:>7} " + " ".join(cells))
    first = min(r["leased"] for r in reads)
    last = max(r.get("done", r["leased"]) for r in reads)
    busy = sum(r["done"] - r["leased"] for r in reads if "done" in r)
    print(f"first lease {1000 * (first - zero):.0f} ms after zero; last done {1000 * (last - zero):.0f} ms")
    print(f"reads in flight on average: {busy / max(last - first, 1e-9):.2f}")
    for a, b in [("leased", "staged"), ("staged", "merged"), ("merged", "done")]:
        spans = [r[b] - r[a] for r in reads if a in r and b in r]
        if spans:
            print(f"{a} -> {b}: sum {1000 * sum(spans):.0f} ms, max {1000 * max(spans):.0f} ms")


if __name__ == "__main__":
    main()
