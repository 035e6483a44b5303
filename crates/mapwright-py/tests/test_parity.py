"""advertools parity, measured (issue 22 item 2): a corpus served on loopback, read by
`mapwright.to_pandas` and by `advertools.sitemap_to_df` itself (pinned in requirements.txt),
compared frame by frame: the same rows (one per URL of each sitemap: duplicates within a file
dropped, across files kept), the same columns with the same values, whatever the start (a
urlset, an index with children on two hosts, a nested index, a robots.txt), and from a URL, a
path or bytes alike. What differs by nature (`download_date`: a time of the run) is compared by
type; the differences the package README lists are asserted here as differences."""

from __future__ import annotations

import gzip
import json
import logging
import math

import advertools as adv  # pinned in requirements.txt: the parity is measured, never skipped
import pandas as pd
import polars as pl
import pytest

import mapwright
from conftest import NS_ALL, Site

# advertools sets the root logger to INFO and logs every sitemap it gets.
logging.getLogger().setLevel(logging.WARNING)

NS = NS_ALL

PAGEMAP = 'xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0"'

#: Columns we add where we keep more than advertools (README, "Switching from advertools").
OURS_ONLY = {
    "lastmod", "changefreq", "priority",  # always there, missing where no entry has one
    "image_loc_all", "image_title_all", "image_caption_all", "image_geo_location_all", "image_license_all",
    "alternate_hreflang", "alternate_href",
    "pagemap",  # every data object of a PageMap, as JSON
}

#: The columns advertools makes of the white space between an extension's tags (README).
WHITESPACE = ("image", "video", "news", "news_publication", "geo", "PageMap", "PageMap_DataObject")


