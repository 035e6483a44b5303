//! Live checks of listed URLs (the "Verify" report of the 2005 console): status, redirects,
//! noindex (X-Robots-Tag and `<meta name="robots">`), and robots.txt disallow, as core
//! [`Finding`]s with the catalogue's rules `url-status`, `url-noindex`, `robots-disallowed`.

use crate::robots::RobotsCache;
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
    /// Checks in flight per host. Default 2.
    pub per_host: usize,
    /// Pause between two requests to one host; a larger robots.txt Crawl-delay wins (capped
    /// at [`CheckConfig::max_delay`]). Default 0.
    pub delay: Duration,
    /// Largest Crawl-delay honoured. Default 10 s.
    pub max_delay: Duration,
    /// Bytes of an HTML page searched for `<meta name="robots">`. Default 64 KiB.
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

/// A URL to check, with where the sitemap lists it.
#[derive(Clone, Debug)]
pub struct UrlToCheck {
    /// The URL.
    pub loc: String,
    /// Its `<loc>` in the sitemap.
    pub position: Option<Position>,
}

struct Host {
    permits: Arc<Semaphore>,
    next: tokio::sync::Mutex<Instant>,
}

/// Checks every URL and returns the findings, in the order of `urls`.
pub async fn check_urls(fetcher: &Fetcher, urls: Vec<UrlToCheck>, config: &CheckConfig) -> Vec<Finding> {
    let robots = RobotsCache::new();
    let global = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let hosts: Arc<Mutex<HashMap<String, Arc<Host>>>> = Arc::default();
    let mut set = JoinSet::new();
    for (i, u) in urls.into_iter().enumerate() {
        let (fetcher, robots, global, hosts, config) =
            (fetcher.clone(), robots.clone(), global.clone(), hosts.clone(), config.clone());
        set.spawn(async move {
            let origin = url::Url::parse(&u.loc).map(|p| p.origin().ascii_serialization()).unwrap_or_default();
            let host = {
                let mut h = hosts.lock().expect("hosts");
                h.entry(origin)
                    .or_insert_with(|| {
                        Arc::new(Host {
                            permits: Arc::new(Semaphore::new(config.per_host.max(1))),
                            next: tokio::sync::Mutex::new(Instant::now()),
                        })
                    })
                    .clone()
            };
            let _host_permit = host.permits.clone().acquire_owned().await.expect("open");
            let _permit = global.acquire_owned().await.expect("open");
            let rules = robots.get(&fetcher, &u.loc).await;
            if !rules.allowed(&u.loc) {
                let f = Finding::new(
                    Rule::RobotsDisallowed,
                    u.position,
                    format!("{} is disallowed by its robots.txt", u.loc),
                );
                return (i, vec![f.with_loc(u.loc)]);
            }
            let delay = rules.crawl_delay.unwrap_or_default().min(config.max_delay).max(config.delay);
            if !delay.is_zero() {
                let mut next = host.next.lock().await;
                let now = Instant::now();
                if *next > now {
                    tokio::time::sleep(*next - now).await;
                }
                *next = Instant::now() + delay;
            }
            (i, check_one(&fetcher, &u, &config).await)
        });
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

/// One URL: HEAD, then GET when HEAD is refused or the page is HTML (for its meta robots).
async fn check_one(fetcher: &Fetcher, u: &UrlToCheck, config: &CheckConfig) -> Vec<Finding> {
    let finding = |rule, msg: String| Finding::new(rule, u.position, msg).with_loc(u.loc.clone());
    let Ok(parsed) = fetcher.check_url(&u.loc) else {
        return vec![finding(Rule::UrlStatus, format!("{} cannot be requested", u.loc))];
    };
    let head = fetcher.client().head(parsed.clone()).send().await;
    let use_get = match &head {
        Ok(r) => matches!(r.status().as_u16(), 403 | 405 | 501) || is_html(r),
        Err(_) => true,
    };
    let resp = if use_get { fetcher.client().get(parsed.clone()).send().await } else { head };
    let resp = match resp {
        Ok(r) => r,
        Err(e) => {
            let e = Error::from_reqwest(&u.loc, &e, fetcher.config());
            return vec![finding(Rule::UrlStatus, format!("{} cannot be fetched: {e}", u.loc))];
        }
    };
    let mut out = Vec::new();
    let status = resp.status().as_u16();
    if resp.url().as_str() != parsed.as_str() {
        // The redirect's own status (301, 302...), which the followed answer no longer tells.
        let first = match fetcher.manual_client().head(parsed.clone()).send().await {
            Ok(r) if r.status().is_redirection() => format!("answers {}; ", r.status().as_u16()),
            _ => String::new(),
        };
        out.push(finding(
            Rule::UrlStatus,
            format!("{} redirects to {} ({first}status {status} there)", u.loc, resp.url()),
        ));
    } else if status == 404 || status == 410 || status >= 500 || !(200..400).contains(&status) {
        out.push(finding(Rule::UrlStatus, format!("{} answers {status}", u.loc)));
        return out;
    }
    let tag: Vec<&str> = resp.headers().get_all("x-robots-tag").iter().filter_map(|v| v.to_str().ok()).collect();
    if tag.iter().any(|t| has_noindex(t)) {
        out.push(finding(Rule::UrlNoindex, format!("{} sends X-Robots-Tag: {}", u.loc, tag.join(", "))));
        return out;
    }
    if use_get && is_html(&resp) {
        let mut resp = resp;
        let mut head = Vec::new();
        while head.len() < config.html_head_bytes {
            match tokio::time::timeout(fetcher.config().read_timeout, resp.chunk()).await {
                Ok(Ok(Some(c))) => head.extend_from_slice(&c),
                _ => break,
            }
        }
        head.truncate(config.html_head_bytes);
        if let Some(content) = meta_robots_noindex(&String::from_utf8_lossy(&head)) {
            out.push(finding(Rule::UrlNoindex, format!("{} has <meta name=\"robots\" content=\"{content}\">", u.loc)));
        }
    }
    out
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
    fn x_robots_tag() {
        assert!(has_noindex("noindex"));
        assert!(has_noindex("googlebot: noindex, nofollow"));
        assert!(!has_noindex("nofollow, noarchive"));
    }
}
