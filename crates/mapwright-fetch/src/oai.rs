//! OAI-PMH repositories over HTTP: the core reader parses each answer and says which page
//! comes next ([`PageRequest`]); [`OaiPager`] asks the repository for it. Every path that
//! opens a sitemap over HTTP (`read`, `validate`, discovery, the service, the Python package)
//! gets one from [`Response::pager`](crate::Response::pager), so an OAI-PMH base URL is
//! accepted wherever a sitemap URL is.

use crate::body::{BodyReader, BodyStats};
use crate::{Error, Fetched, Fetcher};
use mapwright_core::{PageRequest, Pager};
use std::io::{self, BufRead};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// Asks one repository for the pages of its list of records, on the runtime that fetched the
/// first page, through the same client (timeouts, retries of 503 with `Retry-After`, wire
/// limit, address checks), one page at a time with
/// [`Config::oai_page_pause`](crate::Config::oai_page_pause) before each. The pages together
/// get the time of one sitemap fetch ([`Config::timeout`](crate::Config::timeout)) from the
/// first request: a page is not asked for past it. (Their bytes and their number are bounded
/// by the reader's limits.) What each page weighed on the wire is kept
/// ([`OaiPager::pages`]), so a read's bytes and content hash cover every page, not only the
/// answer to the URL given.
pub struct OaiPager {
    fetcher: Fetcher,
    handle: tokio::runtime::Handle,
    /// The final URL of the first answer without its query: the repository's base URL.
    base: String,
    /// `None` when the limit is past what the clock can hold: no limit.
    deadline: Option<Instant>,
    limit: Duration,
    /// The body statistics of every page asked for, in order.
    pages: Arc<Mutex<Vec<Arc<Mutex<BodyStats>>>>>,
    /// The first answer's URL asked a verb (`?verb=...`): not a bare base URL.
    asked_a_verb: bool,
    /// Set by [`OaiPager::cancel_on`]: once it holds true, no page is asked for and a request
    /// under way is dropped (a discovery past its deadline).
    cancel: OnceLock<watch::Receiver<bool>>,
    /// Set by [`OaiPager::pace_on`]: the host's clock and its Crawl-delay.
    pace: OnceLock<(HostClock, Duration)>,
}

/// A host's request clock: the earliest time of its next request, shared by every request a
/// discovery sends to that host when its robots.txt sets a Crawl-delay.
pub type HostClock = Arc<Mutex<Option<Instant>>>;

/// Takes the host's next turn on `clock`, not before `earliest`: the time of the turn, the
/// clock then moved `delay` past it (the Crawl-delay). One rule for a discovery's requests to
/// a host and an OAI-PMH repository's pages.
pub(crate) fn take_turn(clock: &HostClock, earliest: Instant, delay: Duration) -> Instant {
    let mut next = clock.lock().expect("host clock");
    let slot = next.map_or(earliest, |n| n.max(earliest));
    *next = slot.checked_add(delay);
    slot
}

/// The pages an [`OaiPager`] fetched, together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PagesStats {
    /// Pages fetched (the answer to the URL given not counted).
    pub pages: u64,
    /// Their bytes on the wire.
    pub bytes: u64,
    /// The xxh3-64 hashes of their bodies, in order, combined into one.
    pub hash: u64,
}

impl PagesStats {
    /// `first`, the statistics of the answer to the URL given, with these pages added: bytes
    /// summed, and a hash that changes when any page changes. No pages: `first` as it was.
    pub fn add_to(&self, first: &mut BodyStats) {
        if self.pages == 0 {
            return;
        }
        first.bytes += self.bytes;
        let mut both = [0u8; 16];
        both[..8].copy_from_slice(&first.hash.to_le_bytes());
        both[8..].copy_from_slice(&self.hash.to_le_bytes());
        first.hash = xxhash_rust::xxh3::xxh3_64(&both);
    }
}

impl OaiPager {
    /// The pager of the repository that answered at `final_url`.
    pub fn new(fetcher: Fetcher, handle: tokio::runtime::Handle, final_url: &str, started: Instant) -> OaiPager {
        let base = match url::Url::parse(final_url) {
            Ok(mut u) => {
                u.set_query(None);
                u.set_fragment(None);
                u.to_string()
            }
            Err(_) => final_url.split(['?', '#']).next().unwrap_or(final_url).to_string(),
        };
        let limit = fetcher.config().timeout;
        let asked_a_verb = url::Url::parse(final_url).is_ok_and(|u| u.query_pairs().any(|(k, _)| k == "verb"));
        let pages = Arc::default();
        let (cancel, pace) = (OnceLock::new(), OnceLock::new());
        OaiPager {
            fetcher,
            handle,
            base,
            deadline: started.checked_add(limit),
            limit,
            pages,
            asked_a_verb,
            cancel,
            pace,
        }
    }

    /// Spaces every page request by `delay` on the host's `clock` (robots.txt's Crawl-delay),
    /// the clock the discovery's other requests to the host keep: a repository is paged no
    /// faster than the host asked. A second call is ignored.
    pub fn pace_on(&self, clock: HostClock, delay: Duration) {
        let _ = self.pace.set((clock, delay));
    }

