"""mapwright.discover against a loopback site, and the data frames (to_pandas, to_polars)."""

from __future__ import annotations

import datetime as dt

import pytest

import mapwright
from conftest import index, urlset


def build_site(site) -> None:
    b = site.base
    site.add("/robots.txt", f"User-agent: *\nSitemap: {b}/sitemap_index.xml\n".encode(), content_type="text/plain")
    site.add("/sitemap_index.xml", index(f"{b}/s1.xml", f"{b}/s2.xml.gz", f"{b}/gone.xml"))
    site.add("/s1.xml", urlset(f"{b}/a", f"{b}/b", "https://elsewhere.example/x"))
    site.add("/s2.xml.gz", urlset(f"{b}/b", f"{b}/c", extra="<lastmod>2024-02-03T04:05:06Z</lastmod>"), gz=True)


def test_discover_a_site_from_robots_txt(site):
    build_site(site)
    b = site.base
    # gone.xml fails: the URLs read are yielded, then the partial result raises.
    d = mapwright.discover(b + "/")
    with pytest.raises(mapwright.PartialSitemapError) as exc:
        list(d)
    assert exc.value.failed == d.summary["failed"]
    d = mapwright.discover(b + "/", errors="warn")
    with pytest.warns(mapwright.PartialSitemapWarning, match="gone.xml"):
        got = sorted((e.loc, e.sitemap) for e in d)
    assert got == [(f"{b}/a", f"{b}/s1.xml"), (f"{b}/b", f"{b}/s1.xml"), (f"{b}/c", f"{b}/s2.xml.gz")] or got == [
        (f"{b}/a", f"{b}/s1.xml"), (f"{b}/b", f"{b}/s2.xml.gz"), (f"{b}/c", f"{b}/s2.xml.gz")]
    s = d.summary
    assert s["seeds_from"] == "robots.txt"
    assert s["urls"] == 3 and s["duplicates"] == 1 and s["out_of_scope"] == 1
    assert [u for u, _ in s["failed"]] == [f"{b}/gone.xml"]
    outcomes = {x["url"]: x["outcome"] for x in d.sitemaps}
    assert outcomes[f"{b}/gone.xml"] == "failed" and outcomes[f"{b}/s1.xml"] == "fetched"
    assert any(f.rule == "loc-out-of-scope" for f in d.findings)


def test_discover_a_sitemap_with_limits_and_no_scope(site):
    build_site(site)
    b = site.base
    d = mapwright.discover(b + "/s1.xml", scope=False)
    assert sorted(e.loc for e in d) == [f"{b}/a", f"{b}/b", "https://elsewhere.example/x"]
    assert d.summary["seeds_from"] == "given"
    d = mapwright.discover(b + "/sitemap_index.xml", max_urls=2, errors="warn")
    with pytest.warns(mapwright.PartialSitemapWarning):
        assert len(list(d)) == 2
    assert d.summary["over_limit"] >= 1
    assert site.hits.get("/robots.txt", 0) >= 0


def test_discover_refuses_non_urls():
    with pytest.raises(ValueError, match="not an http"):
        mapwright.discover("example.com")
    with pytest.raises(ValueError, match="mode"):
        mapwright.discover("https://example.com/", mode="both")


def test_discover_unreachable_site_raises(site):
    # Nothing served: robots.txt 404, every usual path 404: no URL, said by an exception; the
    # summary says so too.
    d = mapwright.discover(site.base + "/")
    with pytest.raises(mapwright.FetchError, match="no sitemap found"):
        list(d)
    assert d.summary["urls"] == 0 and d.summary["seeds_from"] == "usual paths"


