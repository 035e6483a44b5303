//! The fetch scheduler: a dispatcher that leases due sitemaps from the store fairly and runs
//! up to `workers` jobs at once ([`run_job`]), one task that re-checks site verification and
//! adds the sitemaps robots.txt names ([`recheck_once`], [`after_verified`]), and one that
//! applies the retention policy ([`retention`]).
//!
//! The queue is the store's `sitemaps` table: leases with an expiry make a crashed process's
//! jobs due again, and `FOR UPDATE SKIP LOCKED` (PostgreSQL) or a write transaction (SQLite)
//! keeps two processes off the same job. The lease is fair ([`LeasePolicy`]): a few jobs per
//! origin and per owner at once, owners in turn, and never a fetch sooner than the minimum
//! interval after the last, so one user's stalled or endless sites leave workers free for the
//! others. The dispatcher polls when idle and wakes at once on [`AppState::wake_workers`](crate::AppState::wake_workers) (a ping, a resubmit, a
//! new index child) or when a job ends. `wake_workers` also tells the workers of every other
//! process sharing the database (PostgreSQL `NOTIFY`, heard here by `hear_wakes`), so a job
//! submitted to a web process is picked up by a worker process at once.

mod fetch;
pub mod policy;
mod recheck;
pub mod retention;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mapwright_store::{DownloadRecord, FetchSummary, LeasePolicy, LeasedSitemap};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::{AppState, now};

pub use fetch::{JobError, JobOutcome, MAX_STORED_FINDINGS, run_job};
pub use recheck::{after_verified, recheck_once, verify_now};

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
    /// How webhook deliveries are sent (see [`crate::webhooks`]).
    pub webhooks: crate::webhooks::Config,
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
            webhooks: crate::webhooks::Config::default(),
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

