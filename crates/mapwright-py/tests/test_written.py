"""URLs as written (issue 22 item 3): `loc` is the URL as the sitemap wrote it (entities
decoded, surrounding white space trimmed), from bytes, a path and a URL, through `read`,
`discover`, `to_pandas` and `to_polars`; the normal form is `Entry.loc_normalized` and the
frames' `normalized=True`, and deduplication compares it (the first spelling is kept)."""

from __future__ import annotations

import pytest

import mapwright

# (as written, normal form): an upper-case scheme and host with the default port, a bare
# origin with its default port, escapes in lower case and an unreserved one, a space left
# unescaped, an entity, and a second spelling of the first.
# Alike on purpose: the cases of crates/mapwright/tests/fetch/written.rs's CASES: the package must
# say what the CLI says, and each suite stands alone (pytest reads no Rust).
CASES = [
    ("HTTPS://Example.COM:443/A", "https://example.com/A"),
    ("http://example.com:80", "http://example.com/"),
    ("https://example.com/caf%c3%a9?q=%7E", "https://example.com/caf%c3%a9?q=%7E"),
    ("https://example.com/a b", "https://example.com/a%20b"),
    ("https://example.com/x?a=1&b=2", "https://example.com/x?a=1&b=2"),
    ("https://example.com/A", "https://example.com/A"),
]
WRITTEN = [w for w, _ in CASES]
NORMAL = [n for _, n in CASES]


def sitemap() -> bytes:
    body = "".join(f"<url><loc>\n   {w.replace('&', '&amp;')}\t</loc></url>\n" for w in WRITTEN)
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{body}</urlset>\n'.encode()


@pytest.mark.parametrize("kind", ["bytes", "path", "url"])
def test_read_gives_urls_as_written(site, tmp_path, kind):
    source: object = sitemap()
    if kind == "path":
        (tmp_path / "s.xml").write_bytes(sitemap())
        source = tmp_path / "s.xml"
    elif kind == "url":
        source = site.add("/s.xml", sitemap())
    entries = list(mapwright.read(source))  # type: ignore[arg-type]
    assert [e.loc for e in entries] == WRITTEN
    assert [e.loc_normalized for e in entries] == NORMAL
    assert [e.to_dict()["loc"] for e in entries] == WRITTEN


def test_discover_gives_urls_as_written_deduplicated_by_the_normal_form(site):
    url = site.add("/s.xml", sitemap())
    d = mapwright.discover(url, scope=False)
    got = list(d)
    assert [e.loc for e in got] == WRITTEN[:5]
    assert [e.loc_normalized for e in got] == NORMAL[:5]
    assert d.summary["duplicates"] == 1


@pytest.mark.parametrize("kind", ["bytes", "url"])
def test_frames_give_urls_as_written_or_normalized(site, kind):
    import polars as pl
    source = sitemap() if kind == "bytes" else site.add("/s.xml", sitemap())
    # One file: the second spelling of the first URL is a duplicate.
    assert list(mapwright.to_pandas(source)["loc"]) == WRITTEN[:5]
    assert list(mapwright.to_pandas(source, normalized=True)["loc"]) == NORMAL[:5]
    assert mapwright.to_polars(source)["loc"].to_list() == WRITTEN[:5]
    assert mapwright.to_polars(source, normalized=True)["loc"].to_list() == NORMAL[:5]
    assert isinstance(mapwright.to_polars(source), pl.DataFrame)
