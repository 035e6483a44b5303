//! Remote sources opened synchronously: an http(s) body streamed through the [`Fetcher`]
//! (limits, timeouts, gzip in any layer) into the same blocking readers as a local file; the
//! resolver that fetches an index's children for the validator; who vouches for a sitemap
//! given bare; live checks of the URLs a sitemap lists; and the scope drop of a strict read.
//!
//! The one home of this behaviour for the CLI (`read`, `validate`) and the Python package
//! (`read`, `validate`, `to_pandas`): both open a URL, judge its scope and follow an index
//! the same way, so one sitemap gets one verdict whichever front end reads it.

use crate::check::{CheckConfig, UrlToCheck, check_urls};
use crate::{BodyReader, Error, Fetched, Fetcher, RobotsCache};
use mapwright_core::read::Input;
use mapwright_core::validate::{Opened, Resolver};
use mapwright_core::{Entry, Finding, Limits, Loc, Position, ReadOptions, Rule, Scope, SitemapReader, Voucher};
use std::io::{self, BufRead, Read};
use std::sync::Arc;

/// Whether `source` names an http(s) URL rather than a file (a path such as `http.xml` does not).
pub fn is_url(source: &str) -> bool {
    let lower = source.get(..8).unwrap_or(source).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// One runtime, one HTTP client and one robots.txt cache for every remote source of a caller
/// that reads synchronously (a CLI command, a Python call). Cheap to clone.
#[derive(Clone)]
pub struct Opener {
    rt: Arc<tokio::runtime::Runtime>,
    fetcher: Fetcher,
    robots: RobotsCache,
}

/// A remote body as a `BufRead`, keeping alive the runtime whose task feeds it.
pub struct Remote {
    reader: BodyReader,
    /// The URL after redirects: the scope of the sitemap.
    pub final_url: String,
    /// The next pages, should the body be an OAI-PMH answer (give it to the reader).
    pub pager: Arc<dyn mapwright_core::Pager>,
    _rt: Arc<tokio::runtime::Runtime>,
}

impl Read for Remote {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl BufRead for Remote {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.reader.consume(amt)
    }
}

impl Opener {
    /// An opener over `rt`, which must be multi-threaded: the body tasks run while the caller
    /// blocks on reading. Its calls must not be made from inside `rt`.
    pub fn new(rt: Arc<tokio::runtime::Runtime>, fetcher: Fetcher) -> Opener {
        Opener { rt, fetcher, robots: RobotsCache::new() }
    }

    /// The runtime the fetches run on.
    pub fn runtime(&self) -> &Arc<tokio::runtime::Runtime> {
        &self.rt
    }

    /// The HTTP client.
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// GETs `url` and returns its body as a blocking reader; an error status (304 included:
    /// nothing was asked conditionally) is an `Err`.
    pub fn open(&self, url: &str) -> Result<Remote, Error> {
        let resp = match self.rt.block_on(self.fetcher.get(url, None))? {
            Fetched::Body(r) => r,
            Fetched::NotModified(meta) => return Err(Error::Status { url: meta.final_url, status: 304 }),
        };
        let final_url = resp.meta.final_url.clone();
        let pager = resp.pager();
        let reader = {
            let _guard = self.rt.enter();
            resp.into_reader()
        };
        Ok(Remote { reader, final_url, pager, _rt: self.rt.clone() })
    }

    /// Who vouches for the sitemap fetched from `requested` (served from `final_url`): its
    /// host's robots.txt when a `Sitemap:` line names it, as discovery decides.
    pub fn voucher(&self, requested: &str, final_url: &str) -> Voucher {
        self.rt.block_on(crate::discover::robots_voucher(&self.fetcher, &self.robots, requested, final_url))
    }

    /// Live checks (`url-status`, `url-noindex`, `robots-disallowed`) of every URL `url` lists.
    pub fn check_urls_of(&self, url: &str, limits: &Limits) -> Result<Vec<Finding>, Error> {
        let input = self.open(url)?;
        let final_url = input.final_url.clone();
        let urls = listed_urls(input, limits).map_err(|source| Error::Read { url: final_url, source })?;
        Ok(self.check(urls))
    }

    /// Live checks of URLs already collected (from a local file).
    pub fn check(&self, urls: Vec<UrlToCheck>) -> Vec<Finding> {
        self.rt.block_on(check_urls(&self.fetcher, urls, &CheckConfig::default()))
    }
}

/// The URL entries of a sitemap with where each is, for live checks.
pub fn listed_urls(input: impl BufRead + Send, limits: &Limits) -> Result<Vec<UrlToCheck>, mapwright_core::Error> {
    let mut reader = SitemapReader::new(input, ReadOptions { limits: limits.clone() })?;
    let mut out = Vec::new();
    while let Some(e) = reader.next_entry()? {
        if let Entry::Url(u) = e {
            out.push(UrlToCheck { loc: u.loc.to_string(), position: Some(reader.entry_position()) });
        }
    }
    Ok(out)
}

/// The validator's `follow` over HTTP: each child an index lists is fetched; the URLs opened
/// are remembered (for live checks of each).
pub struct RemoteResolver {
    /// Where children are fetched.
    pub opener: Opener,
    /// The children opened, in order.
    pub opened: Vec<String>,
}

impl RemoteResolver {
    /// A resolver fetching through `opener`.
    pub fn new(opener: Opener) -> Self {
        RemoteResolver { opener, opened: Vec::new() }
    }
}

impl Resolver for RemoteResolver {
    fn open(&mut self, url: &Loc) -> io::Result<Opened<'_>> {
        match self.opener.open(url.as_str()) {
            Ok(r) => {
                self.opened.push(url.to_string());
                // The child's own pager: an OAI-PMH child pages on its own repository.
                let pager = Some(Arc::clone(&r.pager));
                Ok(Opened::Source { name: url.to_string(), input: Input::owned(Box::new(r)), pager })
            }
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }
}

/// A strict read's scope (PROTOCOL.md section 5): the sitemap served at `url`, vouched for by
/// `voucher`, keeps the entries its scope allows; every other one is dropped with a
/// `loc-out-of-scope` finding, as search engines drop them.
pub struct StrictScope {
    url: Loc,
    /// `url` as the caller wrote it, for messages.
    written: String,
    voucher: Voucher,
    scope: Scope,
}

impl StrictScope {
    /// The scope of a sitemap served at `url` (`written` as the caller gave it).
    pub fn new(url: Loc, written: impl Into<String>, voucher: Voucher) -> Self {
        let scope = Scope::vouched(&url, &voucher);
        StrictScope { url, written: written.into(), voucher, scope }
    }

    /// The finding that says a voucher waived the folder rule (`scope-vouched`), if one did:
    /// reported once, before the entries.
    pub fn waiver(&self) -> Option<Finding> {
        self.scope.waiver(&self.url, &self.voucher)
    }

    /// `None` when `entry` (read at `position`) is in scope; else the finding of its drop.
    pub fn drop(&self, entry: &Entry, position: Position) -> Option<Finding> {
        let why = self.scope.check(entry.loc()).err()?;
        let f = Finding::new(
            Rule::LocOutOfScope,
            Some(position),
            format!(
                "{} is out of the scope of the sitemap at {} ({}; it may list URLs under {}{}): dropped",
                entry.loc(),
                self.written,
                why.describe(),
                self.scope.origin(),
                self.scope.folder()
            ),
        );
        Some(f.with_loc(entry.loc().as_str()))
    }
}
