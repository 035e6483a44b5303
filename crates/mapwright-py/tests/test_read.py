"""mapwright.read: every kind of source, every attribute, findings, faults with positions,
hostile input, memory, and equality with the CLI's JSONL on the shared real-world files."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import pathlib
import subprocess
import sys
import textwrap
import threading

import pytest

import mapwright
from conftest import urlset

FULL = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>https://example.com/a</loc>
    <lastmod>2024-05-01T10:20:30+02:00</lastmod>
    <changefreq>weekly</changefreq>
    <priority>0.8</priority>
    <image:image><image:loc>https://example.com/a.png</image:loc><image:caption>A</image:caption></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/>
    <news:news><news:publication><news:name>Daily</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2024-05-01</news:publication_date><news:title>Hello</news:title></news:news>
  </url>
  <url><loc>https://example.com/b</loc><lastmod>2024-05-02</lastmod></url>
  <url><loc>https://example.com/c</loc><lastmod>2024-05</lastmod></url>
  <url><loc>https://example.com/d</loc><lastmod>2024-05-03T08:00:00Z</lastmod></url>
</urlset>
"""


def test_attributes_of_every_kind():
    a, b, c, d = list(mapwright.read(FULL))
    assert (a.kind, a.loc, a.changefreq, a.priority) == ("url", "https://example.com/a", "weekly", 0.8)
    assert a.lastmod == dt.datetime(2024, 5, 1, 10, 20, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert a.lastmod.utcoffset() == dt.timedelta(hours=2)
    assert a.lastmod_text == "2024-05-01T10:20:30+02:00"
    assert a.images == [{"loc": "https://example.com/a.png", "caption": "A"}]
    assert a.alternates == [{"hreflang": "de", "href": "https://example.com/de/a"}]
    assert a.news["title"] == "Hello" and a.news["publication_name"] == "Daily"
    assert a.videos == []
    assert b.lastmod == dt.date(2024, 5, 2) and not isinstance(b.lastmod, dt.datetime)
    # A month alone is no date: the text as written.
    assert c.lastmod == "2024-05"
    assert d.lastmod == dt.datetime(2024, 5, 3, 8, tzinfo=dt.timezone.utc)
    assert b.priority is None and b.changefreq is None and b.images == [] and b.news is None
    assert "https://example.com/a" in repr(a)


def test_sources_path_pathlike_file_object_bytearray_and_gzip(tmp_path: pathlib.Path):
    p = tmp_path / "s.xml.gz"
    p.write_bytes(gzip.compress(FULL))
    expected = [e.loc for e in mapwright.read(FULL)]
    assert [e.loc for e in mapwright.read(str(p))] == expected
    assert [e.loc for e in mapwright.read(p)] == expected
    with open(p, "rb") as f:
        r = mapwright.read(f)
        assert [e.loc for e in r] == expected
        assert r.name == str(p)
    assert [e.loc for e in mapwright.read(io.BytesIO(FULL))] == expected
    assert [e.loc for e in mapwright.read(bytearray(FULL))] == expected
    assert [e.loc for e in mapwright.read(memoryview(FULL))] == expected


def test_text_mode_file_is_refused_with_reason(tmp_path):
    p = tmp_path / "s.xml"
    p.write_bytes(FULL)
    with open(p, "r") as f, pytest.raises(mapwright.SitemapError, match="binary mode"):
        list(mapwright.read(f))


def test_missing_file_raises_at_the_call():
    with pytest.raises(FileNotFoundError):
        mapwright.read("/nonexistent/sitemap.xml")


def test_bad_source_type():
    with pytest.raises(TypeError, match="source must be"):
        mapwright.read(42)


def test_index_and_text_formats():
    idx = b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s1.xml</loc><lastmod>2024-01-01</lastmod></sitemap></sitemapindex>'
    r = mapwright.read(idx)
    (e,) = list(r)
    assert (e.kind, e.loc, e.lastmod, e.changefreq) == ("sitemap", "https://example.com/s1.xml", dt.date(2024, 1, 1), None)
    assert r.format == "sitemapindex"
    r = mapwright.read(b"https://example.com/x\nhttps://example.com/y\n")
    assert [e.loc for e in r] == ["https://example.com/x", "https://example.com/y"]
    assert r.format == "text"


def test_findings_have_rule_severity_and_position():
    xml = urlset("https://example.com/ok", "not a url", extra="")
    xml = xml.replace(b"<url><loc>https://example.com/ok</loc></url>", b"<url><loc>https://example.com/ok</loc><priority>7</priority></url>")
    r = mapwright.read(xml)
    assert [e.loc for e in r] == ["https://example.com/ok"]
    rules = {f.rule: f for f in r.findings}
    assert "loc-not-absolute" in rules and "priority-range" in rules
    f = rules["loc-not-absolute"]
    assert f.severity == "error" and f.line == 2 and f.column > 1 and f.file == "<bytes>"
    assert str(f).startswith("<bytes>:2:") and "[loc-not-absolute]" in str(f)


def test_malformed_yields_entries_before_fault_then_raises_with_position():
    xml = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url><loc>https://example.com/1</loc></url>\n<url><loc>https://example.com/2</loc></url>\n<url><loc>https://example.com/3</loc></bad>\n'
    got = []
    with pytest.raises(mapwright.MalformedSitemapError) as exc:
        for e in mapwright.read(xml):
            got.append(e.loc)
    assert got[:2] == ["https://example.com/1", "https://example.com/2"]
    err = exc.value
    assert isinstance(err, mapwright.SitemapError)
    assert err.rule == "xml-malformed" and err.line == 4 and err.column is not None
    assert str(err).startswith(f"{err.line}:{err.column}: malformed XML")


def test_error_position_is_the_one_the_cli_prints(cli, tmp_path):
    p = tmp_path / "bad.xml"
    p.write_bytes(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url><loc>https://example.com/1</loc></url>\n<url><loc>x</loc>\n</urlset>\n')
    out = subprocess.run([cli, "read", "--format", "jsonl", str(p)], capture_output=True, text=True)
    cli_error = [l for l in out.stderr.splitlines() if ": error: " in l][0]
    with pytest.raises(mapwright.SitemapError) as exc:
        list(mapwright.read(p))
    assert cli_error == f"{p}: error: {exc.value}"


def test_not_a_sitemap():
    with pytest.raises(mapwright.NotASitemapError) as exc:
        list(mapwright.read(b"<html><body>hello</body></html>"))
    assert exc.value.line == 1 and exc.value.rule == "unknown-root"


def test_strict_drops_out_of_scope_with_finding():
    xml = urlset("https://example.com/blog/a", "https://example.com/other", "https://evil.example/x")
    r = mapwright.read(xml, url="https://example.com/blog/sitemap.xml", strict=True)
    assert [e.loc for e in r] == ["https://example.com/blog/a"]
    dropped = [f.loc for f in r.findings if f.rule == "loc-out-of-scope"]
    assert dropped == ["https://example.com/other", "https://evil.example/x"]
    # Without strict, everything is kept.
    assert len(list(mapwright.read(xml, url="https://example.com/blog/sitemap.xml"))) == 3
    with pytest.raises(ValueError, match="strict=True needs url"):
        mapwright.read(xml, strict=True)


def test_max_bytes_limit_raises_too_large():
    xml = urlset(*[f"https://example.com/{i}" for i in range(2000)])
    with pytest.raises(mapwright.SitemapTooLargeError) as exc:
        list(mapwright.read(xml, max_bytes=10_000))
    assert exc.value.rule == "too-large"


def _run_measured(code: str) -> tuple[dict, int]:
    """Runs `code` in a fresh interpreter; returns its printed JSON and peak RSS in KiB.

    The peak is the interpreter's own (VmHWM): Linux carries `ru_maxrss` over from the forking
    process across exec, so pytest's size (pandas, pyarrow and polars loaded by other tests)
    would count as the child's."""
    script = textwrap.dedent(code) + textwrap.dedent("""
        import json, resource
        def _peak_kib():
            try:
                with open("/proc/self/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            return int(line.split()[1])
            except OSError:
                pass
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({'rss': _peak_kib(), **OUT}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data, data["rss"]


def test_gzip_bomb_stops_with_exception_and_bounded_memory(tmp_path):
    # 1 GiB of empty comments inside a urlset (each a short token), gzipped to about 1 MiB.
    bomb = tmp_path / "bomb.xml.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as g:
        g.write(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/</loc></url>')
        chunk = b"<!---->" * ((1 << 20) // 7) + b" " * ((1 << 20) % 7)
        for _ in range(1024):
            g.write(chunk)
        g.write(b"</urlset>")
    assert bomb.stat().st_size < 4 << 20
    data, rss = _run_measured(f"""
        import mapwright
        OUT = {{}}
        n = 0
        try:
            for e in mapwright.read({str(bomb)!r}):
                n += 1
        except mapwright.SitemapTooLargeError as e:
            OUT = {{"error": type(e).__name__, "rule": e.rule, "entries": n, "msg": str(e)}}
    """)
    assert data["error"] == "SitemapTooLargeError" and data["rule"] == "too-large"
    assert data["entries"] == 1
    # Stopped at the 50 MiB limit, never holding it: far below the 1 GiB it inflates to.
    assert rss < 150 * 1024, f"peak RSS {rss} KiB"


def test_memory_flat_while_iterating(tmp_path):
    def make(n: int) -> pathlib.Path:
        p = tmp_path / f"s{n}.xml"
        with open(p, "wb") as f:
            f.write(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
            line = "<url><loc>https://example.com/page-{0}/a-rather-long-path-segment-{0}</loc><lastmod>2024-01-01</lastmod></url>\n"
            for i in range(n):
                f.write(line.format(i).encode())
            f.write(b"</urlset>\n")
        return p

    code = """
        import mapwright
        n = 0
        for e in mapwright.read({path!r}, max_bytes=1 << 30):
            n += 1
            e.loc
        OUT = {{"n": n}}
    """
    small, big = make(20_000), make(400_000)
    d1, rss_small = _run_measured(code.format(path=str(small)))
    d2, rss_big = _run_measured(code.format(path=str(big)))
    assert (d1["n"], d2["n"]) == (20_000, 400_000)
    # 20x the file (45 MB), the same memory within a few MiB.
    assert big.stat().st_size > 40_000_000
    assert rss_big - rss_small < 16 * 1024, f"{rss_small} KiB -> {rss_big} KiB"


def test_parsing_runs_without_the_gil(tmp_path):
    # While one thread waits on the reader, another runs Python: both finish.
    p = tmp_path / "s.xml"
    p.write_bytes(urlset(*[f"https://example.com/{i}" for i in range(100_000)]))
    counts = {}

    def consume(key: str) -> None:
        counts[key] = sum(1 for _ in mapwright.read(p))

    threads = [threading.Thread(target=consume, args=(k,)) for k in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert counts == {"a": 100_000, "b": 100_000}


def test_url_source_over_http(site):
    url = site.add("/blog/sitemap.xml.gz", urlset("https://other.example/x", f"{site.base}/blog/a"), gz=True)
    r = mapwright.read(url)
    entries = list(r)
    assert [e.loc for e in entries] == ["https://other.example/x", f"{site.base}/blog/a"]
    assert entries[0].sitemap == url
    # The scope of a URL source is its URL: strict drops the other host.
    assert [e.loc for e in mapwright.read(url, strict=True)] == [f"{site.base}/blog/a"]


def test_url_source_http_error_raises_fetch_error(site):
    with pytest.raises(mapwright.FetchError, match="404"):
        mapwright.read(site.base + "/missing.xml")


def test_read_equals_cli_jsonl_on_realworld_files(cli, shared):
    files = sorted(p for p in (shared / "realworld" / "files").iterdir() if p.suffix in (".xml", ".txt", ".gz"))
    assert len(files) >= 30
    compared = 0
    for p in files:
        out = subprocess.run([cli, "read", "--format", "jsonl", "--quiet", str(p)], capture_output=True, text=True)
        expected = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
        got = []
        error = None
        try:
            for e in mapwright.read(p):
                got.append(e.to_dict())
        except mapwright.SitemapError as exc:
            error = exc
        assert got == expected, p.name
        # The CLI fails (exit 1) exactly when the package raises, or when nothing was read: the
        # CLI never reads nothing in silence, the package gives an empty iterator whose findings
        # say why.
        assert (out.returncode == 1) == (error is not None or not got), (p.name, out.returncode, error)
        compared += len(got)
    assert compared > 500


def test_oai_pmh_base_url_is_read_across_its_pages(site):
    # The answers of crates/mapwright-core/tests/data/oai, as a repository at /oai2 gives them.
    data = pathlib.Path(__file__).resolve().parents[2] / "mapwright-core" / "tests" / "data" / "oai"

    def answer(name: str) -> bytes:
        return (data / name).read_text().replace("{{BASE}}", site.base).encode()

    site.add("/oai2", answer("badverb.xml"), content_type="text/xml")
    site.add("/oai2?verb=ListRecords&metadataPrefix=oai_dc", answer("listrecords-1.xml"))
    site.add("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100", answer("listrecords-2.xml"))
    site.add("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", answer("listrecords-3.xml"))
    r = mapwright.read(site.base + "/oai2", strict=True)
    entries = list(r)
    assert r.format == "oai-pmh"
    assert [e.loc for e in entries] == [f"{site.base}/handle/1234/{n}" for n in (101, 105, 106, 107)]
    assert entries[0].lastmod == dt.datetime(2024, 3, 5, 14, 22, 9, tzinfo=dt.timezone.utc)
    assert site.hits["/oai2"] == 4
    rules = [f.rule for f in r.findings]
    assert {"oai-no-url", "oai-deleted", "lastmod-format", "loc-out-of-scope"} <= set(rules), rules
    rep = mapwright.validate(site.base + "/oai2")
    assert rep.summary["entries"] == 5 and not rep.ok
    assert {f.rule for f in rep.findings} >= {"oai-no-url", "lastmod-format", "loc-out-of-scope"}


def test_atom_relative_links_resolve_against_the_feed_url_and_xml_base(site):
    feed = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="/posts/1"/></entry>'
        b'<entry xml:base="/news/"><link rel="alternate" href="2"/></entry></feed>'
    )
    url = site.add("/feeds/atom.xml", feed, content_type="application/atom+xml")
    want = [f"{site.base}/posts/1", f"{site.base}/news/2"]
    # The feed's own URL is the base: from a URL source, and from bytes with url=.
    assert [e.loc for e in mapwright.read(url)] == want
    assert [e.loc for e in mapwright.read(feed, url=url)] == want
    assert list(mapwright.to_pandas(url)["loc"]) == want
    # Without a base nothing resolves them: each is skipped with a finding, as before.
    # (and, no entry read at all, the read says so at its end, as the CLI's does).
    r = mapwright.read(feed)
    with pytest.raises(mapwright.NoUrlError, match="all 2 entries were skipped"):
        list(r)
    assert [f.rule for f in r.findings] == ["loc-not-absolute", "loc-not-absolute"]
