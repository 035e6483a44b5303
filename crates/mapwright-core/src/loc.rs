//! `Loc`: an absolute http(s) URL, validated and normalised exactly as `url::Url` would,
//! at a fraction of its cost.
//!
//! Parsing every `<loc>` with `url::Url::parse` costs about 300 ns, more than tokenizing the
//! whole entry. Almost every real `loc` is already in the form `Url` would serialize it to,
//! so a single table-driven byte scan recognises that form (lower-case scheme and host, no
//! default port, no dot segments, only characters `Url` leaves alone) and keeps the string
//! as it is; anything else goes through `Url::parse`. A property test checks that whatever
//! the fast path accepts, `Url::parse` gives back byte for byte.

mod path;

use crate::word::word;
use path::scan_path;
use std::fmt;
use url::Url;

/// The string of bytes that are all ASCII, else `None`: how the reader's hot path makes a
/// `loc`'s string, whose scan accepts no other byte (so `None` never happens there).
///
/// Not `String::from_utf8`: a general UTF-8 decoder, it cost 110 instructions a `loc` of the
/// benchmark's (5.5 M of a 77.6 M read of 50,000 URLs, bench/read/RESULTS.md), where
/// [`all_ascii`] costs a fraction of that. No crate or stable std function turns ASCII bytes into a
/// `str` without decoding them again.
#[inline]
fn ascii_string(v: Vec<u8>) -> Option<Box<str>> {
    if !all_ascii(&v) {
        return None;
    }
    #[allow(unsafe_code)]
    // SAFETY: every byte is below 0x80 (checked just above), and a sequence of ASCII bytes is
    // valid UTF-8: each is a one-byte code point.
    let s = unsafe { String::from_utf8_unchecked(v) };
    Some(s.into_boxed_str())
}

/// Whether every byte is below 0x80: the OR of the bytes, eight at a time (the last eight
/// overlapping the ones before), then its top bits. std's `is_ascii` cost 62 instructions a
/// `loc` of the benchmark's.
#[inline]
fn all_ascii(b: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().unwrap_or([0x80; 8]));
    if b.len() < 8 {
        return b.iter().fold(0u8, |a, &x| a | x) < 0x80;
    }
    let blocks = b.chunks_exact(8);
    let acc = blocks.fold(word(&b[b.len() - 8..]), |acc, c| acc | word(c));
    acc & HIGH == 0
}

/// Why a `loc` text is not a usable URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocError {
    /// Empty after trimming.
    Empty,
    /// No scheme, or a relative reference.
    NotAbsolute,
    /// A scheme other than http or https.
    Scheme(String),
    /// `url` refused it; the reason.
    Invalid(String),
}

impl fmt::Display for LocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocError::Empty => f.write_str("empty URL"),
            LocError::NotAbsolute => f.write_str("not an absolute URL (no http:// or https://)"),
            LocError::Scheme(s) => write!(f, "scheme {s:?} is not http or https"),
            LocError::Invalid(why) => write!(f, "not a valid URL: {why}"),
        }
    }
}

/// An absolute `http`/`https` URL in the normalised form `url::Url` serializes to, which
/// scope, deduplication and comparison use ([`Loc::as_str`]; equality, hashing and order are
/// the normal form's), together with the text as the file wrote it ([`Loc::written`]), which
/// is what users see: joins with crawl or analytics data keyed by the URL as written must not
/// miss rows because a host was lowercased or a `/` added.
///
/// One allocation holds both: the normal form, then the written text when it differs (almost
/// never: the fast path's URLs are their own normal form), so the type stays 24 bytes.
#[derive(Clone)]
pub struct Loc {
    /// The normal form, followed by the written text when that differs.
    s: Box<str>,
    /// Byte index where the path starts (after the authority).
    path_start: u32,
    /// Length of the normal form in `s`.
    norm_len: u32,
}

