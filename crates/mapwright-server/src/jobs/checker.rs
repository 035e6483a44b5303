//! The failing-URLs report: check runs that visit every live URL of a verified site with the
//! validator's live checks (`mapwright_fetch::check`: `url-status`, `url-noindex`,
//! `robots-disallowed`) and store the outcome per URL for the site page.
//!
//! A run is a row of the store (`check_runs`), claimed with a lease like a sitemap job, so
//! that one run per site, and per origin, holds across every process sharing the database. It
//! reads the site's URLs a page at a time by id and records each batch of outcomes with its
//! progress (the id reached) in one transaction, renewing the lease: memory stays flat
//! whatever the site's size, and a run cut short (a restart, a crash) is taken over where it
//! was, by any process, once its lease has ended (at once after a clean shutdown).
//!
//! Polite by construction: one [`Checker`] per run, so robots.txt is fetched once per run and
//! the origin gets at most one request per [`CheckConfig::delay`] (`--check-rate`, 5 a second
//! by default; robots.txt's Crawl-delay if longer), one request per URL. Periodic runs start
//! every [`CheckerConfig::interval`] (`--check-interval`, 7 days) after the last complete
//! one; "Check now" starts one at once, at most [`Jobs::per_user`] per user at once and
//! [`Jobs::cooldown`] after the site's last run. The URLs a read adds are checked soon: a
//! site whose last run is done gets a run of its new URLs only (`CheckTrigger::NewUrls`)
//! [`NEW_URL_CHECK_GAP`] after it ended, under the same limits and pace.

use std::time::Duration;

use futures_util::StreamExt;
use mapwright_fetch::check::{CheckConfig, Checked, Checker, UrlToCheck};
use mapwright_store::{CheckRefusal, CheckRun, CheckTrigger, NEW_URL_CHECK_GAP, UrlCheckRecord};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::outbound::host_of;
use crate::ratelimit::SharedLimit;
use crate::{AppError, AppState, now};

/// How often and how politely the checker checks.
#[derive(Debug, Clone)]
pub struct CheckerConfig {
    /// How long the periodic task waits between two looks for due sites (default 60 s).
    pub poll: Duration,
    /// How long after the last complete run of a site the next starts (default 7 days).
    pub interval: Duration,
    /// How long after a failed run it is tried again (default 1 hour, at most `interval`).
    pub retry: Duration,
    /// Periodic runs going at once in this process (default 16); each keeps its origin's
    /// pace, so they cost little but waiting.
    pub runs_at_once: usize,
    /// Periodic runs of one owner's sites going at once, in all processes (default 2): a
    /// user's big sites (a million URLs take days at 5 a second) leave slots for the others.
    pub per_owner: i64,
    /// How long a claimed run stays this process's without a write (default 60 s); the run
    /// writes (and renews it) at least every [`CheckerConfig::flush`].
    pub lease: Duration,
    /// The longest time between two writes of a run's outcomes and progress (default 5 s).
    pub flush: Duration,
    /// Outcomes written together at most (default 100).
    pub batch: usize,
    /// URLs read from the store at once (default 500).
    pub page: i64,
    /// Concurrency and pace of the live checks: `delay` is one over `--check-rate`.
    pub check: CheckConfig,
}

/// The default `--check-rate`: requests per second to one origin.
pub const DEFAULT_CHECK_RATE: f64 = 5.0;

/// The default `--check-interval`.
pub const DEFAULT_CHECK_INTERVAL: Duration = Duration::from_secs(7 * 24 * 3600);

impl Default for CheckerConfig {
    fn default() -> Self {
        CheckerConfig {
            poll: Duration::from_secs(60),
            interval: DEFAULT_CHECK_INTERVAL,
            retry: Duration::from_secs(3600),
            runs_at_once: 16,
            per_owner: 2,
            lease: Duration::from_secs(60),
            flush: Duration::from_secs(5),
            batch: 100,
            page: 500,
            check: CheckConfig {
                per_host: 4,
                delay: CheckConfig::rate_delay(DEFAULT_CHECK_RATE),
                ..CheckConfig::default()
            },
        }
    }
}

