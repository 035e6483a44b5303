//! Bench binary: how long storing one 50,000-URL sitemap takes on each backend (first read:
//! all inserts; second read: all updates; then the sweep), and how long leasing takes.
//!
//! `cargo run --release -p mapwright-store --example upsert_timing [postgres://.../db]`
//! (dependencies are optimised in dev builds too). Without a URL: SQLite in a temp dir only.

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::{Res, T0, on_each_backend};
use mapwright_store::{Actor, Site, Source, Store, UrlRecord};

const URLS: usize = 50_000;

#[tokio::main]
async fn main() -> Res {
    on_each_backend(run).await
}

async fn run(store: Arc<dyn Store>, actor: Actor, site: Site) -> Res {
    let sitemap = store.add_sitemap(actor, site.id, "https://bench.example/s.xml", Source::Api, T0).await?;
    let urls: Vec<UrlRecord> = (0..URLS)
        .map(|i| UrlRecord {
            loc: format!("https://bench.example/page-{i}.html"),
            lastmod: Some("2024-01-01".into()),
            changefreq: Some("daily".into()),
            priority: Some(0.5),
        })
        .collect();
    for (label, now) in [("insert", T0), ("update", T0 + 10)] {
        let start = Instant::now();
        for chunk in urls.chunks(1000) {
            store.upsert_urls(site.id, sitemap.id, chunk, now).await?;
        }
        let took = start.elapsed();
        println!(
            "{:8} {label} {URLS} URLs: {:.2} s ({:.0} URLs/s)",
            store.backend(),
            took.as_secs_f64(),
            URLS as f64 / took.as_secs_f64()
        );
    }
    let start = Instant::now();
    store.sweep_urls(site.id, sitemap.id, T0 + 10, T0 + 10).await?;
    println!("{:8} sweep: {:.3} s", store.backend(), start.elapsed().as_secs_f64());
    store.close().await;
    Ok(())
}
