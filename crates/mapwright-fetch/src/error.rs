//! The one error type of mapwright-fetch: why a fetch, a discovery or a state operation failed.

use std::time::Duration;

/// Why fetching or reading a remote document failed. Every variant names the URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not an absolute http(s) URL.
    #[error("{url}: not an absolute http(s) URL: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Connecting failed (refused, DNS, TLS).
    #[error("{url}: cannot connect: {message}")]
    Connect {
        /// The URL.
        url: String,
        /// What the HTTP client said.
        message: String,
    },
    /// A timeout fired: connecting, the whole request, or waiting between bytes.
    #[error("{url}: timed out ({what}, limit {limit:?})")]
    Timeout {
        /// The URL.
        url: String,
        /// Which timeout: `connect`, `request`, `between bytes`, or `OAI-PMH pages` (all the
        /// pages of one repository together).
        what: &'static str,
        /// The configured limit.
        limit: Duration,
    },
    /// More redirects than the limit, or a redirect back to a URL already visited.
    #[error("{url}: {reason}")]
    Redirect {
        /// The URL first requested.
        url: String,
        /// `redirect loop` or `more than N redirects`.
        reason: String,
    },
    /// The server answered with a status that is not success (after retries, for 429 and 5xx).
    #[error("{url}: HTTP status {status}")]
    Status {
        /// The final URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The body was larger than the limit on bytes received; nothing past it was read.
    #[error("{url}: more than {limit} bytes received; stopped reading")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// The server used a `Content-Encoding` we did not ask for and cannot decode.
    #[error("{url}: unsupported Content-Encoding {encoding:?}")]
    Encoding {
        /// The URL.
        url: String,
        /// The header value.
        encoding: String,
    },
    /// The fetcher's [`Gate`](crate::Gate) held the request back (the service's budget of
    /// requests to the URL's host, shared by every user): nothing was sent.
    #[error("{url}: not requested now: {reason}")]
    Held {
        /// The URL.
        url: String,
        /// The gate's words, for the user who asked.
        reason: String,
    },
    /// Any other HTTP failure (a reset connection, a malformed response).
    #[error("{url}: HTTP error: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What the HTTP client said.
        message: String,
    },
    /// The body arrived but is not a sitemap the reader can read past (HTML, corrupt gzip...).
    #[error("{url}: {source}")]
    Read {
        /// The final URL.
        url: String,
        /// The reader's error.
        #[source]
        source: mapwright_core::Error,
    },
    /// A sitemap a submission needs was read only part-way (a fault after some entries, an
    /// OAI-PMH page refused): nothing is submitted, since the URLs before the fault would be
    /// taken for the whole list.
    #[error("{source} (read part-way: nothing submitted)")]
    Incomplete {
        /// The sitemap as listed.
        url: String,
        /// Why its read stopped.
        #[source]
        source: Box<Error>,
    },
    /// The sitemaps to submit gave no URL: the reason says why (none listed, every one out of
    /// scope), so an empty submission is never taken for a done one.
    #[error("{url}: no URL to submit: {reason}")]
    NoUrl {
        /// The sitemap given.
        url: String,
        /// Why none was left.
        reason: String,
    },
    /// The request was not sent, or was dropped, because its caller stopped (a discovery past
    /// its deadline stops the paging of an OAI-PMH repository it was reading).
    #[error("{url}: not requested: the discovery was stopped (its deadline passed)")]
    Cancelled {
        /// The URL.
        url: String,
    },
    /// A setting given by the caller is out of its range ([`crate::config::seconds`]).
    #[error("{setting} {reason}")]
    Setting {
        /// The setting as the caller names it (`--timeout`, `timeout`).
        setting: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// The state database failed.
    #[error("state database {path}: {message}")]
    State {
        /// The database file.
        path: String,
        /// What SQLite said.
        message: String,
    },
}

impl Error {
    /// Classifies a reqwest error for `url`, mapping timeouts to the configured limits.
    pub(crate) fn from_reqwest(url: &str, e: &reqwest::Error, cfg: &crate::Config) -> Error {
        let url = url.to_string();
        let message = error_chain(e);
        if e.is_redirect() {
            let reason = if message.contains("redirect loop") {
                "redirect loop".to_string()
            } else {
                format!("more than {} redirects", cfg.max_redirects)
            };
            return Error::Redirect { url, reason };
        }
        if e.is_timeout() {
            // reqwest reports the total timeout and the read timeout alike; the chain tells them apart.
            let (what, limit) = if e.is_connect() {
                ("connect", cfg.connect_timeout)
            } else if message.contains("read") || e.is_body() {
                ("between bytes", cfg.read_timeout)
            } else {
                ("request", cfg.timeout)
            };
            return Error::Timeout { url, what, limit };
        }
        if e.is_connect() {
            return Error::Connect { url, message };
        }
        Error::Http { url, message }
    }

    /// A short machine-friendly reason, for summaries (`status 404`, `timeout`, `too large`...).
    pub fn reason(&self) -> String {
        match self {
            Error::InvalidUrl { .. } => "invalid URL".into(),
            Error::Connect { .. } => "connect".into(),
            Error::Timeout { what, .. } => format!("timeout ({what})"),
            Error::Redirect { reason, .. } => reason.clone(),
            Error::Status { status, .. } => format!("status {status}"),
            Error::TooLarge { .. } => "too large".into(),
            Error::Encoding { .. } => "content-encoding".into(),
            Error::Http { .. } => "http".into(),
            Error::Held { .. } => "held back".into(),
            Error::Read { source, .. } => match source {
                mapwright_core::Error::NotSitemap { .. } => "not a sitemap".into(),
                mapwright_core::Error::TooLarge { .. } => "too large".into(),
                mapwright_core::Error::Gzip { .. } => "corrupt gzip".into(),
                mapwright_core::Error::Io(_) => "read".into(),
                mapwright_core::Error::Oai(stop) => match &stop.fault {
                    mapwright_core::OaiFault::Repository { code, .. } => format!("oai-pmh {code}"),
                    _ => format!("oai-pmh page {} not read", stop.page),
                },
                _ => "malformed".into(),
            },
            Error::Incomplete { source, .. } => format!("read part-way: {}", source.reason()),
            Error::NoUrl { .. } => "no URL".into(),
            Error::Cancelled { .. } => "cancelled".into(),
            Error::Setting { .. } => "setting".into(),
            Error::State { .. } => "state".into(),
        }
    }
}

/// The messages of an error and its sources, joined by `: `.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}
