//! The store's shape for growing past one database server (ARCHITECTURE.md, "Past one
//! PostgreSQL"): every statement the store sends that touches a URL-scale table names the one
//! site (or the one sitemap, or URL, of one site) it works on, so that with the URL tables
//! distributed or partitioned by `site_id` each goes to one shard. The statements are not
//! read from the source but captured as sqlx sends them (its `sqlx::query` trace events),
//! while the hot operations run on PostgreSQL: whatever SQL a future change writes is checked.

use std::sync::{Arc, Mutex};

use mapwright_store::testing::PgDatabase;
use mapwright_store::{
    CheckTrigger, DownloadRecord, FetchSummary, FindingQuery, IndexChild, LeasePolicy, PgStore, Retention, Source,
    Store, UrlCheckRecord, UrlMerge, UrlQuery, UrlRecord,
};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

use crate::support::{T0, user, verified_site};

/// The tables that grow with the URLs of the sites: the ones a distributed store splits by site.
const URL_TABLES: [&str; 4] = ["urls", "url_checks", "sitemap_urls", "read_diff_urls"];

/// Statements on URL tables that name no site, each with why it is not on the hot path. The
/// test fails when one of these is no longer sent (keep the list true) and when a statement
/// outside it names no site.
const NOT_PER_SITE: [(&str, &str); 2] = [
    // `Store::url_sitemaps`: no page or API route calls it.
    ("SELECT u.id FROM urls u JOIN sites s ON s.id = u.site_id WHERE u.id = $1", "a URL by id, called by no page"),
    // Retention: URLs removed long ago, in short batches, hourly; on a distributed store it runs
    // on every shard in parallel, as maintenance should.
    ("DELETE FROM urls WHERE id IN (SELECT id FROM urls WHERE removed_at <", "retention"),
];

/// Records the SQL of the statements sqlx sends on a thread that asked for it ([`capture`]).
///
/// Installed once as the global subscriber: a scoped one (`set_default`) missed every event
/// when other tests ran beside it, as tracing caches per call site whether anyone listens.
struct Capture;

thread_local! {
    static SENT: std::cell::RefCell<Option<Arc<Mutex<Vec<String>>>>> = const { std::cell::RefCell::new(None) };
}

/// From now on, the statements sent on this thread go into the returned list.
fn capture() -> Arc<Mutex<Vec<String>>> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Capture))
            .expect("no other global subscriber in this test binary");
    });
    let sent = Arc::new(Mutex::new(Vec::new()));
    SENT.with(|s| *s.borrow_mut() = Some(sent.clone()));
    sent
}

#[derive(Default)]
struct Fields {
    summary: String,
    statement: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "summary" => self.summary = value.to_owned(),
            "db.statement" => self.statement = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let Some(sent) = SENT.with(|s| s.borrow().clone()) else { return };
        let mut fields = Fields::default();
        event.record(&mut fields);
        // sqlx sends the whole statement only when its summary (the first words) differs.
        let sql = if fields.statement.trim().is_empty() { fields.summary } else { fields.statement };
        sent.lock().unwrap().push(sql.split_whitespace().collect::<Vec<_>>().join(" "));
    }
}

/// The words of a statement: identifiers (with their alias prefix), placeholders, keywords
/// and single punctuation.
fn words(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in sql.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$') {
            word.push(c);
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The URL tables a statement reads or writes (after FROM, JOIN, INTO, UPDATE).
fn url_tables(w: &[String]) -> Vec<&'static str> {
    let mut found = Vec::new();
    for pair in w.windows(2) {
        if matches!(pair[0].to_ascii_uppercase().as_str(), "FROM" | "JOIN" | "INTO" | "UPDATE")
            && let Some(t) = URL_TABLES.iter().find(|t| pair[1] == **t)
            && !found.contains(t)
        {
            found.push(*t);
        }
    }
    found
}

/// Whether `column` (bare or with an alias) is compared with one value: `column = $n`,
/// `$n = column`, `column IN (...)`, or given a value by `INSERT INTO table (..., column, ...)`.
fn keyed_by(w: &[String], column: &str) -> bool {
    let is = |s: &String| s == column || s.ends_with(&format!(".{column}"));
    let insert_column =
        w.windows(3).any(|t| t[0].eq_ignore_ascii_case("INTO") && URL_TABLES.contains(&t[1].as_str()) && t[2] == "(")
            && w.iter().any(is);
    insert_column
        || w.windows(3).any(|t| {
            (is(&t[0]) && t[1] == "=" && t[2].starts_with('$'))
                || (t[0].starts_with('$') && t[1] == "=" && is(&t[2]))
                || (is(&t[0]) && t[1].eq_ignore_ascii_case("IN") && t[2] == "(")
        })
}

