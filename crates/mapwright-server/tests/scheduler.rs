//! The scheduler against sites on 127.0.0.1, on both backends: downloads with status, counts,
//! findings and URLs; 304s; vanished URLs; broken sitemaps; indexes fetched incrementally;
//! the workers woken by a ping; robots.txt sitemaps and the verification re-check.
//!
//! Most tests run jobs one by one through `run_job` (deterministic); one runs the workers.

use std::time::Duration;

use mapwright_server::AppState;
use mapwright_server::jobs;
use mapwright_server::jobs::recheck::{after_verified, recheck_once};
use mapwright_store::{Actor, Download, FindingRecord, Site, Sitemap, UrlQuery, UrlRow};
use tokio::task::JoinHandle;

use crate::sitehost::{SiteHost, index, urlset};
use crate::support::{each_backend, poll_until, unix_now};

const WORKER: &str = "test-worker";

async fn verified_site(state: &AppState, origin: &str) -> (Actor, Site) {
    let user =
        state.store.create_user(&format!("owner@{}.example", origin.replace([':', '/'], "")), "h", false, 0).await;
    let actor = Actor::from(&user.unwrap());
    let site = state.store.create_site(actor, origin, 0).await.unwrap();
    state.store.record_verification(site.id, true, 0).await.unwrap();
    (actor, site)
}

/// Runs every due job (a little ahead of the clock, so a child brought forward within this
/// second counts as due) until none is left; returns how many ran.
async fn drain(state: &AppState) -> usize {
    crate::support::drain_jobs(state, WORKER, 50).await
}

async fn downloads(state: &AppState, actor: Actor, sitemap: &Sitemap) -> Vec<Download> {
    state.store.list_downloads(actor, sitemap.id, 100).await.unwrap()
}

async fn findings(state: &AppState, actor: Actor, download: &Download) -> Vec<FindingRecord> {
    state.store.list_findings(actor, download.id).await.unwrap()
}

async fn urls(state: &AppState, actor: Actor, site: &Site, include_removed: bool) -> Vec<UrlRow> {
    let query = UrlQuery { include_removed, ..UrlQuery::default() };
    state.store.list_urls(actor, site.id, query).await.unwrap().items
}

async fn add(state: &AppState, actor: Actor, site: &Site, url: &str) -> Sitemap {
    state.store.add_sitemap(actor, site.id, url, mapwright_store::Source::Api, unix_now()).await.unwrap()
}

/// A verified site on a new host whose sitemap `/s.xml` (with this ETag) lists `paths`, added
/// (not read yet).
async fn one_sitemap(state: &AppState, paths: &[&str], etag: Option<&str>) -> (SiteHost, Actor, Site, Sitemap) {
    let web = SiteHost::start().await;
    let (actor, site) = verified_site(state, &web.origin).await;
    let locs: Vec<String> = paths.iter().map(|p| web.url(p)).collect();
    let entries: Vec<(&str, Option<&str>)> = locs.iter().map(|l| (l.as_str(), None)).collect();
    web.put_etag("/s.xml", &urlset(&entries), etag);
    let sitemap = add(state, actor, &site, &web.url("/s.xml")).await;
    (web, actor, site, sitemap)
}

/// Starts the workers as `serve` does, without the re-checks; returns the stop signal and the
/// supervisor's handle.
fn start_workers(state: &AppState, config: jobs::Config) -> (tokio::sync::watch::Sender<bool>, JoinHandle<()>) {
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    (stop, jobs::spawn(state.clone(), jobs::Config { recheck: false, ..config }, shutdown))
}

/// `workers` workers that look every 50 ms and give jobs in flight `grace` at shutdown.
fn quick(workers: usize, grace: Duration) -> jobs::Config {
    jobs::Config { workers, poll_interval: Duration::from_millis(50), grace, ..jobs::Config::default() }
}

/// Resubmits the sitemap and runs every due job.
async fn reread(state: &AppState, actor: Actor, sitemap: &Sitemap) {
    state.store.resubmit_sitemap(actor, sitemap.id, unix_now()).await.unwrap();
    drain(state).await;
}

#[tokio::test]
async fn a_due_sitemap_is_fetched_and_stored() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let (actor, site) = verified_site(&app.state, &web.origin).await;
        let body = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
