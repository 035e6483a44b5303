//! What a list of sites means, for every caller of [`crate::run_sites`] (the CLI's
//! `discover --sites`, the Python package's `discover_many`): how a line names a site
//! ([`site_of`]), and how a finished site is judged and summarised ([`SiteSummary`]), so both
//! tag rows with the same site and call the same sites failed.

use crate::{Error, RobotsAnswer, Summary};
use serde::Serialize;

/// A line of a list as the site it names: `None` for a blank or `#` line. `https://` is
/// assumed without a scheme, and a URL is normalised as `url` writes it (so a site has one
/// spelling in the rows and in the shard hash). A line that is no URL is kept as written: its
/// discovery fails, and its summary says why.
pub fn site_of(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    let full = if crate::remote::is_url(t) { t.to_string() } else { format!("https://{t}") };
    Some(url::Url::parse(&full).map(|u| u.to_string()).unwrap_or_else(|_| t.to_string()))
}

/// One finished site: the line `discover --sites --summary` writes, and the dict
/// `discover_many` keeps per site.
#[derive(Serialize, Debug)]
pub struct SiteSummary<'a> {
    /// The site.
    pub site: &'a str,
    /// Whether the site gave URLs (sitemaps with --sitemaps-only) and no sitemap failed.
    pub ok: bool,
    /// Why the discovery ended: `complete`, `url-limit`, `sitemap-limit`, `deadline` (cut by
    /// the site deadline), `robots-unreachable` (robots.txt answered 5xx or 429, timed out or
    /// could not be reached: RFC 9309 makes that a complete disallow, so nothing was
    /// fetched), `no-sitemap`, `no-urls`, `duplicate` (the same site, by origin, came earlier
    /// in the list: its rows are there) or `error` (the site could not be started).
    pub ended: &'static str,
    /// What went wrong, when something did.
    pub error: Option<String>,
    /// Where the seeds came from (`robots.txt`, `usual paths`).
    pub seeds_from: Option<&'a str>,
    /// How robots.txt answered: `read`, `unavailable` (a 4xx: no restriction, no sitemap
    /// named) or `unreachable` (see `ended`); `None` when it was not asked.
    pub robots: Option<&'static str>,
    /// What robots.txt's answer meant for the discovery, when it was not `read`.
    pub robots_note: Option<String>,
    /// Sitemaps fetched.
    pub sitemaps: u64,
    /// Sitemaps not modified since the last run.
    pub not_modified: u64,
    /// Sitemaps that failed.
    pub sitemaps_failed: usize,
    /// Children not followed (depth or count limits).
    pub not_followed: u64,
    /// Distinct URLs given.
    pub urls: u64,
    /// URLs dropped as duplicates.
    pub duplicates: u64,
    /// URLs dropped as out of scope.
    pub out_of_scope: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Time taken, in seconds (to the millisecond).
    pub seconds: f64,
    /// The first failures, sitemap and reason (all are counted in `sitemaps_failed`).
    pub failures: Vec<(&'a str, &'a str)>,
}

impl<'a> SiteSummary<'a> {
    /// The summary of `site` from its discovery's result.
    pub fn of(site: &'a str, result: &'a Result<Summary, Error>, sitemaps_only: bool) -> Self {
        let s = match result {
            Ok(s) => s,
            Err(e) => {
                return SiteSummary {
                    site,
                    ok: false,
                    ended: "error",
                    error: Some(e.to_string()),
                    seeds_from: None,
                    robots: None,
                    robots_note: None,
                    sitemaps: 0,
                    not_modified: 0,
                    sitemaps_failed: 0,
                    not_followed: 0,
                    urls: 0,
                    duplicates: 0,
                    out_of_scope: 0,
                    bytes: 0,
                    seconds: 0.0,
                    failures: Vec::new(),
                };
            }
        };
        let failures: Vec<(&str, &str)> = s.failed.iter().take(10).map(|(u, w)| (u.as_str(), w.as_str())).collect();
        let first_failure = failures.first().map(|(u, w)| format!("{u}: {w}"));
        let read = s.fetched + s.not_modified + s.skipped;
        let robots_note = s.robots.as_ref().filter(|a| **a != RobotsAnswer::Read).map(RobotsAnswer::describe);
        // Why nothing vouches for the sitemaps read, when that is why their URLs were dropped.
        let unvouched = match (&s.robots, s.seeds_from.as_str()) {
            (Some(a @ RobotsAnswer::Unavailable { .. }), _) => format!(" ({})", a.describe()),
            (_, "usual paths") => {
                " (robots.txt names no sitemap: nothing vouches for those at the usual paths, each covers only its folder)"
                    .to_string()
            }
            _ => String::new(),
        };
        let (ended, error) = if s.duplicate {
            ("duplicate", None)
        } else if let Some(RobotsAnswer::Unreachable { .. }) = &s.robots {
            ("robots-unreachable", robots_note.clone())
        } else if s.deadline {
            let why = format!(
                "stopped at the site deadline after {:.0} s, with {} sitemaps read and {} URLs found",
                s.elapsed.as_secs_f64(),
                read,
                s.urls
            );
            ("deadline", Some(why))
        } else if read == 0 {
            let why = match &first_failure {
                Some(f) => format!("no sitemap could be read ({} failed; first: {f})", s.failed.len()),
                None => match &s.robots {
                    Some(RobotsAnswer::Unavailable { status }) => format!(
                        "no sitemap found: robots.txt answered HTTP {status} (no restriction, no Sitemap: line) and no usual path answered"
                    ),
                    _ => "no sitemap found: robots.txt names none and no usual path answered".to_string(),
                },
            };
            ("no-sitemap", Some(why))
        } else if s.urls == 0 && !sitemaps_only {
            let why = match (&first_failure, s.out_of_scope) {
                (Some(f), _) => f.clone(),
                (None, 0) => "the sitemaps list no URL".to_string(),
                (None, n) => format!("the sitemaps list no URL in their scope: {n} dropped as out of scope{unvouched}"),
            };
            ("no-urls", Some(why))
        } else if s.over_limit > 0 {
            ("url-limit", first_failure)
        } else if s.over_sitemap_limit > 0 {
            ("sitemap-limit", first_failure)
        } else {
            ("complete", first_failure)
        };
        let ok = matches!(ended, "complete" | "url-limit" | "sitemap-limit" | "duplicate") && s.failed.is_empty();
        SiteSummary {
            site,
            ok,
            ended,
            error,
            seeds_from: Some(&s.seeds_from),
            robots: s.robots.as_ref().map(RobotsAnswer::as_str),
            robots_note,
            sitemaps: s.fetched,
            not_modified: s.not_modified,
            sitemaps_failed: s.failed.len(),
            not_followed: s.not_followed,
            urls: s.urls,
            duplicates: s.duplicates,
            out_of_scope: s.out_of_scope,
            bytes: s.bytes,
            seconds: (s.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            failures,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::site_of;

    #[test]
    fn lines_name_sites() {
        assert_eq!(site_of("  example.com \n").as_deref(), Some("https://example.com/"));
        assert_eq!(site_of("HTTP://Example.COM:80/x").as_deref(), Some("http://example.com/x"));
        assert_eq!(site_of("# a comment"), None);
        assert_eq!(site_of("   "), None);
        assert_eq!(site_of("http://[bad").as_deref(), Some("http://[bad"));
    }
}
