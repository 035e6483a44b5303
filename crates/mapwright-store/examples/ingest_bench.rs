//! Bench binary (`bench/serve/ingest.sh` runs it): stores a sitemap index of 10 children x
//! 50,000 URLs through the scheduler's write path (a stage per child in batches of 2,000, one
//! merge, the fetch summary and `complete` with its roll-ups), side by side in the same run with
//! a bare bulk load of the same rows into copies of the same tables with the same indexes
//! (`COPY` on PostgreSQL; one `INSERT ... SELECT` per table in one transaction on SQLite), and
//! prints the ratio. Then a refetch of the same bytes, the same URLs in other bytes, and one with
//! 1 % of the URLs changed; on PostgreSQL the bare load again without the URL search's trigram
//! index, to say what it costs.
//!
//! A child's entries are made before its timed calls: making them is the reader's work, not
//! the store's (the bare load's rows are made outside its timing too). A round's time is the
//! sum of its children's store calls, plus, on SQLite, a full checkpoint of the WAL at its end:
//! the store checkpoints in the background, and what it had not copied into the database file
//! when the round ended is counted (the bare load's commit checkpoints, and the same full
//! checkpoint after it is counted too).
//!
//! `cargo run --profile wheel -p mapwright-store --example ingest_bench [postgres://.../db]`
//! (release optimisation without LTO). Without a URL: SQLite in a temp dir only. With
//! `INGEST_BENCH_BARE_ONLY=1`, the bare load alone (`bench/serve/refetch.sh`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mapwright_store::{Actor, DownloadRecord, FetchSummary, PgStore, Source, SqliteStore, Store, UrlMerge, UrlRecord};
use sqlx::Connection;

const CHILDREN: usize = 10;
const PER_CHILD: usize = 50_000;
const BATCH: usize = 2_000;

fn entry(child: usize, i: usize, version: usize) -> UrlRecord {
    UrlRecord {
        loc: format!("https://bench.example/c{child}/products/item-{i:06}.html"),
        lastmod: Some(format!("2024-01-{:02}T10:00:00+00:00", 1 + version)),
        changefreq: Some("daily".into()),
        priority: Some(0.5),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // INGEST_BENCH_TRACE=sqlx::query=debug prints every statement with its time (to profile).
    if let Ok(filter) = std::env::var("INGEST_BENCH_TRACE") {
        tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::new(filter)).init();
    }
    let dir = tempfile::tempdir()?;
    // INGEST_BENCH_SKIP_SQLITE=1 measures PostgreSQL only.
    if std::env::var_os("INGEST_BENCH_SKIP_SQLITE").is_none() {
        let sqlite = Arc::new(SqliteStore::open_dir(dir.path()).await?);
        let bare = sqlite_bare(&dir.path().join("mapwright.db"));
        run(sqlite, bare).await?;
    }
    if let Some(url) = std::env::args().nth(1) {
        let pg = Arc::new(PgStore::open(&url).await?);
        run(pg, Bare::Postgres(url)).await?;
    }
    println!("peak RSS of this process: {} MB", peak_rss_kb() / 1024);
    Ok(())
}

enum Bare {
    Sqlite(String),
    Postgres(String),
}

fn sqlite_bare(path: &std::path::Path) -> Bare {
    Bare::Sqlite(format!("sqlite://{}", path.display()))
}

/// One round over the index's children: what the scheduler does per child.
async fn round(
    store: &dyn Store,
    bare: &Bare,
    site: i64,
    children: &[i64],
    now: i64,
    version: impl Fn(usize, usize) -> usize,
    same_content: bool,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let leased = store.lease_due_sitemaps("bench", now, 100, 3600).await?;
    assert!(children.iter().all(|c| leased.iter().any(|l| l.id == *c)), "every child leased");
    let mut phases = [Duration::ZERO; 4];
    for (c, &child) in children.iter().enumerate() {
        // The child's entries as the reader hands them over: the parser's work, not the
        // store's, so made before the child's timed calls (the bare load's rows are made
        // before its timed statements too).
        let entries: Vec<UrlRecord> = (0..PER_CHILD).map(|i| entry(c, i, version(c, i))).collect();
        let t = Instant::now();
        let mut stage = store.begin_url_stage("bench", site, child, now).await?;
        phases[3] += t.elapsed();
        let t = Instant::now();
        for batch in entries.chunks(BATCH) {
            store.stage_urls(&mut stage, batch).await?;
        }
        phases[0] += t.elapsed();
        drop(entries);
        let t = Instant::now();
        let merge = UrlMerge { sweep: true, same_content, quota: i64::MAX, now };
        store.merge_url_stage("bench", &stage, merge).await?;
        phases[1] += t.elapsed();
        let t = Instant::now();
        let summary = FetchSummary {
            kinds: Some("web".into()),
            url_count: Some(PER_CHILD as i64),
            fetch_interval: 3600,
            failures: 0,
            format: Some("urlset".into()),
            contents: None,
        };
        store.record_fetch_summary("bench", child, &summary).await?;
        let record = DownloadRecord {
            downloaded_at: now,
            status: "ok".into(),
            http_status: Some(200),
            url_count: PER_CHILD as i64,
            content_hash: Some(format!("{version}", version = version(c, 0))),
            ..DownloadRecord::default()
        };
        store.complete("bench", child, &record, now + 10).await?;
        phases[2] += t.elapsed();
    }
    // What of the round's writes is not in the database file yet (SQLite: the WAL's pages the
    // store's background checkpointer has not copied) is written now and counted: a round's
    // time is all of its work, as the bare load's is (its commit checkpoints).
    let settle = settle(bare).await?;
    let took = phases.iter().sum::<Duration>() + settle;
    let [stage, merge, complete, begin] = phases.map(|d| d.as_secs_f64());
    println!(
        "    (begin {begin:.3} s, stage {stage:.3} s, merge {merge:.3} s, summary and complete {complete:.3} s, \
         checkpoint left {:.3} s)",
        settle.as_secs_f64()
    );
    Ok(took)
}

