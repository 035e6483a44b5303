//! A client's life with the API, on both backends: it adds, re-adds, resubmits, removes and
//! restores sitemaps, deletes a site and adds another, checks its URLs now and reads the
//! failing-URL report (pages, CSV, JSON Lines). Every answer it meets must be documented for
//! its operation in `openapi.yaml`, and ids are never reused after a delete.

use axum::http::StatusCode;
use mapwright_store::{Retention, UrlRecord};
use serde_json::{Value, json};

use super::{assert_problem, assert_schema, call, call_json, openapi, user};
use crate::sitehost::{SiteHost, urlset};
use crate::support::{TestApp, each_backend, poll_until};

/// Answers the client met: (method, path template, status).
#[derive(Default)]
struct Met(Vec<(String, String, u16)>);

impl Met {
    /// Sends the request, notes its answer under `template`, and returns it.
    async fn call(
        &mut self,
        app: &TestApp,
        method: &str,
        template: &str,
        uri: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, axum::http::HeaderMap, String) {
        let answer = call(app, method, uri, Some(token), body).await;
        self.0.push((method.to_ascii_lowercase(), template.to_owned(), answer.0.as_u16()));
        answer
    }

    /// Every answer met is documented for its operation.
    fn all_documented(&self) {
        for (method, template, status) in &self.0 {
            let responses = &openapi()["paths"][template][method]["responses"];
            assert!(responses.is_object(), "{method} {template} is not documented");
            assert!(
                responses.get(status.to_string()).is_some(),
                "{method} {template} answered {status}, which openapi.yaml does not list"
            );
        }
    }
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn re_adding_resubmitting_and_removing_meet_only_documented_answers() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let web = SiteHost::start().await;
        let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
        app.store.record_verification(site.id, true, 1).await.unwrap();
        let mut met = Met::default();
        let list = "/api/v1/sites/{id}/sitemaps";
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let body = json!({ "url": web.url("/sitemap.xml") });

        let (status, _, text) = met.call(&app, "POST", list, &uri, &token, Some(body.clone())).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        let first: Value = serde_json::from_str(&text).unwrap();
        assert_schema(&first, "Sitemap");
        let id = first["id"].as_i64().unwrap();
        assert_eq!(first["last_submitted_at"], first["submitted_at"]);

        // Re-added while there: 200, the same sitemap, nothing changed.
        let (status, _, text) = met.call(&app, "POST", list, &uri, &token, Some(body.clone())).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        let again: Value = serde_json::from_str(&text).unwrap();
        assert_schema(&again, "Sitemap");
        assert_eq!((&again["id"], &again["submitted_at"]), (&first["id"], &first["submitted_at"]));

        // Resubmitted: `last_submitted_at` moves, `submitted_at` stays (one meaning each).
        let one = "/api/v1/sitemaps/{id}";
        let resubmit = format!("/api/v1/sitemaps/{id}/resubmit");
        app.store.resubmit_sitemap(actor, id, first["submitted_at"].as_i64().unwrap() + 100).await.unwrap();
        let (status, _, text) = met.call(&app, "GET", one, &format!("/api/v1/sitemaps/{id}"), &token, None).await;
        assert_eq!(status, StatusCode::OK);
        let shown: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(shown["submitted_at"], first["submitted_at"], "a resubmit is not a first submission");
        assert_eq!(shown["last_submitted_at"], first["submitted_at"].as_i64().unwrap() + 100);
        let (status, _, _) = met.call(&app, "POST", "/api/v1/sitemaps/{id}/resubmit", &resubmit, &token, None).await;
        assert_eq!(status, StatusCode::ACCEPTED);

