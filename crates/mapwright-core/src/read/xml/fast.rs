//! A fast path for the plain `<url>` of a urlset, the shape of almost every entry on the web:
//! `<url>` with no attribute holding only `<loc>`, `<lastmod>`, `<changefreq>`, `<priority>`
//! (each at most once, no attribute, text with predefined entities only), white space between.
//!
//! quick-xml turns such an entry into about a dozen events, each copied into the event buffer,
//! checked as UTF-8 and dispatched through the role stack: about 10,000 instructions per URL
//! on the benchmark corpus, against about 3,000 for this byte scan plus the same field code.
//! The scan looks only at bytes already buffered (it never reads, so it never meets an I/O
//! error or a limit), and either recognises the whole entry, up to `</url>`, or changes
//! nothing and lets quick-xml read it. A recognised entry is then fed to the very functions
//! the event loop calls (`begin_entry`, `append`, `field`, `finish_entry`), in the order the
//! events would have called them, so entries and findings are the same; the bytes are consumed
//! behind quick-xml's back, which is sound only where quick-xml waits for text after a tag
//! (the bytes skipped are whole elements) and is accounted for by moving `origin`.
//! A test compares both paths on generated documents.

use super::*;

/// One field of a recognised entry: its start tag and its text, as indices into the scan.
#[derive(Clone, Copy)]
struct Span {
    field: Field,
    tag: usize,
    text: (usize, usize),
    /// The text holds references (else it is one run, appended whole).
    refs: bool,
}

/// A recognised `<url>`: where it starts, its fields in document order, where it ends.
struct Scanned {
    url: usize,
    fields: [Span; 4],
    n: usize,
    end: usize,
}

#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// Whether `b` starts with `tag`. A length known at compile time lets the comparison be a
/// load or two instead of a call to `memcmp` (five to ten of these per entry).
#[inline(always)]
fn starts<const N: usize>(b: &[u8], tag: &[u8; N]) -> bool {
    b.get(..N).is_some_and(|h| h == tag)
}

/// The field whose start tag (`<name>`, nothing else) begins `rest`, and its tags' lengths.
#[inline]
fn field_tag(rest: &[u8]) -> Option<(Field, usize)> {
    let (field, open) = match rest.get(1)? {
        b'l' if starts(rest, b"<loc>") => (Field::Loc, 5),
        b'l' if starts(rest, b"<lastmod>") => (Field::Lastmod, 9),
        b'c' if starts(rest, b"<changefreq>") => (Field::Changefreq, 12),
        b'p' if starts(rest, b"<priority>") => (Field::Priority, 10),
        _ => return None,
    };
    Some((field, open))
}

/// Whether `close` starts with the end tag of `field`.
#[inline]
fn end_tag(close: &[u8], field: Field) -> bool {
    match field {
        Field::Loc => starts(close, b"</loc>"),
        Field::Lastmod => starts(close, b"</lastmod>"),
        Field::Changefreq => starts(close, b"</changefreq>"),
        Field::Priority => starts(close, b"</priority>"),
    }
}

/// The end of the text starting at `b[from]` (the next `<`) and whether it holds references,
/// when quick-xml would read it as text and references only, every reference one of the five
/// predefined entities (anything else has findings of its own: left to the event loop); UTF-8
/// is checked once for the whole entry. One search for both bytes: most texts have no
/// reference, so no second search.
fn plain_text(b: &[u8], from: usize) -> Result<(usize, bool), usize> {
    let mut i = from;
    let mut refs = false;
    let end = loop {
        let Some(at) = memchr::memchr2(b'<', b'&', &b[i..]) else {
            return Err(b.len());
        };
        let at = i + at;
        if b[at] == b'<' {
            break at;
        }
        // quick-xml ends a reference at the first `;`, `&` or `<`; names are short.
        let name_start = at + 1;
        let Some(n) = b[name_start..].iter().take(8).position(|&c| matches!(c, b';' | b'&' | b'<')) else {
            return Err(name_start);
        };
        let name_end = name_start + n;
        let name = std::str::from_utf8(&b[name_start..name_end]).unwrap_or("");
        if b[name_end] != b';' || quick_xml::escape::resolve_xml_entity(name).is_none() {
            return Err(name_end);
        }
        refs = true;
        i = name_end + 1;
    };
    Ok((end, refs))
}

