//! Bench binary: how long the console's "My sitemaps" page query (`list_sitemap_summaries`:
//! each row's own stored numbers, no look-up of its downloads) takes when every sitemap has a
//! long download history.
//!
//! `cargo run --release -p mapwright-store --example console_timing [postgres://.../db]`.
//! Without a URL: SQLite in a temp dir only.

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::{Res, T0, on_each_backend};
use mapwright_store::{Actor, DownloadRecord, FetchSummary, Site, Source, Store};

const SITEMAPS: usize = 50;
const DOWNLOADS: usize = 400;

#[tokio::main]
async fn main() -> Res {
    on_each_backend(run).await
}

async fn run(store: Arc<dyn Store>, actor: Actor, site: Site) -> Res {
    store.record_verification(site.id, true, T0).await?;
    for i in 0..SITEMAPS {
        store.add_sitemap(actor, site.id, &format!("https://bench.example/s{i}.xml"), Source::Api, T0).await?;
    }
    let started = Instant::now();
    for round in 0..DOWNLOADS as i64 {
        let now = T0 + round;
        for leased in store.lease_due_sitemaps("bench", now, SITEMAPS as i64, 60).await? {
            // Most downloads of a busy sitemap are "unchanged"; every tenth reads the file.
            let status = if round % 10 == 0 { "ok" } else { "unchanged" };
            if status == "ok" {
                let summary = FetchSummary { url_count: Some(7), fetch_interval: 3600, ..Default::default() };
                store.record_fetch_summary("bench", leased.id, &summary).await?;
            }
            let d = DownloadRecord { downloaded_at: now, status: status.into(), url_count: 7, ..Default::default() };
            store.complete("bench", leased.id, &d, now + 1).await?;
        }
    }
    let seeded = started.elapsed();
    let runs = 50;
    let started = Instant::now();
    for _ in 0..runs {
        let page = store.list_sitemap_summaries(actor, 0, 50).await?;
        assert_eq!(page.items.len(), SITEMAPS);
        assert!(page.items.iter().all(|s| s.sitemap.url_count == Some(7)));
    }
    let per_page = started.elapsed() / runs;
    println!(
        "{}: {SITEMAPS} sitemaps x {DOWNLOADS} downloads (seeded in {seeded:.1?}); the table page query takes {per_page:.2?}",
        store.backend()
    );
    Ok(())
}