/// Why a statement is not routed to one site, or `None` when it is: `urls` and `url_checks`
/// by `site_id`; `sitemap_urls`, which has no `site_id` yet (ARCHITECTURE.md names the step),
/// by a sitemap or a URL, each of one site; `read_diff_urls` by its diff (of one sitemap).
fn unrouted(sql: &str) -> Option<String> {
    let w = words(sql);
    let tables = url_tables(&w);
    if tables.is_empty() {
        return None;
    }
    let by_site = keyed_by(&w, "site_id");
    for table in tables {
        let routed = match table {
            "sitemap_urls" => by_site || keyed_by(&w, "sitemap_id") || keyed_by(&w, "url_id"),
            // A read's diff is of one sitemap of one site, and bounded (`MAX_DIFF_URLS`).
            "read_diff_urls" => by_site || keyed_by(&w, "diff_id"),
            _ => by_site,
        };
        if !routed {
            return Some(format!("{table} without a site: {sql}"));
        }
    }
    None
}

#[test]
fn the_check_tells_routed_from_unrouted_statements() {
    assert!(unrouted("SELECT u.id FROM urls u WHERE u.site_id = $1 AND u.id > $2").is_none());
    assert!(unrouted("INSERT INTO urls (site_id, loc) VALUES ($1, $2)").is_none());
    assert!(unrouted("DELETE FROM sitemap_urls WHERE sitemap_id IN ($1, $2)").is_none());
    assert!(unrouted("SELECT COUNT(*) FROM sites WHERE owner_id = $1").is_none(), "no URL table");
    assert!(unrouted("SELECT u.loc FROM urls u JOIN sites s ON s.id = u.site_id WHERE u.id = $1").is_some());
    assert!(unrouted("UPDATE urls SET removed_at = $1 WHERE removed_at IS NULL").is_some());
    assert!(unrouted("SELECT c.url_id FROM url_checks c WHERE c.rule IS NOT NULL").is_some());
}

