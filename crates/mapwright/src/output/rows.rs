//! The rows of `discover` (JSON Lines, CSV, text): a URL with the sitemap it was found in (and
//! its site, under `--sites`), a sitemap's status (`--sitemaps-only`), a change (`--changes`).
//! The common URL row is written by hand, byte for byte serde_json's (`plain_json_row`): it is
//! most of what `discover` writes.

use std::io::{self, Write};

use mapwright_core::{Lastmod, UrlEntry};
use mapwright_fetch::{Change, Outcome, SitemapStatus};
use serde::Serialize;

use super::{not_text, shown};
use crate::cli::EntryFormat;

#[derive(Serialize)]
struct JsonUrl<'a> {
    loc: &'a str,
    lastmod: Option<String>,
    changefreq: Option<&'static str>,
    priority: Option<f32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    images: &'a [mapwright_core::Image],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    videos: &'a [mapwright_core::Video],
    #[serde(skip_serializing_if = "Option::is_none")]
    news: Option<&'a mapwright_core::News>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    alternates: &'a [mapwright_core::Alternate],
    #[serde(skip_serializing_if = "Option::is_none")]
    geo: Option<&'a mapwright_core::Geo>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pagemap: &'a [mapwright_core::DataObject],
    sitemap: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<&'a str>,
}

impl<'a> JsonUrl<'a> {
    /// The row of `u`, found in `sitemap` (of `site`, under `--sites`); `loc` as written, or
    /// in its normal form when `normalized`.
    fn of(u: &'a UrlEntry, sitemap: &'a str, site: Option<&'a str>, normalized: bool) -> Self {
        let x = u.ext();
        JsonUrl {
            loc: shown(&u.loc, normalized),
            lastmod: u.lastmod.as_ref().map(|l| l.to_string()),
            changefreq: u.changefreq.map(|c| c.as_str()),
            priority: u.priority,
            images: &x.images,
            videos: &x.videos,
            news: x.news.as_deref(),
            alternates: &x.alternates,
            geo: x.geo.as_deref(),
            pagemap: &x.pagemap,
            sitemap,
            site,
        }
    }
}

#[derive(Serialize)]
struct JsonSitemap<'a> {
    sitemap: &'a str,
    final_url: Option<&'a str>,
    parent: Option<&'a str>,
    depth: usize,
    status: &'static str,
    format: Option<&'static str>,
    urls: u64,
    children: u64,
    bytes: u64,
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<&'a str>,
}

/// The rows of `discover` in one format; with `--sites` each row ends with its site.
pub(crate) struct Out<W: Write> {
    pub(crate) w: W,
    format: EntryFormat,
    /// The CSV header is written (or is not this writer's to write).
    header: bool,
    /// `loc` in its normal form (`--normalized`) rather than as written.
    normalized: bool,
}

/// The CSV header of URL rows, and of `--sitemaps-only` rows.
pub(crate) fn csv_header(sitemaps_only: bool, sites: bool) -> &'static str {
    match (sitemaps_only, sites) {
        (false, false) => "loc,lastmod,changefreq,priority,sitemap",
        (false, true) => "loc,lastmod,changefreq,priority,sitemap,site",
        (true, false) => "sitemap,status,format,parent,depth,error",
        (true, true) => "sitemap,status,format,parent,depth,error,site",
    }
}

impl<W: Write> Out<W> {
    /// A writer; `header_done` when the CSV header is written elsewhere (per-site buffers).
    pub(crate) fn new(w: W, format: EntryFormat, header_done: bool) -> Self {
        Out { w, format, header: header_done, normalized: false }
    }

    /// Prints `loc` in its normal form rather than as written.
    pub(crate) fn normalized(mut self, on: bool) -> Self {
        self.normalized = on;
        self
    }

    fn header(&mut self, line: &str) -> io::Result<()> {
        if self.format == EntryFormat::Csv && !self.header {
            self.header = true;
            writeln!(self.w, "{line}")?;
        }
        Ok(())
    }