<url><loc>{o}/a</loc><lastmod>2024-01-02</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>
<url><loc>{o}/b</loc><image:image><image:loc>{o}/b.png</image:loc></image:image></url>
<url><loc>http://elsewhere.example/c</loc></url>
</urlset>
"#,
            o = web.origin
        );
        web.put_etag("/sitemap.xml", &body, None);
        let sitemap = add(&app.state, actor, &site, &web.url("/sitemap.xml")).await;
        assert_eq!(drain(&app.state).await, 1);
        assert_eq!(drain(&app.state).await, 0, "not due again at once");

        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].status.as_str(), d[0].http_status, d[0].url_count), ("errors", Some(200), 3));
        assert_eq!(d[0].bytes, body.len() as i64);
        let f = findings(&app.state, actor, &d[0]).await;
        let out = f.iter().find(|f| f.rule == "loc-out-of-scope").expect("the other host is out of scope");
        assert_eq!((out.line, out.loc.as_deref()), (Some(5), Some("http://elsewhere.example/c")));

        let stored = urls(&app.state, actor, &site, true).await;
        let locs: Vec<&str> = stored.iter().map(|u| u.loc.as_str()).collect();
        assert_eq!(locs, [web.url("/a"), web.url("/b")], "out-of-scope URLs are not stored");
        assert_eq!(stored[0].lastmod.as_deref(), Some("2024-01-02"));
        assert_eq!(stored[0].changefreq.as_deref(), Some("daily"));
        assert_eq!(stored[0].priority, Some(0.8));

        let sm = app.store.sitemap(actor, sitemap.id).await.unwrap();
        assert_eq!(sm.status.as_deref(), Some("errors"));
        assert_eq!((sm.kinds.as_deref(), sm.url_count), (Some("web,image"), Some(3)));
        assert_eq!((sm.fetch_interval, sm.failures), (Some(24 * 3600), 0));
        assert!(sm.next_fetch_at >= unix_now() + 23 * 3600, "the next fetch is a day away");
    })
    .await;
}

#[tokio::test]
async fn unchanged_is_304_and_vanished_urls_are_removed() {
    each_backend(false, |app| async move {
        let (web, actor, site, sitemap) = one_sitemap(&app.state, &["/a", "/b"], Some("\"v1\"")).await;
        let (a, b) = (web.url("/a"), web.url("/b"));
        drain(&app.state).await;

        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d[0].status.as_str(), d[0].http_status), ("unchanged", Some(304)));
        let sm = app.store.sitemap(actor, sitemap.id).await.unwrap();
        assert_eq!(sm.fetch_interval, Some(36 * 3600), "unchanged: fetched less often");
        assert_eq!((sm.url_count, sm.kinds.as_deref()), (Some(2), Some("web")), "a 304 keeps the counts");
        assert_eq!(urls(&app.state, actor, &site, false).await.len(), 2);

        web.put_etag("/s.xml", &urlset(&[(&a, None)]), Some("\"v2\""));
        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d.len(), d[0].status.as_str(), d[0].url_count), (3, "ok", 1));
        let all = urls(&app.state, actor, &site, true).await;
        let gone = all.iter().find(|u| u.loc == b).unwrap();
        assert!(gone.removed_at.is_some(), "{b} left the sitemap: removed");
        assert!(all.iter().find(|u| u.loc == a).unwrap().removed_at.is_none());
        assert_eq!(web.hits("/s.xml"), 3);
    })
    .await;
}