    /// Stops the paging once `cancel` holds true: the page asked for then, and every later
    /// one, fails at once ([`Error::Cancelled`]) instead of being fetched, so a reader on its
    /// blocking thread ends promptly (a discovery past its deadline gives its own flag). A
    /// second call is ignored.
    pub fn cancel_on(&self, cancel: watch::Receiver<bool>) {
        let _ = self.cancel.set(cancel);
    }

    /// The pages fetched so far, together: call it once the reader is done.
    pub fn pages(&self) -> PagesStats {
        let pages = self.pages.lock().expect("pages");
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut total = PagesStats { pages: pages.len() as u64, ..PagesStats::default() };
        for p in pages.iter() {
            let s = p.lock().map(|s| s.clone()).unwrap_or_default();
            total.bytes += s.bytes;
            hasher.update(&s.hash.to_le_bytes());
        }
        total.hash = hasher.digest();
        total
    }

    /// The URL a request is sent to.
    pub fn url(&self, request: &PageRequest) -> String {
        format!("{}?{}", self.base, request.query())
    }
}

/// What one page request needs, owned: it runs as a task of the runtime, not borrowed by the
/// reader's thread (see [`OaiPager::open`]).
struct PageGet {
    fetcher: Fetcher,
    url: String,
    deadline: Option<Instant>,
    limit: Duration,
    pages: Arc<Mutex<Vec<Arc<Mutex<BodyStats>>>>>,
    cancel: Option<watch::Receiver<bool>>,
    pace: Option<(HostClock, Duration)>,
}

impl PageGet {
    /// The page, unless the cancel flag is raised first (checked before the pause, then
    /// watched during the pause and the request).
    async fn run(mut self) -> Result<Box<dyn BufRead + Send>, Error> {
        let Some(mut cancel) = self.cancel.take() else { return Ok(Box::new(self.get().await?)) };
        let cancelled = Error::Cancelled { url: self.url.clone() };
        if *cancel.borrow_and_update() {
            return Err(cancelled);
        }
        let body = tokio::select! {
            biased;
            // Only a raised flag cancels: a sender gone without raising it (the discovery
            // over) leaves the page to its own limits.
            Ok(_) = cancel.wait_for(|c| *c) => return Err(cancelled),
            page = self.get() => page?,
        };
        // A page still arriving when the flag is raised stops too: its reader sees the body
        // end at once. (When the flag's sender goes, its discovery is over: nothing to stop.)
        let stop = body.stopper();
        tokio::spawn(async move {
            if cancel.wait_for(|c| *c).await.is_ok() {
                drop(stop);
            } else {
                stop.disarm();
            }
        });
        Ok(Box::new(body))
    }

    async fn get(&self) -> Result<BodyReader, Error> {
        let url = &self.url;
        let left = self.deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
        let timeout = || Error::Timeout { url: url.clone(), what: "OAI-PMH pages", limit: self.limit };
        let pause = self.wait(self.fetcher.config().oai_page_pause);
        if left <= pause {
            return Err(timeout());
        }
        tokio::time::sleep(pause).await;
        match tokio::time::timeout(left - pause, self.fetcher.get(url, None)).await {
            Err(_) => Err(timeout()),
            Ok(Err(e)) => Err(e),
            Ok(Ok(Fetched::NotModified(meta))) => Err(Error::Status { url: meta.final_url, status: 304 }),
            Ok(Ok(Fetched::Body(r))) => {
                let body = r.into_reader();
                self.pages.lock().expect("pages").push(body.stats_handle());
                Ok(body)
            }
        }
    }

    /// How long to wait before the request: the pause between pages, or longer when the
    /// host's Crawl-delay puts its next turn later (the turn is taken on its clock).
    fn wait(&self, pause: Duration) -> Duration {
        let Some((clock, delay)) = &self.pace else { return pause };
        let now = Instant::now();
        let earliest = now.checked_add(pause).unwrap_or(now);
        take_turn(clock, earliest, *delay).saturating_duration_since(now)
    }
}

impl Pager for OaiPager {
    /// Called by the reader on its blocking thread: the request runs as a task of the runtime
    /// and the thread waits for its answer. Not `Handle::block_on`: that panics when the
    /// runtime is shutting down (a CLI run ending while the reader still pages); a task is
    /// then dropped, and the read ends with an error.
    fn open(&self, request: &PageRequest) -> io::Result<Box<dyn BufRead + Send>> {
        let url = self.url(request);
        let get = PageGet {
            fetcher: self.fetcher.clone(),
            url: url.clone(),
            deadline: self.deadline,
            limit: self.limit,
            pages: Arc::clone(&self.pages),
            cancel: self.cancel.get().cloned(),
            pace: self.pace.get().cloned(),
        };
        let (tx, rx) = oneshot::channel();
        self.handle.spawn(async move {
            let _ = tx.send(get.run().await);
        });
        match rx.blocking_recv() {
            Ok(page) => page.map_err(io::Error::other),
            Err(_) => Err(io::Error::other(Error::Cancelled { url })),
        }
    }

    fn asked_a_verb(&self) -> bool {
        self.asked_a_verb
    }
}
