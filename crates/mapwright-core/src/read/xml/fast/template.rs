//! The layout of the last usual entry, to read the next one by: a sitemap's entries are
//! written by one program, so the markup between their values (`</loc>`, the indentation,
//! `<lastmod>`, ...) is the same bytes in every entry. [`Template::learn`] keeps those bytes
//! (the separators) from an entry [`super::usual::scan_usual`] read, with the newlines in
//! each; [`scan_template`] then reads an entry as the separators compared a machine word at
//! a time and the values between them read by the same readers, instead of its white space
//! and tags taken a byte at a time. Bytes equal to a separator are read by `scan_usual`
//! exactly as they were when it was learnt (white space, then the same tags), so an entry
//! this reads is the entry `scan_usual` reads; anything else (another layout, a value a
//! reader refuses, a limit, the buffer's end) is `false`, and `scan_usual` reads it (and
//! learns its layout).

use super::usual::Usual;
use super::{Field, Scanned, priority_xml};
use crate::MAX_LOC_LEN;
use crate::date::W3cDateTime;
use crate::loc::{LastOrigin, Loc};
use crate::model::ChangeFreq;
use crate::read::ahead::Lines;

/// The longest separator kept, four machine words (a longer one, deep indentation, is not
/// learnt: such entries are read by `scan_usual`).
const MAX_SEP: usize = 32;

/// The fields of most sitemaps' entries, in the protocol's order.
const ALL: [Option<Field>; 4] =
    [Some(Field::Loc), Some(Field::Lastmod), Some(Field::Changefreq), Some(Field::Priority)];

/// One separator: its bytes as four little-endian words (zero after its end), the bytes of
/// each word that are the separator's (a mask: the rest is the value after it), its length,
/// its newlines, and where its last line starts (after its last newline).
#[derive(Clone, Copy, Default)]
struct Sep {
    words: [u64; 4],
    masks: [u64; 4],
    len: usize,
    newlines: u32,
    line_start: usize,
}

/// The separators of the last usual entry: before its `loc`'s text (white space, `<url>`,
/// white space, `<loc>`), between each value and the next (an end tag, white space, a start
/// tag), and after the last value (its end tag, white space, `</url>`); and its fields in order.
#[derive(Default)]
pub(super) struct Template {
    seps: [Sep; 5],
    fields: [Option<Field>; 4],
    /// Fields (1 to 4, the `loc` first); 0 while there is no layout.
    n: usize,
    /// Where `<url>` is in the first separator.
    url: usize,
    /// The newlines before the `loc`'s text (the first separator's, which starts the entry).
    loc_lines: Lines,
    /// All the separators' newlines, and the last separator with any (`None`: none has):
    /// counted once when learnt, not at each separator of each entry read.
    newlines: u32,
    last_nl: Option<usize>,
    /// All four fields in the protocol's order (see [`scan_template`]).
    all: bool,
}

impl Template {
    /// Keeps the layout of the entry `scan_usual` read in `b`: `<url>` at `url`, the fields and
    /// their texts (`loc` first), its end at `end`. A layout with a separator shorter than a
    /// machine word or longer than [`MAX_SEP`] is not kept.
    pub(super) fn learn(&mut self, b: &[u8], url: usize, texts: &[(Field, usize, usize)], end: usize) {
        self.n = 0;
        let mut from = 0;
        for k in 0..=texts.len() {
            let to = texts.get(k).map_or(end, |t| t.1);
            let Some(bytes) = b.get(from..to) else { return };
            let len = bytes.len();
            if !(8..=MAX_SEP).contains(&len) {
                return;
            }
            let mut padded = [0u8; MAX_SEP];
            padded[..len].copy_from_slice(bytes);
            let mut sep = Sep {
                len,
                newlines: bytecount::count(bytes, b'\n') as u32,
                line_start: bytes.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1),
                ..Sep::default()
            };
            for (w, chunk) in padded.chunks_exact(8).enumerate() {
                sep.words[w] = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
                let valid = len.saturating_sub(8 * w).min(8);
                sep.masks[w] = if valid == 8 { u64::MAX } else { (1u64 << (8 * valid)) - 1 };
            }
            self.seps[k] = sep;
            if let Some(t) = texts.get(k) {
                self.fields[k] = Some(t.0);
                from = t.2;
            }
        }
        self.url = url;
        self.n = texts.len();
        let seps = &self.seps[..=self.n];
        self.newlines = seps.iter().map(|s| s.newlines).sum();
        self.all = self.n == 4 && self.fields == ALL;
        self.last_nl = seps.iter().rposition(|s| s.newlines > 0);
        self.loc_lines =
            Lines { n: seps[0].newlines, start: if seps[0].newlines > 0 { seps[0].line_start } else { 0 } };
    }

    /// Whether `b[pos..]` starts with separator `k`; if so, the position after it is returned
    /// (its newlines are the template's, counted when it was learnt). Four words compared
    /// under their masks, without a loop (the bytes after the separator must be buffered: near
    /// the buffer's end this is `None`, and `scan_usual` reads the entry).
    #[inline(always)]
    fn take(&self, b: &[u8], pos: usize, k: usize) -> Option<usize> {
        let sep = &self.seps[k];
        let have: &[u8; MAX_SEP] = b.get(pos..pos + MAX_SEP)?.try_into().ok()?;
        let word = |w: usize| {
            let bytes: [u8; 8] = have[8 * w..8 * w + 8].try_into().unwrap_or_default();
            (u64::from_le_bytes(bytes) ^ sep.words[w]) & sep.masks[w]
        };
        if word(0) | word(1) | word(2) | word(3) != 0 {
            return None;
        }
        Some(pos + sep.len)
    }
}

