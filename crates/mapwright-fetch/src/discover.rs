//! Discovery: from a site URL to every URL its sitemaps list. robots.txt `Sitemap:` lines (or
//! the usual paths), indexes followed with bounded concurrency per host, depth and count
//! limits, cycle detection, deduplication, and scope judged as a consumer: the core's
//! [`Scope::vouched`] with who vouches for each sitemap (the robots.txt that named it or an
//! index above it, else its own host's robots.txt, else nobody), plus cross-submission
//! through a URL host's robots.txt.

use crate::client::{Fetched, Validators};
use crate::robots::RobotsCache;
use crate::sitemap::ReadReport;
use crate::state::{SitemapState, State};
use crate::{Error, Fetcher};
use mapwright_core::{Finding, Format, Loc, ReadOptions, Scope, UrlEntry, Voucher};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

mod collect;
use collect::{Collector, read_sitemap};

/// Where sitemaps are looked for when robots.txt names none, in this order.
pub const FALLBACK_PATHS: &[&str] =
    &["/sitemap.xml", "/sitemap_index.xml", "/sitemap.xml.gz", "/sitemap-index.xml", "/sitemap.txt", "/sitemaps.xml"];

/// Limits and switches of a discovery. Defaults in [`DiscoverConfig::default`].
#[derive(Clone, Debug)]
pub struct DiscoverConfig {
    /// Requests in flight per host. Default 4.
    pub per_host: usize,
    /// Deepest index nesting followed (seeds are depth 0). Default 4.
    pub max_depth: usize,
    /// Sitemaps fetched at most, the starting ones (robots.txt's `Sitemap:` lines, the
    /// sitemaps given) included; each one past it is reported (an [`Event::Notice`],
    /// [`Summary::over_sitemap_limit`]). Default 10,000.
    pub max_sitemaps: usize,
    /// Distinct URLs output at most. Default 50,000,000.
    pub max_urls: u64,
    /// Limits of the reader for each file.
    pub read: ReadOptions,
    /// Only list sitemaps: leaf sitemaps are read up to their first entry.
    pub sitemaps_only: bool,
    /// Drop URLs out of the scope of their sitemap (PROTOCOL.md section 5), as search
    /// engines do: a sitemap reached through a host's robots.txt (directly or through indexes)
    /// may list any URL of that host; one nobody vouches for, only URLs under its folder.
    /// Default true; false keeps every URL, as most sitemap libraries do.
    pub scope: bool,
    /// Keep out-of-scope URLs whose host's robots.txt names the sitemap. Default true.
    pub cross_submission: bool,
    /// Drop a URL listed twice only within one sitemap: a URL two sitemaps list comes out
    /// once per sitemap, as advertools' `sitemap_to_df` gives it (the Python package's data
    /// frames). Default false: each URL once per run. Either way duplicates are judged by the
    /// URL's normal form, and the first entry is kept.
    pub dedupe_per_sitemap: bool,
    /// URLs sent per [`Event::Urls`]. Default 1,024.
    pub batch: usize,
    /// Longest robots.txt `Crawl-delay` honoured between two sitemap requests to one host (a
    /// larger one is capped). Default 10 s.
    pub max_crawl_delay: Duration,
    /// Longest time one discovery ([`Discovery::run_site`], [`Discovery::run_sitemaps`])
    /// may take, robots.txt included: a host that trickles bytes just inside every per-request
    /// timeout, or lists thousands of slow sitemaps, would otherwise hold its slot of a
    /// many-site run for hours. When it passes, every request of the discovery is dropped, the
    /// URLs already sent stand and [`Summary::deadline`] says so. Default `None` (no limit
    /// beyond the per-request ones); a many-site run should set one
    /// ([`DEFAULT_SITE_DEADLINE`] is the CLI's).
    pub site_deadline: Option<Duration>,
}

/// The per-site time limit `discover --sites` applies unless told otherwise: ten minutes, far
/// beyond what a site of 50,000,000 URLs takes over a fast link, short enough that a list of
/// 10,000 hosts is not held up for long by a few that trickle.
pub const DEFAULT_SITE_DEADLINE: Duration = Duration::from_secs(600);