    /// Ends a CSV row: the site column when there is one, then the newline.
    fn end_row(&mut self, site: Option<&str>) -> io::Result<()> {
        if let Some(site) = site {
            self.w.write_all(b",")?;
            csv(&mut self.w, site)?;
        }
        writeln!(self.w)
    }

    pub(crate) fn url(&mut self, u: &UrlEntry, sitemap: &str, site: Option<&str>) -> io::Result<()> {
        match self.format {
            EntryFormat::Text => {
                self.w.write_all(shown(&u.loc, self.normalized).as_bytes())?;
                self.w.write_all(b"\n")
            }
            EntryFormat::Csv => {
                self.header(csv_header(false, site.is_some()))?;
                csv(&mut self.w, shown(&u.loc, self.normalized))?;
                self.w.write_all(b",")?;
                if let Some(l) = &u.lastmod {
                    csv(&mut self.w, &l.to_string())?;
                }
                write!(self.w, ",{},", u.changefreq.map(|c| c.as_str()).unwrap_or(""))?;
                if let Some(p) = u.priority {
                    write!(self.w, "{p}")?;
                }
                self.w.write_all(b",")?;
                csv(&mut self.w, sitemap)?;
                self.end_row(site)
            }
            EntryFormat::Jsonl if !u.has_extensions() => plain_json_row(&mut self.w, u, sitemap, site, self.normalized),
            EntryFormat::Jsonl => {
                let j = JsonUrl::of(u, sitemap, site, self.normalized);
                serde_json::to_writer(&mut self.w, &j)?;
                writeln!(self.w)
            }
            EntryFormat::Parquet => Err(not_text()),
        }
    }

    /// The rows of a batch of URLs from one sitemap: what [`Out::url`] writes for each, with
    /// the JSON rows' common end encoded once.
    pub(crate) fn urls(&mut self, batch: &[UrlEntry], sitemap: &str, site: Option<&str>) -> io::Result<()> {
        if self.format != EntryFormat::Jsonl {
            return batch.iter().try_for_each(|u| self.url(u, sitemap, site));
        }
        let mut tail = Vec::with_capacity(sitemap.len() + site.map_or(0, str::len) + 24);
        json_row_tail(&mut tail, sitemap, site)?;
        // Each row is put together here and written in one call: its dozen pieces are appends
        // to a vector the compiler sees, not a dozen calls into the writer.
        let mut row = Vec::with_capacity(256 + tail.len());
        for u in batch {
            if u.has_extensions() {
                self.url(u, sitemap, site)?;
            } else {
                row.clear();
                plain_json_row_head(&mut row, u, self.normalized)?;
                row.extend_from_slice(&tail);
                self.w.write_all(&row)?;
            }
        }
        Ok(())
    }

    pub(crate) fn sitemap(&mut self, s: &SitemapStatus, site: Option<&str>) -> io::Result<()> {
        let (status, error) = match &s.outcome {
            Outcome::Fetched => ("ok", s.error.as_ref().map(|e| e.to_string())),
            Outcome::NotModified => ("not-modified", None),
            Outcome::Skipped => ("skipped", None),
            Outcome::Failed(e) => ("failed", Some(e.to_string())),
        };
        let format = s.format.map(|f| f.as_str());
        match self.format {
            EntryFormat::Text => writeln!(self.w, "{}", s.url),
            EntryFormat::Csv => {
                self.header(csv_header(true, site.is_some()))?;
                csv(&mut self.w, &s.url)?;
                write!(self.w, ",{status},{},", format.unwrap_or(""))?;
                csv(&mut self.w, s.parent.as_deref().unwrap_or(""))?;
                write!(self.w, ",{},", s.depth)?;
                csv(&mut self.w, error.as_deref().unwrap_or(""))?;
                self.end_row(site)
            }
            EntryFormat::Jsonl => {
                let j = JsonSitemap {
                    sitemap: &s.url,
                    final_url: s.final_url.as_deref(),
                    parent: s.parent.as_deref(),
                    depth: s.depth,
                    status,
                    format,
                    urls: s.urls,
                    children: s.children,
                    bytes: s.bytes,
                    error,
                    site,
                };
                serde_json::to_writer(&mut self.w, &j)?;
                writeln!(self.w)
            }
            EntryFormat::Parquet => Err(not_text()),
        }
    }