/// Starts the dispatcher, the re-check task and the retention task. They stop when `shutdown`
/// turns true (or its sender is dropped): no new leases, jobs in flight get
/// [`Config::grace`] to finish, the rest are released, and every lease of this process is
/// given back. The handle ends when all have stopped.
pub fn spawn(state: AppState, config: Config, shutdown: watch::Receiver<bool>) -> JoinHandle<()> {
    state.scheduler.url_quota.store(config.url_quota.max(0), Ordering::Relaxed);
    tokio::spawn(async move {
        let mut tasks = JoinSet::new();
        tasks.spawn(dispatch(state.clone(), config.clone(), process_tag(), shutdown.clone()));
        tasks.spawn(hear_wakes(state.clone(), config.poll_interval, shutdown.clone()));
        if config.recheck {
            tasks.spawn(recheck::run(state.clone(), config.clone(), shutdown.clone()));
            let (interval, poll) = (config.verify_interval, config.poll_interval);
            tasks.spawn(crate::domains::run_rechecks(state.clone(), interval, poll, shutdown.clone()));
        }
        tasks.spawn(crate::webhooks::run(state.clone(), config.webhooks.clone(), shutdown.clone()));
        if let Some(policy) = config.retention {
            tasks.spawn(retention::run(state.clone(), policy, shutdown.clone()));
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

/// Wakes this process's dispatcher whenever another process (or this one) made work due and
/// said so through the store ([`Store::notify_due`](mapwright_store::Store::notify_due)); ends
/// at once on a backend with no listener (SQLite, one process). A lost connection is made
/// again; what was said meanwhile is covered by a wake-up at the reconnection and by the poll.
async fn hear_wakes(state: AppState, poll_interval: Duration, shutdown: watch::Receiver<bool>) {
    let mut listener = None;
    loop {
        if listener.is_none() {
            let pause = match state.store.due_listener().await {
                Ok(None) => return,
                Ok(Some(l)) => {
                    tracing::info!("listening for wake-ups from other processes");
                    listener = Some(l);
                    // Work made due while there was no listener: look now.
                    state.scheduler.wake.notify_waiters();
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for wake-ups from other processes; polling");
                    tokio::time::sleep(poll_interval.max(Duration::from_secs(1)))
                }
            };
            tokio::select! {
                _ = pause => continue,
                _ = stopping(shutdown.clone()) => return,
            }
        }
        let Some(heard) = listener.as_mut() else { continue };
        tokio::select! {
            result = heard.recv() => match result {
                Ok(_) => state.scheduler.wake.notify_waiters(),
                Err(e) => {
                    tracing::debug!(error = %e, "the wake-up listener failed");
                    listener = None;
                }
            },
            _ = stopping(shutdown.clone()) => return,
        }
    }
}

/// The dispatcher: lease as many jobs as there are free slots, run each in its own task,
/// and when none is due or no slot is free, wait for a poll, a wake-up or a job's end.
async fn dispatch(state: AppState, config: Config, worker: String, shutdown: watch::Receiver<bool>) {
    tracing::debug!(worker, "dispatcher started");
    let slots = config.workers.max(1);
    let policy = config.lease_policy();
    let mut running = JoinSet::new();
    while !*shutdown.borrow() {
        // Listening before the lease query: a wake-up during it is not lost.
        let woken = state.scheduler.wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let free = slots.saturating_sub(running.len()) as i64;
        // The last free slot (of two or more) is kept for an owner with nothing running in any
        // process (`per_owner` 1 in the lease: the owner's first job only), so that owners
        // with slow sitemaps, however many accounts they hold, never take every worker: a
        // user with nothing running gets the next free worker.
        let reserved = i64::from(slots > 1).min(free);
        let mut want = 0;
        let mut got = 0;
        for (slots_now, policy) in [(free - reserved, policy), (reserved, LeasePolicy { per_owner: 1, ..policy })] {
            let ask = slots_now.min(config.batch.max(1));
            if ask <= 0 {
                continue;
            }
            want += ask;
            match state.store.lease_sitemaps(&worker, now(), ask, config.lease_seconds, policy).await {
                Ok(jobs) => {
                    got += jobs.len() as i64;
                    for job in jobs {
                        running.spawn(run_one(state.clone(), config.clone(), worker.clone(), job, shutdown.clone()));
                    }
                }
                Err(e) => tracing::warn!(worker, error = %e, "cannot lease sitemaps"),
            }
        }
        if got > 0 && got == want {
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(config.poll_interval) => {}
            _ = woken => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
            _ = stopping(shutdown.clone()) => {}
        }
    }
    while running.join_next().await.is_some() {}
    match state.store.release_all(&worker).await {
        Ok(n) => tracing::debug!(worker, released = n, "dispatcher stopped"),
        Err(e) => tracing::warn!(worker, error = %e, "cannot release leases at shutdown"),
    }
}

/// Runs a job under the per-host limit and a deadline inside its lease; on shutdown it gets
/// the grace period, then its lease is released.
async fn run_one(state: AppState, config: Config, worker: String, job: LeasedSitemap, shutdown: watch::Receiver<bool>) {
    tracing::debug!(worker, sitemap = job.id, url = %job.url, "leased");
    let grace = async {
        stopping(shutdown).await;
        tokio::time::sleep(config.grace).await;
    };
    let in_lease = Duration::from_secs((config.lease_seconds.max(1) as u64 * 9).div_ceil(10));
    let deadline = config.job_deadline.min(in_lease);
    // Per origin, as `discover` counts hosts: scheme, host and port.
    let host = url::Url::parse(&job.url).map(|u| u.origin().ascii_serialization()).unwrap_or_default();
    let run = async {
        let _permit = state.scheduler.hosts.acquire(&host, config.per_host).await;
        tokio::time::timeout(deadline, run_job(&state, &worker, &job)).await
    };
    tokio::select! {
        result = run => match result {
            Ok(Ok(done)) => {
                state.scheduler.metrics.fetched(&done.status, done.duration_ms, done.url_count);
                tracing::info!(
                    worker, sitemap = job.id, url = %job.url, status = %done.status,
                    urls = done.url_count, ms = done.duration_ms, "fetched"
                )
            }
            Ok(Err(JobError::Store(mapwright_store::Error::LeaseLost { .. }))) => {
                tracing::warn!(worker, sitemap = job.id, url = %job.url, "lease lost: another worker has the job")
            }
            Ok(Err(e)) => {
                tracing::warn!(worker, sitemap = job.id, url = %job.url, error = %e, "job failed");
                fail_job(&state, &worker, &job, &format!("the download could not be stored: {e}")).await;
            }
            Err(_) => {
                tracing::warn!(worker, sitemap = job.id, url = %job.url, "job timed out");
                let why = format!("the download took longer than {} seconds and was stopped", deadline.as_secs());
                fail_job(&state, &worker, &job, &why).await;
            }
        },
        _ = grace => {
            tracing::info!(worker, sitemap = job.id, "shutdown: releasing an unfinished job");
            release(&state, &worker, job.id).await;
        }
    }
}

/// Records a job that broke off (a store error caused by its data, a deadline) as a failed
/// download with the reason, scheduled by the failure backoff: a poison job is shown to its
/// owner and retried later, not at every lease expiry forever. When even that cannot be
/// stored (the database is down), the lease expires and the job runs again.
async fn fail_job(state: &AppState, worker: &str, job: &LeasedSitemap, why: &str) {
    let result = async {
        let sitemap = state.store.sitemap_by_id(job.id).await?;
        let schedule = policy::next(sitemap.fetch_interval, sitemap.failures, policy::Change::Failed);
        let summary = FetchSummary {
            kinds: None,
            url_count: None,
            fetch_interval: schedule.period,
            failures: schedule.failures,
            format: None,
            contents: None,
        };
        state.store.record_fetch_summary(worker, job.id, &summary).await?;
        let at = now();
        let record = DownloadRecord {
            downloaded_at: at,
            status: "failed".into(),
            error: Some(why.to_owned()),
            etag: job.etag.clone(),
            last_modified: job.last_modified.clone(),
            content_hash: job.content_hash.clone(),
            ..DownloadRecord::default()
        };
        state.store.complete(worker, job.id, &record, at + schedule.delay).await?;
        read_recorded(state, &sitemap).await;
        Ok::<_, mapwright_store::Error>(())
    };
    match result.await {
        Ok(()) => state.scheduler.metrics.fetched("failed", 0, 0),
        Err(e) => tracing::warn!(worker, sitemap = job.id, error = %e, "cannot record the failed job"),
    }
}

/// What follows the recording of a read, wherever it was recorded (`fetch::run_job`, or
/// [`fail_job`] for a job that broke off): the read's events, its e-mail alerts and webhooks.
/// `before` is the sitemap's row as it was before the read. Never fails the job.
pub(crate) async fn read_recorded(state: &AppState, before: &mapwright_store::Sitemap) {
    crate::alerts::after_read(state, before.id).await;
    crate::webhooks::read_recorded(state, before).await;
}

async fn release(state: &AppState, worker: &str, sitemap_id: i64) {
    if let Err(e) = state.store.release(worker, sitemap_id).await {
        tracing::debug!(worker, sitemap_id, error = %e, "release");
    }
}
