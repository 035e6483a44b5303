//! Issue 32 item 7: a read's counts and verdict come from all of its findings, not the first
//! 1,000 the service stores. A served sitemap of 1,200 entries with a warning each, then a
//! fatal XML error, read by the job: "errors" with its error counted, in the store, the API
//! and the console, and the fatal finding among those stored.

use axum::http::StatusCode;
use mapwright_server::jobs::reads::run_job;
use mapwright_store::{Actor, Source};
use serde_json::Value;

use crate::sitehost::SiteHost;
use crate::support::{Auth, each_backend};

const WORKER: &str = "counts-worker";

#[tokio::test]
async fn a_fatal_error_after_a_thousand_warnings_fails_the_read_and_is_stored() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let user = app.store.create_user("ann@example.com", "h", false, 0).await.unwrap();
        let actor = Actor::from(&user);
        let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
        app.store.record_verification(site.id, true, 0).await.unwrap();
        // Each <loc> has blanks around its URL: a `loc-whitespace` warning per entry.
        let mut body = String::from(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
        );
        for i in 0..1200 {
            body.push_str(&format!("<url><loc> {}/p{i} </loc></url>\n", web.origin));
        }
        body.push_str("<url><loc>broken</lo></url>\n</urlset>\n");
        web.put_etag("/sitemap.xml", &body, None);
        let sitemap = app.store.add_sitemap(actor, site.id, &web.url("/sitemap.xml"), Source::Api, 0).await.unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        let jobs = app.store.lease_due_sitemaps(WORKER, now + 5, 10, 60).await.unwrap();
        assert_eq!(jobs.len(), 1);
        let outcome = run_job(&app.state, WORKER, &jobs[0]).await.unwrap();
        // Malformed XML mid-file: a read all or nothing, failed (as the CLI and the Python
        // package fail it), none of the 1,200 URLs before the fault stored.
        assert_eq!(outcome.status, "failed");
        assert_eq!(app.store.list_urls(actor, site.id, Default::default()).await.unwrap().items.len(), 0);

        let stored = app.store.sitemap(actor, sitemap.id).await.unwrap();
        assert_eq!(stored.status.as_deref(), Some("failed"));
        assert_eq!((stored.errors, stored.warnings), (1, 1200), "every finding counted");
        let download = &app.store.list_downloads(actor, sitemap.id, 1).await.unwrap()[0];
        assert_eq!((download.status.as_str(), download.error_count, download.warning_count), ("failed", 1, 1200));
        let findings = app.store.list_findings(actor, download.id).await.unwrap();
        assert!(findings.len() <= 1001, "the cap on stored findings stays: {}", findings.len());
        assert!(
            findings.iter().any(|f| f.rule == "xml-malformed" && f.severity == "error"),
            "the fatal finding is among those stored"
        );

        // The API says the same.
        let session = app.store.create_session(user.id, now, 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let (status, _, body) = app.get(&format!("/api/v1/sitemaps/{}", sitemap.id), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let json: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(json["status"], "failed", "{json}");
        assert_eq!((json["errors"].as_i64(), json["warnings"].as_i64()), (Some(1), Some(1200)), "{json}");
        assert_eq!(json["last_download"]["error_count"], 1, "{json}");
        // And the console.
        let (_, _, html) = app.get(&format!("/sitemaps/{}", sitemap.id), Auth::Cookie(&cookie)).await;
        let text = crate::console::text(&html);
        assert!(
            text.contains("Couldn't fetch") && text.contains("none of the URLs read before it were stored"),
            "{text}"
        );
    })
    .await;
}
