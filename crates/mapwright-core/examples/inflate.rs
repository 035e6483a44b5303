//! A bare inflate of a gzip file with the reader's own library and build (flate2 over zlib-rs,
//! its CPU features detected at run time): the limit a `.xml.gz` read is measured against
//! (`bench/read/bench.sh`). Prints the inflated size.

use std::io::Read;

fn main() {
    let path = std::env::args().nth(1).expect("usage: inflate FILE.gz");
    let file = std::io::BufReader::with_capacity(64 * 1024, std::fs::File::open(path).expect("open"));
    let mut dec = flate2::bufread::MultiGzDecoder::new(file);
    let mut buf = vec![0u8; 128 * 1024];
    let mut n = 0u64;
    loop {
        match dec.read(&mut buf).expect("inflate") {
            0 => break,
            k => n += k as u64,
        }
    }
    println!("bytes={n}");
}
