#!/usr/bin/env python3
"""Peers of `mapwright discover --sites`: each site of LIST discovered in a thread pool of
WORKERS threads (as generous as mapwright's --hosts-in-flight), from its robots.txt.

usage: peers.py usp|advertools LIST WORKERS

- usp: ultimate-sitemap-parser's sitemap_tree_for_homepage(site, use_known_paths=False)
  (robots.txt, then what it names; the known-path probes are off, as mapwright probes only
  when robots.txt names no sitemap), pages counted with all_pages().
- advertools: sitemap_to_df(site + "robots.txt") (robots.txt, then the index, its children in
  advertools' own pool of 8 threads), rows with a loc counted.

Prints urls=N sites=N failed=N.
"""
import logging
import sys
from concurrent.futures import ThreadPoolExecutor


def usp_site(site):
    from usp.tree import sitemap_tree_for_homepage

    tree = sitemap_tree_for_homepage(site, use_known_paths=False)
    return sum(1 for _ in tree.all_pages())


def advertools_site(site):
    import advertools as adv

    df = adv.sitemap_to_df(site + "robots.txt")
    return int(df["loc"].notna().sum()) if "loc" in df else 0


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("usp", "advertools"):
        sys.exit(__doc__)
    logging.disable(logging.CRITICAL)
    one = usp_site if sys.argv[1] == "usp" else advertools_site
    with open(sys.argv[2]) as f:
        sites = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    # Import once before the pool starts (the import is not what is compared).
    if sys.argv[1] == "usp":
        import usp.tree  # noqa: F401
    else:
        import advertools  # noqa: F401
    def guarded(site):
        try:
            return one(site)
        except Exception as e:  # a failed site counts as failed, as in mapwright's summary
            print(f"{site}: {e}", file=sys.stderr)
            return 0

    urls = failed = 0
    with ThreadPoolExecutor(max_workers=int(sys.argv[3])) as pool:
        for n in pool.map(guarded, sites):
            urls += n
            failed += n == 0
    print(f"urls={urls} sites={len(sites)} failed={failed}")


if __name__ == "__main__":
    main()