#[tokio::test]
async fn broken_sitemaps_fail_with_rule_names_and_keep_their_urls() {
    each_backend(false, |app| async move {
        let (web, actor, site, sitemap) = one_sitemap(&app.state, &["/a", "/b"], None).await;
        let (a, b) = (web.url("/a"), web.url("/b"));
        drain(&app.state).await;

        // Cut after the first URL: a read all or nothing, as the CLI and the Python package
        // fail a truncated file. It failed, saying where; it stored nothing of what it read
        // (no URL merged, no count, no diff), so the sitemap's URLs are the last good read's.
        let before = urls(&app.state, actor, &site, false).await;
        let count = app.store.sitemap(actor, sitemap.id).await.unwrap().url_count;
        let full = urlset(&[(&a, None), (&b, None)]);
        let cut = &full[..full.find("</url>").unwrap() + 12];
        web.put_etag("/s.xml", cut, None);
        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d[0].status.as_str(), d[0].url_count), ("failed", 0));
        let error = d[0].error.as_deref().unwrap_or("");
        assert!(error.contains("xml-malformed") && error.contains("none of the URLs"), "{error}");
        let f = findings(&app.state, actor, &d[0]).await;
        assert!(f.iter().any(|f| f.rule == "xml-malformed" && f.line.is_some()), "{f:?}");
        assert_eq!(urls(&app.state, actor, &site, false).await, before, "the URLs of the last good read, as they were");
        assert!(!app.store.read_diff(actor, d[0].id).await.unwrap().recorded, "no diff of a failed read");
        assert_eq!(app.store.sitemap(actor, sitemap.id).await.unwrap().url_count, count, "the last good count");

        web.put_etag("/s.xml", "<html><body>Moved</body></html>", None);
        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!(d[0].status, "failed");
        assert!(findings(&app.state, actor, &d[0]).await.iter().any(|f| f.rule == "unknown-root"));

        web.remove("/s.xml");
        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d[0].status.as_str(), d[0].http_status), ("failed", Some(404)));
        assert!(d[0].error.as_deref().unwrap_or("").contains("404"), "{:?}", d[0].error);
        let sm = app.store.sitemap(actor, sitemap.id).await.unwrap();
        assert_eq!(sm.failures, 3, "three failures in a row: the cut file, the page, the 404");
        // The failure backoff, 15 minutes doubling: the third is an hour away, not a day.
        assert!(
            sm.next_fetch_at <= unix_now() + 3600 + 60,
            "a failure retries sooner: {}",
            sm.next_fetch_at - unix_now()
        );
        assert_eq!(urls(&app.state, actor, &site, false).await.len(), 2, "a failure removes nothing");
    })
    .await;
}

#[tokio::test]
async fn an_index_is_fetched_incrementally() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let (actor, site) = verified_site(&app.state, &web.origin).await;
        let (c1, c2, c3) = (web.url("/c1.xml"), web.url("/c2.xml"), web.url("/c3.xml"));
        let idx = web.url("/index.xml");
        for (n, path) in ["/c1.xml", "/c2.xml", "/c3.xml"].iter().enumerate() {
            web.put_etag(path, &urlset(&[(&web.url(&format!("/page{n}")), None)]), None);
        }
        let day1 = Some("2024-01-01");
        // The index lists itself and a sitemap of another site: neither is followed.
        let listing = |c2_lastmod| {
            index(&[(&c1, day1), (&c2, c2_lastmod), (&c3, day1), (&idx, day1), ("http://other.example/s.xml", day1)])
        };
        web.put_etag("/index.xml", &listing(day1), None);
        let parent = add(&app.state, actor, &site, &idx).await;
        assert_eq!(drain(&app.state).await, 4, "the index, then its three children");
        let listed = app.store.list_sitemaps(actor, site.id).await.unwrap();
        assert_eq!(listed.len(), 4);
        let child = |url: &str| listed.iter().find(|s| s.url == url).unwrap().clone();
        assert_eq!(child(&c2).parent_id, Some(parent.id));
        assert_eq!(child(&c2).source, "index");
        assert_eq!(child(&c2).index_lastmod.as_deref(), Some("2024-01-01"));
        assert_eq!(app.store.sitemap(actor, parent.id).await.unwrap().kinds.as_deref(), Some("index"));
        assert_eq!(urls(&app.state, actor, &site, false).await.len(), 3);

        // Read again on a ping (as on its schedule), only the child whose lastmod changed is
        // fetched again (a Resubmit reads the whole tree: tests/tree.rs).
        web.put_etag("/index.xml", &listing(Some("2024-02-01")), None);
        app.store.record_ping(&idx, "127.0.0.1", unix_now()).await.unwrap();
        assert_eq!(drain(&app.state).await, 2);
        assert_eq!(
            [web.hits("/index.xml"), web.hits("/c1.xml"), web.hits("/c2.xml"), web.hits("/c3.xml")],
            [2, 1, 2, 1]
        );

        // A child that leaves the index is removed, and its URLs with it.
        web.put_etag("/index.xml", &index(&[(&c1, day1), (&c2, Some("2024-02-01"))]), None);
        app.store.record_ping(&idx, "127.0.0.1", unix_now()).await.unwrap();
        assert_eq!(drain(&app.state).await, 1);
        let gone = app.store.sitemap(actor, child(&c3).id).await.unwrap();
        assert!(gone.removed_at.is_some());
        let live: Vec<String> = urls(&app.state, actor, &site, false).await.into_iter().map(|u| u.loc).collect();
        assert_eq!(live, [web.url("/page0"), web.url("/page1")]);

        // It comes back when the index lists it again.
        web.put_etag("/index.xml", &listing(Some("2024-02-01")), None);
        app.store.record_ping(&idx, "127.0.0.1", unix_now()).await.unwrap();
        assert_eq!(drain(&app.state).await, 2);
        assert!(app.store.sitemap(actor, child(&c3).id).await.unwrap().removed_at.is_none());
        assert_eq!(web.hits("/c3.xml"), 2);
    })
    .await;
}