impl CheckerConfig {
    /// This configuration with at most `per_second` requests a second to one origin.
    pub fn with_rate(mut self, per_second: f64) -> Self {
        self.check.delay = CheckConfig::rate_delay(per_second);
        self
    }
}

/// How a run in this process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// Every live URL was checked.
    Done {
        /// URLs checked in the whole run (also by processes before this one).
        checked: i64,
        /// Of those, how many failed.
        failing: i64,
    },
    /// Shutdown: the run was given back where it was, for any process to resume.
    Released,
    /// Another process took the run over (this one's lease had expired).
    Lost,
}

/// The checks of this process: the runs it started, its name in the store's leases, and the
/// limits of "Check now". What must hold across processes (one run per site and per origin,
/// the user's runs at once, the cooldown) is decided by the store.
#[derive(Debug)]
pub struct Jobs {
    /// The configuration of the runs this process starts.
    pub config: CheckerConfig,
    /// Runs a user may have going at once (default 2), in all processes.
    pub per_user: i64,
    /// Pause after a site's run ends before its owner may start another (default 5 minutes).
    pub cooldown: Duration,
    owner: String,
    stop: watch::Sender<bool>,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs::new(CheckerConfig::default())
    }
}

impl Jobs {
    /// Runs with this configuration, two per user, five minutes apart per site.
    pub fn new(config: CheckerConfig) -> Jobs {
        Jobs {
            config,
            per_user: 2,
            cooldown: Duration::from_secs(300),
            owner: format!("checks-{}", super::process_tag()),
            stop: watch::channel(false).0,
        }
    }

