//! Unchanged costs nothing (issue 36): a download whose bytes are those of the sitemap's last
//! whole read is recorded as unchanged, as a 304 is, without being read; anything else that came
//! between (a read cut short, a change) makes the next read a full one. Through the scheduler's
//! `run_job` against sites on 127.0.0.1, on both backends; what is stored is asserted (status
//! words, counts, findings, diffs, URLs and their times), not how long anything took.

use axum::http::StatusCode;
use mapwright_server::AppState;
use mapwright_store::{Actor, Site, UrlQuery, UrlRow};
use serde_json::{Value, json};

use crate::api::{call_json, owner_site};
use crate::sitehost::{SiteHost, index, urlset};
use crate::support::{TestApp, each_backend};

const WORKER: &str = "refetch-worker";

async fn drain(state: &AppState) -> usize {
    crate::support::drain_jobs(state, WORKER, 50).await
}

async fn add(app: &TestApp, token: &str, site: &Site, url: &str) -> i64 {
    let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
    let added = call_json(app, "POST", &uri, token, Some(json!({ "url": url })), StatusCode::CREATED, "Sitemap").await;
    added["id"].as_i64().unwrap()
}

/// Resubmits the sitemap (due now, an index with its tree) and runs what is due.
async fn read_again(app: &TestApp, token: &str, id: i64) {
    let uri = format!("/api/v1/sitemaps/{id}/resubmit");
    call_json(app, "POST", &uri, token, None, StatusCode::ACCEPTED, "Sitemap").await;
    assert!(drain(&app.state).await >= 1);
}

async fn shown(app: &TestApp, token: &str, id: i64) -> Value {
    call_json(app, "GET", &format!("/api/v1/sitemaps/{id}"), token, None, StatusCode::OK, "SitemapStatus").await
}

/// (status, http status, url count, errors) of the sitemap's last download.
fn last(s: &Value) -> (Value, Value, Value, Value) {
    let d = &s["last_download"];
    (d["status"].clone(), d["http_status"].clone(), d["url_count"].clone(), d["error_count"].clone())
}

/// (status, recorded, added, removed, changed) of each read's diff, newest first.
async fn diffs(app: &TestApp, token: &str, id: i64) -> Vec<(String, bool, i64, i64, i64)> {
    let uri = format!("/api/v1/sitemaps/{id}/diffs");
    let reads = call_json(app, "GET", &uri, token, None, StatusCode::OK, "[ReadDiff]").await;
    let n = |r: &Value, k: &str| r[k].as_i64().unwrap();
    reads
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let status = r["status"].as_str().unwrap().to_owned();
            (status, r["recorded"].as_bool().unwrap(), n(r, "added"), n(r, "removed"), n(r, "changed"))
        })
        .collect()
}

async fn findings(app: &TestApp, token: &str, s: &Value) -> Value {
    let uri = format!("/api/v1/downloads/{}/findings", s["last_download"]["id"]);
    call_json(app, "GET", &uri, token, None, StatusCode::OK, "[Finding]").await
}

/// The site's live URLs: (path, lastmod, last seen), by path.
async fn live(app: &TestApp, actor: Actor, site: &Site, web: &SiteHost) -> Vec<(String, Option<String>, i64)> {
    let query = UrlQuery { limit: 1_000, ..UrlQuery::default() };
    let rows: Vec<UrlRow> = app.store.list_urls(actor, site.id, query).await.unwrap().items;
    let mut out: Vec<_> = rows
        .into_iter()
        .map(|u| (u.loc.trim_start_matches(&web.origin).to_owned(), u.lastmod, u.last_seen_at))
        .collect();
    out.sort();
    out
}

fn paths(urls: &[(String, Option<String>, i64)]) -> Vec<(&str, Option<&str>)> {
    urls.iter().map(|(p, l, _)| (p.as_str(), l.as_deref())).collect()
}

