//! One job of a worker: fetch a leased sitemap (conditionally); when the sitemap has the key of
//! a last whole read, receive the body whole (in memory, past [`BODY_MEMORY`] in a temporary
//! file) and, when its bytes are those of that read, record it as unchanged without reading it
//! (as a 304); else (and at once when there is no key: a first read) read and validate it as it
//! arrives, stage its URLs in batches and merge them when the read is done (all or nothing: see
//! `mapwright_store`'s `ingest`), its children if it is an index, and the download.

use std::collections::HashMap;
use std::time::Instant;

use mapwright_core::validate::Config as ValidatorConfig;
use mapwright_core::{Entry, Finding, Format, Loc, Rule, Scope, Severity, Validator, Voucher};
use mapwright_fetch::body::{BodyReader, BodyStats, ReceivedReader};
use mapwright_fetch::{Fetched, Meta, Response, Validators};
use mapwright_store::{
    ContentCounts, DownloadRecord, FetchSummary, FindingRecord, IndexChild, LeasedSitemap, Site, Sitemap, UrlMerge,
    UrlRecord,
};
use tokio::sync::mpsc;

use super::policy::{self, Change};
use crate::trust::LastmodCounter;
use crate::{AppState, now};

/// Bytes of a body held in memory while it is received; the rest waits in a temporary file.
/// A job's memory stays bounded whatever the body (up to the fetcher's wire limit, 50 MiB).
const BODY_MEMORY: usize = 4 << 20;

/// URLs per staged batch: large enough that a round trip carries real work, small enough that
/// memory stays flat however long the sitemap is.
const URL_BATCH: usize = 2_000;

/// Findings stored per download (past it, only the first finding of a rule not stored yet):
/// the rest of a file where every line is wrong says nothing new. The counts and the verdict
/// cover every finding, stored or not (`DownloadRecord::omitted_errors`).
pub const MAX_STORED_FINDINGS: usize = 1_000;

/// Seconds until a read the outbound gate held back is tried again.
const HELD_READ_DELAY: i64 = 60;

/// Children of an index taken: the protocol's limit.
const MAX_CHILDREN: usize = mapwright_core::MAX_URLS;

/// Rules of the reader's fatal errors. A read that one stopped fails whole (the core's
/// `Outcome::stopped`); a finding of one in a read that reached its end (`xml-malformed` is
/// also the rule of one skipped entry) still sweeps nothing, to be safe.
const FATAL: &[Rule] = &[
    Rule::TooLarge,
    Rule::XmlMalformed,
    Rule::Encoding,
    Rule::GzipCorrupt,
    Rule::UnknownRoot,
    Rule::OaiIncomplete,
    Rule::OaiError,
];

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
    /// The temporary file that holds a large body while it is received failed (disk full).
    #[error("the body could not be kept for reading: {0}")]
    Spool(std::io::Error),
}