impl Default for DiscoverConfig {
    fn default() -> Self {
        DiscoverConfig {
            per_host: 4,
            max_depth: 4,
            max_sitemaps: 10_000,
            max_urls: 50_000_000,
            read: ReadOptions::default(),
            sitemaps_only: false,
            scope: true,
            cross_submission: true,
            dedupe_per_sitemap: false,
            batch: 1024,
            max_crawl_delay: Duration::from_secs(10),
            site_deadline: None,
        }
    }
}

/// What happened to one sitemap.
#[derive(Debug)]
pub enum Outcome {
    /// Fetched and read to the end (or to [`SitemapStatus::error`]).
    Fetched,
    /// 304 Not Modified (incremental mode).
    NotModified,
    /// Not fetched: its index `lastmod` is unchanged since the last run (incremental mode).
    Skipped,
    /// Could not be fetched or read at all.
    Failed(Error),
}

/// One sitemap's report, sent as an [`Event::Sitemap`] once it is done.
#[derive(Debug)]
pub struct SitemapStatus {
    /// The URL as listed.
    pub url: Arc<str>,
    /// The URL after redirects.
    pub final_url: Option<String>,
    /// The index that listed it (`None` for seeds).
    pub parent: Option<Arc<str>>,
    /// 0 for seeds.
    pub depth: usize,
    /// What happened.
    pub outcome: Outcome,
    /// The detected format.
    pub format: Option<Format>,
    /// URL entries read (before deduplication and scope).
    pub urls: u64,
    /// Child sitemaps listed.
    pub children: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Bytes of the sitemap once gzip is removed (what the protocol's 50 MiB counts).
    pub bytes_read: u64,
    /// The response's `ETag`, as sent.
    pub etag: Option<String>,
    /// The response's `Last-Modified`, as sent.
    pub last_modified: Option<String>,
    /// A fault after some entries were read (the entries before it are kept).
    pub error: Option<Error>,
}

/// What a discovery reports while it runs, in order per sitemap.
#[derive(Debug)]
pub enum Event {
    /// New distinct URLs, in scope, from one sitemap.
    Urls {
        /// The sitemap (as listed) they came from.
        sitemap: Arc<str>,
        /// The entries.
        urls: Vec<UrlEntry>,
    },
    /// A sitemap is done.
    Sitemap(SitemapStatus),
    /// A finding of the reader, or an out-of-scope or cross-site drop.
    Finding {
        /// The sitemap it is about.
        sitemap: Arc<str>,
        /// The finding.
        finding: Finding,
    },
    /// Something worth saying that is no rule (a cycle, the depth limit, robots.txt notes).
    Notice {
        /// The sitemap it is about, if any.
        sitemap: Option<Arc<str>>,
        /// The message.
        message: String,
    },
}

/// Totals of a discovery, for the summary line.
#[derive(Debug, Default)]
pub struct Summary {
    /// Where seeds came from: `robots.txt`, `usual paths` or `given`.
    pub seeds_from: String,
    /// Sitemaps fetched (200).
    pub fetched: u64,
    /// Sitemaps that answered 304.
    pub not_modified: u64,
    /// Sitemaps skipped on an unchanged index lastmod.
    pub skipped: u64,
    /// Sitemaps that failed, with the reason.
    pub failed: Vec<(String, String)>,
    /// Distinct URLs output.
    pub urls: u64,
    /// URLs dropped as duplicates.
    pub duplicates: u64,
    /// URLs dropped as out of scope (not cross-submitted).
    pub out_of_scope: u64,
    /// Sitemaps whose folder rule was waived because a robots.txt vouches for them.
    pub vouched: u64,
    /// URLs accepted through cross-submission.
    pub cross_submitted: u64,
    /// URLs dropped past `max_urls`.
    pub over_limit: u64,
    /// Sitemaps not followed: cycles, depth, count limit, cross-site children.
    pub not_followed: u64,
    /// Of those, sitemaps not fetched because `max_sitemaps` was reached (starting ones too).
    pub over_sitemap_limit: u64,
    /// Bytes received for sitemaps.
    pub bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Every sitemap seen, with whether it was read to its end this run (for incremental
    /// change tracking: only a sitemap read to its end replaces its stored URLs). A sitemap
    /// that failed part-way, was not followed (depth, count limit, stop) or was still being
    /// read when the deadline passed is listed as not read.
    pub sitemaps: Vec<(String, bool)>,
    /// The discovery was cut by [`DiscoverConfig::site_deadline`]: the counts are of what was
    /// done before it; sitemaps still being read then are in none of them.
    pub deadline: bool,
    /// The site was not discovered because the same site (its origin) came earlier in the
    /// list of a many-site run ([`crate::run_sites`]): its rows are under that first listing.
    pub duplicate: bool,
    /// How the site's robots.txt answered ([`Discovery::run_site`] only). When it is
    /// [`RobotsAnswer::Unreachable`](crate::RobotsAnswer::Unreachable), nothing of the site
    /// was fetched (RFC 9309: a complete disallow); when
    /// [`RobotsAnswer::Unavailable`](crate::RobotsAnswer::Unavailable), the usual paths were
    /// read with nobody vouching for them.
    pub robots: Option<crate::RobotsAnswer>,
}

/// A discovery engine; one per run.
pub struct Discovery {
    fetcher: Fetcher,
    config: DiscoverConfig,
    robots: RobotsCache,
    state: Option<State>,
}

struct Task {
    url: Arc<str>,
    parent: Option<Arc<str>>,
    depth: usize,
    ancestors: Arc<Vec<String>>,
    /// A fallback path: a failure is not reported, only noted.
    optional: bool,
    index_lastmod: Option<String>,
    /// Who vouches for it: the robots.txt that named it (or an index above it). `None` for a
    /// sitemap given bare: its own host's robots.txt is asked.
    voucher: Option<Voucher>,
}

/// One host's politeness: requests in flight, and the earliest time of its next request when
/// its robots.txt asks for a Crawl-delay.
struct Host {
    permits: Arc<Semaphore>,
    next: crate::oai::HostClock,
}

struct Shared {
    fetcher: Fetcher,
    config: DiscoverConfig,
    robots: RobotsCache,
    state: Option<State>,
    events: mpsc::Sender<Event>,
    urls: Mutex<HashSet<u64, BuildHasherDefault<Prehashed>>>,
    emitted: AtomicU64,
    stop: AtomicBool,
    /// The deadline passed: set under the `urls` lock, so no batch is counted or sent after.
    expired: AtomicBool,
    /// Set to true when the deadline passes: wakes a reader waiting on another host's
    /// robots.txt (cross-submission) so it ends at once.
    expire: tokio::sync::watch::Sender<bool>,
    hosts: Mutex<HashMap<String, Arc<Host>>>,
    totals: Mutex<Summary>,
}

impl Discovery {
    /// A discovery with its own robots.txt cache.
    pub fn new(fetcher: Fetcher, config: DiscoverConfig) -> Self {
        Discovery { fetcher, config, robots: RobotsCache::new(), state: None }
    }