    /// This process's name in the store's check-run leases.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Starts a user's full check of a site in the background and returns at once, or says
    /// why not (a run is going, the user's limit, too soon after the last run).
    pub async fn start(state: &AppState, site_id: i64, user_id: i64) -> Result<Result<(), CheckRefusal>, AppError> {
        let jobs = &state.checks;
        let trigger = CheckTrigger::User {
            user_id,
            per_user: jobs.per_user,
            cooldown: i64::try_from(jobs.cooldown.as_secs()).unwrap_or(i64::MAX),
        };
        let run = match claim(state, site_id, &trigger).await? {
            Ok(run) => run,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let state = state.clone();
        tokio::spawn(async move {
            if let Err(e) = run_claimed(&state, run).await {
                tracing::warn!(site = site_id, error = %e, "URL check failed");
            }
        });
        Ok(Ok(()))
    }
}

async fn claim(
    state: &AppState,
    site_id: i64,
    trigger: &CheckTrigger,
) -> Result<Result<CheckRun, CheckRefusal>, AppError> {
    let now = now();
    let lease_until = now + lease_seconds(&state.checks.config);
    Ok(state.store.claim_check_run(site_id, &state.checks.owner, trigger, now, lease_until).await?)
}

fn lease_seconds(config: &CheckerConfig) -> i64 {
    i64::try_from(config.lease.as_secs()).unwrap_or(i64::MAX).max(1)
}

/// Checks every live URL of the site now, in this task, and records the outcome: claims a
/// run whatever the last one (refused only while a run of the site or of its origin is going)
/// and runs it to the end. For tests and tools; the service runs checks through [`run`] and
/// [`Jobs::start`].
pub async fn check_site(state: &AppState, site_id: i64) -> Result<Result<RunEnd, CheckRefusal>, AppError> {
    let always = CheckTrigger::Periodic { complete_before: i64::MAX, failed_before: i64::MAX, per_owner: i64::MAX };
    match claim(state, site_id, &always).await? {
        Ok(run) => Ok(Ok(run_claimed(state, run).await?)),
        Err(refusal) => Ok(Err(refusal)),
    }
}

/// Checks the URLs the site's reads added since its last run, now, in this task (the last run
/// must be done; refused as [`CheckRefusal::NotDue`] when there are none). What the periodic
/// task does [`NEW_URL_CHECK_GAP`] after a run; for tests and tools.
pub async fn check_new_urls(state: &AppState, site_id: i64) -> Result<Result<RunEnd, CheckRefusal>, AppError> {
    let soon = CheckTrigger::NewUrls { finished_before: i64::MAX, per_owner: i64::MAX };
    match claim(state, site_id, &soon).await? {
        Ok(run) => Ok(Ok(run_claimed(state, run).await?)),
        Err(refusal) => Ok(Err(refusal)),
    }
}

fn seconds(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// Runs a claimed run to its end (or until shutdown), and marks it failed if the store fails.
async fn run_claimed(state: &AppState, run: CheckRun) -> Result<RunEnd, AppError> {
    let site_id = run.site_id;
    match run_pages(state, &run).await {
        Ok(end) => Ok(end),
        Err(e) => {
            let message = e.to_string();
            if let Err(again) = state.store.finish_check_run(site_id, &state.checks.owner, Some(&message), now()).await
            {
                tracing::warn!(site = site_id, error = %again, "cannot record that a URL check failed");
            }
            Err(e)
        }
    }
}

/// The shared limit of URL checks per host for a pace of one request per `delay`: whole
/// requests per second, or one per whole number of seconds below one a second.
fn per_host_limit(delay: Duration) -> SharedLimit {
    let per_second = if delay.is_zero() { 1000.0 } else { 1.0 / delay.as_secs_f64() };
    if per_second >= 1.0 {
        SharedLimit::new("url checks per host", per_second.round() as u32, Duration::from_secs(1))
    } else {
        SharedLimit::new("url checks per host", 1, Duration::from_secs((1.0 / per_second).ceil() as u64))
    }
}

/// Takes one turn at `host` for a check: from the turns this run reserved at the gate, else
/// reserves a fifth of a window's worth (one write to the store per batch, not per check; at
/// the default 5 a second, one at a time), waiting while the host's budget is spent.
async fn host_turn(state: &AppState, limit: &SharedLimit, turns: &Turns, host: &str) {
    let batch = (limit.limit() / 5).max(1);
    // One task of the run reserves at a time; the others take its turns when it has them.
    let _reserving = turns.reserving.lock().await;
    loop {
        {
            let mut left = turns.left.lock().unwrap_or_else(|p| p.into_inner());
            let left = left.entry(host.to_owned()).or_insert(0);
            if *left > 0 {
                *left -= 1;
                return;
            }
        }
        match state.gate.reserve(limit, host, host, batch).await {
            Ok(()) => {
                let mut left = turns.left.lock().unwrap_or_else(|p| p.into_inner());
                *left.entry(host.to_owned()).or_insert(0) += batch;
            }
            Err(held) => tokio::time::sleep(Duration::from_secs(held.retry_after.max(1))).await,
        }
    }
}

/// The turns a run reserved at its hosts and has not used yet.
#[derive(Default)]
struct Turns {
    left: std::sync::Mutex<std::collections::HashMap<String, u32>>,
    reserving: tokio::sync::Mutex<()>,
}

/// The run's pages from where it was: outcomes written every [`CheckerConfig::batch`] URLs or
/// [`CheckerConfig::flush`], whichever comes first (so the lease is renewed even while one
/// URL takes long), each with the id reached.
async fn run_pages(state: &AppState, run: &CheckRun) -> Result<RunEnd, AppError> {
    let config = &state.checks.config;
    let owner = state.checks.owner.as_str();
    let site_id = run.site_id;
    let lease = lease_seconds(config);
    let checker = Checker::new(&state.fetcher, config.check.clone());
    let mut stop = state.checks.stop.subscribe();
    let mut pending: Vec<UrlCheckRecord> = Vec::with_capacity(config.batch);
    let mut reached = run.after_url_id;
    let mut tick = tokio::time::interval(config.flush.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let flush = |pending: &mut Vec<UrlCheckRecord>, reached: i64| {
        let checks = std::mem::take(pending);
        async move {
            let now = now();
            state.store.record_check_page(site_id, owner, &checks, reached, now, now + lease).await
        }
    };
    let in_flight = config.check.per_host.max(1) * 2;
    // The check rate per host, for every run, origin and process together (the checker's own
    // pace is per origin and per run: several origins of one host, or two runs, went past it).
    let per_host = per_host_limit(config.check.delay);
    let tokens = Turns::default();
    loop {
        let page = state.store.urls_to_check(site_id, reached, config.page).await?;
        if page.is_empty() {
            break;
        }
        let mut outcomes = futures_util::stream::iter(page)
            .map(|(id, loc)| {
                let checker = &checker;
                let (per_host, tokens) = (&per_host, &tokens);
                async move {
                    // The checker's budget of the host at the gate is `--check-rate` (an
                    // operator's rate for checks, which the general budget of a host must not
                    // silently cap): a check waits its turn, it is never skipped.
                    if let Some((host, _)) = host_of(&loc) {
                        host_turn(state, per_host, tokens, &host).await;
                    }
                    let checked = checker.check_versioned(&UrlToCheck { loc, position: None }).await;
                    (id, checked)
                }
            })
            .buffered(in_flight);
        loop {
            tokio::select! {
                next = outcomes.next() => {
                    let Some((id, checked)) = next else { break };
                    pending.push(record(id, checked));
                    reached = id;
                    if pending.len() >= config.batch && !flush(&mut pending, reached).await? {
                        return Ok(RunEnd::Lost);
                    }
                }
                _ = tick.tick() => {
                    if !flush(&mut pending, reached).await? {
                        return Ok(RunEnd::Lost);
                    }
                }
                () = stopped(&mut stop) => {
                    // What is done is kept; the rest waits for the next process.
                    drop(outcomes);
                    if !flush(&mut pending, reached).await? {
                        return Ok(RunEnd::Lost);
                    }
                    state.store.release_check_runs(owner, now()).await?;
                    return Ok(RunEnd::Released);
                }
            }
        }
    }
    if !flush(&mut pending, reached).await? {
        return Ok(RunEnd::Lost);
    }
    let at = now();
    let Some(done) = state.store.finish_check_run(site_id, owner, None, at).await? else {
        return Ok(RunEnd::Lost);
    };
    state.store.record_site_snapshot(site_id, at).await?;
    Ok(RunEnd::Done { checked: done.checked, failing: done.failing })
}

/// Resolves once this process stops its checks (the guard `wait_for` returns is not held).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopping| *stopping).await;
}

/// The stored outcome of one URL: its first finding, or none, and the page's version.
fn record(url_id: i64, checked: Checked) -> UrlCheckRecord {
    let version = checked.version;
    match checked.findings.first() {
        Some(f) => UrlCheckRecord {
            url_id,
            status: status_of(&f.message),
            rule: Some(f.rule.as_str().to_owned()),
            message: Some(f.message.clone()),
            version,
        },
        None => UrlCheckRecord { url_id, status: None, rule: None, message: None, version },
    }
}

/// The HTTP status a `url-status` message names ("... answers 404", "... (answers 301)").
fn status_of(message: &str) -> Option<i64> {
    let key = "answers ";
    let at = message.rfind(key)? + key.len();
    let digits: String = message[at..].chars().take_while(char::is_ascii_digit).collect();
    (digits.len() == 3).then(|| digits.parse().ok()).flatten()
}

/// The periodic checker, started by the supervisor ([`super::spawn`], with
/// [`super::Config::checks`]): it claims due sites (a run cut short first, then sites never
/// checked, then the longest ago) and keeps up to [`CheckerConfig::runs_at_once`] runs going.
/// When `shutdown` turns true (or its sender is dropped), every run of this process (those of
/// "Check now" too) writes what it did and gives its run back, and the task ends.
pub async fn run(state: AppState, shutdown: watch::Receiver<bool>) {
    let shutdown = super::stopping(shutdown);
    tokio::pin!(shutdown);
    let config = state.checks.config.clone();
    let mut running: JoinSet<()> = JoinSet::new();
    loop {
        let free = config.runs_at_once.saturating_sub(running.len());
        if free > 0 {
            start_due(&state, &config, free, &mut running).await;
        }
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(config.poll) => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
        }
    }
    let _ = state.checks.stop.send(true);
    while running.join_next().await.is_some() {}
    if let Err(e) = state.store.release_check_runs(&state.checks.owner, now()).await {
        tracing::warn!(error = %e, "cannot give the URL check runs back at shutdown");
    }
}

/// Claims up to `free` due sites and starts their runs.
async fn start_due(state: &AppState, config: &CheckerConfig, free: usize, running: &mut JoinSet<()>) {
    let now = now();
    let complete_before = now.saturating_sub(seconds(config.interval));
    let failed_before = now.saturating_sub(seconds(config.retry.min(config.interval)));
    // More than free: some are refused (another process took them, their origin is busy).
    let want = i64::try_from(free * 4).unwrap_or(i64::MAX);
    let due = match state.store.sites_due_for_check_run(now, complete_before, failed_before, want).await {
        Ok(due) => due,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list the sites due for a URL check");
            return;
        }
    };
    let trigger = CheckTrigger::Periodic { complete_before, failed_before, per_owner: config.per_owner };
    // A site not due for its periodic run may be for its new URLs.
    let new_urls = CheckTrigger::NewUrls { finished_before: now - NEW_URL_CHECK_GAP, per_owner: config.per_owner };
    let mut started = 0;
    for site_id in due {
        if started == free {
            break;
        }
        let claimed = match claim(state, site_id, &trigger).await {
            Ok(Err(CheckRefusal::NotDue)) => claim(state, site_id, &new_urls).await,
            other => other,
        };
        match claimed {
            Ok(Ok(run)) => {
                started += 1;
                let state = state.clone();
                running.spawn(async move {
                    if let Err(e) = run_claimed(&state, run).await {
                        tracing::warn!(site = site_id, error = %e, "URL check failed");
                    }
                });
            }
            Ok(Err(_)) => {}
            Err(e) => tracing::warn!(site = site_id, error = %e, "cannot claim a URL check"),
        }
    }
}

/// When the site's next periodic run is due: after the last complete run plus the interval
/// (a failed run: after the retry pause), `None` while one runs, "now" when never checked.
pub fn next_run_at(run: Option<&CheckRun>, config: &CheckerConfig, now: i64) -> Option<i64> {
    let Some(run) = run else { return Some(now) };
    if run.is_running() {
        return None;
    }
    let after_complete = run.last_complete_at.map_or(now, |at| at.saturating_add(seconds(config.interval)));
    Some(match (run.state.as_str(), run.finished_at) {
        ("failed", Some(at)) => after_complete.max(at.saturating_add(seconds(config.retry.min(config.interval)))),
        _ => after_complete,
    })
}

#[cfg(test)]
mod tests {
    use super::status_of;

    #[test]
    fn statuses_from_messages() {
        assert_eq!(status_of("https://a.example/x answers 404"), Some(404));
        assert_eq!(status_of("https://a.example/x redirects to https://a.example/y (answers 301)"), Some(301));
        assert_eq!(status_of("https://a.example/x cannot be fetched: timeout"), None);
        assert_eq!(status_of("https://a.example/x is disallowed by its robots.txt"), None);
    }
}
