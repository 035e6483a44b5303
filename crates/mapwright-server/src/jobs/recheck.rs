//! The periodic re-check of site verification (lost the first time the proof is gone), and
//! the sitemaps a verified site's robots.txt names, added by themselves; the domain
//! properties' re-check is [`domains`].

pub mod domains;

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::watch;

use mapwright_store::{Site, Source};

use super::{Config, stopping};
use crate::sitemap_url::parse_sitemap_url;
use crate::{AppError, AppState, now, verify};

/// Sites re-checked per pass.
const PASS: i64 = 100;

/// Adds the sitemaps named in a verified site's robots.txt (on its own host or, being named
/// there, cross-submitted from another) and wakes the workers. Those already present are left
/// as they are, a sitemap the owner removed stays removed, and one that disappears from
/// robots.txt stays. Returns how many URLs robots.txt named. The read is recorded on the site
/// (`Store::record_robots_read`), with why when the file could not be read. Call it after a successful
/// [`verify::verify_site`] (the API's and console's "verify now" do; the re-check does).
pub async fn after_verified(state: &AppState, site: &Site) -> Result<usize, AppError> {
    let robots = match mapwright_fetch::robots::fetch(&state.fetcher, &site.origin).await {
        Ok(robots) => robots,
        Err(e) => {
            // Recorded, so the site's page says the file could not be read, and why, rather
            // than that it names no sitemap.
            let why = format!("{}/robots.txt could not be read: {e}", site.origin);
            state.store.record_robots_read(site.id, Some(&why), now()).await?;
            return Err(AppError::Rejected(why));
        }
    };
    state.store.record_robots_read(site.id, None, now()).await?;
    let mut named = 0;
    for url in &robots.sitemaps {
        let Ok(url) = parse_sitemap_url(url) else { continue };
        state.store.add_sitemap_for_site(site.id, url.as_str(), Source::Robots, None, now()).await?;
        named += 1;
    }
    if named > 0 {
        state.wake_workers();
    }
    Ok(named)
}

/// Checks a site's proof and records it; when verified, adds its robots.txt sitemaps too (a
/// robots.txt that cannot be read is logged, not an error: the site is verified all the same).
/// The API's and console's "Verify now" and the periodic re-check all go through here. The
/// check and the robots.txt step each get [`Config::verify_timeout`]'s default: a check that
/// does not end in time, like one the outbound gate held, records no verdict (`held`).
pub async fn verify_now(state: &AppState, site: &Site) -> Result<verify::Verification, AppError> {
    verify_within(state, site, Config::default().verify_timeout).await
}

/// [`verify_now`] with a time limit of `timeout` for the check and another for robots.txt.
async fn verify_within(state: &AppState, site: &Site, timeout: Duration) -> Result<verify::Verification, AppError> {
    let verification = match tokio::time::timeout(timeout, verify::verify_site(state, site)).await {
        Ok(verification) => verification?,
        // No answer in time (the site, or the outbound gate's queue, is slow): no verdict is
        // recorded, the site keeps its state until a check is made.
        Err(_) => verify::Verification {
            verified: site.verified_at.is_some(),
            method: None,
            detail: format!(
                "not checked now: {} did not answer within {} seconds; try again later",
                site.origin,
                timeout.as_secs()
            ),
            held: Some(timeout.as_secs().max(1)),
        },
    };
    if verification.verified && verification.held.is_none() {
        match tokio::time::timeout(timeout, after_verified(state, site)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::info!(site = %site.origin, error = %e, "robots.txt sitemaps"),
            Err(_) => {
                tracing::info!(site = %site.origin, "robots.txt sitemaps: no answer in time");
                let why = format!("{}/robots.txt did not answer within {} seconds", site.origin, timeout.as_secs());
                state.store.record_robots_read(site.id, Some(&why), now()).await?;
            }
        }
    } else if site.verified_at.is_some() && verification.held.is_none() {
        tracing::info!(site = %site.origin, detail = %verification.detail, "verification lost");
    }
    Ok(verification)
}

/// One pass: re-verifies up to a hundred sites not checked for `interval_seconds`, and adds
/// the robots.txt sitemaps of those verified, with the default timeout and concurrency of
/// [`Config`]. Returns how many sites were checked.
pub async fn recheck_once(state: &AppState, interval_seconds: i64) -> Result<usize, AppError> {
    let config = Config::default();
    recheck_pass(state, interval_seconds, config.verify_timeout, config.verify_concurrency).await
}

/// A pass with `concurrency` checks at once, each within `timeout`: sites that accept a
/// connection and never answer cost one timeout per slot, not one each in a row, so a removed
/// proof elsewhere is noticed within the pass.
async fn recheck_pass(
    state: &AppState,
    interval_seconds: i64,
    timeout: Duration,
    concurrency: usize,
) -> Result<usize, AppError> {
    // Claimed: a pass of another process sharing the database takes other sites.
    let now = now();
    let sites = state.store.sites_to_verify(now - interval_seconds, now, PASS).await?;
    let checked = sites.len();
    futures_util::stream::iter(sites)
        .for_each_concurrent(concurrency.max(1), |site| async move {
            if let Err(e) = verify_within(state, &site, timeout).await {
                tracing::warn!(site = %site.origin, error = %e, "verification re-check");
            }
        })
        .await;
    Ok(checked)
}

/// The re-check task: a pass, then a pause (shorter while there is a backlog).
pub(super) async fn run(state: AppState, config: Config, shutdown: watch::Receiver<bool>) {
    let interval = config.verify_interval.as_secs().max(1) as i64;
    let idle = config.verify_interval.min(Duration::from_secs(60));
    while !*shutdown.borrow() {
        let pass = recheck_pass(&state, interval, config.verify_timeout, config.verify_concurrency);
        let pause = match pass.await {
            Ok(n) if n as i64 == PASS => config.poll_interval,
            Ok(_) => idle,
            Err(e) => {
                tracing::warn!(error = %e, "verification re-check");
                idle
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stopping(shutdown.clone()) => {}
        }
    }
}
