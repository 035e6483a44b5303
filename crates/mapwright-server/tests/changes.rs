//! What changed, said plainly, where a read's diffs are not enough (issue 34): a sitemap's
//! lastmod trust, judged on its read and on the URL checker's visits of its pages, and the URLs
//! that became failing or were fixed between two checks; what the API (validated against
//! `openapi.yaml`) and the console say of them, for an owner, a reader and a stranger, on both
//! backends. Reads are run by the scheduler's `run_job`, checks by `check_site`, against a site
//! on 127.0.0.1.

use std::sync::Arc;

use axum::http::StatusCode;
use mapwright_server::jobs::checker::{CheckerConfig, Jobs, RunEnd, check_new_urls, check_site};
use mapwright_store::{Actor, CheckRefusal, NEW_URL_CHECK_GAP, Role, Site};
use serde_json::Value;

use crate::api::{call, call_json, user};
use crate::console::text;
use crate::diffs::{drain, resubmit};
use crate::sitehost::{SiteHost, urlset};
use crate::support::{Auth, TestApp, each_backend, unix_now};

/// `at` as W3C Datetime in UTC, to the second.
fn w3c(at: i64) -> String {
    let d = mapwright_core::date::from_unix_seconds(at);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", d.year, d.month, d.day, d.hour, d.minute, d.second)
}

/// Ann, her token, her site on 127.0.0.1 (verified) and its host; the checker unpaced.
async fn start(app: &mut TestApp) -> (Actor, String, SiteHost, Site) {
    app.state.checks = Arc::new(Jobs::new(CheckerConfig::default().with_rate(1000.0)));
    let (ann, token) = user(app, "ann@example.com").await;
    let web = SiteHost::start().await;
    let site = app.store.create_site(ann, &web.origin, 0).await.unwrap();
    app.store.record_verification(site.id, true, 1).await.unwrap();
    (ann, token, web, site)
}

/// Pages `/p0` to `/p11`.
const PAGES: usize = 12;

