//! The JSON API, IndexNow and the OpenAPI file: every endpoint's answers, on both backends,
//! with JSON bodies validated against the schemas of `openapi.yaml`.

mod contract;
mod cross_user;
mod domains;
mod indexnow;
mod lifecycle;
mod listing;
mod members;
mod openapi;
mod sitemaps;
mod sites;
mod urls;
mod words;

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use mapwright_store::{Actor, DownloadRecord, FindingRecord, Site, Sitemap, Source};
use serde_json::Value;

use crate::sitehost::SiteHost;
use crate::support::TestApp;
use crate::verify::TestSite;

/// A user with an API token; returns the actor and the token's secret.
pub async fn user(app: &TestApp, email: &str) -> (Actor, String) {
    let user = app.store.create_user(email, "h", false, 0).await.unwrap();
    let actor = Actor::from(&user);
    let (_, secret) = app.store.create_api_token(actor, "test", 0).await.unwrap();
    (actor, secret)
}

/// Sends `method uri` with the Bearer token (if any) and a JSON body (if any).
pub async fn call(
    app: &TestApp,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, HeaderMap, String) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let body = match body {
        Some(json) => {
            request = request.header("content-type", "application/json");
            Body::from(json.to_string())
        }
        None => Body::empty(),
    };
    app.send(request.body(body).unwrap()).await
}

// Alike on purpose: members.rs's `refused` takes these arguments too (see there).
/// Sends a request that must answer `expected` with JSON; returns the JSON, checked against
/// the OpenAPI schema `schema` (a name under `components/schemas`, or `[Name]` for an array).
pub async fn call_json(
    app: &TestApp,
    method: &str,
    uri: &str,
    token: &str,
    body: Option<Value>,
    expected: StatusCode,
    schema: &str,
) -> Value {
    let (status, headers, text) = call(app, method, uri, Some(token), body).await;
    assert_eq!(status, expected, "{method} {uri}: {text}");
    assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"), "{method} {uri}");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_schema(&value, schema);
    value
}

/// Checks that an answer is an RFC 9457 problem of `status` (content type, the `Problem`
/// schema, `status` and `title` matching the answer's) and returns its detail.
pub fn assert_problem(status: StatusCode, headers: &HeaderMap, body: &str) -> String {
    assert!(status.is_client_error() || status.is_server_error(), "{status}: {body}");
    assert_eq!(headers["content-type"], "application/problem+json", "{status}: {body}");
    let value: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{status}: {e}: {body}"));
    assert_schema(&value, "Problem");
    assert_eq!(value["status"], status.as_u16(), "{body}");
    assert_eq!(value["title"], status.canonical_reason().unwrap(), "{body}");
    let detail = value["detail"].as_str().unwrap().to_owned();
    assert!(!detail.is_empty());
    detail
}

/// The OpenAPI document as JSON.
pub fn openapi() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_norway::from_str(mapwright_server::api::OPENAPI_YAML).unwrap())
}

/// Validates `value` against `#/components/schemas/<name>` (`[Name]`: an array of them),
/// with the whole document embedded so every `$ref` resolves.
pub fn assert_schema(value: &Value, name: &str) {
    let errors = schema_errors(value, name);
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value:#}");
}

/// What `value` breaks of the schema `name` (see [`assert_schema`]).
pub fn schema_errors(value: &Value, name: &str) -> Vec<String> {
    let reference = |n: &str| serde_json::json!({ "$ref": format!("#/components/schemas/{n}") });
    let target = match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(item) => serde_json::json!({ "type": "array", "items": reference(item) }),
        None => reference(name),
    };
    let mut schema = openapi().clone();
    let root = schema.as_object_mut().unwrap();
    root.insert("allOf".into(), serde_json::json!([target]));
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path)).collect()
}

/// Builds the validator of `#/components/schemas/<name>`, which resolves every `$ref` it
/// reaches (an unresolvable one fails the build).
pub fn assert_schema_compiles(name: &str) {
    let mut schema = openapi().clone();
    let target = serde_json::json!([{ "$ref": format!("#/components/schemas/{name}") }]);
    schema.as_object_mut().unwrap().insert("allOf".into(), target);
    if let Err(e) = jsonschema::draft202012::new(&schema) {
        panic!("{name}: {e}");
    }
}

/// A site of the user, verified through a file on a test site served on 127.0.0.1.
pub async fn verified_site(app: &TestApp, actor: Actor) -> (Site, TestSite) {
    let web = TestSite::start().await;
    let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
    web.put(&format!("/mapwright-{}.html", site.verification_token), &site.verification_token);
    app.store.record_verification(site.id, true, 1).await.unwrap();
    (app.store.site(actor, site.id).await.unwrap(), web)
}

/// A user with an API token and a site of theirs on a new test host, verified (as recorded: the
/// host serves no proof).
pub async fn owner_site(app: &TestApp, email: &str) -> (Actor, String, Site, SiteHost) {
    let (actor, token) = user(app, email).await;
    let web = SiteHost::start().await;
    let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
    app.store.record_verification(site.id, true, 1).await.unwrap();
    let site = app.store.site(actor, site.id).await.unwrap();
    (actor, token, site, web)
}

/// A sitemap on the site with one stored download (two findings); returns it and the
/// download's id.
pub async fn sitemap_with_download(app: &TestApp, actor: Actor, site: &Site) -> (Sitemap, i64) {
    let url = format!("{}/sitemap.xml", site.origin);
    let sitemap = app.store.add_sitemap(actor, site.id, &url, Source::Api, 0).await.unwrap();
    let worker = format!("w{}", sitemap.id);
    let leased = app.store.lease_due_sitemaps(&worker, 10, 100, 60).await.unwrap();
    assert!(leased.iter().any(|l| l.id == sitemap.id));
    let finding = |rule: &str, severity: &str| FindingRecord {
        rule: rule.into(),
        severity: severity.into(),
        line: Some(3),
        col: Some(7),
        loc: Some(format!("{}/a", site.origin)),
        message: format!("{rule} here"),
    };
    let download = DownloadRecord {
        downloaded_at: 20,
        status: "errors".into(),
        http_status: Some(200),
        bytes: 1234,
        duration_ms: 5,
        url_count: 2,
        findings: vec![finding("loc-missing", "error"), finding("lastmod-future", "warning")],
        ..Default::default()
    };
    let id = app.store.complete(&worker, sitemap.id, &download, 4_000_000_000).await.unwrap();
    for other in leased.iter().filter(|l| l.id != sitemap.id) {
        app.store.release(&worker, other.id).await.unwrap();
    }
    (app.store.sitemap(actor, sitemap.id).await.unwrap(), id)
}
