//! Sites: add, list, show, delete, verify now.

use axum::http::StatusCode;
use serde_json::json;

use super::{call, call_json, user};
use crate::support::each_backend;
use crate::verify::TestSite;

#[tokio::test]
async fn sites_are_added_listed_shown_and_deleted() {
    each_backend(false, |app| async move {
        let (_, token) = user(&app, "ann@example.com").await;
        let body = Some(json!({ "origin": "https://Example.COM/" }));
        let site = call_json(&app, "POST", "/api/v1/sites", &token, body, StatusCode::CREATED, "Site").await;
        assert_eq!(site["origin"], "https://example.com");
        assert_eq!(site["verified_at"], serde_json::Value::Null);
        let t = site["verification_token"].as_str().unwrap();
        assert_eq!(site["verification"]["file_name"], format!("mapwright-{t}.html"));
        assert_eq!(site["verification"]["file_url"], format!("https://example.com/mapwright-{t}.html"));
        assert_eq!(
            site["verification"]["meta_tag"],
            format!(r#"<meta name="mapwright-site-verification" content="{t}">"#)
        );

        let (status, _, text) =
            call(&app, "POST", "/api/v1/sites", Some(&token), Some(json!({ "origin": "https://example.com" }))).await;
        assert_eq!(status, StatusCode::CONFLICT, "{text}");
        assert!(text.contains("https://example.com"), "{text}");

        let other = json!({ "origin": "http://127.0.0.1:8080" });
        call_json(&app, "POST", "/api/v1/sites", &token, Some(other), StatusCode::CREATED, "Site").await;
        let list = call_json(&app, "GET", "/api/v1/sites", &token, None, StatusCode::OK, "[Site]").await;
        let origins: Vec<&str> = list.as_array().unwrap().iter().map(|s| s["origin"].as_str().unwrap()).collect();
        assert_eq!(origins, ["https://example.com", "http://127.0.0.1:8080"]);

        let uri = format!("/api/v1/sites/{}", site["id"]);
        let shown = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "Site").await;
        assert_eq!(shown, site);
        let (status, _, _) = call(&app, "DELETE", &uri, Some(&token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_eq!(call(&app, "GET", &uri, Some(&token), None).await.0, StatusCode::NOT_FOUND);
        assert_eq!(call(&app, "DELETE", &uri, Some(&token), None).await.0, StatusCode::NOT_FOUND);
        let list = call_json(&app, "GET", "/api/v1/sites", &token, None, StatusCode::OK, "[Site]").await;
        assert_eq!(list.as_array().unwrap().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn bad_origins_and_requests_are_refused() {
    each_backend(false, |app| async move {
        let (_, token) = user(&app, "ann@example.com").await;
        for bad in ["example.com", "ftp://example.com", "https://example.com/blog", "https://u:p@example.com", ""] {
            let (status, headers, text) =
                call(&app, "POST", "/api/v1/sites", Some(&token), Some(json!({ "origin": bad }))).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {text}");
            assert!(super::assert_problem(status, &headers, &text).contains("origin"), "{bad}: {text}");
        }
        let (status, _, _) = call(&app, "POST", "/api/v1/sites", Some(&token), Some(json!({ "url": "x" }))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a body without origin");
        assert_eq!(call(&app, "GET", "/api/v1/sites/abc", Some(&token), None).await.0, StatusCode::BAD_REQUEST);
        assert_eq!(call(&app, "GET", "/api/v1/sites", None, None).await.0, StatusCode::UNAUTHORIZED);
        assert_eq!(call(&app, "GET", "/api/v1/sites", Some("not-a-token"), None).await.0, StatusCode::UNAUTHORIZED);
        assert!(app.store.list_sites(mapwright_store::Actor { user_id: 0, is_admin: true }).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn verify_now_checks_and_records() {
    each_backend(false, |mut app| async move {
        app.state = crate::support::unpaced(app.state.clone());
        let (_, token) = user(&app, "ann@example.com").await;
        let web = TestSite::start().await;
        let body = Some(json!({ "origin": web.origin }));
        let site = call_json(&app, "POST", "/api/v1/sites", &token, body, StatusCode::CREATED, "Site").await;
        let uri = format!("/api/v1/sites/{}/verify", site["id"]);

        let result = call_json(&app, "POST", &uri, &token, None, StatusCode::OK, "VerifyResult").await;
        assert_eq!(result["verification"]["verified"], false);
        assert!(result["verification"]["detail"].as_str().unwrap().contains("404"), "{result}");
        assert_eq!(result["site"]["verified_at"], serde_json::Value::Null);
        assert!(result["site"]["last_checked_at"].is_i64());

        let file = site["verification"]["file_name"].as_str().unwrap();
        web.put(&format!("/{file}"), site["verification_token"].as_str().unwrap());
        let result = call_json(&app, "POST", &uri, &token, None, StatusCode::OK, "VerifyResult").await;
        assert_eq!(result["verification"]["verified"], true);
        assert_eq!(result["verification"]["method"], "file");
        assert!(result["site"]["verified_at"].is_i64());

        web.remove(&format!("/{file}"));
        let result = call_json(&app, "POST", &uri, &token, None, StatusCode::OK, "VerifyResult").await;
        assert_eq!(result["verification"]["verified"], false);
        assert_eq!(result["site"]["verified_at"], serde_json::Value::Null);
    })
    .await;
}
