//! The retention task: what the service stores for itself grows with time (a download and up
//! to a thousand findings per fetch, a row per ping, sessions, URLs that left every sitemap),
//! so a background task deletes what the policy no longer keeps ([`Store::apply_retention`]).
//!
//! [`Store::apply_retention`]: mapwright_store::Store::apply_retention

use std::time::Duration;

use mapwright_store::{Retention, RetentionReport};
use tokio::sync::watch;

use super::stopping;
use crate::{AppError, AppState, now};

/// The policy and how often it is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// What is kept.
    pub policy: Retention,
    /// The pause between two runs (default an hour).
    pub interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        const DAY: i64 = 24 * 3600;
        Config {
            policy: Retention {
                keep_downloads: 50,
                ping_max_age: 7 * DAY,
                removed_url_max_age: 30 * DAY,
                unverified_site_max_age: 7 * DAY,
                batch: 500,
            },
            interval: Duration::from_secs(3600),
        }
    }
}

/// Applies the policy once, now.
pub async fn run_once(state: &AppState, policy: Retention) -> Result<RetentionReport, AppError> {
    Ok(state.store.apply_retention(policy, now()).await?)
}

/// A run at start, then one per interval, until shutdown.
pub(super) async fn run(state: AppState, config: Config, shutdown: watch::Receiver<bool>) {
    while !*shutdown.borrow() {
        match run_once(&state, config.policy).await {
            Ok(report) => tracing::info!(?report, "retention applied"),
            Err(e) => tracing::warn!(error = %e, "retention"),
        }
        tokio::select! {
            _ = tokio::time::sleep(config.interval) => {}
            _ = stopping(shutdown.clone()) => {}
        }
    }
}
