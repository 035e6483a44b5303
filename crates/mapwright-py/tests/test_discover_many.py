"""Parquet out and `discover_many`: the CLI's `--format parquet` read back by pyarrow and by
polars equals its JSON Lines row for row; `discover_many` yields pyarrow batches with the same
columns and the same rows as `discover --sites`, releases the GIL while it waits, reports
failures per site as the package's failure model says, and runs on a real engine (a Dask
`distributed.LocalCluster` of worker processes) over sites served on loopback."""

from __future__ import annotations

import gzip
import os
import json
import pathlib
import struct
import subprocess
import threading
import warnings
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pyarrow.parquet as pq
import pytest

import mapwright
from conftest import NS_ALL, Site, index

NS = NS_ALL


def rich_url(base: str, i: int) -> str:
    """A <url> with every extension."""
    return (
        f"<url><loc>{base}/rich/{i}</loc><lastmod>2024-05-0{1 + i % 9}T10:20:30.5+02:00</lastmod>"
        f"<changefreq>weekly</changefreq><priority>0.{i % 10}</priority>"
        f"<image:image><image:loc>{base}/{i}.jpg</image:loc><image:caption>A &amp; B</image:caption></image:image>"
        f"<image:image><image:loc>{base}/{i}b.jpg</image:loc></image:image>"
        f"<video:video><video:thumbnail_loc>{base}/t.jpg</video:thumbnail_loc><video:title>V{i}</video:title>"
        f"<video:description>D</video:description><video:content_loc>{base}/v.mp4</video:content_loc>"
        f"<video:duration>60</video:duration><video:rating>4.2</video:rating><video:view_count>12345</video:view_count>"
        f'<video:price currency="EUR" type="rent">1.50</video:price><video:tag>a</video:tag><video:tag>b</video:tag></video:video>'
        f"<news:news><news:publication><news:name>P</news:name><news:language>en</news:language></news:publication>"
        f"<news:publication_date>2024-05-01</news:publication_date><news:title>T {i}</news:title></news:news>"
        f'<xhtml:link rel="alternate" hreflang="de" href="{base}/de/rich/{i}"/>'
        "<geo:geo><geo:format>kml</geo:format></geo:geo>"
        f'<PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0"><DataObject type="document" id="d{i}">'
        f'<Attribute name="title">T {i}</Attribute><Attribute name="rating" value="{i % 5}"/></DataObject></PageMap></url>'
    )


def urlset(base: str, rich: int, plain: int) -> bytes:
    body = "".join(rich_url(base, i) for i in range(rich))
    body += "".join(f"<url><loc>{base}/p/{i}</loc><lastmod>2024-01-0{1 + i % 9}</lastmod></url>" for i in range(plain))
    return f"<urlset {NS}>{body}</urlset>".encode()


def serve_site(site: Site, plain: int) -> None:
    """robots.txt -> an index -> a child with every extension and a gzipped plain one."""
    b = site.base
    site.add("/robots.txt", f"User-agent: *\nSitemap: {b}/index.xml\n".encode(), content_type="text/plain")
    site.add("/index.xml", index(f"{b}/rich.xml", f"{b}/plain.xml.gz"))
    site.add("/rich.xml", urlset(b, 12, 0))
    site.add("/plain.xml.gz", urlset(b, 0, plain), gz=True)


@pytest.fixture
def sites():
    made = [Site() for _ in range(4)]
    for i, s in enumerate(made):
        serve_site(s, plain=25 * (i + 1))
    yield made
    for s in made:
        s.close()


def f32(x: float) -> float:
    """A number as a float32 holds it (priority, rating): JSON writes the shortest form."""
    return struct.unpack("f", struct.pack("f", x))[0]


