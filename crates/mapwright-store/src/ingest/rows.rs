//! A staged row of the ingest ([`StagedRow`]), the hash of what a sitemap says of a URL (the
//! stage's map compares it with the last read's), and the lines of PostgreSQL's `COPY` for
//! staged and new rows.

use std::borrow::Cow;

/// A staged row: a URL the sitemap did not list before (`kind` 0) or whose content changed (1).
#[derive(Clone)]
pub(crate) struct StagedRow<'a> {
    pub(crate) seq: i64,
    pub(crate) kind: i16,
    pub(crate) loc: Cow<'a, str>,
    pub(crate) loc_hash: [u8; 16],
    pub(crate) lastmod: Option<Cow<'a, str>>,
    pub(crate) changefreq: Option<Cow<'a, str>>,
    pub(crate) priority: Option<f64>,
}

impl StagedRow<'_> {
    /// The row with its text owned, to wait in the stage.
    pub(crate) fn into_owned(self) -> StagedRow<'static> {
        StagedRow {
            seq: self.seq,
            kind: self.kind,
            loc: Cow::Owned(self.loc.into_owned()),
            loc_hash: self.loc_hash,
            lastmod: self.lastmod.map(|t| Cow::Owned(t.into_owned())),
            changefreq: self.changefreq.map(|t| Cow::Owned(t.into_owned())),
            priority: self.priority,
        }
    }
}

/// A 64-bit hash of what a sitemap says of a URL (its text as stored: without NUL). The bytes
/// hashed are laid out in a buffer on the stack and hashed at once (what the streaming hasher
/// gives for the same bytes, [`content_hash_streamed`], which longer texts take): the streaming
/// state cost more than the hash itself for every URL of every read.
pub(crate) fn content_hash(lastmod: Option<&str>, changefreq: Option<&str>, priority: Option<f64>) -> u64 {
    const ROOM: usize = 192;
    let texts = [lastmod, changefreq];
    let needed: usize = texts.iter().map(|t| 9 + t.map_or(0, str::len)).sum::<usize>() + 9;
    if needed > ROOM {
        return content_hash_streamed(lastmod, changefreq, priority);
    }
    let mut buf = [0_u8; ROOM];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        buf[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    for text in texts {
        match text {
            Some(t) => {
                put(&[1]);
                put(&(t.len() as u64).to_le_bytes());
                put(t.as_bytes());
            }
            None => put(&[0]),
        }
    }
    match priority {
        Some(p) => {
            put(&[1]);
            put(&p.to_bits().to_le_bytes());
        }
        None => put(&[0]),
    }
    xxhash_rust::xxh3::xxh3_64(&buf[..at]) & !(1 << 63)
}

/// [`content_hash`] through the streaming hasher (the stored sets were made so).
pub(crate) fn content_hash_streamed(lastmod: Option<&str>, changefreq: Option<&str>, priority: Option<f64>) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    for text in [lastmod, changefreq] {
        match text {
            Some(t) => {
                h.update(&[1]);
                h.update(&(t.len() as u64).to_le_bytes());
                h.update(t.as_bytes());
            }
            None => h.update(&[0]),
        }
    }
    match priority {
        Some(p) => {
            h.update(&[1]);
            h.update(&p.to_bits().to_le_bytes());
        }
        None => h.update(&[0]),
    }
    h.digest() & !(1 << 63)
}

/// Appends a staged row as a line of `COPY ... FROM STDIN` in text format.
pub(crate) fn copy_line(out: &mut String, stage_id: i64, row: &StagedRow<'_>) {
    use std::fmt::Write as _;
    let _ = write!(out, "{stage_id}\t{}\t{}\t", row.seq, row.kind);
    copy_fields(out, row);
    out.push('\n');
}

/// Appends a new URL row of `urls` as a line of `COPY urls (id, site_id, loc, loc_hash, lastmod,
/// changefreq, priority, first_seen_at, last_seen_at, changed_at)` in text format.
pub(crate) fn copy_url_line(out: &mut String, id: i64, site_id: i64, now: i64, row: &StagedRow<'_>) {
    use std::fmt::Write as _;
    let _ = write!(out, "{id}\t{site_id}\t");
    copy_fields(out, row);
    let _ = writeln!(out, "\t{now}\t{now}\t{now}");
}

/// The row's loc, loc_hash, lastmod, changefreq and priority, tab-separated, for `COPY`.
fn copy_fields(out: &mut String, row: &StagedRow<'_>) {
    use std::fmt::Write as _;
    copy_text(out, &row.loc);
    out.push_str("\t\\\\x");
    out.push_str(&hex::encode(row.loc_hash));
    for text in [row.lastmod.as_deref(), row.changefreq.as_deref()] {
        out.push('\t');
        match text {
            Some(t) => copy_text(out, t),
            None => out.push_str("\\N"),
        }
    }
    match row.priority {
        Some(p) => {
            let _ = write!(out, "\t{p}");
        }
        None => out.push_str("\t\\N"),
    }
}

/// Text escaped for `COPY`'s text format (backslash, tab, newline, carriage return).
fn copy_text(out: &mut String, text: &str) {
    if !text.contains(['\\', '\t', '\n', '\r']) {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}
