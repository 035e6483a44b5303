//! The path, query and fragment of a `loc` checked in one pass, mostly sixteen or eight bytes
//! at a time: the bytes `url` leaves alone in every part (letters, digits, `-/:;`) are passed
//! by a vector or word test, the few others looked up in the table and looked at.

use super::{ANY, Amps, CLASS, PLAIN, PLAIN_XML, SPECIAL};
use crate::word::word;

/// The path, query and fragment `rest` (from the `/` after the authority) checked with one
/// pass: every byte must be one `url` leaves alone somewhere after the host; the few
/// structural bytes (`. % ? # '`) are looked at where they occur. With `XML`, `rest` is the
/// text of a `<loc>` as the file holds it: it ends at the first `<` (`None` when the bytes end
/// before one), and its one reference allowed is `&amp;`, recorded in `amps`. The length of
/// the path (up to the `<`) is returned.
#[inline(always)]
pub(super) fn scan_path<const XML: bool>(rest: &[u8], amps: &mut Amps) -> Option<usize> {
    let mut part = 0u8; // 0 path, 1 query, 2 fragment
    let mut i = 0;
    // Sixteen bytes at a time: every byte outside the common set of letters, digits and
    // `-/:;=` is flagged in one mask, and each flagged byte is looked at in turn without
    // loading the bytes again (a URL has several: `?`, `&amp;`, `_`, `%`...). The `amp;` of a
    // reference is common bytes, never flagged, whichever block it ends in.
    #[cfg(target_arch = "x86_64")]
    while let Some(halves) = crate::simd::uncommon16(rest, i) {
        for (h, mut bad) in halves.into_iter().enumerate() {
            while bad != 0 {
                let at = i + 8 * h + (bad.trailing_zeros() / 8) as usize;
                bad &= bad - 1;
                match look::<XML>(rest, at, amps, &mut part) {
                    Look::Pass => {}
                    Look::End => return Some(at),
                    Look::Refuse => return None,
                }
            }
        }
        i += 16;
    }
    // Eight bytes at a time in a machine word (the tail of the sixteen-byte loop, or all of a
    // URL on other targets): the first byte outside the common set is found with a few
    // arithmetic operations for the eight (`uncommon`), looked at, and the next word starts
    // after it.
    loop {
        let at = match word(rest, i) {
            Some(w) => {
                let bad = uncommon(w);
                if bad == 0 {
                    i += 8;
                    continue;
                }
                i + (bad.trailing_zeros() / 8) as usize
            }
            None => {
                let plain = if XML { PLAIN_XML } else { PLAIN };
                match rest[i..].iter().position(|&b| CLASS[b as usize] & plain == 0) {
                    Some(k) => i + k,
                    None if XML => return None,
                    None => return Some(rest.len()),
                }
            }
        };
        match look::<XML>(rest, at, amps, &mut part) {
            Look::Pass => i = at + 1,
            Look::End => return Some(at),
            Look::Refuse => return None,
        }
    }
}

/// What [`look`] made of a byte of a path.
enum Look {
    /// Allowed; the scan goes on after it (after its `amp;` for a `&amp;`).
    Pass,
    /// The `<` that ends a `<loc>`'s text.
    End,
    /// Not what `url` would serialize, or not a text this reads.
    Refuse,
}

/// `rest[at]`, a byte after the host that the common-set tests flagged, looked up in the
/// table: another plain byte (`=`, `_`, ...) passes, anything else is looked at.
#[inline(always)]
fn look<const XML: bool>(rest: &[u8], at: usize, amps: &mut Amps, part: &mut u8) -> Look {
    // In XML text a `&` starts a reference: looked at, not plain.
    let plain = if XML { PLAIN_XML } else { PLAIN };
    let c = rest[at];
    if CLASS[c as usize] & plain != 0 {
        return Look::Pass;
    }
    if XML {
        match c {
            b'<' => return Look::End,
            b'&' => {
                let amp = rest.get(at + 1..at + 5) == Some(b"amp;") && amps.push(at);
                return if amp { Look::Pass } else { Look::Refuse };
            }
            _ => {}
        }
    }
    // The query's `?` (one a URL, usually), without `path_byte`'s match.
    if c == b'?' && *part == 0 {
        *part = 1;
    } else if !path_byte(rest, at, part) {
        return Look::Refuse;
    }
    Look::Pass
}

/// The bytes of `x` (eight bytes of a URL, the first in the low byte) that are not letters
/// (either case), digits or one of `-/:;`: the high bit of each such byte is set, and of
/// others above the first one maybe (a carry out of a byte of 0x80 or more, a borrow out of a
/// `.`), never below it, so the lowest set bit is the first such byte. Every byte of the set
/// is plain after the host ([`CLASS`]), in XML text too.
#[inline(always)]
fn uncommon(x: u64) -> u64 {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    // A byte of 0x7f or less plus `0x80 - lo` has its high bit set when it is `lo` or more;
    // plus `0x7f - hi`, when it is more than `hi`; neither sum carries out of the byte.
    let range = |v: u64, lo: u64, hi: u64| v.wrapping_add((0x80 - lo) * L) & !v.wrapping_add((0x7f - hi) * L);
    // `-./0-9:;`, then `.` taken out; letters with the case bit set.
    let punct = range(x, 0x2d, 0x3b);
    let letter = range(x | (0x20 * L), 0x61, 0x7a);
    let d = x ^ (u64::from(b'.') * L);
    let dot = d.wrapping_sub(L) & !d;
    (!(punct | letter) | x | dot) & H
}

