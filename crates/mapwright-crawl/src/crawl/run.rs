//! The coordinator: the URL table, the frontier, dispatch under the limits, and
//! `Run::apply`, which turns one page's [`Fetch`] into listed entries, new links and report lines.

use super::page::{self, Fetch, Page, PageContext};
use super::report::{BrokenLink, CrawlReport, LeftOut, MAX_REFERRERS, Stop, reason};
use super::state::StateLog;
use super::url::{OutOfScope, Scope};
use super::{CrawlConfig, StopHandle};
use crate::Error;
use mapwright_core::{Alternate, Image, Lastmod, Loc, UrlEntry};
use mapwright_fetch::{Fetcher, Robots};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use url::Url;

/// Where the crawl is, after each page (for a progress bar).
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Pages finished (fetched or replayed).
    pub done: u64,
    /// URLs waiting to be fetched.
    pub queued: u64,
    /// URLs listed so far.
    pub listed: u64,
    /// Failed fetches so far.
    pub errors: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Queued,
    InFlight,
    Done,
    Skipped,
}

struct Node {
    url: String,
    depth: u32,
    st: St,
    fate: Option<(&'static str, Option<String>)>,
    failure: Option<(Option<u16>, String)>,
    referrers: Vec<u32>,
    linking_pages: u64,
}

struct Run<'a, S> {
    cfg: &'a CrawlConfig,
    scope: &'a Scope,
    robots: &'a Robots,
    nodes: Vec<Node>,
    index: HashMap<String, u32>,
    queue: VecDeque<u32>,
    sink: S,
    report: CrawlReport,
    errors: u64,
}

fn url_err(url: &str, e: impl std::fmt::Display) -> Error {
    Error::Url { url: url.to_string(), message: e.to_string() }
}

