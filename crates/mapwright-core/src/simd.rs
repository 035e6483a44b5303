//! Sixteen bytes classified at once, in SSE2 registers (every x86_64 processor has SSE2).
//!
//! Not with `core::arch` intrinsics: Rust (1.95 too) makes a call to one unsafe unless the
//! calling function itself is `#[target_feature(enable = "sse2")]`, even where the build
//! enables SSE2, and such a function is unsafe to call from any other; the crate has no
//! `unsafe`. The classification is written instead as the same operations on each byte of a
//! `[u8; 16]`, with no branch and no carry between bytes, which LLVM compiles to one vector
//! load and a dozen SSE2 instructions (paddb, pminub, pcmpeqb, por, pand: checked in the
//! release build's assembly).

use crate::word::word;

/// The bytes of `b[i..i + 16]` that are not letters (either case), digits or one of `-/:;=`:
/// the high bit of each such byte is set in two words (bytes `i..i + 8`, then the next eight,
/// the first in the lowest byte), nothing else; `None` when fewer than 16 bytes are left. The
/// set of the word test of `loc/path.rs` (`uncommon`) and the `=` of a query's pairs (two
/// compares more a block, two bytes fewer to look at in a usual query), with every such byte
/// flagged exactly, not only the first: all of them can be looked at without loading the
/// bytes again.
#[inline(always)]
pub(crate) fn uncommon16(b: &[u8], i: usize) -> Option<[u64; 2]> {
    const H: u64 = 0x8080_8080_8080_8080;
    let x: &[u8; 16] = b.get(i..i + 16)?.try_into().ok()?;
    // A loop, not `array::from_fn`: LLVM vectorizes both, but left that one out of line.
    let mut flags = [0u8; 16];
    for (f, &c) in flags.iter_mut().zip(x) {
        *f = 0u8.wrapping_sub(u8::from(!common(c)));
    }
    // Inlined into the scan, LLVM's vectorizer took the words' use below for part of the
    // classification and made a hundred scalar and shuffle instructions of it; the flags held
    // in memory between the two (a store and two loads) keep the sixteen bytes' work in a
    // dozen vector instructions. A hint only: without it the answer is the same.
    let flags = std::hint::black_box(flags);
    Some([word(&flags, 0)? & H, word(&flags, 8)? & H])
}

/// Whether `c` is a letter (either case), a digit or one of `-/:;=`: two range tests and two
/// equalities, each one vector instruction or two for sixteen bytes.
#[inline(always)]
fn common(c: u8) -> bool {
    let punct = c.wrapping_sub(b'-') <= b';' - b'-' && c != b'.';
    let letter = (c | 0x20).wrapping_sub(b'a') <= b'z' - b'a';
    punct | letter | (c == b'=')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The set, one byte at a time, as `url`'s terms would name it.
    fn plain(c: u8) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, b'-' | b'/' | b':' | b';' | b'=')
    }

    fn by_bytes(b: &[u8]) -> [u64; 2] {
        let mut w = [0u64; 2];
        for (k, &c) in b.iter().enumerate() {
            if !plain(c) {
                w[k / 8] |= 0x80 << (8 * (k % 8));
            }
        }
        w
    }

    #[test]
    fn every_byte_at_every_place() {
        for c in 0..=255u8 {
            assert_eq!(common(c), plain(c), "{c:#x}");
            for at in 0..16 {
                for fill in [b'a', 0xff, b'.', 0x00, b'Z', 0x80, b';', b'<'] {
                    let mut w = [fill; 16];
                    w[at] = c;
                    assert_eq!(uncommon16(&w, 0), Some(by_bytes(&w)), "{w:?}");
                }
            }
        }
        assert_eq!(uncommon16(&[b'a'; 15], 0), None);
        assert_eq!(uncommon16(&[b'a'; 20], 5), None);
        assert_eq!(uncommon16(&[b'a'; 20], 4), Some([0, 0]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn mask_agrees_with_the_byte_test(x in any::<[u8; 16]>(), mask in any::<u16>(), at in 0usize..4) {
            // Mostly common bytes, with any bytes where the mask says.
            let mut w = [0u8; 20];
            w[at..at + 16].copy_from_slice(&x);
            for (k, c) in w.iter_mut().enumerate().skip(at).take(16) {
                if mask >> (k - at) & 1 != 0 {
                    *c = b"abcxyz0189-/:;ABZ"[usize::from(*c) % 17];
                }
            }
            prop_assert_eq!(uncommon16(&w, at), Some(by_bytes(&w[at..at + 16])));
        }
    }
}
