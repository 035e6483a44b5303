//! How the console shows times, numbers and URLs: relative times with the exact UTC time on
//! hover, counts with thousands separators (the words are the base's [`crate::format`]), and
//! URLs that break at their slashes.

use maud::{Markup, PreEscaped, html};

use crate::format::relative;
pub(crate) use crate::format::{thousands, utc};

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
    fn times() {
        let now = 1_700_000_000;
        let markup = time(now - 4 * 3600, now).into_string();
        assert!(markup.contains(r#"datetime="2023-11-14T18:13:20Z""#), "{markup}");
        assert!(markup.contains("title=\"2023-11-14 18:13:20 UTC\""), "{markup}");
    }
}
