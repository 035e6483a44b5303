//! Live checks of listed URLs (the "Verify" report of the 2005 console): status, redirects,
//! noindex (X-Robots-Tag and `<meta name="robots">`), and robots.txt disallow, as core
//! [`Finding`]s with the catalogue's rules `url-status`, `url-noindex`, `robots-disallowed`.
//!
//! One request per URL: a GET that stops reading at the end of the HTML head (where a meta
//! robots tag must be), or a HEAD alone for a URL whose name says it is no page (an image, a
//! PDF...), followed by a GET only when the HEAD is refused or fails. Redirects are not
//! followed: the redirect is the finding. A [`Checker`] holds what a run shares: robots.txt
//! fetched once per origin, and one pace per origin (requests start at least
//! [`CheckConfig::delay`] apart, or robots.txt's Crawl-delay if longer).

use crate::robots::{RobotsCache, robots_url};
use crate::{Error, Fetcher};
use mapwright_core::{Finding, Position, Rule};
use reqwest::header;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// How politely and how much to check.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// Checks in flight in total. Default 16.
    pub concurrency: usize,
    /// Checks in flight per origin. Default 2.
    pub per_host: usize,
    /// The least time between the starts of two requests to one origin (robots.txt's too): a
    /// rate of at most one request per `delay` per origin. A larger robots.txt Crawl-delay
    /// wins (capped at [`CheckConfig::max_delay`]). Default 0.
    pub delay: Duration,
    /// Largest Crawl-delay honoured. Default 10 s.
    pub max_delay: Duration,
    /// Bytes of an HTML page searched for `<meta name="robots">` at most; reading stops sooner
    /// at the end of the head. Default 64 KiB.
    pub html_head_bytes: usize,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            concurrency: 16,
            per_host: 2,
            delay: Duration::ZERO,
            max_delay: Duration::from_secs(10),
            html_head_bytes: 64 * 1024,
        }
    }
}

impl CheckConfig {
    /// The pause between two requests to one origin for at most `per_second` requests a
    /// second (0 or less: no pause).
    pub fn rate_delay(per_second: f64) -> Duration {
        if per_second > 0.0 && per_second.is_finite() {
            Duration::from_secs_f64(1.0 / per_second)
        } else {
            Duration::ZERO
        }
    }
}

/// A URL to check, with where the sitemap lists it.
#[derive(Clone, Debug)]
pub struct UrlToCheck {
    /// The URL.
    pub loc: String,
    /// Its `<loc>` in the sitemap.
    pub position: Option<Position>,
}

/// One origin's share of a run: checks in flight, and when the next request may start.
struct Host {
    permits: Arc<Semaphore>,
    next: tokio::sync::Mutex<Instant>,
}

impl Host {
    /// Waits for this origin's next turn and books the one after, `delay` later.
    async fn pace(&self, delay: Duration) {
        if delay.is_zero() {
            return;
        }
        let mut next = self.next.lock().await;
        let now = Instant::now();
        if *next > now {
            tokio::time::sleep(*next - now).await;
        }
        *next = Instant::now() + delay;
    }
}

/// What a run of checks shares, so that however many URLs it checks (in however many
/// batches), each origin's robots.txt is fetched once and its requests keep one pace.
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Checker {
    fetcher: Fetcher,
    config: Arc<CheckConfig>,
    robots: RobotsCache,
    global: Arc<Semaphore>,
    hosts: Arc<Mutex<HashMap<String, Arc<Host>>>>,
}

impl Checker {
    /// A run with this client and politeness.
    pub fn new(fetcher: &Fetcher, config: CheckConfig) -> Checker {
        Checker {
            fetcher: fetcher.clone(),
            global: Arc::new(Semaphore::new(config.concurrency.max(1))),
            config: Arc::new(config),
            robots: RobotsCache::new(),
            hosts: Arc::default(),
        }
    }

    /// The politeness in force.
    pub fn config(&self) -> &CheckConfig {
        &self.config
    }

