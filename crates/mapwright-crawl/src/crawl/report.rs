//! The crawl report: what was fetched, listed and left out and why, and the broken links with
//! the pages that link to them (the 404 report of the 2005 console, for one's own site).

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Reasons a URL is left out, as keys of [`CrawlReport::left_out`].
pub mod reason {
    /// robots.txt disallows it for our agent.
    pub const ROBOTS: &str = "robots";
    /// `noindex` in `<meta name="robots">` or `X-Robots-Tag`.
    pub const NOINDEX: &str = "noindex";
    /// The page names another URL as canonical (listed in its place when in scope).
    pub const CANONICAL: &str = "canonical";
    /// The URL redirects; its target is listed when in scope.
    pub const REDIRECT: &str = "redirect";
    /// A failure status or a fetch error (also in [`super::CrawlReport::broken`]).
    pub const STATUS: &str = "status";
    /// Not HTML, and `--include-types` does not name its type.
    pub const NOT_HTML: &str = "not html";
    /// Matched by `--exclude` or not by `--include`.
    pub const EXCLUDED: &str = "excluded";
    /// Deeper than the depth limit.
    pub const DEPTH_LIMIT: &str = "depth limit";
    /// Found but not fetched: the page limit was reached.
    pub const PAGE_LIMIT: &str = "page limit";
    /// Found but not fetched: the time limit was reached.
    pub const TIME_LIMIT: &str = "time limit";
}

/// One URL left out.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LeftOut {
    /// The URL.
    pub url: String,
    /// More about why (the canonical or redirect target, the status, the type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A link that leads nowhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokenLink {
    /// The failing URL.
    pub url: String,
    /// Its HTTP status, when there was one.
    pub status: Option<u16>,
    /// Why it failed (`status 404`, `redirect loop`...).
    pub error: String,
    /// Pages linking to it (sorted; the first [`MAX_REFERRERS`] found).
    pub linked_from: Vec<String>,
    /// How many pages link to it in all.
    pub linking_pages: u64,
}

/// Pages named per broken link; the count says how many there are in all.
pub const MAX_REFERRERS: usize = 20;

/// Why a crawl ended before its frontier was empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The page-count limit.
    PageLimit,
    /// The time limit.
    TimeLimit,
    /// Stopped from outside (Ctrl-C): the state, if any, lets the next run continue.
    Interrupted,
}

/// The whole report, serialised as the `--report` JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CrawlReport {
    /// The start URL.
    pub start: String,
    /// Pages requested (robots.txt not counted), this run and, when resumed, the earlier ones.
    pub pages_fetched: u64,
    /// Of those, pages taken from the state of an earlier run instead of fetched again.
    pub resumed: u64,
    /// URLs listed in the sitemap.
    pub listed: u64,
    /// URLs left out, per reason, sorted.
    pub left_out: BTreeMap<&'static str, Vec<LeftOut>>,
    /// Failing URLs with the pages that link to them, sorted by URL.
    pub broken: Vec<BrokenLink>,
    /// Pages longer than the page-size limit (read up to it).
    pub truncated: Vec<String>,
    /// Why the crawl stopped early, if it did.
    pub stopped: Option<Stop>,
    /// Seconds the run took.
    pub seconds: f64,
}

impl CrawlReport {
    /// URLs left out for `reason` (empty when none).
    pub fn left_out_urls(&self, reason: &str) -> Vec<&str> {
        self.left_out.get(reason).map(|v| v.iter().map(|l| l.url.as_str()).collect()).unwrap_or_default()
    }

    /// A readable summary, a few lines per section.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "crawl of {}", self.start);
        let resumed =
            if self.resumed > 0 { format!(" ({} from the saved state)", self.resumed) } else { String::new() };
        let _ = writeln!(
            s,
            "  {} pages fetched{resumed} in {:.1} s, {} listed",
            self.pages_fetched, self.seconds, self.listed
        );
        if let Some(stop) = self.stopped {
            let why = match stop {
                Stop::PageLimit => "the page limit",
                Stop::TimeLimit => "the time limit",
                Stop::Interrupted => "an interruption",
            };
            let _ = writeln!(s, "  stopped early by {why}");
        }
        for (reason, urls) in &self.left_out {
            let _ = writeln!(s, "  left out, {reason}: {}", urls.len());
            for l in urls.iter().take(10) {
                match &l.detail {
                    Some(d) => {
                        let _ = writeln!(s, "    {} ({d})", l.url);
                    }
                    None => {
                        let _ = writeln!(s, "    {}", l.url);
                    }
                }
            }
            if urls.len() > 10 {
                let _ = writeln!(s, "    ... and {} more", urls.len() - 10);
            }
        }
        if !self.broken.is_empty() {
            let _ = writeln!(s, "  broken links: {}", self.broken.len());
            for b in &self.broken {
                let _ = writeln!(s, "    {} ({}), linked from {} page(s):", b.url, b.error, b.linking_pages);
                for r in b.linked_from.iter().take(5) {
                    let _ = writeln!(s, "      {r}");
                }
            }
        }
        if !self.truncated.is_empty() {
            let _ = writeln!(s, "  pages cut at the size limit: {}", self.truncated.len());
        }
        s
    }
}
