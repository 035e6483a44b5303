//! The visitor of one sitemap in a discovery ([`Collector`]: scope, cross-submission,
//! deduplication, batching) and how a fetched sitemap is read into it ([`read_sitemap`]):
//! small bodies whole on the async side, larger ones streamed to a blocking thread.

use super::{Event, Prehashed, Shared};
use crate::Error;
use crate::client::Response;
use crate::sitemap::{ReadReport, Visitor, read_paged, read_with};
use mapwright_core::{Entry, Finding, Format, Loc, Position, ReadOptions, Rule, Scope, SitemapEntry, UrlEntry};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Bodies announced (`Content-Length`) at most this long are read whole on the async side
/// and parsed there: a many-site run reads thousands of small sitemaps a second, and a body
/// task feeding a reader on a blocking thread cost each of them a task, a channel and the
/// thread wake-ups between them.
const INLINE_BODY: u64 = 256 * 1024;

/// Uncompressed bytes parsed on the async side at most (a few milliseconds of a runtime
/// thread): a small gzipped body that inflates past it is read again on a blocking thread.
const INLINE_READ: u64 = 512 * 1024;

/// Reads a fetched sitemap into `visitor`. A small body is read whole and parsed on this task
/// (the collector keeps its events and sends them after); it is read again on a blocking
/// thread, from the same bytes, when that cannot be done without blocking: an OAI-PMH answer
/// (its next pages), an entry whose host's robots.txt must be fetched (cross-submission),
/// more than [`INLINE_READ`] bytes once inflated. A larger body streams to a blocking reader.
/// `paced`: the host's request clock and its Crawl-delay, which the pages of an OAI-PMH
/// repository keep as every other request to the host does.
pub(super) async fn read_sitemap(
    resp: Response,
    options: ReadOptions,
    mut visitor: Collector,
    paced: Option<(crate::oai::HostClock, std::time::Duration)>,
) -> Result<(ReadReport, Collector), Error> {
    let meta = resp.meta.clone();
    let pager = resp.pager();
    if let Some((clock, delay)) = paced {
        pager.pace_on(clock, delay);
    }
    // Past the deadline no page is asked for: the reader's thread ends at once, not after
    // the pages' own time limit (nor on a runtime that is shutting down).
    pager.cancel_on(visitor.shared.expire.subscribe());
    let body = match resp.read_whole(INLINE_BODY).await {
        Ok(body) => body,
        Err(resp) => return read_paged(resp, options, visitor, pager).await,
    };
    let url = meta.final_url.clone();
    let stats = body.stats.clone();
    if body.error.is_none() {
        let mut small = options.clone();
        small.limits.max_bytes = small.limits.max_bytes.min(INLINE_READ);
        visitor.inline = true;
        let (mut report, mut v) = read_with(&body.bytes[..], small, None, visitor, &url);
        let cut = INLINE_READ < options.limits.max_bytes
            && matches!(&report.error, Some(Error::Read { source: mapwright_core::Error::TooLarge { .. }, .. }));
        if !(v.fallback || cut || report.format == Some(Format::OaiPmh)) {
            v.finish_inline();
            for event in std::mem::take(&mut v.outbox) {
                if v.shared.events.send(event).await.is_err() {
                    v.shared.stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
            v.inline = false;
            report.body = stats;
            report.meta = meta;
            return Ok((report, v));
        }
        visitor = v.restart();
    }
    let paged = pager.clone();
    let joined =
        tokio::task::spawn_blocking(move || read_with(body.into_reader(), options, Some(paged), visitor, &url)).await;
    let (mut report, visitor) =
        joined.map_err(|e| Error::Http { url: meta.final_url.clone(), message: e.to_string() })?;
    report.body = stats;
    pager.pages().add_to(&mut report.body);
    report.meta = meta;
    Ok((report, visitor))
}

/// The visitor of one sitemap: scope, cross-submission, deduplication, batching.
pub(super) struct Collector {
    pub(super) shared: Arc<Shared>,
    pub(super) handle: tokio::runtime::Handle,
    pub(super) sitemap: Arc<str>,
    pub(super) requested: String,
    pub(super) final_url: String,
    /// The origin that vouches for this sitemap, where its index children may be too.
    pub(super) voucher_origin: Option<String>,
    pub(super) scope: Scope,
    pub(super) site: Scope,
    /// Per origin: whether its robots.txt names this sitemap.
    pub(super) vouched: HashMap<String, bool>,
    pub(super) batch: Vec<UrlEntry>,
    pub(super) children: Vec<SitemapEntry>,
    /// With `dedupe_per_sitemap`: the hashes of this sitemap's URLs (the run's set otherwise).
    pub(super) own_urls: HashSet<u64, BuildHasherDefault<Prehashed>>,
    /// Reading a small body on the async side ([`read_sitemap`]): events wait in `outbox`,
    /// URLs in `batch` until [`Collector::finish_inline`] (nothing touches the run's set
    /// before), and an entry that needs a robots.txt not fetched yet stops the read
    /// (`fallback`), which is then done again on a blocking thread.
    pub(super) inline: bool,
    pub(super) outbox: Vec<Event>,
    pub(super) fallback: bool,
    /// Counts added to the totals when the sitemap is done.
    pub(super) out_of_scope: u64,
    pub(super) cross_submitted: u64,
    pub(super) not_followed: u64,
}

/// Whether an index's child at `loc` is on the index's site (`site`), or on the site whose
/// robots.txt vouched for the index (`voucher_origin`): followed under scope without asking
/// the child's own robots.txt. A fetched index's children ([`Collector`]) and those of an
/// index read elsewhere (`Discovery::run_children`) are judged by this one rule (without
/// scope every child is followed, on any host).
pub(super) fn child_on_site(site: &Scope, voucher_origin: Option<&str>, loc: &Loc) -> bool {
    site.check(loc).is_ok() || voucher_origin == Some(loc.origin_str())
}

/// The words of an `index-cross-site` finding: `child` not followed from the index `index`.
pub(super) fn cross_site_child(child: &str, index: &str) -> String {
    format!("{child} is on another site than the index at {index}: not followed")
}

impl Collector {
    /// Whether `loc`'s host cross-submits this sitemap (its robots.txt names it).
    fn vouched_for(&mut self, loc: &Loc) -> bool {
        if !self.shared.config.cross_submission {
            return false;
        }
        if let Some(v) = self.vouched.get(loc.origin_str()) {
            return *v;
        }
        let robots = if self.inline {
            match self.shared.robots.cached(loc.as_str()) {
                Some(robots) => robots,
                None => {
                    self.fallback = true; // fetching it would block: read again on a thread
                    return false;
                }
            }
        } else {
            let mut expire = self.shared.expire.subscribe();
            let (shared, url) = (Arc::clone(&self.shared), loc.as_str().to_string());
            let (tx, rx) = tokio::sync::oneshot::channel();
            // A task of the runtime that this thread waits for, not `Handle::block_on`, which
            // panics when the runtime is shutting down (a CLI run ending early): the task is
            // then dropped, and the answer is none.
            self.handle.spawn(async move {
                let robots = tokio::select! {
                    r = shared.robots.get(&shared.fetcher, &url) => Some(r),
                    _ = expire.wait_for(|e| *e) => None,
                };
                let _ = tx.send(robots);
            });
            // Past the deadline (or the runtime's end) nothing more is sent: the answer no
            // longer matters.
            let Some(robots) = rx.blocking_recv().ok().flatten() else { return false };
            robots
        };
        let v = robots.lists_sitemap(&self.requested) || robots.lists_sitemap(&self.final_url);
        self.vouched.insert(loc.origin_str().to_string(), v);
        v
    }

    fn send(&mut self, event: Event) {
        if self.inline {
            self.outbox.push(event);
            return;
        }
        if self.shared.events.blocking_send(event).is_err() {
            // Nobody listens any more (`discover | head`): stop reading and fetching.
            self.shared.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Deduplicates the batch against every URL seen and sends what is new.
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let mut batch = std::mem::take(&mut self.batch);
        let before = batch.len();
        // By the normal form: two spellings of one URL are one URL.
        let key = |u: &UrlEntry| xxhash_rust::xxh3::xxh3_64(u.loc.as_str().as_bytes());
        let prev = {
            let mut seen = self.shared.urls.lock().expect("url set");
            if self.shared.expired.load(Ordering::Relaxed) {
                return; // past the deadline: the summary is taken, nothing more goes out
            }
            if self.shared.config.dedupe_per_sitemap {
                batch.retain(|u| self.own_urls.insert(key(u)));
            } else {
                batch.retain(|u| seen.insert(key(u)));
            }
            self.shared.emitted.fetch_add(batch.len() as u64, Ordering::Relaxed)
        };
        let dups = (before - batch.len()) as u64;
        let max = self.shared.config.max_urls;
        let mut over = 0;
        if prev + batch.len() as u64 > max {
            let keep = max.saturating_sub(prev) as usize;
            over = (batch.len() - keep) as u64;
            batch.truncate(keep);
            self.shared.emitted.fetch_sub(over, Ordering::Relaxed);
            if !self.shared.stop.swap(true, Ordering::Relaxed) {
                self.send(Event::Notice {
                    sitemap: Some(self.sitemap.clone()),
                    message: format!("more than {max} URLs: the rest is dropped"),
                });
            }
        }
        {
            let mut t = self.shared.totals.lock().expect("totals");
            t.duplicates += dups;
            t.over_limit += over;
        }
        if !batch.is_empty() {
            self.send(Event::Urls { sitemap: self.sitemap.clone(), urls: batch });
        }
    }

    /// Adds this sitemap's drops and cross-submissions to the run's totals.
    fn add_tallies(&mut self) {
        let mut t = self.shared.totals.lock().expect("totals");
        t.out_of_scope += std::mem::take(&mut self.out_of_scope);
        t.cross_submitted += std::mem::take(&mut self.cross_submitted);
        t.not_followed += std::mem::take(&mut self.not_followed);
    }

    /// After an inline read that stands: its URLs deduplicated and sent in batches (to the
    /// outbox), its counts added.
    fn finish_inline(&mut self) {
        let n = self.shared.config.batch.max(1);
        let all = std::mem::take(&mut self.batch);
        if all.len() <= n {
            self.batch = all;
            self.flush();
        } else {
            let mut rest = all.into_iter();
            loop {
                self.batch = rest.by_ref().take(n).collect();
                if self.batch.is_empty() {
                    break;
                }
                self.flush();
            }
        }
        self.add_tallies();
    }

    /// The collector of one sitemap before its read: nothing batched, counted or sent, no
    /// robots.txt asked yet. Called on the runtime (it keeps its handle for the blocking read).
    pub(super) fn new(
        shared: Arc<Shared>,
        sitemap: Arc<str>,
        final_url: String,
        voucher_origin: Option<String>,
        scope: Scope,
        site: Scope,
    ) -> Collector {
        Collector {
            shared,
            handle: tokio::runtime::Handle::current(),
            requested: sitemap.to_string(),
            sitemap,
            final_url,
            voucher_origin,
            scope,
            site,
            vouched: HashMap::new(),
            batch: Vec::new(),
            children: Vec::new(),
            own_urls: HashSet::default(),
            inline: false,
            outbox: Vec::new(),
            fallback: false,
            out_of_scope: 0,
            cross_submitted: 0,
            not_followed: 0,
        }
    }

    /// The collector to read the same body again on a blocking thread, as if the inline read
    /// had not happened (nothing of it was counted or sent): a new one, which keeps only the
    /// robots.txt answers the inline read got.
    fn restart(self) -> Collector {
        let vouched = self.vouched;
        Collector {
            vouched,
            ..Collector::new(self.shared, self.sitemap, self.final_url, self.voucher_origin, self.scope, self.site)
        }
    }

    fn drop_finding(&mut self, rule: Rule, position: Position, loc: &Loc, message: String) {
        let finding = Finding::new(rule, Some(position), message).with_loc(loc.as_str());
        self.send(Event::Finding { sitemap: self.sitemap.clone(), finding });
    }
}

impl Visitor for Collector {
    fn entry(&mut self, entry: Entry, position: Position) -> ControlFlow<()> {
        if self.shared.stop.load(Ordering::Relaxed) {
            return ControlFlow::Break(());
        }
        match entry {
            Entry::Url(u) => {
                if self.shared.config.sitemaps_only {
                    return ControlFlow::Break(()); // a leaf sitemap: its URLs are not wanted
                }
                let checked = if self.shared.config.scope { self.scope.check(&u.loc) } else { Ok(()) };
                if let Err(why) = checked {
                    if self.vouched_for(&u.loc) {
                        self.cross_submitted += 1;
                    } else if self.fallback {
                        return ControlFlow::Break(());
                    } else {
                        self.out_of_scope += 1;
                        let msg = format!(
                            "{} is out of the scope of the sitemap at {} ({}): dropped",
                            u.loc,
                            self.final_url,
                            why.describe()
                        );
                        self.drop_finding(Rule::LocOutOfScope, position, &u.loc, msg);
                        return ControlFlow::Continue(());
                    }
                }
                if self.batch.capacity() == 0 {
                    // One allocation per batch, not a regrowth (and a copy) at every doubling.
                    self.batch.reserve_exact(self.shared.config.batch.max(1));
                }
                self.batch.push(u);
                if !self.inline && self.batch.len() >= self.shared.config.batch {
                    self.flush();
                }
            }
            Entry::Sitemap(s) => {
                if self.shared.config.scope
                    && !child_on_site(&self.site, self.voucher_origin.as_deref(), &s.loc)
                    && !self.vouched_for(&s.loc)
                {
                    if self.fallback {
                        return ControlFlow::Break(());
                    }
                    self.not_followed += 1;
                    let msg = cross_site_child(s.loc.as_str(), &self.final_url);
                    self.drop_finding(Rule::IndexCrossSite, position, &s.loc, msg);
                } else {
                    self.children.push(s);
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn finding(&mut self, finding: Finding) {
        self.send(Event::Finding { sitemap: self.sitemap.clone(), finding });
    }

    fn end(&mut self) {
        if !self.inline {
            self.flush();
            self.add_tallies();
        }
    }
}
