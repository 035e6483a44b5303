//! Any bytes through the reader: it must never panic, and must stop within its limits. The
//! input is also every further page it asks for (an OAI-PMH answer that names a next page), so
//! the paging is fuzzed too: it must end, within the byte limit summed over the pages.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mapwright_core::{Limits, PageRequest, Pager, ReadOptions, SitemapReader};
use std::io::{BufRead, Cursor};
use std::sync::Arc;

/// Answers every request with the same bytes.
struct Same(Vec<u8>);

impl Pager for Same {
    fn open(&self, _: &PageRequest) -> std::io::Result<Box<dyn BufRead + Send>> {
        Ok(Box::new(Cursor::new(self.0.clone())))
    }
}

fuzz_target!(|data: &[u8]| {
    // Small limits so the fuzzer reaches them with small inputs.
    let limits = Limits { max_bytes: 1 << 20, max_token_bytes: 64 << 10, max_findings: 64, ..Limits::default() };
    let pager: Arc<dyn Pager> = Arc::new(Same(data.to_vec()));
    let Ok(mut reader) = SitemapReader::paged(data, ReadOptions { limits }, Some(pager)) else { return };
    let mut n = 0;
    while let Ok(Some(entry)) = reader.next_entry() {
        // Every location a reader yields is a valid http(s) URL in normal form.
        let again = mapwright_core::Loc::parse(entry.loc().as_str()).expect("yielded loc re-parses");
        assert_eq!(again.as_str(), entry.loc().as_str());
        let _ = reader.entry_position();
        reader.drain_findings().for_each(drop);
        n += 1;
        // The same bytes are read at most twice: a repeated token, or a second answer without
        // records, ends the list.
        assert!(n <= 2 * (data.len() * 4 + 16), "more entries than the input can hold");
    }
    assert!(reader.bytes_read() <= 1 << 20);
});
