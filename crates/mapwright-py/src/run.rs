//! What `discover` and `discover_many` share: their keyword arguments and the discovery
//! settings made of them, the job on the package's runtime (stopped when its iterator is
//! dropped, waited for without the GIL), and the verdict on a finished site, which is the
//! CLI's `discover --sites --summary` verdict ([`SiteSummary`]) for both, so the two functions
//! and the CLI call the same sites failed, for the same reason.

use crate::errors::{self, OnPartial};
use crate::input::{self, runtime};
use mapwright_core::{Limits, ReadOptions};
use mapwright_fetch::{DiscoverConfig, Fetcher, SiteSummary, Summary};
use pyo3::prelude::*;
use std::future::Future;
use tokio::task::JoinHandle;

/// The keyword arguments of `discover` and `discover_many` (the Python layer passes them as a
/// dict): `None` is the fetch crate's default.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Options {
    pub per_host: Option<usize>,
    pub max_depth: Option<usize>,
    pub max_sitemaps: Option<usize>,
    pub max_urls: Option<u64>,
    pub max_bytes: Option<u64>,
    pub scope: bool,
    pub cross_submission: bool,
    /// Seconds a request may take (the fetch crate's whole-request timeout).
    pub timeout: Option<f64>,
    /// `raise`, `warn` or `rows`.
    pub errors: String,
}

impl Options {
    /// What a partial result does.
    pub fn on_partial(&self) -> PyResult<OnPartial> {
        OnPartial::parse(&self.errors)
    }

    /// The discovery settings.
    pub fn config(&self) -> DiscoverConfig {
        let defaults = DiscoverConfig::default();
        let mut limits = Limits::default();
        if let Some(b) = self.max_bytes {
            limits.max_bytes = b;
        }
        DiscoverConfig {
            per_host: self.per_host.unwrap_or(defaults.per_host).max(1),
            max_depth: self.max_depth.unwrap_or(defaults.max_depth),
            max_sitemaps: self.max_sitemaps.unwrap_or(defaults.max_sitemaps),
            max_urls: self.max_urls.unwrap_or(defaults.max_urls),
            read: ReadOptions { limits },
            scope: self.scope,
            cross_submission: self.cross_submission,
            ..defaults
        }
    }

    /// The process's HTTP client for these options (`many`: for many sites at once).
    pub fn fetcher(&self, py: Python<'_>, many: bool) -> PyResult<Fetcher> {
        if many {
            input::sites_fetcher(py, self.max_bytes, self.timeout)
        } else {
            input::fetcher(py, self.max_bytes, self.timeout)
        }
    }
}

/// A discovery running on the package's runtime: aborted when dropped (an iterator dropped
/// early stops its discovery), its result waited for without the GIL.
pub struct Job<T>(Option<JoinHandle<T>>);

impl<T: Send + 'static> Job<T> {
    /// Starts `work` on the package's runtime.
    pub fn spawn(work: impl Future<Output = T> + Send + 'static) -> PyResult<Self> {
        Ok(Job(Some(runtime()?.spawn(work))))
    }

    /// The job's result, once (`None` afterwards), waited for without the GIL.
    pub fn wait(&mut self, py: Python<'_>) -> PyResult<Option<T>> {
        py.detach(|| self.wait_blocking()).map_err(|e| errors::plain(py, e))
    }

    /// [`Job::wait`] on a thread that does not hold the GIL (an Arrow stream's consumer).
    pub fn wait_blocking(&mut self) -> Result<Option<T>, String> {
        let Some(job) = self.0.take() else { return Ok(None) };
        let rt = runtime().map_err(|_| "the HTTP runtime could not be started".to_string())?;
        rt.block_on(job).map(Some).map_err(|e| format!("the discovery stopped: {e}"))
    }
}

impl<T> Drop for Job<T> {
    fn drop(&mut self) {
        if let Some(job) = self.0.take() {
            job.abort();
        }
    }
}

/// The verdict on one finished site, as `discover --sites --summary` gives it: `None` when it
/// is a success, else why not (the summary's `error`, or how it ended).
pub fn site_failure(s: &SiteSummary<'_>) -> Option<String> {
    (!s.ok).then(|| s.error.clone().unwrap_or_else(|| format!("the discovery ended: {}", s.ended)))
}

/// Whether a finished site gave no URL although its sitemaps were read (`no-urls`): every
/// URL out of scope, every entry skipped, or no entry at all.
pub fn no_urls(s: &SiteSummary<'_>) -> bool {
    s.ended == "no-urls"
}

/// The message of a site that gave no URL, naming what the summary counted (URLs out of
/// scope, sitemaps read) beside its reason.
pub fn no_url_message(site: &str, s: &SiteSummary<'_>, summary: Option<&Summary>) -> String {
    let why = s.error.clone().unwrap_or_else(|| "the sitemaps list no URL".into());
    let mut said = vec![format!("{} sitemaps read", s.sitemaps + s.not_modified)];
    if s.out_of_scope > 0 {
        said.push(format!(
            "{} URLs out of their sitemap's scope, dropped as search engines drop them (scope=False keeps them)",
            s.out_of_scope
        ));
    }
    if let Some(sm) = summary.filter(|sm| sm.duplicates > 0) {
        said.push(format!("{} duplicates", sm.duplicates));
    }
    format!("{site}: no URL: {why} ({})", said.join("; "))
}
