//! The API as a contract: every kind of error is an RFC 9457 problem (the framework's
//! rejections, unknown paths and methods included), every parameter is checked as
//! `openapi.yaml` states it, cookie-authenticated changes from another site are refused, and
//! the sitemap resource carries what a Search Console client reads.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use mapwright_server::Limits;
use mapwright_server::jobs::reads::run_job;
use serde_json::{Value, json};

use super::{assert_problem, call, call_json, sitemap_with_download, user, verified_site};
use crate::sitehost::{SiteHost, index};
use crate::support::{Auth, TestApp, each_backend};

/// Phrases of axum's own plain-text rejections, which must never reach a client.
const FRAMEWORK_TEXT: &[&str] = &["Failed to", "Expected request with", "Invalid URL", "Cannot parse"];

/// Sends a request with a raw body and content type (if any), Bearer-authenticated.
async fn raw(app: &TestApp, method: &str, uri: &str, token: &str, content_type: Option<&str>, body: Vec<u8>) -> String {
    let mut request = Request::builder().method(method).uri(uri).header("authorization", format!("Bearer {token}"));
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    let (status, headers, text) = app.send(request.body(Body::from(body)).unwrap()).await;
    let detail = assert_problem(status, &headers, &text);
    format!("{} {detail}", status.as_u16())
}

#[tokio::test]
async fn every_kind_of_error_is_a_problem() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let (site, web) = verified_site(&app, actor).await;
        let sites = "/api/v1/sites";
        let json = Some("application/json");
        let cases: Vec<(String, StatusCode, &str)> = vec![
            (
                raw(&app, "POST", sites, &token, json, b"{not json".to_vec()).await,
                StatusCode::BAD_REQUEST,
                "not valid JSON",
            ),
            (raw(&app, "POST", sites, &token, json, Vec::new()).await, StatusCode::BAD_REQUEST, "not valid JSON"),
            (
                raw(&app, "POST", sites, &token, None, br#"{"origin":"https://a.example"}"#.to_vec()).await,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "content-type: application/json",
            ),
            (
                raw(&app, "POST", sites, &token, Some("text/plain"), br#"{"origin":"https://a.example"}"#.to_vec())
                    .await,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "content-type: application/json",
            ),
            (
                raw(&app, "POST", sites, &token, json, br#"{"url":"x"}"#.to_vec()).await,
                StatusCode::UNPROCESSABLE_ENTITY,
                "missing field `origin`",
            ),
            (
                raw(&app, "POST", sites, &token, json, br#"{"origin":5}"#.to_vec()).await,
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid type",
            ),
            (
                raw(&app, "POST", sites, &token, json, vec![b' '; 3 * 1024 * 1024]).await,
                StatusCode::PAYLOAD_TOO_LARGE,
                "larger than",
            ),
            (raw(&app, "GET", "/api/v1/sites/abc", &token, None, vec![]).await, StatusCode::BAD_REQUEST, "the id"),
            (raw(&app, "GET", "/api/v1/sites/0", &token, None, vec![]).await, StatusCode::BAD_REQUEST, "the id"),
            (
                raw(&app, "GET", "/api/v1/sites/99999999999999999999", &token, None, vec![]).await,
                StatusCode::BAD_REQUEST,
                "the id",
            ),
            (raw(&app, "GET", "/api/v1/sites/999999", &token, None, vec![]).await, StatusCode::NOT_FOUND, "not found"),
            (
                raw(&app, "GET", "/api/v1/nothing", &token, None, vec![]).await,
                StatusCode::NOT_FOUND,
                "no such API route",
            ),
            (raw(&app, "GET", "/api/v1", &token, None, vec![]).await, StatusCode::NOT_FOUND, "no such API route"),
            (
                raw(&app, "GET", &format!("/api/v1/sites/{}/nothing", site.id), &token, None, vec![]).await,
                StatusCode::NOT_FOUND,
                "no such API route",
            ),
            (raw(&app, "GET", "/api/v1/me", "not-a-token", None, vec![]).await, StatusCode::UNAUTHORIZED, "sign in"),
            (
                raw(&app, "POST", sites, &token, json, json!({ "origin": site.origin }).to_string().into_bytes()).await,
                StatusCode::CONFLICT,
                "already exists",
            ),
            (
                raw(
                    &app,
                    "POST",
                    &format!("/api/v1/sites/{}/sitemaps", site.id),
                    &token,
                    json,
                    json!({ "url": "https://elsewhere.example/s.xml" }).to_string().into_bytes(),
                )
                .await,
                StatusCode::UNPROCESSABLE_ENTITY,
                "robots.txt",
            ),
            (
                raw(&app, "GET", &format!("/api/v1/sites/{}/urls?limit=0", site.id), &token, None, vec![]).await,
                StatusCode::BAD_REQUEST,
                "limit",
            ),
        ];
        for (answer, status, phrase) in &cases {
            assert!(answer.starts_with(&status.as_u16().to_string()), "{answer} (expected {status})");
            assert!(answer.contains(phrase), "{answer} (expected {phrase:?})");
            for text in FRAMEWORK_TEXT {
                assert!(!answer.contains(text), "framework text in {answer}");
            }
        }

        // A method a route does not take: 405 with Allow, on API routes and the others alike.
        for (method, uri, allowed) in [
            ("PUT", "/api/v1/sites".to_owned(), "GET,HEAD,POST"),
            ("PATCH", format!("/api/v1/sites/{}", site.id), "GET,HEAD,DELETE"),
            ("POST", "/healthz".to_owned(), "GET,HEAD"),
            ("DELETE", "/api/v1/openapi.yaml".to_owned(), "GET,HEAD"),
        ] {
            let (status, headers, text) = call(&app, method, &uri, Some(&token), None).await;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}: {text}");
            assert_problem(status, &headers, &text);
            let mut allow: Vec<&str> = headers["allow"].to_str().unwrap().split(',').map(str::trim).collect();
            let mut expected: Vec<&str> = allowed.split(',').collect();
            allow.sort();
            expected.sort();
            assert_eq!(allow, expected, "{method} {uri}");
        }

        // Over a rate limit: 429 with Retry-After.
        let mut limited = TestApp::new(false).await;
        limited.state.limits =
            Arc::new(Limits { ping_per_client: Limits::default().ping_per_client.with_limit(1), ..Limits::default() });
        let ping = "/ping?sitemap=https://example.com/s.xml";
        assert_eq!(limited.get(ping, Auth::None).await.0, StatusCode::OK);
        let (status, headers, text) = limited.get(ping, Auth::None).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert!(assert_problem(status, &headers, &text).contains("retry in"));
        assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);

        // IndexNow's refusals too (here: a key file that is not there).
        let key = "abcd-1234-key";
        let (status, headers, text) =
            call(&app, "GET", &format!("/indexnow?url={}/a&key={key}", web.origin), None, None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
        assert!(assert_problem(status, &headers, &text).contains("the key is not valid"));
    })
    .await;
}

