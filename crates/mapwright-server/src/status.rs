//! The status words, decided in one place for the console, the API, the alert mail and the
//! webhooks: what the console shows for a sitemap (its status word, its URL count, its type
//! and its badges; the console gives each word its colour), a download's word, a source's words, the alerts' words and the
//! order of badness that "worsened" follows. This is the one place that maps a store row to
//! those words, so a change in what the store records (a roll-up of an index's children, the
//! counts of the last full read) changes only this file.

use mapwright_store::{Sitemap, SitemapSummary, StatusFilter, TreeTally};

use crate::format::thousands;

/// A status as the table shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Success, Has errors, Has warnings, Couldn't fetch, Pending, Paused, Removed.
    pub word: &'static str,
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

/// The word a sitemap's row shows, as the name of the status filter that lists it: the one
/// decision of every page, filter and API field (`status_word`). The store's filters ask the
/// same question in SQL (`mapwright_store`'s `STATUS_WORD_SQL`; the tests hold the two to one
/// answer on every kind of row). In order: removed; paused (its site is not verified, so
/// nothing is read); pending (never read); failed (its own fetch); errors, then warnings (its
/// own or its tree's: a child that could not be fetched is an error of the tree, and a stored
/// verdict counts as much as the numbers); pending (a child not read yet); success.
pub(crate) fn word_key(sm: &Sitemap) -> StatusFilter {
    let rolled = sm.rollup_status.as_deref();
    if sm.removed_at.is_some() {
        StatusFilter::Removed
    } else if !sm.site_verified {
        StatusFilter::Paused
    } else if matches!(sm.status.as_deref(), None | Some("pending")) {
        StatusFilter::Pending
    } else if sm.status.as_deref() == Some("failed") {
        StatusFilter::Failed
    } else if sm.errors > 0
        || sm.rollup_errors > 0
        || sm.status.as_deref() == Some("errors")
        || matches!(rolled, Some("errors" | "failed"))
    {
        StatusFilter::Errors
    } else if sm.warnings > 0
        || sm.rollup_warnings > 0
        || sm.status.as_deref() == Some("warnings")
        || rolled == Some("warnings")
    {
        StatusFilter::Warnings
    } else if matches!(rolled, None | Some("pending")) {
        StatusFilter::Pending
    } else {
        StatusFilter::Success
    }
}

/// The word of a status filter, as the table, the filter form and the pages show it.
pub(crate) fn filter_word(key: StatusFilter) -> &'static str {
    match key {
        StatusFilter::Success => "Success",
        StatusFilter::Errors => "Has errors",
        StatusFilter::Warnings => "Has warnings",
        StatusFilter::Failed => "Couldn't fetch",
        StatusFilter::Pending => "Pending",
        StatusFilter::Paused => "Paused",
        StatusFilter::Removed => "Removed",
    }
}

/// The Resubmit button's words: a sitemap of a site not verified waits for its verification.
pub(crate) fn resubmit_label(paused: bool) -> &'static str {
    if paused { "Resubmit (waits for verification)" } else { "Resubmit" }
}

/// What "Paused" says: why nothing is read, and how it ends.
pub(crate) const PAUSED: &str = "its site is not verified: nothing is read until the site is verified again";

/// A sitemap's own status: the verdict of its last full read, which a 304 keeps (the store's
/// `status`, `errors`, `warnings`); its URLs are those stored for it. The word is the row's
/// ([`word_key`]) for a sitemap that is no index; an index's own read is worded apart from its
/// tree's (the index page's "This file").
pub(crate) fn own(row: &SitemapSummary) -> Shown {
    let sm = &row.sitemap;
    let key = if is_index(row) {
        word_key(&Sitemap { rollup_status: sm.status.clone(), rollup_errors: 0, rollup_warnings: 0, ..sm.clone() })
    } else {
        word_key(sm)
    };
    let word = filter_word(key);
    let detail = match key {
        StatusFilter::Removed => None,
        StatusFilter::Paused => Some(PAUSED.to_owned()),
        StatusFilter::Failed => sm.http_status.map(|s| format!("HTTP {s}")),
        _ => counts(sm.errors, sm.warnings),
    };
    // An index's own URLs are its children's: they come from the roll-up.
    let urls = (sm.removed_at.is_none() && sm.status.is_some() && !is_index(row)).then_some(sm.rollup_urls);
    Shown { word, detail, urls }
}

