//! Counts the entries of a sitemap file: a minimal program for profiling the reader.

fn main() {
    let path = std::env::args().nth(1).expect("usage: count FILE");
    let file = std::io::BufReader::with_capacity(64 * 1024, std::fs::File::open(path).expect("open"));
    let mut r = mapwright_core::SitemapReader::new(file, mapwright_core::ReadOptions::default()).expect("sitemap");
    let mut n = 0u64;
    while let Some(e) = r.next_entry().expect("read") {
        std::hint::black_box(&e);
        n += 1;
        r.take_findings(drop);
    }
    println!("entries={n}");
}