#[tokio::test]
async fn parameters_are_checked_as_the_spec_states() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, actor).await;
        let (sitemap, _) = sitemap_with_download(&app, actor, &site).await;
        let urls = format!("/api/v1/sites/{}/urls", site.id);
        let frontier = format!("/api/v1/sites/{}/frontier", site.id);
        let downloads = format!("/api/v1/sitemaps/{}/downloads", sitemap.id);
        let csv = format!("/api/v1/sites/{}/urls.csv", site.id);
        for bad in [
            format!("{urls}?limit=0"),
            format!("{urls}?limit=10001"),
            format!("{urls}?limit=-1"),
            format!("{urls}?limit=x"),
            format!("{urls}?limit=1.5"),
            format!("{urls}?limit=1&limit=2"),
            format!("{urls}?after=-1"),
            format!("{urls}?after=9223372036854775808"),
            format!("{urls}?include_removed=yes"),
            format!("{urls}?include_removed=1"),
            format!("{urls}?include_removed="),
            format!("{csv}?include_removed=TRUE"),
            format!("{csv}?after=x"),
            format!("{frontier}?since=-1"),
            format!("{frontier}?since=soon"),
            format!("{frontier}?limit=10001"),
            format!("{downloads}?limit=0"),
            format!("{downloads}?limit=1001"),
        ] {
            let (status, headers, text) = call(&app, "GET", &bad, Some(&token), None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {text}");
            let detail = assert_problem(status, &headers, &text);
            assert!(detail.starts_with("the parameter "), "{bad}: {detail}");
        }
        for good in [
            format!("{urls}?limit=1"),
            format!("{urls}?limit=10000&after=0&include_removed=false"),
            format!("{urls}?include_removed=true&unknown=ignored"),
            format!("{frontier}?since=0&limit=10000"),
            format!("{downloads}?limit=1000"),
            format!("{downloads}?limit=1"),
        ] {
            assert_eq!(call(&app, "GET", &good, Some(&token), None).await.0, StatusCode::OK, "{good}");
        }
        let (status, _, text) = call(&app, "GET", &format!("{csv}?include_removed=true"), Some(&token), None).await;
        assert_eq!(status, StatusCode::OK, "{text}");

        // The id of every route with one: a positive 64-bit integer.
        for bad in ["0", "-3", "x", "1.0", "9223372036854775808"] {
            for uri in [
                format!("/api/v1/sites/{bad}"),
                format!("/api/v1/sitemaps/{bad}/downloads"),
                format!("/api/v1/downloads/{bad}/findings"),
            ] {
                let (status, headers, text) = call(&app, "GET", &uri, Some(&token), None).await;
                assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {text}");
                assert_problem(status, &headers, &text);
            }
            let (status, _, _) = call(&app, "DELETE", &format!("/api/v1/tokens/{bad}"), Some(&token), None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
        }

        // Bodies: the e-mail pattern and the token name, to the character the spec states.
        for (email, expected) in [
            (" ann2@example.com\t", StatusCode::ACCEPTED),
            ("a@b", StatusCode::ACCEPTED),
            ("a b@example.com", StatusCode::BAD_REQUEST),
            ("a@b@c", StatusCode::BAD_REQUEST),
            ("@example.com", StatusCode::BAD_REQUEST),
            ("ann@", StatusCode::BAD_REQUEST),
        ] {
            let body = json!({ "email": email, "password": "a long passphrase" });
            let (status, _, text) = app.post_json("/api/v1/signup", Auth::None, body).await;
            assert_eq!(status, expected, "{email:?}: {text}");
        }
        let long = format!("{}@example.com", "a".repeat(243));
        assert_eq!(long.chars().count(), 255);
        let body = json!({ "email": long, "password": "a long passphrase" });
        assert_eq!(app.post_json("/api/v1/signup", Auth::None, body).await.0, StatusCode::BAD_REQUEST);
        let body = json!({ "email": "c@example.com", "password": "é".repeat(1025) });
        assert_eq!(app.post_json("/api/v1/signup", Auth::None, body).await.0, StatusCode::BAD_REQUEST);
        for (name, expected) in [
            (" \t ", StatusCode::BAD_REQUEST),
            ("é".repeat(100).as_str(), StatusCode::CREATED),
            (&"a".repeat(101), StatusCode::BAD_REQUEST),
        ] {
            let (status, _, text) =
                call(&app, "POST", "/api/v1/tokens", Some(&token), Some(json!({ "name": name }))).await;
            assert_eq!(status, expected, "{name:?}: {text}");
        }
    })
    .await;
}

