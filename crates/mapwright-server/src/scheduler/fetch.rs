//! One job of a worker: fetch a leased sitemap (conditionally), read and validate it as it
//! streams, store its URLs in batches, its children if it is an index, and the download.

use std::time::Instant;

use mapwright_core::validate::Config as ValidatorConfig;
use mapwright_core::{Entry, Finding, Format, Loc, Rule, Scope, Severity, Validator};
use mapwright_fetch::{Fetched, Response, Validators};
use mapwright_store::{
    DownloadRecord, FetchSummary, FindingRecord, IndexChild, LeasedSitemap, Site, Sitemap, UrlRecord,
};
use tokio::sync::mpsc;

use super::policy::{self, Change};
use crate::{AppState, now};

/// URLs per upsert: large enough that a round trip carries real work, small enough that
/// memory stays flat however long the sitemap is.
const URL_BATCH: usize = 2_000;

/// Findings stored per download; the counts in the download cover only these, the rest of a
/// file where every line is wrong says nothing new.
pub const MAX_STORED_FINDINGS: usize = 1_000;

/// Children of an index taken: the protocol's limit.
const MAX_CHILDREN: usize = mapwright_core::MAX_URLS;

/// Rules of the reader's fatal errors: after one, the URLs read so far are not the whole
/// sitemap, so those it no longer lists must not be swept.
const FATAL: &[Rule] = &[Rule::TooLarge, Rule::XmlMalformed, Rule::Encoding, Rule::GzipCorrupt, Rule::UnknownRoot];

/// What one job did, for the worker's log and the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutcome {
    /// The download's status.
    pub status: String,
    /// Entries read.
    pub url_count: i64,
    /// Wall time in milliseconds.
    pub duration_ms: i64,
}

/// Why a job did not reach its `complete`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The store failed, or the lease was lost (another worker took the job after expiry).
    #[error(transparent)]
    Store(#[from] mapwright_store::Error),
    /// The blocking reader task died (a bug: the core does not panic on input).
    #[error("the sitemap reader task failed: {0}")]
    Reader(String),
}

/// Runs one leased job to its `complete`. On an error the lease expires on its own and the
/// sitemap is due again.
pub async fn run_job(state: &AppState, worker: &str, job: &LeasedSitemap) -> Result<JobOutcome, JobError> {
    let started = Instant::now();
    let store = &state.store;
    let sitemap = store.sitemap_by_id(job.id).await?;
    let site = store.site_by_id(job.site_id).await?;
    // Every URL link is stamped with this time and the sweep removes links stamped before it:
    // it must be later than the previous read's stamp even when both fall in one second.
    let stamp = now().max(sitemap.last_downloaded_at.unwrap_or(0) + 1);
    let validators = Validators { etag: job.etag.clone(), last_modified: job.last_modified.clone() };
    let conditional = validators.etag.is_some() || validators.last_modified.is_some();
    let mut read = match state.fetcher.get(&job.url, conditional.then_some(&validators)).await {
        Err(e) => {
            let status = match &e {
                mapwright_fetch::Error::Status { status, .. } => Some(*status),
                _ => None,
            };
            Read::failed(job, status, e.to_string())
        }
        Ok(Fetched::NotModified(_)) => Read::unchanged(job),
        Ok(Fetched::Body(response)) => read_body(state, &site, &sitemap, response, stamp).await?,
    };
    if read.sweep {
        store.sweep_urls(site.id, sitemap.id, stamp, stamp).await?;
    }
    if let Some(children) = read.children.take() {
        let sync = store.sync_index_children(site.id, sitemap.id, &children, stamp).await?;
        if sync.added + sync.brought_forward > 0 {
            state.scheduler.wake.notify_waiters();
        }
    }
    let schedule = policy::next(sitemap.fetch_interval, sitemap.failures, read.change);
    let summary = FetchSummary {
        kinds: read.kinds.clone(),
        url_count: read.url_count,
        fetch_interval: schedule.period,
        failures: schedule.failures,
    };
    store.record_fetch_summary(worker, sitemap.id, &summary).await?;
    let finished = now().max(stamp);
    read.record.downloaded_at = finished;
    read.record.duration_ms = started.elapsed().as_millis() as i64;
    store.complete(worker, sitemap.id, &read.record, finished + schedule.delay).await?;
    Ok(JobOutcome {
        status: read.record.status.clone(),
        url_count: read.record.url_count,
        duration_ms: read.record.duration_ms,
    })
}

