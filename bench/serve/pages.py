"""The page latencies of bench/serve/scale.sh: p50/p99 of the console's pages and their API
equivalents, as a signed-in user with 100 sites (each an index of two children) on a
service holding 10^4 sites. Python's http.client, one keep-alive connection, requests one after
another (latency, not throughput), R per page, each on the next of the user's sites so that no
page is only ever read from one warm row. Every answer must be 200 and non-empty.

usage: pages.py BASE EMAIL PASSWORD REQUESTS BACKEND
"""

import http.client
import json
import sys
import time
import urllib.parse

LIMIT_MS = 50.0


def main():
    base, email, password, requests, backend = sys.argv[1:6]
    requests = int(requests)
    parsed = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)

    def call(method, path, body=None, headers=None):
        conn.request(method, path, body=body, headers=headers or {})
        answer = conn.getresponse()
        return answer, answer.read()

    answer, _ = call("POST", "/api/v1/signin", json.dumps({"email": email, "password": password}),
                     {"content-type": "application/json"})
    assert answer.status == 200, answer.status
    cookie = answer.getheader("set-cookie").split(";")[0]
    answer, body = call("POST", "/api/v1/tokens", json.dumps({"name": "scale"}),
                        {"content-type": "application/json", "cookie": cookie})
    assert answer.status in (200, 201), (answer.status, body)
    bearer = {"authorization": "Bearer " + json.loads(body)["secret"]}
    browser = {"cookie": cookie}

    _, body = call("GET", "/api/v1/sites", headers=bearer)
    sites = [s["id"] for s in json.loads(body)]
    indexes, children = [], []
    for site in sites:
        _, body = call("GET", f"/api/v1/sites/{site}/sitemaps", headers=bearer)
        listed = json.loads(body)
        listed = listed.get("items", listed) if isinstance(listed, dict) else listed
        for sm in listed:
            (indexes if sm.get("parent_id") is None else children).append(sm["id"])
    assert sites and indexes and children, (sites, indexes, children)

    def cycle(ids):
        return lambda i: ids[i % len(ids)]

    site, index, child = cycle(sites), cycle(indexes), cycle(children)
    # Alike on purpose: a table, one row per page measured: (kind, name, path of request i,
    # headers).
    pages = [
        ("console", "My sitemaps", lambda i: "/sitemaps", browser),
        ("console", "a site (with the failing-URL report)", lambda i: f"/sites/{site(i)}", browser),
        ("console", "failing-URL report, 404s", lambda i: f"/sites/{site(i)}?kind=404", browser),
        ("console", "failing URLs, CSV", lambda i: f"/sites/{site(i)}/failing.csv", browser),
        ("console", "a sitemap index", lambda i: f"/sitemaps/{index(i)}", browser),
        ("console", "a sitemap (its URLs)", lambda i: f"/sitemaps/{child(i)}", browser),
        ("console", "URL search in a sitemap", lambda i: f"/sitemaps/{child(i)}?q=page-1{i % 10}", browser),
        ("API", "GET /api/v1/sites", lambda i: "/api/v1/sites", bearer),
        ("API", "GET /api/v1/sites/{id}", lambda i: f"/api/v1/sites/{site(i)}", bearer),
        ("API", "GET /api/v1/sites/{id}/sitemaps", lambda i: f"/api/v1/sites/{site(i)}/sitemaps", bearer),
        ("API", "GET /api/v1/sitemaps/{id}", lambda i: f"/api/v1/sitemaps/{child(i)}", bearer),
        ("API", "GET /api/v1/sites/{id}/urls (1,000)", lambda i: f"/api/v1/sites/{site(i)}/urls", bearer),
        ("API", "GET /api/v1/sites/{id}/url-check", lambda i: f"/api/v1/sites/{site(i)}/url-check", bearer),
    ]
    print(f"| backend | kind | page | p50 ms | p99 ms | p50 / {LIMIT_MS:.0f} ms | requests |")
    print("|---|---|---|---:|---:|---:|---:|")
    missed = []
    for kind, name, path, headers in pages:
        call("GET", path(0), headers=headers)  # one warm-up
        times = []
        for i in range(requests):
            started = time.perf_counter()
            answer, body = call("GET", path(i), headers=headers)
            times.append((time.perf_counter() - started) * 1000)
            if answer.status != 200 or not body:
                sys.exit(f"{path(i)}: {answer.status} {body[:300]!r}")
        times.sort()
        p50, p99 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]
        print(f"| {backend} | {kind} | {name} | {p50:.1f} | {p99:.1f} | {p50 / LIMIT_MS:.0%} | {requests} |")
        if p50 >= LIMIT_MS:
            missed.append(name)
    if missed:
        print(f"MISSED the {LIMIT_MS:.0f} ms p50: {', '.join(missed)}")


if __name__ == "__main__":
    main()
