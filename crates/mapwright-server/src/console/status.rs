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

fn counts(errors: i64, warnings: i64) -> Option<String> {
    match (errors, warnings) {
        (0, 0) => None,
        (e, 0) => Some(plural(e, "error")),
        (0, w) => Some(plural(w, "warning")),
        (e, w) => Some(format!("{}, {}", plural(e, "error"), plural(w, "warning"))),
    }
}

/// The word and colour of a stored status with its counts (`None`: not read yet).
fn word_of(status: Option<&str>, errors: i64, warnings: i64) -> (&'static str, &'static str) {
    match status {
        None => ("Pending", "pending"),
        Some("failed") => ("Couldn't fetch", "bad"),
        _ if errors > 0 => ("Has errors", "bad"),
        _ if warnings > 0 => ("Has warnings", "warn"),
        _ => ("Success", "ok"),
    }
}

/// A sitemap's own status: the verdict of its last full read, which a 304 keeps (the store's
/// `status`, `errors`, `warnings`); its URLs are those stored for it.
pub(crate) fn own(row: &SitemapSummary) -> Shown {
    let sm = &row.sitemap;
    if sm.removed_at.is_some() {
        return Shown { word: "Removed", class: "pending", detail: None, urls: None };
    }
    let (word, class) = word_of(sm.status.as_deref(), sm.errors, sm.warnings);
    let detail = match word {
        "Couldn't fetch" => sm.http_status.map(|s| format!("HTTP {s}")),
        _ => counts(sm.errors, sm.warnings),
    };
    // An index's own URLs are its children's: they come from the roll-up.
    let urls = (sm.status.is_some() && !is_index(row)).then_some(sm.rollup_urls);
    Shown { word, class, detail, urls }
}

/// An index's status rolled up with its children's by the store (`rollup_*`): the worst of its
/// own read and its live children's, their counts summed, and the distinct URLs of its
/// children. `children` (those at hand) only name how many of them are the worst.
pub(crate) fn rolled_up(index: &SitemapSummary, children: &[SitemapSummary]) -> Shown {
    let sm = &index.sitemap;
    if sm.removed_at.is_some() {
        return own(index);
    }
    let mine = own(index);
    let (word, class) = word_of(sm.rollup_status.as_deref(), sm.rollup_errors, sm.rollup_warnings);
    let live: Vec<Shown> = children.iter().filter(|c| c.sitemap.removed_at.is_none()).map(own).collect();
    let detail = if rank(word) > rank(mine.word) && !live.is_empty() {
        let bad = live.iter().filter(|c| c.word == word).count() as i64;
        let which = format!("{} of {} in the index", thousands(bad), plural(live.len() as i64, "sitemap"));
        Some(match counts(sm.rollup_errors, sm.rollup_warnings) {
            Some(counts) => format!("{counts}: {which}"),
            None => which,
        })
    } else if word == "Couldn't fetch" {
        mine.detail
    } else {
        counts(sm.rollup_errors, sm.rollup_warnings)
    };
    Shown { word, class, detail, urls: sm.status.is_some().then_some(sm.rollup_urls) }
}

/// Whether the last read found a sitemap index.
pub(crate) fn is_index(row: &SitemapSummary) -> bool {
    row.sitemap.is_index || row.sitemap.kinds.as_deref() == Some("index")
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
    } else if parts.contains(&"oai-pmh") {
        "OAI-PMH"
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
                is_index: kinds == Some("index"),
                errors,
                warnings,
                rollup_status: status.map(str::to_owned),
                rollup_errors: errors,
                rollup_warnings: warnings,
                rollup_urls: urls.unwrap_or(0),
                format: None,
                web_count: None,
                image_count: None,
                video_count: None,
                news_count: None,
                last_submitted_at: None,
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
        // The store rolled the failing child up into the index's `rollup_*`.
        let mut index = row(Some("ok"), 0, 0, Some(100), Some("index"));
        index.sitemap.rollup_status = Some("failed".into());
        let children = [row(Some("ok"), 0, 0, Some(100), None), row(Some("failed"), 0, 0, None, None)];
        let shown = rolled_up(&index, &children);
        assert_eq!((shown.word, shown.urls), ("Couldn't fetch", Some(100)));
        assert_eq!(shown.detail.as_deref(), Some("1 of 2 sitemaps in the index"));
        let healthy = row(Some("ok"), 0, 0, Some(100), Some("index"));
        assert_eq!(rolled_up(&healthy, &children[..1]).word, "Success");
    }

    #[test]
    fn types_and_badges() {
        assert_eq!(kind(&row(None, 0, 0, None, Some("index"))), ("Sitemap index", vec![]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("rss,web"))), ("RSS", vec![]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("web,image,hreflang"))), ("Sitemap", vec!["image", "hreflang"]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("text,web"))).0, "Text");
    }
}
