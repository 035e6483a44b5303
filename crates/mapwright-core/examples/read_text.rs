//! Reads a sitemap and prints each entry's `loc` as written, one a line, as `mapwright read
//! --format text` does (findings drained, not printed): the CLI's hot path without the CLI,
//! for profiling the reader in a short build.

use std::io::Write;

fn main() {
    let path = std::env::args().nth(1).expect("usage: read_text FILE");
    let file = std::io::BufReader::with_capacity(64 * 1024, std::fs::File::open(path).expect("open"));
    let input = mapwright_core::read::Input::owned(Box::new(file));
    let mut r = mapwright_core::SitemapReader::new(input, mapwright_core::ReadOptions::default()).expect("sitemap");
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    while let Some(e) = r.next_entry().expect("read") {
        r.take_findings(drop);
        out.write_all(e.loc().written().as_bytes()).expect("write");
        out.write_all(b"\n").expect("write");
    }
    out.flush().expect("flush");
}