/// What a fetch and read produced.
struct Read {
    record: DownloadRecord,
    change: Change,
    kinds: Option<String>,
    url_count: Option<i64>,
    children: Option<Vec<IndexChild>>,
    /// The read was complete: URLs no longer listed can be swept.
    sweep: bool,
}

impl Read {
    fn failed(job: &LeasedSitemap, http_status: Option<u16>, error: String) -> Read {
        let record = DownloadRecord {
            status: "failed".into(),
            http_status: http_status.map(i64::from),
            error: Some(error),
            etag: job.etag.clone(),
            last_modified: job.last_modified.clone(),
            content_hash: job.content_hash.clone(),
            ..DownloadRecord::default()
        };
        Read { record, change: Change::Failed, kinds: None, url_count: None, children: None, sweep: false }
    }

    fn unchanged(job: &LeasedSitemap) -> Read {
        let record = DownloadRecord {
            status: "unchanged".into(),
            http_status: Some(304),
            etag: job.etag.clone(),
            last_modified: job.last_modified.clone(),
            content_hash: job.content_hash.clone(),
            ..DownloadRecord::default()
        };
        Read { record, change: Change::Unchanged, kinds: None, url_count: None, children: None, sweep: false }
    }
}

/// The URLs a sitemap may list: its folder on its own host, or the whole site when it is
/// cross-submitted from another host (PROTOCOL.md section 5).
fn scope_of(site: &Site, final_url: &Loc) -> Option<Scope> {
    if final_url.origin_str() == site.origin {
        return Some(Scope::of_sitemap(final_url));
    }
    Loc::parse(&format!("{}/", site.origin)).ok().map(|root| Scope::of_site(&root))
}

/// Reads and validates the body on a blocking thread while this task stores the URLs it
/// sends, batch by batch.
async fn read_body(
    state: &AppState,
    site: &Site,
    sitemap: &Sitemap,
    response: Response,
    stamp: i64,
) -> Result<Read, JobError> {
    let meta = response.meta.clone();
    let final_loc = Loc::parse(&meta.final_url).ok();
    let scope = final_loc.as_ref().and_then(|l| scope_of(site, l));
    let config =
        ValidatorConfig { sitemap_url: final_loc.clone(), scope_override: scope.clone(), ..ValidatorConfig::default() };
    let own_url = sitemap.url.clone();
    let body = response.into_reader();
    let stats = body.stats_handle();
    let (tx, mut rx) = mpsc::channel::<Vec<UrlRecord>>(2);
    let blocking = tokio::task::spawn_blocking(move || {
        let mut pass = Pass::new(scope, final_loc, own_url, tx);
        let validator = Validator::new(config);
        let mut findings = Findings::default();
        let outcome = validator.run_with_entries(body, &mut |f| findings.push(f), &mut |e| pass.entry(e));
        pass.flush();
        // Closing the channel ends the storing loop below.
        pass.tx = None;
        (outcome, findings, pass)
    });
    let mut store_error = None;
    while let Some(batch) = rx.recv().await {
        if let Err(e) = state.store.upsert_urls(site.id, sitemap.id, &batch, stamp).await {
            store_error = Some(e);
            break;
        }
    }
    drop(rx);
    let (outcome, findings, pass) = blocking.await.map_err(|e| JobError::Reader(e.to_string()))?;
    if let Some(e) = store_error {
        return Err(e.into());
    }
    let stats = stats.lock().map(|s| s.clone()).unwrap_or_default();
    let Findings { kept: findings, fatal } = findings;
    let fatal = fatal || outcome.io_error.is_some() || outcome.format.is_none();
    let errors = findings.iter().any(|f: &FindingRecord| f.severity == "error");
    let warnings = findings.iter().any(|f| f.severity == "warning");
    let status = if outcome.io_error.is_some() || outcome.format.is_none() {
        "failed"
    } else if errors {
        "errors"
    } else if warnings {
        "warnings"
    } else {
        "ok"
    };
    let hash = format!("{:016x}", stats.hash);
    let change = if status == "failed" {
        Change::Failed
    } else if sitemap.content_hash.as_deref() == Some(hash.as_str()) {
        Change::Unchanged
    } else {
        Change::Changed
    };
    let index = outcome.format == Some(Format::SitemapIndex);
    let record = DownloadRecord {
        status: status.into(),
        http_status: Some(i64::from(meta.status)),
        bytes: stats.bytes as i64,
        url_count: outcome.entries as i64,
        error: outcome.io_error.as_ref().map(|e| e.to_string()),
        findings,
        etag: meta.validators.etag.clone(),
        last_modified: meta.validators.last_modified.clone(),
        content_hash: if status == "failed" { sitemap.content_hash.clone() } else { Some(hash) },
        ..DownloadRecord::default()
    };
    Ok(Read {
        record,
        change,
        kinds: (status != "failed").then(|| if index { "index".to_owned() } else { pass.kinds(outcome.format) }),
        url_count: (status != "failed").then_some(outcome.entries as i64),
        children: (index && !fatal).then_some(pass.children),
        sweep: !fatal,
    })
}

