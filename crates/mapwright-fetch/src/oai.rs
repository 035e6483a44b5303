//! OAI-PMH repositories over HTTP: the core reader parses each answer and says which page
//! comes next ([`PageRequest`]); [`OaiPager`] asks the repository for it. Every path that
//! opens a sitemap over HTTP (`read`, `validate`, discovery, the service, the Python package)
//! gets one from [`Response::pager`](crate::Response::pager), so an OAI-PMH base URL is
//! accepted wherever a sitemap URL is.

use crate::{Error, Fetched, Fetcher};
use mapwright_core::{PageRequest, Pager};
use std::io::{self, BufRead};
use std::time::{Duration, Instant};

/// Asks one repository for the pages of its list of records, on the runtime that fetched the
/// first page, through the same client (timeouts, retries of 503 with `Retry-After`, wire
/// limit, address checks). The pages together get the time of one sitemap fetch
/// ([`Config::timeout`](crate::Config::timeout)) from the first request: a page is not asked
/// for past it. (Their bytes together are bounded by the reader's limit.)
pub struct OaiPager {
    fetcher: Fetcher,
    handle: tokio::runtime::Handle,
    /// The final URL of the first answer without its query: the repository's base URL.
    base: String,
    deadline: Instant,
    limit: Duration,
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
        OaiPager { fetcher, handle, base, deadline: started + limit, limit }
    }

    /// The URL a request is sent to.
    pub fn url(&self, request: &PageRequest) -> String {
        format!("{}?{}", self.base, request.query())
    }

    async fn get(&self, url: String) -> Result<Box<dyn BufRead + Send>, Error> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let timeout = || Error::Timeout { url: url.clone(), what: "OAI-PMH pages", limit: self.limit };
        if left.is_zero() {
            return Err(timeout());
        }
        match tokio::time::timeout(left, self.fetcher.get(&url, None)).await {
            Err(_) => Err(timeout()),
            Ok(Err(e)) => Err(e),
            Ok(Ok(Fetched::NotModified(meta))) => Err(Error::Status { url: meta.final_url, status: 304 }),
            Ok(Ok(Fetched::Body(r))) => Ok(Box::new(r.into_reader())),
        }
    }
}

impl Pager for OaiPager {
    /// Blocks on the runtime's handle: called by the reader on its blocking thread.
    fn open(&self, request: &PageRequest) -> io::Result<Box<dyn BufRead + Send>> {
        let url = self.url(request);
        self.handle.block_on(self.get(url)).map_err(io::Error::other)
    }
}
