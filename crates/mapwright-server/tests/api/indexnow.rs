//! IndexNow receiving: every answer of the protocol, key files served on 127.0.0.1, URLs
//! landing in the store and first in the crawl frontier.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use mapwright_server::indexnow::IndexNow;
use mapwright_store::{Actor, Site, Source, UrlQuery, UrlRecord};
use serde_json::{Value, json};

use super::{call, user, verified_site};
use crate::support::{TestApp, each_backend};
use crate::verify::TestSite;

const KEY: &str = "0123abcd-key";

/// `POST /indexnow` with the protocol's content type.
async fn post(app: &TestApp, body: &Value) -> (StatusCode, String) {
    let request = Request::post("/indexnow")
        .header("content-type", "application/json; charset=utf-8")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, _, text) = app.send(request).await;
    (status, text)
}

async fn get(app: &TestApp, query: &str) -> (StatusCode, String) {
    let (status, _, text) = call(app, "GET", &format!("/indexnow?{query}"), None, None).await;
    (status, text)
}

/// A verified site serving `KEY.txt`, its owner, and the site's authority (`127.0.0.1:port`).
async fn site_with_key(app: &TestApp) -> (Actor, Site, TestSite, String) {
    let (actor, _) = user(app, "ann@example.com").await;
    let (site, web) = verified_site(app, actor).await;
    web.put(&format!("/{KEY}.txt"), &format!("{KEY}\n"));
    let host = web.origin.trim_start_matches("http://").to_owned();
    (actor, site, web, host)
}

async fn live_locs(app: &TestApp, actor: Actor, site: &Site) -> Vec<String> {
    let page = app.store.list_urls(actor, site.id, UrlQuery::default()).await.unwrap();
    page.items.into_iter().map(|u| u.loc).collect()
}

#[tokio::test]
async fn accepted_urls_enter_the_store_and_lead_the_frontier() {
    each_backend(false, |app| async move {
        let (actor, site, web, host) = site_with_key(&app).await;
        let url = format!("{}/s.xml", web.origin);
        let sitemap = app.store.add_sitemap(actor, site.id, &url, Source::Api, 0).await.unwrap();
        let record = |path: &str, priority: f64| UrlRecord {
            loc: format!("{}/{path}", web.origin),
            lastmod: None,
            changefreq: None,
            priority: Some(priority),
        };
        let listed = [record("top", 1.0), record("old", 0.1)];
        app.store.upsert_urls(site.id, sitemap.id, &listed, 100).await.unwrap();

        let one = format!("{}/fresh", web.origin);
        let (status, text) = get(&app, &format!("url={one}&key={KEY}")).await;
        assert_eq!(status, StatusCode::OK, "{text}");

        let body = json!({
            "host": host,
            "key": KEY,
            "keyLocation": format!("{}/{KEY}.txt", web.origin),
            "urlList": [format!("{}/old", web.origin), format!("{}/second", web.origin)],
        });
        let (status, text) = post(&app, &body).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert!(text.contains("2 URLs stored"), "{text}");
        // Each submission is on the site's overview: how many URLs, the key file, accepted.
        let receipts = app.store.list_indexnow_receipts(actor, site.id, 10).await.unwrap();
        let seen: Vec<(i64, bool, &str)> =
            receipts.iter().map(|r| (r.url_count, r.accepted, r.key_location.as_str())).collect();
        let key_file = format!("{}/{KEY}.txt", web.origin);
        assert_eq!(seen, [(2, true, key_file.as_str()), (1, true, key_file.as_str())], "newest first");

        let mut locs = live_locs(&app, actor, &site).await;
        locs.sort();
        let expected: Vec<String> =
            ["fresh", "old", "second", "top"].iter().map(|p| format!("{}/{p}", web.origin)).collect();
        assert_eq!(locs, expected);
        // Pushed now, so first; the sitemap's "old" too, despite its low priority.
        let frontier = app.store.frontier(actor, site.id, 1000, 10).await.unwrap();
        let first: Vec<&str> = frontier.iter().map(|u| u.loc.rsplit('/').next().unwrap()).collect();
        assert_eq!(first[3], "top", "{first:?}");
        let mut pushed = first[..3].to_vec();
        pushed.sort();
        assert_eq!(pushed, ["fresh", "old", "second"]);
        let old = frontier.iter().find(|u| u.loc.ends_with("/old")).unwrap();
        assert_eq!(old.priority, Some(0.1), "a push keeps what the sitemap said");

        // The sitemaps stay the inventory: the next sweep removes pushed URLs none lists.
        app.store.upsert_urls(site.id, sitemap.id, &listed, i64::MAX / 4).await.unwrap();
        app.store.sweep_urls(site.id, sitemap.id, i64::MAX / 4, i64::MAX / 4).await.unwrap();
        let mut locs = live_locs(&app, actor, &site).await;
        locs.sort();
        assert_eq!(locs, [format!("{}/old", web.origin), format!("{}/top", web.origin)]);
    })
    .await;
}

