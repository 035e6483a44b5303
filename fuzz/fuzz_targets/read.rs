//! Any bytes through the reader: it must never panic, and must stop within its limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mapwright_core::{Limits, ReadOptions, SitemapReader};

fuzz_target!(|data: &[u8]| {
    // Small limits so the fuzzer reaches them with small inputs.
    let limits = Limits { max_bytes: 1 << 20, max_token_bytes: 64 << 10, max_findings: 64, ..Limits::default() };
    let Ok(mut reader) = SitemapReader::new(data, ReadOptions { limits }) else { return };
    let mut n = 0;
    while let Ok(Some(entry)) = reader.next_entry() {
        // Every location a reader yields is a valid http(s) URL in normal form.
        let again = mapwright_core::Loc::parse(entry.loc().as_str()).expect("yielded loc re-parses");
        assert_eq!(again.as_str(), entry.loc().as_str());
        let _ = reader.entry_position();
        reader.drain_findings().for_each(drop);
        n += 1;
        assert!(n <= data.len() * 4 + 16, "more entries than the input can hold");
    }
    assert!(reader.bytes_read() <= 1 << 20);
});