impl PartialEq for Loc {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Loc {}

impl std::hash::Hash for Loc {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for Loc {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Loc {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// What [`Loc::parse`] had to change to make the text a URL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocRepairs {
    /// Non-ASCII characters, spaces or other characters were percent-encoded.
    pub escaped: bool,
    /// Case, default port, dot segments or an empty path were normalised.
    pub normalised: bool,
}

impl Loc {
    /// Parses an absolute http(s) URL (the caller trims whitespace first); `s` is kept as the
    /// written text.
    pub fn parse(s: &str) -> Result<Self, LocError> {
        Self::parse_with_repairs(s).map(|(loc, _)| loc)
    }

    /// Like [`Loc::parse`], also telling what had to be changed.
    pub fn parse_with_repairs(s: &str) -> Result<(Self, LocRepairs), LocError> {
        if let Some(path_start) = fast_path(s.as_bytes()) {
            let loc = Loc { s: s.into(), path_start: path_start as u32, norm_len: s.len() as u32 };
            return Ok((loc, LocRepairs::default()));
        }
        slow_path(s)
    }

    /// `s` when it is already in the normal form (no repair, nothing to resolve), else `None`
    /// (then [`Loc::parse_with_repairs`] says what it is): the reader's hot path, which reads
    /// the entry another way when this fails.
    pub(crate) fn parse_normal(s: &[u8]) -> Option<Self> {
        let path_start = fast_path(s)?;
        let s = ascii_string(s.to_vec())?;
        let norm_len = s.len() as u32;
        Some(Loc { s, path_start: path_start as u32, norm_len })
    }

    /// [`Loc::parse_normal`] of bytes already in a vector of their size (a `loc` whose
    /// references were decoded), which becomes the `Loc`'s own string without a copy.
    pub(crate) fn parse_normal_bytes(v: Vec<u8>) -> Option<Self> {
        let path_start = fast_path(&v)?;
        let s = ascii_string(v)?;
        let norm_len = s.len() as u32;
        Some(Loc { s, path_start: path_start as u32, norm_len })
    }

    /// Reads the text of a `<loc>` in the XML itself, `b` from its first byte: when it is a URL
    /// already in the normal form (what [`Loc::parse_normal`] accepts once its references are
    /// decoded) whose only references are `&amp;`, and a `<` ends it within `b`, where it ends
    /// and what [`Loc::from_xml`] needs; else `None`, and nothing is decided (the caller reads
    /// the text the general way). One pass over the bytes where finding the text's end,
    /// decoding it and checking the URL were three; `last` skips the checks of the scheme, host
    /// and port when they are the last `loc`'s.
    pub(crate) fn scan_xml(b: &[u8], last: &mut LastOrigin) -> Option<XmlLoc> {
        let cached = last.0.len();
        let path_start = if cached > 0 && b.get(cached) == Some(&b'/') && same_start(b, &last.0) {
            cached
        } else {
            let at = origin(b)?;
            last.0.clear();
            last.0.extend_from_slice(&b[..at]);
            at
        };
        let mut amps = Amps::default();
        let len = path_start + scan_path::<true>(&b[path_start..], &mut amps)?;
        Some(XmlLoc { len, path_start, amps })
    }

    /// The `Loc` of a text [`Loc::scan_xml`] accepted (`b` as it was given), its references
    /// decoded into the one allocation.
    pub(crate) fn from_xml(b: &[u8], x: &XmlLoc) -> Option<Self> {
        let text = b.get(..x.len)?;
        // The `&` of each reference kept, its `amp;` dropped. No reference, or one (a query's
        // `&amp;`), is the usual text: one or two copies, without the loop.
        let amp = |k: usize| x.path_start + x.amps.at[k] as usize;
        let v = match x.amps.n {
            0 => text.to_vec(),
            1 => {
                let (head, tail) = (text.get(..=amp(0))?, text.get(amp(0) + 5..)?);
                let mut v = Vec::with_capacity(head.len() + tail.len());
                v.extend_from_slice(head);
                v.extend_from_slice(tail);
                v
            }
            n => {
                let mut v = Vec::with_capacity(x.decoded_len());
                let mut from = 0;
                for k in 0..usize::from(n) {
                    v.extend_from_slice(text.get(from..=amp(k))?);
                    from = amp(k) + 5;
                }
                v.extend_from_slice(text.get(from..)?);
                v
            }
        };
        let s = ascii_string(v)?;
        Some(Loc { s, path_start: x.path_start as u32, norm_len: x.decoded_len() as u32 })
    }

