//! W3C Datetime (`lastmod`) that keeps the precision it was written with, plus the lenient
//! repairs real files need (space for `T`, no zone, RFC 822 as in RSS).
//!
//! Hand-written because no crate both keeps the written precision (`2005`, `2005-01`) and
//! parses in tens of nanoseconds; chrono's RFC 3339 parser rejects the short forms.

use crate::word::word;
use std::fmt;

/// How much of a date was given; the XSD accepts only `Day`, `Second` and `Fraction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Precision {
    /// `YYYY`
    Year,
    /// `YYYY-MM`
    Month,
    /// `YYYY-MM-DD`
    Day,
    /// `YYYY-MM-DDThh:mmTZD`
    Minute,
    /// `YYYY-MM-DDThh:mm:ssTZD`
    Second,
    /// `YYYY-MM-DDThh:mm:ss.sTZD`
    Fraction,
}

/// A time-zone designator as written: `Z`, or an offset in minutes east of UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tz {
    /// `Z`
    Utc,
    /// `+hh:mm` / `-hh:mm`, in minutes.
    Offset(i16),
}

/// A W3C Datetime value with the precision it was given.
///
/// Fields below the precision are zero (month and day are 1). `Display` writes it back in
/// the same form, so a valid value round-trips byte for byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct W3cDateTime {
    /// Four-digit year.
    pub year: u16,
    /// 1..=12
    pub month: u8,
    /// 1..=31
    pub day: u8,
    /// 0..=23
    pub hour: u8,
    /// 0..=59
    pub minute: u8,
    /// 0..=60 (leap second tolerated)
    pub second: u8,
    /// Fraction of a second, in nanoseconds.
    pub nanos: u32,
    /// Digits of the fraction as written (1..=9), for writing it back.
    pub frac_digits: u8,
    /// The zone, where a time is given; `None` for date forms (and repaired zone-less times).
    pub tz: Option<Tz>,
    /// How much was given.
    pub precision: Precision,
}

impl W3cDateTime {
    /// A date-only value (`YYYY-MM-DD`); `None` when the date does not exist.
    pub fn from_ymd(year: u16, month: u8, day: u8) -> Option<Self> {
        (valid_date(year, month, day)).then_some(Self::start_of(year, month, day, Precision::Day))
    }

    /// The start of a day, given to `precision`: no time, no zone. What a date form is, and
    /// where the parser starts before it reads further fields.
    const fn start_of(year: u16, month: u8, day: u8, precision: Precision) -> Self {
        W3cDateTime { year, month, day, hour: 0, minute: 0, second: 0, nanos: 0, frac_digits: 0, tz: None, precision }
    }

