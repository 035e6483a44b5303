//! The receiving side of IndexNow (<https://www.indexnow.org/documentation>), as the engines
//! that took over from the sitemap ping expose it: `GET /indexnow?url=&key=[&keyLocation=]`
//! and `POST /indexnow` with `{"host", "key", "keyLocation"?, "urlList"}`.
//!
//! The answers are the protocol's: 400 for a malformed request; 422 when a URL is not on the
//! host (or outside the key file's folder), or the key does not match the protocol's schema
//! (8 to 128 of `a-z A-Z 0-9 -`), or keyLocation is on another host; 429 over a rate limit
//! (per client address and per host); 403 when the key file is missing or does not hold the
//! key; 200 when the URLs were accepted.
//!
//! What is stored: only URLs of an origin that some user verified. Their URLs enter each such
//! site's URL store as changed now ([`Store::record_pushed_urls`]), so they lead its crawl
//! frontier. For a host no verified site has, the service fetches nothing and stores nothing
//! and answers 202 ("received, key not validated"): storing pushes for unknown hosts would
//! let anyone fill the database, and fetching their key files would make the service fetch
//! any host on request.
//!
//! [`Store::record_pushed_urls`]: mapwright_store::Store::record_pushed_urls

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mapwright_fetch::Fetched;
use serde::Deserialize;
use url::Url;

use crate::ping::ClientAddr;
use crate::{AppError, AppState, RateLimiter, now};

/// The most URLs one POST may carry (the protocol's limit).
pub const MAX_URLS: usize = 10_000;

/// The longest URL accepted (the sitemap protocol's limit on a `<loc>`).
const MAX_URL_LEN: usize = 2048;

/// A good key file is trusted this long per (key file, key): a burst of POSTs costs one fetch.
const GOOD_KEY_TTL: Duration = Duration::from_secs(600);

/// A bad one this long, so a fixed key file is seen soon while a flood of bad keys still
/// costs one fetch a minute.
const BAD_KEY_TTL: Duration = Duration::from_secs(60);

/// Past this many cached keys, expired ones are dropped.
const CACHE_SWEEP_AT: usize = 10_000;

/// Bytes of a key file read: a key is at most 128.
const KEY_FILE_LIMIT: usize = 1024;

/// The IndexNow receiver's state: rate limits and the key-file cache.
#[derive(Debug)]
pub struct IndexNow {
    /// Submissions per client address.
    pub per_client: RateLimiter,
    /// Submissions per host named.
    pub per_host: RateLimiter,
    /// (key file URL, key) -> (checked at, good).
    keys: Mutex<HashMap<(String, String), (Instant, bool)>>,
}

impl IndexNow {
    /// At most `per_client` submissions a minute from one address and `per_host` for one host.
    pub fn new(per_client: u32, per_host: u32) -> Self {
        let minute = Duration::from_secs(60);
        IndexNow {
            per_client: RateLimiter::new(per_client, minute),
            per_host: RateLimiter::new(per_host, minute),
            keys: Mutex::new(HashMap::new()),
        }
    }

    fn cached(&self, file: &str, key: &str) -> Option<bool> {
        let keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let (at, good) = *keys.get(&(file.to_owned(), key.to_owned()))?;
        let ttl = if good { GOOD_KEY_TTL } else { BAD_KEY_TTL };
        (at.elapsed() < ttl).then_some(good)
    }

    fn remember(&self, file: &str, key: &str, good: bool) {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        if keys.len() >= CACHE_SWEEP_AT {
            keys.retain(|_, (at, _)| at.elapsed() < GOOD_KEY_TTL);
        }
        keys.insert((file.to_owned(), key.to_owned()), (Instant::now(), good));
    }
}

impl Default for IndexNow {
    /// 60 submissions a minute per client and 30 per host.
    fn default() -> Self {
        IndexNow::new(60, 30)
    }
}

/// The request body limit of `POST /indexnow`: 10,000 URLs of up to 2 KiB, and the JSON
/// around them.
pub(crate) fn body_limit() -> DefaultBodyLimit {
    DefaultBodyLimit::max(MAX_URLS * (MAX_URL_LEN + 8) + 64 * 1024)
}

/// `POST /indexnow` body, or the query of a GET.
#[derive(Debug, Deserialize)]
pub struct Submission {
    host: Option<String>,
    key: Option<String>,
    #[serde(rename = "keyLocation")]
    key_location: Option<String>,
    #[serde(rename = "urlList")]
    url_list: Option<Vec<String>>,
}

/// A submission that passed every check needing neither the store nor a fetch.
#[derive(Debug)]
pub struct Checked {
    /// The key, trimmed, of the protocol's schema.
    pub key: String,
    /// `host` or `host:port`, lower case: every URL is on it.
    pub host: String,
    /// 1 to [`MAX_URLS`] absolute http(s) URLs.
    pub urls: Vec<Url>,
    /// The key file to fetch: keyLocation (on the host, every URL under its folder) or
    /// `<key>.txt` at the first URL's root.
    pub key_file: String,
}