        // Removed, removed again, re-added (restored: 200), removed, resubmitted (restored: 202).
        let path = format!("/api/v1/sitemaps/{id}");
        assert_eq!(met.call(&app, "DELETE", one, &path, &token, None).await.0, StatusCode::NO_CONTENT);
        assert_eq!(met.call(&app, "DELETE", one, &path, &token, None).await.0, StatusCode::NO_CONTENT);
        let (status, _, text) = met.call(&app, "POST", list, &uri, &token, Some(body.clone())).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        let restored: Value = serde_json::from_str(&text).unwrap();
        assert_eq!((&restored["id"], &restored["removed_at"]), (&json!(id), &Value::Null));
        assert!(
            restored["submitted_at"].as_i64().unwrap() >= first["submitted_at"].as_i64().unwrap(),
            "restored: submitted now"
        );
        assert_eq!(met.call(&app, "DELETE", one, &path, &token, None).await.0, StatusCode::NO_CONTENT);
        let (status, _, text) = met.call(&app, "POST", "/api/v1/sitemaps/{id}/resubmit", &resubmit, &token, None).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["removed_at"], Value::Null);
        let (status, _, _) = met.call(&app, "GET", list, &uri, &token, None).await;
        assert_eq!(status, StatusCode::OK);

        // What a client also meets: bad input, another user's or an unknown id, a site not
        // verified.
        assert_eq!(
            met.call(&app, "POST", list, &uri, &token, Some(json!({ "url": "nope" }))).await.0,
            StatusCode::BAD_REQUEST
        );
        let missing = "/api/v1/sitemaps/999999999/resubmit";
        assert_eq!(
            met.call(&app, "POST", "/api/v1/sitemaps/{id}/resubmit", missing, &token, None).await.0,
            StatusCode::NOT_FOUND
        );
        let other = app.store.create_site(actor, "https://unverified.example", 0).await.unwrap();
        let other_uri = format!("/api/v1/sites/{}/sitemaps", other.id);
        let (status, headers, text) = met
            .call(&app, "POST", list, &other_uri, &token, Some(json!({ "url": "https://unverified.example/s.xml" })))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_problem(status, &headers, &text);
        met.all_documented();
    })
    .await;
}