    /// Reads the fraction of a second whose digits start at `b[start]` (after the `.`), keeping
    /// nine digits at most, and gives where they end: the one reading of a fraction for both the
    /// parser and the reader's scan. `None` when no digit follows the `.`.
    fn fraction(&mut self, b: &[u8], start: usize) -> Option<usize> {
        let mut i = start;
        let mut nanos: u32 = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(c - b'0');
            }
            i += 1;
        }
        let kept = (i - start).min(9);
        if kept == 0 {
            return None;
        }
        self.nanos = nanos * 10u32.pow((9 - kept) as u32);
        self.frac_digits = kept as u8;
        self.precision = Precision::Fraction;
        Some(i)
    }

    /// Parses exactly the six W3C Datetime forms; anything else is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        parse_w3c(s.as_bytes(), false)
    }

    /// [`W3cDateTime::parse`] of bytes, when the form also passes the official XSD: the
    /// reader's hot path, a `lastmod` read without a finding.
    pub(crate) fn parse_bytes(b: &[u8]) -> Option<Self> {
        parse_w3c(b, false).filter(Self::passes_xsd)
    }

    /// The form the XSD accepts (day, second or fraction, with a zone) at the start of `b`, and
    /// its length: what [`W3cDateTime::parse_bytes`] gives for `b[..len]` when `b[len]` ends the
    /// text (the caller looks). The reader's hot path reads a `lastmod` in its XML with it, eight
    /// bytes at a time; `None` leaves the text to the general way.
    pub(crate) fn scan_xsd(b: &[u8]) -> Option<(Self, usize)> {
        // `YYYY-MM-` in one word, `DD` after it.
        const DATE_DIGITS: u64 = 0x00ff_ff00_ffff_ffff;
        let d = digits(word(b, 0)?, DATE_DIGITS, 0x2d00_002d_0000_0000)?;
        let year = u16::from(d[0]) * 1000 + u16::from(d[1]) * 100 + u16::from(d[2]) * 10 + u16::from(d[3]);
        let (month, day) = (d[5] * 10 + d[6], d2(b, 8)?);
        if !valid_date(year, month, day) {
            return None;
        }
        // Each way out builds its value where it returns it (no value changed on the way and
        // copied out at the end, field by field).
        if b.get(10) != Some(&b'T') {
            return Some((Self::start_of(year, month, day, Precision::Day), 10));
        }
        // `hh:mm:ss` in one word: a time without seconds is no XSD form.
        const TIME_DIGITS: u64 = 0xffff_00ff_ff00_ffff;
        let t = digits(word(b, 11)?, TIME_DIGITS, 0x0000_3a00_003a_0000)?;
        let (hour, minute, second) = (t[0] * 10 + t[1], t[3] * 10 + t[4], t[6] * 10 + t[7]);
        if hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        let v = W3cDateTime { hour, minute, second, ..Self::start_of(year, month, day, Precision::Second) };
        if b.get(19) == Some(&b'.') {
            return Self::scan_fraction(v, b);
        }
        Self::scan_zone(v, b, 19)
    }

    /// [`W3cDateTime::scan_xsd`] of a time with a fraction of a second (its `.` at 19). Apart
    /// and never inlined, so that the usual forms' scan keeps its value in registers: taken by
    /// `fraction`'s `&mut self`, the value lived on the stack and was copied out field by
    /// field, and the scan saved and restored six registers for the call.
    #[inline(never)]
    fn scan_fraction(mut v: Self, b: &[u8]) -> Option<(Self, usize)> {
        let i = v.fraction(b, 20)?;
        Self::scan_zone(v, b, i)
    }

    /// The zone at `b[i]` of [`W3cDateTime::scan_xsd`]: `Z` or `±hh:mm`, required.
    #[inline(always)]
    fn scan_zone(mut v: Self, b: &[u8], i: usize) -> Option<(Self, usize)> {
        match *b.get(i)? {
            b'Z' => {
                v.tz = Some(Tz::Utc);
                Some((v, i + 1))
            }
            s @ (b'+' | b'-') => {
                // `±hh:mm` in one word (its last two bytes, after the zone, not looked at).
                const ZONE_DIGITS: u64 = 0x0000_ffff_00ff_ff00;
                let (h, m) = match word(b, i) {
                    Some(w) => {
                        let z = digits(w & 0x0000_ffff_ffff_ffff, ZONE_DIGITS, u64::from(s) | 0x3a00_0000)?;
                        (z[1] * 10 + z[2], z[4] * 10 + z[5])
                    }
                    None if b.get(i + 3) == Some(&b':') => (d2(b, i + 1)?, d2(b, i + 4)?),
                    None => return None,
                };
                if h > 23 || m > 59 {
                    return None;
                }
                let mins = i16::from(h) * 60 + i16::from(m);
                v.tz = Some(Tz::Offset(if s == b'-' { -mins } else { mins }));
                Some((v, i + 6))
            }
            _ => None,
        }
    }

    /// Whether the official XSD's `xsd:date`/`xsd:dateTime` accept this form.
    pub fn passes_xsd(&self) -> bool {
        matches!(self.precision, Precision::Day | Precision::Second | Precision::Fraction)
    }

    /// Seconds since the Unix epoch (UTC) of the start of this value; a missing zone counts as UTC.
    pub fn unix_seconds(&self) -> i64 {
        let days = days_from_civil(i64::from(self.year), self.month, self.day);
        let mut s = days * 86_400 + i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second);
        if let Some(Tz::Offset(m)) = self.tz {
            s -= i64::from(m) * 60;
        }
        s
    }

    /// The instant in RFC 3339 UTC form with milliseconds (`2005-01-01T00:00:00.000Z`), for comparisons.
    pub fn to_utc_string(&self) -> String {
        let secs = self.unix_seconds();
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60,
            self.nanos / 1_000_000
        )
    }
}

