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

use super::fields::parse_priority;
use super::*;
use crate::date::W3cDateTime;
use crate::loc::{LastOrigin, XmlLoc};
use crate::read::ahead::Lines;
use crate::word::word;

mod ahead;
mod template;
mod usual;

pub(crate) use ahead::scan_ahead;
use ahead::usual_at;

/// One field of a recognised entry: its start tag and its text, as indices into the scan.
#[derive(Clone, Copy)]
struct Span {
    field: Field,
    tag: usize,
    text: (usize, usize),
    /// The text holds references (else it is one run, appended whole).
    refs: bool,
    /// The text's length with its references decoded.
    decoded: usize,
}

/// A recognised `<url>`: where it starts, its fields in document order, where it ends, and
/// the newlines in the white space between its tags before its `<loc>` and in all of it; and
/// the values the scan read as it went (see [`scan`]). Filled in place (it is kept in the
/// reader's state): a scan writes no more than it must.
pub(super) struct Scanned {
    url: usize,
    fields: [Span; 4],
    n: usize,
    end: usize,
    loc_lines: Lines,
    lines: Lines,
    /// The fields present and those whose value the scan read (bits by `Field`): each of
    /// those needs no repair.
    seen: u8,
    read: u8,
    /// The longest text, and where the `<loc>` and its text start.
    longest: usize,
    loc_at: (usize, usize),
    loc: XmlLoc,
    lastmod: Option<W3cDateTime>,
    changefreq: ChangeFreq,
    priority: f32,
    /// The values of a usual entry (see [`usual`]).
    usual: usual::Usual,
    /// The layout of the last usual entry (see [`template`]).
    template: template::Template,
}

impl Default for Scanned {
    fn default() -> Self {
        let blank = Span { field: Field::Loc, tag: 0, text: (0, 0), refs: false, decoded: 0 };
        Scanned {
            url: 0,
            fields: [blank; 4],
            n: 0,
            end: 0,
            loc_lines: Lines::default(),
            lines: Lines::default(),
            seen: 0,
            read: 0,
            longest: 0,
            loc_at: (0, 0),
            loc: XmlLoc::default(),
            lastmod: None,
            changefreq: ChangeFreq::Never,
            priority: 0.0,
            usual: Default::default(),
            template: Default::default(),
        }
    }
}

