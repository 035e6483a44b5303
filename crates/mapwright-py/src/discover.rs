//! `mapwright.discover`: the fetch crate's discovery on the package's runtime; its events come
//! through a bounded channel, so the Python consumer's pace is the discovery's.

use crate::convert::{PyEntry, PyFinding};
use crate::errors::{self, OnPartial};
use crate::run::{self, Job, Options};
use mapwright_core::{Entry, Finding, Severity, UrlEntry};
use mapwright_fetch::{DiscoverConfig, Event, Outcome, SiteSummary, Summary};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Findings kept per discovery (each sitemap's reader caps its own too).
const MAX_FINDINGS: usize = 10_000;
/// Notices kept.
const MAX_NOTICES: usize = 1_000;

/// The iterator `mapwright.discover` returns: the URLs found, each an `Entry` whose `sitemap`
/// is the sitemap it came from; `summary` once exhausted.
#[pyclass(module = "mapwright")]
pub struct Discovery {
    rx: Mutex<Option<mpsc::Receiver<Event>>>,
    job: Job<Result<Summary, mapwright_fetch::Error>>,
    buf: VecDeque<(Arc<str>, UrlEntry)>,
    findings: Vec<(Arc<str>, Finding)>,
    /// Remarks that are no rule (a cycle, the depth limit, robots.txt notes), as `(sitemap, message)`.
    #[pyo3(get)]
    notices: Vec<(Option<String>, String)>,
    sitemaps: Vec<Py<PyDict>>,
    summary: Option<Py<PyDict>>,
    /// The URL (site or sitemap) the discovery started from.
    start: String,
    /// Seeds read (fetched, even if only in part).
    seeds_ok: usize,
    /// The first failed seed's exception: raised when no seed could be read.
    seed_error: Option<PyErr>,
    /// The first failure's exception, the cause of a partial result.
    first_error: Option<PyErr>,
    /// What a partial result does: raise (default), warn, or (frames) rows.
    on_partial: OnPartial,
    /// Error findings of the readers (entries skipped: a relative or invalid `<loc>`...).
    errors_seen: u64,
    /// Per sitemap read, what the frames' sitemap columns give (advertools' `etag`,
    /// `sitemap_last_modified`, `sitemap_size_mb`, `download_date`).
    meta: HashMap<Arc<str>, SitemapMeta>,
    /// With `errors="rows"`: the sitemaps that failed, `(url, why)`, once the discovery is over.
    pub failed_rows: Vec<(String, String)>,
}

/// What the data frames say of the sitemap a row came from.
#[derive(Clone, Default)]
pub struct SitemapMeta {
    /// The response's `ETag`.
    pub etag: Option<String>,
    /// The response's `Last-Modified` (an HTTP date, parsed by the Python layer).
    pub last_modified: Option<String>,
    /// Bytes once gzip is removed.
    pub size: u64,
    /// When the sitemap was read to its end, nanoseconds since the epoch.
    pub downloaded_ns: i64,
}

impl Discovery {
    /// Takes the next event without the GIL; false when the discovery is over (the summary set).
    pub fn fill(&mut self, py: Python<'_>) -> PyResult<bool> {
        let Some(mut rx) = self.rx.get_mut().ok().and_then(Option::take) else { return Ok(false) };
        let (rx, event) = py.detach(move || {
            let e = rx.blocking_recv();
            (rx, e)
        });
        let Some(event) = event else { return self.finish(py).map(|_| false) };
        if let Ok(slot) = self.rx.get_mut() {
            *slot = Some(rx);
        }
        match event {
            Event::Urls { sitemap, urls } => self.buf.extend(urls.into_iter().map(|u| (sitemap.clone(), u))),
            Event::Finding { sitemap, finding } => {
                if finding.rule.severity() == Severity::Error {
                    self.errors_seen += 1;
                }
                if self.findings.len() < MAX_FINDINGS {
                    self.findings.push((sitemap, finding));
                }
            }
            Event::Notice { sitemap, message } => {
                if self.notices.len() < MAX_NOTICES {
                    self.notices.push((sitemap.map(|s| s.to_string()), message));
                }
            }
            Event::Sitemap(s) => {
                let downloaded_ns = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
                self.meta.insert(
                    s.url.clone(),
                    SitemapMeta {
                        etag: s.etag.clone(),
                        last_modified: s.last_modified.clone(),
                        size: s.bytes_read,
                        downloaded_ns,
                    },
                );
                let d = PyDict::new(py);
                d.set_item("url", &*s.url)?;
                d.set_item("final_url", s.final_url)?;
                d.set_item("parent", s.parent.as_deref())?;
                d.set_item("depth", s.depth)?;
                let (outcome, err) = match &s.outcome {
                    Outcome::Fetched => ("fetched", None),
                    Outcome::NotModified => ("not-modified", None),
                    Outcome::Skipped => ("skipped", None),
                    Outcome::Failed(e) => ("failed", Some(e.to_string())),
                };

                match (&s.outcome, s.parent.is_none()) {
                    (Outcome::Failed(e), true) => {
                        if self.seed_error.is_none() {
                            self.seed_error = Some(errors::fetch_error(py, e));
                        }
                    }
                    (_, false) => {}
                    (_, true) => self.seeds_ok += 1,
                }
                // The cause chained to a partial result's exception: the first failure's own.
                if self.first_error.is_none() {
                    self.first_error = match (&s.outcome, &s.error) {
                        (Outcome::Failed(e), _) | (_, Some(e)) => Some(errors::fetch_error(py, e)),
                        _ => None,
                    };
                }
                d.set_item("outcome", outcome)?;
                d.set_item("format", s.format.map(|f| f.as_str()))?;
                d.set_item("urls", s.urls)?;
                d.set_item("children", s.children)?;
                d.set_item("bytes", s.bytes)?;
                d.set_item("size", s.bytes_read)?;
                d.set_item("etag", s.etag.as_deref())?;
                d.set_item("last_modified", s.last_modified.as_deref())?;
                d.set_item("error", err.or_else(|| s.error.map(|e| e.to_string())))?;
                self.sitemaps.push(d.unbind());
            }
        }
        Ok(true)
    }

    /// Waits for the discovery's result: its summary, then the verdict (`run::site_failure`,
    /// the CLI's): nothing readable raises its cause, no URL raises `NoUrlError`, a failed
    /// sitemap makes a partial result.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(result) = self.job.wait(py)? else { return Ok(()) };
        if let Err(e) = &result {
            return Err(errors::fetch_error(py, e));
        }
        let verdict = SiteSummary::of(&self.start, &result, false);
        let Ok(summary) = &result else { return Ok(()) };
        let d = PyDict::new(py);
        // Alike on purpose: validate.rs and write.rs build their summaries so: each binding gives
        // the fields of its own Rust summary, by name.
        d.set_item("seeds_from", &summary.seeds_from)?;
        d.set_item("fetched", summary.fetched)?;
        d.set_item("not_modified", summary.not_modified)?;
        d.set_item("skipped", summary.skipped)?;
        d.set_item("failed", &summary.failed)?;
        d.set_item("urls", summary.urls)?;
        d.set_item("duplicates", summary.duplicates)?;
        d.set_item("out_of_scope", summary.out_of_scope)?;
        d.set_item("cross_submitted", summary.cross_submitted)?;
        d.set_item("over_limit", summary.over_limit)?;
        d.set_item("not_followed", summary.not_followed)?;
        d.set_item("bytes", summary.bytes)?;
        d.set_item("elapsed", summary.elapsed.as_secs_f64())?;
        d.set_item("robots", verdict.robots)?;
        d.set_item("robots_note", verdict.robots_note.as_deref())?;
        d.set_item("ok", verdict.ok)?;
        d.set_item("ended", verdict.ended)?;
        d.set_item("error", verdict.error.as_deref())?;
        self.summary = Some(d.unbind());
        let Some(why) = run::site_failure(&verdict) else { return Ok(()) };
        // Nothing readable: no seed could be read. Its own error (a status, HTML, a broken
        // gzip...) is raised; when the usual paths were guessed and none is a sitemap, a
        // FetchError saying so (the cause chained).
        if self.seeds_ok == 0 && verdict.ended == "no-sitemap" {
            let guessed = summary.seeds_from == "usual paths";
            return Err(match self.seed_error.take() {
                Some(err) if !guessed => err,
                cause => {
                    let paths = mapwright_fetch::discover::FALLBACK_PATHS.join(", ");
                    let msg = format!(
                        "{}: no sitemap found: robots.txt names none, and none of the usual paths ({paths}) is one ({why})",
                        self.start
                    );
                    let err = errors::plain_at::<errors::FetchError>(py, msg, Some(&self.start));
                    err.set_cause(py, cause);
                    err
                }
            });
        }
        // Nothing read for another reason (robots.txt unreachable: a complete disallow, RFC
        // 9309; a deadline before any sitemap): a FetchError saying why, never a partial result.
        if self.seeds_ok == 0 && summary.urls == 0 && summary.failed.is_empty() && !run::no_urls(&verdict) {
            let msg = format!("{}: {why}", self.start);
            return Err(errors::plain_at::<errors::FetchError>(py, msg, Some(&self.start)));
        }
        // Sitemaps read, no URL: never an empty result over dropped URLs or skipped entries.
        if run::no_urls(&verdict) && summary.failed.is_empty() {
            let mut msg = run::no_url_message(&self.start, &verdict, Some(summary));
            if self.errors_seen > 0 {
                let first = self.findings.iter().find(|(_, f)| f.rule.severity() == Severity::Error);
                if let Some((sitemap, f)) = first {
                    msg.push_str(&format!(
                        "; {} errors in the sitemaps, the first: {sitemap}: {}[{}]: {}",
                        self.errors_seen,
                        f.rule.severity().as_str(),
                        f.rule.as_str(),
                        f.message
                    ));
                }
            }
            return Err(errors::plain_at::<errors::NoUrlError>(py, msg, Some(&self.start)));
        }
        let mut failed = summary.failed.clone();
        if failed.is_empty() {
            failed.push((self.start.clone(), why)); // cut by a deadline, no sitemap failed
        }
        if self.on_partial == OnPartial::Rows {
            self.failed_rows = failed;
            return Ok(());
        }
        errors::partial(py, self.on_partial, &self.start, Some(&self.start), &failed, self.first_error.take())
    }

    /// Moves out the buffered URLs (for the column builder).
    pub fn take_buffered(&mut self) -> VecDeque<(Arc<str>, UrlEntry)> {
        std::mem::take(&mut self.buf)
    }

    /// What the frames say of the sitemap `url` (as listed), once it is done.
    pub fn sitemap_meta(&self, url: &str) -> Option<&SitemapMeta> {
        self.meta.get(url)
    }
}