    /// The normal form (`url::Url`'s serialization): what scope, deduplication and comparison
    /// use, and what a sitemap writer writes (it is always valid in a `<loc>`).
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.s[..self.norm_len as usize]
    }

    /// The URL as the file wrote it (entities decoded, surrounding white space trimmed by the
    /// reader): what `read`, `discover`, the Python package and the service show as `loc`. It
    /// is the normal form when the text was already in it, or when the `Loc` was made from a
    /// `url::Url` (a relative feed link resolved against its base).
    #[inline]
    pub fn written(&self) -> &str {
        if self.s.len() == self.norm_len as usize { self.as_str() } else { &self.s[self.norm_len as usize..] }
    }

    /// Whether the written text differs from the normal form.
    pub fn is_rewritten(&self) -> bool {
        self.s.len() != self.norm_len as usize
    }

    /// The same URL with `written` as its written text (when it differs from the normal form).
    fn with_written(self, written: &str) -> Self {
        if written == self.as_str() {
            return self;
        }
        let mut s = String::with_capacity(self.norm_len as usize + written.len());
        s.push_str(self.as_str());
        s.push_str(written);
        Loc { s: s.into(), path_start: self.path_start, norm_len: self.norm_len }
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &str {
        if self.s.as_bytes()[4] == b's' { "https" } else { "http" }
    }

    /// Scheme, `://`, host and port, without the path (`https://example.com:8080`).
    pub fn origin_str(&self) -> &str {
        &self.s[..self.path_start as usize]
    }

    /// The path, query and fragment (`/a/b?c#d`); always starts with `/`.
    pub fn path_and_rest(&self) -> &str {
        &self.s[self.path_start as usize..self.norm_len as usize]
    }

    /// The `url::Url` for this location (parsing cannot fail: the text was checked).
    pub fn to_url(&self) -> Url {
        Url::parse(self.as_str()).expect("Loc holds a URL that url::Url accepted")
    }

    /// Turns a `url::Url` into a `Loc` when it is http(s) with a host.
    pub fn from_url(url: &Url) -> Result<Self, LocError> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(LocError::Scheme(other.to_string())),
        }
        if url.host_str().is_none() {
            return Err(LocError::Invalid("no host".into()));
        }
        let s = url.as_str();
        let path_start = url[..url::Position::BeforePath].len();
        Ok(Loc { s: s.into(), path_start: path_start as u32, norm_len: s.len() as u32 })
    }

    /// The length in characters, as the protocol's 2,048 limit counts.
    pub fn char_len(&self) -> usize {
        // Fast-path and `url` output are ASCII, so bytes are characters.
        self.norm_len as usize
    }
}

/// The normal form (messages and findings name the URL as it is compared).
impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)?;
        if self.is_rewritten() {
            write!(f, " (written {:?})", self.written())?;
        }
        Ok(())
    }
}