/// Why [`scan`] did not recognise an entry.
#[derive(Debug, PartialEq, Eq)]
enum Miss {
    /// The buffered bytes end before the entry does: the next one is likely plain again.
    Short,
    /// Something else than a plain entry.
    Shape,
}

/// Recognises one whole plain `<url>` (after white space) at the start of `b`.
fn scan(b: &[u8]) -> Result<Scanned, Miss> {
    // Where a test failed: within a tag's length of the end, more bytes might have passed it.
    let miss = |at: usize| if b.len() - at.min(b.len()) < 16 { Miss::Short } else { Miss::Shape };
    let url = skip_ws(b, 0);
    if !starts(&b[url..], b"<url>") {
        return Err(miss(url));
    }
    let blank = Span { field: Field::Loc, tag: 0, text: (0, 0), refs: false };
    let mut out = Scanned { url, fields: [blank; 4], n: 0, end: 0 };
    let mut seen = 0u8;
    let mut i = url + 5;
    loop {
        i = skip_ws(b, i);
        let rest = &b[i..];
        if starts(rest, b"</url>") {
            out.end = i + 6;
            return Ok(out);
        }
        let Some((field, open)) = field_tag(rest) else {
            return Err(miss(i));
        };
        let bit = 1 << field as u8;
        if seen & bit != 0 || out.n == out.fields.len() {
            return Err(Miss::Shape);
        }
        seen |= bit;
        let ts = i + open;
        let (te, refs) = plain_text(b, ts).map_err(miss)?;
        if !end_tag(&b[te..], field) {
            return Err(miss(te));
        }
        out.fields[out.n] = Span { field, tag: i, text: (ts, te), refs };
        out.n += 1;
        i = te + open + 1;
    }
}

impl State {
    /// Whether the next entry may be tried on the fast path, quick-xml standing after a tag
    /// (`after_tag`, kept by the event loop): directly in a urlset's root whose unprefixed
    /// elements are sitemap elements, deep enough for fields.
    #[inline]
    pub(super) fn fast_ready(&self) -> bool {
        self.fast
            && self.format == Format::Urlset
            && self.roles.len() == 1
            && self.roles[0] == Role::Root
            && self.max_depth >= 3
            && self.ns.resolve("") == Ns::Sitemap
    }

    /// Reads the next entry on the fast path, or returns `None` having changed nothing.
    pub(super) fn fast_entry(&mut self, xr: &mut Reader<Tracked<'_>>, sink: &mut FindingSink<'_>) -> Option<Step> {
        let b = xr.get_ref().buffered();
        let s = match scan(b) {
            Ok(s) => s,
            // An entry cut by the end of what is buffered (once per refill): the next one
            // need not wait.
            Err(Miss::Short) => return None,
            Err(Miss::Shape) => {
                self.fast_backoff = (self.fast_backoff * 2 + 1).min(63);
                self.fast_wait = self.fast_backoff;
                return None;
            }
        };
        self.fast_backoff = 0;
        // One UTF-8 check for the whole entry: its markup is ASCII, so this is each text's check.
        // The entry is copied (a few hundred bytes) so that the fields' code may borrow the
        // reader while it reads the texts.
        let whole = std::str::from_utf8(&b[..s.end]).ok()?;
        let mut copy = std::mem::take(&mut self.scratch);
        copy.clear();
        copy.push_str(whole);
        // Offsets as quick-xml would give them (its offset 0 is at `origin`).
        let at = xr.buffer_position();
        self.begin_entry(xr, at + s.url as u64, Role::Url);
        for span in &s.fields[..s.n] {
            let off = at + span.tag as u64;
            if span.field == Field::Loc {
                self.build.loc_off = off;
            }
            self.begin_text(off);
            // UTF-8 checked above; `&name;` with a predefined name only (`plain_text`).
            let t = &copy[span.text.0..span.text.1];
            if span.refs {
                // Appended as quick-xml's events split it: runs of text and references.
                let mut rest = t;
                while let Some(a) = memchr::memchr(b'&', rest.as_bytes()) {
                    // Names are short (`plain_text` looked at eight bytes at most).
                    // `plain_text` saw the `;`; should that ever not hold, the text is kept as
                    // it is rather than sliced out of order (a panic).
                    let Some(semi) = rest.as_bytes()[a..].iter().position(|&c| c == b';').map(|n| a + n) else {
                        break;
                    };
                    self.append(&rest[..a]);
                    self.append(quick_xml::escape::resolve_xml_entity(&rest[a + 1..semi]).unwrap_or_default());
                    rest = &rest[semi + 1..];
                }
                self.append(rest);
            } else {
                self.append(t);
            }
            self.field(xr, span.field, sink);
        }
        self.scratch = copy;
        let step = self.finish_entry(xr, Role::Url, 0, sink);
        std::io::BufRead::consume(xr.get_mut(), s.end);
        self.origin += s.end as u64;
        Some(step)
    }
}

