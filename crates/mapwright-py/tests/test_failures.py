"""Failures raise, everywhere: every entry point, every failure kind, from a URL (a loopback
server), a path and bytes alike. Nothing readable raises the cause's own class naming the URL;
a partial result raises PartialSitemapError carrying what was read, or warns with errors="warn"."""

from __future__ import annotations

import gzip
import pathlib
import json
import socket
import subprocess
import warnings

import pytest

import mapwright
from conftest import index, source_of, urlset

HTML = b"<!doctype html><html><head><title>Not found</title></head><body>gone</body></html>"


def many(n: int, base: str = "https://example.com") -> bytes:
    return urlset(*(f"{base}/page/{i}" for i in range(n)))


def big_before_any_entry() -> bytes:
    """120 kB with no entry complete in its first 20 kB (a long comment first): over a 20 kB
    limit, nothing is read whatever the chunks the body arrives in."""
    head = b'<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><!--' + b"x" * 30_000 + b"-->"
    return head + many(2500)[len(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'):]


def truncated_gzip_at_once() -> bytes:
    """A gzip stream cut inside its header: nothing decompresses."""
    return gzip.compress(many(10))[:12]


def truncated_gzip_half() -> bytes:
    """A gzip stream cut half-way: some entries decompress, then it ends."""
    z = gzip.compress(many(5000))
    return z[: len(z) // 2]


def refused_url() -> str:
    """A loopback port nobody listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/sitemap.xml"


# --- nothing readable: the cause's class, with the URL -------------------------------------------------

# (name, how the site serves it, the exception, words of the message)
NOTHING = [
    ("404", lambda site: site.base + "/missing.xml", mapwright.FetchError, "404"),
    ("refused", lambda site: refused_url(), mapwright.FetchError, "connect"),
    ("html", lambda site: site.add("/page.xml", HTML, content_type="text/html"), mapwright.NotASitemapError, "HTML"),
    (
        "truncated gzip",
        lambda site: site.add("/s.xml.gz", truncated_gzip_at_once(), content_type="application/gzip"),
        mapwright.GzipError,
        "gzip",
    ),
    (
        "over the limit on the wire",
        lambda site: site.add("/big.xml", big_before_any_entry()),
        mapwright.SitemapTooLargeError,
        "more than 20000 bytes",
    ),
]


@pytest.mark.parametrize("name,serve,exc,words", NOTHING, ids=[n[0] for n in NOTHING])
@pytest.mark.parametrize("entry", ["read", "to_pandas", "to_polars", "discover"])
def test_nothing_readable_from_a_url_raises_the_cause_with_the_url(site, entry, name, serve, exc, words):
    url = serve(site)
    # The "too large" case: 120 kB against a 20 kB limit (the 50 MiB default is tested below).
    kw = {"max_bytes": 20_000}
    with pytest.raises(exc) as e:
        if entry == "read":
            list(mapwright.read(url, **kw))
        elif entry == "discover":
            list(mapwright.discover(url, mode="sitemap", **kw))
        else:
            getattr(mapwright, entry)(url, **kw)
    assert isinstance(e.value, mapwright.SitemapError)
    assert e.value.url == url, (e.value.url, url)
    assert url in str(e.value) and words.lower() in str(e.value).lower(), str(e.value)
    assert not isinstance(e.value, mapwright.PartialSitemapError)


@pytest.mark.parametrize("name,serve,exc,words", [n for n in NOTHING if n[0] in ("404", "refused")], ids=["404", "refused"])
def test_validate_of_a_url_that_gives_nothing_raises(site, name, serve, exc, words):
    url = serve(site)
    with pytest.raises(exc, match=words) as e:
        mapwright.validate(url)
    assert e.value.url == url


@pytest.mark.parametrize(
    "data,exc",
    [
        (HTML, mapwright.NotASitemapError),
        (truncated_gzip_at_once(), mapwright.GzipError),
        (b"", mapwright.NotASitemapError),
        (big_before_any_entry(), mapwright.SitemapTooLargeError),
    ],
    ids=["html", "truncated gzip", "empty", "over the limit"],
)
@pytest.mark.parametrize("kind", ["path", "bytes"])
@pytest.mark.parametrize("entry", ["read", "to_pandas", "to_polars"])
def test_nothing_readable_from_a_path_or_bytes_raises_the_cause(tmp_path: pathlib.Path, entry, kind, data, exc):
    source: object = data
    if kind == "path":
        p = tmp_path / "s.xml"
        p.write_bytes(data)
        source = p
    with pytest.raises(exc) as e:
        if entry == "read":
            list(mapwright.read(source, max_bytes=20_000))  # type: ignore[arg-type]
        else:
            getattr(mapwright, entry)(source, max_bytes=20_000)
    assert not isinstance(e.value, mapwright.PartialSitemapError)
    assert e.value.url is None


def test_validate_judges_what_it_received_in_the_report():
    # validate's answer about bytes it received is its report: not a sitemap is an error finding.
    rep = mapwright.validate(HTML)
    assert not rep.ok and [f.rule for f in rep.findings if f.severity == "error"] == ["unknown-root"]


def test_a_site_without_any_sitemap_raises(site):
    # robots.txt 404 and every usual path 404: no URL, said by an exception.
    with pytest.raises(mapwright.FetchError, match="no sitemap found") as e:
        list(mapwright.discover(site.base + "/"))
    assert e.value.url == site.base + "/"
    # An HTML page served at every usual path is no sitemap either.
    for p in ("/sitemap.xml", "/sitemap_index.xml"):
        site.add(p, HTML, content_type="text/html")
    with pytest.raises(mapwright.FetchError, match="no sitemap found"):
        list(mapwright.discover(site.base + "/"))


def test_a_site_whose_robots_txt_sitemaps_all_fail_raises_the_first_cause(site):
    site.add("/robots.txt", f"Sitemap: {site.base}/a.xml\n".encode(), content_type="text/plain")
    with pytest.raises(mapwright.FetchError, match="404"):
        list(mapwright.discover(site.base + "/"))


def test_over_50_mib_by_default_is_refused(site):
    # 51 MiB uncompressed behind a small gzip: the protocol's limit stops it, after the entries
    # before the limit: a partial result, whose cause is the limit.
    body = urlset(*(f"https://example.com/{'x' * 900}/{i}" for i in range(57_000)))
    assert len(body) > 50 * 1024 * 1024
    url = site.add("/huge.xml.gz", body, gz=True)
    with pytest.raises(mapwright.PartialSitemapError) as e:
        mapwright.to_pandas(url)
    assert isinstance(e.value.__cause__, mapwright.SitemapTooLargeError)
    assert 0 < len(e.value.frame) < 57_000
    assert [u for u, _ in e.value.failed] == [url]


# --- partial results: PartialSitemapError carrying the frame, or errors="warn" ------------------------


def site_with_a_failing_child(site) -> tuple[str, str]:
    b = site.base
    site.add("/a.xml", urlset(f"{b}/1", f"{b}/2"))
    site.add("/html.xml", HTML, content_type="text/html")
    return site.add("/index.xml", index(f"{b}/a.xml", f"{b}/gone.xml", f"{b}/html.xml")), b


@pytest.mark.parametrize("entry", ["to_pandas", "to_polars"])
def test_an_index_whose_children_fail_raises_partial_with_the_frame(site, entry):
    url, b = site_with_a_failing_child(site)
    with pytest.raises(mapwright.PartialSitemapError) as e:
        getattr(mapwright, entry)(url)
    err = e.value
    assert isinstance(err, mapwright.SitemapError) and err.url == url
    assert sorted(u for u, _ in err.failed) == [f"{b}/gone.xml", f"{b}/html.xml"]
    assert "2 sources could not be read" in str(err)
    assert sorted(err.frame["loc"].to_list()) == [f"{b}/1", f"{b}/2"]
    assert isinstance(err.__cause__, (mapwright.FetchError, mapwright.NotASitemapError))


@pytest.mark.parametrize("entry", ["to_pandas", "to_polars"])
def test_errors_warn_returns_the_partial_frame_with_a_warning(site, entry):
    url, b = site_with_a_failing_child(site)
    with pytest.warns(mapwright.PartialSitemapWarning, match="gone.xml"):
        df = getattr(mapwright, entry)(url, errors="warn")
    assert sorted(df["loc"].to_list()) == [f"{b}/1", f"{b}/2"]
    with pytest.raises(ValueError, match="errors must be"):
        getattr(mapwright, entry)(url, errors="ignore")


def test_discover_raises_partial_after_the_urls_and_keeps_the_summary(site):
    url, b = site_with_a_failing_child(site)
    d = mapwright.discover(url)
    got = []
    with pytest.raises(mapwright.PartialSitemapError) as e:
        for entry in d:
            got.append(entry.loc)
    assert sorted(got) == [f"{b}/1", f"{b}/2"]
    assert e.value.frame is None and len(e.value.failed) == 2
    assert len(d.summary["failed"]) == 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        d = mapwright.discover(url, errors="warn")
        assert len(list(d)) == 2
    assert [x.category for x in w] == [mapwright.PartialSitemapWarning]
    assert len(d.summary["failed"]) == 2


@pytest.mark.parametrize("kind", ["url", "path", "bytes"])
@pytest.mark.parametrize("entry", ["to_pandas", "to_polars"])
def test_a_file_broken_after_some_entries_is_partial_alike_from_every_source(site, tmp_path, kind, entry):
    data = truncated_gzip_half()
    source = source_of(kind, data, site, tmp_path)
    with pytest.raises(mapwright.PartialSitemapError) as e:
        getattr(mapwright, entry)(source)
    n = len(e.value.frame)
    assert 0 < n < 5000
    assert isinstance(e.value.__cause__, mapwright.GzipError)
    assert len(e.value.failed) == 1 and "gzip" in e.value.failed[0][1].lower()
    with pytest.warns(mapwright.PartialSitemapWarning):
        assert len(getattr(mapwright, entry)(source, errors="warn")) == n
    # read() yields the entries before the fault, then raises the cause itself.
    got = 0
    with pytest.raises(mapwright.GzipError):
        for _ in mapwright.read(source):  # type: ignore[arg-type]
            got += 1
    assert got == n


@pytest.mark.parametrize("kind", ["url", "path", "bytes"])
def test_over_the_limit_after_some_entries_is_partial_alike_from_every_source(site, tmp_path, kind):
    data = gzip.compress(many(3000))  # ~120 kB uncompressed; the limit is 20 kB
    source = source_of(kind, data, site, tmp_path)
    with pytest.raises(mapwright.PartialSitemapError) as e:
        mapwright.to_pandas(source, max_bytes=20_000)
    assert isinstance(e.value.__cause__, mapwright.SitemapTooLargeError)
    assert 0 < len(e.value.frame) < 3000


def test_a_usual_path_that_is_no_sitemap_is_judged_as_the_cli_judges_it(site, cli, tmp_path):
    # An HTML page at a usual path beside a sitemap at another: the CLI's discover exits 1 and
    # its --sites summary says the site is not ok; discover says the same (a partial result
    # naming that path), and discover_many of the same site too.
    site.add("/sitemap.xml", urlset(f"{site.base}/a"))
    site.add("/sitemap_index.xml", HTML, content_type="text/html")
    (tmp_path / "sites.txt").write_text(site.base + "\n")
    out = subprocess.run([cli, "discover", "--sites", "sites.txt", "-q", "--out", "u.jsonl", "--summary", "s.jsonl"],
                         cwd=tmp_path, capture_output=True, text=True)
    line = json.loads((tmp_path / "s.jsonl").read_text())
    assert out.returncode == 1 and not line["ok"], (out.stderr, line)
    with pytest.raises(mapwright.PartialSitemapError) as e:
        got = [x.loc for x in mapwright.discover(site.base + "/")]
    assert [u for u, _ in e.value.failed] == [f"{site.base}/sitemap_index.xml"]
    with pytest.warns(mapwright.PartialSitemapWarning):
        d = mapwright.discover(site.base + "/", errors="warn")
        got = [x.loc for x in d]
    assert got == [f"{site.base}/a"]
    assert d.summary["seeds_from"] == "usual paths" and d.summary["ok"] is False and d.summary["ended"] == line["ended"]
    many = mapwright.discover_many([site.base], errors="rows")
    pa = pytest.importorskip("pyarrow")
    rows = pa.table(many).to_pylist()
    assert [r["sitemap"] for r in rows if r["errors"]] == [f"{site.base}/sitemap_index.xml"]
    assert [s["ok"] for s in many.summaries] == [False]
