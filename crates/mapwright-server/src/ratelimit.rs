//! Fixed-window rate limits kept in memory, per key (a client address, a sitemap URL, an
//! e-mail address).
//!
//! In memory, not in the database: a limit is checked on every ping, and a database round
//! trip per check would cost more than the ping itself. With several server processes each
//! applies its own limit, which bounds the total at N times the limit: good enough for abuse
//! control, which is all these limits are for.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most `limit` events per key per `window`.
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

#[cfg(test)]
mod tests {
    use super::*;

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