    /// Incremental mode: conditional requests and index-lastmod skips from `state`, which is
    /// updated as sitemaps are fetched.
    pub fn with_state(mut self, state: State) -> Self {
        self.state = Some(state);
        self
    }

    /// Discovers the sitemaps of `site` (any URL of it) and streams their URLs to `events`.
    pub async fn run_site(&self, site: &str, events: mpsc::Sender<Event>) -> Result<Summary, Error> {
        let began = Instant::now();
        // A deadline past what the clock holds is no deadline (not an overflow panic).
        let deadline = self.config.site_deadline.and_then(|d| began.checked_add(d));
        let start = self.fetcher.check_url(site)?;
        let robots = match until(deadline, self.robots.get(&self.fetcher, start.as_str())).await {
            Some(r) => r,
            None => {
                let summary = Summary { seeds_from: "robots.txt".into(), ..Summary::default() };
                return Ok(self.expired(summary, began, &events).await);
            }
        };
        match &robots.answer {
            crate::RobotsAnswer::Read => {
                if let Some(note) = &robots.note {
                    let _ = events.send(Event::Notice { sitemap: None, message: note.clone() }).await;
                }
            }
            answer @ crate::RobotsAnswer::Unreachable { .. } => {
                // RFC 9309 2.3.1.4: assume a complete disallow; the usual paths are not read.
                let message = answer.describe();
                let _ = events.send(Event::Notice { sitemap: None, message }).await;
                let robots = Some(answer.clone());
                let summary = Summary { seeds_from: "robots.txt".into(), robots, ..Summary::default() };
                return Ok(Summary { elapsed: began.elapsed(), ..summary });
            }
            answer @ crate::RobotsAnswer::Unavailable { .. } => {
                let _ = events.send(Event::Notice { sitemap: None, message: answer.describe() }).await;
            }
        }
        if robots.truncated {
            let msg =
                format!("robots.txt is larger than {} bytes: the rest was ignored", crate::robots::MAX_ROBOTS_BYTES);
            let _ = events.send(Event::Notice { sitemap: None, message: msg }).await;
        }
        let origin = start.origin().ascii_serialization();
        let (seeds, optional, from, voucher) = if robots.sitemaps.is_empty() {
            // Nobody named these: the folder rule binds (a root sitemap covers the host anyway).
            (FALLBACK_PATHS.iter().map(|p| format!("{origin}{p}")).collect(), true, "usual paths", Voucher::Nobody)
        } else {
            (robots.sitemaps.clone(), false, "robots.txt", Voucher::Robots(origin))
        };
        let mut summary = self.run(seeds, optional, from, Some(voucher), events, began).await?;
        summary.robots = Some(robots.answer.clone());
        Ok(summary)
    }

