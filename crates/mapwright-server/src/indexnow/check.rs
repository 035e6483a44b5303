//! The IndexNow receiver's parse and checks that need no I/O. Pure (serde, serde_json, url,
//! std): the fuzz target `indexnow` compiles this very file.

use serde::Deserialize;
use url::Url;

/// Why a submission is refused, before any I/O: the protocol's 400 or 422.
#[derive(Debug)]
pub enum Refusal {
    /// Malformed: 400.
    BadRequest(String),
    /// Well-formed but not acceptable (key schema, host, key location): 422.
    Rejected(String),
}

/// The most URLs one POST may carry (the protocol's limit).
pub const MAX_URLS: usize = 10_000;

/// The longest URL accepted (the sitemap protocol's limit on a `<loc>`).
pub(crate) const MAX_URL_LEN: usize = 2048;

/// `POST /indexnow` body, or the query of a GET.
#[derive(Debug, Deserialize)]
pub struct Submission {
    pub(crate) host: Option<String>,
    pub(crate) key: Option<String>,
    #[serde(rename = "keyLocation")]
    pub(crate) key_location: Option<String>,
    #[serde(rename = "urlList")]
    pub(crate) url_list: Option<Vec<String>>,
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
    pub fn from_json(body: &[u8]) -> Result<Submission, Refusal> {
        let submission = serde_json::from_slice::<Submission>(body)
            .map_err(|e| Refusal::BadRequest(format!("the body is not an IndexNow JSON object: {e}")))?;
        if submission.host.as_deref().is_none_or(|h| h.trim().is_empty()) {
            return Err(Refusal::BadRequest("the body has no host".into()));
        }
        Ok(submission)
    }

    /// The protocol's checks, in its order, that need no I/O: the key is there (400), the
    /// URLs are absolute http(s) and not too many (400), the key matches the schema (422),
    /// every URL is on the host (422), keyLocation is on the host and above every URL (422).
    pub fn check(self) -> Result<Checked, Refusal> {
        let key = self.key.as_deref().map(str::trim).filter(|k| !k.is_empty());
        let key = key.ok_or_else(|| Refusal::BadRequest("missing the key".into()))?;
        let urls = parse_urls(self.url_list.unwrap_or_default())?;
        check_key_schema(key)?;
        let host = match self.host.as_deref() {
            Some(h) => h.trim().to_ascii_lowercase(),
            None => authority(&urls[0]),
        };
        if let Some(stray) = urls.iter().find(|u| !on_host(u, &host)) {
            return Err(Refusal::Rejected(format!("{stray} does not belong to the host {host}")));
        }
        let key_file = key_file(key, self.key_location.as_deref(), &urls, &host)?;
        Ok(Checked { key: key.to_owned(), host, urls, key_file })
    }
}

/// Absolute http(s) URLs, 1 to [`MAX_URLS`] of them.
fn parse_urls(list: Vec<String>) -> Result<Vec<Url>, Refusal> {
    if list.is_empty() {
        return Err(Refusal::BadRequest("no URL: give url= or a non-empty urlList".into()));
    }
    if list.len() > MAX_URLS {
        return Err(Refusal::BadRequest(format!("{} URLs: at most {MAX_URLS} per request", list.len())));
    }
    list.iter()
        .map(|text| {
            let bad = |why: &str| Refusal::BadRequest(format!("{text:?} {why}"));
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
fn check_key_schema(key: &str) -> Result<(), Refusal> {
    let ok = (8..=128).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Refusal::Rejected("the key must be 8 to 128 characters of a-z, A-Z, 0-9 and -".into()))
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
fn key_file(key: &str, location: Option<&str>, urls: &[Url], host: &str) -> Result<String, Refusal> {
    let Some(location) = location.map(str::trim).filter(|l| !l.is_empty()) else {
        return Ok(format!("{}/{key}.txt", urls[0].origin().ascii_serialization()));
    };
    let url = Url::parse(location)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| Refusal::BadRequest(format!("keyLocation {location:?} is not an absolute http(s) URL")))?;
    if !on_host(&url, host) {
        return Err(Refusal::Rejected(format!("keyLocation {url} is not on the host {host}")));
    }
    let folder = &url.as_str()[..url.as_str().rfind('/').map_or(0, |i| i + 1)];
    if let Some(outside) = urls.iter().find(|u| !u.as_str().starts_with(folder)) {
        return Err(Refusal::Rejected(format!("{outside} is outside {folder}, the folder of the key file")));
    }
    Ok(url.to_string())
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
        assert!(matches!(outside, Err(Refusal::Rejected(_))));
        let other_host = key_file("k1234567", Some("https://evil.example/k.txt"), &list, "example.com");
        assert!(matches!(other_host, Err(Refusal::Rejected(_))));
        assert!(matches!(key_file("k1234567", Some("/k.txt"), &list, "example.com"), Err(Refusal::BadRequest(_))));
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
