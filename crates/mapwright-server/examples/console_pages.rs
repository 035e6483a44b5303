//! Bench: how long the console's pages take to answer for a big site: one sitemap of 100,000
//! stored URLs with 1,000 downloads (the last with 300 findings of five rules), an index with
//! 20 children, 2,000 failing URLs of every kind and 90 snapshots. Each page is requested
//! through the router in process (the store's queries and the HTML, no network) 20 times.
//!
//! `cargo run --release -p mapwright-server --example console_pages [-- --postgres]`: SQLite in
//! a temp dir, then (with `--postgres`) a fresh database on the local PostgreSQL server
//! (`MAPWRIGHT_TEST_PG`, default `postgres://postgres@127.0.0.1:5432`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use mapwright_server::{AppState, app};
use mapwright_store::{
    Actor, DownloadRecord, FetchSummary, FindingRecord, Source, Store, UrlCheckRecord, UrlQuery, UrlRecord,
};
use tower::ServiceExt;

const URLS: usize = 100_000;
const DOWNLOADS: usize = 1_000;
const RUNS: usize = 20;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    run(mapwright_store::open(None, dir.path()).await?, None).await?;
    if std::env::args().any(|a| a == "--postgres") {
        let pg = mapwright_store::testing::PgDatabase::create("mapwright_bench_console")
            .await
            .ok_or("PostgreSQL is not reachable")?;
        run(mapwright_store::open(Some(&pg.url), dir.path()).await?, Some(&pg.url)).await?;
    }
    Ok(())
}

