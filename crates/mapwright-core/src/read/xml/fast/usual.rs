//! The usual entry in one straight pass: `<url>`, its `<loc>` first, then any of `<lastmod>`,
//! `<changefreq>`, `<priority>` (each at most once), every value one its own reader takes (see
//! [`super::scan`]), under every limit. That is almost every entry of a real sitemap, and what
//! [`super::scan`] followed by [`super::clean_fields`] would build from it without a finding;
//! this pass keeps no spans (they serve only the field code) and has one branch per field
//! instead of the general loop's bookkeeping, about half of the structure's instructions.
//! Anything else (another order, a text a reader refuses, a limit, an entry cut by the
//! buffer's end) is `false`, having decided nothing, and the entry is scanned the general way.

use super::{Field, Scanned, priority_xml, skip_ws, starts};
use crate::MAX_LOC_LEN;
use crate::date::W3cDateTime;
use crate::loc::{LastOrigin, Loc};
use crate::model::ChangeFreq;
use crate::read::ahead::Lines;

/// What a usual entry holds besides the fields [`Scanned`] keeps for every scan.
#[derive(Default)]
pub(super) struct Usual {
    pub(super) lastmod: Option<W3cDateTime>,
    pub(super) changefreq: Option<ChangeFreq>,
    pub(super) priority: Option<f32>,
}

