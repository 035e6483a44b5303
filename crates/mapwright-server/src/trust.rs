//! lastmod you can trust (issue 34, item 9): the counting of a read's lastmod values (the read
//! worker's [`LastmodCounter`]) and the one decision of the verdict word and its reasons
//! ([`verdict`]) that the console's sitemap page and the API both show.
//!
//! Engines use `<lastmod>` only when it is consistently accurate. What makes it inaccurate,
//! measured per sitemap: values equal to the file's generation time (most entries within an hour
//! of the download, or most carrying one value), dates in the future, date-only values (a change
//! within a day is invisible), and, from the URL checker's visits, lastmod values that moved
//! while the page did not, or pages that changed while their lastmod did not.

use std::collections::HashMap;

use mapwright_core::date::{Lastmod, Precision};
use mapwright_store::{LastmodTally, LastmodTrust};
use serde::Serialize;

use crate::format::thousands;

/// Distinct lastmod instants counted for the most common one: past the protocol's 50,000
/// entries a read stores nothing anyway, so this bounds the map, not the measure.
const MAX_DISTINCT: usize = 65_536;

/// "Near the read": a value with a time within this many seconds of the download.
const NEAR_READ_SECONDS: i64 = 3600;

/// Counts one read's lastmod values while the file streams (on the reader's thread).
pub(crate) struct LastmodCounter {
    tally: LastmodTally,
    /// The validator's allowance for clocks (a value after `read_at` plus this is in the future).
    clock_skew: i64,
    /// Entries per instant (seconds since the epoch).
    per_instant: HashMap<i64, i64>,
    /// The instant of the most common value so far.
    top: Option<i64>,
}

impl LastmodCounter {
    /// A counter for a read made at `read_at`, judging "future" as the validator does with
    /// `clock_skew` (`ValidatorConfig::clock_skew_secs`).
    pub(crate) fn new(read_at: i64, clock_skew: i64) -> LastmodCounter {
        LastmodCounter {
            tally: LastmodTally { read_at, ..LastmodTally::default() },
            clock_skew,
            per_instant: HashMap::new(),
            top: None,
        }
    }

    /// Counts one URL entry and its lastmod.
    pub(crate) fn add(&mut self, lastmod: Option<&Lastmod>) {
        let t = &mut self.tally;
        t.entries += 1;
        let Some(l) = lastmod else { return };
        t.with_lastmod += 1;
        let v = l.value();
        let at = v.unix_seconds();
        let timed = !matches!(v.precision, Precision::Year | Precision::Month | Precision::Day);
        t.date_only += i64::from(v.precision == Precision::Day);
        // As the validator's `lastmod-future`: a value without a zone may be up to 14 hours ahead.
        let allowance = self.clock_skew + if v.tz.is_none() { 14 * 3600 } else { 0 };
        t.future += i64::from(at > t.read_at + allowance);
        t.near_read += i64::from(timed && (at - t.read_at).abs() <= NEAR_READ_SECONDS);
        if self.per_instant.len() >= MAX_DISTINCT && !self.per_instant.contains_key(&at) {
            return;
        }
        let count = self.per_instant.entry(at).or_insert(0);
        *count += 1;
        if *count > t.top_count {
            t.top_count = *count;
            if self.top != Some(at) {
                self.top = Some(at);
                t.top_value = Some(l.to_string());
            }
        }
    }

    /// The read's tally (the counter is left empty).
    pub(crate) fn finish(&mut self) -> LastmodTally {
        self.per_instant = HashMap::new();
        std::mem::take(&mut self.tally)
    }
}

/// The verdict on a sitemap's lastmod, worst first: the word the console and the API show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Trust {
    /// Not measured yet: no read parsed the file, or it listed no URL.
    Unknown,
    /// No entry gives a lastmod: engines have no date to use.
    Missing,
    /// The values cannot be right (future dates, the generation time, one value for most, or
    /// lastmod moving apart from the pages).
    Untrusted,
    /// Some values are suspect.
    Doubtful,
    /// Plausible, but date-only: a change within a day is invisible.
    Coarse,
    /// Nothing found against them.
    Trusted,
}