#[tokio::test]
async fn cookie_changes_from_another_site_are_refused() {
    each_backend(false, |app| async move {
        let body = json!({ "email": "ann@example.com", "password": "a long passphrase" });
        let cookie = app.sign_up(body["email"].as_str().unwrap(), body["password"].as_str().unwrap()).await;
        let user = app.store.user_credentials("ann@example.com").await.unwrap().unwrap().0;
        let (_, secret) = app.store.create_api_token((&user).into(), "t", 0).await.unwrap();
        let host = "mapwright.test";

        let send = |auth: Auth<'_>, method: &str, uri: &str, headers: &[(&str, &str)], body: Option<Value>| {
            let mut request = Request::builder().method(method).uri(uri).header("host", host);
            request = match auth {
                Auth::Cookie(c) => request.header("cookie", c),
                Auth::Bearer(t) => request.header("authorization", format!("Bearer {t}")),
                Auth::None => request,
            };
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let body = match body {
                Some(json) => {
                    request = request.header("content-type", "application/json");
                    Body::from(json.to_string())
                }
                None => Body::empty(),
            };
            app.send(request.body(body).unwrap())
        };
        let foreign: &[&[(&str, &str)]] = &[
            &[("origin", "http://evil.example")],
            &[("origin", "null")],
            &[("sec-fetch-site", "cross-site")],
            &[("origin", "http://mapwright.test:8080")],
        ];
        for headers in foreign {
            let (status, h, text) = send(
                Auth::Cookie(&cookie),
                "POST",
                "/api/v1/sites",
                headers,
                Some(json!({ "origin": "https://a.example" })),
            )
            .await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{headers:?}: {text}");
            assert!(assert_problem(status, &h, &text).contains("must come from this site"));
            let (status, _, _) = send(Auth::Cookie(&cookie), "DELETE", "/api/v1/tokens/1", headers, None).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{headers:?}");
            let (status, _, _) = send(Auth::Cookie(&cookie), "POST", "/api/v1/signout", headers, None).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{headers:?}");
            // Reading is not changing; a token never rides along, so it is not checked.
            let (status, _, _) = send(Auth::Cookie(&cookie), "GET", "/api/v1/sites", headers, None).await;
            assert_eq!(status, StatusCode::OK, "{headers:?}");
            let (status, _, text) = send(Auth::Bearer(&secret), "GET", "/api/v1/tokens", headers, None).await;
            assert_eq!(status, StatusCode::OK, "{headers:?}: {text}");
        }
        assert!(app.store.list_sites((&user).into()).await.unwrap().is_empty(), "nothing was created");
        assert!(app.store.list_api_tokens((&user).into()).await.unwrap()[0].revoked_at.is_none());
        assert_eq!(app.get("/api/v1/me", Auth::Cookie(&cookie)).await.0, StatusCode::OK, "still signed in");

        let (status, _, text) = send(
            Auth::Bearer(&secret),
            "POST",
            "/api/v1/sites",
            &[("origin", "http://evil.example"), ("sec-fetch-site", "cross-site")],
            Some(json!({ "origin": "https://b.example" })),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "a token is not a cookie: {text}");
        for same in [&[("origin", "http://mapwright.test")][..], &[("sec-fetch-site", "same-origin")][..], &[][..]] {
            let origin = format!("https://c{}.example", same.len() + same.first().map_or(0, |h| h.0.len()));
            let (status, _, text) =
                send(Auth::Cookie(&cookie), "POST", "/api/v1/sites", same, Some(json!({ "origin": origin }))).await;
            assert_eq!(status, StatusCode::CREATED, "{same:?}: {text}");
        }
    })
    .await;
}