#[pymethods]
impl Discovery {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<PyEntry>> {
        loop {
            if let Some((sitemap, u)) = self.buf.pop_front() {
                return Ok(Some(PyEntry::new(Entry::Url(u), Some(sitemap))));
            }
            if !self.fill(py)? {
                return Ok(None);
            }
        }
    }

    /// The totals (`fetched`, `urls`, `duplicates`, `out_of_scope`, `failed`, ...): `None`
    /// until the iterator is exhausted.
    #[getter]
    fn summary(&self, py: Python<'_>) -> Option<Py<PyDict>> {
        self.summary.as_ref().map(|d| d.clone_ref(py))
    }

    /// One dict per sitemap done: `url`, `final_url`, `parent`, `depth`, `outcome`, `format`,
    /// `urls`, `children`, `bytes` (received), `size` (once gzip is removed), `etag`,
    /// `last_modified` (the response's headers), `error`.
    #[getter]
    fn sitemaps(&self, py: Python<'_>) -> Vec<Py<PyDict>> {
        self.sitemaps.iter().map(|d| d.clone_ref(py)).collect()
    }

    /// The readers' findings, and the URLs dropped as out of scope, each with its sitemap as `file`.
    #[getter]
    fn findings(&self) -> Vec<PyFinding> {
        self.findings.iter().map(|(s, f)| PyFinding::new(s, f.clone())).collect()
    }
}

