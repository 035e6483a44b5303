//! The sitemap reads: a dispatcher that leases due sitemaps from the store fairly and runs up
//! to `workers` jobs at once ([`run_job`]).
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

use std::time::Duration;

use mapwright_store::{DownloadRecord, FetchSummary, LeasePolicy, LeasedSitemap};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::{Config, read_recorded, stopping};
use crate::{AppState, now};

pub use fetch::{JobError, JobOutcome, MAX_STORED_FINDINGS, run_job};

/// Wakes this process's dispatcher whenever another process (or this one) made work due and
/// said so through the store ([`Store::notify_due`](mapwright_store::Store::notify_due)); ends
/// at once on a backend with no listener (SQLite, one process). A lost connection is made
/// again; what was said meanwhile is covered by a wake-up at the reconnection and by the poll.
pub(super) async fn hear_wakes(state: AppState, poll_interval: Duration, shutdown: watch::Receiver<bool>) {
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
pub(super) async fn dispatch(state: AppState, config: Config, worker: String, shutdown: watch::Receiver<bool>) {
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

async fn release(state: &AppState, worker: &str, sitemap_id: i64) {
    if let Err(e) = state.store.release(worker, sitemap_id).await {
        tracing::debug!(worker, sitemap_id, error = %e, "release");
    }
}