/// Waits for a condition, checking every 50 ms, for at most 30 s.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let found = poll_until(Duration::from_secs(30), || {
        let checked = check();
        async move { checked.await.then_some(()) }
    })
    .await;
    assert!(found.is_some(), "timed out waiting for {what}");
}

#[tokio::test]
async fn workers_fetch_due_sitemaps_and_a_ping_wakes_them() {
    each_backend(false, |app| async move {
        let (web, actor, _, sitemap) = one_sitemap(&app.state, &["/a"], None).await;

        // A poll interval far beyond the test's patience: only the wake-up can be fast.
        let config = jobs::Config {
            workers: 2,
            poll_interval: Duration::from_secs(3600),
            min_fetch_interval: Duration::ZERO,
            ..jobs::Config::default()
        };
        let (stop, handle) = start_workers(&app.state, config);
        eventually("the first download", || async { web.hits("/s.xml") == 1 }).await;
        eventually("its record", || async { downloads(&app.state, actor, &sitemap).await.len() == 1 }).await;

        // New bytes: the fetch the ping brings reads them (the same bytes would be `unchanged`).
        web.put_etag("/s.xml", &urlset(&[(&web.url("/a"), Some("2024-01-01"))]), None);
        let uri = format!("/ping?sitemap={}", web.url("/s.xml"));
        let (status, _, _) = app.get(&uri, crate::support::Auth::None).await;
        assert_eq!(status, 200);
        eventually("the fetch the ping brought forward", || async {
            downloads(&app.state, actor, &sitemap).await.len() == 2
        })
        .await;

        // The workers' fetches are counted on /metrics (two downloads with status ok), once the
        // job has returned: after its record, and after the read's alerts and webhooks.
        eventually("the second fetch counted", || async {
            let (_, _, text) = app.get("/metrics", crate::support::Auth::None).await;
            text.contains("mapwright_fetches_total{status=\"ok\"} 2")
        })
        .await;
        let (status, headers, text) = app.get("/metrics", crate::support::Auth::None).await;
        assert_eq!(status, 200);
        assert!(headers["content-type"].to_str().unwrap().contains("openmetrics-text"));
        for line in [
            "mapwright_fetches_total{status=\"ok\"} 2",
            "mapwright_urls_read_total 2",
            "mapwright_fetch_duration_seconds_count 2",
            "mapwright_queue_depth 0",
        ] {
            assert!(text.contains(line), "{line} in:\n{text}");
        }
        assert!(text.contains("# TYPE mapwright_fetch_failures counter"), "{text}");

        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("workers stop").unwrap();
        assert_eq!(app.store.release_all("nobody").await.unwrap(), 0);
        assert_eq!(web.hits("/s.xml"), 2);
    })
    .await;
}

#[tokio::test]
async fn robots_txt_sitemaps_are_added_and_verification_is_rechecked() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let other = SiteHost::start().await;
        let user = app.store.create_user("rob@example.com", "h", false, 0).await.unwrap();
        let actor = Actor::from(&user);
        let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
        let robots =
            format!("User-agent: *\nDisallow:\nSitemap: {}\nSitemap: {}\n", web.url("/s.xml"), other.url("/x.xml"));
        web.put_etag("/robots.txt", &robots, None);

        // Never checked: the re-check verifies it (the file is there) and adds both sitemaps.
        web.put_etag(&format!("/mapwright-{}.html", site.verification_token), &site.verification_token, None);
        assert_eq!(recheck_once(&app.state, 3600).await.unwrap(), 1);
        assert!(app.store.site(actor, site.id).await.unwrap().verified_at.is_some());
        let listed = app.store.list_sitemaps(actor, site.id).await.unwrap();
        let urls: Vec<(&str, &str)> = listed.iter().map(|s| (s.url.as_str(), s.source.as_str())).collect();
        assert_eq!(urls, [(web.url("/s.xml").as_str(), "robots"), (other.url("/x.xml").as_str(), "robots")]);

        // Checked just now: not again within the interval.
        assert_eq!(recheck_once(&app.state, 3600).await.unwrap(), 0);

        // Idempotent, and a removed one stays removed.
        app.store.remove_sitemap(actor, listed[1].id, unix_now()).await.unwrap();
        assert_eq!(after_verified(&app.state, &site).await.unwrap(), 2);
        let again = app.store.list_sitemaps(actor, site.id).await.unwrap();
        assert_eq!(again.len(), 2);
        assert!(again[1].removed_at.is_some());

        // The proof goes: the next re-check unverifies.
        web.remove(&format!("/mapwright-{}.html", site.verification_token));
        assert_eq!(recheck_once(&app.state, -1).await.unwrap(), 1);
        assert!(app.store.site(actor, site.id).await.unwrap().verified_at.is_none());
    })
    .await;
}

