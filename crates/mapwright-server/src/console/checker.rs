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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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

/// URLs per round of a run: the progress a running check shows moves in these steps.
const STEP: usize = 50;

/// Checks up to the budget of the site's live URLs now and records the outcome. Call it
/// through [`Jobs::start`] (or the periodic task) so that a site is never checked twice at once.
pub async fn check_site(state: &AppState, site_id: i64, config: &CheckerConfig) -> Result<CheckSummary, AppError> {
    check_site_with(state, site_id, config, &Progress::default()).await
}

/// How far a run is: URLs to check, and checked so far.
#[derive(Debug, Default)]
pub struct Progress {
    total: AtomicUsize,
    done: AtomicUsize,
}

async fn check_site_with(
    state: &AppState,
    site_id: i64,
    config: &CheckerConfig,
    progress: &Progress,
) -> Result<CheckSummary, AppError> {
    let urls = state.store.urls_to_check(site_id, config.budget).await?;
    progress.total.store(urls.len(), Ordering::Relaxed);
    let mut findings = Vec::new();
    for step in urls.chunks(STEP) {
        let to_check = step.iter().map(|(_, loc)| UrlToCheck { loc: loc.clone(), position: None }).collect();
        findings.extend(check_urls(&state.fetcher, to_check, &config.check).await);
        progress.done.fetch_add(step.len(), Ordering::Relaxed);
    }
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
    let at = now();
    state.store.record_url_checks(site_id, &records, at).await?;
    state.store.record_site_snapshot(site_id, at).await?;
    let failing = records.iter().filter(|r| r.rule.is_some()).count();
    Ok(CheckSummary { checked: records.len(), failing })
}

/// The checks of this process, one per site at a time: "Check now" and the periodic task both
/// start theirs here, so however often the button is pressed a site gets one run's requests.
/// A user runs at most [`Jobs::per_user`] at once, and a site checked by hand waits
/// [`Jobs::cooldown`] before the next. Finished runs stay (one entry per site) for the last
/// result the site page shows.
#[derive(Debug)]
pub struct Jobs {
    /// The configuration of the runs "Check now" starts.
    pub config: CheckerConfig,
    /// Runs a user may have going at once.
    pub per_user: usize,
    /// Pause after a run before the owner may start another.
    pub cooldown: Duration,
    runs: Mutex<HashMap<i64, Run>>,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs::new(CheckerConfig::default())
    }
}

#[derive(Debug)]
struct Run {
    user_id: Option<i64>,
    started_at: i64,
    progress: Arc<Progress>,
    finished: Option<(i64, Result<CheckSummary, String>)>,
}

/// What the site page shows of a site's check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    /// When it started.
    pub started_at: i64,
    /// URLs to check.
    pub total: usize,
    /// Checked so far.
    pub done: usize,
    /// When it ended and how: the counts, or why it failed.
    pub finished: Option<(i64, Result<CheckSummary, String>)>,
}

/// Why "Check now" did not start a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The site's check is running.
    #[error("a check of this site is running already")]
    Running,
    /// The user's limit of runs at once.
    #[error("you have {0} checks running already: wait for one to finish")]
    UserLimit(usize),
    /// Checked by hand too recently.
    #[error("this site was checked moments ago: you can check it again in {0} seconds")]
    TooSoon(i64),
}

impl Jobs {
    /// Runs with this configuration, two per user, five minutes apart per site.
    pub fn new(config: CheckerConfig) -> Jobs {
        Jobs { config, per_user: 2, cooldown: Duration::from_secs(300), runs: Mutex::default() }
    }

    /// The site's current or last run.
    pub fn view(&self, site_id: i64) -> Option<RunView> {
        let runs = self.runs.lock().expect("jobs");
        runs.get(&site_id).map(|r| RunView {
            started_at: r.started_at,
            total: r.progress.total.load(Ordering::Relaxed),
            done: r.progress.done.load(Ordering::Relaxed),
            finished: r.finished.clone(),
        })
    }

    /// Claims the site for a run: refused while one runs, over the user's limit, or (for a
    /// user's run) within the cooldown of the last one.
    fn claim(&self, site_id: i64, user_id: Option<i64>, now: i64) -> Result<Arc<Progress>, Refusal> {
        let mut runs = self.runs.lock().expect("jobs");
        if let Some(run) = runs.get(&site_id) {
            match &run.finished {
                None => return Err(Refusal::Running),
                Some((at, _)) if user_id.is_some() => {
                    let wait = *at + self.cooldown.as_secs() as i64 - now;
                    if wait > 0 {
                        return Err(Refusal::TooSoon(wait));
                    }
                }
                Some(_) => {}
            }
        }
        if let Some(user) = user_id {
            let running = runs.values().filter(|r| r.user_id == Some(user) && r.finished.is_none()).count();
            if running >= self.per_user {
                return Err(Refusal::UserLimit(running));
            }
        }
        let progress = Arc::new(Progress::default());
        runs.insert(site_id, Run { user_id, started_at: now, progress: progress.clone(), finished: None });
        Ok(progress)
    }

    fn finish(&self, site_id: i64, outcome: Result<CheckSummary, String>) {
        if let Some(run) = self.runs.lock().expect("jobs").get_mut(&site_id) {
            run.finished = Some((now(), outcome));
        }
    }

    /// Starts a user's check of a site in the background and returns at once.
    pub fn start(state: &AppState, site_id: i64, user_id: i64) -> Result<(), Refusal> {
        let progress = state.checks.claim(site_id, Some(user_id), now())?;
        let state = state.clone();
        tokio::spawn(async move {
            let config = state.checks.config.clone();
            let outcome = check_site_with(&state, site_id, &config, &progress).await.map_err(|e| e.to_string());
            state.checks.finish(site_id, outcome);
        });
        Ok(())
    }

    /// Runs the periodic check of a site here, unless a run of it is going.
    async fn run_periodic(
        state: &AppState,
        site_id: i64,
        config: &CheckerConfig,
    ) -> Option<Result<CheckSummary, AppError>> {
        let progress = state.checks.claim(site_id, None, now()).ok()?;
        let outcome = check_site_with(state, site_id, config, &progress).await;
        state.checks.finish(site_id, outcome.as_ref().map(|s| *s).map_err(|e| e.to_string()));
        Some(outcome)
    }
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
                        if let Some(Err(e)) = Jobs::run_periodic(&state, site.id, &config).await {
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
        let first_hop = "https://a.example/x redirects to https://a.example/y (answers 301; status 200 there)";
        assert_eq!(status_of(first_hop), Some(301), "the redirect's own status");
        assert_eq!(status_of("https://a.example/x cannot be fetched: timeout"), None);
        assert_eq!(status_of("https://a.example/x is disallowed by its robots.txt"), None);
    }
}
