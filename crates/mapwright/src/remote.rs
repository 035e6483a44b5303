//! Remote sources for `read` and `validate`: an http(s) body streamed through mapwright-fetch
//! (limits, timeouts, gzip in any layer) into the same synchronous readers as a local file;
//! the `--follow` resolver and `--check-urls` of `validate` over HTTP.

use crate::http::runtime;
use mapwright_core::validate::{Opened, Resolver};
use mapwright_core::{Entry, Limits, Loc, ReadOptions, SitemapReader, Voucher};
use mapwright_fetch::check::{CheckConfig, UrlToCheck, check_urls};
use mapwright_fetch::{BodyReader, Fetched, Fetcher, RobotsCache};
use std::io::{self, BufRead, Read};
use std::sync::Arc;

/// One runtime and one HTTP client for every remote source of a command.
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
    /// Default HTTP settings, with `max_bytes` (if given) as the limit on the wire too.
    pub fn new(max_bytes: Option<u64>) -> anyhow::Result<Opener> {
        let mut config = mapwright_fetch::Config::default();
        if let Some(b) = max_bytes {
            config.max_bytes = b;
        }
        Ok(Opener { rt: Arc::new(runtime()?), fetcher: Fetcher::new(config)?, robots: RobotsCache::new() })
    }

    /// GETs `url` and returns its body as a blocking reader (an error status is an `Err`).
    pub fn open(&self, url: &str) -> Result<Remote, mapwright_fetch::Error> {
        let resp = match self.rt.block_on(self.fetcher.get(url, None))? {
            Fetched::Body(r) => r,
            Fetched::NotModified(meta) => {
                return Err(mapwright_fetch::Error::Status { url: meta.final_url, status: 304 });
            }
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
    /// host's robots.txt when a `Sitemap:` line names it, as `discover` decides.
    pub fn voucher(&self, requested: &str, final_url: &str) -> Voucher {
        self.rt.block_on(mapwright_fetch::discover::robots_voucher(&self.fetcher, &self.robots, requested, final_url))
    }

    /// Live checks (`url-status`, `url-noindex`, `robots-disallowed`) of every URL `url` lists.
    pub fn check_urls_of(&self, url: &str, limits: &Limits) -> anyhow::Result<Vec<mapwright_core::Finding>> {
        let input = self.open(url)?;
        let urls = listed_urls(input, limits)?;
        Ok(self.rt.block_on(check_urls(&self.fetcher, urls, &CheckConfig::default())))
    }

    /// Live checks of URLs already collected (from a local file).
    pub fn check(&self, urls: Vec<UrlToCheck>) -> Vec<mapwright_core::Finding> {
        self.rt.block_on(check_urls(&self.fetcher, urls, &CheckConfig::default()))
    }
}

/// The URL entries of a sitemap with where each is, for live checks.
pub fn listed_urls(input: impl BufRead + Send, limits: &Limits) -> anyhow::Result<Vec<UrlToCheck>> {
    let mut reader = SitemapReader::new(input, ReadOptions { limits: limits.clone() })?;
    let mut out = Vec::new();
    while let Some(e) = reader.next_entry()? {
        if let Entry::Url(u) = e {
            out.push(UrlToCheck { loc: u.loc.to_string(), position: Some(reader.entry_position()) });
        }
    }
    Ok(out)
}

/// `--follow` over HTTP: each child is fetched; the URLs opened are remembered.
pub struct RemoteResolver {
    pub opener: Opener,
    pub opened: Vec<String>,
}

impl Resolver for RemoteResolver {
    fn open(&mut self, url: &Loc) -> io::Result<Opened<'_>> {
        match self.opener.open(url.as_str()) {
            Ok(r) => {
                self.opened.push(url.to_string());
                Ok(Opened::Source { name: url.to_string(), input: Box::new(r) })
            }
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }
}

/// The voucher `--vouched[=ORIGIN]` gives a sitemap served at `url`: bare, the robots.txt of
/// `url`'s own origin; with a value, that of ORIGIN (cross-submission). `None` when the flag
/// is absent.
pub fn vouched_arg(flag: Option<&str>, url: Option<&Loc>) -> anyhow::Result<Option<Voucher>> {
    let Some(flag) = flag else { return Ok(None) };
    let origin = if flag.trim().is_empty() {
        match url {
            Some(u) => u.origin_str().to_string(),
            None => {
                anyhow::bail!("--vouched needs --url (whose host's robots.txt names the sitemap), or --vouched=ORIGIN")
            }
        }
    } else {
        let loc = Loc::parse(flag.trim()).map_err(|e| anyhow::anyhow!("--vouched={flag:?}: {e}"))?;
        loc.origin_str().to_string()
    };
    Ok(Some(Voucher::Robots(origin)))
}