impl fmt::Display for W3cDateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl W3cDateTime {
    /// The value in the form it was given (what `Display` writes), on the stack: writers of
    /// millions of rows copy it without a `Formatter` call per field.
    pub fn text(&self) -> DateText {
        let mut t = DateText { bytes: [0; 40], len: 0 };
        // A u16 year has at most 5 digits: the longest form is 36 bytes.
        t.digits(u32::from(self.year), 4);
        if self.precision == Precision::Year {
            return t;
        }
        t.push(b'-');
        t.digits(u32::from(self.month), 2);
        if self.precision == Precision::Month {
            return t;
        }
        t.push(b'-');
        t.digits(u32::from(self.day), 2);
        if self.precision == Precision::Day {
            return t;
        }
        t.push(b'T');
        t.digits(u32::from(self.hour), 2);
        t.push(b':');
        t.digits(u32::from(self.minute), 2);
        if self.precision >= Precision::Second {
            t.push(b':');
            t.digits(u32::from(self.second), 2);
        }
        if self.precision == Precision::Fraction {
            let digits = u32::from(self.frac_digits.clamp(1, 9));
            t.push(b'.');
            t.digits(self.nanos / 10u32.pow(9 - digits), digits as usize);
        }
        match self.tz {
            Some(Tz::Utc) => t.push(b'Z'),
            Some(Tz::Offset(m)) => {
                t.push(if m < 0 { b'-' } else { b'+' });
                let m = u32::from(m.unsigned_abs());
                t.digits(m / 60, 2);
                t.push(b':');
                t.digits(m % 60, 2);
            }
            None => {}
        }
        t
    }
}

/// A [`W3cDateTime`]'s text, from [`W3cDateTime::text`]: ASCII digits and `-:.TZ+`.
#[derive(Clone, Copy)]
pub struct DateText {
    bytes: [u8; 40],
    len: usize,
}

// `push` and `digits` are inlined into `text`, where the buffer is a local: along each
// precision's path the length is then a constant and the stores need no checks.
impl DateText {
    #[inline(always)]
    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// `v` in decimal, zero-padded to `width` digits (more when it needs more).
    #[inline(always)]
    fn digits(&mut self, mut v: u32, width: usize) {
        // The usual fields (a four-digit year, two-digit month to second) without the loop:
        // this runs a few times for every row a many-site discovery writes.
        if width == 2 && v < 100 {
            self.push(b'0' + (v / 10) as u8);
            self.push(b'0' + (v % 10) as u8);
            return;
        }
        if width == 4 && v < 10_000 {
            self.push(b'0' + (v / 1000) as u8);
            self.push(b'0' + (v / 100 % 10) as u8);
            self.push(b'0' + (v / 10 % 10) as u8);
            self.push(b'0' + (v % 10) as u8);
            return;
        }
        let mut tmp = [b'0'; 10];
        let mut n = 0;
        while v > 0 || n < width {
            tmp[9 - n] = b'0' + (v % 10) as u8;
            v /= 10;
            n += 1;
            if n == tmp.len() {
                break;
            }
        }
        for &b in &tmp[10 - n..] {
            self.push(b);
        }
    }
}

impl DateText {
    /// The text's bytes (ASCII), without the UTF-8 check the `str` view makes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len.min(self.bytes.len())]
    }
}

impl std::ops::Deref for DateText {
    type Target = str;
    fn deref(&self) -> &str {
        // Only ASCII bytes are ever pushed.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

/// A `lastmod` as read: an exact W3C value, or a repaired reading of a faulty text kept as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Lastmod {
    /// A valid W3C Datetime; `Display` gives back the text as written.
    W3c(W3cDateTime),
    /// Not W3C Datetime but readable (space for `T`, no zone, RFC 822 as in RSS): the text as
    /// written and the best reading of it (a missing zone is left `None`, read as UTC).
    Text {
        /// The text as written (trimmed).
        text: Box<str>,
        /// The value it was read as.
        value: W3cDateTime,
    },
}

impl Lastmod {
    /// The typed value.
    pub fn value(&self) -> &W3cDateTime {
        match self {
            Lastmod::W3c(v) | Lastmod::Text { value: v, .. } => v,
        }
    }

    /// Whether the text was valid W3C Datetime.
    pub fn is_w3c(&self) -> bool {
        matches!(self, Lastmod::W3c(_))
    }
}

impl fmt::Display for Lastmod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lastmod::W3c(v) => v.fmt(f),
            Lastmod::Text { text, .. } => f.write_str(text),
        }
    }
}