/// The blocking side's state: URLs in scope batched for the store, children, kinds.
struct Pass {
    scope: Option<Scope>,
    index_loc: Option<Loc>,
    own_url: String,
    tx: Option<mpsc::Sender<Vec<UrlRecord>>>,
    batch: Vec<UrlRecord>,
    children: Vec<IndexChild>,
    /// web, image, video, news, hreflang seen.
    kinds: [bool; 5],
}

impl Pass {
    fn new(scope: Option<Scope>, index_loc: Option<Loc>, own_url: String, tx: mpsc::Sender<Vec<UrlRecord>>) -> Pass {
        Pass {
            scope,
            index_loc,
            own_url,
            tx: Some(tx),
            batch: Vec::with_capacity(URL_BATCH),
            children: Vec::new(),
            kinds: [false; 5],
        }
    }

    fn entry(&mut self, entry: &Entry) {
        match entry {
            Entry::Url(u) => {
                if self.scope.as_ref().is_some_and(|s| !s.contains(&u.loc)) {
                    return;
                }
                self.kinds[0] = true;
                self.kinds[1] |= !u.images.is_empty();
                self.kinds[2] |= !u.videos.is_empty();
                self.kinds[3] |= u.news.is_some();
                self.kinds[4] |= !u.alternates.is_empty();
                self.batch.push(UrlRecord {
                    loc: u.loc.as_str().to_owned(),
                    lastmod: u.lastmod.as_ref().map(|l| l.to_string()),
                    changefreq: u.changefreq.map(|c| c.as_str().to_owned()),
                    // Through the shortest decimal text: 0.8f32 widened is 0.800000011920929.
                    priority: u.priority.and_then(|p| p.to_string().parse().ok()),
                });
                if self.batch.len() >= URL_BATCH {
                    self.flush();
                }
            }
            Entry::Sitemap(s) => {
                // An index lists sitemaps of its own site only; itself never (no self-loop).
                let same_site = self.index_loc.as_ref().is_some_and(|i| i.origin_str() == s.loc.origin_str());
                if same_site && s.loc.as_str() != self.own_url && self.children.len() < MAX_CHILDREN {
                    self.children.push(IndexChild {
                        url: s.loc.as_str().to_owned(),
                        lastmod: s.lastmod.as_ref().map(|l| l.to_string()),
                    });
                }
            }
        }
    }

    /// Hands the batch to the async side; waits when the store is behind (backpressure). A
    /// closed channel means the store failed: the rest is read but not sent.
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(URL_BATCH));
        if let Some(tx) = &self.tx {
            let _ = tx.blocking_send(batch);
        }
    }

    /// The kinds of entries, after the format when it is a feed or a text file (the console's
    /// Type column: "rss,web", "web,image,hreflang").
    fn kinds(&self, format: Option<Format>) -> String {
        let names = ["web", "image", "video", "news", "hreflang"];
        let mut kinds: Vec<&str> = match format {
            Some(f @ (Format::Rss | Format::Atom | Format::Text)) => vec![f.as_str()],
            _ => Vec::new(),
        };
        kinds.extend(names.iter().zip(self.kinds).filter(|(_, on)| *on).map(|(n, _)| *n));
        kinds.join(",")
    }
}

/// The findings of a read: the first [`MAX_STORED_FINDINGS`] kept as records, and whether a
/// fatal one came.
#[derive(Default)]
struct Findings {
    kept: Vec<FindingRecord>,
    fatal: bool,
}

impl Findings {
    fn push(&mut self, f: Finding) {
        self.fatal |= FATAL.contains(&f.rule);
        if self.kept.len() >= MAX_STORED_FINDINGS {
            return;
        }
        let severity = match f.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        self.kept.push(FindingRecord {
            rule: f.rule.as_str().to_owned(),
            severity: severity.to_owned(),
            line: f.position.map(|p| i64::from(p.line)),
            col: f.position.map(|p| i64::from(p.column)),
            loc: f.loc,
            message: f.message,
        });
    }
}