/// Runs one leased job to its `complete`. On an error the lease expires on its own and the
/// sitemap is due again.
pub async fn run_job(state: &AppState, worker: &str, job: &LeasedSitemap) -> Result<JobOutcome, JobError> {
    let started = Instant::now();
    let store = &state.store;
    let sitemap = store.sitemap_by_id(job.id).await?;
    let site = store.site_by_id(job.site_id).await?;
    // The read's time, for the URLs it changes and the children it adds: later than the
    // previous read's even when both fall in one second.
    let stamp = now().max(sitemap.last_downloaded_at.unwrap_or(0) + 1);
    let validators = Validators { etag: job.etag.clone(), last_modified: job.last_modified.clone() };
    let conditional = validators.etag.is_some() || validators.last_modified.is_some();
    // Every request of this read (robots.txt, this one, its retries and redirect hops, OAI-PMH
    // pages) asks the outbound gate, waiting its turn; `holds` says whether it held any.
    let (fetcher, holds) = crate::outbound::watched(state.fetcher.clone(), &state.gate);
    let voucher = voucher_of(state, &fetcher, &site, &sitemap).await?;
    let fetched = match &voucher {
        Voucher::Nobody if !on_origin(&site, &sitemap.url) => Err(format!(
            "{} is not on {origin}, and {origin}/robots.txt does not name it (or the index it came \
             from): a sitemap on another host is read only when the site's robots.txt vouches for it",
            sitemap.url,
            origin = site.origin
        )),
        _ => Ok(fetcher.get(&job.url, conditional.then_some(&validators)).await),
    };
    if let Some(reason) = holds.first() {
        return held_back(state, worker, &sitemap, &reason, started).await;
    }
    let mut read = match fetched {
        Err(unvouched) => Read::failed(job, None, unvouched),
        Ok(Err(e)) => {
            let status = match &e {
                mapwright_fetch::Error::Status { status, .. } => Some(*status),
                _ => None,
            };
            Read::failed(job, status, e.to_string())
        }
        Ok(Ok(Fetched::NotModified(_))) => Read::unchanged(job),
        Ok(Ok(Fetched::Body(response))) => {
            let reading = Reading { worker, site: &site, sitemap: &sitemap, voucher: &voucher, holds: &holds, stamp };
            match read_body(state, reading, response).await? {
                Some(read) => read,
                None => {
                    let reason = holds.first().unwrap_or_default();
                    return held_back(state, worker, &sitemap, &reason, started).await;
                }
            }
        }
    };
    if let Some(children) = read.children.take() {
        let sync = store.sync_index_children(site.id, sitemap.id, &children, stamp).await?;
        if sync.added + sync.brought_forward > 0 {
            state.scheduler.wake.notify_waiters();
        }
        if sync.refused > 0 {
            // The site holds its cap of sitemaps: what did not fit is an error of this read.
            read.record.findings.push(quota_finding(format!(
                "the site holds {} sitemaps, the most a site may have: {} new sitemaps this index lists were \
                 not added (remove sitemaps the site no longer needs)",
                mapwright_store::MAX_SITEMAPS_PER_SITE,
                sync.refused
            )));
            if read.record.status == "ok" || read.record.status == "warnings" {
                read.record.status = "errors".into();
            }
            // Children left out: the next read of the same bytes must try them again.
            read.record.whole_read = None;
        }
    }
    let schedule = policy::next(sitemap.fetch_interval, sitemap.failures, read.change);
    let summary = FetchSummary {
        kinds: read.kinds.clone(),
        url_count: read.url_count,
        fetch_interval: schedule.period,
        failures: schedule.failures,
        format: read.format.clone(),
        contents: read.contents,
    };
    store.record_fetch_summary(worker, sitemap.id, &summary).await?;
    let finished = now().max(stamp);
    read.record.downloaded_at = finished;
    read.record.duration_ms = started.elapsed().as_millis() as i64;
    store.complete(worker, sitemap.id, &read.record, finished + schedule.delay).await?;
    // The lease is given back: the dispatcher may lease the next sitemap of this origin now,
    // while this job still sends its events (on SQLite before another job's merge takes the
    // one write lock, which the lease would then wait for).
    state.scheduler.wake.notify_waiters();
    crate::jobs::read_recorded(state, &sitemap).await;
    Ok(JobOutcome {
        status: read.record.status.clone(),
        url_count: read.record.url_count,
        duration_ms: read.record.duration_ms,
    })
}

/// A read the outbound gate held part of (any of its requests, `reason` the gate's words) is
/// no read: the site was asked for only part of what the read needs, so nothing of it is
/// recorded (no download, no failure, so no alert mail and no status.worsened event, no URL
/// merged) but the hold itself, on the sitemap, for its page and the API to say why it was not
/// read; the lease goes back and the sitemap is due again once the gate may have room.
async fn held_back(
    state: &AppState,
    worker: &str,
    sitemap: &Sitemap,
    reason: &str,
    started: Instant,
) -> Result<JobOutcome, JobError> {
    tracing::info!(worker, sitemap = sitemap.id, reason, "read held back by the outbound gate");
    let at = now();
    let held = mapwright_store::HeldRead { at, reason: reason.to_owned(), until: at + HELD_READ_DELAY };
    state.store.postpone(worker, sitemap.id, &held).await?;
    state.scheduler.wake.notify_waiters();
    let duration_ms = started.elapsed().as_millis() as i64;
    Ok(JobOutcome { status: "held".into(), url_count: 0, duration_ms })
}

/// The error of a read past one of the site's quotas (URLs, sitemaps): what did not fit was
/// not stored, and the read says so under `too-many-urls`.
fn quota_finding(message: String) -> FindingRecord {
    FindingRecord {
        rule: Rule::TooManyUrls.as_str().to_owned(),
        severity: "error".to_owned(),
        line: None,
        col: None,
        loc: None,
        message,
    }
}