/// Runs every due job until none is left.
async fn drain(app: &TestApp) {
    for _ in 0..20 {
        let now = mapwright_server_now() + 5;
        let jobs = app.store.lease_due_sitemaps("contract", now, 10, 60).await.unwrap();
        if jobs.is_empty() {
            return;
        }
        for job in &jobs {
            run_job(&app.state, "contract", job).await.unwrap();
        }
    }
    panic!("jobs keep coming");
}

fn mapwright_server_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn the_sitemap_resource_says_what_a_search_console_client_reads() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let web = SiteHost::start().await;
        let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
        app.store.record_verification(site.id, true, 1).await.unwrap();
        let o = &web.origin;
        let urlset = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
  xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
  xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>{o}/a</loc></url>
<url><loc>{o}/b</loc><image:image><image:loc>{o}/b.png</image:loc></image:image><image:image><image:loc>{o}/b2.png</image:loc></image:image></url>
<url><loc>{o}/c</loc><image:image><image:loc>{o}/c.png</image:loc></image:image>
  <video:video><video:thumbnail_loc>{o}/t.jpg</video:thumbnail_loc><video:title>T</video:title>
  <video:description>D</video:description><video:content_loc>{o}/v.mp4</video:content_loc></video:video></url>
<url><loc>{o}/d</loc><news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication>
  <news:publication_date>2024-01-01</news:publication_date><news:title>T</news:title></news:news></url>