/// A push is held to the site's URL quota as a read is; the answer counts what was stored,
/// not what was sent, and says what was refused and why; with nothing stored it is no success.
#[tokio::test]
async fn pushes_stay_within_the_url_quota_and_the_answer_counts_what_was_stored() {
    each_backend(false, |app| async move {
        let (actor, site, web, host) = site_with_key(&app).await;
        app.state.scheduler.url_quota.store(2, std::sync::atomic::Ordering::Relaxed);
        let key_file = format!("{}/{KEY}.txt", web.origin);
        // The same host over https: another origin, which no verified site has.
        let other = web.origin.replacen("http://", "https://", 1);
        let list = ["a", "b", "c"].map(|p| format!("{}/{p}", web.origin));
        // No keyLocation (its folder would hold one origin): the key file is at the first URL's root.
        let body = json!({ "host": host, "key": KEY, "urlList": [list[0], list[1], list[2], format!("{other}/d")] });
        let (status, text) = post(&app, &body).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert!(text.contains("2 URLs stored"), "{text}");
        assert!(text.contains("1 refused: the site holds its quota of 2 URLs"), "{text}");
        assert!(text.contains("1 refused: no verified site on their origin"), "{text}");
        assert_eq!(live_locs(&app, actor, &site).await.len(), 2, "never past the quota");

        // Full: a push of new URLs stores nothing and is not answered as a success.
        let body =
            json!({ "host": host, "key": KEY, "keyLocation": key_file, "urlList": [format!("{}/e", web.origin)] });
        let (status, text) = post(&app, &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
        assert!(text.contains("nothing stored") && text.contains("quota"), "{text}");
        assert_eq!(live_locs(&app, actor, &site).await.len(), 2);
        let receipts = app.store.list_indexnow_receipts(actor, site.id, 10).await.unwrap();
        let seen: Vec<(i64, bool)> = receipts.iter().map(|r| (r.url_count, r.accepted)).collect();
        assert_eq!(seen, [(0, false), (2, true)], "newest first: what each stored");
    })
    .await;
}

#[tokio::test]
async fn hosts_without_a_verified_site_get_202_and_nothing_is_fetched_or_stored() {
    each_backend(false, |app| async move {
        let (actor, _) = user(&app, "ann@example.com").await;
        // An unverified site on a live host that serves the key: still nothing stored.
        let web = TestSite::start().await;
        web.put(&format!("/{KEY}.txt"), KEY);
        let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
        let (status, text) = get(&app, &format!("url={}/a&key={KEY}", web.origin)).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{text}");
        assert!(live_locs(&app, actor, &site).await.is_empty());
        assert!(app.store.list_indexnow_receipts(actor, site.id, 10).await.unwrap().is_empty(), "nothing recorded");
        // A host that does not exist: no fetch is even tried.
        let (status, _) = get(&app, &format!("url=https://nowhere.invalid/a&key={KEY}")).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    })
    .await;
}

#[tokio::test]
async fn malformed_requests_are_400() {
    each_backend(false, |app| async move {
        let (_, _, web, host) = site_with_key(&app).await;
        let page = format!("{}/a", web.origin);
        let too_many: Vec<String> = (0..10_001).map(|i| format!("{}/p{i}", web.origin)).collect();
        for (query, why) in [
            (format!("url={page}"), "missing the key"),
            (format!("key={KEY}"), "no URL"),
            (format!("url=/a&key={KEY}"), "not an absolute URL"),
            (format!("url=ftp://x.example/a&key={KEY}"), "not an http or https URL"),
            (format!("url={page}&key={KEY}&keyLocation=/k.txt"), "keyLocation"),
        ] {
            let (status, text) = get(&app, &query).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {text}");
            assert!(text.contains(why), "{query}: {text}");
        }
        for (body, why) in [
            (json!({ "key": KEY, "urlList": [page] }), "no host"),
            (json!({ "host": host, "key": KEY, "urlList": [] }), "no URL"),
            (json!({ "host": host, "key": KEY, "urlList": too_many }), "at most 10000"),
            (json!({ "host": host, "key": KEY, "urlList": "not a list" }), "not an IndexNow JSON object"),
        ] {
            let (status, text) = post(&app, &body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {text}");
            assert!(text.contains(why), "{text}");
        }
        let request = Request::post("/indexnow").body(Body::from("{not json")).unwrap();
        assert_eq!(app.send(request).await.0, StatusCode::BAD_REQUEST);
    })
    .await;
}

#[tokio::test]
async fn a_missing_or_wrong_key_file_is_403() {
    each_backend(false, |app| async move {
        let (actor, site, web, _) = site_with_key(&app).await;
        let page = format!("{}/a", web.origin);
        let (status, text) = get(&app, &format!("url={page}&key=absent-key-1")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
        assert!(text.contains("404"), "{text}");
        web.put("/other-key-2.txt", "something else");
        let (status, text) = get(&app, &format!("url={page}&key=other-key-2")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
        assert!(text.contains("does not hold the key"), "{text}");
        assert!(live_locs(&app, actor, &site).await.is_empty());
        // Both refusals are on the site's overview, with why.
        let receipts = app.store.list_indexnow_receipts(actor, site.id, 10).await.unwrap();
        assert_eq!(receipts.iter().filter(|r| !r.accepted).count(), 2, "{receipts:?}");
        assert!(receipts[0].reason.as_deref().is_some_and(|r| r.contains("does not hold the key")), "{receipts:?}");
        assert!(receipts[1].reason.as_deref().is_some_and(|r| r.contains("404")), "{receipts:?}");

        // A good key is cached: with its file gone, the next submission still passes.
        assert_eq!(get(&app, &format!("url={page}&key={KEY}")).await.0, StatusCode::OK);
        web.remove(&format!("/{KEY}.txt"));
        assert_eq!(get(&app, &format!("url={page}/b&key={KEY}")).await.0, StatusCode::OK);
        // A fresh receiver has no cache, and refuses.
        let mut app = app;
        app.state.indexnow = Arc::new(IndexNow::default());
        assert_eq!(get(&app, &format!("url={page}/c&key={KEY}")).await.0, StatusCode::FORBIDDEN);
    })
    .await;
}

#[tokio::test]
async fn urls_off_the_host_and_bad_keys_are_422() {
    each_backend(false, |app| async move {
        let (actor, site, web, host) = site_with_key(&app).await;
        let page = format!("{}/blog/a", web.origin);
        for body in [
            json!({ "host": host, "key": KEY, "urlList": [page, "https://elsewhere.example/a"] }),
            json!({ "host": "elsewhere.example", "key": KEY, "urlList": [page] }),
            json!({ "host": host, "key": "short", "urlList": [page] }),
            json!({ "host": host, "key": "bad_key_underscore", "urlList": [page] }),
            json!({ "host": host, "key": KEY, "keyLocation": "https://elsewhere.example/k.txt", "urlList": [page] }),
            json!({ "host": host, "key": KEY, "keyLocation": format!("{}/shop/{KEY}.txt", web.origin), "urlList": [page] }),
        ] {
            let (status, text) = post(&app, &body).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {text}");
        }
        assert!(live_locs(&app, actor, &site).await.is_empty());
    })
    .await;
}

#[tokio::test]
async fn submissions_are_rate_limited_per_client_and_per_host() {
    let app = TestApp::new(false).await;
    let mut app = app;
    app.state.indexnow = Arc::new(IndexNow::new(2, 100));
    let query = |n: u32| format!("url=https://h{n}.example/a&key={KEY}");
    assert_eq!(get(&app, &query(1)).await.0, StatusCode::ACCEPTED);
    assert_eq!(get(&app, &query(2)).await.0, StatusCode::ACCEPTED);
    let (status, headers, text) = call(&app, "GET", &format!("/indexnow?{}", query(3)), None, None).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);

    app.state.indexnow = Arc::new(IndexNow::new(100, 2));
    assert_eq!(get(&app, &query(1)).await.0, StatusCode::ACCEPTED);
    assert_eq!(get(&app, &query(1)).await.0, StatusCode::ACCEPTED);
    assert_eq!(get(&app, &query(1)).await.0, StatusCode::TOO_MANY_REQUESTS, "the host's limit");
    assert_eq!(get(&app, &query(2)).await.0, StatusCode::ACCEPTED, "another host passes");
}

/// A stranger may send submissions for any verified site: each site keeps only its newest
/// receipts, so a flood replaces rows and never adds past the cap.
#[tokio::test]
async fn receipts_are_capped_per_site() {
    each_backend(false, |app| async move {
        let (actor, site, web, _) = site_with_key(&app).await;
        let cap = mapwright_store::MAX_INDEXNOW_RECEIPTS;
        let key_file = format!("{}/{KEY}.txt", web.origin);
        for n in 0..cap + 5 {
            let refused = (n % 2 == 1).then_some("the key is not valid");
            app.store.record_indexnow_receipt(site.id, n, n, &key_file, refused).await.unwrap();
        }
        let kept = app.store.list_indexnow_receipts(actor, site.id, cap + 50).await.unwrap();
        assert_eq!(kept.len() as i64, cap);
        assert_eq!((kept[0].url_count, kept[kept.len() - 1].url_count), (cap + 4, 5), "the newest, newest first");
        assert!(kept[0].accepted && !kept[1].accepted, "each with its own outcome");
        // A site that is gone takes none.
        assert!(app.store.record_indexnow_receipt(site.id + 1000, 0, 1, &key_file, None).await.is_err());
    })
    .await;
}

/// A body that never ends: what a slow (or hostile) client sends.
fn endless_body() -> Body {
    Body::from_stream(futures_util::stream::pending::<Result<axum::body::Bytes, std::io::Error>>())
}

fn large_post(length: usize, body: Body) -> Request<Body> {
    Request::post("/indexnow").header("content-length", length.to_string()).body(body).unwrap()
}

/// A client past its limit is refused before its body is read: it holds no memory, and its
/// answer does not wait for a body that never ends.
#[tokio::test]
async fn the_per_client_limit_is_counted_before_the_body_is_read() {
    let mut app = TestApp::new(false).await;
    app.state.indexnow = Arc::new(IndexNow::new(1, 100));
    let body = json!({ "host": "h.example", "key": KEY, "urlList": ["https://h.example/a"] });
    assert_eq!(post(&app, &body).await.0, StatusCode::ACCEPTED);
    let refused =
        tokio::time::timeout(std::time::Duration::from_secs(5), app.send(large_post(1 << 20, endless_body())));
    let (status, headers, text) = refused.await.expect("answered without reading the body");
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert!(headers.contains_key("retry-after"));
}

/// Bodies past the usual limit share one budget of memory: while it is taken, another large
/// body is refused with 503 and Retry-After before it is read; small ones still pass.
#[tokio::test]
async fn large_bodies_share_one_memory_budget() {
    let mut app = TestApp::new(false).await;
    app.state.indexnow = Arc::new(IndexNow::default().with_body_budget(1 << 20));
    let length = 800_000;
    // One client holds most of the budget with a body it never finishes.
    let holder = {
        let (state, request) = (app.state.clone(), large_post(length, endless_body()));
        tokio::spawn(async move {
            use tower::ServiceExt;
            mapwright_server::app(state).oneshot(request).await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (status, headers, text) = app.send(large_post(length, Body::from(vec![b' '; length]))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
    // No Content-Length: past the usual limit it needs the largest share, refused as it grows.
    let start = futures_util::stream::iter([Ok::<_, std::io::Error>(axum::body::Bytes::from(vec![b' '; 100_000]))]);
    let request = Request::post("/indexnow")
        .body(Body::from_stream(futures_util::StreamExt::chain(start, futures_util::stream::pending())))
        .unwrap();
    let refused = tokio::time::timeout(std::time::Duration::from_secs(5), app.send(request));
    assert_eq!(refused.await.expect("refused before the rest").0, StatusCode::SERVICE_UNAVAILABLE);
    // A small body needs no share of the budget.
    let body = json!({ "host": "h.example", "key": KEY, "urlList": ["https://h.example/a"] });
    assert_eq!(post(&app, &body).await.0, StatusCode::ACCEPTED);
    // The budget comes back when the large body's request ends.
    holder.abort();
    let _ = holder.await;
    let (status, _, text) = app.send(large_post(length, Body::from(vec![b' '; length]))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "read and parsed (blank is no JSON): {text}");
}

/// A declared length past the largest submission is refused with 413 at once, before a byte of
/// the body is read and without a share of the large bodies' budget.
#[tokio::test]
async fn a_declared_length_past_the_limit_is_refused_before_the_body() {
    let app = TestApp::new(false).await;
    let length = mapwright_server::indexnow::BODY_LIMIT + 1;
    let refused = tokio::time::timeout(std::time::Duration::from_secs(5), app.send(large_post(length, endless_body())));
    let (status, _, text) = refused.await.expect("answered without reading the body");
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
    assert!(text.contains("larger than"), "{text}");
}
