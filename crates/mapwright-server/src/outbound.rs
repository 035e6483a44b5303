//! The outbound gate (issue 33): every request or mail the service makes on a user's behalf
//! asks it before it goes, keyed by its target, never by who asked.
//!
//! A user chooses where the service sends: a site's origin (reads, URL checks, Verify now), a
//! domain name (its TXT look-up), a webhook's URL, an address to invite. Limits per user do not
//! protect the target: many accounts, or one account through many sites, aim at one host or
//! one inbox. So each send counts against budgets of its target, shared by every user and every
//! process on the database (the store's window counter, [`SharedLimit`]):
//!
//! - an HTTP request: its host, and each address the host resolves to (many names, one server);
//! - a DNS look-up: the name looked up;
//! - a mail: the recipient's address.
//!
//! Beside them, paces of their own keyed the same way: "Verify now" per site, per host and per
//! domain property (here, [`Rates`]), and the URL checker's `--check-rate` per host (the
//! checker's, from its configuration: a check counts against it instead of the general budget
//! of its host, so that an operator's check rate is what holds).
//!
//! What the gate answers is [`Held`] when a budget is spent: the send does not go now, and the
//! caller says so where the user who asked looks (an API field, a console word, a webhook's log),
//! or waits its turn when it is background work ([`Gate::wait`]). Nothing is dropped silently.
//! The rates are [`Rates`], documented defaults an operator sets (`serve`'s settings).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use mapwright_store::Store;

use crate::ratelimit::SharedLimit;

/// The per-target budgets. Every field has a documented default ([`Rates::default`]).
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    /// HTTP requests to one host, whatever its scheme and port (default 10 a second).
    pub http_per_host: SharedLimit,
    /// HTTP requests to one resolved address, whatever the name (default 20 a second).
    pub http_per_address: SharedLimit,
    /// DNS look-ups of one name (default 6 a minute).
    pub dns_per_name: SharedLimit,
    /// Mail to one address, every kind together: invitations, alerts, account mail, webhook
    /// notices (default 10 an hour).
    pub mail_per_recipient: SharedLimit,
    /// "Verify now" of one site (default once in 30 s).
    pub verify_per_site: SharedLimit,
    /// "Verify now" of one origin's host, every site with it together (default twice in 30 s:
    /// each check is up to two requests, the file and the home page).
    pub verify_per_host: SharedLimit,
    /// "Verify now" of one domain property (default once in 30 s).
    pub verify_per_domain: SharedLimit,
    /// How long a failed proof (a site's file or tag, a domain's record) is remembered:
    /// "Verify now" within it answers the last outcome without a request (default a minute).
    pub failed_proof_memory: Duration,
}

impl Default for Rates {
    fn default() -> Self {
        let second = Duration::from_secs(1);
        let minute = Duration::from_secs(60);
        Rates {
            http_per_host: SharedLimit::new("out http per host", 10, second),
            http_per_address: SharedLimit::new("out http per address", 20, second),
            dns_per_name: SharedLimit::new("out dns per name", 6, minute),
            mail_per_recipient: SharedLimit::new("out mail per recipient", 10, 60 * minute),
            verify_per_site: SharedLimit::new("verify now per site", 1, 30 * second),
            verify_per_host: SharedLimit::new("verify now per host", 2, 30 * second),
            verify_per_domain: SharedLimit::new("verify now per domain", 1, 30 * second),
            failed_proof_memory: minute,
        }
    }
}

