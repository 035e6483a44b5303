//! Byte-level escaping and number formatting for the writers: no allocation, no `format!`.
//!
//! Values are appended to a reused `Vec<u8>`: the writers build each entry in memory first so
//! the set writer knows its exact size before it decides which file it goes in.

/// What a byte needs in XML text or attribute values: 0 nothing, 1 an entity, 2 dropped
/// (C0 controls XML 1.0 cannot carry at all), 3 a character reference (`\r`, tab and newline in
/// attributes, which parsers would otherwise normalise away).
const fn class_table(attr: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 2;
        i += 1;
    }
    t[b'\n' as usize] = if attr { 3 } else { 0 };
    t[b'\t' as usize] = if attr { 3 } else { 0 };
    t[b'\r' as usize] = 3;
    t[b'&' as usize] = 1;
    t[b'<' as usize] = 1;
    t[b'>' as usize] = 1;
    if attr {
        t[b'"' as usize] = 1;
        t[b'\'' as usize] = 1;
    }
    t
}

static TEXT: [u8; 256] = class_table(false);
static ATTR: [u8; 256] = class_table(true);

/// Appends `s` escaped for element content.
#[inline]
pub(crate) fn text(out: &mut Vec<u8>, s: &str) {
    escape(out, s.as_bytes(), &TEXT);
}

/// Appends `s` escaped for a double-quoted attribute value.
#[inline]
pub(crate) fn attr(out: &mut Vec<u8>, s: &str) {
    escape(out, s.as_bytes(), &ATTR);
}

/// Appends a URL already in normal form (a [`crate::Loc`]): it holds no control characters,
/// spaces, quotes or angle brackets, so `&` is the only byte to look for, which memchr finds
/// at memory speed; `<` and `>` are still checked so the output is safe whatever the input.
#[inline]
pub(crate) fn loc(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let mut last = 0;
    for i in memchr::memchr3_iter(b'&', b'<', b'>', b) {
        out.extend_from_slice(&b[last..i]);
        out.extend_from_slice(entity(b[i]));
        last = i + 1;
    }
    out.extend_from_slice(&b[last..]);
}

#[inline]
fn entity(c: u8) -> &'static [u8] {
    match c {
        b'&' => b"&amp;",
        b'<' => b"&lt;",
        b'>' => b"&gt;",
        b'"' => b"&quot;",
        _ => b"&apos;",
    }
}

fn escape(out: &mut Vec<u8>, b: &[u8], table: &[u8; 256]) {
    let mut last = 0;
    for (i, &c) in b.iter().enumerate() {
        match table[c as usize] {
            0 => continue,
            1 => {
                out.extend_from_slice(&b[last..i]);
                out.extend_from_slice(entity(c));
            }
            2 => out.extend_from_slice(&b[last..i]),
            _ => {
                out.extend_from_slice(&b[last..i]);
                out.extend_from_slice(b"&#");
                uint(out, u64::from(c));
                out.push(b';');
            }
        }
        last = i + 1;
    }
    out.extend_from_slice(&b[last..]);
}

/// Appends an unsigned integer in decimal.
pub(crate) fn uint(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `n` as exactly `width` digits (zero-padded; `n` must fit).
#[inline]
pub(crate) fn digits(out: &mut Vec<u8>, n: u32, width: usize) {
    let mut buf = [b'0'; 10];
    let mut n = n;
    for i in (0..width).rev() {
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&buf[..width]);
}

/// Appends a decimal with a point (`xsd:decimal` has no exponent): tenths, the common case,
/// by hand; anything else through `Display`, whose shortest form reads back to the same `f32`.
pub(crate) fn decimal(out: &mut Vec<u8>, v: f32) {
    // A saturating cast instead of `round()`, which is a libm call.
    let t = (v * 10.0 + 0.5) as u32;
    if t <= 10 && v >= 0.0 && t as f32 / 10.0 == v {
        if t == 10 {
            out.extend_from_slice(b"1.0");
        } else {
            out.extend_from_slice(&[b'0', b'.', b'0' + t as u8]);
        }
        return;
    }
    use std::io::Write;
    let mut buf = [0u8; 64];
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    // f32's Display never uses an exponent and 64 bytes hold any value in 0..=5.
    if write!(cur, "{v}").is_ok() {
        let n = cur.position() as usize;
        out.extend_from_slice(&buf[..n]);
        if !buf[..n].contains(&b'.') {
            out.extend_from_slice(b".0");
        }
    } else {
        out.extend_from_slice(b"0.0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(f: fn(&mut Vec<u8>, &str), input: &str, expected: &str) {
        let mut out = Vec::new();
        f(&mut out, input);
        assert_eq!(String::from_utf8(out).unwrap(), expected, "{input:?}");
    }

    #[test]
    fn escapes() {
        check(text, "a & b < c > d \"e' \u{1} é\r\n", "a &amp; b &lt; c &gt; d \"e'  é&#13;\n");
        check(attr, "x\"y'z&\t", "x&quot;y&apos;z&amp;&#9;");
        check(loc, "https://e.com/?a=1&b=2", "https://e.com/?a=1&amp;b=2");
        check(loc, "https://e.com/", "https://e.com/");
    }

    #[test]
    fn numbers() {
        let dec = |v: f32| {
            let mut o = Vec::new();
            decimal(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(dec(0.5), "0.5");
        assert_eq!(dec(1.0), "1.0");
        assert_eq!(dec(0.0), "0.0");
        assert_eq!(dec(0.25), "0.25");
        assert_eq!(dec(0.00001), "0.00001");
        assert_eq!(dec(4.5), "4.5");
        let mut o = Vec::new();
        uint(&mut o, 0);
        uint(&mut o, 18_446_744_073_709_551_615);
        digits(&mut o, 7, 2);
        assert_eq!(o, b"01844674407370955161507");
    }
}