/// An index's status rolled up with its tree's by the store (`rollup_*`), in words that say
/// where the trouble is: the word is the row's ([`word_key`]), so its own failure is
/// "Couldn't fetch", and when its own read stands a child's failure makes the tree "Has
/// errors"; the detail counts the sitemaps it lists behind each number: "1 of 4 sitemaps it
/// lists couldn't be fetched; 7 errors in 1 sitemap". `tally` is the store's count of its live
/// descendants ([`TreeTally`]).
pub(crate) fn rolled_up(index: &SitemapSummary, tally: Option<&TreeTally>) -> Shown {
    let sm = &index.sitemap;
    let key = word_key(sm);
    if matches!(key, StatusFilter::Removed | StatusFilter::Paused | StatusFilter::Failed) || sm.status.is_none() {
        return own(index);
    }
    let word = filter_word(key);
    let tally = tally.copied().unwrap_or_default();
    // The sitemaps it lists, at any depth: the index itself is not one of them.
    let listed = tally.sitemaps;
    let mut parts = Vec::new();
    if tally.failed > 0 {
        parts.push(format!(
            "{} of {} it lists couldn't be fetched",
            thousands(tally.failed),
            plural(listed, "sitemap")
        ));
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
        parts.push(format!("{} of {} it lists not read yet", thousands(tally.pending), plural(listed, "sitemap")));
    }
    let detail = (!parts.is_empty()).then(|| parts.join("; "));
    Shown { word, detail, urls: Some(sm.rollup_urls) }
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

/// How a sitemap came to mapwright, in a site owner's words (the store keeps `api`, `robots`...):
/// the sitemap page's sentence and the tables' short word. "Submitted" is by an owner, through
/// the console or the API, whoever looks at it (a reader did not add it).
pub(crate) fn source_words(source: &str) -> (&'static str, &'static str) {
    match source {
        "api" => ("Submitted by an owner", "Submitted"),
        "robots" => ("Named in the site's robots.txt", "robots.txt"),
        "index" => ("Listed in a sitemap index", "In an index"),
        "ping" => ("Announced by a ping", "Ping"),
        "indexnow" => ("Announced by IndexNow", "IndexNow"),
        _ => ("Other", "Other"),
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
                site_verified: true,
                held_at: None,
                held_reason: None,
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
        assert_eq!(
            shown.detail.as_deref(),
            Some("1 of 3 sitemaps it lists couldn't be fetched; 7 errors in 1 sitemap")
        );
        // Its own failure is its own word.
        let failed = row(Some("failed"), 0, 0, None, Some("index"));
        assert_eq!(rolled_up(&failed, Some(&tally)).word, "Couldn't fetch");
        // A child not read yet, nothing wrong elsewhere.
        let mut waiting = row(Some("ok"), 0, 0, Some(10), Some("index"));
        waiting.sitemap.rollup_status = None;
        let tally = TreeTally { sitemaps: 2, pending: 1, ..tally };
        let shown = rolled_up(&waiting, Some(&TreeTally { failed: 0, with_errors: 0, ..tally }));
        assert_eq!((shown.word, shown.detail.as_deref()), ("Pending", Some("1 of 2 sitemaps it lists not read yet")));
        let healthy = row(Some("ok"), 0, 0, Some(100), Some("index"));
        assert_eq!((rolled_up(&healthy, None).word, rolled_up(&healthy, None).detail), ("Success", None));
    }

    #[test]
    fn a_sitemap_of_a_site_not_verified_is_paused_whatever_its_last_read() {
        for status in [Some("ok"), Some("errors"), Some("failed"), None] {
            let mut paused = row(status, 0, 0, Some(5), None);
            paused.sitemap.site_verified = false;
            assert_eq!(word_key(&paused.sitemap), StatusFilter::Paused, "{status:?}");
            let shown = own(&paused);
            assert_eq!((shown.word, shown.detail.as_deref()), ("Paused", Some(PAUSED)));
            paused.sitemap.is_index = true;
            assert_eq!(rolled_up(&paused, None).word, "Paused");
            paused.sitemap.removed_at = Some(1);
            assert_eq!(own(&paused).word, "Removed", "removed first");
        }
    }

    #[test]
    fn every_word_is_its_filters_word() {
        // The word shown is the filter's word of the row's key, for every key.
        for (status, errors, warnings) in
            [(None, 0, 0), (Some("ok"), 0, 0), (Some("ok"), 1, 0), (Some("warnings"), 0, 0), (Some("failed"), 0, 0)]
        {
            let r = row(status, errors, warnings, Some(1), None);
            assert_eq!(own(&r).word, filter_word(word_key(&r.sitemap)));
        }
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
