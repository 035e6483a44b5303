//! Eight bytes read as one machine word: the hot path's readers (a `loc`'s path and origin,
//! a `lastmod`, a `changefreq`, the search for a text's end) test eight bytes with a few
//! arithmetic operations instead of eight table lookups, and all load their words here.

/// The eight bytes of `b` from `i`, the first in the lowest byte; `None` when fewer are left.
#[inline(always)]
pub(crate) fn word(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}
