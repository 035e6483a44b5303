//! The HTTP client: one reqwest client with our timeouts, redirect policy, retries and
//! conditional requests; bodies come out as bounded streams (see [`crate::body`]).

use crate::body::{BodyReader, BodyStats, WholeBody};
use crate::{Config, Error};
use reqwest::header::{self, HeaderMap, HeaderValue};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
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
// A `Fetched` lives from the answer to the caller's match: boxing the body would cost an
// allocation per fetch to save a few hundred bytes of stack for a 304.
#[allow(clippy::large_enum_variant)]
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
    /// The client and runtime that fetched it, and when: for the next pages of an OAI-PMH answer.
    fetcher: Fetcher,
    handle: tokio::runtime::Handle,
    started: std::time::Instant,
}

impl Response {
    /// The body as a blocking [`std::io::BufRead`] fed by a task on the current tokio runtime
    /// through a bounded channel: memory stays constant whatever the body's size, and the
    /// wire limit and between-bytes timeout apply as bytes arrive. Use it from
    /// `spawn_blocking` or another thread, never from an async task.
    pub fn into_reader(self) -> BodyReader {
        crate::body::spawn(self.inner, self.meta.final_url.clone(), self.config)
    }

    /// The whole body, read on this task, when the server announced (`Content-Length`) at
    /// most `max` bytes; else the response back, for [`Response::into_reader`]. The checks of
    /// `into_reader`'s task apply (content encoding, wire limit, between-bytes timeout), and
    /// what stops the transfer is kept in [`WholeBody::error`] with the bytes before it, so a
    /// reader sees the same bytes then the same error. Discovery reads most sitemaps of a
    /// many-site run this way: no task and channel per body, no blocking thread per small file.
    pub async fn read_whole(mut self, max: u64) -> Result<WholeBody, Response> {
        if self.inner.content_length().is_none_or(|n| n > max) {
            return Err(self);
        }
        let mut stats = BodyStats::default();
        let encoding = self.meta.content_encoding.as_deref().map(|e| e.trim().to_ascii_lowercase());
        if let Some(enc) = encoding.filter(|e| !matches!(e.as_str(), "gzip" | "x-gzip" | "identity" | "")) {
            let error = Error::Encoding { url: self.meta.final_url.clone(), encoding: enc };
            return Ok(WholeBody { bytes: bytes::Bytes::new(), stats, error: Some(error) });
        }
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        // One chunk (the usual case for a small body) is kept as it came, uncopied.
        let mut first: Option<bytes::Bytes> = None;
        let mut joined: Vec<u8> = Vec::new();
        let error = loop {
            match self.next_chunk().await {
                Ok(None) => {
                    stats.complete = true;
                    break None;
                }
                Ok(Some(chunk)) => {
                    stats.bytes += chunk.len() as u64;
                    if stats.bytes > self.config.max_bytes {
                        break Some(Error::TooLarge { url: self.meta.final_url.clone(), limit: self.config.max_bytes });
                    }
                    hasher.update(&chunk);
                    match first.take() {
                        None if joined.is_empty() => first = Some(chunk),
                        None => joined.extend_from_slice(&chunk),
                        Some(f) => {
                            joined.reserve(self.inner.content_length().unwrap_or(0) as usize);
                            joined.extend_from_slice(&f);
                            joined.extend_from_slice(&chunk);
                        }
                    }
                }
                Err(e) => break Some(e),
            }
        };
        stats.hash = hasher.digest();
        let bytes = first.unwrap_or_else(|| joined.into());
        Ok(WholeBody { bytes, stats, error })
    }

