//! Pages from web-server access logs (Common and Combined Log Format, plain or gzipped):
//! successful GET requests on the site's host, counted per URL.
//!
//! Google's 2005 sitemap generator offered this input; a site without a static root still has
//! logs. Memory grows with the number of distinct URLs (they are counted), not with the logs.

use crate::error::Error;
use flate2::read::MultiGzDecoder;
use mapwright_core::Loc;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// How to read logs.
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// The site: requests are resolved against its origin; a log line naming another host
    /// (a virtual-host prefix or an absolute request target) is left out.
    pub base: Loc,
    /// Drop the query string (`/a?utm=1` counts as `/a`).
    pub strip_query: bool,
    /// Keep files that are not pages (stylesheets, scripts, images, fonts...).
    pub all_files: bool,
}

/// One request of a log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// `host[:port]` of a virtual-host prefix (`%v:%p`), when the format has one.
    pub vhost: Option<&'a str>,
    /// `GET`, `HEAD`...
    pub method: &'a str,
    /// The request target as logged (`/path?query` or an absolute URL).
    pub target: &'a str,
    /// HTTP status.
    pub status: u16,
}

/// Parses a Common or Combined Log Format line (optionally with a `%v` or `%v:%p` prefix).
pub fn parse_line(line: &str) -> Option<Request<'_>> {
    let open = line.find(" [")?;
    let close = open + line[open..].find("] \"")?;
    let prefix: Vec<&str> = line[..open].split_ascii_whitespace().collect();
    let vhost = match prefix.len() {
        3 => None,
        4 => Some(prefix[0]),
        _ => return None,
    };
    let rest = &line[close + 3..];
    let end = rest.find('"')?;
    let mut req = rest[..end].split_ascii_whitespace();
    let method = req.next()?;
    let target = req.next()?;
    let status = rest[end + 1..].split_ascii_whitespace().next()?.parse().ok()?;
    Some(Request { vhost, method, target, status })
}

/// What reading the logs gave.
#[derive(Clone, Debug, Default)]
pub struct LogSummary {
    /// Each page and its hits, most requested first (ties in URL order).
    pub pages: Vec<(Loc, u64)>,
    /// Lines read.
    pub lines: u64,
    /// Lines left out, per reason.
    pub skipped: BTreeMap<&'static str, u64>,
}

/// Extensions of files that are not pages.
const ASSETS: &[&str] = &[
    "css", "js", "mjs", "map", "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "woff", "woff2", "ttf",
    "otf", "eot", "mp4", "webm", "mp3", "wav", "json", "xml", "txt", "gz", "zip", "wasm",
];