#[tokio::test]
async fn the_same_bytes_again_are_unchanged_and_keep_the_verdict_findings_and_urls() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let (a, b, c) = (web.url("/a"), web.url("/b"), web.url("/c"));
        // An URL of another site: an error finding of every read of these bytes.
        let v1 = urlset(&[(&a, Some("2024-01-01")), (&b, None), (&c, None), ("http://elsewhere.example/x", None)]);
        web.put("/s.xml", &v1);
        let id = add(&app, &token, &site, &web.url("/s.xml")).await;
        drain(&app.state).await;
        let first = shown(&app, &token, id).await;
        let errors = first["errors"].clone();
        assert!(errors.as_i64().unwrap() >= 1, "{first:#}");
        assert_eq!(last(&first), (json!("errors"), json!(200), json!(4), errors.clone()));
        let first_findings = findings(&app, &token, &first).await;
        let before = live(&app, actor, &site, &web).await;

        // The same bytes, no validators: a 200 recorded as unchanged, standing for the first read.
        read_again(&app, &token, id).await;
        assert_eq!(web.hits("/s.xml"), 2, "fetched again");
        let again = shown(&app, &token, id).await;
        assert_eq!(last(&again), (json!("unchanged"), json!(200), json!(4), errors.clone()));
        assert_ne!(again["last_download"]["id"], first["last_download"]["id"]);
        assert_eq!(findings(&app, &token, &again).await, first_findings, "the findings of the read it stands for");
        assert_eq!((&again["status"], &again["errors"], &again["rollup_urls"]), (&json!("errors"), &errors, &json!(3)));
        let downloaded = again["last_downloaded_at"].as_i64().unwrap();
        assert!(downloaded > first["last_downloaded_at"].as_i64().unwrap(), "{again:#}");
        let after = live(&app, actor, &site, &web).await;
        assert_eq!(paths(&after), paths(&before));
        assert!(after.iter().all(|(_, _, seen)| *seen == downloaded), "every URL seen by this read: {after:?}");
        assert_eq!(diffs(&app, &token, id).await[0], ("unchanged".to_owned(), false, 0, 0, 0));

        // One URL changed, one removed: read in full, the diff says so.
        web.put("/s.xml", &urlset(&[(&a, Some("2024-02-02")), (&b, None), ("http://elsewhere.example/x", None)]));
        read_again(&app, &token, id).await;
        let changed = shown(&app, &token, id).await;
        assert_eq!(last(&changed), (json!("errors"), json!(200), json!(3), errors.clone()));
        assert_eq!(diffs(&app, &token, id).await[0], ("errors".to_owned(), true, 0, 1, 1));
        assert_eq!(paths(&live(&app, actor, &site, &web).await), [("/a", Some("2024-02-02")), ("/b", None)]);

        // The same bytes with an ETag: unchanged (a 200), then a 304, both standing for that read.
        let v2 = urlset(&[(&a, Some("2024-02-02")), (&b, None), ("http://elsewhere.example/x", None)]);
        web.put_etag("/s.xml", &v2, Some("\"v2\""));
        read_again(&app, &token, id).await;
        assert_eq!(last(&shown(&app, &token, id).await), (json!("unchanged"), json!(200), json!(3), errors.clone()));
        read_again(&app, &token, id).await;
        let not_modified = shown(&app, &token, id).await;
        assert_eq!(last(&not_modified), (json!("unchanged"), json!(304), json!(3), errors.clone()));
        assert_eq!(findings(&app, &token, &not_modified).await, findings(&app, &token, &changed).await);
        assert_eq!(not_modified["status"], "errors");
        assert_eq!(paths(&live(&app, actor, &site, &web).await), [("/a", Some("2024-02-02")), ("/b", None)]);
    })
    .await;
}