/// What is sent, and to whom.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// An HTTP request to this URL.
    Http(&'a str),
    /// A DNS look-up of this name.
    Dns(&'a str),
    /// A mail to this address.
    Mail(&'a str),
}

/// A send the gate holds back: its target's budget is spent for now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The target as the user who asked may see it: a host, a name, an address.
    pub target: String,
    /// Seconds until the budget has room again.
    pub retry_after: u64,
}

impl Held {
    /// The sentence the user who asked reads.
    pub fn sentence(&self) -> String {
        format!(
            "held back: the service sends at most so much to {} for every user together; it may go again in {} s",
            self.target, self.retry_after
        )
    }
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

/// Addresses of one host counted at most: a name resolving to more is counted on its first.
const MAX_ADDRESSES: usize = 4;

/// The time a resolution for the address budget may take; past it only the host is counted
/// (the request itself resolves again and fails on its own if the name does not answer).
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// The one gate of the service's outbound sends; cheap to share (`Arc` in [`AppState`](crate::AppState)).
pub struct Gate {
    store: Arc<dyn Store>,
    rates: Rates,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate").field("rates", &self.rates).finish()
    }
}

impl Gate {
    /// A gate counting in `store` with these rates.
    pub fn new(store: Arc<dyn Store>, rates: Rates) -> Gate {
        Gate { store, rates }
    }

    /// The rates in force.
    pub fn rates(&self) -> &Rates {
        &self.rates
    }

    /// Asks to send once to `target` now: `Ok` counts the send; [`Held`] when a budget of the
    /// target is spent. A store that cannot count holds the send (for a second): the gate
    /// never lets through what it could not count.
    pub async fn ask(&self, target: Target<'_>) -> Result<(), Held> {
        match target {
            Target::Http(url) => {
                let Some((host, port)) = host_of(url) else {
                    // Not a URL with a host: the request fails on its own, nothing to count.
                    return Ok(());
                };
                self.count(&self.rates.http_per_host, &host, &host).await?;
                for address in resolve(&host, port).await {
                    self.count(&self.rates.http_per_address, &address.to_string(), &host).await?;
                }
                Ok(())
            }
            Target::Dns(name) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                self.count(&self.rates.dns_per_name, &name, &name).await
            }
            Target::Mail(address) => {
                let address =
                    mapwright_store::normalize_email(address).unwrap_or_else(|_| address.to_ascii_lowercase());
                self.count(&self.rates.mail_per_recipient, &address, &address).await
            }
        }
    }

    /// [`Gate::ask`] for background work, which may wait its turn: asks again after each
    /// wait the gate names, for at most `patience` in all, then gives the last [`Held`].
    pub async fn wait(&self, target: Target<'_>, patience: Duration) -> Result<(), Held> {
        let started = tokio::time::Instant::now();
        loop {
            match self.ask(target).await {
                Ok(()) => return Ok(()),
                Err(held) => {
                    let pause = Duration::from_secs(held.retry_after.max(1));
                    if started.elapsed() + pause > patience {
                        return Err(held);
                    }
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// Counts one event of a pace of its own (Verify now per site, URL checks per host) for
    /// `key`; `shown` is what the user may read of the key.
    pub async fn pace(&self, limit: &SharedLimit, key: &str, shown: &str) -> Result<(), Held> {
        self.count(limit, key, shown).await
    }

    /// [`Gate::pace`] for background work: waits its turn (one window at most each time).
    pub async fn pace_wait(&self, limit: &SharedLimit, key: &str, shown: &str) {
        while let Err(held) = self.count(limit, key, shown).await {
            tokio::time::sleep(Duration::from_secs(held.retry_after.max(1))).await;
        }
    }

    /// Reserves `events` turns of a pace of its own at once (background work sending many
    /// requests to one target: one write per batch, not per request).
    pub async fn reserve(&self, limit: &SharedLimit, key: &str, shown: &str, events: u32) -> Result<(), Held> {
        match limit.count_many(&*self.store, key, events).await {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => Err(Held { target: shown.to_owned(), retry_after: wait }),
            Err(e) => {
                tracing::warn!(error = %e, key, "the outbound gate cannot count: the send is held");
                Err(Held { target: shown.to_owned(), retry_after: 1 })
            }
        }
    }

    async fn count(&self, limit: &SharedLimit, key: &str, shown: &str) -> Result<(), Held> {
        match limit.count(&*self.store, key).await {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => Err(Held { target: shown.to_owned(), retry_after: wait }),
            Err(e) => {
                tracing::warn!(error = %e, key, "the outbound gate cannot count: the send is held");
                Err(Held { target: shown.to_owned(), retry_after: 1 })
            }
        }
    }
}

/// How long a GET of the fetch layer waits for its turn at the gate before it is held back.
/// Those GETs are background work (a read, its OAI-PMH pages and robots.txt, an IndexNow key
/// file): waiting is better than failing, but not past a read's own deadline.
pub const FETCH_PATIENCE: Duration = Duration::from_secs(30);

/// The gate as the fetch layer asks it before every GET of the service's fetcher: so the
/// requests the library makes on its own (robots.txt, the next OAI-PMH page, a retry) count
/// against their host's budget like the document a user asked for.
struct FetchGate {
    gate: Arc<Gate>,
    /// Where a hold is noted, for a fetcher made by [`watched`].
    holds: Option<Holds>,
}

impl mapwright_fetch::Gate for FetchGate {
    fn ask<'a>(&'a self, url: &'a str) -> std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>> {
        Box::pin(async move {
            let asked = self.gate.wait(Target::Http(url), FETCH_PATIENCE).await.map_err(|held| held.sentence());
            if let (Err(sentence), Some(holds)) = (&asked, &self.holds) {
                holds.note(sentence);
            }
            asked
        })
    }
}

/// `fetcher`, asking `gate` before every GET it sends.
pub fn gated(fetcher: mapwright_fetch::Fetcher, gate: &Arc<Gate>) -> mapwright_fetch::Fetcher {
    fetcher.with_gate(Arc::new(FetchGate { gate: gate.clone(), holds: None }))
}

/// `fetcher` (its client shared), asking `gate` before every GET it sends, and the [`Holds`]
/// where each request the gate holds is noted. A piece of work made of many requests (a read:
/// its robots.txt, each redirect hop and retry, each OAI-PMH page) learns there whether any was
/// held, wherever the library wrapped or worded the error on its way out (an `io::Error` of
/// the body, the OAI-PMH reader's message): the one test of "the gate held part of this".
pub fn watched(fetcher: mapwright_fetch::Fetcher, gate: &Arc<Gate>) -> (mapwright_fetch::Fetcher, Holds) {
    let holds = Holds::default();
    let fetcher = fetcher.with_gate(Arc::new(FetchGate { gate: gate.clone(), holds: Some(holds.clone()) }));
    (fetcher, holds)
}

/// The requests the gate held for one fetcher of [`watched`]: a read one of whose requests was
/// held asked the site for only part of what it needs, so it is no read (it is postponed, and
/// nothing of it recorded), however the failure surfaced.
#[derive(Debug, Clone, Default)]
pub struct Holds(Arc<std::sync::Mutex<Option<String>>>);

impl Holds {
    fn note(&self, sentence: &str) {
        let mut first = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        first.get_or_insert_with(|| sentence.to_owned());
    }

    /// The gate's sentence for the first request held so far (`None`: none was held).
    pub fn first(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// The host of an http(s) URL in lower case (an IPv6 address without brackets) and its port.
pub fn host_of(url: &str) -> Option<(String, u16)> {
    let parsed = url::Url::parse(url).ok()?;
    let port = parsed.port_or_known_default()?;
    let host = match parsed.host()? {
        url::Host::Domain(name) => name.trim_end_matches('.').to_ascii_lowercase(),
        url::Host::Ipv4(v4) => v4.to_string(),
        url::Host::Ipv6(v6) => v6.to_string(),
    };
    Some((host, port))
}

/// The addresses `host` resolves to (itself when it is one), at most [`MAX_ADDRESSES`];
/// none when it does not resolve in time.
async fn resolve(host: &str, port: u16) -> Vec<IpAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return vec![ip];
    }
    let lookup = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port))).await;
    let mut addresses: Vec<IpAddr> = match lookup {
        Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
        _ => Vec::new(),
    };
    addresses.sort();
    addresses.dedup();
    addresses.truncate(MAX_ADDRESSES);
    addresses
}

