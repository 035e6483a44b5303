//! A site's URLs: pages, CSV and JSONL exports, and the crawl frontier's order.

use axum::http::StatusCode;
use mapwright_store::{Actor, Site, Source, UrlRecord};
use serde_json::Value;

use super::{call, call_json, user, verified_site};
use crate::support::{TestApp, each_backend};
use crate::verify::TestSite;

/// Ann, her token, and a verified site of hers (with the test site that serves its proof).
async fn ann_with_a_verified_site(app: &TestApp) -> (Actor, String, Site, TestSite) {
    let (actor, token) = user(app, "ann@example.com").await;
    let (site, web) = verified_site(app, actor).await;
    (actor, token, site, web)
}

/// The site's URLs `/p0?q="a,b"` to `/p{n-1}?q="a,b"` (a quote and a comma for the CSV export),
/// each with a lastmod.
fn records(site: &Site, n: usize) -> Vec<UrlRecord> {
    (0..n)
        .map(|i| UrlRecord {
            loc: format!("{}/p{i}?q=\"a,b\"", site.origin),
            lastmod: Some("2024-01-01".into()),
            changefreq: None,
            priority: None,
        })
        .collect()
}

/// `n` URLs `<origin>/p<i>` on one sitemap, stored at time 100; returns the sitemap id.
async fn store_urls(app: &TestApp, actor: Actor, site: &Site, n: usize) -> i64 {
    let url = format!("{}/sitemap.xml", site.origin);
    let sitemap = app.store.add_sitemap(actor, site.id, &url, Source::Api, 0).await.unwrap();
    app.store.upsert_urls(site.id, sitemap.id, &records(site, n), 100).await.unwrap();
    sitemap.id
}

#[tokio::test]
async fn urls_page_by_id_with_removed_ones_on_request() {
    each_backend(false, |app| async move {
        let (actor, token, site, _web) = ann_with_a_verified_site(&app).await;
        let sitemap = store_urls(&app, actor, &site, 5).await;
        // Two of them leave the sitemap: the next read lists only three.
        app.store.upsert_urls(site.id, sitemap, &records(&site, 3), 200).await.unwrap();
        assert_eq!(app.store.sweep_urls(site.id, sitemap, 200, 200).await.unwrap(), 2);

        let base = format!("/api/v1/sites/{}/urls", site.id);
        let mut seen = Vec::new();
        let mut uri = format!("{base}?limit=2");
        loop {
            let page = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "UrlPage").await;
            seen.extend(page["items"].as_array().unwrap().iter().map(|u| u["loc"].as_str().unwrap().to_owned()));
            match page["next_after"].as_i64() {
                Some(after) => uri = format!("{base}?limit=2&after={after}"),
                None => break,
            }
        }
        assert_eq!(seen.len(), 3);
        assert!(seen[0].ends_with("/p0?q=\"a,b\""), "{seen:?}");

        let uri = format!("{base}?include_removed=true");
        let all = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "UrlPage").await;
        assert_eq!(all["items"].as_array().unwrap().len(), 5);
        assert_eq!(all["items"].as_array().unwrap().iter().filter(|u| u["removed_at"] == 200).count(), 2);
        assert_eq!(all["next_after"], Value::Null);
        assert_eq!(call(&app, "GET", &format!("{base}?limit=x"), Some(&token), None).await.0, StatusCode::BAD_REQUEST);
    })
    .await;
}

#[tokio::test]
async fn exports_stream_every_url_as_csv_and_jsonl() {
    each_backend(false, |app| async move {
        let (actor, token, site, _web) = ann_with_a_verified_site(&app).await;
        // More than one export page (1,000), so the stream crosses page boundaries.
        store_urls(&app, actor, &site, 2500).await;

        let (status, headers, text) =
            call(&app, "GET", &format!("/api/v1/sites/{}/urls.csv", site.id), Some(&token), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["content-type"], "text/csv; charset=utf-8");
        assert_eq!(headers["content-disposition"], format!("attachment; filename=\"site-{}-urls.csv\"", site.id));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
        assert_eq!(header[..3], ["id", "site_id", "loc"]);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2500);
        assert_eq!(&rows[0][2], format!("{}/p0?q=\"a,b\"", site.origin), "quotes and commas survive");
        assert_eq!(&rows[0][3], "2024-01-01");
        // Times as ISO 8601 UTC, like the failing-URL export, never Unix seconds.
        assert_eq!(header[6..9], ["first_seen_at", "last_seen_at", "changed_at"]);
        for at in [&rows[0][6], &rows[0][7], &rows[0][8]] {
            assert!(at.len() == 20 && at.ends_with('Z') && at.as_bytes()[10] == b'T', "not ISO: {at}");
        }
        assert_eq!(&rows[0][9], "", "not removed");
        let ids: Vec<i64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "in id order, each once");

        let (status, headers, text) =
            call(&app, "GET", &format!("/api/v1/sites/{}/urls.jsonl", site.id), Some(&token), None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["content-type"], "application/jsonl; charset=utf-8");
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2500);
        super::assert_schema(&lines[2499], "UrlRow");
        assert!(text.ends_with('\n'));

        let empty = app.store.create_site(actor, "https://empty.example", 0).await.unwrap();
        let (status, _, text) =
            call(&app, "GET", &format!("/api/v1/sites/{}/urls.csv", empty.id), Some(&token), None).await;
        assert_eq!((status, text.as_str()), (StatusCode::OK, ""));
        let (status, _, _) = call(&app, "GET", "/api/v1/sites/999999/urls.jsonl", Some(&token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn the_frontier_lists_changed_urls_first_then_priority_and_changefreq() {
    each_backend(false, |app| async move {
        let (actor, token, site, _web) = ann_with_a_verified_site(&app).await;
        let url = format!("{}/sitemap.xml", site.origin);
        let sitemap = app.store.add_sitemap(actor, site.id, &url, Source::Api, 0).await.unwrap();
        let record = |path: &str, priority: Option<f64>, changefreq: Option<&str>| UrlRecord {
            loc: format!("{}/{path}", site.origin),
            lastmod: None,
            changefreq: changefreq.map(str::to_owned),
            priority,
        };
        let old = [
            record("low", Some(0.1), None),
            record("high-weekly", Some(0.9), Some("weekly")),
            record("high-daily", Some(0.9), Some("daily")),
            record("plain", None, None),
        ];
        app.store.upsert_urls(site.id, sitemap.id, &old, 100).await.unwrap();
        app.store.upsert_urls(site.id, sitemap.id, &[record("new", Some(0.0), None)], 500).await.unwrap();

        let uri = format!("/api/v1/sites/{}/frontier?since=400", site.id);
        let frontier = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "Frontier").await;
        let order: Vec<&str> = frontier["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["loc"].as_str().unwrap().rsplit('/').next().unwrap())
            .collect();
        assert_eq!(order, ["new", "high-daily", "high-weekly", "plain", "low"]);
        assert_eq!(frontier["since"], 400);

        let uri = format!("/api/v1/sites/{}/frontier?since=400&limit=2", site.id);
        let frontier = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "Frontier").await;
        assert_eq!(frontier["items"].as_array().unwrap().len(), 2);
        let (status, _, _) = call(&app, "GET", "/api/v1/sites/999999/frontier", Some(&token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    })
    .await;
}