impl Submission {
    /// A `POST /indexnow` body: a JSON object with a non-blank host. The one parser of
    /// untrusted bytes in the receiver (fuzzed with [`Submission::check`]).
    pub fn from_json(body: &[u8]) -> Result<Submission, AppError> {
        let submission = serde_json::from_slice::<Submission>(body)
            .map_err(|e| AppError::BadRequest(format!("the body is not an IndexNow JSON object: {e}")))?;
        if submission.host.as_deref().is_none_or(|h| h.trim().is_empty()) {
            return Err(AppError::BadRequest("the body has no host".into()));
        }
        Ok(submission)
    }

    /// The protocol's checks, in its order, that need no I/O: the key is there (400), the
    /// URLs are absolute http(s) and not too many (400), the key matches the schema (422),
    /// every URL is on the host (422), keyLocation is on the host and above every URL (422).
    pub fn check(self) -> Result<Checked, AppError> {
        let key = self.key.as_deref().map(str::trim).filter(|k| !k.is_empty());
        let key = key.ok_or_else(|| AppError::BadRequest("missing the key".into()))?;
        let urls = parse_urls(self.url_list.unwrap_or_default())?;
        check_key_schema(key)?;
        let host = match self.host.as_deref() {
            Some(h) => h.trim().to_ascii_lowercase(),
            None => authority(&urls[0]),
        };
        if let Some(stray) = urls.iter().find(|u| !on_host(u, &host)) {
            return Err(AppError::Rejected(format!("{stray} does not belong to the host {host}")));
        }
        let key_file = key_file(key, self.key_location.as_deref(), &urls, &host)?;
        Ok(Checked { key: key.to_owned(), host, urls, key_file })
    }
}

/// `GET /indexnow?url=&key=[&keyLocation=]`: one URL.
pub(crate) async fn get(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let submission = Submission {
        host: None,
        key: query.get("key").cloned(),
        key_location: query.get("keyLocation").cloned(),
        url_list: query.get("url").map(|u| vec![u.clone()]),
    };
    answer(receive(&state, &client, submission).await)
}

/// `POST /indexnow` with a JSON body (any content type: the protocol's is
/// `application/json; charset=utf-8`).
pub(crate) async fn post(State(state): State<AppState>, ClientAddr(client): ClientAddr, body: Bytes) -> Response {
    match Submission::from_json(&body) {
        Ok(submission) => answer(receive(&state, &client, submission).await),
        Err(e) => answer(Err(e)),
    }
}

/// What a submission came to: a status and a sentence.
type Outcome = Result<(StatusCode, String), AppError>;

fn answer(outcome: Outcome) -> Response {
    match outcome {
        Ok((status, message)) => (status, format!("{message}\n")).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Checks a submission in the protocol's order and stores what it may.
async fn receive(state: &AppState, client: &str, s: Submission) -> Outcome {
    state.indexnow.per_client.check(client).map_err(AppError::TooManyRequests)?;
    let Checked { key, host, urls, key_file } = s.check()?;
    let key = key.as_str();
    state.indexnow.per_host.check(&host).map_err(AppError::TooManyRequests)?;

    let mut by_origin: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for url in &urls {
        by_origin.entry(url.origin().ascii_serialization()).or_default().push(url.to_string());
    }
    let mut targets = Vec::new();
    for (origin, list) in by_origin {
        for site in state.store.verified_sites_by_origin(&origin).await? {
            targets.push((site.id, list.clone()));
        }
    }
    if targets.is_empty() {
        return Ok((StatusCode::ACCEPTED, format!("received: no verified site on {host}, so nothing is stored")));
    }
    if let Err(why) = check_key_file(state, &key_file, key).await {
        return Ok((StatusCode::FORBIDDEN, format!("the key is not valid: {why}")));
    }
    let at = now();
    for (site_id, list) in &targets {
        state.store.record_pushed_urls(*site_id, list, at).await?;
    }
    Ok((StatusCode::OK, format!("{} URLs accepted", urls.len())))
}

/// Absolute http(s) URLs, 1 to [`MAX_URLS`] of them.
fn parse_urls(list: Vec<String>) -> Result<Vec<Url>, AppError> {
    if list.is_empty() {
        return Err(AppError::BadRequest("no URL: give url= or a non-empty urlList".into()));
    }
    if list.len() > MAX_URLS {
        return Err(AppError::BadRequest(format!("{} URLs: at most {MAX_URLS} per request", list.len())));
    }
    list.iter()
        .map(|text| {
            let bad = |why: &str| AppError::BadRequest(format!("{text:?} {why}"));
            if text.len() > MAX_URL_LEN {
                return Err(bad(&format!("is longer than {MAX_URL_LEN} bytes")));
            }
            let url = Url::parse(text.trim()).map_err(|e| bad(&format!("is not an absolute URL ({e})")))?;
            if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
                return Err(bad("is not an http or https URL"));
            }
            Ok(url)
        })
        .collect()
}

/// 8 to 128 characters of `a-z A-Z 0-9 -`, else 422 (the protocol's "key not matching the
/// schema").
fn check_key_schema(key: &str) -> Result<(), AppError> {
    let ok = (8..=128).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(AppError::Rejected("the key must be 8 to 128 characters of a-z, A-Z, 0-9 and -".into()))
    }
}

