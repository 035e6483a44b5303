//! The mapwright sitemap service as an axum [`Router`]: health, the public ping, and the
//! account part of the JSON API under `/api/v1`.
//!
//! [`app`] takes the state and returns the router, so tests drive it in process and the
//! binary serves it. The scheduler, site verification and IndexNow come later.
#![deny(missing_docs)]

mod auth;
mod error;
mod ping;

use std::sync::Arc;

use axum::Router;
use axum::routing::{delete, get, post};
use mapwright_store::Store;

pub use error::AppError;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The storage, SQLite or PostgreSQL.
    pub store: Arc<dyn Store>,
    /// Mark session cookies `Secure`: set when the service is reached over TLS (directly or
    /// behind a proxy), where a cookie must never travel in clear.
    pub secure_cookies: bool,
}

/// How long a session lasts: 30 days.
pub const SESSION_SECONDS: i64 = 30 * 24 * 3600;

/// The name of the session cookie.
pub const SESSION_COOKIE: &str = "mapwright_session";

/// The service's routes.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route("/ping", get(ping::ping))
        .route("/api/v1/signup", post(auth::sign_up))
        .route("/api/v1/signin", post(auth::sign_in))
        .route("/api/v1/signout", post(auth::sign_out))
        .route("/api/v1/me", get(auth::me))
        .route("/api/v1/tokens", get(auth::list_tokens).post(auth::create_token))
        .route("/api/v1/tokens/{id}", delete(auth::revoke_token))
        .with_state(state)
}

/// `GET /healthz`: 200 "ok" when the database answers, 503 otherwise.
async fn health(axum::extract::State(state): axum::extract::State<AppState>) -> Result<&'static str, AppError> {
    state.store.queue_depth(now()).await.map_err(AppError::Unavailable)?;
    Ok("ok\n")
}

/// The current time in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
