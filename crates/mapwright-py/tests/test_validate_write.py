"""mapwright.validate (findings, summary, SARIF, JSON, follow over HTTP) and mapwright.write
(round trip, splitting into an index, gzip, bad entries)."""

from __future__ import annotations

import datetime as dt
import gzip
import re
import json

import pytest

import mapwright
from conftest import index, urlset


def test_validate_findings_summary_and_ok():
    xml = urlset("https://example.com/a", "https://example.com/a").replace(b"</loc></url></urlset>", b"</loc><priority>3</priority></url></urlset>")
    rep = mapwright.validate(xml, url="https://example.com/sitemap.xml")
    rules = sorted({f.rule for f in rep.findings})
    assert "priority-range" in rules and "duplicate-url" in rules
    assert rep.summary["files"] == 1 and rep.summary["entries"] == 2
    assert rep.summary["errors"] == sum(1 for f in rep.findings if f.severity == "error") > 0
    assert rep.ok is False
    f = next(f for f in rep.findings if f.rule == "priority-range")
    assert f.file == "<bytes>" and f.line == 2 and f.column is not None
    assert "errors=" in repr(rep)


def test_validate_clean_file_is_ok_and_scope_is_checked():
    clean = urlset("https://example.com/a")
    assert mapwright.validate(clean, url="https://example.com/sitemap.xml").ok
    rep = mapwright.validate(clean, url="https://example.com/blog/sitemap.xml")
    assert [f.rule for f in rep.findings if f.severity == "error"] == ["loc-out-of-scope"]


def test_to_sarif_and_to_json():
    rep = mapwright.validate(urlset("https://exa mple.com/"))
    sarif = rep.to_sarif()
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "mapwright"
    assert any(r["id"] == "loc-invalid" for r in run["tool"]["driver"]["rules"])
    (result,) = [r for r in run["results"] if r["ruleId"] == "loc-invalid"]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    json.dumps(sarif)
    doc = json.loads(rep.to_json())
    assert set(doc) == {"findings", "summary"} and doc["findings"][0]["rule"] == "loc-invalid"


def test_validate_equals_cli_json(cli, tmp_path):
    p = tmp_path / "s.xml"
    p.write_bytes(urlset("https://example.com/a", "https://example.com/a", "nope"))
    import subprocess

    out = subprocess.run([cli, "validate", "--format", "json", str(p)], capture_output=True, text=True)
    assert json.loads(out.stdout) == json.loads(mapwright.validate(p).to_json())


def test_validate_follow_fetches_children(site):
    site.add("/s1.xml", urlset(f"{site.base}/a", f"{site.base}/b"))
    site.add("/s2.xml.gz", urlset(f"{site.base}/c", "bad url"), gz=True)
    url = site.add("/index.xml", index(f"{site.base}/s1.xml", f"{site.base}/s2.xml.gz", f"{site.base}/missing.xml"))
    rep = mapwright.validate(url, follow=True)
    assert rep.summary["files"] == 3 and rep.summary["entries"] == 3 + 3
    assert {f.file for f in rep.findings if f.severity == "error"} == {f"{site.base}/s2.xml.gz"}
    assert [n for n, _ in rep.failed] == [f"{site.base}/missing.xml"]
    assert not rep.ok
    # Without follow, only the index.
    assert mapwright.validate(url).summary["files"] == 1