/// Reads every log (gzip detected by content) and counts hits per page.
pub fn read_logs(paths: &[impl AsRef<Path>], cfg: &LogConfig) -> Result<LogSummary, Error> {
    let mut hits: HashMap<String, u64> = HashMap::new();
    let mut summary = LogSummary::default();
    let origin = cfg.base.origin_str().to_string();
    let host = host_of(&origin);
    let mut line = String::new();
    let mut raw = Vec::new();
    for p in paths {
        let path = p.as_ref();
        let io = |source| Error::Io { path: path.to_path_buf(), source };
        let mut f = BufReader::with_capacity(64 * 1024, File::open(path).map_err(io)?);
        let gz = f.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
        let mut input: Box<dyn BufRead> =
            if gz { Box::new(BufReader::new(MultiGzDecoder::new(f))) } else { Box::new(f) };
        loop {
            line.clear();
            // Read bytes, not a String: a log may hold invalid UTF-8 (it is read lossily).
            raw.clear();
            let n = (&mut input).take(1 << 20).read_until(b'\n', &mut raw).map_err(io)?;
            if n == 0 {
                break;
            }
            line.push_str(&String::from_utf8_lossy(&raw));
            summary.lines += 1;
            let skip = |s: &mut LogSummary, why| *s.skipped.entry(why).or_insert(0) += 1;
            let Some(r) = parse_line(line.trim_end()) else {
                skip(&mut summary, "not a log line");
                continue;
            };
            if r.method != "GET" {
                skip(&mut summary, "not a GET request");
                continue;
            }
            if !(200..300).contains(&r.status) {
                skip(&mut summary, "not a 2xx answer");
                continue;
            }
            if r.vhost.is_some_and(|v| !v.split(':').next().unwrap_or(v).eq_ignore_ascii_case(host)) {
                skip(&mut summary, "another host");
                continue;
            }
            let mut url = if r.target.starts_with('/') {
                format!("{origin}{}", r.target)
            } else if r.target.starts_with("http://") || r.target.starts_with("https://") {
                r.target.to_string()
            } else {
                skip(&mut summary, "not a path");
                continue;
            };
            if cfg.strip_query {
                if let Some(q) = url.find('?') {
                    url.truncate(q);
                }
            }
            if !cfg.all_files && is_asset(&url) {
                skip(&mut summary, "not a page (asset)");
                continue;
            }
            *hits.entry(url).or_insert(0) += 1;
        }
    }
    let mut pages = Vec::with_capacity(hits.len());
    for (url, n) in hits {
        match Loc::parse(&url) {
            Ok(loc) if loc.origin_str() == origin || host_of(loc.origin_str()).eq_ignore_ascii_case(host) => {
                pages.push((loc, n))
            }
            Ok(_) => *summary.skipped.entry("another host").or_insert(0) += n,
            Err(_) => *summary.skipped.entry("not a valid URL").or_insert(0) += n,
        }
    }
    // Two spellings of one URL (`%7e` and `~`) become one Loc: add them up.
    pages.sort_by(|a, b| a.0.cmp(&b.0));
    pages.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 += b.1;
            true
        } else {
            false
        }
    });
    pages.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    summary.pages = pages;
    Ok(summary)
}

fn host_of(origin: &str) -> &str {
    let h = origin.split_once("://").map_or(origin, |(_, h)| h);
    match h.rfind(':') {
        Some(i) if !h[i..].contains(']') => &h[..i],
        _ => h,
    }
}

fn is_asset(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let last = path.rsplit('/').next().unwrap_or("");
    last.rsplit_once('.').is_some_and(|(_, ext)| ASSETS.iter().any(|a| a.eq_ignore_ascii_case(ext)))
}

/// The priority a page gets from its hits: 1.0 for the most requested, down to 0.1 on a
/// logarithmic scale (hits follow a power law; a linear scale would put almost all at 0.1).
pub fn priority_from_hits(hits: u64, max: u64) -> f32 {
    if max <= 1 {
        return 0.5;
    }
    let r = (hits.max(1) as f64).ln() / (max as f64).ln();
    ((0.1 + 0.9 * r) * 10.0).round() as f32 / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let clf = "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /apache_pb.gif HTTP/1.0\" 200 2326";
        let r = parse_line(clf).unwrap();
        assert_eq!((r.vhost, r.method, r.target, r.status), (None, "GET", "/apache_pb.gif", 200));
        let combined = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a?b=1 HTTP/1.1\" 304 - \"http://x/\" \"Mozilla/5.0 (X11; \\\"q\\\")\"";
        assert_eq!(parse_line(combined).unwrap().status, 304);
        let vhost = "example.com:443 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 5";
        assert_eq!(parse_line(vhost).unwrap().vhost, Some("example.com:443"));
        assert_eq!(parse_line("garbage"), None);
        assert_eq!(parse_line("1.2.3.4 - - [x] \"\" 200 1"), None);
    }

    #[test]
    fn priorities() {
        assert_eq!(priority_from_hits(1000, 1000), 1.0);
        assert_eq!(priority_from_hits(1, 1000), 0.1);
        assert_eq!(priority_from_hits(32, 1000), 0.6);
        assert_eq!(priority_from_hits(3, 1), 0.5);
    }
}
