//! The fetch scheduler: `workers` tasks that lease due sitemaps from the store, fetch, read
//! and store them ([`run_job`]), and one task that re-checks site verification and adds the
//! sitemaps robots.txt names ([`recheck_once`], [`after_verified`]).
//!
//! The queue is the store's `sitemaps` table: leases with an expiry make a crashed process's
//! jobs due again, and `FOR UPDATE SKIP LOCKED` (PostgreSQL) or a write transaction (SQLite)
//! keeps two workers, in one process or several, off the same job. Workers poll when idle and
//! wake at once on [`wake`] (a ping, a resubmit, a new index child).

mod fetch;
pub mod policy;
mod recheck;

use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::{AppState, now};

pub use fetch::{JobError, JobOutcome, MAX_STORED_FINDINGS, run_job};
pub use recheck::{after_verified, recheck_once, verify_now};

/// How the scheduler runs; `mapwright serve` fills it from its settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Worker tasks in this process (default 4).
    pub workers: usize,
    /// Sitemaps a worker leases at once (default 4): more means fewer lease queries, but
    /// jobs held longer before they start.
    pub batch: i64,
    /// How long a lease holds (default 300 s, above the HTTP layer's 120 s request limit):
    /// after it a crashed worker's job is due again.
    pub lease_seconds: i64,
    /// The wait of an idle worker before it looks again (default 1 s).
    pub poll_interval: Duration,
    /// How often a site's verification is re-checked (default 24 h).
    pub verify_interval: Duration,
    /// On shutdown, how long jobs in flight may take to finish before their leases are
    /// released (default 10 s).
    pub grace: Duration,
    /// Run the verification re-check task (default true).
    pub recheck: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            workers: 4,
            batch: 4,
            lease_seconds: 300,
            poll_interval: Duration::from_secs(1),
            verify_interval: Duration::from_secs(24 * 3600),
            grace: Duration::from_secs(10),
            recheck: true,
        }
    }
}

/// What the scheduler shares with the handlers through [`AppState`].
#[derive(Debug, Default)]
pub struct Shared {
    /// Wakes idle workers (see [`wake`]).
    pub wake: Notify,
    /// The counters `/metrics` serves.
    pub metrics: crate::metrics::Metrics,
}

/// Wakes idle workers now, after something became due (a ping, a resubmit, a new sitemap),
/// instead of at their next poll.
pub fn wake(state: &AppState) {
    state.scheduler.wake.notify_waiters();
}

/// Starts the workers and the re-check task. They stop when `shutdown` turns true (or its
/// sender is dropped): no new leases, jobs in flight get [`Config::grace`] to finish, the
/// rest are released, and every lease of this process is given back. The handle ends when
/// all have stopped.
pub fn spawn(state: AppState, config: Config, shutdown: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tasks = JoinSet::new();
        let process = process_tag();
        for n in 0..config.workers.max(1) {
            let worker = format!("{process}-{n}");
            tasks.spawn(work(state.clone(), config.clone(), worker, shutdown.clone()));
        }
        if config.recheck {
            tasks.spawn(recheck::run(state.clone(), config.clone(), shutdown.clone()));
        }
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done {
                tracing::error!(error = %e, "a scheduler task failed");
            }
        }
    })
}

/// A name unique to this process among all that share the database: host, pid and start time.
fn process_tag() -> String {
    let host = std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "host".into());
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{host}-{}-{}-{nanos:09}", std::process::id(), now())
}

/// Resolves once shutdown was asked for (or can no longer be asked).
async fn stopping(mut shutdown: watch::Receiver<bool>) {
    while !*shutdown.borrow_and_update() {
        if shutdown.changed().await.is_err() {
            return;
        }
    }
}

/// One worker: lease, run, repeat; idle, wait for a poll or a wake-up.
async fn work(state: AppState, config: Config, worker: String, shutdown: watch::Receiver<bool>) {
    tracing::debug!(worker, "worker started");
    while !*shutdown.borrow() {
        let jobs = match state.store.lease_due_sitemaps(&worker, now(), config.batch, config.lease_seconds).await {
            Ok(jobs) => jobs,
            Err(e) => {
                tracing::warn!(worker, error = %e, "cannot lease sitemaps");
                Vec::new()
            }
        };
        if jobs.is_empty() {
            let woken = state.scheduler.wake.notified();
            tokio::select! {
                _ = tokio::time::sleep(config.poll_interval) => {}
                _ = woken => {}
                _ = stopping(shutdown.clone()) => {}
            }
            continue;
        }
        for job in jobs {
            if *shutdown.borrow() {
                release(&state, &worker, job.id).await;
                continue;
            }
            run_one(&state, &config, &worker, &job, shutdown.clone()).await;
        }
    }
    match state.store.release_all(&worker).await {
        Ok(n) => tracing::debug!(worker, released = n, "worker stopped"),
        Err(e) => tracing::warn!(worker, error = %e, "cannot release leases at shutdown"),
    }
}

/// Runs a job; on shutdown it gets the grace period, then its lease is released.
async fn run_one(
    state: &AppState,
    config: &Config,
    worker: &str,
    job: &mapwright_store::LeasedSitemap,
    shutdown: watch::Receiver<bool>,
) {
    let grace = async {
        stopping(shutdown).await;
        tokio::time::sleep(config.grace).await;
    };
    tokio::select! {
        result = run_job(state, worker, job) => match result {
            Ok(done) => {
                state.scheduler.metrics.fetched(&done.status, done.duration_ms, done.url_count);
                tracing::info!(
                    worker, sitemap = job.id, url = %job.url, status = %done.status,
                    urls = done.url_count, ms = done.duration_ms, "fetched"
                )
            }
            Err(e) => tracing::warn!(worker, sitemap = job.id, url = %job.url, error = %e, "job failed"),
        },
        _ = grace => {
            tracing::info!(worker, sitemap = job.id, "shutdown: releasing an unfinished job");
            release(state, worker, job.id).await;
        }
    }
}

async fn release(state: &AppState, worker: &str, sitemap_id: i64) {
    if let Err(e) = state.store.release(worker, sitemap_id).await {
        tracing::debug!(worker, sitemap_id, error = %e, "release");
    }
}
