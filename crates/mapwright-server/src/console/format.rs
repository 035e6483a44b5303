//! How the console shows times and numbers: relative times with the exact UTC time on hover,
//! and counts with thousands separators.

use maud::{Markup, PreEscaped, html};

/// A URL as text that a narrow screen may break after each `/`, `?` and `&` of its path and
/// query (a `<wbr>` there; never inside `https://host`) and nowhere else unless a piece alone
/// is wider than the screen.
pub(crate) fn url(text: &str) -> Markup {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    // The origin ends at the first `/` after `://`.
    let origin_end = text.find("://").map_or(0, |s| text[s + 3..].find('/').map_or(text.len(), |e| s + 3 + e));
    for (i, c) in text.char_indices() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
        if i >= origin_end && matches!(c, '/' | '?' | '&') {
            out.push_str("<wbr>");
        }
    }
    PreEscaped(out)
}

/// A time as "4 hours ago", in a `<time>` whose `datetime` and `title` give the exact UTC time.
pub(crate) fn time(at: i64, now: i64) -> Markup {
    let exact = utc(at);
    html! { time datetime=(exact) title=(exact.replace('T', " ").replace('Z', " UTC")) { (relative(at, now)) } }
}

/// An optional time, or "never".
pub(crate) fn time_or(at: Option<i64>, now: i64, none: &str) -> Markup {
    match at {
        Some(at) => time(at, now),
        None => html! { (none) },
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_break_after_slashes_and_question_marks() {
        let markup = url("https://a.example/p?q=<1>&r").into_string();
        assert_eq!(markup, "https://a.example/<wbr>p?<wbr>q=&lt;1&gt;&amp;<wbr>r");
        assert_eq!(url("https://a.example").into_string(), "https://a.example");
        assert_eq!(url("/relative/x").into_string(), "/<wbr>relative/<wbr>x");
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
        let markup = time(now - 4 * 3600, now).into_string();
        assert!(markup.contains(r#"datetime="2023-11-14T18:13:20Z""#), "{markup}");
        assert!(markup.contains("title=\"2023-11-14 18:13:20 UTC\""), "{markup}");
    }
}