def norm(v: Any) -> Any:
    """A row with the missing and the empty made alike (the JSON rows leave out empty lists and
    missing keys; the columns hold null and []), floats as float32."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if x is not None and x != []}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, float):
        return f32(v)
    return v


def key(row: dict[str, Any]) -> tuple[str, str]:
    return (row.get("site") or "", row["loc"])


def jsonl_rows(path: pathlib.Path) -> list[dict[str, Any]]:
    return [norm(json.loads(line)) for line in path.read_text().splitlines()]


def run_cli(cli: str, *args: str, cwd: pathlib.Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([cli, *args], cwd=cwd, capture_output=True, text=True)
    if ok:
        assert out.returncode == 0, out.stderr
    return out


def cli_sites(cli: str, sites: list[Site], tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """`discover --sites` over the sites, once as JSON Lines and once as Parquet."""
    (tmp_path / "sites.txt").write_text("# the sites\n" + "\n".join(s.base for s in sites) + "\n")
    run_cli(cli, "discover", "--sites", "sites.txt", "-q", "--out", "u.jsonl", cwd=tmp_path)
    run_cli(cli, "discover", "--sites", "sites.txt", "-q", "--format", "parquet", "--out", "u.parquet", cwd=tmp_path)
    return tmp_path / "u.jsonl", tmp_path / "u.parquet"


def test_cli_parquet_of_discover_sites_equals_the_jsonl_by_pyarrow_and_polars(cli, sites, tmp_path):
    jsonl, parquet = cli_sites(cli, sites, tmp_path)
    want = sorted(jsonl_rows(jsonl), key=key)
    assert len(want) == sum(12 + 25 * (i + 1) for i in range(4))
    by_pyarrow = sorted((norm(r) for r in pq.read_table(parquet).to_pylist()), key=key)
    by_polars = sorted((norm(r) for r in pl.read_parquet(parquet).to_dicts()), key=key)
    assert by_pyarrow == want
    assert by_polars == want
    # The nested columns are real lists of structs, not text.
    t = pq.read_table(parquet)
    assert t.schema.field("images").type == pa.list_(pa.field("item", t.schema.field("images").type.value_type, False))
    assert pa.types.is_struct(t.schema.field("news").type)
    assert t.schema.names[-2:] == ["sitemap", "site"]
    rich = next(r for r in want if r["loc"].endswith("/rich/3"))
    assert rich["videos"][0]["tags"] == ["a", "b"] and rich["videos"][0]["prices"][0]["type"] == "rent"


def test_cli_parquet_of_read_equals_the_jsonl_row_for_row(cli, tmp_path):
    (tmp_path / "s.xml").write_bytes(urlset("https://example.com", 15, 15))
    run_cli(cli, "read", "s.xml", "--out", "e.jsonl", cwd=tmp_path)
    run_cli(cli, "read", "s.xml", "--format", "parquet", "--out", "e.parquet", cwd=tmp_path)
    want = jsonl_rows(tmp_path / "e.jsonl")
    assert len(want) == 30
    # In the file's order, row for row.
    assert [norm(r) for r in pq.read_table(tmp_path / "e.parquet").to_pylist()] == want
    assert [norm(r) for r in pl.read_parquet(tmp_path / "e.parquet").to_dicts()] == want


def test_discover_many_gives_the_rows_and_columns_of_discover_sites(cli, sites, tmp_path):
    jsonl, parquet = cli_sites(cli, sites, tmp_path)
    many = mapwright.discover_many(["# a comment", ""] + [s.base for s in sites], hosts_in_flight=2)
    batches = list(many)
    assert batches and all(isinstance(b, pa.RecordBatch) for b in batches)
    table = pa.Table.from_batches(batches)
    cli_table = pq.read_table(parquet)
    assert table.schema.equals(cli_table.schema, check_metadata=False), (table.schema, cli_table.schema)
    got = sorted((norm(r) for r in table.to_pylist()), key=key)
    assert got == sorted((norm(r) for r in cli_table.to_pylist()), key=key)
    assert got == sorted(jsonl_rows(jsonl), key=key)
    assert many.rows == len(got)
    summaries = {s["site"]: s for s in many.summaries}
    assert sorted(summaries) == sorted(f"{s.base}/" for s in sites)
    assert all(s["ok"] and s["ended"] == "complete" and s["sitemaps"] == 3 for s in summaries.values()), summaries


def test_discover_many_of_nothing_is_nothing():
    assert list(mapwright.discover_many([])) == []
    with pytest.raises(TypeError, match="not one string"):
        mapwright.discover_many("https://example.com/")  # type: ignore[arg-type]


# --- failures, per site -----------------------------------------------------------------------------------


@pytest.fixture
def empty_site():
    """A site where every path answers 404: no sitemap."""
    s = Site()
    yield s
    s.close()


def test_a_failed_site_raises_after_the_rows_of_the_others(sites, empty_site):
    many = mapwright.discover_many([sites[0].base, empty_site.base])
    batches = []
    with pytest.raises(mapwright.PartialSitemapError) as e:
        for b in many:
            batches.append(b)
    rows = pa.Table.from_batches(batches).to_pylist()
    assert len(rows) == 12 + 25 and {r["site"] for r in rows} == {f"{sites[0].base}/"}
    assert [s for s, _ in e.value.failed] == [f"{empty_site.base}/"]
    assert "no sitemap found" in e.value.failed[0][1]
    assert {s["site"]: s["ok"] for s in many.summaries} == {f"{sites[0].base}/": True, f"{empty_site.base}/": False}


def test_a_failed_site_warns_with_errors_warn(sites, empty_site):
    with pytest.warns(mapwright.PartialSitemapWarning, match=empty_site.base):
        rows = pa.Table.from_batches(list(mapwright.discover_many([empty_site.base, sites[1].base], errors="warn")))
    assert rows.num_rows == 12 + 50


def test_failed_sitemaps_and_sites_are_rows_with_errors_rows(sites, empty_site):
    # A site with a child that is gone (the others read), and a site with no sitemap at all:
    # no exception and no warning, a row per failure beside the URL rows.
    b = sites[0].base
    sites[0].add("/index.xml", index(f"{b}/rich.xml", f"{b}/plain.xml.gz", f"{b}/gone.xml"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        many = mapwright.discover_many([b, empty_site.base], errors="rows")
        table = pa.Table.from_batches(list(many), schema=many.schema)
    assert table.column_names[-1] == "errors"
    rows = table.to_pylist()
    failures = sorted((r for r in rows if r["errors"] is not None), key=lambda r: r["sitemap"] is None)
    assert len(rows) == 12 + 25 + 2 and len(failures) == 2
    assert [(r["site"], r["sitemap"], r["loc"]) for r in failures] == [
        (f"{b}/", f"{b}/gone.xml", None),
        (f"{empty_site.base}/", None, None),
    ]
    assert "404" in failures[0]["errors"] and "no sitemap found" in failures[1]["errors"]
    assert all(r["loc"] is not None for r in rows if r["errors"] is None)
    assert {s["site"]: s["ok"] for s in many.summaries} == {f"{b}/": False, f"{empty_site.base}/": False}


def test_errors_rows_with_no_url_at_all_gives_the_rows_of_the_failures(empty_site):
    # errors="rows" asks for failures as rows: a partition whose every site failed is rows
    # saying why (a distributed engine's task that does not fail), never an exception.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        many = mapwright.discover_many([empty_site.base, "http://[not a url"], errors="rows")
        rows = sorted(pa.table(many).to_pylist(), key=lambda r: r["site"])
    assert [(r["site"], r["loc"]) for r in rows] == [(f"{empty_site.base}/", None), ("http://[not a url", None)]
    assert "no sitemap found" in rows[0]["errors"] and rows[1]["errors"]
    assert sorted(s for s, _ in many.failed) == [f"{empty_site.base}/", "http://[not a url"]


def test_every_errors_value_is_known_or_refused():
    with pytest.raises(ValueError, match="'raise', 'warn' or 'rows'"):
        mapwright.discover_many(["https://example.com/"], errors="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'raise' or 'warn'"):
        mapwright.discover("https://example.com/", errors="rows")  # type: ignore[arg-type]
    # Without errors="rows" the batches have no errors column.
    assert "errors" not in mapwright.discover_many([]).schema.names


def test_no_site_readable_raises_even_with_errors_warn(empty_site):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(mapwright.FetchError, match="no site gave a URL") as e:
            list(mapwright.discover_many([empty_site.base, "http://[not a url"], errors="warn"))
    assert len(e.value.failed) == 2
    assert not isinstance(e.value, mapwright.PartialSitemapError)


# --- the GIL ----------------------------------------------------------------------------------------------


def test_the_gil_is_released_while_discovering():
    slow = Site(delays={"/robots.txt": 1.0})
    serve_site(slow, plain=5)
    try:
        counted = 0
        stop = threading.Event()

        def count() -> None:
            nonlocal counted
            while not stop.is_set():
                counted += 1

        t = threading.Thread(target=count)
        t.start()
        try:
            batches = list(mapwright.discover_many([slow.base]))
        finally:
            stop.set()
            t.join()
        assert sum(b.num_rows for b in batches) == 12 + 5
        # Python ran on the other thread during the second the call waited: with the GIL held
        # it would have counted nothing meanwhile.
        assert counted > 100_000, counted
    finally:
        slow.close()


# --- on a real engine: Dask's distributed.LocalCluster ------------------------------------------------------


def test_dask_local_cluster_gives_the_rows_of_discover_sites(cli, sites, empty_site, tmp_path):
    from distributed import Client, LocalCluster

    _, parquet = cli_sites(cli, sites, tmp_path)
    bases = [s.base for s in sites]
    # A broken site in one partition, and a partition of broken sites only: the good sites'
    # rows are all kept, and the broken ones reported (the README's recipe).
    partitions = [bases[:2] + [empty_site.base], bases[2:], [empty_site.base, "http://[not a url"]]

    def discover_partition(part: list[str]) -> tuple[int, pa.Table]:
        # One call per partition, in a worker process; a failure is a row, never a failed task.
        import os

        import mapwright
        import pyarrow

        return os.getpid(), pyarrow.table(mapwright.discover_many(part, errors="rows"))

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            results = client.gather(client.map(discover_partition, partitions))
    # Discovered in the workers' processes, not in this one.
    assert all(pid != os.getpid() for pid, _ in results)
    table = pa.concat_tables([t for _, t in results])
    failed = table.filter(pa.compute.is_valid(table["errors"]))
    table = table.filter(pa.compute.is_null(table["errors"])).drop_columns(["errors"])
    cli_table = pq.read_table(parquet)
    # The same columns and types (with errors="rows", loc and sitemap may be null).
    assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in cli_table.schema]
    got = sorted((norm(r) for r in table.to_pylist()), key=key)
    assert got == sorted((norm(r) for r in cli_table.to_pylist()), key=key)
    assert len(got) == sum(12 + 25 * (i + 1) for i in range(4))
    assert set(failed["site"].to_pylist()) == {f"{empty_site.base}/", "http://[not a url"}
