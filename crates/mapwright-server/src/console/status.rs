//! What the console shows for a sitemap: its status word and colour, its URL count, its type
//! and its badges. This is the one place that maps a store row to those words, so a change in
//! what the store records (a roll-up of an index's children, the counts of the last full read)
//! changes only this file.

use mapwright_store::SitemapSummary;

use super::format::thousands;

/// A status as the table shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Success, Has errors, Has warnings, Couldn't fetch, Pending, Removed.
    pub word: &'static str,
    /// The badge's colour class.
    pub class: &'static str,
    /// The numbers behind the word ("3 errors, 1 warning", "HTTP 404"), if any.
    pub detail: Option<String>,
    /// The URL count shown, `None` before anything was read.
    pub urls: Option<i64>,
}

/// How bad a status is, for the roll-up: the worst wins.
fn rank(word: &str) -> u8 {
    match word {
        "Couldn't fetch" => 5,
        "Has errors" => 4,
        "Has warnings" => 3,
        "Pending" => 2,
        "Success" => 1,
        _ => 0,
    }
}

fn plural(n: i64, word: &str) -> String {
    format!("{} {word}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// A sitemap's own status: from its last download that read the file (an unchanged answer
/// keeps that read's verdict).
pub(crate) fn own(row: &SitemapSummary) -> Shown {
    let sm = &row.sitemap;
    let (errors, warnings) = (row.error_count.unwrap_or(0), row.warning_count.unwrap_or(0));
    // An index's own count is of its children, not URLs: its URLs come from the roll-up.
    let urls = if is_index(row) { None } else { row.sitemap.url_count.or(row.url_count) };
    let counts = match (errors, warnings) {
        (0, 0) => None,
        (e, 0) => Some(plural(e, "error")),
        (0, w) => Some(plural(w, "warning")),
        (e, w) => Some(format!("{}, {}", plural(e, "error"), plural(w, "warning"))),
    };
    let (word, class, detail) = if sm.removed_at.is_some() {
        ("Removed", "pending", None)
    } else {
        match sm.status.as_deref() {
            None => ("Pending", "pending", None),
            Some("failed") => ("Couldn't fetch", "bad", sm.http_status.map(|s| format!("HTTP {s}"))),
            _ if errors > 0 => ("Has errors", "bad", counts),
            _ if warnings > 0 => ("Has warnings", "warn", counts),
            _ => ("Success", "ok", None),
        }
    };
    Shown { word, class, detail, urls }
}

/// An index's status rolled up with its children's: the worst of its own and theirs, and the
/// URLs of its children. Removed children do not count.
pub(crate) fn rolled_up(index: &SitemapSummary, children: &[SitemapSummary]) -> Shown {
    let mut shown = own(index);
    let live: Vec<Shown> = children.iter().filter(|c| c.sitemap.removed_at.is_none()).map(own).collect();
    if shown.word == "Removed" || live.is_empty() {
        return shown;
    }
    shown.urls = Some(live.iter().filter_map(|c| c.urls).sum());
    let worst = live.iter().max_by_key(|c| rank(c.word)).map(|c| (c.word, c.class)).unwrap_or(("Success", "ok"));
    if rank(worst.0) > rank(shown.word) {
        let bad = live.iter().filter(|c| c.word == worst.0).count() as i64;
        shown.word = worst.0;
        shown.class = worst.1;
        shown.detail = Some(format!("{} of {} in the index", thousands(bad), plural(live.len() as i64, "sitemap")));
    }
    shown
}

/// Whether the last read found a sitemap index.
pub(crate) fn is_index(row: &SitemapSummary) -> bool {
    row.sitemap.kinds.as_deref() == Some("index")
}

/// The Type column as Search Console names it, and the badges of the extensions found.
pub(crate) fn kind(row: &SitemapSummary) -> (&'static str, Vec<&'static str>) {
    let Some(kinds) = row.sitemap.kinds.as_deref().filter(|k| !k.is_empty()) else {
        return ("–", Vec::new());
    };
    let parts: Vec<&str> = kinds.split(',').map(str::trim).collect();
    let name = if parts.contains(&"index") {
        "Sitemap index"
    } else if parts.contains(&"rss") {
        "RSS"
    } else if parts.contains(&"atom") {
        "Atom"
    } else if parts.contains(&"text") {
        "Text"
    } else {
        "Sitemap"
    };
    let badges = ["image", "video", "news", "hreflang"].into_iter().filter(|b| parts.contains(b)).collect();
    (name, badges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_store::Sitemap;

    fn row(status: Option<&str>, errors: i64, warnings: i64, urls: Option<i64>, kinds: Option<&str>) -> SitemapSummary {
        SitemapSummary {
            sitemap: Sitemap {
                id: 1,
                site_id: 1,
                url: "https://a.example/s.xml".into(),
                source: "api".into(),
                parent_id: None,
                submitted_at: 0,
                next_fetch_at: 0,
                last_downloaded_at: None,
                status: status.map(str::to_owned),
                http_status: Some(404),
                etag: None,
                last_modified: None,
                content_hash: None,
                index_lastmod: None,
                removed_at: None,
                kinds: kinds.map(str::to_owned),
                url_count: urls,
                fetch_interval: None,
                failures: 0,
            },
            origin: "https://a.example".into(),
            url_count: urls,
            error_count: Some(errors),
            warning_count: Some(warnings),
        }
    }

    #[test]
    fn words() {
        assert_eq!(own(&row(None, 0, 0, None, None)).word, "Pending");
        let failed = own(&row(Some("failed"), 0, 0, None, None));
        assert_eq!((failed.word, failed.detail.as_deref()), ("Couldn't fetch", Some("HTTP 404")));
        let errors = own(&row(Some("errors"), 3, 1, Some(5), None));
        assert_eq!((errors.word, errors.detail.as_deref()), ("Has errors", Some("3 errors, 1 warning")));
        assert_eq!(own(&row(Some("unchanged"), 0, 2, Some(5), None)).word, "Has warnings");
        assert_eq!(own(&row(Some("ok"), 0, 0, Some(5), None)).word, "Success");
        let mut removed = row(Some("errors"), 3, 0, Some(5), None);
        removed.sitemap.removed_at = Some(1);
        assert_eq!(own(&removed).word, "Removed");
    }

    #[test]
    fn an_index_takes_the_worst_of_its_children() {
        let index = row(Some("ok"), 0, 0, Some(2), Some("index"));
        let children = [row(Some("ok"), 0, 0, Some(100), None), row(Some("failed"), 0, 0, None, None)];
        let shown = rolled_up(&index, &children);
        assert_eq!((shown.word, shown.urls), ("Couldn't fetch", Some(100)));
        assert_eq!(shown.detail.as_deref(), Some("1 of 2 sitemaps in the index"));
        assert_eq!(rolled_up(&index, &children[..1]).word, "Success");
    }

    #[test]
    fn types_and_badges() {
        assert_eq!(kind(&row(None, 0, 0, None, Some("index"))), ("Sitemap index", vec![]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("rss,web"))), ("RSS", vec![]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("web,image,hreflang"))), ("Sitemap", vec!["image", "hreflang"]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("text,web"))).0, "Text");
    }
}