/// What a fetch and read produced.
struct Read {
    record: DownloadRecord,
    change: Change,
    kinds: Option<String>,
    url_count: Option<i64>,
    /// The format recognised (the core's name), `None` to keep the stored one.
    format: Option<String>,
    /// The entries by content type, `None` to keep the stored counts.
    contents: Option<ContentCounts>,
    children: Option<Vec<IndexChild>>,
}

impl Read {
    /// A read that stored nothing new: the sitemap's summary (kinds, counts, format, contents,
    /// children) stays as the read it stands for left it.
    fn keeping(record: DownloadRecord, change: Change) -> Read {
        Read { record, change, kinds: None, url_count: None, format: None, contents: None, children: None }
    }

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
        Read::keeping(record, Change::Failed)
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
        Read::keeping(record, Change::Unchanged)
    }

    /// A body whose bytes are those of the last whole read: recorded as a 304 is (it stands for
    /// that read: its verdict, counts and findings), with what this answer said (status,
    /// bytes, validators), and the sitemap's URLs seen now. Nothing is parsed or staged.
    fn same_bytes(meta: &Meta, stats: &BodyStats) -> Read {
        let record = DownloadRecord {
            status: "unchanged".into(),
            http_status: Some(i64::from(meta.status)),
            bytes: stats.bytes as i64,
            etag: meta.validators.etag.clone(),
            last_modified: meta.validators.last_modified.clone(),
            content_hash: Some(format!("{:016x}", stats.hash)),
            urls_seen: true,
            ..DownloadRecord::default()
        };
        Read::keeping(record, Change::Unchanged)
    }
}

/// The key of a read ([`mapwright_store::Store::whole_read_key`]): the hash of its bytes (an
/// OAI-PMH list's: of every page) with the rest of what decides what the read stores, the URL
/// they came from (scope and relative URLs are judged on it) and who vouches for the sitemap,
/// and this program's version (another may read the same bytes otherwise: its first read of
/// each sitemap is a full one). Two reads with one key store the same.
fn read_key(hash: u64, final_url: &str, voucher: &Voucher) -> String {
    use sha2::Digest;
    let mut key = sha2::Sha256::new();
    key.update(env!("CARGO_PKG_VERSION").as_bytes());
    key.update([0]);
    key.update(hash.to_le_bytes());
    key.update(final_url.as_bytes());
    key.update([0]);
    key.update(format!("{voucher:?}").as_bytes());
    hex::encode(&key.finalize()[..16])
}

/// Index chains longer than this are not followed up to their root when finding the voucher.
const MAX_CHAIN: usize = 16;

/// Whether `url` is on the site's origin.
fn on_origin(site: &Site, url: &str) -> bool {
    Loc::parse(url).is_ok_and(|l| l.origin_str() == site.origin)
}

/// Who vouches for a sitemap of the site (PROTOCOL.md section 5), the one input of the core's
/// scope decision: the verified owner for every sitemap of the site's origin (an index's
/// children at any depth included, and one that redirects elsewhere); the site's robots.txt
/// for a sitemap on another host that it names (cross-submission), and for the children of
/// such an index; otherwise nobody (the folder rule). robots.txt is asked through the read's
/// `fetcher`, so a hold of it is the read's.
async fn voucher_of(
    state: &AppState,
    fetcher: &mapwright_fetch::Fetcher,
    site: &Site,
    sitemap: &Sitemap,
) -> Result<Voucher, JobError> {
    // The root of its index chain: the sitemap the user or robots.txt named.
    let mut root_url = sitemap.url.clone();
    let mut parent = sitemap.parent_id.filter(|p| *p != sitemap.id);
    for _ in 0..MAX_CHAIN {
        let Some(id) = parent else { break };
        let Ok(up) = state.store.sitemap_by_id(id).await else { break };
        parent = up.parent_id.filter(|p| *p != up.id);
        root_url = up.url;
    }
    if site.verified_at.is_some() && (on_origin(site, &sitemap.url) || on_origin(site, &root_url)) {
        return Ok(Voucher::Owner(site.origin.clone()));
    }
    if !on_origin(site, &root_url) {
        match mapwright_fetch::robots::fetch(fetcher, &site.origin).await {
            Ok(robots) if robots.lists_sitemap(&root_url) => return Ok(Voucher::Robots(site.origin.clone())),
            Ok(_) => {}
            Err(e) => tracing::info!(site = %site.origin, error = %e, "robots.txt for a cross-submitted sitemap"),
        }
    }
    Ok(Voucher::Nobody)
}