#[tokio::test]
async fn every_statement_on_a_url_table_names_its_site() {
    let Some(db) = PgDatabase::create("mapwright_test_shape").await else { return };
    // Opened (and migrated: migrations run once, whole) before the capture starts.
    let store = PgStore::open(&db.url).await.expect("open PostgreSQL");
    // This test's thread only (the runtime of #[tokio::test] runs the body on it).
    let sent = capture();
    let store: &dyn Store = &store;
    let ann = user(store, "ann@example.com", false).await;
    let site = verified_site(store, ann, "https://ann.example").await;
    let index = store.add_sitemap(ann, site, "https://ann.example/index.xml", Source::Api, T0).await.unwrap();
    let urls: Vec<UrlRecord> = (0..30)
        .map(|n| UrlRecord {
            loc: format!("https://ann.example/p{n}"),
            lastmod: Some("2024-01-01".into()),
            changefreq: None,
            priority: None,
        })
        .collect();

    // The worker's path: lease, children, URLs, sweep, summary, completion (roll-ups).
    let policy = LeasePolicy { per_origin: 2, per_owner: 2, min_interval: 0 };
    let leased = store.lease_sitemaps("w", T0, 4, 60, policy).await.unwrap();
    assert_eq!(leased.len(), 1);
    let children = [IndexChild { url: "https://ann.example/a.xml".into(), lastmod: None }];
    store.sync_index_children(site, index.id, &children, T0).await.unwrap();
    let child = store.sitemap_by_url(ann, site, "https://ann.example/a.xml").await.unwrap().unwrap();
    store.store_urls(site, child.id, &urls, T0, 1_000_000).await.unwrap();
    store.store_urls(site, child.id, &urls[..20], T0 + 10, 1_000_000).await.unwrap();
    store.sweep_urls(site, child.id, T0 + 10, T0 + 10).await.unwrap();
    // The staged write path of a download (the index is the sitemap "w" holds): staged, merged
    // with its sweep; then a stage discarded.
    let mut stage = store.begin_url_stage("w", site, index.id, T0 + 11).await.unwrap();
    store.stage_urls(&mut stage, &urls[10..]).await.unwrap();
    let merge = UrlMerge { sweep: true, same_content: false, quota: 1_000_000, now: T0 + 11 };
    let write = store.merge_url_stage("w", &stage, merge).await.unwrap();
    let stage = store.begin_url_stage("w", site, index.id, T0 + 12).await.unwrap();
    store.discard_url_stage(&stage).await.unwrap();
    let summary = FetchSummary { fetch_interval: 3600, ..FetchSummary::default() };
    store.record_fetch_summary("w", index.id, &summary).await.unwrap();
    let done = DownloadRecord { downloaded_at: T0, status: "ok".into(), diff: write.diff, ..DownloadRecord::default() };
    let download = store.complete("w", index.id, &done, T0 + 3600).await.unwrap();
    store.record_pushed_urls(site, &["https://ann.example/pushed".into()], T0 + 20, 1_000_000).await.unwrap();

    // The pages: URLs of a site and of a sitemap, search, a URL's sitemaps, the frontier.
    let page = store.list_urls(ann, site, UrlQuery::default()).await.unwrap();
    assert!(page.items.len() >= 20);
    store.url_sitemaps(ann, page.items[0].id).await.unwrap();
    store.frontier(ann, site, T0, 100).await.unwrap();
    store.search_sitemap_urls(ann, child.id, "", 0, 100).await.unwrap();
    store.search_sitemap_urls(ann, child.id, "p1", 0, 100).await.unwrap();
    // A read's diff: the reads of a sitemap, one read, its URLs.
    store.list_read_diffs(ann, index.id, 10).await.unwrap();
    store.read_diff(ann, download).await.unwrap();
    assert!(!store.list_diff_urls(ann, download, None, 0, 100).await.unwrap().items.is_empty());
    let findings = FindingQuery { site_id: site, ..FindingQuery::default() };
    store.finding_examples(ann, &findings).await.unwrap();

    // The failing-URLs checker and its report.
    let trigger = CheckTrigger::User { user_id: ann.user_id, per_user: 2, cooldown: 0 };
    store.sites_due_for_check_run(T0 + 30, T0 + 30, T0 + 30, 10).await.unwrap();
    store.claim_check_run(site, "w", &trigger, T0 + 30, T0 + 90).await.unwrap().expect("a run");
    let to_check = store.urls_to_check(site, 0, 100).await.unwrap();
    let checks: Vec<UrlCheckRecord> = to_check
        .iter()
        .map(|(id, _)| UrlCheckRecord {
            url_id: *id,
            status: Some(404),
            rule: Some("url-status".into()),
            message: None,
            version: None,
        })
        .collect();
    store.record_url_checks(site, &checks, T0 + 30).await.unwrap();
    let last = to_check.last().map_or(0, |(id, _)| *id);
    store.record_check_page(site, "w", &checks, last, T0 + 31, T0 + 90).await.unwrap();
    store.finish_check_run(site, "w", None, T0 + 32).await.unwrap();
    store.check_run(ann, site).await.unwrap();
    store.list_url_failures(ann, site, None, 0, 100).await.unwrap();
    store.url_failure_kinds(ann, site).await.unwrap();
    store.record_site_snapshot(site, T0 + 30).await.unwrap();

    // Removal, then retention.
    store.remove_sitemap(ann, child.id, T0 + 40).await.unwrap();
    let retention = Retention {
        keep_downloads: 1,
        ping_max_age: 1,
        removed_url_max_age: 1,
        unverified_site_max_age: 1,
        batch: 100,
    };
    store.apply_retention(retention, T0 + 10_000_000).await.unwrap();

    let sent = sent.lock().unwrap().clone();
    assert!(sent.iter().any(|s| s.contains("INTO urls")), "statements were captured: {sent:#?}");
    let mut wrong = Vec::new();
    let mut excused = vec![false; NOT_PER_SITE.len()];
    for sql in &sent {
        if let Some(why) = unrouted(sql) {
            match NOT_PER_SITE.iter().position(|(start, _)| sql.starts_with(start)) {
                Some(i) => excused[i] = true,
                None => wrong.push(why),
            }
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "statements on URL tables that name no site:\n{}", wrong.join("\n"));
    for ((start, why), seen) in NOT_PER_SITE.iter().zip(excused) {
        assert!(seen, "NOT_PER_SITE lists {start:?} ({why}), which is no longer sent: remove it");
    }
}