/// `host` or `host:port` (an explicit non-default port is part of the host's identity).
fn authority(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

fn on_host(url: &Url, host: &str) -> bool {
    authority(url) == host || (url.port().is_none() && url.host_str() == Some(host))
}

/// The key file's URL: keyLocation (on the host, and every URL under its folder, as the
/// protocol scopes a key to its file's location), else `<key>.txt` at the first URL's root.
fn key_file(key: &str, location: Option<&str>, urls: &[Url], host: &str) -> Result<String, AppError> {
    let Some(location) = location.map(str::trim).filter(|l| !l.is_empty()) else {
        return Ok(format!("{}/{key}.txt", urls[0].origin().ascii_serialization()));
    };
    let url = Url::parse(location)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| AppError::BadRequest(format!("keyLocation {location:?} is not an absolute http(s) URL")))?;
    if !on_host(&url, host) {
        return Err(AppError::Rejected(format!("keyLocation {url} is not on the host {host}")));
    }
    let folder = &url.as_str()[..url.as_str().rfind('/').map_or(0, |i| i + 1)];
    if let Some(outside) = urls.iter().find(|u| !u.as_str().starts_with(folder)) {
        return Err(AppError::Rejected(format!("{outside} is outside {folder}, the folder of the key file")));
    }
    Ok(url.to_string())
}

/// Whether the key file holds the key (cached, see [`GOOD_KEY_TTL`]); `Err` says why not.
async fn check_key_file(state: &AppState, file: &str, key: &str) -> Result<(), String> {
    match state.indexnow.cached(file, key) {
        Some(true) => return Ok(()),
        Some(false) => return Err(format!("{file} did not hold the key at the last check")),
        None => {}
    }
    let result = match state.fetcher.get(file, None).await {
        Ok(Fetched::Body(response)) => match response.bytes_up_to(KEY_FILE_LIMIT).await {
            Ok((bytes, _)) if String::from_utf8_lossy(&bytes).trim() == key => Ok(()),
            Ok(_) => Err(format!("{file} does not hold the key")),
            Err(e) => Err(format!("{file} could not be read: {e}")),
        },
        Ok(Fetched::NotModified(_)) => Err(format!("{file} answered 304 to an unconditional request")),
        Err(e) => Err(format!("{file} could not be fetched: {e}")),
    };
    state.indexnow.remember(file, key, result.is_ok());
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| Url::parse(u).unwrap()).collect()
    }

    #[test]
    fn key_schema() {
        assert!(check_key_schema("abcd-1234").is_ok());
        assert!(check_key_schema(&"a".repeat(128)).is_ok());
        for bad in ["short", "has space1", "under_score", "ümlautsss", &"a".repeat(129)] {
            assert!(check_key_schema(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn key_file_location() {
        let list = urls(&["https://example.com/blog/a", "https://example.com/blog/b"]);
        let file = key_file("k1234567", None, &list, "example.com").unwrap();
        assert_eq!(file, "https://example.com/k1234567.txt");
        let file = key_file("k1234567", Some("https://example.com/blog/k.txt"), &list, "example.com").unwrap();
        assert_eq!(file, "https://example.com/blog/k.txt");
        let outside = key_file("k1234567", Some("https://example.com/shop/k.txt"), &list, "example.com");
        assert!(matches!(outside, Err(AppError::Rejected(_))));
        let other_host = key_file("k1234567", Some("https://evil.example/k.txt"), &list, "example.com");
        assert!(matches!(other_host, Err(AppError::Rejected(_))));
        assert!(matches!(key_file("k1234567", Some("/k.txt"), &list, "example.com"), Err(AppError::BadRequest(_))));
    }

    #[test]
    fn hosts_with_ports() {
        let url = Url::parse("http://127.0.0.1:8080/a").unwrap();
        assert!(on_host(&url, "127.0.0.1:8080"));
        assert!(!on_host(&url, "127.0.0.1"));
        let url = Url::parse("https://Example.com/a").unwrap();
        assert!(on_host(&url, "example.com"));
        assert!(!on_host(&url, "www.example.com"));
    }
}