/// What a read of a body reads for: the job, who vouches for its sitemap, the holds of its
/// requests so far, and the read's time.
struct Reading<'a> {
    worker: &'a str,
    site: &'a Site,
    sitemap: &'a Sitemap,
    voucher: &'a Voucher,
    holds: &'a crate::outbound::Holds,
    stamp: i64,
}

/// Receives the body whole when there is a last whole read to compare it with ([`buffer_first`]),
/// and unless its bytes are that read's (then the read is [`Read::same_bytes`]), reads and
/// validates it on a blocking thread (as it arrives when it was not received first) while this
/// task stages the URLs it sends, batch by batch; when the read is done they are merged at once
/// (a job that dies before leaves the previous URLs as they were). `None` when the outbound
/// gate held one of its requests (`holds`): the stage is discarded, nothing of the read kept.
async fn read_body(state: &AppState, reading: Reading<'_>, response: Response) -> Result<Option<Read>, JobError> {
    let Reading { worker, site, sitemap, voucher, holds, stamp } = reading;
    let meta = response.meta.clone();
    let final_loc = Loc::parse(&meta.final_url).ok();
    let scope = final_loc.as_ref().map(|l| Scope::vouched(l, voucher));
    // An OAI-PMH base URL is read across its pages, through the same client and limits.
    let pager = response.pager();
    let config = ValidatorConfig {
        sitemap_url: final_loc.clone(),
        scope_override: scope.clone(),
        pager: Some(pager.clone()),
        ..ValidatorConfig::default()
    };
    let own_url = sitemap.url.clone();
    let site_origin = site.origin.clone();
    let lastmod = LastmodCounter::new(stamp, config.clock_skew_secs);
    let stored_key = state.store.whole_read_key(sitemap.id).await?;
    // An OAI-PMH list's key covers its pages, read only while the list is parsed.
    let paged = sitemap.format.as_deref() == Some(Format::OaiPmh.as_str());
    let body = response.into_reader();
    // Stops the body's task when this job is dropped (its deadline), so a streamed read ends.
    let _stop = body.stopper();
    let body = if buffer_first(stored_key.as_deref(), paged) {
        let received = tokio::task::spawn_blocking(move || body.receive(BODY_MEMORY))
            .await
            .map_err(|e| JobError::Reader(e.to_string()))?
            .map_err(JobError::Spool)?;
        tracing::debug!(sitemap = sitemap.id, bytes = received.stats.bytes, "body received whole");
        if received.stats.complete
            && stored_key.as_deref() == Some(read_key(received.stats.hash, &meta.final_url, voucher).as_str())
        {
            return Ok(Some(Read::same_bytes(&meta, &received.stats)));
        }
        Body::Received(received.stats.clone(), received.into_reader())
    } else {
        Body::Streamed(body)
    };
    let mut stage = state.store.begin_url_stage(worker, site.id, sitemap.id, stamp).await?;
    let (tx, mut rx) = mpsc::channel::<Vec<UrlRecord>>(2);
    let blocking = tokio::task::spawn_blocking(move || {
        let mut pass = Pass::new(scope, site_origin, final_loc, own_url, tx, lastmod);
        let validator = Validator::new(config);
        let mut findings = Findings::default();
        let mut body = body;
        let outcome = validator.run_with_entries(&mut body, &mut |f| findings.push(f), &mut |e| pass.entry(e));
        pass.flush();
        // Closing the channel ends the storing loop below.
        pass.tx = None;
        (outcome, findings, pass, body.finish())
    });
    let mut store_error = None;
    let quota = state.scheduler.url_quota.load(std::sync::atomic::Ordering::Relaxed);
    while let Some(batch) = rx.recv().await {
        if let Err(e) = state.store.stage_urls(&mut stage, &batch).await {
            store_error = Some(e);
            break;
        }
    }
    drop(rx);
    let (outcome, findings, mut pass, mut stats) = blocking.await.map_err(|e| JobError::Reader(e.to_string()))?;
    tracing::debug!(sitemap = sitemap.id, bytes = stats.bytes, entries = outcome.entries, "read and staged");
    if let Some(e) = store_error {
        // What was staged stays invisible; the next attempt on the sitemap discards it.
        return Err(e.into());
    }
    if holds.first().is_some() {
        // The gate held a request of the read (an OAI-PMH page): what it read is part of the
        // sitemap only, and no failure of the site's. Nothing is merged or recorded.
        state.store.discard_url_stage(&stage).await?;
        return Ok(None);
    }
    // An OAI-PMH list's bytes and hash are those of all its pages: change is judged on the
    // records, not on the base URL's answer, which stays the same whatever the records.
    pager.pages().add_to(&mut stats);
    let Findings { kept: mut findings, fatal, omitted_errors, omitted_warnings, .. } = findings;
    let fatal = fatal || outcome.io_error.is_some() || outcome.format.is_none();
    let hash = format!("{:016x}", stats.hash);
    let key = read_key(stats.hash, &meta.final_url, voucher);
    // A read is all or nothing: one that stopped before the file's end (an I/O error, no
    // format, a fatal error of the reader: truncated or malformed XML, a limit, corrupt gzip,
    // an OAI-PMH list cut short) stores none of its URLs, as the CLI and the Python package
    // fail it; the sitemap keeps the URLs of its last good read, and the stage is discarded.
    let read_failed = outcome.io_error.is_some() || outcome.format.is_none() || outcome.stopped.is_some();
    let write = if read_failed {
        state.store.discard_url_stage(&stage).await?;
        mapwright_store::UrlWrite::default()
    } else {
        // The URLs read become the sitemap's now, in one transaction. A recoverable error of a
        // rule that may also be fatal (an entry skipped as `xml-malformed`) sweeps nothing.
        let merge =
            UrlMerge { sweep: !fatal, same_content: stored_key.as_deref() == Some(key.as_str()), quota, now: stamp };
        state.store.merge_url_stage(worker, &stage, merge).await?
    };
    tracing::debug!(sitemap = sitemap.id, added = write.added, changed = write.changed, failed = read_failed, "merged");
    let refused = write.refused;
    if refused > 0 {
        findings.push(quota_finding(format!(
            "the site holds its quota of {quota} URLs: {refused} new URLs of this sitemap were not stored"
        )));
    }
    findings.extend(pass.skipped.take());
    // Every finding counts, also those past the cap on stored ones.
    let errors = omitted_errors > 0 || findings.iter().any(|f: &FindingRecord| f.severity == "error");
    let warnings = omitted_warnings > 0 || findings.iter().any(|f| f.severity == "warning");
    let status = if read_failed {
        "failed"
    } else if errors {
        "errors"
    } else if warnings {
        "warnings"
    } else {
        "ok"
    };
    let change = if status == "failed" {
        Change::Failed
    } else if sitemap.content_hash.as_deref() == Some(hash.as_str()) {
        Change::Unchanged
    } else {
        Change::Changed
    };
    let index = outcome.format == Some(Format::SitemapIndex);
    // The validators of an OAI-PMH repository are its first answer's only: a 304 must never
    // stand for the pages after it, so none is asked for.
    let validators = !fatal && outcome.format != Some(Format::OaiPmh);
    let record = DownloadRecord {
        status: status.into(),
        http_status: Some(i64::from(meta.status)),
        bytes: stats.bytes as i64,
        // A failed read stored nothing: it counts none.
        url_count: if read_failed { 0 } else { outcome.entries as i64 },
        error: failure(&outcome, &findings),
        findings,
        omitted_errors,
        omitted_warnings,
        // After an incomplete read the next fetch must read in full: a 304 would stand for
        // a content whose URLs were never all stored.
        etag: if validators { meta.validators.etag.clone() } else { None },
        last_modified: if validators { meta.validators.last_modified.clone() } else { None },
        content_hash: if status == "failed" { sitemap.content_hash.clone() } else { Some(hash) },
        // What the merge changed, stored with it: this download's diff.
        diff: write.diff,
        // What its lastmod values look like (the sitemap's lastmod trust).
        lastmod: (status != "failed").then(|| pass.lastmod.finish()),
        // The URLs stored are now exactly what these bytes list.
        whole_read: (status != "failed" && !fatal && refused == 0).then_some(key),
        ..DownloadRecord::default()
    };
    Ok(Some(Read {
        record,
        change,
        kinds: (status != "failed").then(|| if index { "index".to_owned() } else { pass.kinds(outcome.format) }),
        url_count: (status != "failed").then_some(outcome.entries as i64),
        format: outcome.format.filter(|_| status != "failed").map(|f| f.as_str().to_owned()),
        contents: (status != "failed").then_some(pass.contents),
        children: (index && !fatal).then_some(pass.children),
    }))
}