#[tokio::test]
async fn a_sitemaps_lastmod_is_judged_on_its_read_and_on_the_checkers_visits() {
    each_backend(false, |mut app| async move {
        let (ann, token, web, site) = start(&mut app).await;
        let locs: Vec<String> = (0..PAGES).map(|i| web.url(&format!("/p{i}"))).collect();
        for i in 0..PAGES {
            web.put_etag(&format!("/p{i}"), "a page", Some("\"v1\""));
        }
        // Version 1: every lastmod is the time the file was generated.
        let generated = w3c(unix_now());
        let v1: Vec<(&str, Option<&str>)> = locs.iter().map(|l| (l.as_str(), Some(generated.as_str()))).collect();
        web.put_etag("/sitemap.xml", &urlset(&v1), Some("\"s1\""));
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let body = serde_json::json!({ "url": web.url("/sitemap.xml") });
        let sitemap = call_json(&app, "POST", &uri, &token, Some(body), StatusCode::CREATED, "Sitemap").await;
        let id = sitemap["id"].as_i64().unwrap();
        let trust_uri = format!("/api/v1/sitemaps/{id}/lastmod");
        // Before any read: nothing measured.
        let before = call_json(&app, "GET", &trust_uri, &token, None, StatusCode::OK, "LastmodTrust").await;
        assert_eq!((before["verdict"].as_str(), &before["read"]), (Some("unknown"), &Value::Null));
        assert_eq!(drain(&app.state).await, 1);

        let trust = call_json(&app, "GET", &trust_uri, &token, None, StatusCode::OK, "LastmodTrust").await;
        assert_eq!(trust["verdict"], "untrusted", "{trust}");
        let read = &trust["read"];
        let counts: Vec<i64> = ["entries", "with_lastmod", "near_read", "top_count", "future", "date_only"]
            .iter()
            .map(|k| read[*k].as_i64().unwrap())
            .collect();
        assert_eq!(counts, [12, 12, 12, 12, 0, 0], "{trust}");
        assert_eq!(
            (read["top_value"].as_str(), trust["shares"]["near_read"].as_f64()),
            (Some(generated.as_str()), Some(1.0))
        );
        let reasons = trust["reasons"].to_string();
        assert!(reasons.contains("within an hour of the download"), "{reasons}");
        assert_eq!(trust["visits"]["compared"], 0, "no visit yet");

        // The checker's first visit of every page; then version 2 of the sitemap: p0..p5 get a
        // new lastmod while their pages stay the same, p6..p11 change while their lastmod stays.
        assert!(matches!(check_site(&app.state, site.id).await.unwrap().unwrap(), RunEnd::Done { checked: 12, .. }));
        let moved: Vec<String> = (0..6).map(|i| format!("2025-0{}-01T10:00:00Z", i + 1)).collect();
        let v2: Vec<(&str, Option<&str>)> = locs
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), Some(if i < 6 { moved[i].as_str() } else { generated.as_str() })))
            .collect();
        web.put_etag("/sitemap.xml", &urlset(&v2), Some("\"s2\""));
        for i in 6..PAGES {
            web.put_etag(&format!("/p{i}"), "a page, rewritten", Some("\"v2\""));
        }
        resubmit(&app, &token, id).await;
        assert!(matches!(check_site(&app.state, site.id).await.unwrap().unwrap(), RunEnd::Done { checked: 12, .. }));

        let trust = call_json(&app, "GET", &trust_uri, &token, None, StatusCode::OK, "LastmodTrust").await;
        let visits = &trust["visits"];
        assert_eq!(
            (visits["compared"].as_i64(), visits["lastmod_alone"].as_i64(), visits["content_alone"].as_i64()),
            (Some(12), Some(6), Some(6)),
            "{trust}"
        );
        assert_eq!(
            (trust["verdict"].as_str(), trust["shares"]["lastmod_alone"].as_f64()),
            (Some("untrusted"), Some(0.5))
        );
        let reasons = trust["reasons"].to_string();
        assert!(reasons.contains("6 (50.0 %) changed their lastmod while the page stayed the same"), "{reasons}");
        assert!(reasons.contains("6 (50.0 %) changed while their lastmod did not"), "{reasons}");

        // The sitemap page says the same.
        let cookie =
            format!("mapwright_session={}", app.store.create_session(ann.user_id, unix_now(), 3600).await.unwrap());
        let (status, _, html) = app.get(&format!("/sitemaps/{id}"), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let shown = text(&html);
        assert!(shown.contains("Can its lastmod be trusted?") && shown.contains("Untrustworthy"), "{shown}");
        assert!(shown.contains("6 (50.0 %) changed their lastmod while the page stayed the same"), "{shown}");
        assert!(shown.contains("6 of 12 (50.0 %)"), "{shown}");

        // A stranger gets 404 on both; a reader sees what the owner sees.
        let (bob, bob_token) = user(&app, "bob@example.com").await;
        let (status, _, _) = call(&app, "GET", &trust_uri, Some(&bob_token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let bob_cookie =
            format!("mapwright_session={}", app.store.create_session(bob.user_id, unix_now(), 3600).await.unwrap());
        let (status, _, _) = app.get(&format!("/sitemaps/{id}"), Auth::Cookie(&bob_cookie)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, invite) =
            app.store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, 0, i64::MAX / 2).await.unwrap();
        app.store.accept_invitation(bob, &invite, 1).await.unwrap();
        let seen = call_json(&app, "GET", &trust_uri, &bob_token, None, StatusCode::OK, "LastmodTrust").await;
        assert_eq!(seen, trust);
        let (status, _, html) = app.get(&format!("/sitemaps/{id}"), Auth::Cookie(&bob_cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("Untrustworthy"));
    })
    .await;
}

