//! The mapwright sitemap service as an axum [`Router`]: health, the public ping, IndexNow
//! ([`indexnow`]), and the JSON API under `/api/v1` (accounts here, the rest in [`api`],
//! documented by `openapi.yaml`).
//!
//! [`app`] takes the state and returns the router, so tests drive it in process and the
//! binary serves it. The layers, top to bottom (the crate's ARCHITECTURE.md draws them; `tests/layers.rs`
//! holds the code to them): this file; the faces ([`api`], [`console`], the ping, [`indexnow`]);
//! the use cases both faces call ([`service`]); background work ([`jobs`]); the base (errors,
//! auth, [`verify`], [`domains`]' DNS look-up, the status words, ...); the store.
#![deny(missing_docs)]

// The faces (they import the service and the base, never another face).
pub mod api;
pub mod console;
pub mod indexnow;
mod ping;

// The use cases both faces call.
pub mod service;

// Background work: every job, and the supervisor that starts them.
pub mod jobs;

// The base: imported by the layers above, importing none of them.
mod auth;
pub mod domains;
mod error;
mod extract;
mod format;
pub mod hashing;
pub mod listen;
mod listing;
pub mod mail;
pub mod metrics;
pub mod outbound;
mod ratelimit;
mod sitemap_url;
mod status;
mod trust;
pub mod verify;

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderName, HeaderValue};
use mapwright_fetch::Fetcher;
use mapwright_store::Store;
use tower_http::set_header::SetResponseHeaderLayer;

pub use error::AppError;
pub use ratelimit::{Backoff, RateLimiter, SharedLimit};

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
    /// Password hashing, at most one per core at once (see [`hashing`]).
    pub hashing: Arc<hashing::HashPool>,
    /// The IndexNow receiver's rate limits and key-file cache.
    pub indexnow: Arc<indexnow::IndexNow>,
    /// Shared with the background jobs (the read workers' wake-up call, the webhook sender's).
    pub scheduler: Arc<jobs::Shared>,
    /// The URL checks running in this process (one per site, a few per user).
    pub checks: Arc<jobs::checker::Jobs>,
    /// How the service mails sign-up links; `None`: it takes no sign-ups (the operator makes
    /// the accounts). See [`AppState::with_mail`].
    pub mail: Option<Arc<mail::Mailer>>,
    /// Where domain properties' TXT records are looked up (see [`domains::dns`]):
    /// the system's name servers unless [`AppState::with_dns_servers`] names others.
    pub dns: domains::dns::DnsConfig,
    /// The one gate every request and mail the service sends on a user's behalf asks first:
    /// budgets per target, shared by every process on the store ([`outbound`]).
    pub gate: Arc<outbound::Gate>,
    /// Who may read `/metrics` ([`metrics::Access`]; open unless the operator closes it).
    pub metrics_access: metrics::Access,
    /// The last probe of `/healthz`.
    health: Arc<HealthProbe>,
}

impl AppState {
    /// Wakes idle read workers now, after something became due (a ping, a resubmit, a new
    /// sitemap), instead of at their next poll. It lives here, not in `jobs::reads`, so that the
    /// modules that make work due (submission, ping, recheck) need not import the reads job.
    ///
    /// Workers in other processes sharing the database are told through the store
    /// ([`Store::notify_due`], PostgreSQL's `NOTIFY`), in the
    /// background: a web process (`--workers 0`) has no workers of its own, and the request that
    /// made the work due does not wait for the telling. Outside a runtime only this process's
    /// workers are woken (the others find the work at their next poll).
    pub fn wake_workers(&self) {
        self.scheduler.wake.notify_waiters();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let store = self.store.clone();
            runtime.spawn(async move {
                if let Err(e) = store.notify_due().await {
                    tracing::debug!(error = %e, "cannot wake the workers of other processes");
                }
            });
        }
    }

    /// State with the default [`Limits`] and a fetcher that refuses private networks.
    pub fn new(store: Arc<dyn Store>, secure_cookies: bool) -> Self {
        let gate = Arc::new(outbound::Gate::new(store.clone(), outbound::Rates::default()));
        AppState {
            store,
            secure_cookies,
            limits: Arc::new(Limits::default()),
            fetcher: outbound::gated(fetcher(false), &gate),
            hashing: Arc::new(hashing::HashPool::for_this_machine()),
            indexnow: Arc::default(),
            scheduler: Arc::default(),
            checks: Arc::default(),
            mail: None,
            dns: domains::dns::DnsConfig::default(),
            gate,
            metrics_access: metrics::Access::Public,
            health: Arc::default(),
        }
    }

    /// Counts the service's sends against these budgets per target instead of the defaults
    /// (`serve`'s outbound settings).
    pub fn with_outbound_rates(mut self, rates: outbound::Rates) -> Self {
        self.gate = Arc::new(outbound::Gate::new(self.store.clone(), rates));
        self.fetcher = outbound::gated(self.fetcher.clone(), &self.gate);
        self
    }

    /// Who may read `/metrics`.
    pub fn with_metrics_access(mut self, access: metrics::Access) -> Self {
        self.metrics_access = access;
        self
    }

    /// Takes sign-ups, confirmed by a link mailed through `mailer`: a sign-up must not tell a
    /// stranger which addresses have accounts, so the account is made only by the address's
    /// owner following the link.
    pub fn with_mail(mut self, mailer: mail::Mailer) -> Self {
        self.mail = Some(Arc::new(mailer));
        self
    }

    /// Looks TXT records of domain properties up on these name servers instead of the
    /// system's (`serve --dns-server`; the tests' own DNS server on loopback).
    pub fn with_dns_servers(mut self, servers: Vec<std::net::SocketAddr>) -> Self {
        self.dns.servers = servers;
        self
    }

    /// Lets outbound requests reach private and loopback addresses: for tests and for a
    /// service whose sites are on its own network (`--allow-private-networks`).
    pub fn allow_private_networks(mut self) -> Self {
        self.fetcher = outbound::gated(fetcher(true), &self.gate);
        self
    }
}