async fn run(store: Arc<dyn Store>, postgres: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let t0 = 1_700_000_000;
    let started = Instant::now();
    let user = store.create_user("bench@example.com", "h", false, t0).await?;
    let actor = Actor::from(&user);
    let session = store.create_session(user.id, t0, 10 * 365 * 86_400).await?;
    let o = "https://bench.example";
    let site = store.create_site(actor, o, t0).await?;
    store.record_verification(site.id, true, t0).await?;
    let big = store.add_sitemap(actor, site.id, &format!("{o}/sitemap.xml"), Source::Api, t0).await?;
    let index = store.add_sitemap(actor, site.id, &format!("{o}/index.xml"), Source::Api, t0).await?;
    for i in 0..20 {
        store.add_sitemap_for_site(site.id, &format!("{o}/child-{i}.xml"), Source::Index, Some(index.id), t0).await?;
    }
    let rules = ["loc-not-absolute", "lastmod-format", "changefreq-value", "priority-range", "lastmod-future"];
    for round in 0..DOWNLOADS as i64 {
        let now = t0 + round * 3600;
        store.resubmit_sitemap(actor, big.id, now).await?;
        let leased = store.lease_due_sitemaps("bench", now, 100, 60).await?;
        for l in &leased {
            if l.id != big.id {
                let kinds = if l.id == index.id { "index" } else { "web" };
                let summary = FetchSummary {
                    kinds: Some(kinds.into()),
                    url_count: Some(50),
                    fetch_interval: 3600,
                    ..FetchSummary::default()
                };
                store.record_fetch_summary("bench", l.id, &summary).await?;
                let d = DownloadRecord { downloaded_at: now, status: "ok".into(), url_count: 50, ..Default::default() };
                store.complete("bench", l.id, &d, now + 10 * 365 * 86_400).await?;
                continue;
            }
            // Most downloads of a busy sitemap are unchanged; every tenth reads the file.
            let full = round % 10 == 0 || round == DOWNLOADS as i64 - 1;
            let findings: Vec<FindingRecord> = if round == DOWNLOADS as i64 - 1 {
                (0..300)
                    .map(|i| FindingRecord {
                        rule: rules[i % 5].into(),
                        severity: if i % 5 == 4 { "warning" } else { "error" }.into(),
                        line: Some(i as i64 + 2),
                        col: Some(5),
                        loc: Some(format!("{o}/page/{i}")),
                        message: format!("finding {i}"),
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let summary = FetchSummary {
                kinds: Some("web,image".into()),
                url_count: Some(URLS as i64),
                fetch_interval: 3600,
                ..FetchSummary::default()
            };
            store.record_fetch_summary("bench", l.id, &summary).await?;
            let d = DownloadRecord {
                downloaded_at: now,
                status: if full { if findings.is_empty() { "ok" } else { "errors" } } else { "unchanged" }.into(),
                http_status: Some(if full { 200 } else { 304 }),
                url_count: if full { URLS as i64 - round } else { 0 },
                findings,
                ..Default::default()
            };
            store.complete("bench", l.id, &d, now + 3600).await?;
        }
    }
    let now = t0 + DOWNLOADS as i64 * 3600;
    for chunk in (0..URLS).collect::<Vec<_>>().chunks(5_000) {
        let urls: Vec<UrlRecord> = chunk
            .iter()
            .map(|i| UrlRecord {
                loc: format!("{o}/page/{i}"),
                lastmod: Some("2024-01-01".into()),
                changefreq: None,
                priority: Some(0.5),
            })
            .collect();
        store.upsert_urls(site.id, big.id, &urls, now).await?;
    }
    let ids: Vec<i64> = store
        .list_urls(actor, site.id, UrlQuery { after: 0, limit: 2_000, include_removed: false })
        .await?
        .items
        .iter()
        .map(|u| u.id)
        .collect();
    let kinds = [
        (Some(404), "url-status", "answers 404"),
        (Some(410), "url-status", "answers 410"),
        (Some(503), "url-status", "answers 503"),
        (Some(301), "url-status", "redirects to https://bench.example/new (answers 301)"),
        (None, "url-noindex", "has noindex"),
        (None, "robots-disallowed", "is disallowed by its robots.txt"),
    ];
    let checks: Vec<UrlCheckRecord> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let (status, rule, message) = kinds[i % kinds.len()];
            UrlCheckRecord {
                url_id: *id,
                status,
                rule: Some(rule.into()),
                message: Some(format!("{o}/page/{i} {message}")),
                version: None,
            }
        })
        .collect();
    store.record_url_checks(site.id, &checks, now).await?;
    for day in 0..90 {
        store.record_site_snapshot(site.id, now - (90 - day) * 86_400).await?;
    }
    if let Some(url) = postgres {
        // The steady state of a server: PostgreSQL's autovacuum analyses a table within a
        // minute of a bulk import (its default naptime); without statistics, the planner takes
        // 100,000 fresh rows for a few hundred and sorts them all to show 50.
        let pool = sqlx::PgPool::connect(url).await?;
        sqlx::query("ANALYZE").execute(&pool).await?;
        pool.close().await;
    }
    let seeded = started.elapsed();

    let state = AppState::new(store.clone(), false);
    let cookie = format!("mapwright_session={session}");
    let pages = [
        ("My sitemaps", "/".to_owned()),
        ("sitemap (100,000 URLs, 1,000 downloads)", format!("/sitemaps/{}", big.id)),
        ("sitemap, URL search", format!("/sitemaps/{}?q=page/9999", big.id)),
        ("findings of a rule", format!("/sitemaps/{}/findings?rule=loc-not-absolute", big.id)),
        ("index", format!("/sitemaps/{}", index.id)),
        ("site", format!("/sites/{}", site.id)),
        ("site, 404s only", format!("/sites/{}?kind=404", site.id)),
        ("site findings of a rule", format!("/sites/{}/findings?rule=lastmod-future", site.id)),
    ];
    println!("{}: seeded in {seeded:.1?}", store.backend());
    for (name, uri) in pages {
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let request = Request::get(&uri).header("cookie", &cookie).body(Body::empty())?;
            let t = Instant::now();
            let response = app(state.clone()).oneshot(request).await?;
            let status = response.status();
            let bytes = response.into_body().collect().await?.to_bytes();
            times.push(t.elapsed());
            assert_eq!(status, StatusCode::OK, "{uri}: {}", String::from_utf8_lossy(&bytes));
        }
        times.sort();
        let median = times[RUNS / 2];
        let max = times[RUNS - 1];
        let verdict = if max < Duration::from_millis(50) { "ok" } else { "OVER 50 ms" };
        println!("  {name:<42} median {median:>8.2?}  max {max:>8.2?}  {verdict}");
    }
    Ok(())
}