#[tokio::test]
async fn shutdown_releases_a_job_that_outlives_the_grace_period() {
    each_backend(false, |app| async move {
        let (web, actor, _, sitemap) = one_sitemap(&app.state, &["/a"], None).await;
        web.hold.store(true, std::sync::atomic::Ordering::SeqCst);
        let (stop, handle) = start_workers(&app.state, quick(1, Duration::from_millis(300)));
        eventually("the request in flight", || async { web.hits("/s.xml") == 1 }).await;
        assert_eq!(app.store.queue_depth(unix_now()).await.unwrap(), 0, "leased");

        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("workers stop").unwrap();
        assert_eq!(app.store.queue_depth(unix_now()).await.unwrap(), 1, "released: due again at once");
        assert!(downloads(&app.state, actor, &sitemap).await.is_empty(), "no download was recorded");
        web.hold.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(drain(&app.state).await, 1, "another worker takes it at once");
    })
    .await;
}

/// One answer of `mapwright-core/tests/data/oai`, for the repository at `origin`.
pub(crate) fn oai_page(name: &str, origin: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mapwright-core/tests/data/oai").join(name);
    std::fs::read_to_string(path).unwrap().replace("{{BASE}}", origin)
}

#[tokio::test]
async fn an_oai_pmh_base_url_submitted_as_a_sitemap_is_harvested() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let (actor, site) = verified_site(&app.state, &web.origin).await;
        let o = web.origin.clone();
        web.put("/oai2", &oai_page("badverb.xml", &o));
        web.put("/oai2?verb=ListRecords&metadataPrefix=oai_dc", &oai_page("listrecords-1.xml", &o));
        web.put("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100", &oai_page("listrecords-2.xml", &o));
        web.put("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", &oai_page("listrecords-3.xml", &o));
        let sitemap = add(&app.state, actor, &site, &web.url("/oai2")).await;
        assert_eq!(drain(&app.state).await, 1);
        assert_eq!(web.hits("/oai2"), 4, "the base URL, then three pages");

        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d[0].status.as_str(), d[0].url_count), ("errors", 5));
        let mut rules: Vec<String> = findings(&app.state, actor, &d[0]).await.into_iter().map(|f| f.rule).collect();
        rules.sort();
        assert_eq!(rules, ["lastmod-format", "loc-out-of-scope", "loc-whitespace", "oai-deleted", "oai-no-url"]);
        let mut locs: Vec<String> = urls(&app.state, actor, &site, false).await.into_iter().map(|u| u.loc).collect();
        locs.sort();
        let expected: Vec<String> =
            [101, 105, 106, 107].iter().map(|n| web.url(&format!("/handle/1234/{n}"))).collect();
        assert_eq!(locs, expected, "the record on another host is out of scope");
        let sm = app.store.sitemap(actor, sitemap.id).await.unwrap();
        assert_eq!(sm.kinds.as_deref(), Some("oai-pmh,web"));
        // Bytes of every answer: the base URL's and three pages.
        let all = ["badverb.xml", "listrecords-1.xml", "listrecords-2.xml", "listrecords-3.xml"];
        let total: usize = all.iter().map(|n| oai_page(n, &o).len()).sum();
        assert_eq!(d[0].bytes, total as i64);

        // A record removed from the last page (issue 32): the base URL's answer is the same as
        // before, the records are not; the change is seen and the record is no longer live.
        let third = oai_page("listrecords-3.xml", &o);
        let cut = third.find("<record>").unwrap();
        let end = third[cut..].find("</record>").unwrap() + cut + "</record>".len();
        assert!(third[cut..end].contains("/handle/1234/107"));
        let third = format!("{}{}", &third[..cut], &third[end..]);
        web.put("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", &third);
        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d[0].status.as_str(), d[0].url_count), ("errors", 4));
        assert_eq!(d[0].bytes, (total - (end - cut)) as i64);
        let diff = app.store.read_diff(actor, d[0].id).await.unwrap();
        assert_eq!((diff.recorded, diff.added, diff.removed), (true, 0, 1), "{diff:?}");
        let mut locs: Vec<String> = urls(&app.state, actor, &site, false).await.into_iter().map(|u| u.loc).collect();
        locs.sort();
        let expected: Vec<String> = [101, 105, 106].iter().map(|n| web.url(&format!("/handle/1234/{n}"))).collect();
        assert_eq!(locs, expected, "the removed record is no longer live");

        // The list cut short (the second page refused): a failed read, nothing of it stored.
        web.put(
            "/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100",
            &oai_page("badresumptiontoken.xml", &o),
        );
        reread(&app.state, actor, &sitemap).await;
        let d = downloads(&app.state, actor, &sitemap).await;
        assert_eq!((d[0].status.as_str(), d[0].url_count), ("failed", 0));
        assert_eq!(urls(&app.state, actor, &site, false).await.len(), 3, "the last good read's URLs, as they were");
        let rules: Vec<String> = findings(&app.state, actor, &d[0]).await.into_iter().map(|f| f.rule).collect();
        assert!(rules.contains(&"oai-error".to_string()), "the refused token named: {rules:?}");
    })
    .await;
}

