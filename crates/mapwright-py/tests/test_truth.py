"""No silent empties, and the Python functions say what the CLI says: relative <loc>s read from a
URL give their rows; sitemaps whose every entry is dropped raise NoUrlError (discover and
discover_many alike, as the CLI's --sites summary judges the site); an index read from a file
has its children read, never listed as pages; an entity never expanded does not end up inside a
URL; every call that fetches takes timeout=; discover_many is an Arrow C stream that pyarrow,
polars and DuckDB read directly."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import warnings

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pytest

import mapwright
from conftest import Site, index, urlset

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def relative_urlset(*paths: str) -> bytes:
    return f"<urlset {NS}>{''.join(f'<url><loc>{p}</loc></url>' for p in paths)}</urlset>".encode()


# --- relative <loc>s -------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["to_pandas", "to_polars"])
def test_site_relative_locs_read_by_url_give_their_rows(site, entry):
    b = site.base
    site.add("/maps/urls.xml", relative_urlset("/a", "/b", "../c?x=1"))
    # An index whose children are site-relative too: followed.
    site.add("/index.xml", f"<sitemapindex {NS}><sitemap><loc>/maps/urls.xml</loc></sitemap></sitemapindex>".encode())
    for url in (f"{b}/maps/urls.xml", f"{b}/index.xml"):
        df = getattr(mapwright, entry)(url)
        assert sorted(df["loc"].to_list()) == [f"{b}/a", f"{b}/b", f"{b}/c?x=1"], url
    r = mapwright.read(f"{b}/maps/urls.xml")
    assert [e.loc for e in r] == [f"{b}/a", f"{b}/b", f"{b}/c?x=1"]
    assert [f.rule for f in r.findings] == ["loc-not-absolute"] * 3
    assert "read as" in r.findings[0].message


def test_site_relative_locs_without_a_url_raise_no_url_error_not_an_empty_frame(tmp_path):
    data = relative_urlset("/a", "/b")
    (tmp_path / "s.xml").write_bytes(data)
    for source in (data, tmp_path / "s.xml"):
        with pytest.raises(mapwright.NoUrlError, match="loc-not-absolute"):
            mapwright.to_pandas(source)
        with pytest.raises(mapwright.NoUrlError):
            mapwright.to_polars(source)
    # With the URL it is served at, they are that site's URLs.
    assert list(mapwright.to_pandas(mapwright.read(data, url="https://example.com/s.xml"))["loc"]) == [
        "https://example.com/a",
        "https://example.com/b",
    ]
    # read() says it too, at the end of its entries, as the CLI's read does (exit 1, the same words).
    with pytest.raises(mapwright.NoUrlError, match="all 2 entries were skipped"):
        list(mapwright.read(data))


@pytest.mark.parametrize("entry", ["read", "to_pandas", "discover"])
def test_a_sitemap_that_lists_no_entry_is_no_silent_success_as_in_the_cli(site, cli, tmp_path, entry):
    empty = f'<?xml version="1.0"?>\n<urlset {NS}></urlset>\n'.encode()
    (tmp_path / "e.xml").write_bytes(empty)
    out = subprocess.run([cli, "read", str(tmp_path / "e.xml")], capture_output=True, text=True)
    assert out.returncode == 1 and "no entries read" in out.stderr
    url = site.add("/sitemap.xml", empty)
    calls = {"read": lambda s: list(mapwright.read(s)), "to_pandas": mapwright.to_pandas,
             "discover": lambda s: list(mapwright.discover(s))}
    for source in ([url] if entry == "discover" else [url, empty, tmp_path / "e.xml"]):
        with pytest.raises(mapwright.NoUrlError):
            calls[entry](source)


def test_the_cli_reads_relative_locs_by_url_as_python_does(site, cli):
    url = site.add("/s.xml", relative_urlset("/a", "/b"))
    out = subprocess.run([cli, "read", url], capture_output=True, text=True)
    assert [json.loads(line)["loc"] for line in out.stdout.splitlines()] == [e.loc for e in mapwright.read(url)]
    assert "loc-not-absolute" in out.stderr


# --- every URL out of scope: one verdict ------------------------------------------------------------------


def out_of_scope_site(site: Site) -> None:
    """robots.txt names nothing; /blog/sitemap.xml lists only URLs outside /blog/."""
    site.add("/sitemap.xml", index(f"{site.base}/blog/sitemap.xml"))
    site.add("/blog/sitemap.xml", urlset(*(f"{site.base}/shop/{i}" for i in range(5))))


def test_every_url_out_of_scope_raises_in_discover_and_discover_many_as_the_cli_says(site, cli, tmp_path):
    out_of_scope_site(site)
    with pytest.raises(mapwright.NoUrlError, match="5 URLs out of their sitemap's scope") as e:
        list(mapwright.discover(site.base + "/"))
    assert e.value.url == site.base + "/"
    with pytest.raises(mapwright.NoUrlError, match="no site gave a URL"):
        list(mapwright.discover_many([site.base]))
    many = mapwright.discover_many([site.base])
    with pytest.raises(Exception, match="no site gave a URL"):
        pa.table(many)  # through the Arrow stream: the engine raises with the same message
    # The CLI's --sites summary of the same site: not ok, no URL.
    (tmp_path / "sites.txt").write_text(site.base + "\n")
    subprocess.run([cli, "discover", "--sites", "sites.txt", "-q", "--out", "u.jsonl", "--summary", "s.jsonl"], cwd=tmp_path)
    line = json.loads((tmp_path / "s.jsonl").read_text())
    assert (line["ok"], line["ended"], line["out_of_scope"]) == (False, "no-urls", 5)
    # scope=False keeps them, as the message says.
    assert len(list(mapwright.discover(site.base + "/", scope=False))) == 5
    # The frames (scope=True) say the same.
    with pytest.raises(mapwright.NoUrlError):
        mapwright.to_pandas(f"{site.base}/blog/sitemap.xml", scope=True)


def test_a_site_among_others_with_every_url_out_of_scope_is_a_failure_row(site, tmp_path):
    out_of_scope_site(site)
    good = Site()
    try:
        good.add("/sitemap.xml", urlset(f"{good.base}/x"))
        with pytest.raises(mapwright.PartialSitemapError) as e:
            list(mapwright.discover_many([site.base, good.base]))
        assert [s for s, _ in e.value.failed] == [f"{site.base}/"] and "out of their sitemap's scope" in e.value.failed[0][1]
        rows = pa.table(mapwright.discover_many([site.base, good.base], errors="rows")).to_pylist()
        assert sorted((r["site"], r["loc"], r["errors"] is not None) for r in rows) == sorted(
            [(f"{site.base}/", None, True), (f"{good.base}/", f"{good.base}/x", False)]
        )
    finally:
        good.close()


# --- an index read from a file ---------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["to_pandas", "to_polars"])
def test_a_local_index_file_gives_its_childrens_urls_never_the_children_as_pages(site, tmp_path, entry):
    b = site.base
    site.add("/s1.xml", urlset(f"{b}/a", f"{b}/b"))
    site.add("/s2.xml.gz", urlset(f"{b}/c"), gz=True)
    (tmp_path / "index.xml").write_bytes(index(f"{b}/s1.xml", f"{b}/s2.xml.gz"))
    df = getattr(mapwright, entry)(tmp_path / "index.xml")
    assert sorted(df["loc"].to_list()) == [f"{b}/a", f"{b}/b", f"{b}/c"]
    assert sorted(set(df["sitemap"].cast(str).to_list() if entry == "to_polars" else df["sitemap"].astype(str))) == [
        f"{b}/s1.xml",
        f"{b}/s2.xml.gz",
    ]
    # The same from bytes, and from a Reader of the file.
    assert len(getattr(mapwright, entry)(index(f"{b}/s1.xml"))) == 2
    assert len(getattr(mapwright, entry)(mapwright.read(tmp_path / "index.xml"))) == 3
    # A child that fails: a partial result, as from a URL.
    (tmp_path / "gone.xml").write_bytes(index(f"{b}/s1.xml", f"{b}/gone.xml"))
    with pytest.raises(mapwright.PartialSitemapError) as e:
        getattr(mapwright, entry)(tmp_path / "gone.xml")
    assert [u for u, _ in e.value.failed] == [f"{b}/gone.xml"] and len(e.value.frame) == 2


# --- an entity never expanded ----------------------------------------------------------------------------

XXE = (
    b'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    b"<url><loc>https://a.example/&xxe;</loc></url>\n<url><loc>https://a.example/ok</loc></url>\n</urlset>\n"
)


def test_an_entity_inside_a_url_skips_the_entry_with_a_finding_as_the_cli_does(tmp_path, cli):
    r = mapwright.read(XXE)
    assert [e.loc for e in r] == ["https://a.example/ok"]
    assert [(f.rule, f.line) for f in r.findings] == [("xml-malformed", 4)]
    assert "&xxe;" in r.findings[0].message and "skipped" in r.findings[0].message
    assert mapwright.to_pandas(XXE)["loc"].to_list() == ["https://a.example/ok"]
    (tmp_path / "x.xml").write_bytes(XXE)
    out = subprocess.run([cli, "read", str(tmp_path / "x.xml")], capture_output=True, text=True)
    assert [json.loads(line)["loc"] for line in out.stdout.splitlines()] == ["https://a.example/ok"]
    assert "xml-malformed" in out.stderr and "&xxe;" in out.stderr


# --- timeout= wherever a URL is fetched -------------------------------------------------------------------


@pytest.fixture
def silent_url():
    """A server that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}/sitemap.xml"
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


