//! Settings of the HTTP layer: timeouts, limits, retries, User-Agent. Defaults suit a polite crawler.

use crate::Error;
use std::time::Duration;

/// The longest time limit [`seconds`] accepts: a day. No request or connection of a sitemap
/// fetch needs more, and every limit past it is a typing slip (`1e30`) that would overflow the
/// clock arithmetic of deadlines.
pub const MAX_SECONDS: f64 = 86_400.0;

/// A time limit given as a number of seconds: the CLI's `--timeout`, `--connect-timeout` and
/// `--read-timeout`, the Python package's `timeout=` (one rule for both). Refuses what is not
/// finite, not positive or past [`MAX_SECONDS`], saying so with the setting's name, rather
/// than panicking in `Duration::from_secs_f64` or in the deadline's arithmetic later.
pub fn seconds(setting: &str, value: f64) -> Result<Duration, Error> {
    if value.is_finite() && value > 0.0 && value <= MAX_SECONDS {
        return Ok(Duration::from_secs_f64(value));
    }
    Err(Error::Setting {
        setting: setting.to_string(),
        reason: format!("must be a positive number of seconds, at most {MAX_SECONDS} (a day), not {value:?}"),
    })
}

/// The User-Agent sent unless configured: `mapwright/VERSION (+homepage)`.
pub const DEFAULT_USER_AGENT: &str =
    concat!("mapwright/", env!("CARGO_PKG_VERSION"), " (+https://github.com/mapwright/mapwright)");

/// How the HTTP layer behaves. Every field has a documented default ([`Config::default`]).
#[derive(Clone, Debug)]
pub struct Config {
    /// Sent as `User-Agent`, and the agent robots.txt rules are matched against.
    pub user_agent: String,
    /// Time to open a connection. Default 10 s.
    pub connect_timeout: Duration,
    /// Time for a whole request, body included. Default 120 s.
    pub timeout: Duration,
    /// Longest wait between two reads of the body (a server that drips). Default 30 s.
    pub read_timeout: Duration,
    /// Redirects followed before failing. Default 10.
    pub max_redirects: usize,
    /// Bytes received on the wire before stopping; the reader separately stops at the same
    /// number of uncompressed bytes. Default 52,428,800 (the protocol's limit).
    pub max_bytes: u64,
    /// Extra attempts after a 429 or 5xx answer (connection failures are not retried). Default 2.
    pub retries: u32,
    /// First backoff delay, doubled at each retry, when the server sends no Retry-After. Default 500 ms.
    pub backoff: Duration,
    /// Longest Retry-After honoured; a longer one gives up at once. Default 60 s.
    pub max_retry_after: Duration,
    /// Whether hosts resolving to loopback, private or link-local addresses may be fetched.
    /// The CLI allows them (a developer's own site); the server will not. Default true.
    pub allow_private_networks: bool,
    /// How long an idle connection is kept for reuse. Default 90 s; a run over many hosts
    /// keeps it short, since a host that is done is never asked again and each idle
    /// connection holds a file descriptor.
    pub pool_idle_timeout: Duration,
    /// Wait before each further page of an OAI-PMH list of records: a repository is asked
    /// for its pages one at a time and no faster than this, so a list of thousands of pages
    /// (or a resumption token that never ends) is not fetched as fast as the repository
    /// answers. Default 200 ms. The pages together still get [`Config::timeout`], and the
    /// reader stops at [`mapwright_core::Limits::max_pages`].
    pub oai_page_pause: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            user_agent: DEFAULT_USER_AGENT.to_string(),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(120),
            read_timeout: Duration::from_secs(30),
            max_redirects: 10,
            max_bytes: mapwright_core::MAX_BYTES,
            retries: 2,
            backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(60),
            allow_private_networks: true,
            pool_idle_timeout: Duration::from_secs(90),
            oai_page_pause: Duration::from_millis(200),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::seconds;
    use std::time::Duration;

    fn check(value: f64, expected: Option<Duration>) {
        assert_eq!(seconds("--timeout", value).ok(), expected, "{value}");
    }

    #[test]
    fn time_limits_are_finite_positive_and_at_most_a_day() {
        check(0.5, Some(Duration::from_millis(500)));
        check(86_400.0, Some(Duration::from_secs(86_400)));
        check(86_400.5, None);
        check(1e19, None);
        check(1e30, None);
        check(f64::INFINITY, None);
        check(f64::NAN, None);
        check(0.0, None);
        check(-1.0, None);
        let e = seconds("--timeout", 1e30).unwrap_err().to_string();
        assert_eq!(e, "--timeout must be a positive number of seconds, at most 86400 (a day), not 1e30");
    }
}