#[cfg(test)]
mod tests {
    use crate::read::{ReadOptions, SitemapReader};
    use proptest::prelude::*;

    /// Everything a read gives, as text: entries with their positions, findings, the error.
    fn transcript(doc: &[u8], fast: bool, chunk: usize, limits: crate::read::Limits) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let input = std::io::BufReader::with_capacity(chunk, doc);
        let mut r = match SitemapReader::new(input, ReadOptions { limits }) {
            Ok(r) => r,
            Err(e) => return format!("new: {e:?}"),
        };
        r.set_fast_path(fast);
        loop {
            let next = r.next_entry();
            for f in r.drain_findings() {
                writeln!(out, "finding {f:?}").unwrap();
            }
            match next {
                Ok(Some(e)) => {
                    writeln!(out, "entry {e:?} at {:?} read {}", r.entry_position(), r.bytes_read()).unwrap()
                }
                Ok(None) => break,
                Err(e) => {
                    writeln!(out, "error {e:?}").unwrap();
                    break;
                }
            }
        }
        writeln!(out, "end {} dropped {}", r.bytes_read(), r.dropped_findings()).unwrap();
        out
    }

    fn check(doc: &[u8], limits: crate::read::Limits) {
        for chunk in [1 << 16, 7] {
            let slow = transcript(doc, false, chunk, limits.clone());
            let fast = transcript(doc, true, chunk, limits.clone());
            assert_eq!(slow, fast, "fast and slow paths differ on {:?}", String::from_utf8_lossy(doc));
        }
    }

    #[test]
    fn same_as_the_event_loop() {
        let head = "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
        let cases = [
            "<url><loc>https://a.example/x?a=1&amp;b=2</loc><lastmod>2024-01-02</lastmod></url>",
            "<url>\r\n <loc> https://a.example/ </loc>\n<priority>0.5</priority><changefreq>Daily</changefreq></url>",
            "<url><loc>https://a.example/&lt;&gt;&apos;&quot;</loc></url>",
            "<url><loc>https://a.example/a&b</loc></url>",
            "<url><loc>https://a.example/&nbsp;</loc></url>",
            "<url><loc>https://a.example/&#233;</loc></url>",
            "<url><loc>https://a.example/é ü</loc><lastmod>2024-13-01</lastmod><priority>2</priority></url>",
            "<url><loc>https://a.example/1</loc><loc>https://a.example/2</loc></url>",
            "<url><lastmod>2024-01-02</lastmod><lastmod>2024-01-03</lastmod><loc>https://a.example/</loc></url>",
            "<url><loc>ftp://a.example/</loc></url><url><loc></loc></url><url><loc>relative</loc></url>",
            "<url><lastmod>2024-01-02T10:00:00+02:00</lastmod></url>",
            "<url>https://a.example/bare</url>",
            "<url><loc><![CDATA[https://a.example/c]]></loc></url>",
            "<url><!-- c --><loc>https://a.example/</loc></url>",
            "<url><loc>https://a.example/</loc><foo>x</foo></url>",
            "<url><loc>https://a.example/</loc ></url>",
            "<url><loc>https://a.example/</lastmod></url>",
            "<url ><loc>https://a.example/</loc></url>",
            "<url><loc>https://a.example/</loc><image:image><image:loc>https://a.example/i.png</image:loc></image:image></url>",
            "<url><loc>https://a.example/</loc>\u{c}</url>",
            "text<url><loc>https://a.example/</loc></url>",
            "<url><loc>https://A.example:80/./x</loc></url>",
        ];
        for case in cases {
            let doc = format!("{head}{case}\n{case}\n</urlset>\n");
            check(doc.as_bytes(), Default::default());
            // Cut anywhere: truncated files must fail the same way.
            for cut in [doc.len() - 3, doc.len() - 12, doc.len() / 2] {
                check(&doc.as_bytes()[..cut], Default::default());
            }
        }
        let doc = format!("{head}<url><loc>https://a.example/\u{ff}</loc></url></urlset>");
        let mut bytes = doc.into_bytes();
        let at = bytes.iter().position(|&b| b == 0xc3).unwrap();
        bytes[at + 1] = b'('; // invalid UTF-8
        check(&bytes, Default::default());
    }

    #[test]
    fn same_under_tight_limits() {
        let doc = "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
                   <url><loc>https://a.example/long/path?x=1&amp;y=2</loc><lastmod>2024-01-02</lastmod></url>\n\
                   <url><loc>https://a.example/2</loc></url>\n</urlset>";
        for (max_bytes, max_loc, max_value, max_depth, max_findings) in [
            (120, 65_536, 1 << 20, 64, 10),
            (10_000, 20, 1 << 20, 64, 10),
            (10_000, 65_536, 25, 64, 10),
            (10_000, 65_536, 1 << 20, 2, 10),
            (10_000, 65_536, 1 << 20, 3, 0),
        ] {
            let limits = crate::read::Limits {
                max_bytes,
                max_loc_bytes: max_loc,
                max_value_bytes: max_value,
                max_depth,
                max_findings,
                ..Default::default()
            };
            check(doc.as_bytes(), limits);
        }
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("<url>".to_string()),
            Just("</url>".to_string()),
            Just("<loc>".to_string()),
            Just("</loc>".to_string()),
            Just("<lastmod>".to_string()),
            Just("</lastmod>".to_string()),
            Just("<changefreq>".to_string()),
            Just("</changefreq>".to_string()),
            Just("<priority>".to_string()),
            Just("</priority>".to_string()),
            Just("https://a.example/p?q=1&amp;r".to_string()),
            Just("2024-02-29T10:00:00+01:00".to_string()),
            Just("weekly".to_string()),
            Just("0.7".to_string()),
            Just("&lt;".to_string()),
            Just("&".to_string()),
            Just("&x;".to_string()),
            Just("é".to_string()),
            Just("<!--c-->".to_string()),
            Just("<x>".to_string()),
            Just("</x>".to_string()),
            Just("<news:news/>".to_string()),
            Just("<url/>".to_string()),
            "[ \\t\\r\\n]{0,3}",
            "[a-z:/.0-9]{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]
        #[test]
        fn fast_path_agrees(pieces in proptest::collection::vec(piece(), 0..40), close in any::<bool>()) {
            let mut doc = String::from("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
            for p in &pieces {
                doc.push_str(p);
            }
            if close {
                doc.push_str("</urlset>");
            }
            check(doc.as_bytes(), Default::default());
        }

        #[test]
        fn fast_path_agrees_on_good_entries(
            entries in proptest::collection::vec(
                (piece(), "[ \\n]{0,2}", proptest::option::of("[0-9T:+-]{0,12}"), any::<bool>()),
                1..20,
            )
        ) {
            let mut doc = String::from("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">");
            for (loc, ws, lastmod, prio) in &entries {
                doc.push_str(&format!("{ws}<url>{ws}<loc>https://a.example/{loc}</loc>"));
                if let Some(l) = lastmod {
                    doc.push_str(&format!("{ws}<lastmod>{l}</lastmod>"));
                }
                if *prio {
                    doc.push_str("<priority>0.3</priority>");
                }
                doc.push_str(&format!("{ws}</url>"));
            }
            doc.push_str("</urlset>");
            check(doc.as_bytes(), Default::default());
        }
    }
}
