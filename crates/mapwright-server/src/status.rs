//! The status words, decided in one place for the console, the API, the alert mail and the
//! webhooks: what the console shows for a sitemap (its status word and colour, its URL count,
//! its type and its badges), a download's word, a source's words, the alerts' words and the
//! order of badness that "worsened" follows. This is the one place that maps a store row to
//! those words, so a change in what the store records (a roll-up of an index's children, the
//! counts of the last full read) changes only this file.

use mapwright_store::{SitemapSummary, TreeTally};

use crate::format::thousands;

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

/// The word and colour of a stored status with its counts (`None`: not read yet). The stored
/// word counts as much as the numbers, so a row the "Has errors" filter lists never shows
/// "Success" (a read may be judged to have errors with no finding counted, e.g. stored by an
/// older version), and the worse of the two is shown.
fn word_of(status: Option<&str>, errors: i64, warnings: i64) -> (&'static str, &'static str) {
    match status {
        None | Some("pending") => ("Pending", "pending"),
        Some("failed") => ("Couldn't fetch", "bad"),
        Some("errors") => ("Has errors", "bad"),
        _ if errors > 0 => ("Has errors", "bad"),
        Some("warnings") => ("Has warnings", "warn"),
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

/// An index's status rolled up with its tree's by the store (`rollup_*`), in words that say
/// where the trouble is. Its own failure is "Couldn't fetch"; when its own read stands, a
/// child's failure makes the tree "Has errors", never "Couldn't fetch", and the detail counts
/// the sitemaps behind each number: "1 of 4 sitemaps couldn't be fetched; 7 errors in 1
/// sitemap". `tally` is the store's count of its live descendants ([`TreeTally`]).
pub(crate) fn rolled_up(index: &SitemapSummary, tally: Option<&TreeTally>) -> Shown {
    let sm = &index.sitemap;
    let mine = own(index);
    if sm.removed_at.is_some() || sm.status.is_none() || mine.word == "Couldn't fetch" {
        return mine;
    }
    let tally = tally.copied().unwrap_or_default();
    // The stored roll-up word counts as the numbers do (see `word_of`): a child that failed
    // makes the tree "Has errors".
    let rolled = sm.rollup_status.as_deref();
    let (word, class) = if tally.failed > 0 || sm.rollup_errors > 0 || matches!(rolled, Some("errors" | "failed")) {
        ("Has errors", "bad")
    } else if sm.rollup_warnings > 0 || rolled == Some("warnings") {
        ("Has warnings", "warn")
    } else if tally.pending > 0 {
        ("Pending", "pending")
    } else {
        ("Success", "ok")
    };
    // The sitemaps of the tree: the index and its live descendants.
    let all = tally.sitemaps + 1;
    let mut parts = Vec::new();
    if tally.failed > 0 {
        parts.push(format!("{} of {} couldn't be fetched", thousands(tally.failed), plural(all, "sitemap")));
    }
    let with = |n: i64, own: bool| n + i64::from(own);
    if sm.rollup_errors > 0 {
        let n = with(tally.with_errors, sm.errors > 0);
        parts.push(format!("{} in {}", plural(sm.rollup_errors, "error"), plural(n, "sitemap")));
    }
    if sm.rollup_warnings > 0 {
        let n = with(tally.with_warnings, sm.warnings > 0);
        parts.push(format!("{} in {}", plural(sm.rollup_warnings, "warning"), plural(n, "sitemap")));
    }
    if tally.pending > 0 {
        parts.push(format!("{} of {} not read yet", thousands(tally.pending), plural(all, "sitemap")));
    }
    let detail = (!parts.is_empty()).then(|| parts.join("; "));
    Shown { word, class, detail, urls: Some(sm.rollup_urls) }
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

/// A download's status in words, as the table shows it.
pub(crate) fn download_words(status: &str) -> &'static str {
    match status {
        "ok" => "Success",
        "warnings" => "Has warnings",
        "errors" => "Has errors",
        "failed" => "Couldn't fetch",
        "unchanged" => "Unchanged",
        _ => "Other",
    }
}

/// How a sitemap came to mapwright, in a site owner's words (the store keeps `api`, `robots`...).
pub(crate) fn source_words(source: &str) -> &'static str {
    match source {
        "api" => "Added by you",
        "robots" => "Named in the site's robots.txt",
        "index" => "Listed in a sitemap index",
        "ping" => "Announced by a ping",
        "indexnow" => "Announced by IndexNow",
        _ => "Other",
    }
}

/// The console's word for a status of the alerts' order.
pub(crate) fn word(status: &str) -> &'static str {
    match status {
        "failed" => "Couldn't fetch",
        "errors" => "Has errors",
        "warnings" => "Has warnings",
        _ => "Success",
    }
}