/// Skips white space from `b[i]`, counting its newlines into `lines`. The usual run, a
/// newline and an indentation of spaces before the next tag, is taken first with the fewest
/// tests; the general loop sees the rest (the four white-space bytes in one bit test, not a
/// `match`, which became a jump table per byte).
#[inline(always)]
fn skip_ws(b: &[u8], mut i: usize, lines: &mut Lines) -> usize {
    const WS: u64 = 1 << b' ' | 1 << b'\n' | 1 << b'\t' | 1 << b'\r';
    if b.get(i) == Some(&b'\n') {
        i += 1;
        lines.n += 1;
        lines.start = i;
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
    }
    while let Some(&c) = b.get(i) {
        if c > b' ' || WS >> c & 1 == 0 {
            break;
        }
        i += 1;
        if c == b'\n' {
            lines.n += 1;
            lines.start = i;
        }
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
fn plain_text(b: &[u8], from: usize, long: bool) -> Result<(usize, bool, usize), usize> {
    let mut i = from;
    let mut refs = false;
    let mut decoded = 0;
    let end = loop {
        // A `loc` is long enough for a vector search; the other values are a few bytes, for
        // which its set-up costs more than a plain loop.
        let found = if long { memchr::memchr2(b'<', b'&', &b[i..]) } else { lt_or_amp(&b[i..]) };
        let Some(at) = found else {
            return Err(b.len());
        };
        let at = i + at;
        decoded += at - i;
        if b[at] == b'<' {
            break at;
        }
        // quick-xml ends a reference at the first `;`, `&` or `<`; names are short.
        let name_start = at + 1;
        let Some(n) = b[name_start..].iter().take(8).position(|&c| matches!(c, b';' | b'&' | b'<')) else {
            return Err(name_start);
        };
        let name_end = name_start + n;
        if b[name_end] != b';' || predefined(&b[name_start..name_end]).is_none() {
            return Err(name_end);
        }
        refs = true;
        decoded += 1;
        i = name_end + 1;
    };
    Ok((end, refs, decoded))
}

/// The first `<` or `&` in `b`, eight bytes at a time in a machine word (a value of a few
/// bytes: a vector search's set-up costs more than the search). In each word, a byte equal to
/// the one looked for becomes zero after the exclusive or, and the classic zero-byte test sets
/// its high bit; bits above a true zero byte may be set too, never below, so the lowest set bit
/// of either test is the first match.
#[inline]
fn lt_or_amp(b: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while let Some(x) = word(b, i) {
        let (lt, amp) = (x ^ (LO * u64::from(b'<')), x ^ (LO * u64::from(b'&')));
        let hit = ((lt.wrapping_sub(LO) & !lt) | (amp.wrapping_sub(LO) & !amp)) & HI;
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c == b'<' || c == b'&').map(|k| i + k)
}

/// The byte one of XML's five predefined entities stands for, by name (quick-xml's
/// `resolve_xml_entity`, on bytes).
#[inline]
fn predefined(name: &[u8]) -> Option<u8> {
    match name {
        b"amp" => Some(b'&'),
        b"lt" => Some(b'<'),
        b"gt" => Some(b'>'),
        b"apos" => Some(b'\''),
        b"quot" => Some(b'"'),
        _ => None,
    }
}

/// Why [`scan`] did not recognise an entry.
#[derive(Debug, PartialEq, Eq)]
enum Miss {
    /// The buffered bytes end before the entry does: the next one is likely plain again.
    Short,
    /// Something else than a plain entry.
    Shape,
}

/// Recognises one whole plain `<url>` (after white space) at the start of `b`, into `out`.
/// Each value is first read in place by its own reader, which takes the text only when it
/// needs no repair and a `<` ends it (a `loc` in the normal form, a `lastmod` the XSD accepts,
/// an exact `changefreq`, a `priority` `0.0` to `1.0`): its end, its check and its value in
/// one pass. Any other text is only delimited here, and read by [`clean_fields`] or the field
/// code.
fn scan(b: &[u8], out: &mut Scanned, last: &mut LastOrigin) -> Result<(), Miss> {
    // Where a test failed: within a tag's length of the end, more bytes might have passed it.
    let miss = |at: usize| if b.len() - at.min(b.len()) < 16 { Miss::Short } else { Miss::Shape };
    let mut lines = Lines::default();
    let url = skip_ws(b, 0, &mut lines);
    if !starts(&b[url..], b"<url>") {
        return Err(miss(url));
    }
    out.url = url;
    out.n = 0;
    out.read = 0;
    out.longest = 0;
    out.loc_lines = lines;
    let mut seen = 0u8;
    let mut i = url + 5;
    loop {
        i = skip_ws(b, i, &mut lines);
        let rest = &b[i..];
        if starts(rest, b"</url>") {
            out.end = i + 6;
            out.lines = lines;
            out.seen = seen;
            return Ok(());
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
        let text = &b[ts..];
        let read = match field {
            Field::Loc => {
                out.loc_lines = lines;
                out.loc_at = (i, ts);
                Loc::scan_xml(text, last).map(|x| {
                    out.loc = x;
                    (x.len, x.has_refs(), x.decoded_len())
                })
            }
            Field::Lastmod => W3cDateTime::scan_xsd(text).filter(|&(_, n)| text.get(n) == Some(&b'<')).map(|(v, n)| {
                out.lastmod = Some(v);
                (n, false, n)
            }),
            Field::Changefreq => ChangeFreq::scan_xml(text).map(|(c, n)| {
                out.changefreq = c;
                (n, false, n)
            }),
            Field::Priority => priority_xml(text).map(|p| {
                out.priority = p;
                (3, false, 3)
            }),
        };
        let (te, refs, decoded) = match read {
            Some((len, refs, decoded)) => {
                out.read |= bit;
                (ts + len, refs, decoded)
            }
            None => plain_text(b, ts, field == Field::Loc).map_err(miss)?,
        };
        if !end_tag(&b[te..], field) {
            return Err(miss(te));
        }
        out.longest = out.longest.max(te - ts);
        out.fields[out.n] = Span { field, tag: i, text: (ts, te), refs, decoded };
        out.n += 1;
        i = te + open + 1;
    }
}

/// A priority `0.0` to `1.0` written with one decimal (`0.5`), ended by a `<` (see [`scan`]):
/// what [`priority_tenths`] reads it as.
#[inline(always)]
fn priority_xml(b: &[u8]) -> Option<f32> {
    match *b.get(..4)? {
        [b'0', b'.', d, b'<'] if d.is_ascii_digit() => Some(f32::from(d - b'0') / 10.0),
        [b'1', b'.', b'0', b'<'] => Some(1.0),
        _ => None,
    }
}

/// The values of a recognised entry when every field reads without a finding (a `loc` already
/// in its normal form, without white space around it, under every length limit; a `lastmod`
/// the XSD accepts; an exact `changefreq`; a `priority` from 0.0 to 1.0), else `None`, and
/// the entry goes the way of the field code, which says what is wrong with it. Every such
/// value is ASCII (each reader accepts only ASCII bytes), the markup around it too, so the
/// values are read as bytes, and only the `loc`, which becomes a string, is checked as UTF-8.
fn clean_fields(b: &[u8], s: &Scanned, limits: (usize, usize)) -> Option<(Loc, Clean)> {
    let (max_loc, max_value) = limits;
    let read = |f: Field| s.read & (1 << f as u8) != 0;
    if s.read == s.seen && read(Field::Loc) && s.longest <= max_value && s.loc.len <= max_loc && s.loc.len < MAX_LOC_LEN
    {
        // The usual entry: every value read by the scan, under every limit.
        let loc = Loc::from_xml(&b[s.loc_at.1..], &s.loc)?;
        let clean = Clean {
            loc_tag: s.loc_at.0,
            lastmod: if read(Field::Lastmod) { s.lastmod.map(Lastmod::W3c) } else { None },
            changefreq: read(Field::Changefreq).then_some(s.changefreq),
            priority: read(Field::Priority).then_some(s.priority),
            lines_exact: true,
        };
        return Some((loc, clean));
    }
    let mut loc = None;
    let mut out = Clean { loc_tag: 0, lastmod: None, changefreq: None, priority: None, lines_exact: true };
    for span in &s.fields[..s.n] {
        let raw = &b[span.text.0..span.text.1];
        if raw.len() > max_value {
            return None;
        }
        let read = read(span.field);
        match span.field {
            Field::Loc => {
                // The loc's own text: trimmed by the field code with a finding, so none here.
                if raw.len() > max_loc || raw.len() >= MAX_LOC_LEN {
                    return None;
                }
                loc = Some(if read {
                    Loc::from_xml(&b[span.text.0..], &s.loc)?
                } else if span.refs {
                    Loc::parse_normal_bytes(decode_predefined(raw, span.decoded))?
                } else {
                    Loc::parse_normal(raw)?
                });
                out.loc_tag = span.tag;
            }
            // Read by the scan, exactly.
            Field::Lastmod if read => out.lastmod = s.lastmod.map(Lastmod::W3c),
            Field::Changefreq if read => out.changefreq = Some(s.changefreq),
            Field::Priority if read => out.priority = Some(s.priority),
            // Entities in the other fields are rare: the field code reads them.
            _ if span.refs => return None,
            _ => {
                let value = raw.trim_ascii();
                // White space around a value may hold newlines the scan did not count.
                out.lines_exact &= value.len() == raw.len();
                match span.field {
                    Field::Lastmod => out.lastmod = Some(Lastmod::W3c(W3cDateTime::parse_bytes(value)?)),
                    Field::Changefreq => out.changefreq = Some(ChangeFreq::parse_bytes(value)?),
                    _ => out.priority = Some(priority_tenths(value)?),
                }
            }
        }
    }
    Some((loc?, out))
}

/// A clean entry's values but its `loc` (see [`clean_fields`]).
pub(super) struct Clean {
    loc_tag: usize,
    lastmod: Option<Lastmod>,
    changefreq: Option<ChangeFreq>,
    priority: Option<f32>,
    /// The scan counted every newline of the entry (none in a value's white space).
    lines_exact: bool,
}

/// `text` with its references (predefined entities only, as `plain_text` saw) decoded, in a
/// vector of exactly `len` bytes, its decoded length.
fn decode_predefined(text: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut rest = text;
    while let Some(a) = memchr::memchr(b'&', rest) {
        out.extend_from_slice(&rest[..a]);
        let Some(semi) = rest[a..].iter().position(|&c| c == b';').map(|n| a + n) else {
            break;
        };
        // `plain_text` checked the name; should that ever not hold, the reference stays as
        // written (and the URL is refused).
        match predefined(&rest[a + 1..semi]) {
            Some(c) => out.push(c),
            None => out.extend_from_slice(&rest[a..=semi]),
        }
        rest = &rest[semi + 1..];
    }
    out.extend_from_slice(rest);
    out
}

/// The common priorities, `0.0` to `0.9` and `1.0` (also `1`, `0`, `.5` are left to
/// [`parse_priority`]), as it reads them: `n / 10` is the `f32` nearest to `0.n`, as parsing is.
fn priority_tenths(b: &[u8]) -> Option<f32> {
    match *b {
        [b'0', b'.', d] if d.is_ascii_digit() => Some(f32::from(d - b'0') / 10.0),
        [b'1', b'.', b'0'] => Some(1.0),
        _ => parse_priority(std::str::from_utf8(b).ok()?).ok(),
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

    /// The entry of a scan whose values need no repair (`self.scanned` its spans): what the
    /// field code would have done, minus its findings (there are none): the entry kept from
    /// its start for positions, its position at its `<loc>`, its bytes consumed.
    #[inline(always)]
    pub(super) fn take_clean(&mut self, xr: &mut Reader<Tracked<'_>>, loc: Loc, c: Clean) -> Entry {
        let s = &self.scanned;
        // Offsets as quick-xml would give them (its offset 0 is at `origin`).
        let from = self.origin + xr.buffer_position();
        let t = xr.get_mut();
        t.keep_from(from + s.url as u64);
        // The position of its `<loc>` from the newlines the scan counted, when lines are
        // counted up to the entry (after an entry read this way, they are); else counted
        // here, then on to the entry's end, so the next entry is in step again.
        let scanned = c.lines_exact.then(|| t.scanned_lines(from, (c.loc_tag, s.loc_lines), (s.end, s.lines)));
        self.entry_pos = match scanned.flatten() {
            Some(p) => p,
            None => {
                let p = t.position_at(from + c.loc_tag as u64);
                t.position_at(from + s.end as u64);
                p
            }
        };
        std::io::BufRead::consume(t, s.end);
        self.origin += s.end as u64;
        #[cfg(test)]
        {
            self.clean_entries += 1;
        }
        Entry::Url(UrlEntry {
            lastmod: c.lastmod,
            changefreq: c.changefreq,
            priority: c.priority,
            ..UrlEntry::new(loc)
        })
    }

    /// The usual entry (see [`usual`]) at the reader's position, read by the template or the
    /// usual scan, its `loc` made: what the general scan and `clean_fields` would give it, for
    /// [`State::take_clean`]. Nothing is consumed; `None` leaves the entry to
    /// [`State::fast_entry`]. Apart from it so that the reader builds the usual entry straight
    /// in its return value, not in a temporary copied there (~200 bytes).
    /// The entry may have been read already, by the worker thread (`read/ahead.rs`): it is
    /// then taken as it is.
    #[inline(always)]
    pub(super) fn fast_usual(&mut self, xr: &mut Reader<Tracked<'_>>) -> Option<(Loc, Clean)> {
        if let Some(m) = xr.get_mut().take_made() {
            return Some(self.made(m));
        }
        let b = xr.get_ref().buffered();
        let s = &mut self.scanned;
        let loc = usual_at(b, s, &mut self.last_origin, (self.max_loc, self.max_value))?;
        self.fast_backoff = 0;
        let u = &s.usual;
        let c = Clean {
            loc_tag: s.loc_at.0,
            lastmod: u.lastmod.map(Lastmod::W3c),
            changefreq: u.changefreq,
            priority: u.priority,
            lines_exact: true,
        };
        Some((loc, c))
    }

    /// Reads the next entry on the fast path, [`State::fast_usual`] having not read it
    /// (`Some(None)`: an entry without a usable `loc`, skipped with its findings), or returns
    /// `None` having changed nothing. An entry, not a `Step`, so that it is built where the
    /// reader returns it (one copy of ~200 bytes less).
    #[inline(always)]
    pub(super) fn fast_entry(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        sink: &mut FindingSink<'_>,
    ) -> Option<Option<Entry>> {
        let b = xr.get_ref().buffered();
        let limits = (self.max_loc, self.max_value);
        let s = &mut self.scanned;
        match scan(b, s, &mut self.last_origin) {
            Ok(()) => {}
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
        // Offsets as quick-xml would give them (its offset 0 is at `origin`).
        let at = xr.buffer_position();
        if let Some((loc, c)) = clean_fields(b, s, limits) {
            return Some(Some(self.take_clean(xr, loc, c)));
        }
        // The scan's spans, out of the state the field code borrows (this way is rare).
        let (url, end, fields) = (s.url, s.end, s.fields);
        let fields = &fields[..s.n];
        let b = xr.get_ref().buffered();
        // One UTF-8 check for the whole entry: its markup is ASCII, so this is each text's check.
        // The entry is copied (a few hundred bytes) so that the fields' code may borrow the
        // reader while it reads the texts.
        let whole = std::str::from_utf8(&b[..end]).ok()?;
        let mut copy = std::mem::take(&mut self.scratch);
        copy.clear();
        copy.push_str(whole);
        self.begin_entry(xr, at + url as u64, Role::Url);
        for span in fields {
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
        std::io::BufRead::consume(xr.get_mut(), end);
        self.origin += end as u64;
        Some(match step {
            Step::Entry(e) => Some(e),
            _ => None,
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
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

    /// After the end or an error every further call gives `Ok(None)` (the reader learns that
    /// a step gave no entry at the next call), on both ways, however the file ends.
    #[test]
    fn after_the_end_or_an_error_every_call_gives_none() {
        let head = "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
        let e = "<url><loc>https://a.example/1</loc></url>\n";
        for tail in [
            "</urlset>\n",
            "",
            "<url><loc>https://a.example/2</loc>",
            "<url><loc>https://a.example/2</loc><lastmod>2024",
            "<url><loc>https://a.example/2</loc></lastmod></url></urlset>",
            "</urlset><url><loc>https://a.example/3</loc></url>",
        ] {
            let doc = format!("{head}{e}{e}{tail}");
            let calls = |fast: bool| {
                let mut r = SitemapReader::new(doc.as_bytes(), ReadOptions::default()).unwrap();
                r.set_fast_path(fast);
                (0..8)
                    .map(|_| match r.next_entry() {
                        Ok(Some(_)) => 'e',
                        Ok(None) => 'n',
                        Err(_) => 'x',
                    })
                    .collect::<String>()
            };
            let got = calls(true);
            assert_eq!(got, calls(false), "{tail:?}");
            let rest = got.trim_start_matches('e');
            let rest = rest.strip_prefix('x').unwrap_or(rest);
            assert!(!rest.is_empty() && rest.chars().all(|c| c == 'n'), "{tail:?}: {got}");
        }
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

    /// What the callers set (a document URL: `read --url`, `discover`, the service, the Python
    /// package; their limits) leaves the fast path on: every entry of a plain sitemap is read
    /// without the field code, in the usual layouts.
    #[test]
    fn every_caller_takes_the_fast_path() {
        for (indent, newline) in [("  ", "\n"), ("", ""), ("\t", "\r\n"), ("    ", "\n")] {
            let mut doc = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>{newline}<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{newline}"
            );
            for i in 0..500 {
                let lastmod = [
                    "2024-01-02",
                    "2024-01-02T10:00:00+00:00",
                    "2024-01-02T10:00:00Z",
                    "2024-01-02T10:00:00.123-05:30",
                ][i % 4];
                doc.push_str(&format!(
                    "<url>{newline}{indent}<loc>https://www.example.com/c-{i}/p?id={i}&amp;ref=x</loc>{newline}{indent}<lastmod>{lastmod}</lastmod>{newline}\
                     {indent}<changefreq>weekly</changefreq>{newline}{indent}<priority>0.{}</priority>{newline}</url>{newline}",
                    i % 10
                ));
            }
            doc.push_str("</urlset>\n");
            let limits = crate::read::Limits { max_bytes: 1 << 30, max_pages: 10, ..Default::default() };
            for (url, limits) in [(None, Default::default()), (Some("https://www.example.com/sitemap.xml"), limits)] {
                let mut r = SitemapReader::new(doc.as_bytes(), ReadOptions { limits }).unwrap();
                if let Some(u) = url {
                    r.set_document_url(u);
                }
                let n = r.by_ref().collect::<Result<Vec<_>, _>>().unwrap().len();
                assert_eq!((n, r.clean_entries()), (500, 500), "{indent:?} {newline:?} {url:?}");
            }
        }
    }

    #[test]
    fn word_search_finds_the_first_lt_or_amp() {
        let mut cases: Vec<Vec<u8>> =
            vec![b"".to_vec(), b"abc".to_vec(), b"2024-01-02T10:00:00+00:00</lastmod>".to_vec()];
        // Every position in words of every length, with the bytes around the one looked for
        // chosen to trip a careless zero-byte test (0x3b/0x3d next to '<', 0x25/0x27 next to '&').
        for len in 0..20 {
            for at in 0..len {
                for (hit, near) in [(b'<', [0x3b, 0x3d, 0x01]), (b'&', [0x25, 0x27, 0x80])] {
                    for n in near {
                        let mut v = vec![n; len];
                        v[at] = hit;
                        cases.push(v);
                    }
                }
            }
        }
        for c in cases {
            let want = c.iter().position(|&x| x == b'<' || x == b'&');
            assert_eq!(super::lt_or_amp(&c), want, "{c:?}");
        }
    }

    #[test]
    fn clean_readers_agree_with_the_field_code() {
        use super::{ChangeFreq, parse_priority, priority_tenths};
        for w in ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never", "Daily", "dail", "dailyx"] {
            assert_eq!(ChangeFreq::parse_bytes(w.as_bytes()), ChangeFreq::parse(w), "{w}");
        }
        for w in ["", "a", "nevers", "NEVER", "hourlx", "weekl y"] {
            assert_eq!(ChangeFreq::parse_bytes(w.as_bytes()), None, "{w}");
        }
        // Read in the XML: the word and the `<` after it, nothing else.
        for w in
            ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never", "Daily", "dail", "dailyx", "nevers"]
        {
            for tail in ["<", "</changefreq>", "x</changefreq>", " <", "", "<\n\n"] {
                let xml = format!("{w}{tail}");
                let want = ChangeFreq::parse(w).filter(|_| tail.starts_with('<') && xml.len() >= 8);
                assert_eq!(ChangeFreq::scan_xml(xml.as_bytes()), want.map(|c| (c, w.len())), "{xml:?}");
            }
        }
        for text in ["0.0<", "0.5</priority>", "1.0<", "1.0", "0.55<", "1<", ".5<", "0.a<", "2.0<"] {
            let want = text.split_once('<').and_then(|(v, _)| priority_tenths(v.as_bytes()));
            let got = super::priority_xml(text.as_bytes());
            assert!(got.is_none() || got == want, "{text}");
            assert_eq!(got.is_some(), ["0.0<", "0.5</priority>", "1.0<"].contains(&text), "{text}");
        }
        let mut cases: Vec<String> = (0..=9).flat_map(|a| (0..=9).map(move |b| format!("{a}.{b}"))).collect();
        cases.extend(["1", "0", ".5", "0.", "0.55", "1.00", "-0.1", "0,5", "", "x.5"].map(String::from));
        for c in cases {
            assert_eq!(priority_tenths(c.as_bytes()), parse_priority(&c).ok(), "{c}");
        }
    }

    /// The clean path is the one taken by an ordinary entry (else the comparisons below would
    /// test the field code against itself), and not by one with something to say about it.
    #[test]
    fn ordinary_entries_take_the_clean_path() {
        let clean = |entry: &str| {
            let b = entry.as_bytes();
            let mut s = super::Scanned::default();
            super::scan(b, &mut s, &mut Default::default()).expect("a plain entry");
            super::clean_fields(b, &s, (65_536, 1 << 20))
                .map(|(loc, c)| (loc.written().to_string(), c.lastmod.map(|l| l.to_string()), c.changefreq, c.priority))
        };
        let got = clean(
            "\n<url>\n  <loc>https://www.example.com/a-1?id=1&amp;ref=x</loc>\n  <lastmod>2024-01-02T10:00:00.123+02:00</lastmod>\n  \
             <changefreq>weekly</changefreq>\n  <priority>0.3</priority>\n</url>\n",
        );
        let want = ("https://www.example.com/a-1?id=1&ref=x".to_string(), Some("2024-01-02T10:00:00.123+02:00".into()));
        let (loc, lastmod, cf, prio) = got.expect("clean");
        assert_eq!((loc, lastmod), want);
        assert_eq!((cf, prio), (Some(crate::model::ChangeFreq::Weekly), Some(0.3)));
        for entry in [
            "<url><loc> https://a.example/</loc></url>",
            "<url><loc>https://A.example/</loc></url>",
            "<url><loc>https://a.example/</loc><lastmod>2024-01</lastmod></url>",
            "<url><loc>https://a.example/</loc><changefreq>Daily</changefreq></url>",
            "<url><loc>https://a.example/</loc><priority>2</priority></url>",
            "<url><lastmod>2024-01-02</lastmod></url>",
        ] {
            assert!(clean(entry).is_none(), "{entry}");
        }
    }

    pub(super) fn piece() -> impl Strategy<Value = String> {
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

    /// Entries as sitemaps write them, most of them clean, some with something to repair.
    pub(super) fn real_entry() -> impl Strategy<Value = String> {
        let loc = prop_oneof![
            Just("https://www.example.com/category-1/blue-red-1?id=1&amp;ref=x"),
            Just("https://www.example.com/kategorie-2/%C3%BCber-gr%C3%B6%C3%9Fe-3?id=3&amp;ref=x"),
            Just("http://a.example:8080/a/b/"),
            Just("https://a.example/&lt;x&gt;"),
            Just("https://a.example/ü"),
            Just("https://A.example/./x"),
            Just(" https://a.example/trim "),
            Just("https://a.example/a&amp;&amp;b&quot;"),
        ];
        let lastmod = proptest::option::of(prop_oneof![
            Just("2024-01-02"),
            Just("2024-01-02T10:00:00+00:00"),
            Just("2024-01-02T10:00:00Z"),
            Just("2024-01-02T10:00:00.123-05:30"),
            Just(" 2024-01-02 "),
            Just("2024-01"),
            Just("2024-02-30"),
            Just("2024-01-02 10:00:00"),
        ]);
        let changefreq =
            proptest::option::of(prop_oneof![Just("weekly"), Just("never"), Just("Daily"), Just(" hourly")]);
        let priority = proptest::option::of(prop_oneof![
            Just("0.3"),
            Just("1.0"),
            Just("1"),
            Just(".5"),
            Just("1.5"),
            Just("0,5")
        ]);
        (loc, lastmod, changefreq, priority, "[ \\t\\r\\n]{0,3}").prop_map(|(loc, lastmod, cf, prio, ws)| {
            let mut e = format!("<url>{ws}<loc>{loc}</loc>{ws}");
            if let Some(l) = lastmod {
                e.push_str(&format!("<lastmod>{l}</lastmod>{ws}"));
            }
            if let Some(c) = cf {
                e.push_str(&format!("<changefreq>{c}</changefreq>{ws}"));
            }
            if let Some(p) = prio {
                e.push_str(&format!("<priority>{p}</priority>{ws}"));
            }
            e.push_str("</url>\n");
            e
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        #[test]
        fn fast_path_agrees_on_real_entries(entries in proptest::collection::vec(real_entry(), 1..30), cut in any::<u16>()) {
            let mut doc = String::from("<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
            for e in &entries {
                doc.push_str(e);
            }
            doc.push_str("</urlset>\n");
            check(doc.as_bytes(), Default::default());
            // And cut anywhere: a truncated file fails the same way.
            let at = usize::from(cut) % doc.len();
            check(&doc.as_bytes()[..at], Default::default());
        }
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
