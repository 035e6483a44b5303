//! When to fetch a sitemap next: a pure function of what the last fetch found and the
//! schedule so far, so the policy is tested by a table and not by waiting.
//!
//! The period starts at a day. Content that changed halves it (down to an hour), content
//! that did not change stretches it by half (up to a week), so a sitemap rewritten hourly is
//! soon read hourly and one never touched settles at weekly. A failure keeps the period and
//! retries sooner first, then later: 15 minutes, doubling per failure in a row, capped at the
//! period (and at a day), so a site that is down a moment loses little and one that is gone
//! costs one request a day.

/// The period of a sitemap with no history.
pub const DEFAULT_PERIOD: i64 = 24 * 3600;
/// The shortest period.
pub const MIN_PERIOD: i64 = 3600;
/// The longest period.
pub const MAX_PERIOD: i64 = 7 * 24 * 3600;
/// The first retry after a failure.
pub const FIRST_RETRY: i64 = 15 * 60;

/// What a fetch found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// New content (or the first read).
    Changed,
    /// The same content (304, or the same bytes).
    Unchanged,
    /// No usable answer (network, HTTP status, not a sitemap).
    Failed,
}

/// The schedule after a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// The period to keep for the next decision.
    pub period: i64,
    /// Failures in a row.
    pub failures: i64,
    /// Seconds from now to the next fetch.
    pub delay: i64,
}

/// The next schedule from the previous period (`None`: never fetched), the failures in a row
/// so far, and what this fetch found.
pub fn next(period: Option<i64>, failures: i64, change: Change) -> Schedule {
    let known = period.map(|p| p.clamp(MIN_PERIOD, MAX_PERIOD));
    match change {
        Change::Changed => {
            let period = known.map_or(DEFAULT_PERIOD, |p| (p / 2).max(MIN_PERIOD));
            Schedule { period, failures: 0, delay: period }
        }
        Change::Unchanged => {
            let period = known.map_or(DEFAULT_PERIOD, |p| (p + p / 2).min(MAX_PERIOD));
            Schedule { period, failures: 0, delay: period }
        }
        Change::Failed => {
            let period = known.unwrap_or(DEFAULT_PERIOD);
            let failures = failures.saturating_add(1).max(1);
            let backoff = FIRST_RETRY.saturating_mul(1 << (failures - 1).min(20));
            Schedule { period, failures, delay: backoff.min(period).min(DEFAULT_PERIOD) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3600;
    const D: i64 = 24 * H;

    #[test]
    fn table() {
        use Change::*;
        type Case = (Option<i64>, i64, Change, i64, i64, i64);
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // period, failures, change -> period, failures, delay
            (None,          0, Changed,   D,       0, D),       // first read: a day
            (None,          0, Unchanged, D,       0, D),
            (Some(D),       0, Changed,   12 * H,  0, 12 * H),  // changes: shorter
            (Some(2 * H),   0, Changed,   H,       0, H),
            (Some(H),       0, Changed,   H,       0, H),       // not below an hour
            (Some(60),      0, Changed,   H,       0, H),       // a stored period out of range is clamped
            (Some(D),       0, Unchanged, 36 * H,  0, 36 * H),  // no change: longer
            (Some(6 * D),   0, Unchanged, 7 * D,   0, 7 * D),   // not above a week
            (Some(30 * D),  0, Unchanged, 7 * D,   0, 7 * D),
            (Some(D),       3, Changed,   12 * H,  0, 12 * H),  // a success resets failures
            (None,          0, Failed,    D,       1, 15 * 60), // failures back off
            (Some(D),       1, Failed,    D,       2, 30 * 60),
            (Some(D),       2, Failed,    D,       3, H),
            (Some(D),       7, Failed,    D,       8, D),       // capped at a day
            (Some(7 * D),  50, Failed,    7 * D,  51, D),
            (Some(2 * H),   5, Failed,    2 * H,   6, 2 * H),   // and at the period
        ];
        for &(period, failures, change, want_period, want_failures, want_delay) in cases {
            let got = next(period, failures, change);
            assert_eq!(
                got,
                Schedule { period: want_period, failures: want_failures, delay: want_delay },
                "{period:?} {failures} {change:?}"
            );
        }
    }

    #[test]
    fn repeated_changes_and_quiet_converge() {
        let mut s = next(None, 0, Change::Changed);
        for _ in 0..10 {
            s = next(Some(s.period), s.failures, Change::Changed);
        }
        assert_eq!(s.period, MIN_PERIOD);
        for _ in 0..20 {
            s = next(Some(s.period), s.failures, Change::Unchanged);
        }
        assert_eq!(s.period, MAX_PERIOD);
    }
}