/// Reads an entry laid out as the last usual one (see the module) at the start of `b` into
/// `out`'s `url`, `loc_at`, `loc`, `loc_lines`, `end`, `lines` and `usual`, as
/// [`super::usual::scan_usual`] would; `limits` are the `loc`'s and any value's byte limits.
#[inline(always)]
pub(super) fn scan_template(b: &[u8], out: &mut Scanned, last: &mut LastOrigin, limits: (usize, usize)) -> bool {
    let t = &out.template;
    if t.n == 0 {
        return false;
    }
    let (max_loc, max_value) = limits;
    let Some(ts) = t.take(b, 0, 0) else {
        return false;
    };
    // Where each separator starts, for the line after the last newline.
    let mut at_sep = [0usize; 5];
    let Some(loc) = Loc::scan_xml(&b[ts..], last) else {
        return false;
    };
    if loc.len > max_value || loc.len > max_loc || loc.len >= MAX_LOC_LEN {
        return false;
    }
    let mut pos = ts + loc.len;
    // The values are read into `out` as they come (an entry the template does not read is
    // read again by `scan_usual`, which sets them all).
    let u = &mut out.usual;
    *u = Usual::default();
    // The layout of most sitemaps (all four fields in the protocol's order) without the loop
    // and the look at each field's kind.
    if t.all {
        let Some(p) = value(t, b, (1, ALL[1]), pos, &mut at_sep, u, max_value)
            .and_then(|p| value(t, b, (2, ALL[2]), p, &mut at_sep, u, max_value))
            .and_then(|p| value(t, b, (3, ALL[3]), p, &mut at_sep, u, max_value))
        else {
            return false;
        };
        pos = p;
    } else {
        for k in 1..t.n {
            let Some(p) = value(t, b, (k, t.fields[k]), pos, &mut at_sep, u, max_value) else {
                return false;
            };
            pos = p;
        }
    }
    at_sep[t.n] = pos;
    let Some(end) = t.take(b, pos, t.n) else {
        return false;
    };
    let lines = match t.last_nl {
        Some(k) => Lines { n: t.newlines, start: at_sep[k] + t.seps[k].line_start },
        None => Lines::default(),
    };
    out.url = t.url;
    out.loc_at = (ts - 5, ts);
    out.loc = loc;
    out.loc_lines = t.loc_lines;
    out.end = end;
    out.lines = lines;
    true
}

/// The value after separator `k` (of the template `t`, at `pos` in `b`) read as `field` into
/// `u`, and where it ends; where the separator starts is kept in `at_sep`.
#[inline(always)]
fn value(
    t: &Template,
    b: &[u8],
    (k, field): (usize, Option<Field>),
    pos: usize,
    at_sep: &mut [usize; 5],
    u: &mut Usual,
    max_value: usize,
) -> Option<usize> {
    at_sep[k] = pos;
    let at = t.take(b, pos, k)?;
    let text = &b[at..];
    let n = match field {
        Some(Field::Lastmod) => {
            let (v, n) = W3cDateTime::scan_xsd(text)?;
            u.lastmod = Some(v);
            n
        }
        Some(Field::Changefreq) => {
            let (c, n) = ChangeFreq::scan_xml(text)?;
            u.changefreq = Some(c);
            n
        }
        Some(Field::Priority) => {
            u.priority = Some(priority_xml(text)?);
            3
        }
        _ => return None,
    };
    (n <= max_value).then_some(at + n)
}

#[cfg(test)]
mod tests {
    use super::super::Scanned;
    use super::super::tests::real_entry;
    use super::super::usual::scan_usual;
    use super::scan_template;
    use crate::loc::LastOrigin;
    use proptest::prelude::*;