#[tokio::test]
async fn ids_are_never_reused_after_a_delete() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        // The newest site, its sitemap and its download go; what comes next gets new ids.
        let site = app.store.create_site(actor, "https://one.example", 0).await.unwrap();
        app.store.record_verification(site.id, true, 1).await.unwrap();
        let (sitemap, download) = super::sitemap_with_download(&app, actor, &site).await;
        let (status, _, _) = call(&app, "DELETE", &format!("/api/v1/sites/{}", site.id), Some(&token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let next = app.store.create_site(actor, "https://two.example", 0).await.unwrap();
        app.store.record_verification(next.id, true, 1).await.unwrap();
        let (next_sitemap, next_download) = super::sitemap_with_download(&app, actor, &next).await;
        assert!(next.id > site.id && next_sitemap.id > sitemap.id && next_download > download);
        for old in [
            format!("/api/v1/sites/{}", site.id),
            format!("/api/v1/sitemaps/{}", sitemap.id),
            format!("/api/v1/downloads/{download}/findings"),
        ] {
            let (status, headers, text) = call(&app, "GET", &old, Some(&token), None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{old} must not open another object: {text}");
            assert_problem(status, &headers, &text);
        }
        // A token: revoked, deleted by retention a week later; the next one gets a new id.
        let (revoked, _) = app.store.create_api_token(actor, "old", 0).await.unwrap();
        app.store.revoke_api_token(actor, revoked.id, 0).await.unwrap();
        let policy = Retention {
            keep_downloads: 100,
            ping_max_age: i64::MAX / 4,
            removed_url_max_age: i64::MAX / 4,
            unverified_site_max_age: i64::MAX / 4,
            batch: 100,
        };
        let report = app.store.apply_retention(policy, 30 * 86_400).await.unwrap();
        assert_eq!(report.tokens, 1);
        let (fresh, _) = app.store.create_api_token(actor, "new", 0).await.unwrap();
        assert!(fresh.id > revoked.id, "{} reused", fresh.id);
        let (status, _, _) = call(&app, "DELETE", &format!("/api/v1/tokens/{}", revoked.id), Some(&token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn check_now_and_the_failing_url_report_are_routes_of_the_api() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let web = SiteHost::start().await;
        let mut met = Met::default();
        let check = "/api/v1/sites/{id}/url-check";
        let site = app.store.create_site(actor, &web.origin, now()).await.unwrap();
        let uri = format!("/api/v1/sites/{}/url-check", site.id);
        let (status, headers, text) = met.call(&app, "POST", check, &uri, &token, None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "not verified: {text}");
        assert!(assert_problem(status, &headers, &text).contains("verif"));
        app.store.record_verification(site.id, true, now()).await.unwrap();

        // Two URLs; /missing answers 404. The site holds its answers while the run starts.
        let sitemap = app
            .store
            .add_sitemap(actor, site.id, &web.url("/sitemap.xml"), mapwright_store::Source::Api, now())
            .await
            .unwrap();
        web.put("/sitemap.xml", &urlset(&[(&web.url("/a"), None), (&web.url("/missing"), None)]));
        web.put("/a", "<p>a</p>");
        let urls: Vec<UrlRecord> = ["/a", "/missing"]
            .iter()
            .map(|p| UrlRecord { loc: web.url(p), lastmod: None, changefreq: None, priority: None })
            .collect();
        app.store.upsert_urls(site.id, sitemap.id, &urls, now()).await.unwrap();
        web.hold.store(true, std::sync::atomic::Ordering::SeqCst);
        let (status, _, text) = met.call(&app, "POST", check, &uri, &token, None).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{text}");
        let started: Value = serde_json::from_str(&text).unwrap();
        assert_schema(&started, "UrlCheck");
        assert_eq!(started["state"], "running");
        let (status, headers, text) = met.call(&app, "POST", check, &uri, &token, None).await;
        assert_eq!(status, StatusCode::CONFLICT, "a run is going: {text}");
        assert_problem(status, &headers, &text);
        web.hold.store(false, std::sync::atomic::Ordering::SeqCst);
        let run = || call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "UrlCheck");
        let finished = || {
            let run = run();
            async move { Some(run.await).filter(|run| run["state"] != "running") }
        };
        let done = match poll_until(std::time::Duration::from_secs(5), finished).await {
            Some(done) => done,
            None => run().await,
        };
        assert_eq!(
            (&done["state"], &done["checked"], &done["failing"]),
            (&json!("done"), &json!(2), &json!(1)),
            "{done:#}"
        );
        let (status, headers, text) = met.call(&app, "POST", check, &uri, &token, None).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "moments after a run: {text}");
        assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);

        // The report: a page, one kind, CSV and JSON Lines, all saying the same.
        let failing = "/api/v1/sites/{id}/failing-urls";
        let page_uri = format!("/api/v1/sites/{}/failing-urls", site.id);
        let (status, _, text) = met.call(&app, "GET", failing, &page_uri, &token, None).await;
        assert_eq!(status, StatusCode::OK);
        let page: Value = serde_json::from_str(&text).unwrap();
        assert_schema(&page, "FailurePage");
        let items = page["items"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(
            (&items[0]["loc"], &items[0]["kind"], &items[0]["status"]),
            (&json!(web.url("/missing")), &json!("404"), &json!(404))
        );
        let of_kind =
            call_json(&app, "GET", &format!("{page_uri}?kind=5xx"), &token, None, StatusCode::OK, "FailurePage").await;
        assert_eq!(of_kind["items"], json!([]));
        let (status, _, _) = met.call(&app, "GET", failing, &format!("{page_uri}?kind=teapot"), &token, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let csv = "/api/v1/sites/{id}/failing-urls.csv";
        let (status, headers, text) = met.call(&app, "GET", csv, &format!("{page_uri}.csv"), &token, None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/csv"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "url,kind,status,rule,found,checked_at,sitemap");
        assert!(lines[1].starts_with(&format!("{},404,404,url-status,", web.url("/missing"))), "{text}");
        assert_eq!(lines.len(), 2);
        let jsonl = "/api/v1/sites/{id}/failing-urls.jsonl";
        let (status, _, text) = met.call(&app, "GET", jsonl, &format!("{page_uri}.jsonl?kind=404"), &token, None).await;
        assert_eq!(status, StatusCode::OK);
        let rows: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(rows, items.to_vec());
        for row in &rows {
            assert_schema(row, "UrlFailure");
        }
        met.all_documented();
    })
    .await;
}