async fn run(store: Arc<dyn Store>, bare: Bare) -> Result<(), Box<dyn std::error::Error>> {
    let t0 = 1_700_000_000;
    let backend = store.backend();
    let user = store.create_user(&format!("bench-{}@example.com", std::process::id()), "h", false, t0).await?;
    let actor = Actor::from(&user);
    let site = store.create_site(actor, "https://bench.example", t0).await?;
    store.record_verification(site.id, true, t0).await?;
    let index = store.add_sitemap(actor, site.id, "https://bench.example/index.xml", Source::Api, t0).await?;
    // The index read first (as the scheduler does), its children added by it.
    store.lease_due_sitemaps("bench", t0, 1, 3600).await?;
    let summary = FetchSummary {
        kinds: Some("index".into()),
        url_count: Some(CHILDREN as i64),
        fetch_interval: 3600,
        failures: 0,
        format: Some("sitemapindex".into()),
        contents: None,
    };
    store.record_fetch_summary("bench", index.id, &summary).await?;
    let mut children = Vec::new();
    for c in 0..CHILDREN {
        let url = format!("https://bench.example/c{c}.xml");
        children.push(store.add_sitemap_for_site(site.id, &url, Source::Index, Some(index.id), t0).await?.id);
    }
    let record = DownloadRecord { downloaded_at: t0, status: "ok".into(), ..DownloadRecord::default() };
    store.complete("bench", index.id, &record, t0 + 10_000).await?;

    let total = (CHILDREN * PER_CHILD) as f64;
    // INGEST_BENCH_BARE_ONLY=1: the bare load alone, the limit beside which bench/serve/refetch.sh
    // times the same rows ingested through `serve`.
    if std::env::var_os("INGEST_BENCH_BARE_ONLY").is_some() {
        let bare_time = bare_load(&bare, site.id, &children).await? + settle(&bare).await?;
        let s = bare_time.as_secs_f64();
        println!("{backend}: bare load, same rows {s:.3} s, {:.0} URLs/s", total / s);
        store.close().await;
        return Ok(());
    }
    let first = round(&*store, &bare, site.id, &children, t0 + 20, |_, _| 0, false).await?;
    // Its commit checkpoints (the connection's default); what it left is counted as a round's is.
    let bare_time = bare_load(&bare, site.id, &children).await? + settle(&bare).await?;
    let same = round(&*store, &bare, site.id, &children, t0 + 40, |_, _| 0, true).await?;
    // The same URLs in other bytes (the content hash differs): the stored URL set alone tells
    // that nothing changed.
    let same_urls = round(&*store, &bare, site.id, &children, t0 + 50, |_, _| 0, false).await?;
    let one_pct = round(&*store, &bare, site.id, &children, t0 + 60, |_, i| usize::from(i % 100 == 7), false).await?;
    let bare_plain = match &bare {
        Bare::Postgres(_) => Some(bare_load_without_search(&bare, site.id, &children).await?),
        Bare::Sqlite(_) => None,
    };
    let rollup: i64 = store.sitemap_by_id(index.id).await?.rollup_urls;
    assert_eq!(rollup, total as i64, "the index rolls up every URL");

    let s = |d: Duration| d.as_secs_f64();
    println!("{backend}: {CHILDREN} children x {PER_CHILD} URLs");
    println!("  first ingest          {:7.2} s  {:8.0} URLs/s", s(first), total / s(first));
    println!("  bare load, same rows  {:7.2} s  {:8.0} URLs/s", s(bare_time), total / s(bare_time));
    println!("  ingest / bare load    {:7.0} %", 100.0 * s(bare_time) / s(first));
    println!("  refetch, same bytes   {:7.2} s  {:5.1} % of the first ingest", s(same), 100.0 * s(same) / s(first));
    println!(
        "  same URLs, new bytes  {:7.2} s  {:5.1} % of the first ingest",
        s(same_urls),
        100.0 * s(same_urls) / s(first)
    );
    if let Some(plain) = bare_plain {
        println!(
            "  bare load without the trigram index {:7.2} s ({:.1}x faster than with it)",
            s(plain),
            s(bare_time) / s(plain)
        );
    }
    println!(
        "  refetch, 1 % changed  {:7.2} s  {:5.1} % of the first ingest",
        s(one_pct),
        100.0 * s(one_pct) / s(first)
    );
    store.close().await;
    Ok(())
}