#[tokio::test]
async fn urls_failing_since_the_previous_check_and_those_fixed_are_marked_and_listed() {
    each_backend(false, |mut app| async move {
        let (ann, token, web, site) = start(&mut app).await;
        let (fine, breaks, fixed) = (web.url("/fine"), web.url("/breaks"), web.url("/fixed"));
        web.put("/fine", "a page");
        web.put("/breaks", "a page");
        web.put("/sitemap.xml", &urlset(&[(&fine, None), (&breaks, None), (&fixed, None)]));
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let body = serde_json::json!({ "url": web.url("/sitemap.xml") });
        call_json(&app, "POST", &uri, &token, Some(body), StatusCode::CREATED, "Sitemap").await;
        assert_eq!(drain(&app.state).await, 1);

        // First check: /fixed is missing, but nothing is new without a check before.
        assert!(matches!(check_site(&app.state, site.id).await.unwrap().unwrap(), RunEnd::Done { failing: 1, .. }));
        let changes_uri = format!("/api/v1/sites/{}/check-changes", site.id);
        let first = call_json(&app, "GET", &changes_uri, &token, None, StatusCode::OK, "CheckChanges").await;
        assert_eq!((first["newly_failing"].as_i64(), first["fixed"].as_i64()), (Some(0), Some(0)), "{first}");
        let failing_uri = format!("/api/v1/sites/{}/failing-urls", site.id);
        let all = call_json(&app, "GET", &failing_uri, &token, None, StatusCode::OK, "FailurePage").await;
        assert_eq!(
            (&all["items"][0]["loc"], &all["items"][0]["newly_failing"]),
            (&Value::from(fixed.clone()), &Value::Bool(false))
        );

        // /breaks goes, /fixed comes: the second check tells both apart.
        web.remove("/breaks");
        web.put("/fixed", "a page");
        assert!(matches!(check_site(&app.state, site.id).await.unwrap().unwrap(), RunEnd::Done { failing: 1, .. }));
        let changes = call_json(&app, "GET", &changes_uri, &token, None, StatusCode::OK, "CheckChanges").await;
        assert_eq!((changes["newly_failing"].as_i64(), changes["fixed"].as_i64()), (Some(1), Some(1)), "{changes}");
        assert_eq!(changes["fixed_urls"]["items"][0]["loc"], fixed.as_str());
        let new =
            call_json(&app, "GET", &format!("{failing_uri}?kind=new"), &token, None, StatusCode::OK, "FailurePage")
                .await;
        let listed: Vec<(&str, bool)> = new["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["loc"].as_str().unwrap(), f["newly_failing"].as_bool().unwrap()))
            .collect();
        assert_eq!(listed, [(breaks.as_str(), true)]);
        let (status, _, problem) = call(&app, "GET", &format!("{failing_uri}?kind=old"), Some(&token), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");

        // The site page: the counts, the filter, the mark, the fixed list.
        let cookie =
            format!("mapwright_session={}", app.store.create_session(ann.user_id, unix_now(), 3600).await.unwrap());
        let (status, _, html) = app.get(&format!("/sites/{}", site.id), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let shown = text(&html);
        assert!(shown.contains("Since the previous check: 1 newly failing, 1 fixed."), "{shown}");
        assert!(shown.contains("Fixed since the previous check (1)") && shown.contains(fixed.as_str()), "{shown}");
        assert!(html.contains(&format!("/sites/{}?kind=new#failing", site.id)), "the filter link");
        let (_, _, html) = app.get(&format!("/sites/{}?kind=new", site.id), Auth::Cookie(&cookie)).await;
        let shown = text(&html);
        let list = &shown[shown.find("Failing URLs").unwrap()..];
        assert!(list.contains(&format!("{breaks} New")), "marked: {list}");

        // A stranger gets 404; a reader sees what the owner sees.
        let (bob, bob_token) = user(&app, "bob@example.com").await;
        let (status, _, _) = call(&app, "GET", &changes_uri, Some(&bob_token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, invite) =
            app.store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, 0, i64::MAX / 2).await.unwrap();
        app.store.accept_invitation(bob, &invite, 1).await.unwrap();
        let seen = call_json(&app, "GET", &changes_uri, &bob_token, None, StatusCode::OK, "CheckChanges").await;
        assert_eq!(seen, changes);
    })
    .await;
}

#[tokio::test]
async fn a_url_a_read_adds_is_checked_soon_by_a_run_of_the_new_urls_alone() {
    each_backend(false, |mut app| async move {
        let (ann, token, web, site) = start(&mut app).await;
        let locs: Vec<String> = ["/a", "/b", "/c", "/d"].iter().map(|p| web.url(p)).collect();
        for p in ["/a", "/b", "/c", "/d"] {
            web.put(p, "a page");
        }
        let listed = |n: usize| urlset(&locs[..n].iter().map(|l| (l.as_str(), None)).collect::<Vec<_>>());
        web.put("/sitemap.xml", &listed(2));
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let body = serde_json::json!({ "url": web.url("/sitemap.xml") });
        let sitemap = call_json(&app, "POST", &uri, &token, Some(body), StatusCode::CREATED, "Sitemap").await;
        assert_eq!(drain(&app.state).await, 1);
        assert!(matches!(check_site(&app.state, site.id).await.unwrap().unwrap(), RunEnd::Done { checked: 2, .. }));
        let check_uri = format!("/api/v1/sites/{}/url-check", site.id);
        let full = call_json(&app, "GET", &check_uri, &token, None, StatusCode::OK, "UrlCheck").await;
        assert_eq!(full["new_urls_only"], false);
        assert_eq!(check_new_urls(&app.state, site.id).await.unwrap(), Err(CheckRefusal::NotDue), "no new URL yet");

        // A read adds /c and /d: due for a run of them once the gap after the last run passed.
        web.put("/sitemap.xml", &listed(4));
        resubmit(&app, &token, sitemap["id"].as_i64().unwrap()).await;
        let now = unix_now();
        let due = |at: i64| {
            let store = app.store.clone();
            async move { store.sites_due_for_check_run(at, 0, 0, 10).await.unwrap().contains(&site.id) }
        };
        assert!(!due(now).await, "not within the gap after the last run");
        assert!(due(now + NEW_URL_CHECK_GAP + 1).await, "due after it");
        let hits_before: Vec<u32> = ["/a", "/b"].iter().map(|p| web.hits(p)).collect();
        assert!(matches!(check_new_urls(&app.state, site.id).await.unwrap().unwrap(), RunEnd::Done { checked: 2, .. }));
        let hits: Vec<u32> = ["/a", "/b", "/c", "/d"].iter().map(|p| web.hits(p)).collect();
        assert_eq!(hits, [hits_before[0], hits_before[1], 1, 1], "the new URLs alone, once each");
        let top_up = call_json(&app, "GET", &check_uri, &token, None, StatusCode::OK, "UrlCheck").await;
        assert_eq!(
            (&top_up["new_urls_only"], &top_up["state"], &top_up["checked"]),
            (&Value::Bool(true), &Value::from("done"), &Value::from(2))
        );
        assert_eq!(top_up["last_complete_at"], full["last_complete_at"], "not the site's complete run");
        let cookie =
            format!("mapwright_session={}", app.store.create_session(ann.user_id, unix_now(), 3600).await.unwrap());
        let (_, _, html) = app.get(&format!("/sites/{}", site.id), Auth::Cookie(&cookie)).await;
        let shown = text(&html);
        assert!(
            shown.contains(
                "The last check, of the URLs added since the check before, ended just now: 2 URLs checked, 0 failing."
            ),
            "{shown}"
        );
        assert!(shown.contains("The last full check ended"), "the full run still said: {shown}");
        assert_eq!(check_new_urls(&app.state, site.id).await.unwrap(), Err(CheckRefusal::NotDue), "nothing new left");
        assert!(!due(now + NEW_URL_CHECK_GAP + 1).await);
    })
    .await;
}
