//! Background work in one home: each job a module, started and stopped here.
//!
//! - [`reads`]: the dispatcher of sitemap reads (leases due sitemaps, runs [`reads::run_job`]).
//! - [`recheck`]: the periodic re-check of site verification ([`recheck::recheck_once`],
//!   [`recheck::after_verified`]) and of domain properties ([`recheck::domains`]).
//! - [`webhooks`]: the webhook deliveries.
//! - [`alerts`]: the alert mail after a read.
//! - [`retention`]: the retention policy.
//! - [`checker`]: the failing-URL report's check runs ([`checker::run`]).
//!
//! [`spawn`] starts them all under one shutdown signal: the reads, the re-checks, the webhook
//! sender and retention when the process has workers ([`Config::workers`] above 0), the
//! checker when [`Config::checks`] says so (in web processes too). A job imports no face, no `service` and no other job's internals: what two
//! jobs share (`process_tag`, `stopping`, `read_recorded`, [`Shared`]) is here.

pub mod alerts;
pub mod checker;
pub mod reads;
pub mod recheck;
pub mod retention;
pub mod webhooks;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mapwright_store::LeasePolicy;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::{AppState, now};

/// How the scheduler runs; `mapwright serve` fills it from its settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Jobs run at once in this process (default 4).
    pub workers: usize,
    /// Sitemaps leased by one lease query at most (default 4).
    pub batch: i64,
    /// How long a lease holds (default 300 s, above the HTTP layer's 120 s request limit):
    /// after it a crashed worker's job is due again. A job still running at 90% of it is
    /// stopped and recorded as failed, so that it never runs twice at once.
    pub lease_seconds: i64,
    /// The longest a job may run, download and storing together (default 120 s, the HTTP
    /// layer's request limit; never more than 90% of the lease): a slow sitemap is stopped and
    /// recorded as failed, so its owner's jobs give their workers back.
    pub job_deadline: Duration,
    /// The wait of an idle dispatcher before it looks again (default 1 s).
    pub poll_interval: Duration,
    /// How often a site's verification is re-checked (default 24 h).
    pub verify_interval: Duration,
    /// On shutdown, how long jobs in flight may take to finish before their leases are
    /// released (default 10 s).
    pub grace: Duration,
    /// Run the verification re-check task (default true).
    pub recheck: bool,
    /// Jobs of one origin in flight at once, in all processes (default 2).
    pub per_origin: i64,
    /// Jobs of one owner in flight at once, in all processes (default 2); below `workers`, so
    /// one user's slow sites never hold every worker.
    pub per_owner: i64,
    /// Requests to one host at once from this process (default 2), whichever sites they serve
    /// (a host many sites cross-submit to), as `discover` bounds them.
    pub per_host: usize,
    /// The shortest time between two fetches of one sitemap, however often it is pinged or
    /// resubmitted (default 60 s).
    pub min_fetch_interval: Duration,
    /// URL rows a site may hold (default 1,000,000): new URLs past it are not stored, and the
    /// download says so.
    pub url_quota: i64,
    /// How long one site's verification check may take in the re-check (default 15 s); a
    /// site that does not answer in time is not verified.
    pub verify_timeout: Duration,
    /// Verification checks run at once by the re-check (default 8).
    pub verify_concurrency: usize,
    /// The retention policy and how often it runs; `None` keeps everything.
    pub retention: Option<retention::Config>,
    /// How webhook deliveries are sent (see [`webhooks`]).
    pub webhooks: webhooks::Config,
    /// Run the periodic URL checker ([`checker::run`], configured by
    /// [`AppState::checks`](crate::AppState::checks)), whatever `workers` says (default false:
    /// `mapwright serve` turns it on in every process; a test that embeds the scheduler opts in).
    pub checks: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            workers: 4,
            batch: 4,
            lease_seconds: 300,
            job_deadline: Duration::from_secs(120),
            poll_interval: Duration::from_secs(1),
            verify_interval: Duration::from_secs(24 * 3600),
            grace: Duration::from_secs(10),
            recheck: true,
            per_origin: 2,
            per_owner: 2,
            per_host: 2,
            min_fetch_interval: Duration::from_secs(60),
            url_quota: DEFAULT_URL_QUOTA,
            verify_timeout: Duration::from_secs(15),
            verify_concurrency: 8,
            retention: None,
            webhooks: webhooks::Config::default(),
            checks: false,
        }
    }
}

/// URL rows a site may hold unless configured.
pub const DEFAULT_URL_QUOTA: i64 = 1_000_000;