/// Why a read failed, for its download's `error`: the I/O error, or the fatal finding that
/// stopped the reader (its message and position), or the format not recognised; `None` for a
/// read that reached its end.
fn failure(outcome: &mapwright_core::validate::Outcome, findings: &[FindingRecord]) -> Option<String> {
    if let Some(e) = &outcome.io_error {
        return Some(e.to_string());
    }
    let nothing = "none of the URLs read before it were stored (the sitemap keeps those of its last good read)";
    if let Some(rule) = outcome.stopped {
        let said = findings.iter().rev().find(|f| f.rule == rule.as_str());
        let at = said.and_then(|f| f.line.map(|l| format!(" at line {l}"))).unwrap_or_default();
        let what = said.map_or_else(|| rule.as_str().to_owned(), |f| format!("{}: {}", f.rule, f.message));
        return Some(format!("the read stopped{at} ({what}): {nothing}"));
    }
    outcome.format.is_none().then(|| "the file is not a sitemap in any format the reader knows".to_owned())
}

/// Whether a body is received whole before it is read: only when there is a key of a last
/// whole read to compare its bytes with ([`Read::same_bytes`] then skips the read). Otherwise
/// (a first read, one after a failed or partial read, an OAI-PMH list whose key covers pages
/// not fetched yet) it streams into the reader as it arrives, so download and parse overlap.
fn buffer_first(stored_key: Option<&str>, paged: bool) -> bool {
    stored_key.is_some() && !paged
}

