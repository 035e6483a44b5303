//! The HTTP client: one reqwest client with our timeouts, redirect policy, retries and
//! conditional requests; bodies come out as bounded streams (see [`crate::body`]).

use crate::body::BodyReader;
use crate::{Config, Error};
use reqwest::header::{self, HeaderMap, HeaderValue};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Validators from an earlier fetch, sent as `If-None-Match` / `If-Modified-Since`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag` the server sent last time.
    pub etag: Option<String>,
    /// The `Last-Modified` the server sent last time.
    pub last_modified: Option<String>,
}

/// What the server said about a document, before its body.
#[derive(Clone, Debug)]
pub struct Meta {
    /// The URL requested.
    pub requested: String,
    /// The URL after redirects: scope is judged on it.
    pub final_url: String,
    /// The final status (2xx or 304).
    pub status: u16,
    /// Validators for the next conditional request.
    pub validators: Validators,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// `Content-Encoding`, if any (only `gzip` is accepted; the core removes it).
    pub content_encoding: Option<String>,
    /// `X-Robots-Tag` values, joined with `, `.
    pub x_robots_tag: Option<String>,
}

/// The result of a GET.
pub enum Fetched {
    /// 304: unchanged since the validators given.
    NotModified(Meta),
    /// 2xx with a body to stream.
    Body(Response),
}

/// A successful response whose body has not been read yet.
pub struct Response {
    /// Headers and URLs.
    pub meta: Meta,
    inner: reqwest::Response,
    config: Arc<Config>,
}

impl Response {
    /// The body as a blocking [`std::io::BufRead`] fed by a task on the current tokio runtime
    /// through a bounded channel: memory stays constant whatever the body's size, and the
    /// wire limit and between-bytes timeout apply as bytes arrive. Use it from
    /// `spawn_blocking` or another thread, never from an async task.
    pub fn into_reader(self) -> BodyReader {
        crate::body::spawn(self.inner, self.meta.final_url.clone(), self.config)
    }

    /// The next chunk of the body as it arrives (`None` at its end), for callers that parse
    /// while reading (the crawler's streaming HTML parser) on an async task. Waits between
    /// bytes at most the configured read timeout; the caller bounds the total it accepts.
    pub async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, Error> {
        match tokio::time::timeout(self.config.read_timeout, self.inner.chunk()).await {
            Err(_) => Err(Error::Timeout {
                url: self.meta.final_url.clone(),
                what: "between bytes",
                limit: self.config.read_timeout,
            }),
            Ok(r) => r.map_err(|e| Error::from_reqwest(&self.meta.final_url, &e, &self.config)),
        }
    }

    /// The first `limit` bytes of the body, and whether it was longer (for robots.txt and
    /// HTML heads). Waits between bytes at most the configured read timeout.
    pub async fn bytes_up_to(mut self, limit: usize) -> Result<(Vec<u8>, bool), Error> {
        let mut out = Vec::new();
        loop {
            let Some(chunk) = self.next_chunk().await? else { return Ok((out, false)) };
            let room = limit - out.len();
            if chunk.len() > room {
                out.extend_from_slice(&chunk[..room]);
                return Ok((out, true));
            }
            out.extend_from_slice(&chunk);
        }
    }
}

/// An HTTP client configured once and shared (cheap to clone).
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    config: Arc<Config>,
}

impl Fetcher {
    /// Builds the client. Fails only if TLS cannot be set up.
    pub fn new(config: Config) -> Result<Fetcher, Error> {
        let max = config.max_redirects;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().iter().any(|u| u == attempt.url()) {
                attempt.error("redirect loop")
            } else if attempt.previous().len() > max {
                attempt.error("too many redirects")
            } else {
                attempt.follow()
            }
        });
        let mut headers = HeaderMap::new();
        // Ask for gzip but do not let the client decode it: the core recognises gzip by its
        // magic bytes, bounds every layer, and so handles a .gz file sent gzipped (two layers).
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let mut builder = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            .default_headers(headers)
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .redirect(policy)
            .pool_max_idle_per_host(16);
        if !config.allow_private_networks {
            builder = builder.dns_resolver(Arc::new(PublicOnlyResolver));
        }
        let client = builder.build().map_err(|e| Error::Http { url: String::new(), message: e.to_string() })?;
        Ok(Fetcher { client, config: Arc::new(config) })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The underlying reqwest client (for HEAD and POST requests of other modules).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// GET `url`, conditional when `validators` are given, retrying 429 and 5xx answers with
    /// backoff (honouring `Retry-After`). Non-2xx answers (except 304) are an [`Error::Status`].
    pub async fn get(&self, url: &str, validators: Option<&Validators>) -> Result<Fetched, Error> {
        let parsed = self.check_url(url)?;
        let mut attempt = 0u32;
        loop {
            let mut req = self.client.get(parsed.clone());
            if let Some(v) = validators {
                if let Some(e) = &v.etag {
                    req = req.header(header::IF_NONE_MATCH, e);
                }
                if let Some(m) = &v.last_modified {
                    req = req.header(header::IF_MODIFIED_SINCE, m);
                }
            }
            let resp = req.send().await.map_err(|e| Error::from_reqwest(url, &e, &self.config))?;
            let status = resp.status().as_u16();
            let meta = meta_of(url, &resp);
            if status == 304 {
                return Ok(Fetched::NotModified(meta));
            }
            if resp.status().is_success() {
                return Ok(Fetched::Body(Response { meta, inner: resp, config: self.config.clone() }));
            }
            if (status == 429 || status >= 500) && attempt < self.config.retries {
                let wait = retry_after(resp.headers())
                    .unwrap_or_else(|| self.config.backoff.saturating_mul(1 << attempt.min(16)));
                if wait <= self.config.max_retry_after {
                    tracing::debug!(url, status, ?wait, "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                    continue;
                }
            }
            return Err(Error::Status { url: meta.final_url, status });
        }
    }

    /// Parses `url` and refuses what the client must not fetch.
    pub(crate) fn check_url(&self, url: &str) -> Result<url::Url, Error> {
        let invalid = |reason: String| Error::InvalidUrl { url: url.to_string(), reason };
        let parsed = url::Url::parse(url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!("scheme {} is not http or https", parsed.scheme())));
        }
        if !self.config.allow_private_networks {
            let ip = match parsed.host() {
                Some(url::Host::Ipv4(a)) => Some(IpAddr::V4(a)),
                Some(url::Host::Ipv6(a)) => Some(IpAddr::V6(a)),
                _ => None,
            };
            if ip.is_some_and(|ip| !is_public(ip)) {
                return Err(invalid("a private or loopback address (private networks are not allowed)".into()));
            }
        }
        Ok(parsed)
    }
}

/// The headers we keep from a response.
fn meta_of(requested: &str, resp: &reqwest::Response) -> Meta {
    let h = resp.headers();
    let get = |name: header::HeaderName| h.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let robots: Vec<&str> = h.get_all("x-robots-tag").iter().filter_map(|v| v.to_str().ok()).collect();
    Meta {
        requested: requested.to_string(),
        final_url: resp.url().to_string(),
        status: resp.status().as_u16(),
        validators: Validators { etag: get(header::ETAG), last_modified: get(header::LAST_MODIFIED) },
        content_type: get(header::CONTENT_TYPE),
        content_encoding: get(header::CONTENT_ENCODING),
        x_robots_tag: if robots.is_empty() { None } else { Some(robots.join(", ")) },
    }
}

/// `Retry-After` as seconds or as an HTTP date.
pub(crate) fn retry_after(h: &HeaderMap) -> Option<Duration> {
    let v = h.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// Whether an address is on the public Internet (not loopback, private, link-local...).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => {
            !(a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.is_multicast()
                || a.octets()[0] == 100 && (a.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(a) => {
            if let Some(v4) = a.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let seg0 = a.segments()[0];
            !(a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (seg0 & 0xfe00) == 0xfc00
                || (seg0 & 0xffc0) == 0xfe80)
        }
    }
}

/// Resolves names and drops non-public addresses, so a public name pointing at 127.0.0.1
/// (DNS rebinding) cannot reach internal services. Used when private networks are refused.
struct PublicOnlyResolver;

impl reqwest::dns::Resolve for PublicOnlyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.filter(|a| is_public(a.ip())).collect();
            if addrs.is_empty() {
                return Err(format!("{host} resolves only to private or loopback addresses").into());
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}