impl AsRef<str> for Loc {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// The normal form, as [`Loc::as_str`].
impl serde::Serialize for Loc {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::str::FromStr for Loc {
    type Err = LocError;
    fn from_str(s: &str) -> Result<Self, LocError> {
        Loc::parse(s)
    }
}

// Byte classes for the fast path.
const HOST: u8 = 1; // a-z 0-9 - .
const PATH: u8 = 2; // left alone by url in paths
const QUERY: u8 = 4; // left alone by url in special-scheme queries
const FRAG: u8 = 8; // left alone by url in fragments
const ANY: u8 = 16; // allowed somewhere after the host (path, query or fragment, or '#')
const SPECIAL: u8 = 32; // structural after the host: . % ? # '
const PLAIN: u8 = 64; // ANY and not SPECIAL: nothing to look at
const PLAIN_XML: u8 = 128; // PLAIN, and not `&` (which starts a reference in XML text)

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let alnum = b.is_ascii_alphanumeric();
        let sub = matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'/'
                | b'%'
        );
        let mut v = 0;
        if b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.' {
            v |= HOST;
        }
        if alnum || sub {
            v |= PATH | FRAG;
            v |= QUERY;
        }
        if b == b'\'' {
            v |= PATH | FRAG; // url encodes ' only in special-scheme queries
        }
        if b == b'?' {
            v |= QUERY | FRAG;
        }
        if v & (PATH | QUERY | FRAG) != 0 || b == b'#' {
            v |= ANY;
        }
        if matches!(b, b'.' | b'%' | b'?' | b'#' | b'\'') {
            v |= SPECIAL;
        }
        if v & ANY != 0 && v & SPECIAL == 0 {
            v |= PLAIN;
            if b != b'&' {
                v |= PLAIN_XML;
            }
        }
        t[c] = v;
        c += 1;
    }
    t
}

static CLASS: [u8; 256] = classes();

/// Returns the path start when `s` is already exactly what `Url` would serialize.
fn fast_path(s: &[u8]) -> Option<usize> {
    let path_start = origin(s)?;
    scan_path::<false>(&s[path_start..], &mut Amps::default())?;
    Some(path_start)
}

/// The end of the scheme, host and port of `s` (where its path starts, at a `/`) when they are
/// already what `Url` would serialize. Only `s[..=end]` is looked at, so an equal prefix
/// followed by `/` has the same answer ([`LastOrigin`]).
fn origin(s: &[u8]) -> Option<usize> {
    let rest_at = if s.starts_with(b"https://") {
        8
    } else if s.starts_with(b"http://") {
        7
    } else {
        return None;
    };
    let https = rest_at == 8;
    // Host: labels of [a-z0-9-], non-empty, not punycode, last one not numeric (IPv4 parsing).
    // Its end first, in one table loop; then its labels, at its dots.
    let mut i = rest_at + s[rest_at..].iter().position(|&b| CLASS[b as usize] & HOST == 0).unwrap_or(s.len() - rest_at);
    let mut label_start = rest_at;
    while let Some(dot) = s[label_start..i].iter().position(|&b| b == b'.') {
        if dot == 0 || s[label_start..].starts_with(b"xn--") {
            return None;
        }
        label_start += dot + 1;
    }
    let last = &s[label_start..i];
    let last_label_has_alpha = last.iter().any(u8::is_ascii_lowercase);
    // WHATWG "ends in a number": an all-digit or 0x-hex last label makes the host an IPv4 address,
    // which `url` leaves as it is only when written in the dotted-decimal form it serialises.
    let hex_number = last.starts_with(b"0x") && last[2..].iter().all(u8::is_ascii_hexdigit);
    let name = !last.is_empty() && last_label_has_alpha && !hex_number && !last.starts_with(b"xn--");
    if !name && !is_dotted_decimal(&s[rest_at..i]) {
        return None;
    }
    // Port: digits, no leading zero, not the default, at most 65535.
    if i < s.len() && s[i] == b':' {
        let p0 = i + 1;
        let mut port: u32 = 0;
        i = p0;
        while i < s.len() && s[i].is_ascii_digit() {
            port = port * 10 + u32::from(s[i] - b'0');
            if port > 65_535 {
                return None;
            }
            i += 1;
        }
        if i == p0 || s[p0] == b'0' || port == if https { 443 } else { 80 } {
            return None;
        }
    }
    // url adds the "/" path
    (s.get(i) == Some(&b'/')).then_some(i)
}