    fn host(&self, origin: &str) -> Arc<Host> {
        let mut hosts = self.hosts.lock().expect("hosts");
        hosts
            .entry(origin.to_owned())
            .or_insert_with(|| {
                Arc::new(Host {
                    permits: Arc::new(Semaphore::new(self.config.per_host.max(1))),
                    next: tokio::sync::Mutex::new(Instant::now()),
                })
            })
            .clone()
    }

    /// Checks one URL: robots.txt first (fetched on the origin's first URL, in its pace), then
    /// one request in the origin's pace. The findings are empty when the URL is fine.
    pub async fn check(&self, u: &UrlToCheck) -> Vec<Finding> {
        self.check_versioned(u).await.findings
    }

    /// [`Checker::check`], with the version of the page its server named in the same answer
    /// ([`Checked::version`]): what the service compares between two visits to tell whether a
    /// sitemap's lastmod moves with its pages. No request more.
    pub async fn check_versioned(&self, u: &UrlToCheck) -> Checked {
        let origin = url::Url::parse(&u.loc).map(|p| p.origin().ascii_serialization()).unwrap_or_default();
        let host = self.host(&origin);
        let _host_permit = host.permits.clone().acquire_owned().await.expect("never closed");
        let _permit = self.global.clone().acquire_owned().await.expect("never closed");
        let rules = match self.robots.cached(&u.loc) {
            Some(rules) => rules,
            None => {
                // Only the first URL of an origin (or a few at once) gets here; robots.txt's
                // request takes a turn like any other.
                if robots_url(&u.loc).is_ok() {
                    host.pace(self.config.delay).await;
                }
                self.robots.get(&self.fetcher, &u.loc).await
            }
        };
        if !rules.allowed(&u.loc) {
            let f =
                Finding::new(Rule::RobotsDisallowed, u.position, format!("{} is disallowed by its robots.txt", u.loc));
            return Checked { findings: vec![f.with_loc(u.loc.clone())], version: None };
        }
        let delay = rules.crawl_delay.unwrap_or_default().min(self.config.max_delay).max(self.config.delay);
        check_one(&self.fetcher, u, &self.config, &host, delay).await
    }
}

/// One URL's check: what was found, and the page's version.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// The findings; empty when the URL is fine.
    pub findings: Vec<Finding>,
    /// The version the page's server named in a 2xx answer: its `ETag`, else its
    /// `Last-Modified` (prefixed `etag:` or `last-modified:`, so the two never compare equal);
    /// `None` when it named neither or the answer was no 2xx.
    pub version: Option<String>,
}

/// The version a 2xx answer names (see [`Checked::version`]), at most 256 bytes.
fn version_of(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let named = |name, prefix: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty() && v.len() <= 256)
            .map(|v| format!("{prefix}:{v}"))
    };
    named(header::ETAG, "etag").or_else(|| named(header::LAST_MODIFIED, "last-modified"))
}

