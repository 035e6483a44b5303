//! `GET /metrics`: the scheduler's counters in the Prometheus text format (prometheus-client):
//! fetches by outcome, failures, fetch durations, URLs stored, and the queue depth read from
//! the store at each scrape.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::{AppError, AppState, now};

/// The label of `mapwright_fetches_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    status: String,
}

/// The service's metrics; one per process, shared through [`AppState`].
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    fetches: Family<Outcome, Counter>,
    failures: Counter,
    duration: Histogram,
    urls: Counter,
    queue_depth: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("mapwright");
        let fetches = Family::<Outcome, Counter>::default();
        let failures = Counter::default();
        // 10 ms to about 160 s.
        let duration = Histogram::new(exponential_buckets(0.01, 2.0, 15));
        let urls = Counter::default();
        let queue_depth = Gauge::default();
        registry.register(
            "fetches",
            "Sitemap downloads by status (ok, warnings, errors, failed, unchanged)",
            fetches.clone(),
        );
        registry.register(
            "fetch_failures",
            "Sitemap downloads that failed (network, HTTP status, not a sitemap)",
            failures.clone(),
        );
        registry.register(
            "fetch_duration_seconds",
            "Wall time of a sitemap download, read and store",
            duration.clone(),
        );
        registry.register("urls_read", "Sitemap entries read by the workers", urls.clone());
        registry.register("queue_depth", "Sitemaps due and not leased", queue_depth.clone());
        Metrics { registry, fetches, failures, duration, urls, queue_depth }
    }
}

impl Metrics {
    /// Counts one finished job.
    pub fn fetched(&self, status: &str, duration_ms: i64, urls: i64) {
        self.fetches.get_or_create(&Outcome { status: status.to_owned() }).inc();
        if status == "failed" {
            self.failures.inc();
        }
        self.duration.observe(duration_ms.max(0) as f64 / 1000.0);
        self.urls.inc_by(urls.max(0) as u64);
    }
}

/// Who may read `/metrics` (`serve --metrics`): its counters tell strangers how busy the
/// service is and what it reads, so an operator may close it or ask for a token.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum Access {
    /// Anyone (the default, as before).
    #[default]
    Public,
    /// Nobody: 404.
    Off,
    /// A scraper that sends `Authorization: Bearer <token>`; anyone else 401.
    Token(String),
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Public => "Public",
            Access::Off => "Off",
            Access::Token(_) => "Token(hidden)",
        })
    }
}

impl Access {
    /// The access a setting names: `public`, `off` or `token:SECRET`.
    pub fn parse(text: &str) -> Option<Access> {
        match text {
            "public" => Some(Access::Public),
            "off" => Some(Access::Off),
            _ => text.strip_prefix("token:").filter(|t| !t.is_empty()).map(|t| Access::Token(t.to_owned())),
        }
    }

    /// Whether a request with these headers may read the metrics: `Err` is the answer.
    fn admit(&self, headers: &axum::http::HeaderMap) -> Result<(), AppError> {
        match self {
            Access::Public => Ok(()),
            Access::Off => Err(AppError::NotFound),
            Access::Token(token) => {
                let given = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .unwrap_or("");
                // Compared through hashes: the time taken tells nothing of the token.
                let same = mapwright_store::secret::token_hash(given) == mapwright_store::secret::token_hash(token);
                if same { Ok(()) } else { Err(AppError::Unauthorized) }
            }
        }
    }
}

/// `GET /metrics`.
pub(crate) async fn metrics(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
) -> Result<impl IntoResponse, AppError> {
    state.metrics_access.admit(&headers)?;
    let metrics = &state.scheduler.metrics;
    let depth = state.store.queue_depth(now()).await.map_err(AppError::Unavailable)?;
    metrics.queue_depth.set(depth);
    let mut text = String::new();
    encode(&mut text, &metrics.registry).map_err(|e| AppError::Internal(Box::new(e)))?;
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text))
}
