//! Criterion benchmarks of the writers: encoding `<url>` entries into memory (escaping, dates,
//! priorities), with and without extensions, and the text writer.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mapwright_core::write::{Namespaces, TextWriter, UrlsetWriter};
use mapwright_core::{Alternate, ChangeFreq, Image, Lastmod, Loc, UrlEntry, W3cDateTime};
use std::hint::black_box;

/// Entries like the peer harness's `record(i)`: `&` in every URL, 8 % non-ASCII paths, a date
/// or a date-time, changefreq and priority.
fn entries(n: u64, extensions: bool) -> Vec<UrlEntry> {
    (0..n)
        .map(|i| {
            let url = if i % 12 == 5 {
                format!("https://www.example.com/kategorie-{}/%C3%BCber-gr%C3%B6%C3%9Fe-{i}?id={i}&ref=x", i % 250 + 1)
            } else {
                format!("https://www.example.com/category-{}/blue-lamp-{i}?id={i}&ref=x", i % 250 + 1)
            };
            let mut e = UrlEntry::new(Loc::parse(&url).unwrap());
            let date =
                if i % 2 == 0 { "2020-03-04".to_string() } else { format!("2020-03-04T05:06:{:02}+00:00", i % 60) };
            e.lastmod = Some(Lastmod::W3c(W3cDateTime::parse(&date).unwrap()));
            e.changefreq = Some(ChangeFreq::ALL[(i % 7) as usize]);
            e.priority = Some((1 + i % 10) as f32 / 10.0);
            if extensions {
                e.ext_mut().images.push(Image {
                    loc: format!("https://img.example.com/{i}.jpg"),
                    caption: Some("A <b> & c".into()),
                    ..Image::default()
                });
                e.ext_mut()
                    .alternates
                    .push(Alternate { hreflang: "de".into(), href: format!("https://www.example.com/de/{i}") });
            }
            e
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("write");
    for (name, ext) in [("urlset", false), ("urlset+extensions", true)] {
        let es = entries(50_000, ext);
        g.throughput(Throughput::Elements(es.len() as u64));
        g.bench_function(name, |b| {
            let mut out = Vec::with_capacity(32 << 20);
            b.iter(|| {
                out.clear();
                let mut w = UrlsetWriter::new(&mut out, Namespaces::of_all(&es)).unwrap();
                for e in &es {
                    w.write(black_box(e)).unwrap();
                }
                w.finish().unwrap();
            })
        });
    }
    let es = entries(50_000, false);
    g.bench_function("text", |b| {
        let mut out = Vec::with_capacity(8 << 20);
        b.iter(|| {
            out.clear();
            let mut w = TextWriter::new(&mut out);
            for e in &es {
                w.write(black_box(e)).unwrap();
            }
            w.finish().unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