/// A URL as a reader may see it: its scheme and host (and port), the rest masked. A webhook's
/// path and query are often its secret (a chat service's incoming hook is a bearer URL).
pub fn masked_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) if parsed.host().is_some() => {
            let origin = parsed.origin().ascii_serialization();
            let bare = parsed.path() == "/"
                && parsed.query().is_none()
                && parsed.fragment().is_none()
                && parsed.username().is_empty()
                && parsed.password().is_none();
            if bare { format!("{origin}/") } else { format!("{origin}/…") }
        }
        _ => "…".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ignore_scheme_port_and_case() {
        for (url, expected) in [
            ("https://Example.COM/a", Some(("example.com", 443))),
            ("http://example.com:8080/", Some(("example.com", 8080))),
            ("http://example.com./x", Some(("example.com", 80))),
            ("http://[::1]:9/", Some(("::1", 9))),
            ("http://127.0.0.1/", Some(("127.0.0.1", 80))),
            ("not a url", None),
            ("mailto:a@b.example", None),
        ] {
            assert_eq!(host_of(url).as_ref().map(|(h, p)| (h.as_str(), *p)), expected, "{url}");
        }
    }

    #[test]
    fn a_masked_url_shows_the_origin_only() {
        for (url, expected) in [
            ("https://hooks.example.com/services/T0/B0/secret", "https://hooks.example.com/…"),
            ("https://h.example/?token=abc", "https://h.example/…"),
            ("https://h.example/", "https://h.example/"),
            ("https://h.example", "https://h.example/"),
            ("http://h.example:8080/x", "http://h.example:8080/…"),
            ("https://user:pw@h.example/x", "https://h.example/…"),
            ("nonsense", "…"),
        ] {
            assert_eq!(masked_url(url), expected, "{url}");
        }
    }
}
