//! Any bytes after gzip's magic and method, through the reader: the members' headers (every
//! flag and optional field), deflate streams and trailers of `read/members.rs`. It must never
//! panic, never read past its byte limit, and a stream that does not end cleanly must be a
//! fault, never a quiet end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mapwright_core::{Limits, ReadOptions, SitemapReader};

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 1 << 20, max_token_bytes: 64 << 10, max_findings: 64, ..Limits::default() };
    let mut input = b"\x1f\x8b\x08".to_vec();
    input.extend_from_slice(data);
    let Ok(mut reader) = SitemapReader::new(&input[..], ReadOptions { limits }) else { return };
    while let Ok(Some(_)) = reader.next_entry() {
        reader.drain_findings().for_each(drop);
    }
    assert!(reader.bytes_read() <= 1 << 20);
});
