//! Rate limits per key (a client address, a network, a sitemap URL, an e-mail address).
//!
//! [`SharedLimit`]: fixed windows counted in the store, so that every server process on one
//! database applies one limit (sign-up, sign-in, sign-up mail, ping: issue 20 item 4). Each
//! check is one upsert: the requests they limit write to the store anyway.
//!
//! [`RateLimiter`] and [`Backoff`]: in memory, per process, for what a shared count would cost
//! more than it guards: the IndexNow receiver's limits (each request is answered from memory
//! before any store work) and the sign-in back-off (its waits are seconds; with N processes a
//! stranger's guesses wait in each, N times as many per minute, still a slow crawl).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The key of a client for every per-client bound (rate limits, connections): its IPv4
/// address, or its IPv6 /64. One IPv6 host commonly holds a whole /64, so keying by the full
/// address would let it take a new key for every request; an IPv4-mapped address is its IPv4.
pub fn client_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The key of a client's network for the caps strangers share: its IPv4 /24, or its IPv6 /48
/// (what one site is commonly given, so a stranger holds a whole /48 as cheaply as one
/// address); an IPv4-mapped address is its IPv4.
pub fn network_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4_network(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4_network(v4),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}::/48", s[0], s[1], s[2])
            }
        },
    }
}

fn v4_network(v4: std::net::Ipv4Addr) -> String {
    let [a, b, c, _] = v4.octets();
    format!("{a}.{b}.{c}.0/24")
}

/// At most `limit` events per key per `window`, counted in the store
/// ([`Store::count_event`](mapwright_store::Store::count_event)): one limit for every server
/// process on the database.
#[derive(Debug, Clone, Copy)]
pub struct SharedLimit {
    scope: &'static str,
    limit: u32,
    window: Duration,
}

impl SharedLimit {
    /// `limit` events per key per `window`; `scope` names the limit in the store (two limits
    /// with the same scope share their counts).
    pub const fn new(scope: &'static str, limit: u32, window: Duration) -> Self {
        SharedLimit { scope, limit, window }
    }

    /// The same limit (scope and window) with `limit` events per window.
    pub const fn with_limit(self, limit: u32) -> Self {
        SharedLimit { limit, ..self }
    }

    /// The same limit (scope and count) over another window.
    pub const fn with_window(self, window: Duration) -> Self {
        SharedLimit { window, ..self }
    }

    /// Counts one event for `key`: `Ok` within the limit, else 429 with the seconds until the
    /// window ends.
    pub(crate) async fn check(&self, store: &dyn mapwright_store::Store, key: &str) -> Result<(), crate::AppError> {
        match self.count(store, key).await? {
            None => Ok(()),
            Some(wait) => Err(crate::AppError::TooManyRequests(wait)),
        }
    }

    /// Counts one event for `key`: `None` within the limit, else the seconds to wait.
    pub(crate) async fn count(
        &self,
        store: &dyn mapwright_store::Store,
        key: &str,
    ) -> Result<Option<u64>, mapwright_store::Error> {
        let window = i64::try_from(self.window.as_secs()).unwrap_or(i64::MAX).max(1);
        let over = store.count_event(self.scope, key, i64::from(self.limit), window, crate::now()).await?;
        Ok(over.map(|wait| u64::try_from(wait).unwrap_or(1).max(1)))
    }
}

impl SharedLimit {
    /// Counts `events` events for `key` at once: `None` within the limit, else the seconds to
    /// wait (a sender reserving its turns a batch at a time).
    pub(crate) async fn count_many(
        &self,
        store: &dyn mapwright_store::Store,
        key: &str,
        events: u32,
    ) -> Result<Option<u64>, mapwright_store::Error> {
        let window = i64::try_from(self.window.as_secs()).unwrap_or(i64::MAX).max(1);
        let over =
            store.count_events(self.scope, key, i64::from(events), i64::from(self.limit), window, crate::now()).await?;
        Ok(over.map(|wait| u64::try_from(wait).unwrap_or(1).max(1)))
    }