/// SQLite: a full checkpoint of the WAL, timed (connecting is not); nothing on PostgreSQL.
async fn settle(bare: &Bare) -> Result<Duration, Box<dyn std::error::Error>> {
    let Bare::Sqlite(url) = bare else { return Ok(Duration::ZERO) };
    let mut conn = sqlx::SqliteConnection::connect(url).await?;
    let started = Instant::now();
    sqlx::query("PRAGMA wal_checkpoint(FULL)").execute(&mut conn).await?;
    let took = started.elapsed();
    conn.close().await?;
    Ok(took)
}

/// The same rows loaded bare into copies of `urls` and `sitemap_urls` with the same indexes
/// (and foreign keys), timed; the copies are dropped afterwards.
async fn bare_load(bare: &Bare, site: i64, children: &[i64]) -> Result<Duration, Box<dyn std::error::Error>> {
    match bare {
        Bare::Postgres(url) => pg_bare(url, site, children).await,
        Bare::Sqlite(url) => sqlite_bare_load(url, site, children).await,
    }
}

/// The bare load on PostgreSQL without the URL search's trigram index: what that index costs.
async fn bare_load_without_search(
    bare: &Bare,
    site: i64,
    children: &[i64],
) -> Result<Duration, Box<dyn std::error::Error>> {
    match bare {
        Bare::Postgres(url) => pg_bare_with(url, site, children, false).await,
        Bare::Sqlite(url) => sqlite_bare_load(url, site, children).await,
    }
}

async fn pg_bare(url: &str, site: i64, children: &[i64]) -> Result<Duration, Box<dyn std::error::Error>> {
    pg_bare_with(url, site, children, true).await
}

async fn pg_bare_with(
    url: &str,
    site: i64,
    children: &[i64],
    search_index: bool,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    for ddl in [
        "CREATE TABLE bare_urls (LIKE urls INCLUDING ALL)",
        "ALTER TABLE bare_urls ADD FOREIGN KEY (site_id) REFERENCES sites(id) ON DELETE CASCADE",
        "CREATE TABLE bare_sitemap_urls (LIKE sitemap_urls INCLUDING ALL)",
        "ALTER TABLE bare_sitemap_urls ADD FOREIGN KEY (sitemap_id) REFERENCES sitemaps(id) ON DELETE CASCADE",
        "ALTER TABLE bare_sitemap_urls ADD FOREIGN KEY (url_id) REFERENCES bare_urls(id) ON DELETE CASCADE",
    ] {
        sqlx::query(ddl).execute(&mut conn).await?;
    }
    if !search_index {
        let gin: Vec<String> = sqlx::query_scalar(
            "SELECT indexname::text FROM pg_indexes WHERE tablename = 'bare_urls' AND indexdef LIKE '%gin%'",
        )
        .fetch_all(&mut conn)
        .await?;
        for index in gin {
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP INDEX \"{index}\""))).execute(&mut conn).await?;
        }
    }
    let started = Instant::now();
    let mut untimed = Duration::ZERO;
    let mut tx = conn.begin().await?;
    let mut id = 0_i64;
    {
        let mut copy = tx
            .copy_in_raw(
                "COPY bare_urls (id, site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, \
                 last_seen_at, changed_at) FROM STDIN",
            )
            .await?;
        for c in 0..children.len() {
            // The entries are made outside the timing, as the store path's are.
            let made = Instant::now();
            let entries: Vec<UrlRecord> = (0..PER_CHILD).map(|i| entry(c, i, 0)).collect();
            untimed += made.elapsed();
            let mut text = String::with_capacity(BATCH * 160);
            for (i, u) in entries.into_iter().enumerate() {
                id += 1;
                let hash = hex_hash(&u.loc);
                text.push_str(&format!(
                    "{id}\t{site}\t{}\t\\\\x{hash}\t{}\tdaily\t0.5\t1\t1\t1\n",
                    u.loc,
                    u.lastmod.unwrap_or_default()
                ));
                if i % BATCH == BATCH - 1 {
                    copy.send(std::mem::take(&mut text).into_bytes()).await?;
                }
            }
            copy.send(text.into_bytes()).await?;
        }
        copy.finish().await?;
    }
    {
        let mut copy = tx.copy_in_raw("COPY bare_sitemap_urls (sitemap_id, url_id, last_seen_at) FROM STDIN").await?;
        let mut id = 0_i64;
        for child in children {
            let mut text = String::with_capacity(BATCH * 24);
            for i in 0..PER_CHILD {
                id += 1;
                text.push_str(&format!("{child}\t{id}\t1\n"));
                if i % BATCH == BATCH - 1 {
                    copy.send(std::mem::take(&mut text).into_bytes()).await?;
                }
            }
            copy.send(text.into_bytes()).await?;
        }
        copy.finish().await?;
    }
    tx.commit().await?;
    let took = started.elapsed() - untimed;
    sqlx::query("DROP TABLE bare_sitemap_urls, bare_urls").execute(&mut conn).await?;
    Ok(took)
}