/// The bytes a read parses: received whole first (their statistics known), or streamed.
enum Body {
    Received(BodyStats, ReceivedReader),
    Streamed(BodyReader),
}

impl Body {
    /// What the body task recorded of the whole body. A streamed body is read to its end first
    /// (the reader may stop at a fatal error before it), so its hash covers every byte, as a
    /// received one's does; its error, if any, was the reader's already.
    fn finish(self) -> BodyStats {
        match self {
            Body::Received(stats, _) => stats,
            Body::Streamed(mut reader) => {
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                reader.stats()
            }
        }
    }
}

impl std::io::Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Body::Received(_, r) => r.read(buf),
            Body::Streamed(r) => r.read(buf),
        }
    }
}

impl std::io::BufRead for Body {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self {
            Body::Received(_, r) => r.fill_buf(),
            Body::Streamed(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amt: usize) {
        match self {
            Body::Received(_, r) => r.consume(amt),
            Body::Streamed(r) => r.consume(amt),
        }
    }
}

/// The blocking side's state: URLs in scope batched for the store, children, kinds.
struct Pass {
    scope: Option<Scope>,
    /// Only the site's own URLs are stored, whoever vouches.
    site_origin: String,
    index_loc: Option<Loc>,
    own_url: String,
    tx: Option<mpsc::Sender<Vec<UrlRecord>>>,
    batch: Vec<UrlRecord>,
    children: Vec<IndexChild>,
    /// URL entries seen: past the protocol's 50,000 they are not stored (the validator
    /// reports `too-many-urls`).
    urls_seen: usize,
    /// Why a child was not followed, for the download's findings.
    skipped: Option<FindingRecord>,
    /// URL entries in scope, and those with images, videos, news.
    contents: ContentCounts,
    /// An entry with hreflang alternates seen.
    hreflang: bool,
    /// The lastmod values of the URL entries in scope, counted.
    lastmod: LastmodCounter,
    /// The spelling stored for each URL of this read, keyed by a hash of its normal form
    /// (`None`: the normal form itself): a URL is stored as the file wrote it, and a second
    /// spelling of it (`HTTPS://Example.com:443/a` after `https://example.com/a`) is handed
    /// to the store as the first, so the store's one row per URL text stays one row per URL.
    /// At most `MAX_URLS` entries.
    spellings: HashMap<u64, Option<Box<str>>>,
    hasher: std::hash::RandomState,
}

impl Pass {
    fn new(
        scope: Option<Scope>,
        site_origin: String,
        index_loc: Option<Loc>,
        own_url: String,
        tx: mpsc::Sender<Vec<UrlRecord>>,
        lastmod: LastmodCounter,
    ) -> Pass {
        Pass {
            scope,
            site_origin,
            index_loc,
            own_url,
            tx: Some(tx),
            batch: Vec::with_capacity(URL_BATCH),
            children: Vec::new(),
            urls_seen: 0,
            skipped: None,
            contents: ContentCounts::default(),
            hreflang: false,
            lastmod,
            spellings: HashMap::new(),
            hasher: std::hash::RandomState::new(),
        }
    }

