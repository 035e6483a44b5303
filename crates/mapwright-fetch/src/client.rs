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
    /// The same client without redirects, to see a redirect's own status (live checks).
    manual: reqwest::Client,
    config: Arc<Config>,
}

impl Fetcher {
    /// Builds the client. Fails only if TLS cannot be set up.
    pub fn new(config: Config) -> Result<Fetcher, Error> {
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
                .pool_max_idle_per_host(16);
            if !config.allow_private_networks {
                builder = builder.dns_resolver(Arc::new(PublicOnlyResolver));
            }
            builder.build().map_err(|e| Error::Http { url: String::new(), message: e.to_string() })
        };
        let client = build(policy)?;
        let manual = build(reqwest::redirect::Policy::none())?;
        Ok(Fetcher { client, manual, config: Arc::new(config) })
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

/// Why a redirect hop to `next` must not be followed, if it must not: a loop, too many hops,
/// or (when private networks are refused) an IP-literal host that is not public. Names are
/// checked after resolution by [`PublicOnlyResolver`]; an IP literal never reaches the
/// resolver, so without this check a public server could redirect us to 127.0.0.1 (SSRF).
fn redirect_refusal(previous: &[url::Url], next: &url::Url, max: usize, allow_private: bool) -> Option<&'static str> {
    if previous.iter().any(|u| u == next) {
        return Some("redirect loop");
    }
    if previous.len() > max {
        return Some("too many redirects");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<url::Url> {
        list.iter().map(|u| url::Url::parse(u).unwrap()).collect()
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