def test_to_pandas_columns_and_types():
    import pandas as pd
    xml = b"""<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>https://example.com/a</loc><lastmod>2024-05-01T10:00:00+02:00</lastmod><changefreq>daily</changefreq><priority>0.5</priority>
<image:image><image:loc>https://example.com/1.png</image:loc></image:image><image:image><image:loc>https://example.com/2.png</image:loc><image:caption>two</image:caption></image:image>
<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/></url>
<url><loc>https://example.com/b</loc><lastmod>2024-05-02</lastmod></url>
<url><loc>https://example.com/c</loc></url>
</urlset>"""
    df = mapwright.to_pandas(xml)
    # Only the extension columns some entry has (no image has a title here); image_* of the
    # last image as advertools gives them, image_*_all of every image.
    assert list(df.columns) == [
        "loc", "lastmod", "changefreq", "priority", "sitemap", "image_loc", "image_caption",
        "image_loc_all", "image_caption_all", "alternate_hreflang", "alternate_href",
    ]
    assert list(df["loc"]) == ["https://example.com/a", "https://example.com/b", "https://example.com/c"]
    assert str(df["lastmod"].dtype) == "datetime64[ns, UTC]"
    assert df["lastmod"][0] == pd.Timestamp("2024-05-01T08:00:00Z")
    assert df["lastmod"][1] == pd.Timestamp("2024-05-02T00:00:00Z")
    assert pd.isna(df["lastmod"][2])
    assert df["changefreq"][0] == "daily" and pd.isna(df["changefreq"][1])
    assert df["priority"][0] == 0.5 and pd.isna(df["priority"][2])
    assert df["image_loc"][0] == "https://example.com/2.png" and df["image_caption"][0] == "two"
    assert df["image_loc_all"][0] == "https://example.com/1.png@@https://example.com/2.png"
    assert df["image_caption_all"][0] == "@@two"
    assert pd.isna(df["image_loc"][1])
    assert df["alternate_hreflang"][0] == "de" and df["alternate_href"][0] == "https://example.com/de/a"
    assert df["sitemap"].isna().all()


def test_to_pandas_extension_column_first_seen_in_a_later_row():
    # The builder keeps no value per row until a first one comes: earlier rows are missing.
    xml = b"""<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
<url><loc>https://example.com/a</loc></url>
<url><loc>https://example.com/b</loc></url>
<url><loc>https://example.com/c</loc><image:image><image:loc>https://example.com/c.png</image:loc></image:image></url>
<url><loc>https://example.com/d</loc></url>
</urlset>"""
    df = mapwright.to_pandas(xml)
    assert list(df.columns) == ["loc", "lastmod", "changefreq", "priority", "sitemap", "image_loc"]
    assert [None if v is None or v != v else v for v in df["image_loc"]] == [None, None, "https://example.com/c.png", None]


def test_to_pandas_priority_is_the_shortest_decimal_of_the_f32():
    # priority is read as an f32; the column holds the shortest decimal that reads back as
    # it (0.8, not 0.800000011920929), whether one or two decimals (arithmetic) or more.
    import numpy as np
    texts = [f"{k / 1000:.3f}" for k in range(1001)] + ["0.33333334", "0.1234567", "1", "0", ".5", "0.05", "0.015"]
    body = "".join(f"<url><loc>https://example.com/{i}</loc><priority>{t}</priority></url>" for i, t in enumerate(texts))
    xml = ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + body + "</urlset>").encode()
    df = mapwright.to_pandas(xml)
    expected = [float(str(np.float32(t))) for t in texts]
    assert df["priority"].to_list() == expected


def test_to_pandas_of_an_index_url_follows_children_like_advertools(site):
    import pandas as pd
    build_site(site)
    b = site.base
    # gone.xml fails: the frame of the others comes with the exception.
    with pytest.raises(mapwright.PartialSitemapError) as exc:
        mapwright.to_pandas(b + "/sitemap_index.xml")
    assert [u for u, _ in exc.value.failed] == [f"{b}/gone.xml"]
    df = exc.value.frame
    # Every URL kept, as advertools does (no scope), each with its sitemap: /b, listed by two
    # sitemaps, once for each.
    assert sorted(df["loc"]) == sorted([f"{b}/a", f"{b}/b", "https://elsewhere.example/x", f"{b}/b", f"{b}/c"])
    by = dict(zip(df["loc"], df["sitemap"].astype(str)))
    assert by[f"{b}/a"] == f"{b}/s1.xml" and by[f"{b}/c"] == f"{b}/s2.xml.gz"
    assert df.loc[df["loc"] == f"{b}/c", "lastmod"].iloc[0] == pd.Timestamp("2024-02-03T04:05:06Z")