#[tokio::test]
async fn a_read_cut_short_between_two_equal_ones_stores_nothing_and_the_next_is_unchanged() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let (a, b, c, d) = (web.url("/a"), web.url("/b"), web.url("/c"), web.url("/d"));
        let v1 = urlset(&[(&a, Some("2024-01-01")), (&b, None), (&c, None)]);
        web.put("/s.xml", &v1);
        let id = add(&app, &token, &site, &web.url("/s.xml")).await;
        drain(&app.state).await;
        assert_eq!(last(&shown(&app, &token, id).await).0, "ok");

        // Cut short: a failed read, all or nothing: what came before the fault (a changed, d
        // new) is not merged; the URLs stay the last good read's.
        let cut = urlset(&[(&a, Some("2024-05-05")), (&d, None)]).replace("</urlset>\n", "<url><loc>http://");
        web.put("/s.xml", &cut);
        read_again(&app, &token, id).await;
        let cut_read = shown(&app, &token, id).await;
        assert_eq!(last(&cut_read).0, "failed");
        let rules = findings(&app, &token, &cut_read).await;
        assert!(rules.as_array().unwrap().iter().any(|f| f["rule"] == "xml-malformed"), "{rules:#}");
        let kept = live(&app, actor, &site, &web).await;
        assert_eq!(paths(&kept), [("/a", Some("2024-01-01")), ("/b", None), ("/c", None)]);

        // The first bytes again: the failed read stored nothing, so they are still the last
        // whole read's bytes and URLs: unchanged, as after a 404 below, with its verdict.
        web.put("/s.xml", &v1);
        read_again(&app, &token, id).await;
        let again = shown(&app, &token, id).await;
        assert_eq!(last(&again), (json!("unchanged"), json!(200), json!(3), json!(0)));
        assert_eq!(again["status"], "ok");
        assert_eq!(
            paths(&live(&app, actor, &site, &web).await),
            [("/a", Some("2024-01-01")), ("/b", None), ("/c", None)]
        );
        let reads = diffs(&app, &token, id).await;
        assert!(
            reads
                .iter()
                .all(|(status, _, added, removed, changed)| status != "failed"
                    || (*added, *removed, *changed) == (0, 0, 0)),
            "a failed read changed nothing: {reads:?}"
        );

        // A fetch that failed without a body (404) reads nothing: the same bytes after it are
        // unchanged again, and the sitemap's verdict is the read's they stand for.
        web.remove("/s.xml");
        read_again(&app, &token, id).await;
        let gone = shown(&app, &token, id).await;
        assert_eq!((&gone["last_download"]["http_status"], &gone["status"]), (&json!(404), &json!("failed")));
        web.put("/s.xml", &v1);
        read_again(&app, &token, id).await;
        let back = shown(&app, &token, id).await;
        assert_eq!(last(&back), (json!("unchanged"), json!(200), json!(3), json!(0)));
        assert_eq!((&back["status"], &back["rollup_urls"]), (&json!("ok"), &json!(3)));
        assert_eq!(
            paths(&live(&app, actor, &site, &web).await),
            [("/a", Some("2024-01-01")), ("/b", None), ("/c", None)]
        );
    })
    .await;
}