/// The last path segment of `url`, lower-cased.
fn last_segment(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let path = path.splitn(4, '/').nth(3).unwrap_or("");
    path.rsplit('/').next().unwrap_or("").to_ascii_lowercase()
}

/// Whether `url` names a robots.txt (its `Sitemap:` lines are followed, as advertools does).
fn names_robots(url: &str) -> bool {
    last_segment(url) == "robots.txt"
}

/// Whether `url` names a sitemap rather than a site: its last path segment has a sitemap's
/// extension or says "sitemap".
fn names_sitemap(url: &str) -> bool {
    let last = last_segment(url);
    last.contains("sitemap") || [".xml", ".gz", ".txt", ".rss", ".atom"].iter().any(|e| last.ends_with(e))
}

/// How a discovery starts.
enum Start {
    /// A site: its robots.txt, else the usual paths.
    Site,
    /// A robots.txt: its `Sitemap:` lines only.
    Robots,
    /// A sitemap or index.
    Sitemap,
    /// The children of an index read elsewhere (a file), at this URL if known: followed as a
    /// fetched index's are, under the same cap and scope.
    Children(Option<String>),
}

/// Starts a discovery; `mode` is `site`, `robots`, `sitemap`, `auto` (see `names_robots`,
/// `names_sitemap`) or `children`. `dedupe` is `run` (each URL once: `discover`) or `sitemap`
/// (once per sitemap, as advertools gives them: the frames). `seeds` are more sitemaps read
/// beside `url`; with `children`, `url` and `seeds` are the children of an index read from a
/// file (for the frames), whose URL is `index` when known: they are read as a fetched index's
/// children are (`Discovery::run_children`: the same cap, and with `scope` the same
/// `index-cross-site` rule), not as sitemaps given bare. `name` is what its exceptions call
/// the start (by default `url`).
#[pyfunction]
#[pyo3(signature = (url, options, mode="auto", dedupe="run", seeds=Vec::new(), name=None, index=None))]
#[allow(clippy::too_many_arguments)]
pub fn start_discovery(
    py: Python<'_>,
    url: String,
    options: Options,
    mode: &str,
    dedupe: &str,
    seeds: Vec<String>,
    name: Option<String>,
    index: Option<String>,
) -> PyResult<Discovery> {
    let on_partial = options.on_partial()?;
    if !mapwright_fetch::remote::is_url(&url) {
        return Err(PyValueError::new_err(format!("{url:?} is not an http(s) URL")));
    }
    let start_as = match mode {
        "site" => Start::Site,
        "robots" => Start::Robots,
        "sitemap" => Start::Sitemap,
        "children" => Start::Children(index),
        "auto" if names_robots(&url) => Start::Robots,
        "auto" if names_sitemap(&url) => Start::Sitemap,
        "auto" => Start::Site,
        other => {
            return Err(PyValueError::new_err(format!(
                "mode must be 'site', 'robots', 'sitemap', 'children' or 'auto', not {other:?}"
            )));
        }
    };
    let dedupe_per_sitemap = match dedupe {
        "run" => false,
        "sitemap" => true,
        other => return Err(PyValueError::new_err(format!("dedupe must be 'run' or 'sitemap', not {other:?}"))),
    };
    let config = DiscoverConfig { dedupe_per_sitemap, ..options.config() };
    let fetcher = options.fetcher(py, false)?;
    // A few batches in flight: memory stays flat, the consumer paces the discovery.
    let (tx, rx) = mpsc::channel(8);
    let discovery = mapwright_fetch::Discovery::new(fetcher, config);
    let start = name.unwrap_or_else(|| url.clone());
    let job = Job::spawn(async move {
        match start_as {
            Start::Site => discovery.run_site(&url, tx).await,
            Start::Robots => discovery.run_robots(&url, tx).await,
            Start::Sitemap => discovery.run_sitemaps(std::iter::once(url).chain(seeds).collect(), tx).await,
            Start::Children(index) => {
                discovery.run_children(index.as_deref(), std::iter::once(url).chain(seeds).collect(), tx).await
            }
        }
    })?;
    Ok(Discovery {
        rx: Mutex::new(Some(rx)),
        job,
        buf: VecDeque::new(),
        findings: Vec::new(),
        notices: Vec::new(),
        sitemaps: Vec::new(),
        summary: None,
        start,
        seeds_ok: 0,
        seed_error: None,
        first_error: None,
        on_partial,
        errors_seen: 0,
        meta: HashMap::new(),
        failed_rows: Vec::new(),
    })
}
