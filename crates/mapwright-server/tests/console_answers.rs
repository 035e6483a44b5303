//! The console as answers (issue 13), through the router on both backends: findings grouped by
//! rule with examples and pages, the sitemaps table (types, badges, an index's children and
//! rolled-up status, removed rows), the failing-URLs report by kind and its CSV, "Check now" as
//! one background run per site with a per-user limit, every error as a page, post-redirect-get
//! for tokens, confirmations, deleting a site, and verification that keeps the added sitemap.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use mapwright_server::jobs::checker::{CheckerConfig, Jobs};
use mapwright_store::{
    Actor, DownloadRecord, FetchSummary, FindingRecord, Source, UrlCheckRecord, UrlQuery, UrlRecord,
};
use scraper::{Html, Selector};

use crate::console::{Seeded, post_form, seed};
use crate::support::{Auth, TestApp, each_backend, set_cookie};
use crate::verify::TestSite;

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// The current Unix time, for the other console tests.
pub fn now_for_tests() -> i64 {
    now()
}

/// The visible text of a page (URLs carry `<wbr>` break points in the HTML).
fn text(html: &str) -> String {
    Html::parse_document(html).root_element().text().collect::<Vec<_>>().join("")
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn actor(s: &Seeded) -> Actor {
    Actor { user_id: s.site.owner_id, is_admin: false }
}

/// Stores a read of one sitemap: leases it (after making it due), records the summary, completes.
pub async fn read(
    app: &TestApp,
    id: i64,
    status: &str,
    url_count: i64,
    kinds: Option<&str>,
    findings: Vec<FindingRecord>,
) {
    let store = &app.store;
    let sm = store.sitemap_by_id(id).await.unwrap();
    let owner = store.site_by_id(sm.site_id).await.unwrap().owner_id;
    store.resubmit_sitemap(Actor { user_id: owner, is_admin: false }, id, now() - 1).await.unwrap();
    let leased = store.lease_due_sitemaps("test", now(), 1000, 60).await.unwrap();
    for l in &leased {
        if l.id != id {
            store.release("test", l.id).await.unwrap();
        }
    }
    assert!(leased.iter().any(|l| l.id == id), "sitemap {id} not leased");
    let summary = FetchSummary {
        kinds: kinds.map(str::to_owned),
        url_count: Some(url_count),
        fetch_interval: 3600,
        failures: 0,
        format: None,
        contents: None,
    };
    store.record_fetch_summary("test", id, &summary).await.unwrap();
    // The read stores what it counts: the console shows stored URLs, never entries it dropped.
    let site = store.site_by_id(sm.site_id).await.unwrap();
    let urls: Vec<UrlRecord> = (0..url_count)
        .map(|n| UrlRecord {
            loc: format!("{}/{id}/{n}", site.origin),
            lastmod: None,
            changefreq: None,
            priority: None,
        })
        .collect();
    store.upsert_urls(site.id, id, &urls, now()).await.unwrap();
    let record = DownloadRecord {
        downloaded_at: now(),
        status: status.into(),
        http_status: Some(if status == "failed" { 404 } else { 200 }),
        url_count,
        error: (status == "failed").then(|| "answers 404".to_owned()),
        findings,
        ..DownloadRecord::default()
    };
    store.complete("test", id, &record, now() + 86_400).await.unwrap();
}

pub fn finding(rule: &str, severity: &str, line: i64, loc: &str) -> FindingRecord {
    FindingRecord {
        rule: rule.into(),
        severity: severity.into(),
        line: Some(line),
        col: Some(7),
        loc: Some(loc.into()),
        message: format!("{rule} at line {line}"),
    }
}

#[tokio::test]
async fn findings_are_grouped_by_rule_with_examples_fixes_and_pages() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let mut findings = Vec::new();
        for i in 0..250 {
            findings.push(finding("loc-not-absolute", "error", 10 + i, &format!("/p{i}")));
        }
        for i in 0..40 {
            findings.push(finding("lastmod-future", "warning", 500 + i, &format!("https://ann.example/f{i}")));
        }
        for i in 0..12 {
            findings.push(finding("lastmod-precision", "info", 900 + i, &format!("https://ann.example/y{i}")));
        }
        read(&app, s.sitemap.id, "errors", 302, Some("web"), findings).await;
        let other = app
            .store
            .add_sitemap(actor(&s), s.site.id, "https://ann.example/news.xml", Source::Api, now())
            .await
            .unwrap();
        read(
            &app,
            other.id,
            "warnings",
            5,
            Some("rss,web"),
            vec![finding("lastmod-future", "warning", 3, "https://ann.example/n")],
        )
        .await;
        let auth = Auth::Cookie(&s.cookie);

        let (status, _, html) = app.get(&format!("/sitemaps/{}", s.sitemap.id), auth).await;
        assert_eq!(status, StatusCode::OK);
        let doc = Html::parse_document(&html);
        let groups: Vec<String> = select(&doc, "section.group h3").iter().map(|h| h.text().collect()).collect();
        assert_eq!(groups.len(), 3, "{groups:?}");
        assert!(
            groups[0].contains("loc-not-absolute") && groups[0].contains("250 findings"),
            "errors first: {groups:?}"
        );
        assert!(groups[1].contains("lastmod-future") && groups[1].contains("40 findings"), "{groups:?}");
        assert!(groups[2].contains("lastmod-precision") && groups[2].contains("12 findings"), "{groups:?}");
        assert_eq!(select(&doc, "ul.examples li").len(), 9, "three examples per rule, not 302 rows");
        let page_text = text(&html);
        for expected in
            ["10:7", "loc-not-absolute at line 10", "/p0", "How to fix: ", "All 250 findings of loc-not-absolute"]
        {
            assert!(page_text.contains(expected), "sitemap page lacks {expected:?}: {page_text}");
        }
        assert!(!page_text.contains("loc-not-absolute at line 13"), "only the first examples");
        // The severity filter.
        let (_, _, html) = app.get(&format!("/sitemaps/{}?severity=warning", s.sitemap.id), auth).await;
        let doc = Html::parse_document(&html);
        let groups: Vec<String> = select(&doc, "section.group h3").iter().map(|h| h.text().collect()).collect();
        assert_eq!(groups.len(), 1, "{groups:?}");
        assert!(groups[0].contains("lastmod-future"));
        // All findings of a rule, paged by 100.
        let (status, _, html) =
            app.get(&format!("/sitemaps/{}/findings?rule=loc-not-absolute", s.sitemap.id), auth).await;
        assert_eq!(status, StatusCode::OK);
        let doc = Html::parse_document(&html);
        assert_eq!(select(&doc, "tbody tr").len(), 100);
        let next = select(&doc, ".pager a").into_iter().find(|a| a.text().any(|t| t == "Next page")).unwrap();
        let next = next.value().attr("href").unwrap().to_owned();
        let (_, _, html) = app.get(&next, auth).await;
        let t = text(&html);
        assert!(t.contains("loc-not-absolute at line 110") && !t.contains("loc-not-absolute at line 109"), "{t}");
        let (_, _, html) =
            app.get(&format!("/sitemaps/{}/findings?rule=loc-not-absolute&offset=200", s.sitemap.id), auth).await;
        assert_eq!(select(&Html::parse_document(&html), "tbody tr").len(), 50);
        // The site page: the same groups across both sitemaps, each example naming its sitemap.
        let (_, _, html) = app.get(&format!("/sites/{}", s.site.id), auth).await;
        let doc = Html::parse_document(&html);
        let groups: Vec<String> = select(&doc, "section.group h3").iter().map(|h| h.text().collect()).collect();
        assert!(groups.iter().any(|g| g.contains("lastmod-future") && g.contains("41 findings")), "{groups:?}");
        assert!(text(&html).contains("in https://ann.example/sitemap.xml"), "examples name their sitemap");
        let (_, _, html) = app.get(&format!("/sites/{}/findings?rule=lastmod-future", s.site.id), auth).await;
        assert_eq!(select(&Html::parse_document(&html), "tbody tr").len(), 41);
        assert!(text(&html).contains("https://ann.example/news.xml"));
        // Another user sees none of it.
        let bob = seed(&app, "bob@example.com", "https://bob.example").await;
        let uri = format!("/sitemaps/{}/findings?rule=loc-not-absolute", s.sitemap.id);
        assert_eq!(app.get(&uri, Auth::Cookie(&bob.cookie)).await.0, StatusCode::NOT_FOUND);
        let uri = format!("/sites/{}/findings?rule=lastmod-future", s.site.id);
        assert_eq!(app.get(&uri, Auth::Cookie(&bob.cookie)).await.0, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn the_table_shows_types_badges_an_index_with_its_children_rolled_up_and_removed_rows() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let a = actor(&s);
        let index =
            app.store.add_sitemap(a, s.site.id, "https://ann.example/index.xml", Source::Api, now()).await.unwrap();
        read(&app, index.id, "ok", 2, Some("index"), vec![]).await;
        let good = app
            .store
            .add_sitemap_for_site(s.site.id, "https://ann.example/c1.xml", Source::Index, Some(index.id), now())
            .await
            .unwrap();
        read(&app, good.id, "ok", 120, Some("web,image,hreflang"), vec![]).await;
        let bad = app
            .store
            .add_sitemap_for_site(s.site.id, "https://ann.example/c2.xml", Source::Index, Some(index.id), now())
            .await
            .unwrap();
        read(&app, bad.id, "failed", 0, None, vec![]).await;
        let feed =
            app.store.add_sitemap(a, s.site.id, "https://ann.example/feed.atom", Source::Api, now()).await.unwrap();
        read(&app, feed.id, "ok", 7, Some("atom,web"), vec![]).await;
        let gone =
            app.store.add_sitemap(a, s.site.id, "https://ann.example/old.xml", Source::Api, now()).await.unwrap();
        app.store.remove_sitemap(a, gone.id, now()).await.unwrap();

        let (status, _, html) = app.get("/", Auth::Cookie(&s.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let doc = Html::parse_document(&html);
        let row_text = |url: &str| -> String {
            select(&doc, "tr")
                .into_iter()
                .find(|tr| select_in(tr, "td a").first().is_some_and(|a| a.text().collect::<String>() == url))
                .map(|tr| tr.text().collect())
                .unwrap_or_else(|| panic!("no row of {url}: {html}"))
        };
        let index_row = row_text("https://ann.example/index.xml");
        assert!(index_row.contains("Sitemap index"), "{index_row}");
        assert!(
            index_row.contains("Has errors") && index_row.contains("1 of 2 sitemaps it lists couldn't be fetched"),
            "rolled up, the index itself read: {index_row}"
        );
        assert!(index_row.contains("120"), "the children's URLs: {index_row}");
        let good_row = row_text("https://ann.example/c1.xml");
        assert!(
            good_row.contains("Sitemap") && good_row.contains("image") && good_row.contains("hreflang"),
            "{good_row}"
        );
        assert!(good_row.contains("Success"), "{good_row}");
        assert!(row_text("https://ann.example/c2.xml").contains("Couldn't fetch"));
        assert!(row_text("https://ann.example/feed.atom").contains("Atom"));
        let old = row_text("https://ann.example/old.xml");
        assert!(old.contains("Removed") && old.contains("Restore"), "{old}");
        assert!(row_text("https://ann.example/sitemap.xml").contains("Has errors"));
        // The children sit in a collapsed <details> under their index, and link to their file.
        let details = select(&doc, "tr.children details");
        assert_eq!(details.len(), 1);
        assert!(details[0].value().attr("open").is_none(), "collapsed by default");
        assert!(!select(&doc, "a.file[href='https://ann.example/c1.xml']").is_empty(), "a link to the file itself");
        // The index's own page rolls up the same way and lists the children.
        let (_, _, html) = app.get(&format!("/sitemaps/{}", index.id), Auth::Cookie(&s.cookie)).await;
        let t = text(&html);
        assert!(t.contains("Couldn't fetch") && t.contains("Sitemaps in this index") && t.contains("c2.xml"), "{t}");
        // Restore brings the removed sitemap back.
        let uri = format!("/sitemaps/{}/resubmit", gone.id);
        let (status, _, _) = post_form(&app, &uri, &s.cookie, &format!("csrf={}", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(app.store.sitemap(a, gone.id).await.unwrap().removed_at.is_none());
    })
    .await;
}

fn select_in<'a>(el: &scraper::ElementRef<'a>, css: &str) -> Vec<scraper::ElementRef<'a>> {
    el.select(&Selector::parse(css).unwrap()).collect()
}

#[tokio::test]
async fn failing_urls_are_grouped_by_kind_and_exported_as_csv() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let o = "https://ann.example";
        let urls: Vec<UrlRecord> = ["gone", "e1", "e2", "moved", "hidden", "private"]
            .iter()
            .map(|p| UrlRecord { loc: format!("{o}/{p}"), lastmod: None, changefreq: None, priority: None })
            .collect();
        app.store.upsert_urls(s.site.id, s.sitemap.id, &urls, now()).await.unwrap();
        let rows = app.store.list_urls(actor(&s), s.site.id, UrlQuery::default()).await.unwrap().items;
        let id = |p: &str| rows.iter().find(|u| u.loc == format!("{o}/{p}")).unwrap().id;
        let check = |p: &str, status: Option<i64>, rule: &str, message: String| UrlCheckRecord {
            url_id: id(p),
            status,
            rule: Some(rule.into()),
            message: Some(message),
            version: None,
        };
        let checks = [
            check("gone", Some(410), "url-status", format!("{o}/gone answers 410")),
            check("e1", Some(503), "url-status", format!("{o}/e1 answers 503")),
            check("e2", Some(500), "url-status", format!("{o}/e2 answers 500")),
            check("moved", Some(301), "url-status", format!("{o}/moved redirects to {o}/new (answers 301)")),
            check("hidden", None, "url-noindex", format!("{o}/hidden sends X-Robots-Tag: noindex")),
            check("private", None, "robots-disallowed", format!("{o}/private is disallowed by its robots.txt")),
        ];
        app.store.record_url_checks(s.site.id, &checks, now()).await.unwrap();
        app.store.record_site_snapshot(s.site.id, now()).await.unwrap();
        let auth = Auth::Cookie(&s.cookie);
        let (_, _, html) = app.get(&format!("/sites/{}", s.site.id), auth).await;
        let t = text(&html);
        for expected in [
            "All (7)",
            "404 Not found (1)",
            "410 Gone (1)",
            "5xx Server error (2)",
            "Redirect (1)",
            "noindex (1)",
            "Blocked by robots.txt (1)",
            "301 → https://ann.example/new",
            "Download as CSV",
        ] {
            assert!(t.contains(expected), "site page lacks {expected:?}: {t}");
        }
        let doc = Html::parse_document(&html);
        assert_eq!(select(&doc, "svg[role=img] title").len(), 2, "pictures: URLs over time and failing by kind");
        assert!(t.contains("9 live URLs and 7 failing"), "{t}");
        let (_, _, html) = app.get(&format!("/sites/{}?kind=5xx", s.site.id), auth).await;
        let doc = Html::parse_document(&html);
        let listed: Vec<String> =
            select(&doc, "#failing-urls tbody tr td.url:first-child").iter().map(|td| td.text().collect()).collect();
        assert_eq!(listed, [format!("{o}/e1"), format!("{o}/e2")], "the 5xx kind only");
        let (status, headers, csv) = app.get(&format!("/sites/{}/failing.csv", s.site.id), auth).await;
        assert_eq!(status, StatusCode::OK);
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/csv"));
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "url,kind,status,rule,found,checked_at,sitemap");
        assert_eq!(lines.len(), 8, "{csv}");
        assert!(lines.iter().any(|l| l.starts_with(&format!("{o}/moved,redirect,301,url-status,"))), "{csv}");
        assert!(lines.iter().any(|l| l.starts_with(&format!("{o}/missing,404,404,"))), "{csv}");
    })
    .await;
}