    pub(crate) fn change(&mut self, c: Change, loc: &str, sitemap: &str) -> io::Result<()> {
        let normal = if self.normalized { mapwright_core::Loc::parse(loc).ok() } else { None };
        let loc = normal.as_ref().map_or(loc, |l| l.as_str());
        let word = match c {
            Change::Added => "added",
            Change::Removed => "removed",
        };
        match self.format {
            EntryFormat::Text => writeln!(self.w, "{} {loc}", if c == Change::Added { '+' } else { '-' }),
            EntryFormat::Csv => {
                self.header("change,loc,sitemap")?;
                write!(self.w, "{word},")?;
                csv(&mut self.w, loc)?;
                self.w.write_all(b",")?;
                csv(&mut self.w, sitemap)?;
                writeln!(self.w)
            }
            EntryFormat::Jsonl => {
                serde_json::to_writer(
                    &mut self.w,
                    &serde_json::json!({"change": word, "loc": loc, "sitemap": sitemap}),
                )?;
                writeln!(self.w)
            }
            EntryFormat::Parquet => Err(not_text()),
        }
    }
}

/// The JSON line of a URL without extensions, written field by field: the bytes serde_json
/// gives for `JsonUrl` (a test compares them), without serde's call per token and the lastmod
/// `String` of each row, which were a sixth of `discover --sites`.
fn plain_json_row(
    w: &mut impl Write,
    u: &UrlEntry,
    sitemap: &str,
    site: Option<&str>,
    normalized: bool,
) -> io::Result<()> {
    let mut tail = Vec::new();
    json_row_tail(&mut tail, sitemap, site)?;
    plain_json_row_head(w, u, normalized)?;
    w.write_all(&tail)
}

/// The end of every row of one batch (`,"sitemap":...,"site":...}` and the newline): the same
/// for all of them, so it is encoded once per batch.
fn json_row_tail(tail: &mut Vec<u8>, sitemap: &str, site: Option<&str>) -> io::Result<()> {
    tail.extend_from_slice(b",\"sitemap\":");
    json_str(tail, sitemap)?;
    if let Some(site) = site {
        tail.extend_from_slice(b",\"site\":");
        json_str(tail, site)?;
    }
    tail.extend_from_slice(b"}\n");
    Ok(())
}

/// A row of [`plain_json_row`] up to its priority.
fn plain_json_row_head(w: &mut impl Write, u: &UrlEntry, normalized: bool) -> io::Result<()> {
    w.write_all(b"{\"loc\":")?;
    json_str(w, shown(&u.loc, normalized))?;
    match &u.lastmod {
        Some(Lastmod::W3c(v)) => {
            // A W3C Datetime is digits, `-`, `:`, `.`, `T`, `Z` and `+`: nothing to escape.
            w.write_all(b",\"lastmod\":\"")?;
            w.write_all(v.text().as_bytes())?;
            w.write_all(b"\"")?;
        }
        Some(Lastmod::Text { text, .. }) => {
            w.write_all(b",\"lastmod\":")?;
            json_str(w, text)?;
        }
        None => w.write_all(b",\"lastmod\":null")?,
    }
    match u.changefreq {
        Some(c) => {
            w.write_all(b",\"changefreq\":\"")?;
            w.write_all(c.as_str().as_bytes())?;
            w.write_all(b"\"")?;
        }
        None => w.write_all(b",\"changefreq\":null")?,
    }
    w.write_all(b",\"priority\":")?;
    match u.priority {
        Some(p) => serde_json::to_writer(&mut *w, &p)?,
        None => w.write_all(b"null")?,
    }
    Ok(())
}

