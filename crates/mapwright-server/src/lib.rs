//! The mapwright sitemap service as an axum [`Router`]: health, the public ping, IndexNow
//! ([`indexnow`]), and the JSON API under `/api/v1` (accounts here, the rest in [`api`],
//! documented by `openapi.yaml`).
//!
//! [`app`] takes the state and returns the router, so tests drive it in process and the
//! binary serves it. Site verification ([`verify`]) and sitemap admission ([`submission`]) are
//! shared by the JSON API and the web console.
#![deny(missing_docs)]

pub mod api;
mod auth;
pub mod console;
mod error;
pub mod indexnow;
pub mod metrics;
mod ping;
mod ratelimit;
pub mod scheduler;
pub mod submission;
pub mod verify;

use std::sync::Arc;

use axum::Router;
use mapwright_fetch::Fetcher;
use mapwright_store::Store;

pub use error::AppError;
pub use ratelimit::RateLimiter;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The storage, SQLite or PostgreSQL.
    pub store: Arc<dyn Store>,
    /// Mark session cookies `Secure`: set when the service is reached over TLS (directly or
    /// behind a proxy), where a cookie must never travel in clear.
    pub secure_cookies: bool,
    /// Rate limits.
    pub limits: Arc<Limits>,
    /// The client of every outbound request (verification, robots.txt, sitemaps). It refuses
    /// private, loopback and link-local addresses unless [`AppState::allow_private_networks`]
    /// was called: a user must not make the service fetch from its own network (SSRF).
    pub fetcher: Fetcher,
    /// E-mail addresses (lower case) whose accounts are admins, who see and change every
    /// user's sites: given at sign-up, and granted at start to existing accounts (`serve --admin`).
    pub admins: Arc<[String]>,
    /// The IndexNow receiver's rate limits and key-file cache.
    pub indexnow: Arc<indexnow::IndexNow>,
    /// Shared with the scheduler's workers (their wake-up call).
    pub scheduler: Arc<scheduler::Shared>,
    /// The console's URL checks running in this process (one per site, a few per user).
    pub checks: Arc<console::checker::Jobs>,
}

impl AppState {
    /// State with the default [`Limits`] and a fetcher that refuses private networks.
    pub fn new(store: Arc<dyn Store>, secure_cookies: bool) -> Self {
        AppState {
            store,
            secure_cookies,
            limits: Arc::new(Limits::default()),
            fetcher: fetcher(false),
            admins: Arc::new([]),
            indexnow: Arc::default(),
            scheduler: Arc::default(),
            checks: Arc::default(),
        }
    }

    /// Makes these e-mail addresses admins when they sign up (see [`AppState::admins`]).
    pub fn with_admins(mut self, emails: &[String]) -> Self {
        self.admins = emails.iter().map(|e| e.trim().to_lowercase()).collect();
        self
    }

    /// Lets outbound requests reach private and loopback addresses: for tests and for a
    /// service whose sites are on its own network (`--allow-private-networks`).
    pub fn allow_private_networks(mut self) -> Self {
        self.fetcher = fetcher(true);
        self
    }
}

/// The service's HTTP client: the fetch layer's defaults (timeouts, size limits, retries).
fn fetcher(allow_private_networks: bool) -> Fetcher {
    let config = mapwright_fetch::Config { allow_private_networks, ..mapwright_fetch::Config::default() };
    Fetcher::new(config).expect("the TLS backend initialises")
}

/// The rate limits of the public and sign-in endpoints; over a limit the answer is 429 with
/// Retry-After.
#[derive(Debug)]
pub struct Limits {
    /// Pings per client address (default 60 a minute).
    pub ping_per_client: RateLimiter,
    /// Pings per sitemap URL (default 6 a minute: a sitemap changing faster gains nothing).
    pub ping_per_sitemap: RateLimiter,
    /// Sign-in attempts per client address (default 20 a minute).
    pub sign_in_per_client: RateLimiter,
    /// Sign-in attempts per e-mail address (default 10 a minute), against password guessing
    /// from many addresses.
    pub sign_in_per_email: RateLimiter,
}

impl Default for Limits {
    fn default() -> Self {
        let minute = std::time::Duration::from_secs(60);
        Limits {
            ping_per_client: RateLimiter::new(60, minute),
            ping_per_sitemap: RateLimiter::new(6, minute),
            sign_in_per_client: RateLimiter::new(20, minute),
            sign_in_per_email: RateLimiter::new(10, minute),
        }
    }
}

/// How long a session lasts: 30 days.
pub const SESSION_SECONDS: i64 = 30 * 24 * 3600;

/// The name of the session cookie.
pub const SESSION_COOKIE: &str = "mapwright_session";

/// The service's routes: those of [`api::ROUTES`] (documented by `openapi.yaml`) and the
/// console's.
pub fn app(state: AppState) -> Router {
    Router::new().merge(api::router()).merge(console::routes()).with_state(state)
}

/// `GET /healthz`: 200 "ok" when the database answers, 503 otherwise.
pub(crate) async fn health(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> Result<&'static str, AppError> {
    state.store.queue_depth(now()).await.map_err(AppError::Unavailable)?;
    Ok("ok\n")
}

/// The current time in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