    /// Reads the sitemaps a robots.txt names (`robots_url`, its `Sitemap:` lines, and what
    /// their indexes list), without the usual paths [`Discovery::run_site`] falls back on: a
    /// robots.txt that cannot be fetched, or names no sitemap, is an error. robots.txt vouches
    /// for what it names, as in `run_site`.
    pub async fn run_robots(&self, robots_url: &str, events: mpsc::Sender<Event>) -> Result<Summary, Error> {
        let start = self.fetcher.check_url(robots_url)?;
        let robots = crate::robots::fetch(&self.fetcher, start.as_str()).await?;
        if robots.sitemaps.is_empty() {
            let why = robots.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            return Err(Error::Http {
                url: robots_url.to_string(),
                message: format!("robots.txt names no sitemap{why}"),
            });
        }
        let origin = start.origin().ascii_serialization();
        self.run(robots.sitemaps.clone(), false, "robots.txt", Some(Voucher::Robots(origin)), events, Instant::now())
            .await
    }

    /// Reads the given sitemaps (and what their indexes list) and streams their URLs. Each
    /// seed's own host's robots.txt is asked whether it vouches for it.
    pub async fn run_sitemaps(&self, seeds: Vec<String>, events: mpsc::Sender<Event>) -> Result<Summary, Error> {
        self.run(seeds, false, "given", None, events, Instant::now()).await
    }

    /// Reads the children an index lists when the index itself was read elsewhere (a local
    /// file whose children the Python package's frames read), as a fetched index's children
    /// are read: under the same [`DiscoverConfig::max_sitemaps`], and, with
    /// [`DiscoverConfig::scope`], a child on another site than `index_url` is not followed
    /// (`index-cross-site`, unless a robots.txt vouches for it: the index's host's robots.txt
    /// naming the index, or the child's host's), the others vouched for as the index is.
    /// Without the index's URL no site can be judged: each child is then a sitemap given
    /// bare ([`Discovery::run_sitemaps`]).
    pub async fn run_children(
        &self,
        index_url: Option<&str>,
        children: Vec<String>,
        events: mpsc::Sender<Event>,
    ) -> Result<Summary, Error> {
        let began = Instant::now();
        let index = index_url.and_then(|u| Loc::parse(u).ok());
        let (Some(index), true) = (index, self.config.scope) else {
            return self.run(children, false, "given", None, events, began).await;
        };
        let voucher = robots_voucher(&self.fetcher, &self.robots, index.as_str(), index.as_str()).await;
        let site = Scope::of_site(&index);
        let (mut kept, mut dropped) = (Vec::new(), 0);
        for child in children {
            let followed = match Loc::parse(&child) {
                Err(_) => true, // fetched, and its failure reported, as a bad seed is
                Ok(loc) => {
                    collect::child_on_site(&site, voucher.origin(), &loc)
                        || (self.config.cross_submission
                            && self.robots.get(&self.fetcher, loc.as_str()).await.lists_sitemap(index.as_str()))
                }
            };
            if followed {
                kept.push(child);
                continue;
            }
            dropped += 1;
            let message = collect::cross_site_child(&child, index.as_str());
            let finding = Finding::new(mapwright_core::Rule::IndexCrossSite, None, message).with_loc(&child);
            let _ = events.send(Event::Finding { sitemap: index.as_str().into(), finding }).await;
        }
        let mut summary = self.run(kept, false, "index", Some(voucher), events, began).await?;
        summary.not_followed += dropped;
        Ok(summary)
    }