/// Checks every URL with one [`Checker`] and returns the findings, in the order of `urls`.
pub async fn check_urls(fetcher: &Fetcher, urls: Vec<UrlToCheck>, config: &CheckConfig) -> Vec<Finding> {
    let checker = Checker::new(fetcher, config.clone());
    let mut set = JoinSet::new();
    for (i, u) in urls.into_iter().enumerate() {
        let checker = checker.clone();
        set.spawn(async move { (i, checker.check(&u).await) });
    }
    let mut out: Vec<(usize, Vec<Finding>)> = Vec::new();
    while let Some(r) = set.join_next().await {
        if let Ok(r) = r {
            out.push(r);
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().flat_map(|(_, f)| f).collect()
}

/// Path endings of files that are no HTML page: a HEAD tells their status and X-Robots-Tag,
/// and there is no meta tag to read.
const NOT_PAGES: [&str; 24] = [
    ".pdf", ".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif", ".svg", ".ico", ".mp4", ".webm", ".mov", ".mp3", ".ogg",
    ".wav", ".zip", ".gz", ".tgz", ".xml", ".txt", ".csv", ".json", ".doc", ".docx",
];

/// Whether a HEAD is enough for this URL: its path names a file that is no page.
fn head_suffices(url: &url::Url) -> bool {
    let path = url.path().to_ascii_lowercase();
    NOT_PAGES.iter().any(|ext| path.ends_with(ext))
}

/// One URL, one request (two only when a HEAD is refused or fails): redirects are reported,
/// not followed.
async fn check_one(fetcher: &Fetcher, u: &UrlToCheck, config: &CheckConfig, host: &Host, delay: Duration) -> Checked {
    let finding = |rule, msg: String| Finding::new(rule, u.position, msg).with_loc(u.loc.clone());
    let failed = |f: Finding| Checked { findings: vec![f], version: None };
    let Ok(parsed) = fetcher.check_url(&u.loc) else {
        return failed(finding(Rule::UrlStatus, format!("{} cannot be requested", u.loc)));
    };
    let client = fetcher.manual_client();
    host.pace(delay).await;
    let mut used_get = !head_suffices(&parsed);
    let resp = if used_get {
        client.get(parsed.clone()).send().await
    } else {
        match client.head(parsed.clone()).send().await {
            Ok(r) if !matches!(r.status().as_u16(), 403 | 405 | 501) => Ok(r),
            _ => {
                used_get = true;
                host.pace(delay).await;
                client.get(parsed.clone()).send().await
            }
        }
    };
    let resp = match resp {
        Ok(r) => r,
        Err(e) => {
            let e = Error::from_reqwest(&u.loc, &e, fetcher.config());
            return failed(finding(Rule::UrlStatus, format!("{} cannot be fetched: {e}", u.loc)));
        }
    };
    let status = resp.status().as_u16();
    if resp.status().is_redirection() {
        let target = resp
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| parsed.join(l).ok())
            .map(String::from);
        let message = match target {
            Some(target) => format!("{} redirects to {target} (answers {status})", u.loc),
            None => format!("{} answers {status}", u.loc),
        };
        return failed(finding(Rule::UrlStatus, message));
    }
    if !(200..300).contains(&status) {
        return failed(finding(Rule::UrlStatus, format!("{} answers {status}", u.loc)));
    }
    let version = version_of(resp.headers());
    let found = |f: Finding| Checked { findings: vec![f], version: version.clone() };
    let tag: Vec<&str> = resp.headers().get_all("x-robots-tag").iter().filter_map(|v| v.to_str().ok()).collect();
    if tag.iter().any(|t| has_noindex(t)) {
        return found(finding(Rule::UrlNoindex, format!("{} sends X-Robots-Tag: {}", u.loc, tag.join(", "))));
    }
    if used_get && is_html(&resp) {
        let head = html_head(resp, config.html_head_bytes, fetcher.config().read_timeout).await;
        if let Some(content) = meta_robots_noindex(&String::from_utf8_lossy(&head)) {
            return found(finding(
                Rule::UrlNoindex,
                format!("{} has <meta name=\"robots\" content=\"{content}\">", u.loc),
            ));
        }
    }
    Checked { findings: Vec::new(), version }
}

/// The start of an HTML body up to the end of its head (`</head>` or `<body`), at most
/// `limit` bytes; the rest is never read (dropping the response closes the connection).
async fn html_head(mut resp: reqwest::Response, limit: usize, read_timeout: Duration) -> Vec<u8> {
    let mut head = Vec::new();
    while head.len() < limit {
        let searched = head.len().saturating_sub(6);
        match tokio::time::timeout(read_timeout, resp.chunk()).await {
            Ok(Ok(Some(c))) => head.extend_from_slice(&c),
            _ => break,
        }
        if head_ends(&head[searched..]) {
            break;
        }
    }
    head.truncate(limit);
    head
}

/// Whether these bytes hold the end of an HTML head.
fn head_ends(bytes: &[u8]) -> bool {
    bytes.windows(7).any(|w| w.eq_ignore_ascii_case(b"</head>"))
        || bytes.windows(5).any(|w| w.eq_ignore_ascii_case(b"<body"))
}

fn is_html(r: &reqwest::Response) -> bool {
    r.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.to_ascii_lowercase().contains("html"))
}