impl Trust {
    /// The API's name.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Trust::Unknown => "unknown",
            Trust::Missing => "missing",
            Trust::Untrusted => "untrusted",
            Trust::Doubtful => "doubtful",
            Trust::Coarse => "coarse",
            Trust::Trusted => "trusted",
        }
    }

    /// The console's word.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Trust::Unknown => "Not measured yet",
            Trust::Missing => "No lastmod",
            Trust::Untrusted => "Untrustworthy",
            Trust::Doubtful => "Doubtful",
            Trust::Coarse => "Coarse",
            Trust::Trusted => "Trustworthy",
        }
    }
}

/// The verdict and why, in the order of weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The word.
    pub trust: Trust,
    /// Each finding behind it, as a sentence ("12 values (3.0 %) are in the future").
    pub reasons: Vec<String>,
}

/// A share in words: "3.0 %".
fn percent(n: i64, of: i64) -> String {
    format!("{:.1} %", share(n, of).unwrap_or(0.0) * 100.0)
}

/// `n / of`, `None` when `of` is 0.
pub(crate) fn share(n: i64, of: i64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

/// Values at least this many before the "one value" and "lastmod moved alone" measures speak.
const FEW: i64 = 10;

/// The one decision of the lastmod verdict: each measure past its threshold adds its reason
/// and pulls the word down; the worst wins.
pub(crate) fn verdict(m: &LastmodTrust) -> Verdict {
    let Some(t) = &m.tally else {
        return Verdict { trust: Trust::Unknown, reasons: vec!["No read of the file has been measured yet.".into()] };
    };
    if t.entries == 0 {
        return Verdict { trust: Trust::Unknown, reasons: vec!["The last read listed no URL.".into()] };
    }
    if t.with_lastmod == 0 {
        return Verdict {
            trust: Trust::Missing,
            reasons: vec!["No entry gives a lastmod: engines have no date to go by.".into()],
        };
    }
    let mut found: Vec<(Trust, String)> = Vec::new();
    let mut judge = |n: i64, of: i64, untrusted: f64, doubtful: f64, words: String| {
        let s = share(n, of).unwrap_or(0.0);
        if n > 0 && s >= untrusted {
            found.push((Trust::Untrusted, words));
        } else if n > 0 && s >= doubtful {
            found.push((Trust::Doubtful, words));
        }
    };
    let w = t.with_lastmod;
    judge(
        t.future,
        w,
        0.1,
        0.0,
        format!("{} of the lastmod values ({}) are in the future.", thousands(t.future), percent(t.future, w)),
    );
    judge(
        t.near_read,
        w,
        0.5,
        0.2,
        format!(
            "{} values ({}) are within an hour of the download: the file stamps the time it was generated, not when its pages changed.",
            thousands(t.near_read),
            percent(t.near_read, w)
        ),
    );
    if w >= FEW {
        let value = t.top_value.as_deref().unwrap_or("?");
        judge(
            t.top_count,
            w,
            0.8,
            0.5,
            format!(
                "{} entries ({}) carry the same lastmod, {value}.",
                thousands(t.top_count),
                percent(t.top_count, w)
            ),
        );
    }
    judge(
        t.entries - w,
        t.entries,
        2.0,
        0.5,
        format!("{} entries ({}) give no lastmod.", thousands(t.entries - w), percent(t.entries - w, t.entries)),
    );
    let v = &m.visits;
    if v.compared >= FEW {
        judge(
            v.lastmod_alone,
            v.compared,
            0.2,
            0.05,
            format!(
                "Of {} URLs the checker visited twice, {} ({}) changed their lastmod while the page stayed the same.",
                thousands(v.compared),
                thousands(v.lastmod_alone),
                percent(v.lastmod_alone, v.compared)
            ),
        );
        judge(
            v.content_alone,
            v.compared,
            0.2,
            0.05,
            format!(
                "Of {} URLs the checker visited twice, {} ({}) changed while their lastmod did not.",
                thousands(v.compared),
                thousands(v.content_alone),
                percent(v.content_alone, v.compared)
            ),
        );
    }
    if found.is_empty() && share(t.date_only, w).unwrap_or(0.0) >= 0.5 {
        found.push((
            Trust::Coarse,
            format!(
                "{} values ({}) give a date only: a change within a day is invisible.",
                thousands(t.date_only),
                percent(t.date_only, w)
            ),
        ));
    }
    found.sort_by_key(|(trust, _)| *trust);
    let trust = found.first().map_or(Trust::Trusted, |(trust, _)| *trust);
    let mut reasons: Vec<String> = found.into_iter().map(|(_, words)| words).collect();
    if reasons.is_empty() {
        reasons.push("No value is in the future, stamped at download time or shared by most entries.".into());
    }
    Verdict { trust, reasons }
}

#[cfg(test)]
mod tests {
    use mapwright_core::date::lastmod_from_text;
    use mapwright_store::LastmodVisits;

    use super::*;

    /// 2026-01-01T00:00:00Z.
    const NOW: i64 = 1_767_225_600;

    fn tally(values: &[Option<&str>]) -> LastmodTally {
        let mut c = LastmodCounter::new(NOW, 900);
        for v in values {
            c.add(v.map(|v| lastmod_from_text(v).expect("a lastmod")).as_ref());
        }
        c.finish()
    }

    fn check(values: &[Option<&str>], visits: LastmodVisits, expected: Trust) -> Verdict {
        let v = verdict(&LastmodTrust { tally: Some(tally(values)), visits });
        assert_eq!(v.trust, expected, "{values:?}: {:?}", v.reasons);
        v
    }

    #[test]
    fn counts_of_a_read() {
        let t = tally(&[
            Some("2025-12-31T23:30:00Z"),
            Some("2025-12-31T23:30:00Z"),
            Some("2027-01-01"),
            Some("2024-05-01"),
            None,
        ]);
        let want = LastmodTally {
            read_at: NOW,
            entries: 5,
            with_lastmod: 4,
            date_only: 2,
            future: 1,
            near_read: 2,
            top_value: Some("2025-12-31T23:30:00Z".into()),
            top_count: 2,
        };
        assert_eq!(t, want);
        // A zone-less value a few hours ahead is not "future" (it may be a zone ahead of UTC).
        assert_eq!(tally(&[Some("2026-01-01T10:00:00")]).future, 0);
        assert_eq!(tally(&[Some("2026-01-01T10:00:00Z")]).future, 1);
    }

    #[test]
    fn each_word_and_its_reason() {
        let none = LastmodVisits::default();
        let days: Vec<String> = (1..=20).map(|d| format!("2025-06-{d:02}T10:00:00Z")).collect();
        let varied: Vec<Option<&str>> = days.iter().map(|d| Some(d.as_str())).collect();
        check(&varied, none, Trust::Trusted);
        let dates: Vec<String> = (1..=20).map(|d| format!("2025-06-{d:02}")).collect();
        let v = check(&dates.iter().map(|d| Some(d.as_str())).collect::<Vec<_>>(), none, Trust::Coarse);
        assert!(v.reasons[0].contains("date only"), "{v:?}");
        let v = check(&[Some("2025-12-31T23:59:00Z"); 20], none, Trust::Untrusted);
        assert!(v.reasons.iter().any(|r| r.contains("within an hour of the download")), "{v:?}");
        assert!(v.reasons.iter().any(|r| r.contains("carry the same lastmod")), "{v:?}");
        let v = check(&[Some("2020-01-01T00:00:00Z"); 20], none, Trust::Untrusted);
        assert_eq!(v.reasons.len(), 1, "{v:?}");
        let mut one_future = varied.clone();
        one_future[0] = Some("2030-01-01");
        let v = check(&one_future, none, Trust::Doubtful);
        assert!(v.reasons[0].starts_with("1 of the lastmod values (5.0 %) are in the future"), "{v:?}");
        check(&[None, None], none, Trust::Missing);
        check(&[], none, Trust::Unknown);
        assert_eq!(verdict(&LastmodTrust::default()).trust, Trust::Unknown);
        // The checker's visits: lastmod moving alone on a quarter of the URLs compared.
        let moved = LastmodVisits { compared: 40, lastmod_alone: 10, content_alone: 0 };
        let v = check(&varied, moved, Trust::Untrusted);
        assert!(v.reasons[0].contains("Of 40 URLs the checker visited twice, 10 (25.0 %)"), "{v:?}");
        let stale = LastmodVisits { compared: 40, lastmod_alone: 0, content_alone: 4 };
        check(&varied, stale, Trust::Doubtful);
        // Too few compared to speak.
        check(&varied, LastmodVisits { compared: 5, lastmod_alone: 5, content_alone: 0 }, Trust::Trusted);
    }
}