CALLS = {
    "read": lambda u: list(mapwright.read(u, timeout=1)),
    "to_pandas": lambda u: mapwright.to_pandas(u, timeout=1),
    "to_polars": lambda u: mapwright.to_polars(u, timeout=1),
    "validate": lambda u: mapwright.validate(u, timeout=1),
    "discover": lambda u: list(mapwright.discover(u, timeout=1)),
    "discover_many": lambda u: list(mapwright.discover_many([u], timeout=1)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_timeout_bounds_every_call_that_fetches(silent_url, name):
    began = time.monotonic()
    with pytest.raises(mapwright.FetchError):
        CALLS[name](silent_url)
    # One second a request (a retry or two of robots.txt and the sitemap at most), not 120.
    assert time.monotonic() - began < 20


def test_a_timeout_that_is_no_positive_number_is_refused():
    for call in (mapwright.read, mapwright.validate, mapwright.to_pandas, mapwright.discover):
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            call("http://127.0.0.1:9/sitemap.xml", timeout=0)  # type: ignore[operator]


# --- discover_many as an Arrow stream ---------------------------------------------------------------------


def two_sites():
    made = [Site(), Site()]
    for i, s in enumerate(made):
        s.add("/sitemap.xml", urlset(*(f"{s.base}/p/{n}" for n in range(3 + i))))
    return made


def test_discover_many_is_an_arrow_stream_pyarrow_polars_and_duckdb_read():
    import polars as pl

    made = two_sites()
    try:
        bases = [s.base for s in made]
        expected = sorted(f"{s.base}/p/{n}" for i, s in enumerate(made) for n in range(3 + i))
        it = mapwright.discover_many(bases)
        assert hasattr(it, "__arrow_c_stream__")
        table = pa.table(it)
        assert sorted(table["loc"].to_pylist()) == expected and table.schema.names[-1] == "site"
        assert [s["ok"] for s in it.summaries] == [True, True]
        # Taken once: the stream asked for again is over.
        assert pa.table(it).num_rows == 0
        df = pl.DataFrame(mapwright.discover_many(bases))
        assert df.shape == (len(expected), len(table.schema)) and sorted(df["loc"].to_list()) == expected
        reader = pa.RecordBatchReader.from_stream(mapwright.discover_many(bases))
        assert reader.schema.equals(table.schema) and reader.read_all().num_rows == len(expected)
        import duckdb  # pinned in requirements.txt: measured, never skipped
        rel = mapwright.discover_many(bases)
        got = duckdb.sql("SELECT site, count(*) AS n FROM rel GROUP BY site ORDER BY n").fetchall()
        assert got == [(f"{bases[0]}/", 3), (f"{bases[1]}/", 4)]
    finally:
        for s in made:
            s.close()


def test_a_failure_through_the_stream_is_the_engines_error_or_a_row():
    made = two_sites()
    dead = Site()  # every path 404: no sitemap
    try:
        bases = [made[0].base, dead.base]
        with pytest.raises(Exception, match="could not be read") as e:
            pa.table(mapwright.discover_many(bases))
        assert dead.base in str(e.value)
        with pytest.warns(mapwright.PartialSitemapWarning, match=dead.base):
            assert pa.table(mapwright.discover_many(bases, errors="warn")).num_rows == 3
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            table = pa.table(mapwright.discover_many(bases, errors="rows"))
        assert table.num_rows == 4 and table.filter(pa.compute.is_valid(table["errors"]))["site"].to_pylist() == [f"{dead.base}/"]
    finally:
        for s in (*made, dead):
            s.close()


# --- an OAI-PMH list cut short ----------------------------------------------------------------------------

OAI_DATA = __import__("pathlib").Path(__file__).resolve().parents[2] / "mapwright-core" / "tests" / "data" / "oai"
SECOND = "/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100"


def oai_repository(site: Site, second: tuple[int, str]) -> str:
    """A repository at /oai2 whose second page of records answers `second` (status, file or text)."""

    def answer(name: str) -> bytes:
        return (OAI_DATA / name).read_text().replace("{{BASE}}", site.base).encode()

    site.add("/oai2", answer("badverb.xml"), content_type="text/xml")
    site.add("/oai2?verb=ListRecords&metadataPrefix=oai_dc", answer("listrecords-1.xml"))
    status, body = second
    site.add(SECOND, answer(body) if body.endswith(".xml") else body.encode(), status=status, content_type="text/xml")
    site.add("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", answer("listrecords-3.xml"))
    return site.base + "/oai2"


CUT = {"500": (500, "Internal Server Error"), "badResumptionToken": (200, "badresumptiontoken.xml"),
       "token repeats": (200, "listrecords-1.xml")}
# The page the list stops at: the second answers 500 or an error; a second page that is the
# first again names its token again, so the third is never asked for.
PAGE = {"500": "page 2", "badResumptionToken": "page 2", "token repeats": "page 3"}


@pytest.mark.parametrize("how", list(CUT))
@pytest.mark.parametrize("entry", ["to_pandas", "to_polars"])
def test_an_oai_list_cut_short_is_a_partial_frame_never_a_short_one(site, entry, how):
    base = oai_repository(site, CUT[how])
    with pytest.raises(mapwright.PartialSitemapError) as e:
        getattr(mapwright, entry)(base)
    assert len(e.value.frame) > 0 and [u for u, _ in e.value.failed] == [base]
    assert PAGE[how] in e.value.failed[0][1], e.value.failed
    rows = getattr(mapwright, entry)(base, errors="rows")
    errs = [x for x in rows["errors"].to_list() if isinstance(x, str)]
    assert len(errs) == 1 and PAGE[how] in errs[0]
    with pytest.warns(mapwright.PartialSitemapWarning, match=PAGE[how]):
        assert len(getattr(mapwright, entry)(base, errors="warn")) == len(e.value.frame)


@pytest.mark.parametrize("how", list(CUT))
def test_an_oai_list_cut_short_raises_in_read_and_discover_and_is_not_ok_in_validate(site, cli, how):
    base = oai_repository(site, CUT[how])
    got = []
    with pytest.raises(mapwright.SitemapError, match=PAGE[how]) as e:
        for x in mapwright.read(base):
            got.append(x.loc)
    assert got and e.value.rule in ("oai-incomplete", "oai-error") and e.value.url == base
    with pytest.raises(mapwright.PartialSitemapError, match=PAGE[how]):
        list(mapwright.discover(base, mode="sitemap", scope=False))
    assert not mapwright.validate(base).ok
    # The CLI says the same: exit 1, the page named.
    out = subprocess.run([cli, "read", base], capture_output=True, text=True)
    assert out.returncode == 1 and PAGE[how] in out.stderr, out.stderr


def test_an_oai_repository_that_lists_no_records_raises_no_url_error_not_an_empty_frame(site):
    def answer(name: str) -> bytes:
        return (OAI_DATA / name).read_text().replace("{{BASE}}", site.base).encode()

    site.add("/oai2", answer("badverb.xml"), content_type="text/xml")
    site.add("/oai2?verb=ListRecords&metadataPrefix=oai_dc", answer("norecordsmatch.xml"), content_type="text/xml")
    base = site.base + "/oai2"
    for call in (mapwright.to_pandas, mapwright.to_polars, lambda u: list(mapwright.read(u))):
        with pytest.raises(mapwright.NoUrlError, match="noRecordsMatch") as e:
            call(base)
        assert e.value.rule == "oai-error"


# --- a robots.txt that does not answer in time --------------------------------------------------------------


class SlowRobots:
    """A site whose robots.txt answers after `delay` seconds; a sitemap at /sitemap.xml."""

    def __init__(self, delay: float) -> None:
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/robots.txt":
                    time.sleep(delay)
                    body, status = b"User-agent: *\nAllow: /\n", 200
                elif self.path == "/sitemap.xml":
                    body, status = urlset(f"{base}/a"), 200
                else:
                    body, status = b"not found", 404
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        base = self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_robots_txt_that_times_out_is_named_by_discover_and_discover_many_as_by_the_cli(cli, tmp_path):
    slow = SlowRobots(delay=5)
    try:
        with pytest.raises(mapwright.FetchError, match="robots.txt") as e:
            list(mapwright.discover(slow.base + "/", timeout=1))
        assert e.value.url == slow.base + "/" and not isinstance(e.value, mapwright.PartialSitemapError)
        many = mapwright.discover_many([slow.base], timeout=1, errors="rows")
        rows = pa.table(many).to_pylist()
        assert [r["loc"] for r in rows] == [None] and "robots.txt" in rows[0]["errors"]
        (tmp_path / "sites.txt").write_text(slow.base + "\n")
        subprocess.run([cli, "discover", "--sites", "sites.txt", "-q", "--timeout", "1", "--out", "u.jsonl", "--summary", "s.jsonl"],
                       cwd=tmp_path)
        line = json.loads((tmp_path / "s.jsonl").read_text())
        summary = many.summaries[0]
        assert (summary["ok"], summary["ended"], summary["robots"]) == (line["ok"], line["ended"], line["robots"])
        assert line["ok"] is False
    finally:
        slow.close()