    /// The events allowed per window.
    pub fn limit(&self) -> u32 {
        self.limit
    }
}

/// At most `limit` events per key per `window`, in this process's memory.
#[derive(Debug)]
pub struct RateLimiter {
    limit: u32,
    window: Duration,
    /// Key -> (start of its current window, events in it).
    counts: Mutex<HashMap<String, (Instant, u32)>>,
}

/// Past this many keys, windows that ended are dropped, so memory stays bounded by the
/// number of distinct keys seen in one window.
const SWEEP_AT: usize = 10_000;

impl RateLimiter {
    /// A limiter of `limit` events per key per `window`.
    pub fn new(limit: u32, window: Duration) -> Self {
        RateLimiter { limit, window, counts: Mutex::new(HashMap::new()) }
    }

    /// Counts one event for `key`: `Ok` if within the limit, else `Err(seconds)` until the
    /// window ends (for Retry-After).
    pub fn check(&self, key: &str) -> Result<(), u64> {
        self.check_at(key, Instant::now())
    }

    fn check_at(&self, key: &str, now: Instant) -> Result<(), u64> {
        let mut counts = self.counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if counts.len() >= SWEEP_AT && !counts.contains_key(key) {
            let window = self.window;
            counts.retain(|_, (start, _)| now.duration_since(*start) < window);
        }
        let entry = counts.entry(key.to_owned()).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        if entry.1 >= self.limit {
            let left = self.window.saturating_sub(now.duration_since(entry.0));
            return Err(left.as_secs().max(1));
        }
        entry.1 += 1;
        Ok(())
    }
}

/// Failures per key, forgiven a few, then answered with a growing wait rather than a lock:
/// after `free` failures the next attempt must wait `base`, doubling with each further failure
/// up to `max`; a success forgets the key, and so does `forget_after` without a failure.
///
/// Keyed by client address and e-mail together for sign-in, a stranger's guesses slow down
/// only the stranger: the owner signing in from another address is not touched.
#[derive(Debug)]
pub struct Backoff {
    free: u32,
    base: Duration,
    max: Duration,
    forget_after: Duration,
    /// Key -> (failures, time of the last one).
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Backoff {
    /// `free` failures without a wait, then `base` doubling up to `max`; forgotten after
    /// `forget_after` without a failure.
    pub fn new(free: u32, base: Duration, max: Duration, forget_after: Duration) -> Self {
        Backoff { free, base, max, forget_after, failures: Mutex::new(HashMap::new()) }
    }

    /// `Ok` when an attempt for `key` may go ahead now, else `Err(seconds)` to wait.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        self.check_at(key, Instant::now())
    }

    fn check_at(&self, key: &str, now: Instant) -> Result<(), u64> {
        let failures = self.lock();
        let Some(&(count, last)) = failures.get(key) else { return Ok(()) };
        let since = now.duration_since(last);
        if count < self.free || since >= self.forget_after {
            return Ok(());
        }
        let wait = self.base.saturating_mul(1 << (count - self.free).min(20)).min(self.max);
        match wait.checked_sub(since) {
            Some(left) if !left.is_zero() => Err(left.as_secs_f64().ceil().max(1.0) as u64),
            _ => Ok(()),
        }
    }

    /// How many failures `key` has on record (0 once forgotten).
    pub fn failures(&self, key: &str) -> u32 {
        let now = Instant::now();
        self.lock().get(key).filter(|(_, last)| now.duration_since(*last) < self.forget_after).map_or(0, |e| e.0)
    }

    /// Records a failure of `key`.
    pub fn failed(&self, key: &str) {
        self.failed_at(key, Instant::now());
    }