    /// The way to the next pages should the body be an OAI-PMH answer: give it to
    /// [`mapwright_core::SitemapReader::paged`] (or the validator's `pager`), so a repository's
    /// base URL is read wherever a sitemap URL is. Other formats never use it.
    pub fn pager(&self) -> Arc<crate::OaiPager> {
        Arc::new(crate::OaiPager::new(self.fetcher.clone(), self.handle.clone(), &self.meta.final_url, self.started))
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

/// Asked before every request [`Fetcher::get`] sends (each attempt, each OAI-PMH page, each
/// robots.txt): a service counts its requests per target here, for every user together, so
/// that what the library fetches on its own (the next page, the robots.txt of a site) is
/// counted as well as the document asked for.
pub trait Gate: Send + Sync {
    /// `Ok` to send a request to `url` now (counted); `Err` with the words the user who asked
    /// reads when the request is held back. May wait for its turn before answering.
    fn ask<'a>(&'a self, url: &'a str) -> std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;
}

/// An HTTP client configured once and shared (cheap to clone).
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    /// The same client without redirects, to see a redirect's own status (live checks).
    manual: reqwest::Client,
    config: Arc<Config>,
    /// Asked before each GET, when set ([`Fetcher::with_gate`]).
    gate: Option<Arc<dyn Gate>>,
}

impl Fetcher {
    /// Builds the client. Fails only if TLS cannot be set up.
    pub fn new(config: Config) -> Result<Fetcher, Error> {
        // reqwest takes the process's rustls provider: ring (see the workspace's Cargo.toml).
        // Already installed (a second client, or the embedding program chose one) is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let max = config.max_redirects;
        let allow_private = config.allow_private_networks;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            match redirect_refusal(attempt.previous(), attempt.url(), max, allow_private) {
                Some(why) => attempt.error(why),
                None => attempt.follow(),
            }
        });
        let mut headers = HeaderMap::new();
        // Ask for gzip but do not let the client decode it: the core recognises gzip by its
        // magic bytes, bounds every layer, and so handles a .gz file sent gzipped (two layers).
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let build = |policy: reqwest::redirect::Policy| {
            let mut builder = reqwest::Client::builder()
                .user_agent(config.user_agent.clone())
                .default_headers(headers.clone())
                .connect_timeout(config.connect_timeout)
                .timeout(config.timeout)
                .redirect(policy)
                .pool_max_idle_per_host(16)
                .pool_idle_timeout(config.pool_idle_timeout);
            if !config.allow_private_networks {
                // Through a proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, which reqwest reads by
                // default) the proxy resolves and connects, so no address check of ours would see
                // what is reached: with private networks refused, requests go direct, always.
                builder = builder.dns_resolver(Arc::new(PublicOnlyResolver)).no_proxy();
            }
            builder.build().map_err(|e| Error::Http { url: String::new(), message: e.to_string() })
        };
        let client = build(policy)?;
        let manual = build(reqwest::redirect::Policy::none())?;
        Ok(Fetcher { client, manual, config: Arc::new(config), gate: None })
    }

    /// The same client (its connections shared), asking `gate` before every GET it sends.
    pub fn with_gate(mut self, gate: Arc<dyn Gate>) -> Fetcher {
        self.gate = Some(gate);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The underlying reqwest client (for HEAD and POST requests of other modules).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// The client that does not follow redirects, with the same protections.
    pub(crate) fn manual_client(&self) -> &reqwest::Client {
        &self.manual
    }

    /// GET `url`, conditional when `validators` are given, retrying 429 and 5xx answers with
    /// backoff (honouring `Retry-After`). Non-2xx answers (except 304) are an [`Error::Status`].
    ///
    /// Redirects are followed here, hop by hop, not by reqwest's policy (which cannot wait):
    /// each hop asks the [`Gate`] for its own target, so a redirect cannot aim the requests
    /// of a service at a host past that host's budget; each is refused for the reasons of
    /// `redirect_refusal`, and the time limit holds for the whole chain, as the client's own.
    pub async fn get(&self, url: &str, validators: Option<&Validators>) -> Result<Fetched, Error> {
        let mut current = self.check_url(url)?;
        let started = std::time::Instant::now();
        let mut chain_started = started;
        let mut previous: Vec<url::Url> = Vec::new();
        let mut attempt = 0u32;
        loop {
            if let Some(gate) = &self.gate {
                gate.ask(current.as_str()).await.map_err(|reason| Error::Held { url: current.to_string(), reason })?;
            }
            let left = self.config.timeout.saturating_sub(chain_started.elapsed());
            if left.is_zero() {
                return Err(Error::Timeout { url: url.to_string(), what: "request", limit: self.config.timeout });
            }
            let mut req = self.manual.get(current.clone()).timeout(left);
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
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let next = resp
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| current.join(l).ok());
                if let Some(next) = next {
                    previous.push(current);
                    let max = self.config.max_redirects;
                    if let Some(why) = redirect_refusal(&previous, &next, max, self.config.allow_private_networks) {
                        let reason = if why == TOO_MANY_REDIRECTS {
                            format!("more than {max} redirects")
                        } else {
                            why.to_owned()
                        };
                        return Err(Error::Redirect { url: url.to_string(), reason });
                    }
                    current = next;
                    continue;
                }
            }
            let meta = meta_of(url, &resp);
            if status == 304 {
                return Ok(Fetched::NotModified(meta));
            }
            if resp.status().is_success() {
                return Ok(Fetched::Body(Response {
                    meta,
                    inner: resp,
                    config: self.config.clone(),
                    fetcher: self.clone(),
                    handle: tokio::runtime::Handle::current(),
                    started,
                }));
            }
            if (status == 429 || status >= 500) && attempt < self.config.retries {
                let wait = retry_after(resp.headers())
                    .unwrap_or_else(|| self.config.backoff.saturating_mul(1 << attempt.min(16)));
                if wait <= self.config.max_retry_after {
                    tracing::debug!(url, status, ?wait, "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                    chain_started = std::time::Instant::now();
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

/// [`redirect_refusal`]'s word for a chain past `max_redirects` (said with the number).
const TOO_MANY_REDIRECTS: &str = "too many redirects";

/// Why a redirect hop to `next` must not be followed, if it must not: a loop, too many hops,
/// or (when private networks are refused) an IP-literal host that is not public. Names are
/// checked after resolution by [`PublicOnlyResolver`]; an IP literal never reaches the
/// resolver, so without this check a public server could redirect us to 127.0.0.1 (SSRF).
fn redirect_refusal(previous: &[url::Url], next: &url::Url, max: usize, allow_private: bool) -> Option<&'static str> {
    if previous.iter().any(|u| u == next) {
        return Some("redirect loop");
    }
    if previous.len() > max {
        return Some(TOO_MANY_REDIRECTS);
    }
    if !allow_private && !matches!(next.scheme(), "http" | "https") {
        return Some("redirect to a scheme other than http or https");
    }
    let ip = match next.host() {
        Some(url::Host::Ipv4(a)) => Some(IpAddr::V4(a)),
        Some(url::Host::Ipv6(a)) => Some(IpAddr::V6(a)),
        _ => None,
    };
    if !allow_private && ip.is_some_and(|ip| !is_public(ip)) {
        return Some("redirect to a private or loopback address (private networks are not allowed)");
    }
    None
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

/// IPv4 ranges that are not the public Internet (IANA's special-purpose registry, RFC 6890
/// and later): (first address, prefix length, what it is).
const V4_NOT_PUBLIC: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "this network"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "shared address space (carrier-grade NAT)"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "link-local"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation (TEST-NET-1)"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation (TEST-NET-2)"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation (TEST-NET-3)"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved, and broadcast"),
];

/// IPv6 ranges that are not the public Internet, inside the global unicast block 2000::/3
/// (everything outside it is refused, NAT64 aside: see [`is_public`]).
const V6_NOT_PUBLIC: &[(Ipv6Addr, u8, &str)] = &[
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, "IETF protocol assignments (Teredo, ORCHID, benchmarking)"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, "documentation"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, "documentation"),
];

fn v4_in(a: Ipv4Addr, (net, len, _): &(Ipv4Addr, u8, &str)) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
    u32::from(a) & mask == u32::from(*net) & mask
}