pub(super) async fn run<S, P>(
    cfg: CrawlConfig,
    fetcher: Fetcher,
    stop: StopHandle,
    sink: S,
    mut progress: P,
) -> Result<CrawlReport, Error>
where
    S: FnMut(UrlEntry) -> std::io::Result<()>,
    P: FnMut(&Progress),
{
    let started = Instant::now();
    let start = Url::parse(cfg.start.trim()).map_err(|e| url_err(&cfg.start, e))?;
    let base = match &cfg.base {
        Some(b) => Url::parse(b.trim()).map_err(|e| url_err(b, e))?,
        None => start.clone(),
    };
    let scope = Scope::new(&base, &cfg.include, &cfg.exclude, &cfg.strip_query)?;
    let start = scope.normalise(start).ok_or_else(|| url_err(&cfg.start, "not an http(s) URL"))?;
    if scope.check(&start) == Err(OutOfScope::Outside) {
        return Err(url_err(&cfg.start, format!("outside the scope {base}")));
    }
    let (robots, ctx) = prepare(&cfg, fetcher, &start, &base).await?;
    let mut run = Run {
        cfg: &cfg,
        scope: &scope,
        robots: &robots,
        nodes: Vec::new(),
        index: HashMap::new(),
        queue: VecDeque::new(),
        sink,
        report: CrawlReport { start: start.to_string(), ..CrawlReport::default() },
        errors: 0,
    };
    let mut log = match &cfg.state {
        Some(dir) => {
            let (log, records) = StateLog::open(dir, start.as_str(), base.as_str())?;
            run.discover(start.as_str(), 0, None);
            for r in records {
                let id = run.discover(&r.url, r.depth, None);
                // A page already taken as another's redirect target needs nothing more.
                if run.nodes[id as usize].st != St::Done {
                    run.apply(id, r.fetch)?;
                }
                run.report.resumed += 1;
            }
            Some(log)
        }
        None => {
            run.discover(start.as_str(), 0, None);
            None
        }
    };
    run.report.pages_fetched = run.report.resumed;
    let mut tasks = JoinSet::new();
    let deadline = cfg.max_time.map(|t| started + t);
    loop {
        if stop.is_stopped() {
            run.report.stopped = Some(Stop::Interrupted);
            tasks.abort_all();
            break;
        }
        if run.report.stopped.is_none() {
            run.dispatch(&mut tasks, &ctx, deadline);
        }
        if tasks.is_empty() {
            break;
        }
        let joined = tokio::select! {
            j = tasks.join_next() => j,
            () = stop.wait() => None,
        };
        let Some(joined) = joined else {
            run.report.stopped = Some(Stop::Interrupted);
            tasks.abort_all();
            break;
        };
        let (id, fetch) = joined.unwrap_or_else(|e| (u32::MAX, Fetch::Failed { status: None, error: e.to_string() }));
        let Some(node) = run.nodes.get(id as usize) else { continue };
        if let Some(log) = &mut log {
            log.append(&node.url, node.depth, &fetch)?;
        }
        run.report.pages_fetched += 1;
        run.apply(id, fetch)?;
        progress(&run.progress());
    }
    if let Some(log) = &mut log {
        log.sync()?;
    }
    let mut report = run.finish();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// robots.txt of the origin, and the context every fetch task shares (the politeness clock:
/// `--rate`, and robots.txt Crawl-delay up to `max_crawl_delay`).
async fn prepare(cfg: &CrawlConfig, fetcher: Fetcher, start: &Url, base: &Url) -> Result<(Robots, Arc<Ctx>), Error> {
    let robots = if cfg.ignore_robots {
        Robots::default()
    } else {
        match mapwright_fetch::robots::fetch(&fetcher, start.as_str()).await {
            Ok(r) => r,
            Err(e) => {
                let mut r = Robots::default();
                r.note = Some(format!("robots.txt not fetched: {e}"));
                r
            }
        }
    };
    let mut interval = cfg.rate.filter(|r| *r > 0.0).map_or(Duration::ZERO, |r| Duration::from_secs_f64(1.0 / r));
    if let Some(d) = robots.crawl_delay.filter(|_| !cfg.ignore_robots) {
        interval = interval.max(d.min(cfg.max_crawl_delay));
    }
    let agent_token = fetcher.config().user_agent.split(['/', ' ']).next().unwrap_or_default().to_string();
    let ctx = Arc::new(Ctx {
        page: PageContext {
            fetcher,
            scope: Scope::new(base, &cfg.include, &cfg.exclude, &cfg.strip_query)?,
            images: cfg.images,
            max_page_bytes: cfg.max_page_bytes.max(1024),
            agent_token,
        },
        interval,
        next: tokio::sync::Mutex::new(Instant::now()),
    });
    Ok((robots, ctx))
}

/// What every fetch task shares: the page context and the host's politeness clock.
struct Ctx {
    page: PageContext,
    interval: Duration,
    next: tokio::sync::Mutex<Instant>,
}

async fn fetch_one(ctx: Arc<Ctx>, id: u32, url: String) -> (u32, Fetch) {
    if !ctx.interval.is_zero() {
        // One clock for the host: each request waits for its slot, so the interval holds
        // whatever the concurrency.
        let mut next = ctx.next.lock().await;
        let now = Instant::now();
        if *next > now {
            tokio::time::sleep_until((*next).into()).await;
        }
        *next = Instant::now().max(*next) + ctx.interval;
    }
    (id, page::fetch(&ctx.page, &url).await)
}

impl<S: FnMut(UrlEntry) -> std::io::Result<()>> Run<'_, S> {
    fn progress(&self) -> Progress {
        Progress {
            done: self.report.pages_fetched,
            queued: self.queue.len() as u64,
            listed: self.report.listed,
            errors: self.errors,
        }
    }

    /// Starts fetches while there is room and no limit is reached.
    fn dispatch(&mut self, tasks: &mut JoinSet<(u32, Fetch)>, ctx: &Arc<Ctx>, deadline: Option<Instant>) {
        while tasks.len() < self.cfg.concurrency.max(1) {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                self.report.stopped = Some(Stop::TimeLimit);
                return;
            }
            let Some(id) = self.queue.pop_front() else { return };
            let node = &mut self.nodes[id as usize];
            if node.st != St::Queued {
                continue;
            }
            let started = self.report.pages_fetched + tasks.len() as u64;
            if self.cfg.max_pages.is_some_and(|m| started >= m) {
                self.queue.push_front(id);
                self.report.stopped = Some(Stop::PageLimit);
                return;
            }
            node.st = St::InFlight;
            tasks.spawn(fetch_one(ctx.clone(), id, node.url.clone()));
        }
    }

    /// The node of `url` (normalised), created and judged (scope, robots, depth) when new.
    fn discover(&mut self, url: &str, depth: u32, from: Option<u32>) -> u32 {
        let id = match self.index.get(url) {
            Some(&id) => {
                let n = &mut self.nodes[id as usize];
                let depth_skipped = n.st == St::Skipped && n.fate.as_ref().is_some_and(|f| f.0 == reason::DEPTH_LIMIT);
                if depth < n.depth && (n.st == St::Queued || depth_skipped) {
                    n.depth = depth;
                    if depth_skipped && self.cfg.max_depth.is_none_or(|m| depth <= m) {
                        n.st = St::Queued;
                        n.fate = None;
                        self.queue.push_back(id);
                    }
                }
                id
            }
            None => {
                let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
                let (st, fate) = self.judge(url, depth);
                self.nodes.push(Node {
                    url: url.to_string(),
                    depth,
                    st,
                    fate,
                    failure: None,
                    referrers: Vec::new(),
                    linking_pages: 0,
                });
                self.index.insert(url.to_string(), id);
                if st == St::Queued {
                    self.queue.push_back(id);
                }
                id
            }
        };
        if let Some(from) = from.filter(|f| *f != id) {
            let n = &mut self.nodes[id as usize];
            n.linking_pages += 1;
            if n.referrers.len() < MAX_REFERRERS {
                n.referrers.push(from);
            }
        }
        id
    }

    fn judge(&self, url: &str, depth: u32) -> (St, Option<(&'static str, Option<String>)>) {
        let excluded = Url::parse(url).map_or(true, |u| self.scope.check(&u).is_err());
        if excluded {
            (St::Skipped, Some((reason::EXCLUDED, None)))
        } else if !self.robots.allowed(url) {
            (St::Skipped, Some((reason::ROBOTS, None)))
        } else if self.cfg.max_depth.is_some_and(|m| depth > m) {
            (St::Skipped, Some((reason::DEPTH_LIMIT, None)))
        } else {
            (St::Queued, None)
        }
    }

    fn leave_out(&mut self, id: u32, why: &'static str, detail: Option<String>) {
        self.nodes[id as usize].fate = Some((why, detail));
    }

    /// Takes one page's result: the one place where fetches, live or replayed, take effect.
    fn apply(&mut self, id: u32, fetch: Fetch) -> Result<(), Error> {
        let depth = self.nodes[id as usize].depth;
        self.nodes[id as usize].st = St::Done;
        let page = match fetch {
            Fetch::Failed { status, error } => {
                self.errors += 1;
                self.leave_out(id, reason::STATUS, Some(error.clone()));
                self.nodes[id as usize].failure = Some((status, error));
                return Ok(());
            }
            Fetch::Page(p) => p,
        };
        let Some(target) = self.redirect_target(id, depth, &page) else { return Ok(()) };
        if page.truncated {
            self.report.truncated.push(page.final_url.clone());
        }
        if !page.nofollow {
            for link in &page.links {
                self.discover(link, depth + 1, Some(target));
            }
        }
        if let Some(c) = page.canonical.as_deref().filter(|c| *c != page.final_url) {
            self.leave_out(target, reason::CANONICAL, Some(c.to_string()));
            if Url::parse(c).is_ok_and(|u| self.scope.check(&u) != Err(OutOfScope::Outside)) {
                self.discover(c, depth + 1, Some(target));
            }
            return Ok(());
        }
        if page.noindex {
            self.leave_out(target, reason::NOINDEX, None);
            return Ok(());
        }
        if !page.html && !self.type_included(page.content_type.as_deref()) {
            self.leave_out(target, reason::NOT_HTML, page.content_type.clone());
            return Ok(());
        }
        self.list(&page)
    }

    /// The node the page's content belongs to: `id`, or its redirect target (`None` when the
    /// target is out of scope, forbidden, or handled by its own fetch).
    fn redirect_target(&mut self, id: u32, depth: u32, page: &Page) -> Option<u32> {
        if page.final_url == self.nodes[id as usize].url {
            return Some(id);
        }
        let fin = page.final_url.clone();
        let in_scope = Url::parse(&fin).is_ok_and(|u| self.scope.check(&u).is_ok());
        if !in_scope {
            self.leave_out(id, reason::REDIRECT, Some(format!("{fin} (out of scope)")));
            return None;
        }
        self.leave_out(id, reason::REDIRECT, Some(fin.clone()));
        let t = self.discover(&fin, depth, Some(id));
        let n = &mut self.nodes[t as usize];
        match n.st {
            St::Queued => {
                n.st = St::Done;
                Some(t)
            }
            // Robots forbids the target, or it is fetched (or being fetched) on its own.
            St::Skipped | St::InFlight | St::Done => None,
        }
    }

    fn type_included(&self, ct: Option<&str>) -> bool {
        let Some(ct) = ct else { return false };
        self.cfg.include_types.iter().any(|p| {
            let p = p.trim().to_ascii_lowercase();
            match p.strip_suffix("/*") {
                Some(major) => ct.split('/').next() == Some(major),
                None => p == ct,
            }
        })
    }

    fn list(&mut self, page: &Page) -> Result<(), Error> {
        let Ok(loc) = Loc::parse(&page.final_url) else { return Ok(()) };
        let mut e = UrlEntry::new(loc);
        e.lastmod = page.lastmod.as_deref().and_then(parse_lastmod);
        if self.cfg.images && !page.images.is_empty() {
            e.ext_mut().images = page.images.iter().map(|i| Image { loc: i.clone(), ..Image::default() }).collect();
        }
        if self.cfg.alternates && !page.alternates.is_empty() {
            e.ext_mut().alternates =
                page.alternates.iter().map(|(l, h)| Alternate { hreflang: l.clone(), href: h.clone() }).collect();
        }
        self.report.listed += 1;
        (self.sink)(e).map_err(Error::Sink)
    }

    /// The report, from the URL table.
    fn finish(mut self) -> CrawlReport {
        let limit = match self.report.stopped {
            Some(Stop::PageLimit) => Some(reason::PAGE_LIMIT),
            Some(Stop::TimeLimit) => Some(reason::TIME_LIMIT),
            _ => None,
        };
        let mut report = std::mem::take(&mut self.report);
        for n in &self.nodes {
            let fate = match (&n.fate, n.st) {
                (Some((why, detail)), _) => Some((*why, detail.clone())),
                (None, St::Queued) => limit.map(|l| (l, None)),
                _ => None,
            };
            if let Some((why, detail)) = fate {
                report.left_out.entry(why).or_default().push(LeftOut { url: n.url.clone(), detail });
            }
            if let Some((status, error)) = &n.failure {
                let mut linked_from: Vec<String> =
                    n.referrers.iter().map(|r| self.nodes[*r as usize].url.clone()).collect();
                linked_from.sort();
                report.broken.push(BrokenLink {
                    url: n.url.clone(),
                    status: *status,
                    error: error.clone(),
                    linked_from,
                    linking_pages: n.linking_pages,
                });
            }
        }
        for v in report.left_out.values_mut() {
            v.sort();
        }
        report.broken.sort_by(|a, b| a.url.cmp(&b.url));
        report.truncated.sort();
        report
    }
}

/// `article:modified_time` (ISO 8601) or `Last-Modified` (an HTTP date).
fn parse_lastmod(s: &str) -> Option<Lastmod> {
    if let Some(l) = mapwright_core::date::lastmod_from_text(s) {
        return Some(l);
    }
    mapwright_core::date::parse_rfc822(s).map(Lastmod::W3c)
}