/// Where the `&amp;` references of a `loc` read in the XML itself are (at most four: a URL
/// with more goes the general way).
#[derive(Clone, Copy, Default)]
pub(crate) struct Amps {
    at: [u32; 4],
    n: u8,
}

impl Amps {
    fn push(&mut self, at: usize) -> bool {
        match self.at.get_mut(usize::from(self.n)) {
            Some(slot) => {
                *slot = at as u32;
                self.n += 1;
                true
            }
            None => false,
        }
    }
}

/// Whether `b` starts with `p` (`b` is longer): a word at a time, without a call to `memcmp`
/// for the few words of an origin.
#[inline(always)]
fn same_start(b: &[u8], p: &[u8]) -> bool {
    if p.len() < 8 {
        return b.get(..p.len()) == Some(p);
    }
    let mut i = 0;
    while i + 8 < p.len() {
        if word(b, i) != word(p, i) {
            return false;
        }
        i += 8;
    }
    // The last word ends with `p` (it may overlap the one before).
    let last = p.len() - 8;
    word(b, last).is_some_and(|w| Some(w) == word(p, last))
}

/// The scheme, host and port of the last `loc` [`Loc::scan_xml`] read: the next `loc` of a
/// sitemap almost always has the same, and their checks (a third of the work) are then one
/// comparison.
#[derive(Default)]
pub(crate) struct LastOrigin(Vec<u8>);

/// A `<loc>` text read in the XML (see [`Loc::scan_xml`]): already a URL in the normal form.
#[derive(Clone, Copy, Default)]
pub(crate) struct XmlLoc {
    /// Its length in the file, up to the `<` after it.
    pub(crate) len: usize,
    path_start: usize,
    amps: Amps,
}

impl XmlLoc {
    /// Whether it holds references.
    pub(crate) fn has_refs(&self) -> bool {
        self.amps.n > 0
    }

    /// Its length with its references decoded.
    pub(crate) fn decoded_len(&self) -> usize {
        self.len - 4 * usize::from(self.amps.n)
    }
}

/// Whether `host` is an IPv4 address exactly as `url` serialises one: four decimal numbers up
/// to 255, without leading zeros (`010` would be octal, `1.2.3` would become `1.2.0.3`).
fn is_dotted_decimal(host: &[u8]) -> bool {
    let mut parts = 0;
    for part in host.split(|&b| b == b'.') {
        parts += 1;
        let plain = !part.is_empty() && part.len() <= 3 && part.iter().all(u8::is_ascii_digit);
        if !plain
            || (part.len() > 1 && part[0] == b'0')
            || part.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) > 255
        {
            return false;
        }
    }
    parts == 4
}