/// How bad a status is, for "worsened": ok, warnings, errors, failed.
pub(crate) fn badness(status: Option<&str>) -> Option<u8> {
    match status? {
        "ok" => Some(0),
        "warnings" => Some(1),
        "errors" => Some(2),
        "failed" => Some(3),
        _ => None,
    }
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
        // A stored verdict with no counts behind it is still that verdict, never "Success".
        assert_eq!(own(&row(Some("errors"), 0, 0, Some(5), None)).word, "Has errors");
        assert_eq!(own(&row(Some("warnings"), 0, 0, Some(5), None)).word, "Has warnings");
        assert_eq!(own(&row(Some("ok"), 2, 0, Some(5), None)).word, "Has errors", "the worse of the two");
        let mut index = row(Some("ok"), 0, 0, Some(5), Some("index"));
        index.sitemap.rollup_status = Some("errors".into());
        assert_eq!(rolled_up(&index, None).word, "Has errors", "a tree whose roll-up says errors");
        index.sitemap.rollup_status = Some("warnings".into());
        assert_eq!(rolled_up(&index, None).word, "Has warnings");
        let mut removed = row(Some("errors"), 3, 0, Some(5), None);
        removed.sitemap.removed_at = Some(1);
        assert_eq!(own(&removed).word, "Removed");
    }

    #[test]
    fn an_index_says_where_the_trouble_is() {
        // The index read fine; one of its 3 children 404s, another has 7 errors.
        let mut index = row(Some("ok"), 0, 0, Some(260), Some("index"));
        index.sitemap.rollup_status = Some("failed".into());
        index.sitemap.rollup_errors = 7;
        let tally = TreeTally { index_id: 1, sitemaps: 3, failed: 1, with_errors: 1, ..TreeTally::default() };
        let shown = rolled_up(&index, Some(&tally));
        assert_eq!((shown.word, shown.urls), ("Has errors", Some(260)), "the index itself was fetched");
        assert_eq!(shown.detail.as_deref(), Some("1 of 4 sitemaps couldn't be fetched; 7 errors in 1 sitemap"));
        // Its own failure is its own word.
        let failed = row(Some("failed"), 0, 0, None, Some("index"));
        assert_eq!(rolled_up(&failed, Some(&tally)).word, "Couldn't fetch");
        // A child not read yet, nothing wrong elsewhere.
        let mut waiting = row(Some("ok"), 0, 0, Some(10), Some("index"));
        waiting.sitemap.rollup_status = None;
        let tally = TreeTally { sitemaps: 2, pending: 1, ..tally };
        let shown = rolled_up(&waiting, Some(&TreeTally { failed: 0, with_errors: 0, ..tally }));
        assert_eq!((shown.word, shown.detail.as_deref()), ("Pending", Some("1 of 3 sitemaps not read yet")));
        let healthy = row(Some("ok"), 0, 0, Some(100), Some("index"));
        assert_eq!((rolled_up(&healthy, None).word, rolled_up(&healthy, None).detail), ("Success", None));
    }

    #[test]
    fn types_and_badges() {
        assert_eq!(kind(&row(None, 0, 0, None, Some("index"))), ("Sitemap index", vec![]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("rss,web"))), ("RSS", vec![]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("web,image,hreflang"))), ("Sitemap", vec!["image", "hreflang"]));
        assert_eq!(kind(&row(None, 0, 0, None, Some("text,web"))).0, "Text");
    }

    #[test]
    fn worse_is_ok_then_warnings_then_errors_then_failed() {
        let order: Vec<Option<u8>> = ["ok", "warnings", "errors", "failed"].map(|s| badness(Some(s))).into();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(badness(None), None);
    }
}
