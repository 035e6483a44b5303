//! Sitemaps: add, list, status with the last download, resubmit, remove, history, findings.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{call, call_json, sitemap_with_download, user, verified_site};
use crate::support::each_backend;

#[tokio::test]
async fn sitemaps_are_added_on_verified_sites_only() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let (site, web) = verified_site(&app, actor).await;
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let own = format!("{}/sitemap.xml", web.origin);
        let added =
            call_json(&app, "POST", &uri, &token, Some(json!({ "url": own })), StatusCode::CREATED, "Sitemap").await;
        assert_eq!((added["url"].as_str(), added["source"].as_str()), (Some(own.as_str()), Some("api")));
        assert_eq!(added["site_id"], site.id);

        let (status, _, text) = call(&app, "POST", &uri, Some(&token), Some(json!({ "url": "/s.xml" }))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
        let foreign = json!({ "url": "https://elsewhere.example/s.xml" });
        let (status, _, text) = call(&app, "POST", &uri, Some(&token), Some(foreign)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
        assert!(text.contains("robots.txt"), "{text}");

        let unverified = app.store.create_site(actor, "https://unverified.example", 0).await.unwrap();
        let uri2 = format!("/api/v1/sites/{}/sitemaps", unverified.id);
        let body = json!({ "url": "https://unverified.example/s.xml" });
        let (status, _, text) = call(&app, "POST", &uri2, Some(&token), Some(body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
        assert!(text.contains("not verified"), "{text}");

        let list = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Sitemap]").await;
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(
            call(&app, "GET", "/api/v1/sites/999999/sitemaps", Some(&token), None).await.0,
            StatusCode::NOT_FOUND
        );
    })
    .await;
}

#[tokio::test]
async fn a_sitemap_shows_its_last_download_history_and_findings() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, actor).await;
        let new = format!("{}/new.xml", site.origin);
        let bare = app.store.add_sitemap(actor, site.id, &new, mapwright_store::Source::Api, 0).await.unwrap();
        let (sitemap, download_id) = sitemap_with_download(&app, actor, &site).await;

        let shown = call_json(
            &app,
            "GET",
            &format!("/api/v1/sitemaps/{}", sitemap.id),
            &token,
            None,
            StatusCode::OK,
            "SitemapStatus",
        )
        .await;
        assert_eq!(shown["status"], "errors");
        assert_eq!(shown["last_download"]["id"], download_id);
        assert_eq!(
            (&shown["last_download"]["error_count"], &shown["last_download"]["warning_count"]),
            (&json!(1), &json!(1))
        );
        let uri = format!("/api/v1/sitemaps/{}", bare.id);
        let shown = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "SitemapStatus").await;
        assert_eq!(shown["last_download"], Value::Null);

        let uri = format!("/api/v1/sitemaps/{}/downloads", sitemap.id);
        let history = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Download]").await;
        assert_eq!(history.as_array().unwrap().len(), 1);
        assert_eq!((history[0]["bytes"].as_i64(), history[0]["http_status"].as_i64()), (Some(1234), Some(200)));

        let uri = format!("/api/v1/downloads/{download_id}/findings");
        let findings = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Finding]").await;
        let rules: Vec<&str> = findings.as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
        assert_eq!(rules, ["loc-missing", "lastmod-future"]);
        assert_eq!((findings[0]["line"].as_i64(), findings[0]["col"].as_i64()), (Some(3), Some(7)));
        let missing = call(&app, "GET", "/api/v1/downloads/999999/findings", Some(&token), None).await;
        assert_eq!(missing.0, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn resubmit_brings_the_fetch_forward_and_remove_stops_it() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, actor).await;
        let (sitemap, _) = sitemap_with_download(&app, actor, &site).await;
        assert_eq!(sitemap.next_fetch_at, 4_000_000_000);

        let uri = format!("/api/v1/sitemaps/{}/resubmit", sitemap.id);
        let resubmitted = call_json(&app, "POST", &uri, &token, None, StatusCode::ACCEPTED, "Sitemap").await;
        assert!(resubmitted["next_fetch_at"].as_i64().unwrap() < 4_000_000_000);
        assert_eq!(app.store.queue_depth(4_000_000_000).await.unwrap(), 1);

        let uri = format!("/api/v1/sitemaps/{}", sitemap.id);
        assert_eq!(call(&app, "DELETE", &uri, Some(&token), None).await.0, StatusCode::NO_CONTENT);
        let removed = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "SitemapStatus").await;
        assert!(removed["removed_at"].is_i64());
        assert_eq!(app.store.queue_depth(4_000_000_000).await.unwrap(), 0, "a removed sitemap is not fetched");
        let uri = format!("/api/v1/sitemaps/{}/downloads", sitemap.id);
        let history = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Download]").await;
        assert_eq!(history.as_array().unwrap().len(), 1, "the history stays");

        for (method, uri) in [
            ("POST", "/api/v1/sitemaps/999999/resubmit"),
            ("DELETE", "/api/v1/sitemaps/999999"),
            ("GET", "/api/v1/sitemaps/999999"),
            ("GET", "/api/v1/sitemaps/999999/downloads"),
        ] {
            assert_eq!(call(&app, method, uri, Some(&token), None).await.0, StatusCode::NOT_FOUND, "{method} {uri}");
        }
    })
    .await;
}
