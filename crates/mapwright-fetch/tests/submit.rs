//! Ping and IndexNow against a local endpoint.

use crate::discover::test_config;
use crate::server::{Server, fixed};
use mapwright_fetch::Fetcher;
use mapwright_fetch::submit::{BatchResult, IndexNowKey, indexnow, ping};

#[tokio::test]
async fn ping_sends_the_sitemap_url_encoded_and_reports_the_status() {
    let s = Server::start().await;
    s.route("/ping?sitemap=https%3A%2F%2Fexample.com%2Fsitemap.xml%3Fa%3D1%26b%3D2", fixed(200, "text/plain", "ok"));
    let f = Fetcher::new(test_config()).unwrap();
    let status = ping(&f, &s.url("/ping"), "https://example.com/sitemap.xml?a=1&b=2").await.unwrap();
    assert_eq!(status, 200);
    // Another sitemap: the route does not match, the endpoint answers 404, and that is reported.
    assert_eq!(ping(&f, &s.url("/ping"), "https://example.com/other.xml").await.unwrap(), 404);
}

#[tokio::test]
async fn indexnow_posts_batches_per_host() {
    let s = Server::start().await;
    s.route("/indexnow", fixed(202, "text/plain", ""));
    let mut urls: Vec<String> = (0..10_001).map(|i| format!("https://a.example/{i}")).collect();
    urls.push("https://b.example/x".into());
    let key = IndexNowKey { key: "0123456789abcdef".into(), key_location: Some("https://a.example/key.txt".into()) };
    let f = Fetcher::new(test_config()).unwrap();
    let results = indexnow(&f, &s.url("/indexnow"), &key, &urls).await.unwrap();
    let r = |host: &str, urls, status| BatchResult { host: host.into(), urls, status };
    assert_eq!(results, vec![r("a.example", 10_000, 202), r("a.example", 1, 202), r("b.example", 1, 202)]);
    let log = s.take_log();
    assert_eq!(log.len(), 3);
    assert!(log.iter().all(|r| r.method == "POST" && r.headers["content-type"] == "application/json; charset=utf-8"));
    let last: serde_json::Value = serde_json::from_slice(&log[2].body).unwrap();
    assert_eq!(
        last,
        serde_json::json!({"host": "b.example", "key": "0123456789abcdef", "keyLocation": "https://a.example/key.txt", "urlList": ["https://b.example/x"]})
    );
    let second: serde_json::Value = serde_json::from_slice(&log[1].body).unwrap();
    assert_eq!(second["urlList"], serde_json::json!(["https://a.example/10000"]));
}

#[tokio::test]
async fn indexnow_refuses_a_malformed_key() {
    let s = Server::start().await;
    let f = Fetcher::new(test_config()).unwrap();
    let key = IndexNowKey { key: "short".into(), key_location: None };
    let err = indexnow(&f, &s.url("/indexnow"), &key, &["https://a.example/".into()]).await.unwrap_err();
    assert!(err.to_string().contains("must be 8 to 128 characters"), "{err}");
    assert!(s.take_log().is_empty());
}

/// What `submit --indexnow` sends: every URL of a sitemap read to its end, else an error.
#[tokio::test]
async fn urls_to_submit_is_all_or_nothing() {
    use mapwright_fetch::Error;
    use mapwright_fetch::submit::urls_to_submit;
    let s = Server::start().await;
    let urlset = |locs: &str| format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{locs}</urlset>");
    let u = s.url("/1");
    s.route(
        "/ok.xml",
        fixed(200, "application/xml", urlset(&format!("<url><loc>{u}</loc><lastmod>2024-01-01</lastmod></url>"))),
    );
    s.route(
        "/cut.xml",
        fixed(200, "application/xml", urlset(&format!("<url><loc>{u}</loc></url>")).replace("</urlset>", "<url><lo")),
    );
    s.route("/out.xml", fixed(200, "application/xml", urlset("<url><loc>http://elsewhere.invalid/x</loc></url>")));
    s.route("/empty.xml", fixed(200, "application/xml", urlset("")));
    let f = Fetcher::new(test_config()).unwrap();
    assert_eq!(urls_to_submit(&f, &s.url("/ok.xml"), None).await.unwrap(), vec![u.clone()]);
    // Found, but none as new as --since: an empty list, not an error.
    assert!(urls_to_submit(&f, &s.url("/ok.xml"), Some(1_800_000_000)).await.unwrap().is_empty());
    let err = urls_to_submit(&f, &s.url("/cut.xml"), None).await.unwrap_err();
    assert!(matches!(err, Error::Incomplete { .. }), "{err}");
    let err = urls_to_submit(&f, &s.url("/out.xml"), None).await.unwrap_err();
    assert!(matches!(err, Error::NoUrl { .. }) && err.to_string().contains("1 dropped as out of scope"), "{err}");
    let err = urls_to_submit(&f, &s.url("/empty.xml"), None).await.unwrap_err();
    assert!(matches!(err, Error::NoUrl { .. }), "{err}");
}