    fn failed_at(&self, key: &str, now: Instant) {
        let mut failures = self.lock();
        if failures.len() >= SWEEP_AT && !failures.contains_key(key) {
            let forget_after = self.forget_after;
            failures.retain(|_, (_, last)| now.duration_since(*last) < forget_after);
        }
        let entry = failures.entry(key.to_owned()).or_insert((0, now));
        if now.duration_since(entry.1) >= self.forget_after {
            entry.0 = 0;
        }
        *entry = (entry.0.saturating_add(1), now);
    }

    /// Forgets `key` (a successful sign-in).
    pub fn succeeded(&self, key: &str) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u32, Instant)>> {
        self.failures.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_an_ipv4_address_or_an_ipv6_slash_64() {
        let key = |text: &str| client_key(text.parse().unwrap());
        assert_eq!(key("203.0.113.9"), "203.0.113.9");
        assert_eq!(key("::ffff:203.0.113.9"), "203.0.113.9");
        assert_eq!(key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(key("2001:db8:1:2:ffff:ffff:ffff:ffff"), key("2001:db8:1:2::9"), "one /64, one client");
        assert_ne!(key("2001:db8:1:3::1"), key("2001:db8:1:2::1"));
    }

    #[test]
    fn a_network_is_an_ipv4_slash_24_or_an_ipv6_slash_48() {
        let key = |text: &str| network_key(text.parse().unwrap());
        assert_eq!(key("203.0.113.9"), "203.0.113.0/24");
        assert_eq!(key("::ffff:203.0.113.200"), "203.0.113.0/24");
        assert_eq!(key("2001:db8:1:2:aaaa::1"), "2001:db8:1::/48");
        assert_eq!(key("2001:db8:1:ffff::1"), key("2001:db8:1:2::9"), "one /48, one network");
        assert_ne!(key("2001:db8:2::1"), key("2001:db8:1::1"));
        assert_ne!(key("203.0.114.9"), key("203.0.113.9"));
    }

    #[test]
    fn backoff_doubles_after_the_free_failures_and_forgets() {
        let s = Duration::from_secs;
        let backoff = Backoff::new(2, s(1), s(4), s(60));
        let t0 = Instant::now();
        backoff.failed_at("k", t0);
        backoff.failed_at("k", t0);
        assert_eq!(backoff.check_at("k", t0), Err(1), "two free failures, then a wait of 1 s");
        assert_eq!(backoff.check_at("k", t0 + s(1)), Ok(()));
        assert_eq!(backoff.check_at("other", t0), Ok(()), "per key");
        backoff.failed_at("k", t0 + s(1));
        assert_eq!(backoff.check_at("k", t0 + s(1)), Err(2));
        for _ in 0..10 {
            backoff.failed_at("k", t0 + s(2));
        }
        assert_eq!(backoff.check_at("k", t0 + s(2)), Err(4), "capped at max: slower, never locked");
        assert_eq!(backoff.check_at("k", t0 + s(62)), Ok(()), "forgotten");
        backoff.succeeded("k");
        assert_eq!(backoff.failures("k"), 0);
    }

    #[test]
    fn limits_per_key_and_window() {
        let limiter = RateLimiter::new(2, Duration::from_secs(60));
        let t0 = Instant::now();
        assert_eq!(limiter.check_at("a", t0), Ok(()));
        assert_eq!(limiter.check_at("a", t0), Ok(()));
        assert_eq!(limiter.check_at("a", t0 + Duration::from_secs(20)), Err(40));
        assert_eq!(limiter.check_at("b", t0), Ok(()));
        assert_eq!(limiter.check_at("a", t0 + Duration::from_secs(60)), Ok(()));
    }

    #[test]
    fn memory_is_bounded_by_one_window_of_keys() {
        let limiter = RateLimiter::new(1, Duration::from_secs(1));
        let t0 = Instant::now();
        for i in 0..SWEEP_AT {
            limiter.check_at(&i.to_string(), t0).unwrap();
        }
        limiter.check_at("late", t0 + Duration::from_secs(2)).unwrap();
        assert_eq!(limiter.counts.lock().unwrap().len(), 1);
    }
}