impl serde::Serialize for Lastmod {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What [`parse_lastmod`] made of a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LastmodParse {
    /// Valid W3C Datetime.
    Exact(W3cDateTime),
    /// Readable after a repair; the string says which.
    Repaired(W3cDateTime, &'static str),
    /// Not a date.
    Invalid,
}

/// Parses a `lastmod` text (already trimmed): W3C first, then the usual faulty forms.
pub fn parse_lastmod(s: &str) -> LastmodParse {
    let b = s.as_bytes();
    if let Some(v) = parse_w3c(b, false) {
        return LastmodParse::Exact(v);
    }
    if let Some(v) = parse_w3c(b, true) {
        let why = if b.len() > 10 && b[10] == b' ' {
            "a space instead of 'T' between date and time"
        } else if v.tz.is_none() {
            "a time without a time zone"
        } else {
            "a non-standard W3C Datetime form"
        };
        return LastmodParse::Repaired(v, why);
    }
    if let Some(v) = parse_rfc822(s) {
        return LastmodParse::Repaired(v, "an RFC 822 date instead of W3C Datetime");
    }
    LastmodParse::Invalid
}

/// Reads `lastmod` text into a [`Lastmod`], or `None` when it is not a date at all.
pub fn lastmod_from_text(s: &str) -> Option<Lastmod> {
    match parse_lastmod(s) {
        LastmodParse::Exact(v) => Some(Lastmod::W3c(v)),
        LastmodParse::Repaired(value, _) => Some(Lastmod::Text { text: s.into(), value }),
        LastmodParse::Invalid => None,
    }
}

/// The bytes of `w` as digit values, when the bytes under `mask` are ASCII digits and the
/// others are those of `fixed` (zero under `mask`). A byte is a digit when its high half is 3
/// and adding 6 leaves it 3 (`0x30`-`0x39`); the additions cannot carry into a byte that
/// passed the first test.
#[inline(always)]
fn digits(w: u64, mask: u64, fixed: u64) -> Option<[u8; 8]> {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let d = w & mask;
    let ok = w & !mask == fixed
        && d & HIGH & mask == ZEROS & mask
        && d.wrapping_add(0x0606_0606_0606_0606 & mask) & HIGH & mask == ZEROS & mask;
    ok.then(|| (d.wrapping_sub(ZEROS & mask)).to_le_bytes())
}

#[inline]
fn d2(b: &[u8], i: usize) -> Option<u8> {
    let (x, y) = (*b.get(i)?, *b.get(i + 1)?);
    (x.is_ascii_digit() && y.is_ascii_digit()).then(|| (x - b'0') * 10 + (y - b'0'))
}

fn valid_date(y: u16, m: u8, d: u8) -> bool {
    if !(1..=12).contains(&m) || d == 0 {
        return false;
    }
    // Every month has 28 days (most dates: no leap year or month length to work out).
    if d <= 28 {
        return true;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let max = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= max
}

/// The W3C profile of ISO 8601; with `lenient`, also a space or lower-case `t` for `T`,
/// a missing zone, `+hhmm` offsets and a trailing ` UTC`/`GMT`.
fn parse_w3c(b: &[u8], lenient: bool) -> Option<W3cDateTime> {
    let year = u16::from(d2(b, 0)?) * 100 + u16::from(d2(b, 2)?);
    let mut v = W3cDateTime::start_of(year, 1, 1, Precision::Year);
    if b.len() == 4 {
        return Some(v);
    }
    if b[4] != b'-' {
        return None;
    }
    v.month = d2(b, 5)?;
    if !(1..=12).contains(&v.month) {
        return None;
    }
    v.precision = Precision::Month;
    if b.len() == 7 {
        return Some(v);
    }
    if b.get(7) != Some(&b'-') {
        return None;
    }
    v.day = d2(b, 8)?;
    if !valid_date(v.year, v.month, v.day) {
        return None;
    }
    v.precision = Precision::Day;
    if b.len() == 10 {
        return Some(v);
    }
    match b[10] {
        b'T' => {}
        b't' | b' ' if lenient => {}
        _ => return None,
    }
    v.hour = d2(b, 11)?;
    if b.get(13) != Some(&b':') {
        return None;
    }
    v.minute = d2(b, 14)?;
    if v.hour > 23 || v.minute > 59 {
        return None;
    }
    v.precision = Precision::Minute;
    let mut i = 16;
    if b.get(i) == Some(&b':') {
        v.second = d2(b, i + 1)?;
        if v.second > 60 {
            return None;
        }
        v.precision = Precision::Second;
        i += 3;
        if b.get(i) == Some(&b'.') {
            i = v.fraction(b, i + 1)?;
        }
    }
    let rest = &b[i..];
    v.tz = match rest {
        b"Z" => Some(Tz::Utc),
        [s @ (b'+' | b'-'), ..] => {
            let (h, m) = match rest.len() {
                6 if rest[3] == b':' => (d2(rest, 1)?, d2(rest, 4)?),
                5 if lenient => (d2(rest, 1)?, d2(rest, 3)?),
                3 if lenient => (d2(rest, 1)?, 0),
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            let mins = i16::from(h) * 60 + i16::from(m);
            Some(Tz::Offset(if *s == b'-' { -mins } else { mins }))
        }
        b"" if lenient => None,
        b"z" | b" UTC" | b" GMT" | b"UTC" | b"GMT" if lenient => Some(Tz::Utc),
        _ => return None,
    };
    Some(v)
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// RFC 822 / RFC 2822 as in RSS `pubDate`: `[Wkd, ]DD Mon YYYY hh:mm[:ss] (zone)`.
pub fn parse_rfc822(s: &str) -> Option<W3cDateTime> {
    let s = s.trim();
    let s = match s.find(',') {
        Some(i) => s[i + 1..].trim_start(),
        None => s,
    };
    let mut it = s.split_ascii_whitespace();
    let day: u8 = it.next()?.parse().ok()?;
    let mon = it.next()?.get(..3)?.to_ascii_lowercase();
    let month = MONTHS.iter().position(|m| *m == mon)? as u8 + 1;
    let y = it.next()?;
    let mut year: u16 = y.parse().ok()?;
    if y.len() == 2 {
        year += if year < 50 { 2000 } else { 1900 };
    }
    let time = it.next()?;
    let mut tp = time.split(':');
    let hour: u8 = tp.next()?.parse().ok()?;
    let minute: u8 = tp.next()?.parse().ok()?;
    let (second, precision) = match tp.next() {
        Some(x) => (x.parse().ok()?, Precision::Second),
        None => (0, Precision::Minute),
    };
    if tp.next().is_some() || hour > 23 || minute > 59 || second > 60 || !valid_date(year, month, day) {
        return None;
    }
    // RFC 822 requires a zone: without one the instant is unknown, so the date is refused.
    let tz = match it.next() {
        None => return None,
        Some(z) => Some(match z.to_ascii_uppercase().as_str() {
            "Z" | "UT" | "UTC" | "GMT" => Tz::Utc,
            "EST" => Tz::Offset(-300),
            "EDT" => Tz::Offset(-240),
            "CST" => Tz::Offset(-360),
            "CDT" => Tz::Offset(-300),
            "MST" => Tz::Offset(-420),
            "MDT" => Tz::Offset(-360),
            "PST" => Tz::Offset(-480),
            "PDT" => Tz::Offset(-420),
            z if (z.starts_with('+') || z.starts_with('-')) && z.len() == 5 => {
                let zb = z.as_bytes();
                let m = i16::from(d2(zb, 1)?) * 60 + i16::from(d2(zb, 3)?);
                Tz::Offset(if zb[0] == b'-' { -m } else { m })
            }
            _ => return None,
        }),
    };
    Some(W3cDateTime { year, month, day, hour, minute, second, nanos: 0, frac_digits: 0, tz, precision })
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u8, d: u8) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The current time as a UTC [`W3cDateTime`] to the second, for `lastmod-future` and writers.
pub fn now_utc() -> W3cDateTime {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    from_unix_seconds(secs)
}

/// A UTC [`W3cDateTime`] (`...Z`, to the second) from seconds since the Unix epoch.
pub fn from_unix_seconds(secs: i64) -> W3cDateTime {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    W3cDateTime {
        year: y.clamp(0, 9999) as u16,
        month: m as u8,
        day: d as u8,
        hour: (rem / 3600) as u8,
        minute: (rem % 3600 / 60) as u8,
        second: (rem % 60) as u8,
        nanos: 0,
        frac_digits: 0,
        tz: Some(Tz::Utc),
        precision: Precision::Second,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Option<(&str, Precision)>) {
        let got = W3cDateTime::parse(input);
        match expected {
            None => assert_eq!(got, None, "{input}"),
            Some((utc, p)) => {
                let v = got.unwrap_or_else(|| panic!("{input} did not parse"));
                assert_eq!(v.to_utc_string(), utc, "{input}");
                assert_eq!(v.precision, p, "{input}");
                assert_eq!(v.to_string(), input, "round trip of {input}");
            }
        }
    }

    /// The unrolled two- and four-digit fields write what the general loop writes, and the
    /// bytes are the text's.
    #[test]
    fn digits_are_zero_padded_decimal() {
        for width in [1, 2, 3, 4, 9] {
            for v in (0..100_000).chain([u32::MAX / 7, u32::MAX]) {
                let mut t = DateText { bytes: [0; 40], len: 0 };
                t.digits(v, width);
                assert_eq!(&*t, format!("{v:0width$}"), "{v} in {width}");
                assert_eq!(t.as_bytes(), format!("{v:0width$}").as_bytes());
            }
        }
    }

    #[test]
    fn w3c_forms() {
        use Precision::*;
        check("2014", Some(("2014-01-01T00:00:00.000Z", Year)));
        check("2014-06", Some(("2014-06-01T00:00:00.000Z", Month)));
        check("2014-06-03", Some(("2014-06-03T00:00:00.000Z", Day)));
        check("1997-07-16T19:20+01:00", Some(("1997-07-16T18:20:00.000Z", Minute)));
        check("2014-06-03T10:30:45-05:00", Some(("2014-06-03T15:30:45.000Z", Second)));
        check("2014-06-03T10:30:45.82+00:00", Some(("2014-06-03T10:30:45.820Z", Fraction)));
        check("2004-12-31T23:59:59Z", Some(("2004-12-31T23:59:59.000Z", Second)));
        check("2024-02-29", Some(("2024-02-29T00:00:00.000Z", Day)));
        check("2023-02-29", None);
        check("2014-13", None);
        check("blah", None);
        check("2014-06-03T10:30:45", None);
        check("2014-06-03 10:30:45Z", None);
        check("2014-06-03T10:30:45+0000", None);
        check("", None);
    }

    #[test]
    fn repairs() {
        assert!(matches!(parse_lastmod("2014-06-03 10:30:45+00:00"), LastmodParse::Repaired(..)));
        assert!(matches!(parse_lastmod("2014-06-03T10:30:45"), LastmodParse::Repaired(..)));
        let LastmodParse::Repaired(v, _) = parse_lastmod("Tue, 10 Jun 2003 04:00:00 GMT") else {
            panic!("rfc 822 not read")
        };
        assert_eq!(v.to_utc_string(), "2003-06-10T04:00:00.000Z");
        let LastmodParse::Repaired(v, _) = parse_lastmod("Sat, 07 Sep 2002 00:00:01 -0500") else {
            panic!("rfc 822 with offset not read")
        };
        assert_eq!(v.to_utc_string(), "2002-09-07T05:00:01.000Z");
        assert_eq!(parse_lastmod("yesterday"), LastmodParse::Invalid);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        /// Reading a `lastmod` in its XML (a `<` after it) gives what the general reader gives
        /// for the XSD's forms, and reads every such form.
        #[test]
        fn scan_xsd_agrees_with_parse(s in "[0-9]{4}-[0-1][0-9]-[0-3][0-9](T[0-2][0-9]:[0-6][0-9](:[0-6][0-9](\\.[0-9]{0,11})?)?([Z+-]|[+-][0-2][0-9]:[0-6][0-9]|[+-][0-9]{4})?)?", tail in "[<0-9Z ]?", junk in "[-0-9T:.Z+a ]{0,30}") {
            for text in [s.as_str(), junk.as_str()] {
                let want = W3cDateTime::parse_bytes(text.as_bytes());
                let xml = format!("{text}{tail}");
                match W3cDateTime::scan_xsd(xml.as_bytes()) {
                    Some((v, n)) if xml.as_bytes().get(n) == Some(&b'<') => {
                        proptest::prop_assert_eq!(Some(v), W3cDateTime::parse_bytes(&xml.as_bytes()[..n]));
                        proptest::prop_assert_eq!(n, text.len());
                    }
                    _ => proptest::prop_assert!(want.is_none() || tail != "<", "{} not read", xml),
                }
            }
        }
    }

    #[test]
    fn civil_round_trip() {
        for days in [-800_000i64, -1, 0, 1, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m as u8, d as u8), days);
        }
    }
}
