"""Shared fixtures: the shared/ folder beside the clone, the CLI binary, and a loopback HTTP
server (127.0.0.1, port chosen by the system) serving a dict of paths."""

from __future__ import annotations

import gzip
import http.server
import json
import os
import pathlib
import shutil
import subprocess
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def shared_dir() -> pathlib.Path:
    """shared/ beside the clone (as the Rust tests find it), or $SHARED."""
    d = pathlib.Path(os.environ.get("SHARED") or REPO.parent / "shared")
    assert (d / "PROTOCOL.md").exists(), f"shared/ not found at {d}: the tests need it beside the clone (or SHARED=...)"
    return d


@pytest.fixture(scope="session")
def shared() -> pathlib.Path:
    return shared_dir()


@pytest.fixture(scope="session")
def cli() -> str:
    """The `mapwright` binary: $MAPWRIGHT_BIN, else target/debug/mapwright of the workspace
    (built here if missing)."""
    if os.environ.get("MAPWRIGHT_BIN") and os.path.exists(os.environ["MAPWRIGHT_BIN"]):
        return os.environ["MAPWRIGHT_BIN"]
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=REPO, check=True, capture_output=True
        ).stdout
    )
    binary = pathlib.Path(meta["target_directory"]) / "debug" / "mapwright"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--locked", "-p", "mapwright"], cwd=REPO, check=True)
    return str(binary)


#: Every namespace of a sitemap with all its extensions, for a `<urlset>` that may hold any.
NS_ALL = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml" '
    'xmlns:geo="http://www.google.com/geo/schemas/sitemap/1.0"'
)


class Site:
    """Pages served by path; `hits` counts requests per path. A path in `delays` answers
    after that many seconds (a slow server)."""

    def __init__(self, delays: dict[str, float] | None = None) -> None:
        self.pages: dict[str, tuple[int, bytes, dict[str, str]]] = {}
        self.hits: dict[str, int] = {}
        site = self
        delays = delays or {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                site.hits[path] = site.hits.get(path, 0) + 1
                if path in delays:
                    time.sleep(delays[path])
                # A page added with its query (an OAI-PMH repository's pages) answers that query only.
                page = site.pages.get(self.path) or site.pages.get(path)
                status, body, headers = page or (404, b"not found", {"Content-Type": "text/plain"})
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        # Polled every 50 ms for `shutdown`, not the default 500 ms: each test's teardown
        # waits for the poll (half a second a server, a minute of the suite in all).
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def add(self, path: str, body: bytes, status: int = 200, content_type: str = "application/xml", gz: bool = False) -> str:
        if gz:
            body = gzip.compress(body)
            content_type = "application/gzip"
        self.pages[path] = (status, body, {"Content-Type": content_type})
        return self.base + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


def urlset(*urls: str, extra: str = "") -> bytes:
    body = "".join(f"<url><loc>{u}</loc>{extra}</url>" for u in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>\n'.encode()


def index(*locs: str) -> bytes:
    body = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>\n'.encode()


def source_of(kind: str, data: bytes, site: Site, tmp_path: pathlib.Path) -> object:
    """The same gzipped sitemap bytes as each source a reader takes: the bytes themselves
    ("bytes"), a file ("path") or a URL of `site` ("url")."""
    if kind == "path":
        path = tmp_path / "s.xml.gz"
        path.write_bytes(data)
        return path
    if kind == "url":
        return site.add("/s.xml.gz", data, content_type="application/gzip")
    return data


def which(name: str) -> str | None:
    return shutil.which(name)
