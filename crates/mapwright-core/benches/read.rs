//! Reading throughput on the shared benchmark corpus (`shared/bench/gen_corpus.py`), side by side
//! with the bare quick-xml loop that only counts `<loc>` (the peers' harness `quickxml_count`):
//! the ratio between the two is the cost of full parsing (entities, URLs, dates, extensions).
//!
//! The corpus is read from `$MAPWRIGHT_BENCH_CORPUS` (default `/tmp/sitemap-bench`), and made
//! with `python3 shared/bench/gen_corpus.py --out DIR` when missing.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flate2::bufread::MultiGzDecoder;
use mapwright_core::{ReadOptions, SitemapReader};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var("MAPWRIGHT_BENCH_CORPUS").unwrap_or_else(|_| "/tmp/sitemap-bench".into()));
    if !dir.join("s50k.xml").exists() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/gen_corpus.py");
        let ok = std::process::Command::new("python3")
            .arg(&script)
            .arg("--out")
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("no corpus at {} and {} could not make it: skipping", dir.display(), script.display());
            return None;
        }
    }
    Some(dir)
}

/// The peers' baseline: quick-xml events, `<loc>` inside `<url>` counted, nothing decoded.
fn quickxml_count(input: impl BufRead) -> u64 {
    let mut r = Reader::from_reader(input);
    let mut buf = Vec::with_capacity(4096);
    let (mut in_url, mut n) = (false, 0);
    loop {
        match r.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => match e.name().0 {
                "url" => in_url = true,
                "loc" if in_url => n += 1,
                _ => {}
            },
            Ok(Event::End(e)) if e.name().0 == "url" => in_url = false,
            Ok(Event::Eof) => break,
            Err(e) => panic!("{e}"),
            _ => {}
        }
        buf.clear();
    }
    n
}

fn gunzip_if_needed(bytes: &[u8]) -> Box<dyn BufRead + '_> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::with_capacity(64 * 1024, MultiGzDecoder::new(bytes)))
    } else {
        Box::new(bytes)
    }
}

fn mapwright_read(bytes: &[u8]) -> u64 {
    let mut r = SitemapReader::new(bytes, ReadOptions::default()).unwrap();
    let mut n = 0;
    while let Some(e) = r.next_entry().unwrap() {
        black_box(&e);
        n += 1;
        r.take_findings(drop);
    }
    n
}

fn bench(c: &mut Criterion) {
    let Some(dir) = corpus() else { return };
    for name in ["s50k.xml", "s50k.xml.gz", "s50k-ext.xml"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(mapwright_read(&bytes), 50_000);
        assert_eq!(quickxml_count(gunzip_if_needed(&bytes)), 50_000);
        let mut g = c.benchmark_group(name);
        g.sample_size(30);
        g.throughput(Throughput::Elements(50_000));
        g.bench_function("quick-xml loop (baseline)", |b| {
            b.iter(|| quickxml_count(gunzip_if_needed(black_box(&bytes))))
        });
        g.bench_function("mapwright read", |b| b.iter(|| mapwright_read(black_box(&bytes))));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