/// How long the service keeps an idle connection to a site. Its work on one origin comes in
/// bursts (an index, then its children; a check run's URLs a few a second), and then that
/// origin may not be asked again for a day: with the fetch layer's 90 s, a first ingest of 10^4
/// sites held 1,700 idle connections (a file descriptor and buffers each) in one process.
const POOL_IDLE: std::time::Duration = std::time::Duration::from_secs(10);

/// The service's HTTP client: the fetch layer's defaults (timeouts, size limits, retries),
/// idle connections kept only for the burst.
fn fetcher(allow_private_networks: bool) -> Fetcher {
    let config = mapwright_fetch::Config {
        allow_private_networks,
        pool_idle_timeout: POOL_IDLE,
        ..mapwright_fetch::Config::default()
    };
    Fetcher::new(config).expect("the TLS backend initialises")
}

/// The rate limits of the public and account endpoints; over a limit the answer is 429 with
/// Retry-After. The [`SharedLimit`]s are counted in the store, one limit for every process on
/// it; the [`Backoff`]s are per process (ARCHITECTURE.md lists what is per process, and why).
#[derive(Debug)]
pub struct Limits {
    /// Pings per client address (default 60 a minute).
    pub ping_per_client: SharedLimit,
    /// Pings per sitemap URL (default 6 a minute: a sitemap changing faster gains nothing).
    pub ping_per_sitemap: SharedLimit,
    /// Pings per client network (an IPv4 /24, an IPv6 /48; default 300 a minute): a client
    /// holding a /48 has 65,536 /64s, each with its own `ping_per_client`.
    pub ping_per_network: SharedLimit,
    /// Sign-up attempts per client address (default 10 a minute).
    pub sign_up_per_client: SharedLimit,
    /// Sign-up mail per requesting network and address (default 3 an hour): past it, a sign-up
    /// still answers the same, but nothing is stored or sent. Keyed by the network too, a
    /// stranger uses up only the stranger's own share of an address's mail, never its owner's.
    pub mail_per_network_address: SharedLimit,
    /// Sign-up mail per requesting network, all addresses together (default 30 an hour).
    pub mail_per_network: SharedLimit,
    /// Sign-in attempts per client address, whatever the e-mail (default 20 a minute).
    pub sign_in_per_client: SharedLimit,
    /// Site invitations a user sends (default 20 a day): each is a mail to an address the
    /// user chooses.
    pub invitations_per_user: SharedLimit,
    /// Webhook handshakes a user asks for, adding an endpoint or "Verify" (default 20 an
    /// hour): each is a request to a URL the user chooses.
    pub webhook_handshakes_per_user: SharedLimit,
    /// Failed sign-ins per client address and e-mail together: 5 free, then a wait of 1 s
    /// doubling up to a minute, forgotten after 15 minutes or a success. Keyed by both, a
    /// stranger's guesses slow down the stranger, never the owner elsewhere.
    pub sign_in_failures: Backoff,
    /// Failed sign-ins per e-mail from any address, counted for the slow path (a pause before
    /// each attempt once many addresses failed), never a refusal.
    pub sign_in_failures_per_email: Backoff,
}

impl Default for Limits {
    fn default() -> Self {
        let (second, minute) = (std::time::Duration::from_secs(1), std::time::Duration::from_secs(60));
        Limits {
            ping_per_client: SharedLimit::new("ping per client", 60, minute),
            ping_per_sitemap: SharedLimit::new("ping per sitemap", 6, minute),
            ping_per_network: SharedLimit::new("ping per network", 300, minute),
            sign_up_per_client: SharedLimit::new("sign-up per client", 10, minute),
            mail_per_network_address: SharedLimit::new("sign-up mail per network and address", 3, 60 * minute),
            mail_per_network: SharedLimit::new("sign-up mail per network", 30, 60 * minute),
            sign_in_per_client: SharedLimit::new("sign-in per client", 20, minute),
            invitations_per_user: SharedLimit::new("invitations per user", 20, 24 * 60 * minute),
            webhook_handshakes_per_user: SharedLimit::new("webhook handshakes per user", 20, 60 * minute),
            sign_in_failures: Backoff::new(5, second, minute, 15 * minute),
            sign_in_failures_per_email: Backoff::new(u32::MAX, second, minute, 15 * minute),
        }
    }
}