    /// What a scan put in `s`, as text.
    fn read(entry: &[u8], s: &Scanned) -> String {
        let loc = crate::loc::Loc::from_xml(&entry[s.loc_at.1..], &s.loc);
        let u = &s.usual;
        let ends = (s.url, s.loc_at, s.loc_lines.n, s.loc_lines.start, s.end, s.lines.n, s.lines.start);
        format!("{ends:?} {loc:?} {:?} {:?} {:?}", u.lastmod, u.changefreq, u.priority)
    }

    /// Reads `entries` one after another as the reader does (the layout of each usual entry
    /// kept for the next), checking that what the template reads `scan_usual` reads the same;
    /// the number of entries the template read.
    fn read_all(entries: &[&[u8]], limits: (usize, usize)) -> Result<usize, TestCaseError> {
        let mut s = Scanned::default();
        let mut last = LastOrigin::default();
        let mut by_template = 0;
        for &e in entries {
            let got = scan_template(e, &mut s, &mut last, limits).then(|| read(e, &s));
            // The general way, on its own state but for the layout.
            let mut g = Scanned::default();
            let want = scan_usual(e, &mut g, &mut LastOrigin::default(), limits).then(|| read(e, &g));
            if let Some(got) = got {
                prop_assert_eq!(Some(got), want.clone(), "{:?}", String::from_utf8_lossy(e));
                by_template += 1;
            }
            // As the reader does: the usual scan when the template does not read it.
            if want.is_some() {
                scan_usual(e, &mut s, &mut last, limits);
            }
        }
        Ok(by_template)
    }

    #[test]
    fn reads_entries_laid_out_alike() {
        // Without a changefreq, and with it (all four fields: the layout read without the loop).
        for cf in ["", "<changefreq>daily</changefreq>"] {
            laid_out_alike(|i: usize, indent: &str, nl: &str| {
                let cf = if cf.is_empty() { String::new() } else { format!("{indent}{cf}{nl}") };
                format!(
                    "{nl}<url>{nl}{indent}<loc>https://a.example/p-{i}?a=1&amp;b={i}</loc>{nl}{indent}<lastmod>2024-01-0{}</lastmod>{nl}\
                     {cf}{indent}<priority>0.{}</priority>{nl}</url>{nl}<url><loc>https://a.example/next</loc></url>",
                    1 + i % 9,
                    i % 10
                )
            });
        }
    }

    /// Entries made by `entry(i, indent, newline)` in four layouts: each read by the template but
    /// the first, within the limits only; another layout or a cut one left to the usual scan.
    fn laid_out_alike(entry: impl Fn(usize, &str, &str) -> String) {
        for (indent, nl) in [("  ", "\n"), ("", ""), ("\t", "\r\n"), ("    ", "\n")] {
            let entries: Vec<String> = (0..20).map(|i| entry(i, indent, nl)).collect();
            let bytes: Vec<&[u8]> = entries.iter().map(|e| e.as_bytes()).collect();
            // All but the first, whose layout is learnt.
            assert_eq!(read_all(&bytes, (65_536, 1 << 20)).unwrap(), 19, "{indent:?} {nl:?}");
            // Limits are the usual scan's.
            assert_eq!(read_all(&bytes, (20, 1 << 20)).unwrap(), 0);
            assert_eq!(read_all(&bytes, (65_536, 30)).unwrap(), 0);
        }
        // Another layout, or the buffer's end: the usual scan reads it (and learns it).
        let a = entry(1, "  ", "\n");
        let b = entry(2, "   ", "\n");
        let cut = &a[..a.find("</url>").unwrap() + 6];
        let got =
            read_all(&[a.as_bytes(), b.as_bytes(), cut.as_bytes(), b.as_bytes(), b.as_bytes()], (65_536, 1 << 20));
        assert_eq!(got.unwrap(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Entries as sitemaps write them, in any mix and cut anywhere: what the template
        /// reads, `scan_usual` reads the same.
        #[test]
        fn template_agrees_with_the_usual_scan(
            entries in proptest::collection::vec((real_entry(), any::<u16>()), 1..12),
            limits in prop_oneof![Just((65_536, 1 << 20)), Just((40, 1 << 20)), Just((65_536, 24))],
        ) {
            let texts: Vec<String> = entries.iter().map(|(e, _)| format!("{e}{e}")).collect();
            let mut bytes: Vec<&[u8]> = Vec::new();
            for (t, (_, cut)) in texts.iter().zip(&entries) {
                bytes.push(t.as_bytes());
                bytes.push(t.as_bytes());
                bytes.push(&t.as_bytes()[..usize::from(*cut) % (t.len() + 1)]);
            }
            read_all(&bytes, limits)?;
        }
    }
}