def test_to_pandas_of_reader_iterable_and_empty():
    import pandas  # noqa: F401
    xml = urlset("https://example.com/a", "https://example.com/b")
    assert list(mapwright.to_pandas(mapwright.read(xml))["loc"]) == ["https://example.com/a", "https://example.com/b"]
    entries = [e for e in mapwright.read(xml) if e.loc.endswith("b")]
    assert list(mapwright.to_pandas(entries)["loc"]) == ["https://example.com/b"]
    # A sitemap that lists no entry is no silent success (the CLI's read exits 1 on it: "no
    # entries read"); entries the caller gives are taken as they are, none included.
    with pytest.raises(mapwright.NoUrlError, match="the urlset lists no entry"):
        mapwright.to_pandas(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>')
    empty = mapwright.to_pandas([])
    assert len(empty) == 0 and "loc" in empty.columns
    with pytest.raises(TypeError, match="Entry"):
        mapwright.to_pandas([1, 2])


def test_to_pandas_raises_on_a_broken_file():
    import pandas  # noqa: F401
    broken = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/</loc></url><url>'
    # One entry, then the fault: a partial result, carrying its frame and its cause.
    with pytest.raises(mapwright.PartialSitemapError) as exc:
        mapwright.to_pandas(broken)
    assert isinstance(exc.value.__cause__, mapwright.MalformedSitemapError)
    assert list(exc.value.frame["loc"]) == ["https://example.com/"]
    assert exc.value.failed[0][0] == "<bytes>" and "stopped after 1 entries" in exc.value.failed[0][1]
    # Nothing before the fault: the fault itself.
    with pytest.raises(mapwright.MalformedSitemapError):
        mapwright.to_pandas(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url></urlset>')


@pytest.mark.parametrize("entry,extra,missing", [("to_pandas", "pandas", "pandas"), ("to_pandas", "pandas", "numpy"), ("to_polars", "polars", "polars")])
def test_frames_without_their_library_name_the_extra(monkeypatch, entry, extra, missing):
    # A module set to None in sys.modules fails to import, as an absent one does.
    monkeypatch.setitem(__import__("sys").modules, missing, None)
    with pytest.raises(ImportError, match=rf"pip install 'mapwright-sitemaps\[{extra}\]'") as exc:
        getattr(mapwright, entry)(b"https://example.com/a\n")
    assert f"needs {missing}" in str(exc.value)


def test_to_polars():
    import polars as pl
    xml = urlset("https://example.com/a", extra="<lastmod>2024-05-01</lastmod><changefreq>weekly</changefreq><priority>0.3</priority>") + b""
    xml = xml.replace(b"</urlset>", b"<url><loc>https://example.com/b</loc></url></urlset>")
    df = mapwright.to_polars(xml)
    assert df["loc"].to_list() == ["https://example.com/a", "https://example.com/b"]
    assert df["lastmod"].dtype == pl.Datetime("ns", "UTC")
    assert df["lastmod"].to_list()[0] == dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    assert df["lastmod"].to_list()[1] is None
    assert df["changefreq"].cast(pl.String).to_list() == ["weekly", None]
    assert df["priority"].to_list()[0] == pytest.approx(0.3) and df["priority"].to_list()[1] is None


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_frames_are_the_same_with_and_without_pyarrow(monkeypatch, library):
    # With pyarrow, `loc` travels as an Arrow array Rust built (offsets and bytes); without,
    # as a list of str. Both must give the same frame, non-ASCII and empty-text rows included.
    pytest.importorskip("pyarrow")
    pytest.importorskip(library)
    locs = [f"https://example.com/{i}" for i in range(3000)] + ["https://例え.jp/ページ?q=ü", "https://example.com/é"]
    xml = urlset(*locs)
    convert = mapwright.to_pandas if library == "pandas" else mapwright.to_polars
    with_arrow = convert(xml)
    monkeypatch.setattr(mapwright, "_pyarrow", lambda: None)
    without = convert(xml)
    assert list(with_arrow["loc"]) == list(without["loc"])
    if library == "pandas":
        assert with_arrow["loc"].dtype == without["loc"].dtype
    assert with_arrow.equals(without)
    assert len(with_arrow) == len(locs)
