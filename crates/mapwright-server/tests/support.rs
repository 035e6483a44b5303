//! A router over a fresh SQLite store, and request helpers.

use std::future::Future;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use mapwright_server::{AppState, app};
use mapwright_store::Store;
use mapwright_store::testing::PgDatabase;
use tower::ServiceExt;

/// A service on a temporary store: an SQLite directory or a PostgreSQL database, both
/// removed when this value drops.
pub struct TestApp {
    pub store: Arc<dyn Store>,
    pub state: AppState,
    /// The SQLite directory or PostgreSQL database; shared so that [`each_backend`] keeps it
    /// alive even when a test's `async move` block captures only some fields of the app.
    guard: Arc<(tempfile::TempDir, Option<PgDatabase>)>,
}

/// Runs `body` on a service over SQLite, then over PostgreSQL (see `PgDatabase::create`).
pub async fn each_backend<F, Fut>(secure_cookies: bool, body: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    let app = TestApp::new(secure_cookies).await;
    let guard = app.guard.clone();
    body(app).await;
    drop(guard);
    if let Some(pg) = PgDatabase::create("mapwright_test_server").await {
        let dir = tempfile::tempdir().unwrap();
        let store = mapwright_store::open(Some(&pg.url), dir.path()).await.unwrap();
        assert_eq!(store.backend(), "postgres");
        let state = AppState::new(store.clone(), secure_cookies).allow_private_networks();
        let guard = Arc::new((dir, Some(pg)));
        body(TestApp { store: store.clone(), state, guard: guard.clone() }).await;
        drop(guard);
    }
}

impl TestApp {
    /// Over SQLite.
    pub async fn new(secure_cookies: bool) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let store = mapwright_store::open(None, dir.path()).await.unwrap();
        let state = AppState::new(store.clone(), secure_cookies).allow_private_networks();
        TestApp { store, state, guard: Arc::new((dir, None)) }
    }

    /// Over a store the test opened itself (kept with `dir` until the app drops).
    pub fn with_state(store: Arc<dyn Store>, state: AppState, dir: tempfile::TempDir) -> TestApp {
        TestApp { store, state, guard: Arc::new((dir, None)) }
    }

    /// Sends a request; returns status, headers and the body as text.
    pub async fn send(&self, request: Request<Body>) -> (StatusCode, HeaderMap, String) {
        let response = app(self.state.clone()).oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (parts.status, parts.headers, String::from_utf8(bytes.to_vec()).unwrap())
    }

    pub async fn get(&self, uri: &str, auth: Auth<'_>) -> (StatusCode, HeaderMap, String) {
        self.send(auth.apply(Request::get(uri)).body(Body::empty()).unwrap()).await
    }

    pub async fn post_json(
        &self,
        uri: &str,
        auth: Auth<'_>,
        json: serde_json::Value,
    ) -> (StatusCode, HeaderMap, String) {
        let request = auth.apply(Request::post(uri)).header("content-type", "application/json");
        self.send(request.body(Body::from(json.to_string())).unwrap()).await
    }
}

/// How a request authenticates.
#[derive(Clone, Copy)]
pub enum Auth<'a> {
    None,
    /// A `Cookie` header value.
    Cookie(&'a str),
    /// An API token secret.
    Bearer(&'a str),
}

impl Auth<'_> {
    fn apply(self, builder: axum::http::request::Builder) -> axum::http::request::Builder {
        match self {
            Auth::None => builder,
            Auth::Cookie(c) => builder.header("cookie", c),
            Auth::Bearer(t) => builder.header("authorization", format!("Bearer {t}")),
        }
    }
}

/// The `name=value` part of the response's Set-Cookie, and the whole header.
pub fn set_cookie(headers: &HeaderMap) -> (String, String) {
    let full = headers.get("set-cookie").expect("a Set-Cookie header").to_str().unwrap().to_owned();
    (full.split(';').next().unwrap().to_owned(), full)
}