/// Whether `s` can go into JSON between quotes as it is: no control character, quote or
/// backslash. Checked 16 bytes at a time without an early exit, so the compiler vectorises it
/// (a URL almost never needs escaping, and this runs for every row). The chunks are exactly 16
/// bytes, the last one overlapping the one before, so no byte goes through a scalar loop.
fn json_plain(s: &str) -> bool {
    #[inline(always)]
    fn bad(c: &[u8; 16]) -> bool {
        c.iter().fold(false, |bad, &b| bad | (b < 0x20) | (b == b'"') | (b == b'\\'))
    }
    let b = s.as_bytes();
    let Some(last) = b.len().checked_sub(16) else {
        return !b.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
    };
    let chunk = |at: usize| <&[u8; 16]>::try_from(&b[at..at + 16]).expect("16 bytes");
    !(0..b.len() / 16).any(|i| bad(chunk(i * 16))) && !bad(chunk(last))
}

/// A JSON string: as it is when nothing in it needs escaping (a URL, almost always), else
/// through serde_json.
fn json_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    if json_plain(s) {
        w.write_all(b"\"")?;
        w.write_all(s.as_bytes())?;
        w.write_all(b"\"")
    } else {
        Ok(serde_json::to_writer(w, s)?)
    }
}

fn csv(w: &mut impl Write, s: &str) -> io::Result<()> {
    if s.contains([',', '"', '\n', '\r']) {
        write!(w, "\"{}\"", s.replace('"', "\"\""))
    } else {
        w.write_all(s.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_core::{Entry, ReadOptions, SitemapReader};

    /// The vectorised check agrees with a byte-by-byte one, at every position of a long string.
    #[test]
    fn json_plain_finds_what_needs_escaping_anywhere() {
        let long = "https://example.com/".repeat(3);
        // Lengths around the 16-byte chunks: none, a short tail, whole chunks, an overlap.
        for len in [0, 1, 14, 15, 16, 17, 31, 32, 33, 47, 48, 59, 60] {
            let base = &long[..len];
            assert!(json_plain(base), "{base:?}");
            for bad in ['"', '\\', '\n', '\u{1}'] {
                for i in 0..=base.len() {
                    let mut s = base.to_string();
                    s.insert(i, bad);
                    assert!(!json_plain(&s), "{s:?}");
                }
            }
        }
    }

    /// The hand-written row is byte for byte serde_json's, with and without a site.
    #[test]
    fn plain_rows_are_serde_rows() {
        let xml = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <url><loc>https://example.com/a</loc></url>
            <url><loc>https://example.com/b?q="x"&amp;y=\z</loc><lastmod>2024-05-01T10:20:30.5+02:00</lastmod>
              <changefreq>weekly</changefreq><priority>0.5</priority></url>
            <url><loc>http://127.0.0.1:8080/c</loc><lastmod>2024</lastmod><priority>1.0</priority></url>
            <url><loc>https://example.com/%C3%BC</loc><lastmod>2024-05-01</lastmod><priority>0.25</priority></url>
            <url><loc>HTTPS://Example.COM:443</loc></url>
            </urlset>"#;
        let mut reader = SitemapReader::new(xml.as_bytes(), ReadOptions::default()).unwrap();
        let mut n = 0;
        while let Some(Entry::Url(u)) = reader.next_entry().unwrap() {
            for (sitemap, site) in
                [("https://example.com/s.xml", None), ("https://e.com/\"q\".xml", Some("https://e.com/"))]
            {
                for normalized in [false, true] {
                    let serde = serde_json::to_string(&JsonUrl::of(&u, sitemap, site, normalized)).unwrap();
                    let mut fast = Vec::new();
                    plain_json_row(&mut fast, &u, sitemap, site, normalized).unwrap();
                    assert_eq!(String::from_utf8(fast).unwrap(), format!("{serde}\n"));
                    let want = if normalized { u.loc.as_str() } else { u.loc.written() };
                    assert!(serde.starts_with(&format!("{{\"loc\":{}", serde_json::to_string(want).unwrap())));
                }
            }
            n += 1;
        }
        assert_eq!(n, 5);
    }
}