/// Makes the existing accounts with these e-mail addresses admins (`serve --admin`, at start);
/// returns the addresses that have no account. Sign-up never makes an admin: a stranger must
/// not claim an admin's address before its owner signs up.
pub async fn grant_admins(store: &dyn Store, emails: &[String]) -> Result<Vec<String>, mapwright_store::Error> {
    let mut missing = Vec::new();
    for email in emails {
        if !store.grant_admin(email).await? {
            missing.push(email.clone());
        }
    }
    Ok(missing)
}

/// Why a password cannot be an account's (10 to 1024 characters, not all blank), or `None`:
/// the one rule of sign-up and of the operator's `serve user create`.
pub fn password_problem(password: &str) -> Option<&'static str> {
    let length = password.chars().count();
    if length < 10 {
        Some("the password needs at least 10 characters")
    } else if password.trim().is_empty() {
        Some("the password needs more than blank space")
    } else if length > 1024 {
        Some("the password is longer than 1024 characters")
    } else {
        None
    }
}

/// How long a session lasts: 30 days.
pub const SESSION_SECONDS: i64 = 30 * 24 * 3600;

/// The name of the session cookie.
pub const SESSION_COOKIE: &str = "mapwright_session";

/// The largest request body read by any route but `POST /indexnow` (which has its own,
/// [`indexnow::BODY_LIMIT`], read under a budget for all such bodies at once): every JSON body
/// and form of the service fits many times.
pub const MAX_BODY: usize = 64 * 1024;

/// Headers on every response. No page runs a script, so the policy allows none; no page may
/// be framed (clickjacking); types are not sniffed; other sites are not told our URLs.
const SECURITY_HEADERS: [(&str, &str); 4] = [
    (
        "content-security-policy",
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("x-frame-options", "DENY"),
];

/// The service's routes, with the security headers and the body limit on every one.
pub fn app(state: AppState) -> Router {
    let mut router = routes(state).layer(axum::extract::DefaultBodyLimit::max(MAX_BODY));
    for (name, value) in SECURITY_HEADERS {
        router = router.layer(SetResponseHeaderLayer::if_not_present(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        ));
    }
    router
}

fn routes(state: AppState) -> Router {
    // The API's routes are those of [`api::ROUTES`] (documented by `openapi.yaml`).
    Router::new().merge(api::router(other_faces)).merge(console::routes()).with_state(state)
}

/// The handlers of the documented routes ([`api::ROUTES`]) that the ping and IndexNow faces
/// serve: given to the API's router from here, since a face never imports another face.
fn other_faces(method: api::Method, path: &str) -> Option<axum::routing::MethodRouter<AppState>> {
    use axum::routing::{get, post};
    match (method, path) {
        (api::Method::Get, "/ping") => Some(get(ping::ping)),
        (api::Method::Get, "/indexnow") => Some(get(indexnow::get)),
        (api::Method::Post, "/indexnow") => Some(post(indexnow::post)),
        _ => None,
    }
}

/// `GET /healthz`: 200 "ok" when the store takes a write now (its probe, see
/// `Store::health`), 503 otherwise: a full disk or a store that cannot write is unhealthy even
/// while reads still answer. One probe at a time, its answer reused for a second, so polling
/// the route cannot make the store write without end.
pub(crate) async fn health(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> Result<&'static str, AppError> {
    let mut last = state.health.lock().await;
    let fresh = last.as_ref().is_some_and(|(at, _)| at.elapsed() < HEALTH_PROBE_REUSE);
    if !fresh {
        let outcome = state.store.health(now()).await.map_err(|e| match e {
            mapwright_store::Error::Unhealthy(why) => why,
            other => other.to_string(),
        });
        *last = Some((std::time::Instant::now(), outcome));
    }
    match last.as_ref().map(|(_, outcome)| outcome) {
        Some(Err(why)) => {
            tracing::warn!(error = %why, "health probe: the store cannot write");
            Err(AppError::Unavailable(mapwright_store::Error::Unhealthy(why.clone())))
        }
        _ => Ok("ok\n"),
    }
}

/// How long a health probe's answer is reused.
const HEALTH_PROBE_REUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// The last health probe: when, and its outcome.
type HealthProbe = tokio::sync::Mutex<Option<(std::time::Instant, Result<(), String>)>>;

/// The current time in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
