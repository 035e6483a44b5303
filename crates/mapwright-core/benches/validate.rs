//! Validating costs at most 1.5 times reading: the 50,000-URL file of shared/bench, read with
//! `SitemapReader` and validated with `Validator`, in the same run.
//!
//! The corpus comes from `python3 shared/bench/gen_corpus.py --out /tmp/sitemap-bench` (or
//! `$MAPWRIGHT_BENCH_CORPUS`); without it, a file of the same shape (50,000 URLs with loc,
//! lastmod, changefreq, priority, 8% non-ASCII paths, `&amp;` in every query) is generated here.
//! Besides criterion's figures, the run prints both medians and their ratio.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mapwright_core::validate::{Config, Validator};
use mapwright_core::{ReadOptions, SitemapReader};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn corpus() -> Vec<u8> {
    let dir = std::env::var("MAPWRIGHT_BENCH_CORPUS").unwrap_or_else(|_| "/tmp/sitemap-bench".into());
    let path = std::path::Path::new(&dir).join("s50k.xml");
    match std::fs::read(&path) {
        Ok(b) => {
            println!("corpus: {} ({} bytes)", path.display(), b.len());
            b
        }
        Err(_) => {
            println!("corpus: {} not found; generating one of the same shape", path.display());
            generate()
        }
    }
}

/// 50,000 URLs shaped like gen_corpus.py's s50k.xml, from a fixed-seed generator.
fn generate() -> Vec<u8> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let words = ["blue", "red", "cotton", "leather", "shirt", "jacket", "table", "lamp", "kettle", "desk", "watch"];
    let freqs = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"];
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for i in 0..50_000 {
        let cat = 1 + rnd(250);
        let path = if rnd(100) < 8 {
            format!("/kategorie-{cat}/%C3%BCber-gr%C3%B6%C3%9Fe-{i}")
        } else {
            let n = 1 + rnd(3);
            let name: Vec<&str> = (0..n).map(|_| words[rnd(words.len() as u64) as usize]).collect();
            format!("/category-{cat}/{}-{i}", name.join("-"))
        };
        let (y, m, d) = (2015 + rnd(11), 1 + rnd(12), 1 + rnd(28));
        let lastmod = if rnd(10) < 4 {
            format!("{y:04}-{m:02}-{d:02}")
        } else {
            format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00", rnd(24), rnd(60), rnd(60))
        };
        s += &format!(
            "<url>\n  <loc>https://www.example.com{path}?id={i}&amp;ref=x</loc>\n  <lastmod>{lastmod}</lastmod>\n  <changefreq>{}</changefreq>\n  <priority>0.{}</priority>\n</url>\n",
            freqs[rnd(7) as usize],
            rnd(10)
        );
    }
    s += "</urlset>\n";
    s.into_bytes()
}

fn read(bytes: &[u8]) -> u64 {
    let mut r = SitemapReader::new(bytes, ReadOptions::default()).unwrap();
    let mut n = 0;
    while let Some(e) = r.next_entry().unwrap() {
        black_box(&e);
        n += 1;
        r.take_findings(|f| drop(black_box(f)));
    }
    n
}

fn validate(v: &Validator, bytes: &[u8]) -> u64 {
    let mut findings = 0u64;
    let out = v.run(bytes, &mut |f| {
        black_box(&f);
        findings += 1;
    });
    black_box(findings);
    out.entries
}

/// Medians of `a` and `b`, timed alternately so both see the same load on a shared machine.
fn medians(mut a: impl FnMut(), mut b: impl FnMut(), runs: usize) -> (Duration, Duration) {
    let time = |f: &mut dyn FnMut()| {
        let s = Instant::now();
        f();
        s.elapsed()
    };
    let (mut ta, mut tb): (Vec<Duration>, Vec<Duration>) = (0..runs).map(|_| (time(&mut a), time(&mut b))).unzip();
    ta.sort();
    tb.sort();
    (ta[runs / 2], tb[runs / 2])
}

fn bench(c: &mut Criterion) {
    let bytes = corpus();
    let v = Validator::new(Config::default());
    assert_eq!(read(&bytes), 50_000);
    assert_eq!(validate(&v, &bytes), 50_000);
    // Both figures from the same process, alternating, before criterion's own runs.
    let (r, w) = medians(|| _ = black_box(read(&bytes)), || _ = black_box(validate(&v, &bytes)), 31);
    println!(
        "s50k: read {:.2} ms, validate {:.2} ms, ratio {:.2} (limit 1.5)",
        r.as_secs_f64() * 1e3,
        w.as_secs_f64() * 1e3,
        w.as_secs_f64() / r.as_secs_f64()
    );
    let mut g = c.benchmark_group("s50k");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(20);
    g.bench_function("read", |b| b.iter(|| read(black_box(&bytes))));
    g.bench_function("validate", |b| b.iter(|| validate(&v, black_box(&bytes))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
