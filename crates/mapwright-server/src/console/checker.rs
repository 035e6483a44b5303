//! The failing-URLs report: a background task that checks the live URLs of every verified
//! site with the validator's live checks (`mapwright_fetch::check`: `url-status`,
//! `url-noindex`, `robots-disallowed`) and stores the outcome per URL for the site page.
//!
//! Polite by construction: each run of a site checks at most [`CheckerConfig::budget`] URLs
//! (all of a small site; on a big one, the never-checked and longest-ago-checked first, so
//! successive runs rotate through the whole site), two requests in flight per host with a pause
//! between them, robots.txt's Crawl-delay honoured, and each site at most once per
//! [`CheckerConfig::period`].

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use mapwright_fetch::check::{CheckConfig, UrlToCheck, check_urls};
use mapwright_store::UrlCheckRecord;
use tokio::task::JoinHandle;

use crate::{AppError, AppState, now};

/// How often and how much the checker checks.
#[derive(Debug, Clone)]
pub struct CheckerConfig {
    /// How long the task sleeps between two looks for due sites.
    pub interval: Duration,
    /// How long a site's URLs stay checked before the next run.
    pub period: Duration,
    /// URLs checked per site per run.
    pub budget: i64,
    /// Sites checked per look.
    pub sites_per_round: i64,
    /// Concurrency and pauses of the live checks.
    pub check: CheckConfig,
}

impl Default for CheckerConfig {
    fn default() -> Self {
        CheckerConfig {
            interval: Duration::from_secs(60),
            period: Duration::from_secs(24 * 3600),
            budget: 200,
            sites_per_round: 10,
            check: CheckConfig { per_host: 2, delay: Duration::from_millis(200), ..CheckConfig::default() },
        }
    }
}

/// What one run of a site found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckSummary {
    /// URLs checked.
    pub checked: usize,
    /// Of those, how many failed a check.
    pub failing: usize,
}

/// Checks up to the budget of the site's live URLs now and records the outcome.
pub async fn check_site(state: &AppState, site_id: i64, config: &CheckerConfig) -> Result<CheckSummary, AppError> {
    let urls = state.store.urls_to_check(site_id, config.budget).await?;
    let to_check = urls.iter().map(|(_, loc)| UrlToCheck { loc: loc.clone(), position: None }).collect();
    let findings = check_urls(&state.fetcher, to_check, &config.check).await;
    let mut by_loc: HashMap<&str, &mapwright_core::Finding> = HashMap::new();
    for f in &findings {
        if let Some(loc) = f.loc.as_deref() {
            by_loc.entry(loc).or_insert(f);
        }
    }
    let records: Vec<UrlCheckRecord> = urls
        .iter()
        .map(|(id, loc)| match by_loc.get(loc.as_str()) {
            Some(f) => UrlCheckRecord {
                url_id: *id,
                status: status_of(&f.message),
                rule: Some(f.rule.as_str().to_owned()),
                message: Some(f.message.clone()),
            },
            None => UrlCheckRecord { url_id: *id, status: None, rule: None, message: None },
        })
        .collect();
    state.store.record_url_checks(site_id, &records, now()).await?;
    let failing = records.iter().filter(|r| r.rule.is_some()).count();
    Ok(CheckSummary { checked: records.len(), failing })
}

/// The HTTP status a `url-status` message names ("... answers 404", "... (status 301 there)").
fn status_of(message: &str) -> Option<i64> {
    ["answers ", "status "].iter().find_map(|key| {
        let at = message.rfind(key)? + key.len();
        let digits: String = message[at..].chars().take_while(char::is_ascii_digit).collect();
        (digits.len() == 3).then(|| digits.parse().ok()).flatten()
    })
}

/// Starts the checker; it stops when `shutdown` completes (a run in progress finishes first).
pub fn spawn(
    state: AppState,
    config: CheckerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        tokio::pin!(shutdown);
        loop {
            let period = i64::try_from(config.period.as_secs()).unwrap_or(i64::MAX);
            match state.store.sites_due_for_url_check(now().saturating_sub(period), config.sites_per_round).await {
                Ok(sites) => {
                    for site in sites {
                        if let Err(e) = check_site(&state, site.id, &config).await {
                            tracing::warn!(site = site.id, error = %e, "URL check failed");
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot list the sites due for a URL check"),
            }
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(config.interval) => {}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::status_of;

    #[test]
    fn statuses_from_messages() {
        assert_eq!(status_of("https://a.example/x answers 404"), Some(404));
        assert_eq!(status_of("https://a.example/x redirects to https://a.example/y (status 200 there)"), Some(200));
        assert_eq!(status_of("https://a.example/x cannot be fetched: timeout"), None);
        assert_eq!(status_of("https://a.example/x is disallowed by its robots.txt"), None);
    }
}
