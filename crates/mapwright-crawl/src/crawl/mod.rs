//! The site crawler: from a start URL, every page reachable by links within one origin and
//! path prefix, fetched politely, read as it streams, and turned into sitemap entries plus a
//! report of what was left out and why.
//!
//! One coordinator owns the frontier, the URL table and the report, so none of them needs a
//! lock; up to `concurrency` fetch tasks run on the tokio runtime and send back plain
//! [`Fetch`] results. Every result goes through one function (`Run::apply`), live or
//! replayed from the `--state` log, which is what makes a resumed crawl end exactly where an
//! uninterrupted one would.

pub mod page;
pub mod parse;
pub mod report;
mod run;
pub mod state;
pub mod url;

pub use page::{Fetch, Page};
pub use report::{BrokenLink, CrawlReport, LeftOut, Stop};
pub use run::Progress;

use crate::Error;
use mapwright_core::UrlEntry;
use mapwright_fetch::Fetcher;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// What to crawl and how politely. [`CrawlConfig::new`] gives the defaults.
#[derive(Clone, Debug)]
pub struct CrawlConfig {
    /// Where the crawl starts.
    pub start: String,
    /// The scope: its origin and folder; default the start URL's.
    pub base: Option<String>,
    /// Globs over path and query a URL must match to be crawled (none: all).
    pub include: Vec<String>,
    /// Globs over path and query of URLs not to crawl.
    pub exclude: Vec<String>,
    /// Globs over query parameter names removed from URLs (`utm_*`).
    pub strip_query: Vec<String>,
    /// Requests in flight at once. Default 8.
    pub concurrency: usize,
    /// Most requests per second to the host; robots.txt Crawl-delay slows it further.
    pub rate: Option<f64>,
    /// Largest Crawl-delay honoured (a larger one is capped). Default 30 s.
    pub max_crawl_delay: Duration,
    /// Links followed from the start page at most (the start page is depth 0).
    pub max_depth: Option<u32>,
    /// Pages requested at most (in all runs of a resumed crawl).
    pub max_pages: Option<u64>,
    /// Time after which no new request starts.
    pub max_time: Option<Duration>,
    /// Bytes of one page read (after gzip removal); the rest is not read. Default 10 MiB.
    pub max_page_bytes: u64,
    /// Media types listed besides HTML (`application/pdf`, `image/*`).
    pub include_types: Vec<String>,
    /// Add the pages' `<img src>` as image extension entries.
    pub images: bool,
    /// Add the pages' hreflang alternates as `xhtml:link` entries.
    pub alternates: bool,
    /// Fetch what robots.txt disallows (for one's own staging site).
    pub ignore_robots: bool,
    /// Folder of the resumable state.
    pub state: Option<PathBuf>,
}

impl CrawlConfig {
    /// The defaults, crawling from `start`.
    pub fn new(start: impl Into<String>) -> Self {
        CrawlConfig {
            start: start.into(),
            base: None,
            include: Vec::new(),
            exclude: Vec::new(),
            strip_query: Vec::new(),
            concurrency: 8,
            rate: None,
            max_crawl_delay: Duration::from_secs(30),
            max_depth: None,
            max_pages: None,
            max_time: None,
            max_page_bytes: 10 << 20,
            include_types: Vec::new(),
            images: false,
            alternates: false,
            ignore_robots: false,
            state: None,
        }
    }
}

/// Stops a running crawl from outside (a Ctrl-C handler): in-flight requests are dropped, the
/// state keeps every finished page, and the report says [`Stop::Interrupted`].
#[derive(Clone, Default)]
pub struct StopHandle {
    inner: Arc<(AtomicBool, Notify)>,
}

impl StopHandle {
    /// Asks the crawl to stop.
    pub fn stop(&self) {
        self.inner.0.store(true, Ordering::SeqCst);
        self.inner.1.notify_one();
    }

    /// Whether a stop was asked.
    pub fn is_stopped(&self) -> bool {
        self.inner.0.load(Ordering::SeqCst)
    }

    async fn wait(&self) {
        while !self.is_stopped() {
            self.inner.1.notified().await;
        }
    }
}

/// A crawl, configured and ready to run.
pub struct Crawler {
    config: CrawlConfig,
    fetcher: Fetcher,
    stop: StopHandle,
}

impl Crawler {
    /// A crawler over `fetcher` (its user agent is the one robots.txt is matched against).
    pub fn new(config: CrawlConfig, fetcher: Fetcher) -> Self {
        Crawler { config, fetcher, stop: StopHandle::default() }
    }

    /// A handle to stop the crawl while it runs.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Crawls, handing each listed entry to `sink` as soon as it is known (entries of a
    /// resumed crawl's earlier runs first), and `progress` after each page. A sink error
    /// stops the crawl. The report says what was left out, what is broken, and whether the
    /// crawl stopped early.
    pub async fn run(
        self,
        sink: impl FnMut(UrlEntry) -> std::io::Result<()>,
        progress: impl FnMut(&Progress),
    ) -> Result<CrawlReport, Error> {
        run::run(self.config, self.fetcher, self.stop, sink, progress).await
    }
}