impl Config {
    /// The store's side of the fairness rules.
    pub fn lease_policy(&self) -> LeasePolicy {
        LeasePolicy {
            per_origin: self.per_origin.max(1),
            per_owner: self.per_owner.max(1),
            min_interval: self.min_fetch_interval.as_secs() as i64,
        }
    }
}

/// What the scheduler shares with the handlers through [`AppState`].
#[derive(Debug)]
pub struct Shared {
    /// Wakes idle workers (see [`AppState::wake_workers`](crate::AppState::wake_workers)).
    pub wake: Notify,
    /// The counters `/metrics` serves.
    pub metrics: crate::metrics::Metrics,
    /// URL rows a site may hold ([`Config::url_quota`], set by [`spawn`]).
    pub url_quota: AtomicI64,
    /// Requests in flight per host ([`Config::per_host`]).
    hosts: HostLimits,
    /// Wakes this process's webhook sender when a read queued deliveries.
    pub webhooks: Notify,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            wake: Notify::new(),
            metrics: Default::default(),
            url_quota: AtomicI64::new(DEFAULT_URL_QUOTA),
            hosts: HostLimits::default(),
            webhooks: Notify::new(),
        }
    }
}

/// A semaphore per host, made on first use; idle ones are dropped once there are many.
#[derive(Debug, Default)]
struct HostLimits {
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl HostLimits {
    /// Entries kept before idle ones are swept.
    const SWEEP_AT: usize = 1024;

    async fn acquire(&self, host: &str, per_host: usize) -> OwnedSemaphorePermit {
        let semaphore = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            if hosts.len() >= Self::SWEEP_AT && !hosts.contains_key(host) {
                hosts.retain(|_, s| Arc::strong_count(s) > 1);
            }
            hosts.entry(host.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(per_host.max(1)))).clone()
        };
        semaphore.acquire_owned().await.expect("host semaphores are never closed")
    }
}

/// Starts the background jobs: with workers ([`Config::workers`] above 0) the dispatcher, the
/// re-check tasks, the webhook sender and the retention task; with [`Config::checks`] the URL
/// checker. They stop when `shutdown` turns true (or its sender is dropped): no new leases,
/// jobs in flight get [`Config::grace`] to finish, the rest are released, and every lease of
/// this process is given back (the checker's runs too). The handle ends when all have stopped.
pub fn spawn(state: AppState, config: Config, shutdown: watch::Receiver<bool>) -> JoinHandle<()> {
    state.scheduler.url_quota.store(config.url_quota.max(0), Ordering::Relaxed);
    tokio::spawn(async move {
        let mut tasks = JoinSet::new();
        if config.workers > 0 {
            tasks.spawn(reads::dispatch(state.clone(), config.clone(), process_tag(), shutdown.clone()));
            tasks.spawn(reads::hear_wakes(state.clone(), config.poll_interval, shutdown.clone()));
            if config.recheck {
                tasks.spawn(recheck::run(state.clone(), config.clone(), shutdown.clone()));
                let (interval, poll) = (config.verify_interval, config.poll_interval);
                tasks.spawn(recheck::domains::run_rechecks(state.clone(), interval, poll, shutdown.clone()));
            }
            tasks.spawn(webhooks::run(state.clone(), config.webhooks.clone(), shutdown.clone()));
            if let Some(policy) = config.retention {
                tasks.spawn(retention::run(state.clone(), policy, shutdown.clone()));
            }
        }
        if config.checks {
            tasks.spawn(checker::run(state.clone(), shutdown.clone()));
        }
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done {
                tracing::error!(error = %e, "a scheduler task failed");
            }
        }
    })
}

/// A name unique to this process among all that share the database: host, pid and start time.
pub(crate) fn process_tag() -> String {
    let host = std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "host".into());
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{host}-{}-{}-{nanos:09}", std::process::id(), now())
}

/// Resolves once shutdown was asked for (or can no longer be asked).
pub(crate) async fn stopping(mut shutdown: watch::Receiver<bool>) {
    while !*shutdown.borrow_and_update() {
        if shutdown.changed().await.is_err() {
            return;
        }
    }
}

/// What follows the recording of a read, wherever it was recorded (`reads::run_job`, or
/// the dispatcher's `fail_job` for a job that broke off): the read's events, its e-mail alerts and webhooks.
/// `before` is the sitemap's row as it was before the read. Never fails the job.
pub(crate) async fn read_recorded(state: &AppState, before: &mapwright_store::Sitemap) {
    alerts::after_read(state, before.id).await;
    webhooks::read_recorded(state, before).await;
}
