//! Bench binary: how long the console's "My sitemaps" page query (`list_sitemap_summaries`:
//! each row's own stored numbers, no look-up of its downloads) takes when every sitemap has a
//! long download history.
//!
//! `cargo run --release -p mapwright-store --example console_timing [postgres://.../db]`.
//! Without a URL: SQLite in a temp dir only.
//!
//! Its set-up (open each backend, a user and a verified site) is `upsert_timing.rs`'s: each
//! example is a binary of its own, run alone, and examples share no module.

use std::sync::Arc;
use std::time::Instant;

use mapwright_store::{Actor, DownloadRecord, FetchSummary, PgStore, Source, SqliteStore, Store};

const SITEMAPS: usize = 50;
const DOWNLOADS: usize = 400;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    run(Arc::new(SqliteStore::open_dir(dir.path()).await?)).await?;
    if let Some(url) = std::env::args().nth(1) {
        run(Arc::new(PgStore::open(&url).await?)).await?;
    }
    Ok(())
}

async fn run(store: Arc<dyn Store>) -> Result<(), Box<dyn std::error::Error>> {
    let t0 = 1_700_000_000;
    let user = store.create_user(&format!("bench-{}@example.com", std::process::id()), "h", false, t0).await?;
    let actor = Actor::from(&user);
    let site = store.create_site(actor, "https://bench.example", t0).await?;
    store.record_verification(site.id, true, t0).await?;
    for i in 0..SITEMAPS {
        store.add_sitemap(actor, site.id, &format!("https://bench.example/s{i}.xml"), Source::Api, t0).await?;
    }
    let started = Instant::now();
    for round in 0..DOWNLOADS as i64 {
        let now = t0 + round;
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