async fn sqlite_bare_load(url: &str, site: i64, children: &[i64]) -> Result<Duration, Box<dyn std::error::Error>> {
    let mut conn = sqlx::SqliteConnection::connect(url).await?;
    // The store's own settings (see `SqliteStore`).
    for pragma in [
        "PRAGMA mmap_size = 268435456",
        "PRAGMA cache_size = -16384",
        "PRAGMA synchronous = NORMAL",
        "PRAGMA foreign_keys = ON",
    ] {
        sqlx::query(pragma).execute(&mut conn).await?;
    }
    // Copies of the tables and their indexes, from the schema SQLite keeps.
    let schema: Vec<(String, String)> = sqlx::query_as(
        "SELECT type, sql FROM sqlite_master WHERE tbl_name IN ('urls', 'sitemap_urls') AND sql IS NOT NULL \
         ORDER BY type DESC",
    )
    .fetch_all(&mut conn)
    .await?;
    for (_, sql) in &schema {
        let copy = sql
            .replace("CREATE TABLE urls", "CREATE TABLE bare_urls")
            .replace("CREATE TABLE sitemap_urls", "CREATE TABLE bare_sitemap_urls")
            .replace("REFERENCES urls(id)", "REFERENCES bare_urls(id)")
            .replace("INDEX ", "INDEX bare_")
            .replace(" ON urls(", " ON bare_urls(")
            .replace(" ON urls (", " ON bare_urls (")
            .replace(" ON sitemap_urls(", " ON bare_sitemap_urls(")
            .replace(" ON sitemap_urls (", " ON bare_sitemap_urls (");
        sqlx::query(sqlx::AssertSqlSafe(copy)).execute(&mut conn).await?;
    }
    // The source rows, in a plain table (not timed: the bare load is the INSERT ... SELECT).
    sqlx::query(
        "CREATE TABLE bare_src (id INTEGER PRIMARY KEY, sitemap_id INTEGER, loc TEXT, loc_hash BLOB, lastmod TEXT)",
    )
    .execute(&mut conn)
    .await?;
    let mut tx = conn.begin().await?;
    let mut id = 0_i64;
    for (c, child) in children.iter().enumerate() {
        for chunk in (0..PER_CHILD).collect::<Vec<_>>().chunks(500) {
            let mut insert = sqlx::QueryBuilder::new("INSERT INTO bare_src (id, sitemap_id, loc, loc_hash, lastmod) ");
            insert.push_values(chunk, |mut row, i| {
                id += 1;
                let u = entry(c, *i, 0);
                let hash = hex::decode(hex_hash(&u.loc)).unwrap_or_default();
                row.push_bind(id).push_bind(*child).push_bind(u.loc).push_bind(hash).push_bind(u.lastmod);
            });
            insert.build().execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    let started = Instant::now();
    let mut tx = conn.begin().await?;
    sqlx::query(
        "INSERT INTO bare_urls (id, site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, \
         last_seen_at, changed_at) SELECT id, $1, loc, loc_hash, lastmod, 'daily', 0.5, 1, 1, 1 FROM bare_src",
    )
    .bind(site)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO bare_sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT sitemap_id, id, 1 FROM bare_src",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    let took = started.elapsed();
    for drop in ["DROP TABLE bare_sitemap_urls", "DROP TABLE bare_urls", "DROP TABLE bare_src"] {
        sqlx::query(drop).execute(&mut conn).await?;
    }
    Ok(took)
}

/// The store's URL key (`loc_hash`: the first 16 bytes of SHA-256), in hex.
fn hex_hash(loc: &str) -> String {
    use sha2::Digest;
    hex::encode(&sha2::Sha256::digest(loc.as_bytes())[..16])
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.to_owned()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}