/// Checks `rest[i]`, a byte after the host, moving `part` (0 path, 1 query, 2 fragment) on.
#[inline(always)]
fn path_byte(rest: &[u8], i: usize, part: &mut u8) -> bool {
    let b = rest[i];
    let c = CLASS[b as usize];
    if c & ANY == 0 {
        return false;
    }
    if c & SPECIAL == 0 {
        return true;
    }
    match (b, *part) {
        (b'?', 0) => *part = 1,
        (b'#', 0 | 1) => *part = 2,
        (b'#', _) => return false,
        (b'\'', 1) => return false, // url encodes ' in special-scheme queries
        // Dot segments: "/." followed by '.', '/', the end of the path, or an escape (".%2e"
        // is "..": left in place it would let "/shop/.%2e/admin" pass for a URL under /shop/).
        (b'.', 0)
            // (A `<` ends the text of a `<loc>` read in the XML, and is refused anywhere else.)
            if rest[i - 1] == b'/'
                && matches!(rest.get(i + 1), None | Some(b'<' | b'.' | b'/' | b'?' | b'#' | b'%')) =>
        {
            return false;
        }
        // "/%2e" may be a dot segment too.
        (b'%', 0)
            if rest[i - 1] == b'/'
                && rest.get(i + 1) == Some(&b'2')
                && matches!(rest.get(i + 2), Some(b'e' | b'E')) =>
        {
            return false;
        }
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The byte set of [`uncommon`], one byte at a time, and all of it plain after the host.
    fn common(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'/' | b':' | b';')
    }

    fn first_uncommon(x: u64) -> usize {
        let bad = uncommon(x);
        if bad == 0 { 8 } else { (bad.trailing_zeros() / 8) as usize }
    }

    #[test]
    fn word_test_finds_the_first_uncommon_byte() {
        for b in 0..=255u8 {
            if common(b) {
                assert_ne!(CLASS[b as usize] & PLAIN_XML, 0, "{b:#x}");
            }
            // Every byte value at every place, after common bytes and before any bytes (those
            // that carry or borrow into the bytes above them among them).
            for at in 0..8 {
                for (fill, after) in [(b'a', b'z'), (b'0', 0xff), (b'Z', b'.'), (b'-', 0x80), (b';', 0x00)] {
                    let mut w = [after; 8];
                    w[..at].fill(fill);
                    w[at] = b;
                    let want = w.iter().position(|&c| !common(c)).unwrap_or(8);
                    assert_eq!(first_uncommon(u64::from_le_bytes(w)), want, "{w:?}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn word_test_agrees_with_the_byte_test(x in any::<u64>(), mask in any::<u64>()) {
            // Mostly common bytes, with any bytes where the mask says.
            let mut w = x.to_le_bytes();
            for (k, c) in w.iter_mut().enumerate() {
                if mask >> (8 * k) & 0x3 != 0 {
                    *c = b"abcxyz0189-/:;ABZ"[usize::from(*c) % 17];
                }
            }
            let want = w.iter().position(|&c| !common(c)).unwrap_or(8);
            prop_assert_eq!(first_uncommon(u64::from_le_bytes(w)), want);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn block_test_passes_only_plain_bytes() {
        for c in 0..=255u8 {
            if crate::simd::uncommon16(&[c; 16], 0) == Some([0, 0]) {
                assert_ne!(CLASS[c as usize] & PLAIN_XML, 0, "{c:#x}");
            }
        }
    }

    /// [`scan_path`] one byte at a time, each looked up in the table: what the vector and word
    /// tests must agree with.
    fn by_bytes<const XML: bool>(rest: &[u8], amps: &mut Amps) -> Option<usize> {
        let plain = if XML { PLAIN_XML } else { PLAIN };
        let mut part = 0;
        for at in 0..rest.len() {
            if CLASS[rest[at] as usize] & plain == 0 {
                match look::<XML>(rest, at, amps, &mut part) {
                    Look::Pass => {}
                    Look::End => return Some(at),
                    Look::Refuse => return None,
                }
            }
        }
        if XML { None } else { Some(rest.len()) }
    }

    /// Paths of long common runs (most of the sixteen-byte blocks) between the bytes that are
    /// looked at, in every position relative to the blocks.
    fn path() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "category-200/",
            "kettle-0",
            "abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "0123456789",
            "a",
            "/",
            "-",
            ":;",
            "?",
            "#",
            "=",
            "_",
            "~",
            ".",
            "..",
            "/.",
            "%",
            "%2e",
            "%2E",
            "'",
            "&",
            "&amp;",
            "&amp",
            "&lt;",
            "<",
            " ",
            "\"",
            "\u{e9}",
            "\u{7f}",
            "\t",
        ]);
        prop::collection::vec(piece, 0..24).prop_map(|v| format!("/{}", v.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn scan_agrees_with_the_byte_scan(p in path(), tail in "[<a]{0,20}") {
            let text = format!("{p}{tail}");
            let b = text.as_bytes();
            let (mut got, mut want) = (Amps::default(), Amps::default());
            prop_assert_eq!(scan_path::<true>(b, &mut got), by_bytes::<true>(b, &mut want));
            prop_assert_eq!((got.n, got.at), (want.n, want.at));
            let (mut got, mut want) = (Amps::default(), Amps::default());
            prop_assert_eq!(scan_path::<false>(b, &mut got), by_bytes::<false>(b, &mut want));
        }
    }
}