/// `noindex` (or `none`) among the directives of an X-Robots-Tag or meta content value,
/// also in the `agent: directive` form.
fn has_noindex(value: &str) -> bool {
    value.split([',', ':', ' ', ';']).map(|d| d.trim().to_ascii_lowercase()).any(|d| d == "noindex" || d == "none")
}

/// The content of a `<meta name="robots|googlebot" content="...noindex...">`, if any.
fn meta_robots_noindex(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("<meta") {
        let tag_end = rest[i..].find('>').map_or(rest.len(), |e| i + e);
        let tag = &rest[i..tag_end];
        let name = attr(tag, "name");
        if name.is_some_and(|n| n == "robots" || n == "googlebot") {
            if let Some(content) = attr(tag, "content").filter(|c| has_noindex(c)) {
                return Some(content.to_string());
            }
        }
        rest = &rest[tag_end..];
    }
    None
}

/// An attribute's value in a lower-cased tag (quoted with `"` or `'`, or bare).
fn attr<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let mut from = 0;
    while let Some(i) = tag[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before_ok = at > 0 && tag.as_bytes()[at - 1].is_ascii_whitespace();
        let after = tag[from..].trim_start();
        if !before_ok || !after.starts_with('=') {
            continue;
        }
        let v = after[1..].trim_start();
        return Some(match v.chars().next() {
            Some(q @ ('"' | '\'')) => v[1..].split(q).next().unwrap_or(""),
            _ => v.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or(""),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(html: &str, expected: Option<&str>) {
        assert_eq!(meta_robots_noindex(html).as_deref(), expected, "{html}");
    }

    #[test]
    fn meta_robots() {
        check(r#"<html><head><meta name="robots" content="noindex, follow"></head>"#, Some("noindex, follow"));
        check(r#"<META NAME='ROBOTS' CONTENT='NONE'>"#, Some("none"));
        check(r#"<meta content="noindex" name="googlebot"/>"#, Some("noindex"));
        check(r#"<meta name="description" content="noindex is a word">"#, None);
        check(r#"<meta name="robots" content="index, follow">"#, None);
        check("<p>no meta</p>", None);
    }

    #[test]
    fn the_head_ends_and_files_that_are_no_page() {
        assert!(head_ends(b"<title>x</title></HEAD>"));
        assert!(head_ends(b"<meta charset=utf-8><Body class=a>"));
        assert!(!head_ends(b"<head><meta name=robots content=noindex>"));
        let url = |u: &str| url::Url::parse(u).unwrap();
        assert!(head_suffices(&url("https://a.example/report.PDF")));
        assert!(head_suffices(&url("https://a.example/img/cat.jpg")));
        assert!(!head_suffices(&url("https://a.example/about")));
        assert!(!head_suffices(&url("https://a.example/page.html")));
        assert!(!head_suffices(&url("https://a.example/x.pdf/view")));
    }

    #[test]
    fn the_version_a_page_names() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = reqwest::header::HeaderMap::new();
            for (name, value) in pairs {
                h.insert(*name, value.parse().unwrap());
            }
            h
        };
        let lm = "Tue, 01 Oct 2024 10:00:00 GMT";
        let etag = [("etag", "\"v1\""), ("last-modified", lm)];
        assert_eq!(version_of(&headers(&etag)).as_deref(), Some("etag:\"v1\""));
        let date = format!("last-modified:{lm}");
        assert_eq!(version_of(&headers(&[("last-modified", lm)])), Some(date));
        assert_eq!(version_of(&headers(&[("etag", " ")])), None);
        assert_eq!(version_of(&headers(&[("etag", &"x".repeat(300))])), None, "bounded");
        assert_eq!(version_of(&headers(&[])), None);
    }

    #[test]
    fn x_robots_tag() {
        assert!(has_noindex("noindex"));
        assert!(has_noindex("googlebot: noindex, nofollow"));
        assert!(!has_noindex("nofollow, noarchive"));
    }
}