def test_write_round_trip_dicts(tmp_path):
    entries = [
        {"loc": "https://example.com/", "lastmod": dt.date(2024, 1, 2), "changefreq": "daily", "priority": 1.0},
        {"loc": "https://example.com/a", "lastmod": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
         "images": ["https://example.com/a.png", {"loc": "https://example.com/b.png", "caption": "B"}],
         "alternates": [{"hreflang": "de", "href": "https://example.com/de/a"}, ("fr", "https://example.com/fr/a")]},
        {"loc": "https://example.com/b", "lastmod": "2024-03-04T05:06:07+01:00"},
    ]
    summary = mapwright.write(entries, tmp_path, base_url="https://example.com/")
    assert summary["files"] == ["sitemap.xml"] and summary["urls"] == 3
    back = list(mapwright.read(tmp_path / "sitemap.xml"))
    assert [e.loc for e in back] == [e["loc"] for e in entries]
    assert back[0].lastmod == dt.date(2024, 1, 2) and back[0].changefreq == "daily" and back[0].priority == 1.0
    assert back[1].lastmod == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert [i["loc"] for i in back[1].images] == ["https://example.com/a.png", "https://example.com/b.png"]
    assert back[1].images[1]["caption"] == "B"
    assert back[1].alternates == [{"hreflang": "de", "href": "https://example.com/de/a"}, {"hreflang": "fr", "href": "https://example.com/fr/a"}]
    assert back[2].lastmod_text == "2024-03-04T05:06:07+01:00"
    assert mapwright.validate(tmp_path / "sitemap.xml", url="https://example.com/sitemap.xml").ok


def test_write_entries_from_read_split_into_index_gzip(tmp_path):
    src = urlset(*[f"https://example.com/p{i}" for i in range(25)])
    summary = mapwright.write(mapwright.read(src), tmp_path, base_url="https://example.com/maps/", gzip=True, max_urls=10)
    assert summary["entry_point"] == "sitemap.xml"
    # Parts are named by their number and a hash of their content (an old index never points
    # at a new part after a crash): sitemap-1-<16 hex>.xml.gz.
    parts = summary["files"][:-1]
    assert summary["files"][-1] == "sitemap.xml" and len(parts) == 3
    for i, name in enumerate(parts, 1):
        assert re.fullmatch(rf"sitemap-{i}-[0-9a-f]{{16}}\.xml\.gz", name), name
    children = [e.loc for e in mapwright.read(tmp_path / "sitemap.xml")]
    assert children == [f"https://example.com/maps/{name}" for name in parts]
    assert gzip.decompress((tmp_path / parts[0]).read_bytes()).startswith(b"<?xml")
    locs = [e.loc for name in parts for e in mapwright.read(tmp_path / name)]
    assert locs == [f"https://example.com/p{i}" for i in range(25)]
    # A second, smaller run removes the stale parts.
    again = mapwright.write([{"loc": "https://example.com/"}], tmp_path, base_url="https://example.com/maps/")
    assert sorted(again["removed"]) == parts


def test_write_text_format_and_extensions(tmp_path):
    mapwright.write([{"loc": "https://example.com/x"}], tmp_path, base_url="https://example.com/", format="text")
    assert (tmp_path / "sitemap.txt").read_text() == "https://example.com/x\n"
    mapwright.write([{"loc": "https://example.com/x"}], tmp_path / "x", base_url="https://example.com/", extensions=["image"])
    xml = (tmp_path / "x" / "sitemap.xml").read_bytes()
    assert b"xmlns:image" in xml and b"xmlns:video" not in xml
    with pytest.raises(ValueError, match="unknown extension"):
        mapwright.write([], tmp_path / "y", base_url="https://example.com/", extensions=["audio"])


def test_write_refuses_bad_entries_with_their_number(tmp_path):
    with pytest.raises(ValueError, match="entry 2: loc"):
        mapwright.write([{"loc": "https://example.com/"}, {"loc": "no url"}], tmp_path, base_url="https://example.com/")
    with pytest.raises(ValueError, match="entry 1: changefreq"):
        mapwright.write([{"loc": "https://example.com/", "changefreq": "sometimes"}], tmp_path, base_url="https://example.com/")
    with pytest.raises(ValueError, match="priority"):
        mapwright.write([{"loc": "https://example.com/", "priority": 2}], tmp_path, base_url="https://example.com/")
    with pytest.raises(TypeError, match="entry 1"):
        mapwright.write([42], tmp_path, base_url="https://example.com/")
    # Nothing half-written is left under the final name.
    assert not (tmp_path / "sitemap.xml").exists()