<url><loc>http://elsewhere.example/out</loc></url>
</urlset>
"#
        );
        web.put_etag("/sitemap.xml", &urlset, Some("\"v1\""));
        let rss = format!(
            r#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>{o}/</link><description>d</description>
<item><link>{o}/post-1</link></item><item><link>{o}/post-2</link></item></channel></rss>"#
        );
        web.put_etag("/feed.xml", &rss, None);
        web.put_etag("/index.xml", &index(&[(&web.url("/sitemap.xml"), None)]), None);

        let add = |path: &'static str| {
            let body = json!({ "url": web.url(path) });
            let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
            let (app, token) = (&app, &token);
            async move { call_json(app, "POST", &uri, token, Some(body), StatusCode::CREATED, "Sitemap").await }
        };
        let added = add("/sitemap.xml").await;
        assert_eq!(added["pending"], true, "never read: pending");
        for field in ["type", "errors", "warnings", "contents", "last_downloaded_at"] {
            assert_eq!(added[field], Value::Null, "{field} before a read");
        }
        assert_eq!(added["is_index"], false);
        assert_eq!(added["last_submitted_at"], added["submitted_at"]);
        let feed = add("/feed.xml").await;
        let index_sitemap = add("/index.xml").await;
        drain(&app).await;

        let show = |id: &Value| {
            let uri = format!("/api/v1/sitemaps/{id}");
            let (app, token) = (&app, &token);
            async move { call_json(app, "GET", &uri, token, None, StatusCode::OK, "SitemapStatus").await }
        };
        let shown = show(&added["id"]).await;
        assert_eq!(shown["type"], "sitemap");
        assert_eq!(shown["is_index"], false);
        assert_eq!(shown["pending"], false, "read, and not due");
        assert_eq!(shown["contents"], json!({ "web": 4, "image": 2, "video": 1, "news": 1 }), "{shown:#}");
        assert!(shown["last_downloaded_at"].is_i64());
        assert_eq!(shown["errors"], shown["last_download"]["error_count"]);
        assert!(shown["errors"].as_i64().unwrap() >= 1, "the URL on another host is an error: {shown:#}");
        assert_eq!(shown["warnings"], shown["last_download"]["warning_count"]);

        let feed = show(&feed["id"]).await;
        assert_eq!((&feed["type"], &feed["contents"]["web"], &feed["is_index"]), (&json!("rss"), &json!(2), &json!(false)));
        let shown_index = show(&index_sitemap["id"]).await;
        assert_eq!((&shown_index["type"], &shown_index["is_index"]), (&json!("sitemap_index"), &json!(true)));
        assert_eq!(shown_index["contents"], json!({ "web": 0, "image": 0, "video": 0, "news": 0 }));

        // A 304 keeps what the last read found; a resubmit makes it pending and moves
        // last_submitted_at.
        let id = added["id"].as_i64().unwrap();
        let before = show(&added["id"]).await;
        app.store.resubmit_sitemap(actor, id, i64::MAX / 4).await.unwrap();
        let resubmitted = show(&added["id"]).await;
        assert_eq!(resubmitted["last_submitted_at"], i64::MAX / 4);
        app.store.resubmit_sitemap(actor, id, mapwright_server_now()).await.unwrap();
        assert_eq!(show(&added["id"]).await["pending"], true, "resubmitted: pending");
        drain(&app).await;
        let after = show(&added["id"]).await;
        assert_eq!(after["last_download"]["status"], "unchanged");
        for field in ["type", "contents", "errors", "warnings", "is_index"] {
            assert_eq!(after[field], before[field], "{field} after a 304");
        }
        assert_eq!(after["pending"], false);

        // The list and the resubmit answer carry the same fields.
        let list =
            call_json(&app, "GET", &format!("/api/v1/sites/{}/sitemaps", site.id), &token, None, StatusCode::OK, "[Sitemap]")
                .await;
        let listed = list.as_array().unwrap().iter().find(|s| s["id"] == added["id"]).unwrap();
        let mut expected = after.clone();
        expected.as_object_mut().unwrap().remove("last_download");
        assert_eq!(listed, &expected);
        let uri = format!("/api/v1/sitemaps/{id}/resubmit");
        let answer = call_json(&app, "POST", &uri, &token, None, StatusCode::ACCEPTED, "Sitemap").await;
        assert_eq!((&answer["pending"], &answer["type"]), (&json!(true), &json!("sitemap")));
    })
    .await;
}