/// Reads a usual entry (see the module) at the start of `b` (after white space) into `out`'s
/// `url`, `loc_at`, `loc`, `loc_lines`, `end`, `lines` and `usual`; `limits` are the `loc`'s and
/// any value's byte limits.
#[inline(always)]
pub(super) fn scan_usual(b: &[u8], out: &mut Scanned, last: &mut LastOrigin, limits: (usize, usize)) -> bool {
    let (max_loc, max_value) = limits;
    let mut lines = Lines::default();
    let url = skip_ws(b, 0, &mut lines);
    if !starts(&b[url..], b"<url>") {
        return false;
    }
    let tag = skip_ws(b, url + 5, &mut lines);
    if !starts(&b[tag..], b"<loc>") {
        return false;
    }
    let ts = tag + 5;
    let Some(loc) = Loc::scan_xml(&b[ts..], last) else {
        return false;
    };
    let te = ts + loc.len;
    if loc.len > max_value || loc.len > max_loc || loc.len >= MAX_LOC_LEN || !starts(&b[te..], b"</loc>") {
        return false;
    }
    out.url = url;
    out.loc_at = (tag, ts);
    out.loc = loc;
    out.loc_lines = lines;
    let u = &mut out.usual;
    *u = Usual::default();
    let mut seen = 1u8 << Field::Loc as u8;
    // Each field and its text, for the entry's layout (see `template`).
    let mut texts = [(Field::Loc, ts, te); 4];
    let mut n = 1;
    let mut i = te + 6;
    loop {
        i = skip_ws(b, i, &mut lines);
        let rest = &b[i..];
        let (bit, open, end) = match rest.get(1) {
            Some(b'l') if starts(rest, b"<lastmod>") => {
                let text = &rest[9..];
                let Some((v, n)) = W3cDateTime::scan_xsd(text) else {
                    return false;
                };
                if n > max_value || !starts(&text[n..], b"</lastmod>") {
                    return false;
                }
                u.lastmod = Some(v);
                (Field::Lastmod, 9, 9 + n + 10)
            }
            Some(b'c') if starts(rest, b"<changefreq>") => {
                let Some((c, n)) = ChangeFreq::scan_xml(&rest[12..]) else {
                    return false;
                };
                if n > max_value || !starts(&rest[12 + n..], b"</changefreq>") {
                    return false;
                }
                u.changefreq = Some(c);
                (Field::Changefreq, 12, 12 + n + 13)
            }
            Some(b'p') if starts(rest, b"<priority>") => {
                let Some(p) = priority_xml(&rest[10..]) else {
                    return false;
                };
                if 3 > max_value || !starts(&rest[13..], b"</priority>") {
                    return false;
                }
                u.priority = Some(p);
                (Field::Priority, 10, 10 + 3 + 11)
            }
            Some(b'/') if starts(rest, b"</url>") => {
                out.end = i + 6;
                out.lines = lines;
                out.template.learn(b, url, &texts[..n], i + 6);
                return true;
            }
            _ => return false,
        };
        let field = bit;
        let bit = 1u8 << bit as u8;
        if seen & bit != 0 {
            return false;
        }
        seen |= bit;
        // At most four fields: a fifth repeats one, refused above.
        if let Some(t) = texts.get_mut(n) {
            // The text ends before its end tag, one byte longer than its start tag.
            *t = (field, i + open, i + end - (open + 1));
        }
        n += 1;
        i += end;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{piece, real_entry};
    use super::super::{Scanned, clean_fields, scan};
    use super::scan_usual;
    use proptest::prelude::*;

    /// What the general scan and `clean_fields` make of `entry`, as text, when it needs no
    /// repair: the entry's bounds, its `loc` and where it is, the values; and whether the
    /// scan's readers took every value.
    fn general(entry: &[u8], limits: (usize, usize)) -> Option<(String, bool)> {
        let mut s = Scanned::default();
        scan(entry, &mut s, &mut Default::default()).ok()?;
        let (loc, c) = clean_fields(entry, &s, limits)?;
        let ends = (s.url, c.loc_tag, s.loc_lines.n, s.loc_lines.start, s.end, s.lines.n, s.lines.start);
        Some((format!("{ends:?} {loc:?} {:?} {:?} {:?}", c.lastmod, c.changefreq, c.priority), s.read == s.seen))
    }

    fn usual(entry: &[u8], limits: (usize, usize)) -> Option<String> {
        let mut s = Scanned::default();
        if !scan_usual(entry, &mut s, &mut Default::default(), limits) {
            return None;
        }
        let loc = crate::loc::Loc::from_xml(&entry[s.loc_at.1..], &s.loc)?;
        let u = &s.usual;
        let ends = (s.url, s.loc_at.0, s.loc_lines.n, s.loc_lines.start, s.end, s.lines.n, s.lines.start);
        let lastmod = u.lastmod.map(crate::date::Lastmod::W3c);
        Some(format!("{ends:?} {loc:?} {lastmod:?} {:?} {:?}", u.changefreq, u.priority))
    }

    #[test]
    fn reads_the_usual_entry_and_no_other() {
        let ok = "\n<url>\n  <loc>https://www.example.com/a-1?id=1&amp;ref=x</loc>\n  <lastmod>2024-01-02T10:00:00.123+02:00</lastmod>\n  \
                  <changefreq>weekly</changefreq>\n  <priority>0.3</priority>\n</url>\n";
        assert!(usual(ok.as_bytes(), (65_536, 1 << 20)).is_some());
        assert_eq!(usual(ok.as_bytes(), (65_536, 1 << 20)), general(ok.as_bytes(), (65_536, 1 << 20)).map(|g| g.0));
        for (entry, limits) in [
            // Not the usual shape, or a value to repair: the general way.
            ("<url><lastmod>2024-01-02</lastmod><loc>https://a.example/</loc></url>", (65_536, 1 << 20)),
            ("<url><loc>https://a.example/</loc><lastmod>2024-01</lastmod></url>", (65_536, 1 << 20)),
            (
                "<url><loc>https://a.example/</loc><priority>0.3</priority><priority>0.3</priority></url>",
                (65_536, 1 << 20),
            ),
            ("<url><loc>https://a.example/</loc></url", (65_536, 1 << 20)),
            // Limits.
            ("<url><loc>https://a.example/abc</loc></url>", (20, 1 << 20)),
            ("<url><loc>https://a.example/abc</loc></url>", (65_536, 20)),
            ("<url><loc>https://a.example/</loc><changefreq>monthly</changefreq></url>", (65_536, 6)),
        ] {
            assert_eq!(usual(entry.as_bytes(), limits), None, "{entry}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// Whatever the usual scan reads, the general scan reads the same; and it reads every
        /// entry the general scan reads without a repair, when its `loc` comes first.
        #[test]
        fn usual_agrees_with_the_general_scan(
            entry in real_entry(),
            pieces in proptest::collection::vec(piece(), 0..12),
            cut in any::<u16>(),
            limits in prop_oneof![Just((65_536, 1 << 20)), Just((40, 1 << 20)), Just((65_536, 24)), Just((65_536, 5))],
        ) {
            let noisy = format!("<url>{}</url>", pieces.concat());
            for e in [entry.as_str(), noisy.as_str()] {
                let b = e.as_bytes();
                for b in [b, &b[..usize::from(cut) % (b.len() + 1)]] {
                    let (u, g) = (usual(b, limits), general(b, limits));
                    if u.is_some() {
                        prop_assert_eq!(&u, &g.as_ref().map(|g| g.0.clone()), "{:?}", String::from_utf8_lossy(b));
                    }
                    let loc_first = e.trim_start().strip_prefix("<url>").is_some_and(|r| r.trim_start().starts_with("<loc>"));
                    if g.is_some_and(|g| g.1) && loc_first {
                        prop_assert!(u.is_some(), "not read: {:?}", String::from_utf8_lossy(b));
                    }
                }
            }
        }
    }
}