    /// The summary of a discovery its deadline cut, with a notice saying so.
    async fn expired(&self, mut summary: Summary, began: Instant, events: &mpsc::Sender<Event>) -> Summary {
        let limit = self.config.site_deadline.unwrap_or_default();
        summary.deadline = true;
        summary.elapsed = began.elapsed();
        let message = format!(
            "the discovery took longer than its deadline ({} s): stopped; the URLs sent before it stand",
            limit.as_secs_f64()
        );
        let _ = events.send(Event::Notice { sitemap: None, message }).await;
        summary
    }

    async fn run(
        &self,
        seeds: Vec<String>,
        optional: bool,
        from: &str,
        voucher: Option<Voucher>,
        events: mpsc::Sender<Event>,
        began: Instant,
    ) -> Result<Summary, Error> {
        // A deadline past what the clock holds is no deadline (not an overflow panic).
        let deadline = self.config.site_deadline.and_then(|d| began.checked_add(d));
        let shared = Arc::new(Shared {
            fetcher: self.fetcher.clone(),
            config: self.config.clone(),
            robots: self.robots.clone(),
            state: self.state.clone(),
            events,
            // Room for a batch from the start: a many-site run makes thousands of these sets,
            // and growing each from empty rehashed it eight times over its first thousand URLs.
            urls: Mutex::new(HashSet::with_capacity_and_hasher(self.config.batch.max(1), Default::default())),
            emitted: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            expired: AtomicBool::new(false),
            expire: tokio::sync::watch::Sender::new(false),
            hosts: Mutex::new(HashMap::new()),
            totals: Mutex::new(Summary { seeds_from: from.to_string(), ..Summary::default() }),
        });
        let mut seen: HashSet<String> = HashSet::new();
        let mut set = JoinSet::new();
        let mut queued = 0usize;
        // Every sitemap spawned: those the deadline cuts are recorded as not read.
        let mut spawned: Vec<Arc<str>> = Vec::new();
        for s in seeds {
            let task = Task {
                url: s.as_str().into(),
                parent: None,
                depth: 0,
                ancestors: Arc::new(Vec::new()),
                optional,
                index_lastmod: None,
                voucher: voucher.clone(),
            };
            if !seen.insert(normalise(&s)) {
                continue;
            }
            // The cap counts every sitemap fetched, seeds too (a robots.txt may name
            // thousands); the usual paths, a few probes most of which are not there, are
            // always tried.
            if queued >= shared.config.max_sitemaps && !optional {
                let message = format!("more than {} sitemaps: {s} not fetched", shared.config.max_sitemaps);
                {
                    let mut totals = shared.totals.lock().expect("totals");
                    totals.over_sitemap_limit += 1;
                    totals.not_followed += 1;
                    totals.sitemaps.push((s, false));
                }
                let _ = shared.events.send(Event::Notice { sitemap: None, message }).await;
                continue;
            }
            queued += 1;
            spawned.push(task.url.clone());
            set.spawn(process(shared.clone(), task));
        }
        let mut cut = false;
        while let Some(joined) = match until(deadline, set.join_next()).await {
            Some(next) => next,
            None => {
                cut = true;
                None
            }
        } {
            let children = joined.map_err(|e| Error::Http { url: String::new(), message: e.to_string() })?;
            for child in children {
                let key = normalise(&child.url);
                let cycle = child.ancestors.iter().any(|a| normalise(a) == key);
                let reason = if cycle {
                    Some(format!(
                        "{} lists itself or an index above it (a cycle): not followed",
                        child.parent.as_deref().unwrap_or("")
                    ))
                } else if !seen.insert(key) {
                    None // listed twice: fetched once, silently
                } else if child.depth > shared.config.max_depth {
                    Some(format!(
                        "{} is nested deeper than {} indexes: not followed",
                        child.url, shared.config.max_depth
                    ))
                } else if queued >= shared.config.max_sitemaps {
                    shared.totals.lock().expect("totals").over_sitemap_limit += 1;
                    Some(format!("more than {} sitemaps: {} not followed", shared.config.max_sitemaps, child.url))
                } else if shared.stop.load(Ordering::Relaxed) {
                    Some(format!("stopped (URL limit reached or output closed): {} not followed", child.url))
                } else {
                    queued += 1;
                    spawned.push(child.url.clone());
                    set.spawn(process(shared.clone(), child));
                    continue;
                };
                if let Some(message) = reason {
                    {
                        let mut totals = shared.totals.lock().expect("totals");
                        totals.not_followed += 1;
                        // A cycle's child is an index above it, recorded when it was read; any
                        // other was listed but not read: what the state holds of it stays.
                        if !cycle {
                            totals.sitemaps.push((child.url.to_string(), false));
                        }
                    }
                    let _ = shared.events.send(Event::Notice { sitemap: child.parent.clone(), message }).await;
                }
            }
        }
        if cut {
            // No URL is sent from now on (a reader still running drops its batches), so the
            // count below is the count of rows the caller got.
            {
                let _seen = shared.urls.lock().expect("url set");
                shared.expired.store(true, Ordering::Relaxed);
                shared.stop.store(true, Ordering::Relaxed);
            }
            // Whether or not anyone listens now: a pager made later still sees it.
            shared.expire.send_replace(true);
            // Dropping the tasks drops their requests and body streams; a reader blocked on
            // a body then sees it end (see `sitemap::read_response`).
            set.shutdown().await;
        }
        let mut summary = std::mem::take(&mut *shared.totals.lock().expect("totals"));
        summary.urls = shared.emitted.load(Ordering::Relaxed);
        if cut {
            let done: HashSet<&str> = summary.sitemaps.iter().map(|(u, _)| u.as_str()).collect();
            let cut_short: Vec<String> =
                spawned.iter().filter(|u| !done.contains(&***u)).map(|u| u.to_string()).collect();
            summary.sitemaps.extend(cut_short.into_iter().map(|u| (u, false)));
            return Ok(self.expired(summary, began, &shared.events).await);
        }
        summary.elapsed = began.elapsed();
        Ok(summary)
    }
}

/// `fut`'s output, or `None` when `deadline` passes first.
async fn until<T>(deadline: Option<Instant>, fut: impl std::future::Future<Output = T>) -> Option<T> {
    match deadline {
        None => Some(fut.await),
        Some(t) => tokio::time::timeout_at(t.into(), fut).await.ok(),
    }
}

/// The dedup sets hold xxh3 hashes already: hashing them again would be wasted work.
#[derive(Default)]
pub(crate) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn normalise(u: &str) -> String {
    url::Url::parse(u.trim()).map(|u| u.to_string()).unwrap_or_else(|_| u.trim().to_string())
}

/// Who vouches for a sitemap given bare (PROTOCOL.md section 5): the robots.txt of its own
/// host (after redirects, then as requested) when a `Sitemap:` line names it, else nobody.
/// `read` and `validate` of a URL ask this, as discovery does for `--sitemap` seeds, so one
/// sitemap gets one verdict.
pub async fn robots_voucher(fetcher: &Fetcher, robots: &RobotsCache, requested: &str, final_url: &str) -> Voucher {
    let mut origins: Vec<String> = Vec::new();
    for u in [final_url, requested] {
        if let Ok(p) = url::Url::parse(u) {
            let o = p.origin().ascii_serialization();
            if !origins.contains(&o) {
                origins.push(o);
            }
        }
    }
    for origin in origins {
        let r = robots.get(fetcher, &format!("{origin}/")).await;
        if r.lists_sitemap(requested) || r.lists_sitemap(final_url) {
            return Voucher::Robots(origin);
        }
    }
    Voucher::Nobody
}

/// Fetches and reads one sitemap; returns the children to follow.
async fn process(shared: Arc<Shared>, task: Task) -> Vec<Task> {
    let host = url::Url::parse(&task.url).map(|u| u.origin().ascii_serialization()).unwrap_or_default();
    let host = {
        let mut hosts = shared.hosts.lock().expect("hosts");
        hosts
            .entry(host)
            .or_insert_with(|| {
                Arc::new(Host {
                    permits: Arc::new(Semaphore::new(shared.config.per_host.max(1))),
                    next: Arc::new(Mutex::new(None)),
                })
            })
            .clone()
    };
    let _permit = host.permits.clone().acquire_owned().await.expect("semaphore never closed");
    pace(&shared, &host, &task.url).await;
    let mut status = SitemapStatus {
        url: task.url.clone(),
        final_url: None,
        parent: task.parent.clone(),
        depth: task.depth,
        outcome: Outcome::Fetched,
        format: None,
        urls: 0,
        children: 0,
        bytes: 0,
        bytes_read: 0,
        etag: None,
        last_modified: None,
        error: None,
    };
    let previous = match &shared.state {
        Some(st) => st.sitemap(&task.url).await.ok().flatten(),
        None => None,
    };
    if let (Some(prev), Some(lm)) = (&previous, &task.index_lastmod) {
        if prev.index_lastmod.as_deref() == Some(lm.as_str()) {
            status.outcome = Outcome::Skipped;
            finish(&shared, status, false).await;
            return Vec::new();
        }
    }
    let validators =
        previous.as_ref().map(|p| Validators { etag: p.etag.clone(), last_modified: p.last_modified.clone() });
    let resp = match shared.fetcher.get(&task.url, validators.as_ref()).await {
        Ok(Fetched::Body(r)) => r,
        Ok(Fetched::NotModified(meta)) => {
            status.final_url = Some(meta.final_url);
            status.outcome = Outcome::NotModified;
            let mut children = Vec::new();
            if let (Some(st), Some(mut prev)) = (&shared.state, previous) {
                prev.index_lastmod = task.index_lastmod.clone().or(prev.index_lastmod);
                let _ = st.put_sitemap(&task.url, &prev).await;
                // An unchanged index still lists what it listed: visit those children again
                // (each is skipped on its unchanged lastmod, or fetched conditionally).
                let ancestors = Arc::new(task.ancestors.iter().cloned().chain([task.url.to_string()]).collect());
                for (url, index_lastmod) in st.children(&task.url).await.unwrap_or_default() {
                    children.push(Task {
                        url: url.as_str().into(),
                        parent: Some(task.url.clone()),
                        depth: task.depth + 1,
                        ancestors: Arc::clone(&ancestors),
                        optional: false,
                        index_lastmod,
                        voucher: task.voucher.clone(),
                    });
                }
            }
            finish(&shared, status, false).await;
            return children;
        }
        Err(e) => {
            if task.optional && matches!(e, Error::Status { status: 404 | 410, .. }) {
                return Vec::new(); // a usual path that is not there: not a failure
            }
            status.outcome = Outcome::Failed(e);
            finish(&shared, status, false).await;
            return Vec::new();
        }
    };
    let final_url = resp.meta.final_url.clone();
    let meta = resp.meta.clone();
    status.final_url = Some(final_url.clone());
    status.etag = meta.validators.etag.clone();
    status.last_modified = meta.validators.last_modified.clone();
    let Ok(final_loc) = Loc::parse(&final_url) else {
        status.outcome =
            Outcome::Failed(Error::InvalidUrl { url: final_url, reason: "final URL is not a sitemap URL".into() });
        finish(&shared, status, false).await;
        return Vec::new();
    };
    let voucher = match &task.voucher {
        Some(v) => v.clone(),
        // Without scope nothing needs vouching: no robots.txt is asked for.
        None if !shared.config.scope => Voucher::Nobody,
        None => robots_voucher(&shared.fetcher, &shared.robots, &task.url, &final_url).await,
    };
    let scope = Scope::vouched(&final_loc, &voucher);
    if let Some(finding) = scope.waiver(&final_loc, &voucher).filter(|_| shared.config.scope) {
        shared.totals.lock().expect("totals").vouched += 1;
        let _ = shared.events.send(Event::Finding { sitemap: task.url.clone(), finding }).await;
    }
    let (sitemap, voucher_origin) = (task.url.clone(), voucher.origin().map(str::to_string));
    let visitor =
        Collector::new(shared.clone(), sitemap, final_url.clone(), voucher_origin, scope, Scope::of_site(&final_loc));
    // An OAI-PMH repository's next pages keep the host's Crawl-delay too, on the same clock.
    let paced = crawl_delay(&shared, &task.url).map(|delay| (Arc::clone(&host.next), delay));
    let (report, mut visitor) = match read_sitemap(resp, shared.config.read.clone(), visitor, paced).await {
        Ok(r) => r,
        Err(e) => {
            status.outcome = Outcome::Failed(e);
            finish(&shared, status, false).await;
            return Vec::new();
        }
    };
    let ReadReport { format, body, error, .. } = report;
    status.format = format;
    status.bytes = body.bytes;
    status.bytes_read = report.bytes_read;
    status.children = visitor.children.len() as u64;
    status.urls = report.entries - status.children;
    // Nothing read at all (an HTML page with status 200, a bomb stopped at once): a failure.
    match error {
        Some(e) if report.entries == 0 => status.outcome = Outcome::Failed(e),
        e => status.error = e,
    }
    // Read to its end: only then does its URL list replace the stored one (`State::finish_run`);
    // a read that failed part-way leaves the last complete list standing (all or nothing).
    let complete = !matches!(status.outcome, Outcome::Failed(_)) && status.error.is_none();
    if let (Some(st), true) = (&shared.state, complete) {
        let rec = SitemapState {
            etag: meta.validators.etag.clone(),
            last_modified: meta.validators.last_modified.clone(),
            index_lastmod: task.index_lastmod.clone(),
            content_hash: Some(body.hash),
            parent: task.parent.as_deref().map(str::to_string),
        };
        let _ = st.put_sitemap(&task.url, &rec).await;
    }
    let mut ancestors = (*task.ancestors).clone();
    ancestors.push(task.url.to_string());
    if final_url != *task.url {
        ancestors.push(final_url);
    }
    let ancestors = Arc::new(ancestors);
    let children = std::mem::take(&mut visitor.children)
        .into_iter()
        .map(|c| Task {
            url: c.loc.as_str().into(),
            parent: Some(task.url.clone()),
            depth: task.depth + 1,
            ancestors: ancestors.clone(),
            optional: false,
            index_lastmod: c.lastmod.map(|l| l.to_string()),
            // Every sitemap reached through a vouched index is vouched for the same way.
            voucher: Some(voucher.clone()),
        })
        .collect();
    finish(&shared, status, complete).await;
    children
}

/// Waits for the host's turn when its robots.txt (already read: the site's own, or a bare
/// sitemap's host's that scope asked for) sets a Crawl-delay for our agent, capped at
/// `max_crawl_delay`; requests to such a host are spaced by the delay, whatever `per_host`.
async fn pace(shared: &Shared, host: &Host, url: &str) {
    let Some(delay) = crawl_delay(shared, url) else { return };
    let slot = crate::oai::take_turn(&host.next, Instant::now(), delay);
    tokio::time::sleep_until(slot.into()).await;
}

/// The Crawl-delay the robots.txt of `url`'s host (already read) sets for our agent, capped at
/// `max_crawl_delay`; `None` when there is none.
fn crawl_delay(shared: &Shared, url: &str) -> Option<Duration> {
    let delay = shared.robots.cached(url).and_then(|r| r.crawl_delay)?;
    Some(delay.min(shared.config.max_crawl_delay)).filter(|d| !d.is_zero())
}

/// Adds a sitemap's status to the totals and sends it.
async fn finish(shared: &Shared, status: SitemapStatus, read: bool) {
    {
        let mut t = shared.totals.lock().expect("totals");
        match &status.outcome {
            Outcome::Fetched => t.fetched += 1,
            Outcome::NotModified => t.not_modified += 1,
            Outcome::Skipped => t.skipped += 1,
            Outcome::Failed(e) => t.failed.push((status.url.to_string(), e.to_string())),
        }
        if let Some(e) = &status.error {
            t.failed.push((status.url.to_string(), format!("stopped early: {e}")));
        }
        t.bytes += status.bytes;
        t.sitemaps.push((status.url.to_string(), read));
    }
    let _ = shared.events.send(Event::Sitemap(status)).await;
}