fn v6_in(a: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(a) & mask == u128::from(net) & mask
}

/// Whether an address is on the public Internet: the one check of every address the client
/// may connect to when private networks are refused (IP literals in URLs and redirects, and
/// every address a name resolves to).
///
/// IPv4: everything but `V4_NOT_PUBLIC`. IPv6: the global unicast block 2000::/3 but
/// `V6_NOT_PUBLIC` and 6to4 (2002::/16) of a non-public IPv4 address, plus the well-known
/// NAT64 prefix 64:ff9b::/96 of a public IPv4 address (what DNS64 gives for public names on
/// an IPv6-only network); IPv4-mapped addresses are judged as their IPv4 address. So
/// loopback, unique-local (fc00::/7), link-local, site-local (fec0::/10), multicast,
/// IPv4-compatible (::/96, e.g. `::127.0.0.1`), local-use NAT64 (64:ff9b:1::/48) and
/// discard-only (100::/64) are all refused: they are outside 2000::/3.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => !V4_NOT_PUBLIC.iter().any(|range| v4_in(a, range)),
        IpAddr::V6(a) => {
            if let Some(v4) = a.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let bits = u128::from(a);
            if v6_in(a, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
                return is_public(IpAddr::V4(Ipv4Addr::from(bits as u32)));
            }
            if v6_in(a, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
                return is_public(IpAddr::V4(Ipv4Addr::from((bits >> 80) as u32)));
            }
            v6_in(a, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3)
                && !V6_NOT_PUBLIC.iter().any(|&(net, len, _)| v6_in(a, net, len))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<url::Url> {
        list.iter().map(|u| url::Url::parse(u).unwrap()).collect()
    }

    /// Every range of the special-purpose registries, its edges, and public neighbours.
    #[test]
    fn public_addresses_table() {
        let table: &[(&str, bool)] = &[
            // IPv4
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("10.0.0.1", false),
            ("10.255.255.255", false),
            ("11.0.0.1", true),
            ("100.63.255.255", true),
            ("100.64.0.0", false),
            ("100.127.255.255", false),
            ("100.128.0.0", true),
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            ("169.254.169.254", false),
            ("172.15.255.255", true),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("172.32.0.0", true),
            ("192.0.0.8", false),
            ("192.0.2.1", false),
            ("192.0.3.1", true),
            ("192.88.99.1", false),
            ("192.168.1.1", false),
            ("198.17.255.255", true),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("198.20.0.0", true),
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            ("203.0.114.1", true),
            ("224.0.0.1", false),
            ("239.255.255.250", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            ("8.8.8.8", true),
            ("93.184.216.34", true),
            // IPv6
            ("::", false),
            ("::1", false),
            ("::127.0.0.1", false),
            ("::8.8.8.8", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:10.0.0.1", false),
            ("::ffff:8.8.8.8", true),
            ("64:ff9b::7f00:1", false),
            ("64:ff9b::a00:1", false),
            ("64:ff9b::808:808", true),
            ("64:ff9b:1::808:808", false),
            ("100::1", false),
            ("2001::1", false),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", false),
            ("2001:2::1", false),
            ("2001:db8::1", false),
            ("2001:db8:ffff::1", false),
            ("2002:7f00:1::1", false),
            ("2002:c0a8:101::1", false),
            ("2002:808:808::1", true),
            ("3fff::1", false),
            ("3fff:fff::1", false),
            ("5f00::1", false),
            ("fc00::1", false),
            ("fd12:3456::1", false),
            ("fe80::1", false),
            ("febf::1", false),
            ("fec0::1", false),
            ("feff::1", false),
            ("ff02::1", false),
            ("2606:2800:220:1::", true),
            ("2a00:1450:4001::1", true),
            ("2001:4860:4860::8888", true),
            ("3ffe::1", true),
        ];
        for (text, public) in table {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(is_public(ip), *public, "{text}");
        }
    }

    /// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY pointing at a "proxy" on loopback: a fetcher
    /// refusing private networks never talks to it (the proxy would reach what our resolver
    /// refuses). The variables are read when a client is built, so the test runs itself again
    /// in a child process with them set, leaving this process's environment alone.
    #[test]
    fn proxy_variables_are_ignored_when_private_networks_are_refused() {
        const CHILD: &str = "MAPWRIGHT_PROXY_TEST_CHILD";
        if std::env::var_os(CHILD).is_some() {
            return proxy_child();
        }
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
        proxy.set_nonblocking(true).unwrap();
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "client::tests::proxy_variables_are_ignored_when_private_networks_are_refused"])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("HTTP_PROXY", &proxy_url)
            .env("http_proxy", &proxy_url)
            .env("HTTPS_PROXY", &proxy_url)
            .env("ALL_PROXY", &proxy_url)
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("1 passed"), "the child ran the test: {stdout}");
        assert!(proxy.accept().is_err(), "the proxy was never connected to");
    }

    /// The child's half: a name that does not resolve, fetched through the proxy variables.
    /// Direct, it fails to resolve; through the proxy it would reach whatever the proxy can.
    fn proxy_child() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let config = Config {
                allow_private_networks: false,
                retries: 0,
                timeout: std::time::Duration::from_secs(3),
                ..Config::default()
            };
            let fetcher = Fetcher::new(config).unwrap();
            for url in ["http://mapwright-proxy-test.invalid/s.xml", "https://mapwright-proxy-test.invalid/s.xml"] {
                let err = fetcher.get(url, None).await.err().expect("not fetched");
                assert!(!err.to_string().contains("status"), "{err}");
            }
        });
    }

    #[test]
    fn redirect_hops_to_private_addresses_are_refused() {
        let from = urls(&["https://public.example/sitemap.xml"]);
        for private in [
            "http://127.0.0.1/",
            "http://127.0.0.1:5432/x",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://172.16.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://224.0.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://100.64.0.1/",
        ] {
            let next = url::Url::parse(private).unwrap();
            let why = redirect_refusal(&from, &next, 10, false);
            assert!(why.is_some_and(|w| w.contains("private")), "{private}: {why:?}");
            assert_eq!(redirect_refusal(&from, &next, 10, true), None, "{private} allowed when asked");
        }
        for public in ["https://93.184.216.34/", "https://[2606:2800:220:1::]/", "https://other.example/s.xml"] {
            assert_eq!(redirect_refusal(&from, &url::Url::parse(public).unwrap(), 10, false), None, "{public}");
        }
    }

    #[test]
    fn redirect_loops_and_chains() {
        let chain = urls(&["https://a.example/1", "https://a.example/2"]);
        let back = url::Url::parse("https://a.example/1").unwrap();
        assert_eq!(redirect_refusal(&chain, &back, 10, true), Some("redirect loop"));
        let next = url::Url::parse("https://a.example/3").unwrap();
        assert_eq!(redirect_refusal(&chain, &next, 1, true), Some("too many redirects"));
        assert_eq!(redirect_refusal(&chain, &next, 2, true), None);
    }

    #[tokio::test]
    async fn a_fetcher_refusing_private_networks_refuses_loopback() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = served.clone();
        tokio::spawn(async move {
            if let Ok((_socket, _)) = listener.accept().await {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        });
        let fetcher = Fetcher::new(Config { allow_private_networks: false, ..Config::default() }).unwrap();
        let err = fetcher.get(&format!("http://{addr}/sitemap.xml"), None).await.err().expect("refused");
        assert!(err.to_string().contains("private or loopback"), "{err}");
        // A name that resolves to loopback is refused by the resolver.
        let by_name = fetcher.get(&format!("http://localhost:{}/s.xml", addr.port()), None).await;
        assert!(by_name.is_err());
        assert!(!served.load(std::sync::atomic::Ordering::SeqCst), "no connection was made");
    }
}