/// Issue 24 item 5: one person with two accounts (one mailbox, plus-addressed) and slow
/// sitemaps held all four workers, and an honest user's new sitemap waited until one of them
/// ended. The last free worker is kept for an owner with nothing running: the honest user's
/// sitemap is fetched while the slow ones still hang.
#[tokio::test]
async fn a_user_with_nothing_running_gets_a_worker_while_many_accounts_hold_slow_sitemaps() {
    each_backend(false, |app| async move {
        let mut slow = Vec::new();
        for n in 0..2 {
            let web = SiteHost::start().await;
            web.hold.store(true, std::sync::atomic::Ordering::SeqCst);
            let user = app.store.create_user(&format!("mallory+{n}@example.com"), "h", false, 0).await.unwrap();
            let actor = Actor::from(&user);
            let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
            app.store.record_verification(site.id, true, 0).await.unwrap();
            for path in ["/a.xml", "/b.xml", "/c.xml"] {
                web.put_etag(path, &urlset(&[(&web.url("/x"), None)]), None);
                add(&app.state, actor, &site, &web.url(path)).await;
            }
            slow.push(web);
        }
        let (stop, handle) = start_workers(&app.state, quick(4, Duration::from_millis(100)));
        let in_flight = |slow: &[SiteHost]| -> u32 {
            slow.iter().map(|w| w.hits("/a.xml") + w.hits("/b.xml") + w.hits("/c.xml")).sum()
        };
        eventually("the slow sitemaps in flight", || async { in_flight(&slow) >= 3 }).await;

        let (_web, actor, _, sitemap) = one_sitemap(&app.state, &["/a"], None).await;
        app.state.wake_workers();
        eventually("the honest user's download", || async { downloads(&app.state, actor, &sitemap).await.len() == 1 })
            .await;
        assert_eq!(in_flight(&slow), 3, "the slow ones still hang, on three workers of four");

        for web in &slow {
            web.hold.store(false, std::sync::atomic::Ordering::SeqCst);
        }
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("workers stop").unwrap();
    })
    .await;
}

/// Issue 24 item 5: a slow download has a deadline of its own (not 90% of the lease): it is
/// stopped, recorded as failed with the reason, and its worker is free again.
#[tokio::test]
async fn a_slow_download_is_stopped_at_its_deadline() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        web.hold.store(true, std::sync::atomic::Ordering::SeqCst);
        let (actor, site) = verified_site(&app.state, &web.origin).await;
        web.put_etag("/s.xml", &urlset(&[(&web.url("/a"), None)]), None);
        let sitemap = add(&app.state, actor, &site, &web.url("/s.xml")).await;
        let config = jobs::Config { job_deadline: Duration::from_secs(1), ..quick(1, Duration::from_millis(100)) };
        let (stop, handle) = start_workers(&app.state, config);
        eventually("the failed download", || async { downloads(&app.state, actor, &sitemap).await.len() == 1 }).await;
        let download = downloads(&app.state, actor, &sitemap).await.remove(0);
        assert_eq!(download.status, "failed");
        let why = download.error.unwrap_or_default();
        assert!(why.contains("longer than 1 seconds"), "{why}");
        web.hold.store(false, std::sync::atomic::Ordering::SeqCst);
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("workers stop").unwrap();
    })
    .await;
}
