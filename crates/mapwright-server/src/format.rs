//! Times and numbers in words, as both faces give them: exact UTC times (the API's exports,
//! the console's hover), relative times, and counts with thousands separators. The console's
//! markup of them is `console/format.rs`.

/// `2026-11-21T08:41:29Z`.
pub(crate) fn utc(at: i64) -> String {
    let d = mapwright_core::date::from_unix_seconds(at);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", d.year, d.month, d.day, d.hour, d.minute, d.second)
}

/// "just now", "5 minutes ago", "in 2 hours", "3 days ago", ...
pub(crate) fn relative(at: i64, now: i64) -> String {
    let delta = now - at;
    let secs = delta.unsigned_abs();
    if secs < 45 {
        return "just now".into();
    }
    // Rounded to the nearest unit, and a unit that rounds up to the next one becomes it
    // (59.7 minutes is "1 hour", not "60 minutes").
    let (minutes, hours, days) = ((secs + 30) / 60, (secs + 1800) / 3600, (secs + 43_200) / 86_400);
    let (n, unit) = if minutes < 60 {
        (minutes, "minute")
    } else if hours < 24 {
        (hours, "hour")
    } else if days < 30 {
        (days, "day")
    } else if days < 365 {
        (days / 30, "month")
    } else {
        (days / 365, "year")
    };
    let n = n.max(1);
    let plural = if n == 1 { "" } else { "s" };
    if delta >= 0 { format!("{n} {unit}{plural} ago") } else { format!("in {n} {unit}{plural}") }
}

/// `1234567` -> `1,234,567`.
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a changed URL's read changed, field by field: "lastmod 2024-01-01 → 2024-02-02;
/// changefreq none → daily". The console's diff list and the CSV export say it with these
/// words; the API gives the same `FieldChange` list as data.
pub(crate) fn field_changes(fields: &[mapwright_store::FieldChange]) -> String {
    let value = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
    fields.iter().map(|f| format!("{} {} → {}", f.field, value(&f.old), value(&f.new))).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_changes_in_words() {
        let change = |field, old: Option<&str>, new: Option<&str>| mapwright_store::FieldChange {
            field,
            old: old.map(str::to_owned),
            new: new.map(str::to_owned),
        };
        assert_eq!(field_changes(&[]), "");
        assert_eq!(
            field_changes(&[
                change("lastmod", Some("2024-01-01"), Some("2024-02-02")),
                change("changefreq", None, Some("daily"))
            ]),
            "lastmod 2024-01-01 → 2024-02-02; changefreq none → daily"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(-50_000), "-50,000");
    }

    #[test]
    fn times() {
        let now = 1_700_000_000;
        assert_eq!(relative(now - 10, now), "just now");
        assert_eq!(relative(now - 60, now), "1 minute ago");
        assert_eq!(relative(now - 4 * 3600, now), "4 hours ago");
        assert_eq!(relative(now - 2 * 86_400, now), "2 days ago");
        assert_eq!(relative(now + 3600, now), "in 1 hour");
        assert_eq!(relative(now + 3590, now), "in 1 hour");
        assert_eq!(relative(now - 23 * 3600 - 1900, now), "1 day ago");
        assert_eq!(relative(now - 400 * 86_400, now), "1 year ago");
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