    /// The URL text handed to the store for `loc`: as written, the first spelling of it in
    /// this read (see `spellings`).
    fn spelling(&mut self, loc: &Loc) -> String {
        use std::hash::BuildHasher;
        let kept = self
            .spellings
            .entry(self.hasher.hash_one(loc.as_str()))
            .or_insert_with(|| loc.is_rewritten().then(|| loc.written().into()));
        kept.as_deref().unwrap_or(loc.as_str()).to_owned()
    }

    fn entry(&mut self, entry: &Entry) {
        match entry {
            Entry::Url(u) => {
                self.urls_seen += 1;
                if self.urls_seen > mapwright_core::MAX_URLS {
                    return;
                }
                if self.scope.as_ref().is_none_or(|s| !s.contains(&u.loc)) || u.loc.origin_str() != self.site_origin {
                    return;
                }
                self.contents.web += 1;
                let x = u.ext();
                self.contents.image += i64::from(!x.images.is_empty());
                self.contents.video += i64::from(!x.videos.is_empty());
                self.contents.news += i64::from(x.news.is_some());
                self.hreflang |= !x.alternates.is_empty();
                self.lastmod.add(u.lastmod.as_ref());
                let loc = self.spelling(&u.loc);
                self.batch.push(UrlRecord {
                    loc,
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
                // A child URL of 2,048 characters or more breaks the protocol (the reader said
                // `loc-too-long`) and is not followed: sitemaps are keyed by their URL's text.
                if s.loc.char_len() >= mapwright_core::MAX_LOC_LEN {
                    if self.skipped.is_none() {
                        self.skipped = Some(FindingRecord {
                            rule: Rule::LocTooLong.as_str().to_owned(),
                            severity: "error".to_owned(),
                            line: None,
                            col: None,
                            loc: None,
                            message: "a child sitemap URL of 2,048 characters or more is not followed".to_owned(),
                        });
                    }
                    return;
                }
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
        let c = self.contents;
        let seen = [
            ("web", c.web > 0),
            ("image", c.image > 0),
            ("video", c.video > 0),
            ("news", c.news > 0),
            ("hreflang", self.hreflang),
        ];
        let mut kinds: Vec<&str> = match format {
            Some(f @ (Format::Rss | Format::Atom | Format::Text | Format::OaiPmh)) => vec![f.as_str()],
            _ => Vec::new(),
        };
        kinds.extend(seen.iter().filter(|(_, on)| *on).map(|(n, _)| *n));
        kinds.join(",")
    }
}

/// The findings of a read: the first [`MAX_STORED_FINDINGS`] kept as records (and past them
/// the first of each rule not kept yet, so a fatal error after a thousand warnings is among
/// them), the errors and warnings left out counted, and whether a fatal one came.
#[derive(Default)]
struct Findings {
    kept: Vec<FindingRecord>,
    fatal: bool,
    /// The rules with a finding kept.
    rules: std::collections::HashSet<Rule>,
    omitted_errors: i64,
    omitted_warnings: i64,
}

impl Findings {
    fn push(&mut self, f: Finding) {
        self.fatal |= FATAL.contains(&f.rule);
        let severity = match f.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        if self.kept.len() >= MAX_STORED_FINDINGS && !self.rules.insert(f.rule) {
            match f.severity() {
                Severity::Error => self.omitted_errors += 1,
                Severity::Warning => self.omitted_warnings += 1,
                Severity::Info => {}
            }
            return;
        }
        self.rules.insert(f.rule);
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

#[cfg(test)]
mod tests {
    use super::buffer_first;

    #[test]
    fn a_body_is_received_whole_only_when_there_is_a_key_to_compare_it_with() {
        // A first read, or one after a failed or partial read: streamed into the reader.
        assert!(!buffer_first(None, false));
        // The key of the last whole read: received whole, its bytes compared first.
        assert!(buffer_first(Some("k"), false));
        // An OAI-PMH list's key covers pages fetched while it is read: always streamed.
        assert!(!buffer_first(Some("k"), true));
        assert!(!buffer_first(None, true));
    }
}