#[tokio::test]
async fn an_index_whose_children_are_unchanged_reads_none_of_them_again() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let (one, two) = (web.url("/one.xml"), web.url("/two.xml"));
        web.put("/index.xml", &index(&[(&one, None), (&two, None)]));
        let (a, b, c) = (web.url("/a"), web.url("/b"), web.url("/c"));
        web.put("/one.xml", &urlset(&[(&a, Some("2024-01-01")), (&b, None)]));
        web.put("/two.xml", &urlset(&[(&c, None)]));
        let id = add(&app, &token, &site, &web.url("/index.xml")).await;
        assert_eq!(drain(&app.state).await, 3);
        let first = shown(&app, &token, id).await;
        assert_eq!((&first["rollup_status"], &first["rollup_urls"]), (&json!("ok"), &json!(3)));
        let children: Vec<i64> = {
            let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
            let list = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Sitemap]").await;
            let mut ids: Vec<(String, i64)> = list
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["id"] != id)
                .map(|s| (s["url"].as_str().unwrap().to_owned(), s["id"].as_i64().unwrap()))
                .collect();
            ids.sort();
            ids.into_iter().map(|(_, id)| id).collect()
        };
        assert_eq!(children.len(), 2);

        // The whole tree again, same bytes: every read unchanged, the roll-up as it was.
        read_again(&app, &token, id).await;
        assert_eq!((web.hits("/index.xml"), web.hits("/one.xml"), web.hits("/two.xml")), (2, 2, 2));
        for sitemap in [id, children[0], children[1]] {
            let s = shown(&app, &token, sitemap).await;
            assert_eq!(
                (&s["last_download"]["status"], &s["last_download"]["http_status"]),
                (&json!("unchanged"), &json!(200))
            );
            assert_eq!(s["status"], "ok");
        }
        let again = shown(&app, &token, id).await;
        assert_eq!((&again["rollup_status"], &again["rollup_urls"]), (&json!("ok"), &json!(3)));
        assert_eq!(shown(&app, &token, children[0]).await["last_download"]["url_count"], 2);

        // One URL of one child changed: that child alone is read, its diff one change.
        web.put("/one.xml", &urlset(&[(&a, Some("2024-03-03")), (&b, None)]));
        read_again(&app, &token, id).await;
        assert_eq!(last(&shown(&app, &token, children[0]).await), (json!("ok"), json!(200), json!(2), json!(0)));
        assert_eq!(diffs(&app, &token, children[0]).await[0], ("ok".to_owned(), true, 0, 0, 1));
        assert_eq!(shown(&app, &token, children[1]).await["last_download"]["status"], "unchanged");
        assert_eq!(shown(&app, &token, id).await["last_download"]["status"], "unchanged");
        assert_eq!(shown(&app, &token, id).await["rollup_urls"], 3);
        let urls = live(&app, actor, &site, &web).await;
        assert_eq!(paths(&urls), [("/a", Some("2024-03-03")), ("/b", None), ("/c", None)]);
    })
    .await;
}

#[tokio::test]
async fn a_body_past_the_memory_bound_is_streamed_when_first_read_and_received_whole_after() {
    each_backend(false, |app| async move {
        let (_, token, site, web) = owner_site(&app, "ann@example.com").await;
        // 12,000 URLs of 360 bytes and more: 4.6 MB of XML, past the 4 MiB a job holds in
        // memory while it receives a body whole (the rest waits in a temporary file).
        let long = "x".repeat(320);
        let urls: Vec<String> = (0..12_000).map(|i| web.url(&format!("/{long}/{i:05}"))).collect();
        let body = |changed: Option<usize>| {
            let list: Vec<(&str, Option<&str>)> = urls
                .iter()
                .enumerate()
                .map(|(i, u)| (u.as_str(), Some(if Some(i) == changed { "2024-02-02" } else { "2024-01-01" })))
                .collect();
            urlset(&list)
        };
        let v1 = body(None);
        assert!(v1.len() > 4 << 20, "{} bytes", v1.len());
        web.put("/s.xml", &v1);
        let id = add(&app, &token, &site, &web.url("/s.xml")).await;
        // No key of a last whole read: the body is read as it arrives.
        drain(&app.state).await;
        let first = shown(&app, &token, id).await;
        assert_eq!(last(&first), (json!("ok"), json!(200), json!(12_000), json!(0)));
        assert_eq!(first["rollup_urls"], 12_000);

        // The same bytes, with that key now: received whole (through the temporary file) and
        // found equal, so not read.
        read_again(&app, &token, id).await;
        assert_eq!(last(&shown(&app, &token, id).await), (json!("unchanged"), json!(200), json!(12_000), json!(0)));

        // One lastmod changed: received whole, different, read from the spilled bytes.
        web.put("/s.xml", &body(Some(11_999)));
        read_again(&app, &token, id).await;
        let changed = shown(&app, &token, id).await;
        assert_eq!(last(&changed), (json!("ok"), json!(200), json!(12_000), json!(0)));
        assert_eq!(diffs(&app, &token, id).await[0], ("ok".to_owned(), true, 0, 0, 1));
        assert_eq!(changed["rollup_urls"], 12_000);
    })
    .await;
}