fn slow_path(s: &str) -> Result<(Loc, LocRepairs), LocError> {
    if s.is_empty() {
        return Err(LocError::Empty);
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        // `url` would silently drop tabs and newlines and percent-encode the rest.
        return Err(LocError::Invalid(format!("control character U+{:04X}", c as u32)));
    }
    let mut url = match Url::parse(s) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => return Err(LocError::NotAbsolute),
        Err(e) => return Err(LocError::Invalid(e.to_string())),
    };
    match url.scheme() {
        "http" | "https" => {}
        other => {
            // "example.com:8080/x" parses with scheme "example.com": a host, so a relative URL really.
            if other.contains('.') || other.eq_ignore_ascii_case("localhost") {
                return Err(LocError::NotAbsolute);
            }
            return Err(LocError::Scheme(other.to_string()));
        }
    }
    if !s.get(..8).is_some_and(|p| p.to_ascii_lowercase().starts_with("http://") || p.eq_ignore_ascii_case("https://"))
    {
        // "http:example.com" or "http:/x": url repairs them, a sitemap must not rely on it.
        return Err(LocError::NotAbsolute);
    }
    // `url`'s serialization is not always a fixed point (a ".%2e" it writes is a dot segment when
    // read again: found by fuzzing): re-parse until it is, so that a Loc always re-parses to itself.
    for _ in 0..4 {
        match Url::parse(url.as_str()) {
            Ok(again) if again.as_str() != url.as_str() => url = again,
            _ => break,
        }
    }
    let loc = Loc::from_url(&url)?.with_written(s);
    let escaped = s
        .bytes()
        .any(|b| b >= 0x80 || b <= b' ' || matches!(b, b'"' | b'<' | b'>' | b'`' | b'{' | b'}' | b'|' | b'\\' | b'^'));
    let repairs = LocRepairs { escaped, normalised: !escaped && loc.as_str() != s };
    Ok((loc, repairs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(input: &str, expected: Result<&str, LocError>) {
        let got = Loc::parse(input).map(|l| l.as_str().to_string());
        assert_eq!(got, expected.map(str::to_string), "{input}");
    }

    #[test]
    fn all_ascii_sees_a_high_byte_anywhere() {
        for len in 0..70 {
            let clean = vec![b'a'; len];
            assert!(all_ascii(&clean), "len {len}");
            assert_eq!(ascii_string(clean).as_deref(), Some("a".repeat(len).as_str()));
            for at in 0..len {
                for high in [0x80u8, 0xc3, 0xff] {
                    let mut v = vec![b'a'; len];
                    v[at] = high;
                    assert!(!all_ascii(&v), "len {len}, 0x{high:x} at {at}");
                    assert_eq!(ascii_string(v), None);
                }
            }
        }
    }

    #[test]
    fn parses() {
        check("https://www.example.com/a?b=1&c=2#f", Ok("https://www.example.com/a?b=1&c=2#f"));
        check("HTTP://Example.COM:80", Ok("http://example.com/"));
        check("http://example.com/a/../b", Ok("http://example.com/b"));
        check("http://example.com/über grösse", Ok("http://example.com/%C3%BCber%20gr%C3%B6sse"));
        check("/relative", Err(LocError::NotAbsolute));
        check("example.com/page", Err(LocError::NotAbsolute));
        check("ftp://example.com/x", Err(LocError::Scheme("ftp".into())));
        check("javascript:alert(1)", Err(LocError::Scheme("javascript".into())));
        check("www.example.com:8080/x", Err(LocError::NotAbsolute));
        check("http://0x/", Ok("http://0.0.0.0/"));
        // IPv4 hosts: the dotted-decimal form is kept (the fast path), any other is rewritten.
        check("http://127.10.0.1:18472/a", Ok("http://127.10.0.1:18472/a"));
        assert_eq!(fast_path(b"http://127.10.0.1:18472/a"), Some("http://127.10.0.1:18472".len()));
        check("http://127.010.0.1/", Ok("http://127.8.0.1/"));
        check("http://127.1/", Ok("http://127.0.0.1/"));
        check("http://1.2.3.256/", Err(LocError::Invalid("invalid IPv4 address".into())));
        for odd in
            ["http://127.010.0.1/", "http://127.1/", "http://1.2.3.256/", "http://1.2.3.4.5/", "http://0x7f.0.0.1/"]
        {
            assert_eq!(fast_path(odd.as_bytes()), None, "{odd}");
        }
        // Escaped dot segments climb out of the folder, whatever their case.
        check("http://example.com/shop/.%2E/admin", Ok("http://example.com/admin"));
        check("http://example.com/shop/%2e%2E/admin", Ok("http://example.com/admin"));
        check("http://example.com/shop/.%2e", Ok("http://example.com/"));
        let shop = crate::Scope::of_sitemap(&Loc::parse("http://example.com/shop/sitemap.xml").unwrap());
        assert!(!shop.contains(&Loc::parse("http://example.com/shop/.%2e/admin").unwrap()));
        // Found by cargo fuzz: url's own output was not a fixed point.
        let odd = Loc::parse("https://xx/%/%ht:/.%2e\u{feff}").unwrap();
        assert_eq!(Loc::parse(odd.as_str()).unwrap().as_str(), odd.as_str());
        check("http://a.0x1f/", Err(LocError::Invalid("invalid IPv4 address".into())));
        assert!(matches!(Loc::parse("http://a.com/\u{0}x"), Err(LocError::Invalid(_))));
        assert!(matches!(Loc::parse("http://a.com/a\tb"), Err(LocError::Invalid(_))));
        check("", Err(LocError::Empty));
        assert!(matches!(Loc::parse("http://exa mple.com/"), Err(LocError::Invalid(_))));
        assert!(matches!(Loc::parse("http://"), Err(LocError::Invalid(_))));
    }

    #[test]
    fn keeps_the_text_as_written() {
        // (written, normal form): upper-case hosts, default ports, bare origins, escapes.
        for (written, normal) in [
            ("HTTPS://Example.COM/A", "https://example.com/A"),
            ("https://example.com:443/a", "https://example.com/a"),
            ("http://example.com:80/a", "http://example.com/a"),
            ("https://example.com", "https://example.com/"),
            ("https://example.com/a%7eb", "https://example.com/a%7eb"),
            ("https://example.com/caf\u{e9} x", "https://example.com/caf%C3%A9%20x"),
            ("https://example.com/a/../b", "https://example.com/b"),
        ] {
            let l = Loc::parse(written).unwrap();
            assert_eq!((l.written(), l.as_str()), (written, normal), "{written}");
            assert_eq!(l.is_rewritten(), written != normal);
            assert_eq!(l.char_len(), normal.len());
            // Compared, hashed and ordered by the normal form.
            let n = Loc::parse(normal).unwrap();
            assert_eq!(l, n);
            assert_eq!(l.cmp(&n), std::cmp::Ordering::Equal);
            let hasher = std::hash::RandomState::new();
            use std::hash::BuildHasher;
            assert_eq!(hasher.hash_one(&l), hasher.hash_one(&n));
            assert_eq!(l.origin_str(), n.origin_str());
            assert_eq!(l.path_and_rest(), n.path_and_rest());
            assert_eq!(l.to_url().as_str(), normal);
        }
        let same = Loc::parse("https://example.com/a").unwrap();
        assert_eq!(same.written(), "https://example.com/a");
        assert!(!same.is_rewritten());
        assert_eq!(std::mem::size_of::<Loc>(), 24);
    }

    #[test]
    fn parts() {
        let l = Loc::parse("https://example.com:8443/a/b?c").unwrap();
        assert_eq!(l.origin_str(), "https://example.com:8443");
        assert_eq!(l.path_and_rest(), "/a/b?c");
        assert_eq!(l.scheme(), "https");
        let slow = Loc::parse("HTTPS://EXAMPLE.com:8443/a").unwrap();
        assert_eq!(slow.origin_str(), "https://example.com:8443");
    }

    fn urlish() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "http://",
            "https://",
            "HTTP://",
            "a",
            "b",
            "z",
            "0",
            "9",
            ".",
            "-",
            "xn--",
            "/",
            "//",
            "?",
            "#",
            ":",
            ":80",
            ":443",
            ":8080",
            ":0",
            "%",
            "%2e",
            "%2E",
            "%41",
            "..",
            "'",
            "\"",
            " ",
            "<",
            "`",
            "{",
            "|",
            "\\",
            "^",
            "[",
            "]",
            "@",
            "&",
            "=",
            "~",
            "ü",
            "\t",
            "\n",
            "1.2.3.4",
            "example.com",
            "www.",
            "A",
            "_",
            "!",
            "$",
            "*",
            "+",
            ",",
            ";",
            "(",
            "0x",
        ]);
        prop::collection::vec(piece, 1..14).prop_map(|v| v.concat())
    }

    /// Paths made of dot segments in every spelling (`.`, `..`, `%2e`, `.%2E`, `%2e%2E`, ...)
    /// between ordinary ones.
    fn dotty() -> impl Strategy<Value = String> {
        let seg = prop::sample::select(vec![
            ".",
            "..",
            "%2e",
            "%2E",
            ".%2e",
            ".%2E",
            "%2e.",
            "%2E.",
            "%2e%2e",
            "%2E%2e",
            "%2e%2E",
            "%2E%2E",
            "shop",
            "a",
            "",
            "%2e%2e%2e",
            "...",
            "x.%2e",
        ]);
        let tail = prop::sample::select(vec!["", "?q=1", "#f", "/"]);
        (prop::collection::vec(seg, 1..8), tail)
            .prop_map(|(segs, tail)| format!("http://example.com/{}{tail}", segs.join("/")))
    }

    /// Whether a path segment is a dot segment once `%2e` is read as `.` (any case).
    fn is_dot_segment(seg: &str) -> bool {
        let s = seg.to_ascii_lowercase().replace("%2e", ".");
        s == "." || s == ".."
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]
        #[test]
        fn dot_segments_are_resolved_as_url_resolves_them(s in dotty()) {
            let l = Loc::parse(&s).expect("an http URL with a dotted path parses");
            let u = Url::parse(&s).unwrap();
            let fixed = Url::parse(u.as_str()).unwrap();
            prop_assert_eq!(l.as_str(), fixed.as_str());
            let path = l.path_and_rest().split(['?', '#']).next().unwrap();
            prop_assert!(!path.split('/').any(is_dot_segment), "{} keeps a dot segment: {}", s, l);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn fast_path_agrees_with_url(s in urlish()) {
            if let Some(ps) = fast_path(s.as_bytes()) {
                let url = Url::parse(&s).expect("fast path accepted what url refuses");
                prop_assert_eq!(url.as_str(), s.as_str());
                prop_assert_eq!(&url[..url::Position::BeforePath], &s[..ps]);
            }
        }

        #[test]
        fn parse_is_idempotent(s in urlish()) {
            if let Ok(l) = Loc::parse(&s) {
                let again = Loc::parse(l.as_str()).expect("normalised URL must parse");
                prop_assert_eq!(again.as_str(), l.as_str());
                prop_assert!(!again.is_rewritten());
                prop_assert_eq!(l.written(), s.as_str());
            }
        }

        /// Reading a `loc` in its XML (`&` as `&amp;` or another reference, a `<` after it)
        /// accepts only what [`fast_path`] accepts of the decoded text, with the same path, and
        /// accepts it whenever its references are up to four `&amp;`; whatever origin the last
        /// `loc` had.
        #[test]
        fn scan_xml_agrees_with_the_fast_path(s in urlish(), before in urlish(), apos in any::<bool>(), tail in "[<a&]?") {
            // XML text holds no `<`: it would end the text.
            let s = s.replace('<', "");
            let escaped = s.replace('&', "&amp;");
            let escaped = if apos { escaped.replace('\'', "&apos;") } else { escaped };
            for last in [String::new(), before.clone(), s.clone()] {
                let mut cache = LastOrigin::default();
                Loc::scan_xml(format!("{last}<").as_bytes(), &mut cache);
                let xml = format!("{escaped}{tail}");
                let got = Loc::scan_xml(xml.as_bytes(), &mut cache);
                let want = fast_path(s.as_bytes());
                match got {
                    Some(x) => {
                        prop_assert!(tail.starts_with('<'));
                        prop_assert_eq!(x.len, escaped.len());
                        prop_assert_eq!(x.decoded_len(), s.len());
                        prop_assert_eq!(Some(x.path_start), want);
                        let loc = Loc::from_xml(xml.as_bytes(), &x).expect("an accepted loc is built");
                        prop_assert_eq!(loc.as_str(), s.as_str());
                        prop_assert_eq!(loc.origin_str(), &s[..x.path_start]);
                    }
                    None => {
                        let simple = !(apos && s.contains('\'')) && s.matches('&').count() <= 4;
                        prop_assert!(want.is_none() || !simple || !tail.starts_with('<'), "{:?} refused", xml);
                    }
                }
            }
        }
    }
}
