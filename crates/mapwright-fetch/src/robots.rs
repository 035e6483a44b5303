//! robots.txt: fetched once per origin and cached; `Sitemap:` lines, allow/disallow for our
//! agent and Crawl-delay, parsed by texting_robots (see ARCHITECTURE.md for why that crate).

use crate::client::Fetched;
use crate::{Error, Fetcher};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

mod parse;
pub use parse::{Robots, RobotsAnswer};

/// Bytes of robots.txt parsed; the rest is ignored (Google's limit is 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 512 * 1024;

/// `scheme://host[:port]/robots.txt` for any URL of that origin.
pub fn robots_url(url: &str) -> Result<String, Error> {
    let u = url::Url::parse(url).map_err(|e| Error::InvalidUrl { url: url.to_string(), reason: e.to_string() })?;
    Ok(format!("{}/robots.txt", u.origin().ascii_serialization()))
}

/// Fetches robots.txt of `url`'s origin. A 4xx but 429 means no rules (allowed, no sitemaps:
/// [`RobotsAnswer::Unavailable`]); other failures (5xx, 429, a timeout, the network) are
/// errors, which [`RobotsCache::get`] keeps as [`RobotsAnswer::Unreachable`].
pub async fn fetch(fetcher: &Fetcher, url: &str) -> Result<Robots, Error> {
    let robots_url = robots_url(url)?;
    let agent = fetcher.config().user_agent.clone();
    match fetcher.get(&robots_url, None).await {
        Ok(Fetched::Body(resp)) => {
            let (bytes, truncated) = resp.bytes_up_to(MAX_ROBOTS_BYTES).await?;
            let mut r = Robots::parse_at(&agent, &bytes, &robots_url);
            r.truncated = truncated;
            Ok(r)
        }
        Ok(Fetched::NotModified(_)) => Ok(Robots::default()),
        // 429 is the server asking for less: RFC 9309 lets it be read as unreachable, as
        // Google does, not as "no rules".
        Err(Error::Status { status, .. }) if (400..500).contains(&status) && status != 429 => Ok(Robots {
            note: Some(format!("no robots.txt (status {status})")),
            answer: RobotsAnswer::Unavailable { status },
            ..Robots::default()
        }),
        Err(e) => Err(e),
    }
}

/// One origin's robots.txt, filled once.
type Cell = Arc<OnceCell<Arc<Robots>>>;

/// robots.txt per origin, each fetched at most once even when many tasks ask at the same time.
#[derive(Clone, Default)]
pub struct RobotsCache {
    cells: Arc<Mutex<HashMap<String, Cell>>>,
}

impl RobotsCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// robots.txt of `url`'s origin; a failed fetch counts as an empty file, with a note and
    /// [`RobotsAnswer::Unreachable`].
    pub async fn get(&self, fetcher: &Fetcher, url: &str) -> Arc<Robots> {
        let origin = match url::Url::parse(url) {
            Ok(u) => u.origin().ascii_serialization(),
            Err(_) => return Arc::new(Robots::default()),
        };
        let cell = {
            let mut map = self.cells.lock().expect("robots cache lock");
            map.entry(origin).or_default().clone()
        };
        cell.get_or_init(|| async {
            Arc::new(fetch(fetcher, url).await.unwrap_or_else(|e| Robots {
                note: Some(format!("robots.txt not fetched: {e}")),
                answer: RobotsAnswer::Unreachable { cause: e.to_string() },
                ..Robots::default()
            }))
        })
        .await
        .clone()
    }

    /// robots.txt of `url`'s origin if it was fetched already (or is being fetched: then
    /// `None`), without a request.
    pub fn cached(&self, url: &str) -> Option<Arc<Robots>> {
        let origin = url::Url::parse(url).ok()?.origin().ascii_serialization();
        let cell = self.cells.lock().expect("robots cache lock").get(&origin)?.clone();
        cell.get().cloned()
    }

    /// Origins fetched so far.
    pub fn len(&self) -> usize {
        self.cells.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether nothing was fetched yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn check(txt: &str, sitemaps: &[&str], allowed: &[(&str, bool)]) {
        let r = Robots::parse("mapwright/0.1", txt.as_bytes());
        assert_eq!(r.sitemaps, sitemaps, "sitemaps of {txt:?}");
        for (u, a) in allowed {
            assert_eq!(r.allowed(u), *a, "{u} in {txt:?}");
        }
    }

    #[test]
    fn sitemap_lines_any_case_anywhere() {
        check(
            "SITEMAP: http://a/1.xml\nUser-agent: *\nDisallow: /x\nsitemap:http://a/2.xml\n",
            &["http://a/1.xml", "http://a/2.xml"],
            &[("http://a/x/y", false), ("http://a/z", true)],
        );
        check("User-agent: mapwright\nDisallow: /\n\nUser-agent: *\nAllow: /\n", &[], &[("http://a/z", false)]);
        check("<!DOCTYPE html><html><body>Sitemap: http://a/s.xml</body></html>", &[], &[("http://a/z", true)]);
        check("", &[], &[("http://a/", true)]);
    }

    /// A line whose 9th byte falls inside a character panicked on the `Site-map:` check
    /// (found by the `robots` fuzz target).
    #[test]
    fn a_character_across_the_ninth_byte_is_no_panic() {
        let body = "User-agent: *\nCr\u{924}l-delay\u{fffd}r-agent\n12345678\u{924}\nSite-map: /a.xml\n";
        let r = Robots::parse_at("mapwright", body.as_bytes(), "https://example.com/robots.txt");
        assert_eq!(r.sitemaps, ["https://example.com/a.xml"]);
    }

    #[test]
    fn crawl_delay_and_listing() {
        let r = Robots::parse("mapwright", b"User-agent: *\nCrawl-delay: 2\nSitemap: http://A/s.xml\n");
        assert_eq!(r.crawl_delay, Some(Duration::from_secs(2)));
        assert!(r.lists_sitemap("http://a/s.xml"));
        assert!(!r.lists_sitemap("http://a/t.xml"));
    }
}