#[tokio::test]
async fn check_now_runs_in_the_background_once_per_site_and_a_few_per_user() {
    let mut app = TestApp::new(false).await;
    let site = TestSite::start().await;
    for i in 0..120 {
        site.put(&format!("/p{i}"), "page");
    }
    site.put("/a", "page");
    site.put("/b", "page");
    // Slow checks (a pause per request), so the runs are still going while we press again.
    let config = CheckerConfig {
        check: mapwright_fetch::check::CheckConfig {
            per_host: 1,
            delay: Duration::from_millis(30),
            ..Default::default()
        },
        ..CheckerConfig::default()
    };
    app.state.checks = Arc::new(Jobs::new(config));
    let s = seed(&app, "ann@example.com", &site.origin).await;
    let urls: Vec<UrlRecord> = (0..120)
        .map(|i| UrlRecord { loc: site.url(&format!("/p{i}")), lastmod: None, changefreq: None, priority: None })
        .collect();
    app.store.upsert_urls(s.site.id, s.sitemap.id, &urls, now()).await.unwrap();
    let uri = format!("/sites/{}/check", s.site.id);
    let body = format!("csrf={}", s.csrf);
    // Ten presses at once: each answers at once, one run starts, nine are told why not.
    let started = Instant::now();
    let presses = (0..10).map(|_| post_form(&app, &uri, &s.cookie, &body, &[]));
    let answers = futures_util::future::join_all(presses).await;
    assert!(started.elapsed() < Duration::from_secs(3), "Check now waited for the check: {:?}", started.elapsed());
    let mut flashes = Vec::new();
    for (status, headers, _) in &answers {
        assert_eq!(*status, StatusCode::SEE_OTHER);
        flashes.push(set_cookie(headers).0);
    }
    assert_eq!(flashes.iter().filter(|f| f.contains("The+check+started")).count(), 1, "{flashes:?}");
    assert_eq!(flashes.iter().filter(|f| f.contains("running")).count(), 9, "{flashes:?}");
    // The page shows the progress and reloads itself while the run goes.
    let (_, headers, html) = app.get(&format!("/sites/{}", s.site.id), Auth::Cookie(&s.cookie)).await;
    assert!(text(&html).contains("Checking: "), "{html}");
    assert_eq!(headers.get("refresh").map(|v| v.to_str().unwrap()), Some("3"));
    // A second and a third site of the same user: the second starts, the third is over the limit.
    let slow = TestSite::start().await;
    let mut more = Vec::new();
    for host in [slow.origin.clone(), "https://three.example".to_owned()] {
        let other = app.store.create_site(actor(&s), &host, now()).await.unwrap();
        app.store.record_verification(other.id, true, now()).await.unwrap();
        let sm =
            app.store.add_sitemap(actor(&s), other.id, &format!("{host}/s.xml"), Source::Api, now()).await.unwrap();
        let urls: Vec<UrlRecord> = (0..100)
            .map(|i| UrlRecord { loc: format!("{host}/q{i}"), lastmod: None, changefreq: None, priority: None })
            .collect();
        app.store.upsert_urls(other.id, sm.id, &urls, now()).await.unwrap();
        more.push(other.id);
    }
    let two = post_form(&app, &format!("/sites/{}/check", more[0]), &s.cookie, &body, &[]).await;
    assert!(set_cookie(&two.1).0.contains("The+check+started"), "{:?}", set_cookie(&two.1));
    let three = post_form(&app, &format!("/sites/{}/check", more[1]), &s.cookie, &body, &[]).await;
    assert!(set_cookie(&three.1).0.contains("checks+running"), "{:?}", set_cookie(&three.1));
    // The run ends with its result on the page; the site got one run's requests.
    let deadline = Instant::now() + Duration::from_secs(60);
    while app.store.check_run(actor(&s), s.site.id).await.unwrap().unwrap().is_running() {
        assert!(Instant::now() < deadline, "the check did not finish");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pages: u32 = (0..120).map(|i| site.hits(&format!("/p{i}"))).sum::<u32>() + site.hits("/a") + site.hits("/b");
    assert_eq!(pages, 122, "one run, one request per URL, not ten runs");
    let (_, headers, html) = app.get(&format!("/sites/{}", s.site.id), Auth::Cookie(&s.cookie)).await;
    assert!(text(&html).contains("123 URLs checked, 1 failing"), "{html}");
    assert!(headers.get("refresh").is_none());
    // Pressing again right after is refused (cooldown), and says when.
    let again = post_form(&app, &uri, &s.cookie, &body, &[]).await;
    assert!(set_cookie(&again.1).0.contains("again+in"), "{:?}", set_cookie(&again.1));
}

#[tokio::test]
async fn the_background_checker_reaches_a_newly_verified_site() {
    let mut app = TestApp::new(false).await;
    let site = TestSite::start().await;
    site.put("/a", "page");
    let s = seed(&app, "ann@example.com", &site.origin).await;
    let config = CheckerConfig { poll: Duration::from_millis(100), ..CheckerConfig::default() };
    app.state.checks = Arc::new(Jobs::new(config));
    // The supervisor of a web process (no workers) runs the checker alone.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let jobs = mapwright_server::jobs::Config { workers: 0, checks: true, ..Default::default() };
    let task = mapwright_server::jobs::spawn(app.state.clone(), jobs, stopped);
    // Verified after the checker started: it is checked within the next rounds.
    let other = TestSite::start().await;
    other.put("/b", "page");
    let new_site = app.store.create_site(actor(&s), &other.origin, now()).await.unwrap();
    let sm = app.store.add_sitemap(actor(&s), new_site.id, &other.url("/s.xml"), Source::Api, now()).await.unwrap();
    let url = UrlRecord { loc: other.url("/b"), lastmod: None, changefreq: None, priority: None };
    app.store.upsert_urls(new_site.id, sm.id, &[url], now()).await.unwrap();
    app.store.record_verification(new_site.id, true, now()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.store.check_run(actor(&s), new_site.id).await.unwrap().is_none_or(|r| r.state != "done") {
        assert!(Instant::now() < deadline, "the checker never reached the new site");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(other.hits("/b") >= 1);
    let _ = stop.send(true);
    task.await.unwrap();
}

#[tokio::test]
async fn every_answer_of_the_console_is_a_page() {
    let app = TestApp::new(false).await;
    let s = seed(&app, "ann@example.com", "https://ann.example").await;
    let nav = Selector::parse("header nav a[href='/sitemaps/add']").unwrap();
    for (method, uri, status) in [
        ("GET", "/no/such/page", StatusCode::NOT_FOUND),
        ("GET", "/sitemaps/999999", StatusCode::NOT_FOUND),
        ("GET", "/sitemaps/not-a-number", StatusCode::BAD_REQUEST),
        ("GET", "/sites/1?failures_after=x", StatusCode::BAD_REQUEST),
        ("DELETE", "/sitemaps/1", StatusCode::METHOD_NOT_ALLOWED),
        ("GET", "/sites/1/verify", StatusCode::METHOD_NOT_ALLOWED),
    ] {
        let request = axum::http::Request::builder().method(method).uri(uri).header("cookie", &s.cookie);
        let (got, headers, html) = app.send(request.body(axum::body::Body::empty()).unwrap()).await;
        assert_eq!(got, status, "{method} {uri}: {html}");
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"), "{method} {uri}");
        let doc = Html::parse_document(&html);
        assert!(doc.select(&nav).next().is_some(), "{method} {uri} has the navigation: {html}");
        assert!(!select(&doc, "h1").is_empty(), "{html}");
    }
    // A form post that is too large is a page too.
    let big = format!("csrf={}&name={}", s.csrf, "x".repeat(20_000));
    let (status, headers, _) = post_form(&app, "/account/tokens", &s.cookie, &big, &[]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
    // The API keeps its own answers.
    let (status, headers, _) = app.get("/api/v1/no-such-thing", Auth::Cookie(&s.cookie)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!headers["content-type"].to_str().unwrap_or("").starts_with("text/html"));
}

#[tokio::test]
async fn tokens_are_created_with_post_redirect_get_and_revoked_after_confirmation() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let body = format!("csrf={}&name=deploy", s.csrf);
        let (status, headers, _) = post_form(&app, "/account/tokens", &s.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(headers["location"], "/account");
        let cookies: Vec<String> = headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
            .collect();
        let with = format!("{}; {}", s.cookie, cookies.join("; "));
        let (_, headers, html) = app.get("/account", Auth::Cookie(&with)).await;
        let doc = Html::parse_document(&html);
        let secret: String = select(&doc, "code.secret")[0].text().collect();
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::OK);
        let clears: Vec<&str> = headers.get_all("set-cookie").iter().map(|v| v.to_str().unwrap()).collect();
        assert!(clears.iter().any(|c| c.starts_with("mapwright_new_token=;") && c.contains("Max-Age=0")), "{clears:?}");
        // A reload (without the cleared cookie) shows no secret and creates nothing.
        let (_, _, html) = app.get("/account", Auth::Cookie(&s.cookie)).await;
        assert!(!html.contains(&secret) && !html.contains("code class=\"secret\""));
        let tokens = app.store.list_api_tokens(actor(&s)).await.unwrap();
        assert_eq!(tokens.iter().filter(|t| t.name == "deploy").count(), 1);
        // Revoking asks first.
        let deploy = tokens.iter().find(|t| t.name == "deploy").unwrap().id;
        let (status, _, html) = app.get(&format!("/account/tokens/{deploy}/revoke"), Auth::Cookie(&s.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("Revoke this token?") && html.contains("Cancel"), "{html}");
        assert_eq!(
            app.get("/api/v1/me", Auth::Bearer(&secret)).await.0,
            StatusCode::OK,
            "the question revokes nothing"
        );
        let uri = format!("/account/tokens/{deploy}/revoke");
        assert_eq!(post_form(&app, &uri, &s.cookie, &format!("csrf={}", s.csrf), &[]).await.0, StatusCode::SEE_OTHER);
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::UNAUTHORIZED);
        let bob = seed(&app, "bob@example.com", "https://bob.example").await;
        assert_eq!(app.get(&uri, Auth::Cookie(&bob.cookie)).await.0, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn a_site_is_deleted_after_confirmation() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let bob = seed(&app, "bob@example.com", "https://bob.example").await;
        let uri = format!("/sites/{}/delete", s.site.id);
        let (status, _, html) = app.get(&uri, Auth::Cookie(&s.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("Delete this site?") && html.contains("Cancel"));
        assert_eq!(app.get(&uri, Auth::Cookie(&bob.cookie)).await.0, StatusCode::NOT_FOUND);
        let (status, _, _) = post_form(&app, &uri, &bob.cookie, &format!("csrf={}", bob.csrf), &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(app.store.site(actor(&s), s.site.id).await.is_ok(), "the question and a stranger delete nothing");
        let (status, headers, _) = post_form(&app, &uri, &s.cookie, &format!("csrf={}", s.csrf), &[]).await;
        assert_eq!((status, headers["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/"));
        assert!(app.store.site(actor(&s), s.site.id).await.is_err());
        let (_, _, html) = app.get("/", Auth::Cookie(&s.cookie)).await;
        assert!(!text(&html).contains("https://ann.example/sitemap.xml"));
    })
    .await;
}

#[tokio::test]
async fn verification_keeps_the_added_sitemap_and_names_the_robots_sitemaps() {
    each_backend(false, |mut app| async move {
        // Verifies, fails, publishes the proof and verifies again at once: unpaced.
        app.state = crate::support::unpaced(app.state.clone());
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let web = TestSite::start().await;
        web.put("/robots.txt", &format!("User-agent: *\nSitemap: {}\n", web.url("/from-robots.xml")));
        let wanted = web.url("/typed.xml");
        let encoded: String = url::form_urlencoded::byte_serialize(wanted.as_bytes()).collect();
        let (status, headers, _) =
            post_form(&app, "/sitemaps/add", &s.cookie, &format!("csrf={}&url={encoded}", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let link = headers["location"].to_str().unwrap().to_owned();
        assert!(link.contains(&format!("add={encoded}")), "the way on keeps the typed sitemap: {link}");
        let (_, _, page) = app.get(&link, Auth::Cookie(&s.cookie)).await;
        let doc = Html::parse_document(&page);
        let hidden = select(&doc, "form[action$='/verify'] input[name=add]");
        assert_eq!(hidden[0].value().attr("value"), Some(wanted.as_str()));
        let verify = select(&doc, "form[action$='/verify']")[0].value().attr("action").unwrap().to_owned();
        // Without the proof: an error that says what was fetched and found, the sitemap still kept.
        let (status, headers, _) =
            post_form(&app, &verify, &s.cookie, &format!("csrf={}&add={encoded}", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(headers["location"].to_str().unwrap().contains(&format!("add={encoded}")));
        let flash = set_cookie(&headers).0;
        let (_, _, page) = app.get(&link, Auth::Cookie(&format!("{}; {flash}", s.cookie))).await;
        let doc = Html::parse_document(&page);
        let error: String = select(&doc, "#flash-error")[0].text().collect();
        assert!(error.starts_with("Not verified: ") && error.contains("mapwright-"), "{error}");
        assert_eq!(error.to_lowercase().matches("not verified").count(), 1, "said once: {error}");
        // Before verification robots.txt is not read: the page says so rather than "none found".
        let t = text(&page);
        assert!(t.contains("robots.txt is read once the site is verified") && !t.contains("None found"), "{t}");
        assert_eq!(select(&doc, "#flash-error")[0].value().attr("role"), Some("alert"));
        // With the proof: verified, the robots.txt sitemap named, the typed one added.
        let site = app.store.list_sites(actor(&s)).await.unwrap().into_iter().find(|x| x.origin == web.origin).unwrap();
        web.put(&format!("/mapwright-{}.html", site.verification_token), &site.verification_token);
        let (_, headers, _) = post_form(&app, &verify, &s.cookie, &format!("csrf={}&add={encoded}", s.csrf), &[]).await;
        let flash = set_cookie(&headers).0;
        let (_, _, page) =
            app.get(&format!("/sites/{}", site.id), Auth::Cookie(&format!("{}; {flash}", s.cookie))).await;
        let t = text(&page);
        assert!(t.contains(&format!("Added from its robots.txt: {}", web.url("/from-robots.xml"))), "{t}");
        assert!(t.contains(&format!("Added {wanted}")), "{t}");
        let sitemaps = app.store.list_sitemaps(actor(&s), site.id).await.unwrap();
        assert!(sitemaps.iter().any(|m| m.url == wanted) && sitemaps.len() == 2, "{sitemaps:?}");
    })
    .await;
}

/// A robots.txt that could not be read names no sitemap only as far as anyone knows: the
/// verification's message and the site's page say it could not be read, and why, never
/// that it names none.
#[tokio::test]
async fn a_robots_txt_that_could_not_be_read_is_said_so_not_that_it_names_none() {
    each_backend(false, |mut app| async move {
        // Room at the gate for the check and its file, not for robots.txt after them.
        let unpaced = crate::support::unpaced(app.state.clone());
        let rates = mapwright_server::outbound::Rates {
            http_per_host: mapwright_server::SharedLimit::new("out http per host", 2, Duration::from_secs(3600)),
            ..*unpaced.gate.rates()
        };
        app.state = unpaced.with_outbound_rates(rates);
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let web = TestSite::start().await;
        web.put("/robots.txt", &format!("User-agent: *\nSitemap: {}\n", web.url("/from-robots.xml")));
        let site = app.store.create_site(actor(&s), &web.origin, 0).await.unwrap();
        web.put(&format!("/mapwright-{}.html", site.verification_token), &site.verification_token);
        let verify = format!("/sites/{}/verify", site.id);
        let (status, headers, _) = post_form(&app, &verify, &s.cookie, &format!("csrf={}", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let flash = set_cookie(&headers).0;
        let (_, _, page) =
            app.get(&format!("/sites/{}", site.id), Auth::Cookie(&format!("{}; {flash}", s.cookie))).await;
        let t = crate::console::text(&page);
        assert!(t.contains("Verified"), "{t}");
        assert!(t.contains("robots.txt could not be read") && t.contains("held back"), "the flash says why: {t}");
        assert!(t.contains("could not be read when last tried"), "the page says it too: {t}");
        assert!(!t.contains("names no sitemap") && !t.contains("named no sitemap"), "{t}");
    })
    .await;
}
