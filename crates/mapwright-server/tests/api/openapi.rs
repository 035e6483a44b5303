//! The OpenAPI file: served, and in step with the router (every documented route exists,
//! every route is documented). The API tests validate their JSON against its schemas.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use mapwright_server::api::{OPENAPI_YAML, ROUTES};
use serde_json::json;

use super::{call, openapi};
use crate::support::TestApp;

/// (path, method) of every operation in the file.
fn documented() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in openapi()["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete", "head", "options"].contains(&method.as_str()) {
                out.insert((path.clone(), method.clone()));
            }
        }
    }
    out
}

#[tokio::test]
async fn the_file_is_served() {
    let app = TestApp::new(false).await;
    let (status, headers, body) = call(&app, "GET", "/api/v1/openapi.yaml", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/yaml");
    assert_eq!(body, OPENAPI_YAML);
    assert_eq!(openapi()["openapi"], "3.1.0");
}

#[tokio::test]
async fn every_route_is_documented_and_every_documented_route_exists() {
    let routes: BTreeSet<(String, String)> =
        ROUTES.iter().map(|(m, p)| ((*p).to_owned(), m.as_str().to_owned())).collect();
    assert_eq!(routes.len(), ROUTES.len(), "no route listed twice");
    assert_eq!(documented(), routes);

    // The router answers each of them with something other than "no such route" (404) or
    // "no such method" (405): the handlers with an id check the caller first (401).
    let app = TestApp::new(false).await;
    for (path, method) in &routes {
        let uri = path.replace("{id}", "1");
        let (status, _, body) = call(&app, &method.to_ascii_uppercase(), &uri, None, None).await;
        assert!(
            status != StatusCode::NOT_FOUND && status != StatusCode::METHOD_NOT_ALLOWED,
            "{method} {uri}: {status} {body}"
        );
    }
    // ...which the probe would notice.
    assert_eq!(call(&app, "GET", "/api/v1/nothing", None, None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(call(&app, "PUT", "/api/v1/sites", None, None).await.0, StatusCode::METHOD_NOT_ALLOWED);
}

#[test]
fn every_schema_compiles_and_refs_resolve() {
    let doc = openapi();
    for name in doc["components"]["schemas"].as_object().unwrap().keys() {
        super::assert_schema_compiles(name);
    }
}

#[test]
fn the_schemas_refuse_what_the_api_must_not_answer() {
    let download = json!({
        "id": 1, "sitemap_id": 2, "downloaded_at": 3, "status": "ok", "http_status": 200, "bytes": 4,
        "duration_ms": 5, "url_count": 6, "error_count": 0, "warning_count": 0, "error": null
    });
    assert!(super::schema_errors(&download, "Download").is_empty());
    let mut missing = download.clone();
    missing.as_object_mut().unwrap().remove("bytes");
    assert!(!super::schema_errors(&missing, "Download").is_empty());
    let mut extra = download.clone();
    extra["secret"] = json!("x");
    assert!(!super::schema_errors(&extra, "Download").is_empty());
    let mut wrong = download.clone();
    wrong["status"] = json!("fine");
    assert!(!super::schema_errors(&wrong, "Download").is_empty());
    assert!(!super::schema_errors(&json!([download, {"id": "x"}]), "[Download]").is_empty());
    // Through a $ref chain: SitemapStatus -> Download.
    let status = json!({ "last_download": missing });
    assert!(super::schema_errors(&status, "SitemapStatus").iter().any(|e| e.ends_with("at /last_download")));
}