def urlset(body: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{body}</urlset>\n'.encode()


def sitemapindex(*locs: str) -> bytes:
    body = "".join(f"  <sitemap><loc>{u}</loc></sitemap>\n" for u in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n{body}</sitemapindex>\n'.encode()


def pages(base: str) -> bytes:
    """Plain entries, a URL listed twice (the same entry twice), URLs as written with an
    upper-case host, a default port and a bare origin, and every core field."""
    rows = [
        f"<url><loc>{base}/a</loc><lastmod>2024-05-01T10:00:00+02:00</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>",
        f"<url><loc>{base}/b</loc><lastmod>2024-05-02T00:00:00Z</lastmod></url>",
        f"<url><loc>{base}/a</loc><lastmod>2024-05-01T10:00:00+02:00</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>",
        "<url><loc>HTTPS://Example.COM:443/Path</loc><priority>0.1</priority></url>",
        "<url><loc>https://example.com</loc></url>",
        "<url><loc>https://example.com/caf%c3%a9?q=%7E&amp;r=1</loc></url>",
    ]
    return urlset("".join(r + "\n" for r in rows))


def media(base: str) -> bytes:
    """Images (two on one entry), a video, news and hreflang, written compactly (no white
    space inside the extension elements, which advertools would make columns of)."""
    video = (
        "<video:video><video:thumbnail_loc>{b}/t.jpg</video:thumbnail_loc><video:title>V</video:title>"
        "<video:description>A video</video:description><video:content_loc>{b}/v.mp4</video:content_loc>"
        "<video:player_loc>{b}/player</video:player_loc><video:duration>600</video:duration>"
        "<video:expiration_date>2030-01-01</video:expiration_date><video:rating>4.2</video:rating>"
        "<video:view_count>12345</video:view_count><video:publication_date>2024-01-01</video:publication_date>"
        "<video:family_friendly>yes</video:family_friendly><video:restriction relationship=\"allow\">IE GB</video:restriction>"
        "<video:platform relationship=\"allow\">web</video:platform><video:price currency=\"EUR\">1.99</video:price>"
        "<video:requires_subscription>no</video:requires_subscription><video:uploader>Ann</video:uploader>"
        "<video:live>no</video:live><video:tag>x</video:tag><video:tag>y</video:tag>"
        "<video:category>Cats</video:category></video:video>"
    ).format(b=base)
    news = (
        "<news:news><news:publication><news:name>The Times</news:name><news:language>en</news:language></news:publication>"
        "<news:publication_date>2024-05-01</news:publication_date><news:title>Big news</news:title>"
        "<news:keywords>a, b</news:keywords></news:news>"
    )
    rows = [
        f"<url><loc>{base}/img</loc><image:image><image:loc>{base}/1.png</image:loc><image:title>One</image:title></image:image>"
        f"<image:image><image:loc>{base}/2.png</image:loc><image:caption>Two</image:caption></image:image></url>",
        f"<url><loc>{base}/vid</loc><lastmod>2024-05-03T00:00:00Z</lastmod>{video}</url>",
        f"<url><loc>{base}/news</loc>{news}"
        f'<xhtml:link rel="alternate" hreflang="de" href="{base}/de/news"/></url>',
        f"<url><loc>{base}/a</loc></url>",  # also in pages(): kept once per file
    ]
    return urlset("".join(r + "\n" for r in rows))


def geo_pagemap(base: str) -> bytes:
    """Google's geo extension and PageMaps (two data objects on one entry, attributes as text),
    written compactly, as media() is."""
    rows = [
        f"<url><loc>{base}/map.kml</loc><geo:geo><geo:format>kml</geo:format></geo:geo></url>",
        f"<url><loc>{base}/feed.rss</loc><lastmod>2024-05-04T00:00:00Z</lastmod><geo:geo><geo:format>georss</geo:format></geo:geo></url>",
        f'<url><loc>{base}/review</loc><PageMap {PAGEMAP}><DataObject type="review" id="r1">'
        '<Attribute name="name">Dragon</Attribute><Attribute name="rating">3.5</Attribute></DataObject>'
        f'<DataObject type="thumbnail"><Attribute name="src">{base}/t.png</Attribute></DataObject></PageMap></url>',
        f'<url><loc>{base}/both</loc><geo:geo><geo:format>kml</geo:format></geo:geo><PageMap {PAGEMAP}>'
        '<DataObject type="document"><Attribute name="title">Both</Attribute></DataObject></PageMap></url>',
        f"<url><loc>{base}/plain</loc></url>",
    ]
    return urlset("".join(r + "\n" for r in rows))


@pytest.fixture
def corpus():
    """Two hosts on loopback: the main one (robots.txt, an index of a urlset, a gzipped
    urlset, a nested index and a child on the other host) and the other."""
    main, other = Site(), Site()
    b, o = main.base, other.base
    headers = {"ETag": '"v1"', "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}
    main.add("/pages.xml", pages(b))
    main.pages["/pages.xml"] = (200, pages(b), {"Content-Type": "application/xml", **headers})
    main.add("/media.xml.gz", media(b), gz=True)
    main.add("/nested.xml", sitemapindex(f"{b}/deep.xml"))
    main.add("/deep.xml", urlset(f"<url><loc>{b}/deep</loc></url>\n"))
    main.add("/geo.xml", geo_pagemap(b))
    other.add("/theirs.xml", urlset(f"<url><loc>{o}/x</loc></url>\n<url><loc>{b}/a</loc></url>\n"))
    main.add("/index.xml", sitemapindex(f"{b}/pages.xml", f"{b}/media.xml.gz", f"{b}/nested.xml", f"{o}/theirs.xml", f"{b}/geo.xml"))
    main.add("/robots.txt", f"User-agent: *\nSitemap: {b}/pages.xml\nSitemap: {b}/media.xml.gz\n".encode(), content_type="text/plain")
    yield main, other
    main.close()
    other.close()


def missing(v: object) -> bool:
    return v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def compare(ours, theirs) -> None:
    """Asserts the two frames hold the same rows and columns (README: the differences)."""
    theirs = theirs.copy()
    # advertools makes a column of the white space between an extension's tags (none here: the
    # corpus writes them compactly); any it has must be only that.
    for col in WHITESPACE:
        if col in theirs:
            assert all(missing(v) or not str(v).strip() for v in theirs[col]), col
            del theirs[col]
    assert set(theirs.columns) <= set(ours.columns), set(theirs.columns) - set(ours.columns)
    assert set(ours.columns) - set(theirs.columns) <= OURS_ONLY, set(ours.columns) - set(theirs.columns)
    assert len(ours) == len(theirs)
    key = ["sitemap", "loc"]
    ours = ours.assign(sitemap=ours["sitemap"].astype(object)).sort_values(key, na_position="first").reset_index(drop=True)
    theirs = theirs.sort_values(key, na_position="first").reset_index(drop=True)
    for col in theirs.columns:
        a, b = list(ours[col]), list(theirs[col])
        if col == "download_date":
            # A time of the run: by type.
            assert str(ours[col].dtype).startswith("datetime64") and str(ours[col].dt.tz) == "UTC"
            assert [missing(x) for x in a] == [missing(y) for y in b], col
            continue
        if col == "lastmod":
            # advertools leaves the text when the formats are mixed: parse it as W3C Datetime.
            b = list(pd.to_datetime(theirs[col], format="ISO8601", utc=True))
        if col == "errors":
            # Our cause's words, theirs: the same rows say something.
            assert [missing(x) for x in a] == [missing(y) for y in b]
            continue
        for i, (x, y) in enumerate(zip(a, b)):
            assert (missing(x) and missing(y)) or x == y, (col, i, ours.loc[i, "loc"], x, y)


@pytest.mark.parametrize("start", ["/pages.xml", "/media.xml.gz", "/geo.xml", "/index.xml", "/nested.xml", "/robots.txt"])
def test_to_pandas_gives_the_rows_and_columns_of_advertools(corpus, start):
    main, _ = corpus
    url = main.base + start
    theirs = adv.sitemap_to_df(url)
    ours = mapwright.to_pandas(url)
    compare(ours, theirs)
    if start == "/index.xml":
        # Children on the other host followed; /a once per sitemap that lists it.
        assert (ours["loc"] == f"{main.base}/a").sum() == 3
        # pages, media, deep (under nested.xml), theirs and geo: an index has no rows of its own.
        assert len(set(ours["sitemap"].astype(str))) == 5
    if start == "/geo.xml":
        # The columns advertools gives for geo and PageMap are there (compared above), and ours.
        assert {"geo_format", "DataObject_Attribute", "pagemap"} <= set(ours.columns)
        row = ours.set_index("loc").loc[f"{main.base}/review"]
        assert row["DataObject_Attribute"] == f"{main.base}/t.png"  # the last Attribute, as advertools
        assert json.loads(row["pagemap"]) == [
            {"type": "review", "id": "r1", "attributes": [{"name": "name", "value": "Dragon"}, {"name": "rating", "value": "3.5"}]},
            {"type": "thumbnail", "attributes": [{"name": "src", "value": f"{main.base}/t.png"}]},
        ]
    # dtypes (README): the same for every start.
    assert str(ours["lastmod"].dtype) == "datetime64[ns, UTC]"
    assert str(ours["priority"].dtype) == "float64" and str(ours["sitemap"].dtype) == "category"
    assert str(ours["sitemap_size_mb"].dtype) == "float64"
    assert str(ours["download_date"].dtype) == "datetime64[ns, UTC]"
    if "sitemap_last_modified" in ours:
        assert str(ours["sitemap_last_modified"].dtype) == "datetime64[ns, UTC]"


def test_an_index_whose_child_fails_gives_advertools_error_rows_with_errors_rows(corpus):
    main, _ = corpus
    b = main.base
    main.add("/broken_index.xml", sitemapindex(f"{b}/deep.xml", f"{b}/gone.xml"))
    url = b + "/broken_index.xml"
    theirs = adv.sitemap_to_df(url)
    ours = mapwright.to_pandas(url, errors="rows")
    compare(ours, theirs)
    row = ours[ours["errors"].notna()]
    assert list(row["sitemap"].astype(str)) == [f"{b}/gone.xml"] and "404" in row["errors"].iloc[0]
    # By default a partial result still raises, carrying the frame without the error row.
    with pytest.raises(mapwright.PartialSitemapError) as e:
        mapwright.to_pandas(url)
    assert list(e.value.frame["loc"]) == [f"{b}/deep"]


@pytest.mark.parametrize("kind", ["path", "bytes"])
def test_a_path_or_bytes_gives_the_rows_a_url_gives(corpus, tmp_path, kind):
    # One file: duplicates dropped within it, as from its URL (advertools reads URLs only).
    main, _ = corpus
    url = main.base + "/pages.xml"
    theirs = adv.sitemap_to_df(url)
    p = tmp_path / "pages.xml"
    p.write_bytes(pages(main.base))
    ours = mapwright.to_pandas(p if kind == "path" else p.read_bytes())
    assert list(ours["loc"]) == list(theirs["loc"])
    assert list(mapwright.to_pandas(gzip.compress(p.read_bytes()))["loc"]) == list(theirs["loc"])


def test_polars_gives_the_same_rows(corpus):
    main, _ = corpus
    url = main.base + "/index.xml"
    ours = mapwright.to_pandas(url)
    polars = mapwright.to_polars(url)
    assert sorted(polars.columns) == sorted(ours.columns)
    key = ["sitemap", "loc"]
    p = polars.with_columns(pl.col("sitemap").cast(pl.String)).sort(key)
    o = ours.assign(sitemap=ours["sitemap"].astype(str)).sort_values(key).reset_index(drop=True)
    for col in ("loc", "sitemap", "image_loc", "video_tag", "publication_name", "geo_format", "DataObject_Attribute", "pagemap", "etag"):
        assert [None if missing(v) else v for v in o[col]] == p[col].to_list(), col
    assert polars["sitemap_last_modified"].dtype == pl.Datetime("ns", "UTC")
    assert [None if missing(v) else v for v in o["sitemap_size_mb"]] == p["sitemap_size_mb"].to_list()


def test_the_listed_differences_are_differences(corpus):
    """README, "Switching from advertools": what we do otherwise, and why."""
    main, _ = corpus
    b = main.base
    # A URL listed twice in one file with other fields: advertools merges the two entries
    # (later fields win), we keep the first entry as it is. Two spellings of one URL: advertools
    # two rows, we one (deduplication by the normal form), shown as first written.
    body = urlset(
        f"<url><loc>{b}/a</loc><priority>0.1</priority></url>\n"
        f"<url><loc>{b}/a</loc><changefreq>daily</changefreq></url>\n"
        "<url><loc>https://example.com/</loc></url>\n<url><loc>HTTPS://EXAMPLE.com</loc></url>\n"
    )
    main.add("/dups.xml", body)
    theirs = adv.sitemap_to_df(b + "/dups.xml")
    ours = mapwright.to_pandas(b + "/dups.xml")
    assert theirs.loc[theirs["loc"] == f"{b}/a", "changefreq"].iloc[0] == "daily"
    assert pd.isna(ours.loc[ours["loc"] == f"{b}/a", "changefreq"].iloc[0])
    assert len(theirs) == 3 and list(ours["loc"]) == [f"{b}/a", "https://example.com/"]
    # White space around a <loc>: advertools keeps it in loc, we trim it.
    main.add("/spaced.xml", urlset(f"<url><loc>\n  {b}/w  \n</loc></url>\n"))
    assert list(adv.sitemap_to_df(b + "/spaced.xml")["loc"]) == [f"\n  {b}/w  \n"]
    assert list(mapwright.to_pandas(b + "/spaced.xml")["loc"]) == [f"{b}/w"]
    # A sitemap listed twice: advertools fetches it and gives its rows twice, we once.
    main.add("/twice.xml", sitemapindex(f"{b}/deep.xml", f"{b}/deep.xml"))
    assert list(adv.sitemap_to_df(b + "/twice.xml")["loc"]) == [f"{b}/deep"] * 2
    assert list(mapwright.to_pandas(b + "/twice.xml")["loc"]) == [f"{b}/deep"]
    # Indented extensions: advertools makes columns of the white space between the tags.
    indented = urlset(f"<url><loc>{b}/i</loc>\n  <image:image>\n    <image:loc>{b}/i.png</image:loc>\n  </image:image>\n</url>\n")
    main.add("/indented.xml", indented)
    theirs = adv.sitemap_to_df(b + "/indented.xml")
    assert "image" in theirs and not theirs["image"][0].strip()
    assert "image" not in mapwright.to_pandas(b + "/indented.xml")
    # Indented geo and PageMap: the same white-space columns; and an Attribute given by its
    # value attribute (PageMap's other form): advertools reads only text, we read both.
    main.add(
        "/geo_indented.xml",
        urlset(
            f"<url>\n  <loc>{b}/g</loc>\n  <geo:geo>\n    <geo:format>kml</geo:format>\n  </geo:geo>\n</url>\n"
            f'<url>\n  <loc>{b}/p</loc>\n  <PageMap {PAGEMAP}>\n    <DataObject type="document">\n'
            '      <Attribute name="title">T</Attribute>\n      <Attribute name="rating" value="4"/>\n'
            "    </DataObject>\n  </PageMap>\n</url>\n"
        ),
    )
    theirs = adv.sitemap_to_df(b + "/geo_indented.xml")
    ours = mapwright.to_pandas(b + "/geo_indented.xml")
    assert {"geo", "PageMap", "PageMap_DataObject"} <= set(theirs.columns)
    assert not {"geo", "PageMap", "PageMap_DataObject"} & set(ours.columns)
    assert list(theirs["geo_format"].dropna()) == list(ours["geo_format"].dropna()) == ["kml"]
    assert list(theirs["DataObject_Attribute"].dropna()) == ["T"]
    assert list(ours["DataObject_Attribute"].dropna()) == ["4"]
    # A text sitemap: advertools cannot parse it, we read it.
    main.add("/urls.txt", f"{b}/t1\n{b}/t2\n".encode(), content_type="text/plain")
    with pytest.raises(Exception):
        adv.sitemap_to_df(b + "/urls.txt")
    assert list(mapwright.to_pandas(b + "/urls.txt")["loc"]) == [f"{b}/t1", f"{b}/t2"]
