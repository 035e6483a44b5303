//! A router over a fresh SQLite store, and request helpers.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

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

/// Asks `probe` every 50 ms, for about `limit` (one ask per 50 ms of it, however long each
/// takes), until it answers `Some`; gives that answer, or `None` when it never came. The one
/// waiting loop of these tests, for what happens in the background: mail, deliveries, reads.
pub async fn poll_until<T, F, Fut>(limit: Duration, mut probe: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    const EVERY: Duration = Duration::from_millis(50);
    for _ in 0..limit.div_duration_f64(EVERY).ceil().max(1.0) as u32 {
        if let Some(found) = probe().await {
            return Some(found);
        }
        tokio::time::sleep(EVERY).await;
    }
    None
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
        let state = with_outbox(AppState::new(store.clone(), secure_cookies).allow_private_networks(), &dir);
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
        let state = with_outbox(AppState::new(store.clone(), secure_cookies).allow_private_networks(), &dir);
        TestApp { store, state, guard: Arc::new((dir, None)) }
    }

    /// Another server process on this test's PostgreSQL database (a store of its own: another
    /// pool, other connections), sharing the outbox; `None` over SQLite, where one process
    /// serves.
    pub async fn second_process(&self) -> Option<TestApp> {
        let pg = self.guard.1.as_ref()?;
        let store = mapwright_store::open(Some(&pg.url), self.guard.0.path()).await.unwrap();
        let state = with_outbox(AppState::new(store.clone(), false).allow_private_networks(), &self.guard.0);
        Some(TestApp { store, state, guard: self.guard.clone() })
    }

    /// The messages in the outbox so far, oldest first.
    pub fn mails(&self) -> Vec<Mail> {
        read_outbox(&self.outbox_dir())
    }

    /// The outbox folder of the test's mail.
    pub fn outbox_dir(&self) -> std::path::PathBuf {
        self.guard.0.path().join("outbox")
    }

    /// Waits (up to 5 s: mail goes in the background) until the outbox holds `n` messages.
    pub async fn wait_for_mails(&self, n: usize) -> Vec<Mail> {
        poll_until(Duration::from_secs(5), || async { Some(self.mails()).filter(|mails| mails.len() >= n) })
            .await
            .unwrap_or_else(|| panic!("expected {n} mails, the outbox has {:?}", self.mails()))
    }

    /// Signs up through the API as a user would: the request, the mailed link's token, then
    /// the confirmation with the same password; returns the session cookie (`name=value`).
    pub async fn sign_up(&self, email: &str, password: &str) -> String {
        let before = self.mails().len();
        let body = serde_json::json!({"email": email, "password": password});
        let (status, _, text) = self.post_json("/api/v1/signup", Auth::None, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{text}");
        let mail = self.wait_for_mails(before + 1).await.pop().unwrap();
        let token = mail.link_token().unwrap_or_else(|| panic!("no link in {mail:?}"));
        let body = serde_json::json!({"token": token, "password": password});
        let (status, headers, text) = self.post_json("/api/v1/signup/confirm", Auth::None, body).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        set_cookie(&headers).0
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

/// Sign-up mail written to the test's outbox folder; links start with `http://console.test`.
fn with_outbox(state: AppState, dir: &tempfile::TempDir) -> AppState {
    let outbox = dir.path().join("outbox");
    state.with_mail(
        mapwright_server::mail::Mailer::outbox(&outbox, "mapwright <mapwright@localhost>", "http://console.test")
            .unwrap(),
    )
}

/// One message of the outbox.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

impl Mail {
    /// The `token` of the confirmation link in the body.
    pub fn link_token(&self) -> Option<String> {
        let (_, rest) = self.body.split_once("/signup/confirm?token=")?;
        Some(rest.chars().take_while(char::is_ascii_hexdigit).collect())
    }
}

/// The `.eml` files of `dir`, oldest first, as lettre wrote them (headers, a blank line, the
/// body in 7 bits).
pub fn read_outbox(dir: &std::path::Path) -> Vec<Mail> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .map(|e| (e.metadata().and_then(|m| m.modified()).unwrap(), e.path()))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, path)| {
            let text = std::fs::read_to_string(&path).unwrap().replace("\r\n", "\n");
            let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
            let header = |name: &str| {
                head.lines()
                    .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(": ")))
                    .unwrap_or_default()
                    .to_owned()
            };
            Mail { to: header("To"), subject: header("Subject"), body: body.to_owned() }
        })
        .collect()
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

/// The current time in Unix seconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// Runs every due job as `worker` until none is due, at most `rounds` leases (a loop of jobs
/// making jobs fails the test); returns how many ran.
pub async fn drain_jobs(state: &AppState, worker: &str, rounds: usize) -> usize {
    let mut ran = 0;
    for _ in 0..rounds {
        let jobs = state.store.lease_due_sitemaps(worker, unix_now() + 5, 10, 60).await.unwrap();
        if jobs.is_empty() {
            return ran;
        }
        for job in &jobs {
            mapwright_server::jobs::reads::run_job(state, worker, job).await.unwrap();
            ran += 1;
        }
    }
    panic!("jobs keep coming: a loop");
}

/// The state with "Verify now" unpaced and no failed proof remembered, for the tests that
/// verify, change the proof and verify again at once (the pacing's own tests use the defaults).
pub fn unpaced(state: AppState) -> AppState {
    let default = mapwright_server::outbound::Rates::default();
    let rates = mapwright_server::outbound::Rates {
        verify_per_site: default.verify_per_site.with_limit(1_000),
        verify_per_host: default.verify_per_host.with_limit(1_000),
        verify_per_domain: default.verify_per_domain.with_limit(1_000),
        dns_per_name: default.dns_per_name.with_limit(1_000),
        failed_proof_memory: Duration::ZERO,
        ..default
    };
    state.with_outbound_rates(rates)
}
