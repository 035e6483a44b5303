//! The sitemap page's "Changes by read" (issue 23): the last reads of a sitemap, each with what
//! it changed in the URL list ("+3 added, −1 removed, ~2 changed"), and the changed URLs of one
//! read, filtered by kind and paged, with the API's CSV and JSON Lines exports. No script: the
//! read, the kind and the page are links.

use mapwright_store::{Actor, Change, DiffUrl, MAX_DIFF_URLS, Page, ReadDiff};
use maud::{Markup, html};
use serde::Deserialize;

use super::format::{thousands, time, url};
use crate::status::download_words;
use crate::{AppError, AppState};

/// Reads shown in the table.
const READS: i64 = 10;

/// Changed URLs per page of the list.
const PAGE: i64 = 50;

/// The section's parameters in the sitemap page's query.
#[derive(Deserialize, Default)]
pub(crate) struct Params {
    /// The download whose changes are listed (0: the newest read that changed something).
    #[serde(default)]
    read: i64,
    /// Only changes of this kind ("added", "removed", "changed"; empty: all).
    #[serde(default)]
    change: String,
    #[serde(default)]
    changes_after: i64,
}

/// What a read changed, in words: "+3 added, −1 removed, ~2 changed", or why nothing did.
pub(crate) fn change_words(r: &ReadDiff) -> String {
    if !r.recorded {
        return match r.status.as_str() {
            "unchanged" => "No change (the file was not modified)".into(),
            "failed" => "No change (not read)".into(),
            _ => "–".into(),
        };
    }
    if r.is_empty() {
        return "No change".into();
    }
    format!("+{} added, −{} removed, ~{} changed", thousands(r.added), thousands(r.removed), thousands(r.changed))
}

/// The section of the sitemap page with id `sitemap_id`.
pub(crate) async fn section(
    state: &AppState,
    actor: Actor,
    sitemap_id: i64,
    p: &Params,
    now: i64,
) -> Result<Markup, AppError> {
    let reads = state.store.list_read_diffs(actor, sitemap_id, READS).await?;
    // The read asked for (one of this sitemap's), else the newest that changed something.
    let asked = match p.read {
        0 => None,
        id => match state.store.read_diff(actor, id).await {
            Ok(r) if r.sitemap_id == sitemap_id => Some(r),
            Ok(_) | Err(mapwright_store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        },
    };
    let selected = asked.or_else(|| reads.iter().find(|r| r.recorded && !r.is_empty()).cloned());
    let change = Change::parse(p.change.trim());
    let list = match &selected {
        Some(r) => Some(state.store.list_diff_urls(actor, r.download_id, change, p.changes_after, PAGE).await?),
        None => None,
    };
    Ok(html! {
        h2 id="changes" { "Changes by read" }
        p class="hint" { "What each read added to, removed from or changed in the sitemap's URL list, compared with the read before." }
        @if reads.is_empty() {
            p { "Not read yet." }
        } @else {
            table class="cards" {
                caption class="visually-hidden" { "Changes by read" }
                thead { tr { th scope="col" { "When" } th scope="col" { "Read" } th scope="col" { "Changes" } th scope="col" { "List" } } }
                tbody {
                    @for r in &reads {
                        @let current = selected.as_ref().is_some_and(|s| s.download_id == r.download_id);
                        tr aria-current=[current.then_some("true")] {
                            td data-label="When" { (time(r.downloaded_at, now)) }
                            td data-label="Read" { (download_words(&r.status)) }
                            td data-label="Changes" { (change_words(r)) }
                            td data-label="List" {
                                @if r.recorded && !r.is_empty() {
                                    @if current { "Shown below" } @else {
                                        a href=(format!("/sitemaps/{sitemap_id}?read={}#changes-list", r.download_id)) { "Show the URLs" }
                                    }
                                } @else { "–" }
                            }
                        }
                    }
                }
            }
        }
        @if let (Some(r), Some(list)) = (&selected, &list) {
            (changes_list(sitemap_id, r, change, p.changes_after, list, now))
        }
    })
}

/// The URLs one read changed.
fn changes_list(
    sitemap_id: i64,
    r: &ReadDiff,
    change: Option<Change>,
    after: i64,
    list: &Page<DiffUrl>,
    now: i64,
) -> Markup {
    let base = format!("/sitemaps/{sitemap_id}?read={}", r.download_id);
    let filtered = match change {
        Some(c) => format!("{base}&change={}", c.as_str()),
        None => base.clone(),
    };
    let export = |ext: &str| match change {
        Some(c) => format!("/api/v1/downloads/{}/diff.{ext}?change={}", r.download_id, c.as_str()),
        None => format!("/api/v1/downloads/{}/diff.{ext}", r.download_id),
    };
    html! {
        h3 id="changes-list" { "URLs changed by the read of " (time(r.downloaded_at, now)) }
        p { (change_words(r)) "." }
        @if r.truncated() {
            p class="hint" {
                "This read changed more URLs than are kept: the first " (thousands(MAX_DIFF_URLS))
                " of each kind are listed, the counts are of all of them."
            }
        }
        nav class="kinds" aria-label="Changes by kind" {
            a href=(format!("{base}#changes-list")) aria-current=[change.is_none().then_some("true")] { "All" }
            @for c in Change::ALL {
                @let (count, _) = r.count(c);
                a href=(format!("{base}&change={}#changes-list", c.as_str())) aria-current=[(change == Some(c)).then_some("true")] {
                    (kind_name(c)) " (" (thousands(count)) ")"
                }
            }
        }
        p { "Download this list: " a href=(export("csv")) { "CSV" } " · " a href=(export("jsonl")) { "JSON Lines" } }
        @if list.items.is_empty() {
            p { "No URL of this kind." }
        } @else {
            table class="cards" {
                caption class="visually-hidden" { "URLs changed by this read" }
                thead { tr { th scope="col" { "URL" } th scope="col" { "Change" } th scope="col" { "Last modified now" } } }
                tbody {
                    @for u in &list.items {
                        tr {
                            td data-label="URL" class="url" { (url(&u.loc)) }
                            td data-label="Change" { (Change::parse(&u.change).map_or("–", kind_name)) }
                            td data-label="Last modified now" {
                                @if u.removed_at.is_some() { "removed from the site" } @else { (u.lastmod.as_deref().unwrap_or("–")) }
                            }
                        }
                    }
                }
            }
        }
        @if after > 0 || list.next_after.is_some() {
            nav class="pager" aria-label="Pages of the read's changes" {
                @if after > 0 { a href=(format!("{filtered}#changes-list")) { "First page" } }
                @if let Some(next) = list.next_after {
                    a href=(format!("{filtered}&changes_after={next}#changes-list")) { "Next page" }
                }
            }
        }
    }
}

/// A kind of change as the console names it.
fn kind_name(change: Change) -> &'static str {
    match change {
        Change::Added => "Added",
        Change::Removed => "Removed",
        Change::Changed => "Changed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(status: &str, recorded: bool, added: i64, removed: i64, changed: i64) -> ReadDiff {
        ReadDiff {
            download_id: 1,
            sitemap_id: 2,
            downloaded_at: 3,
            status: status.into(),
            http_status: Some(200),
            recorded,
            added,
            removed,
            changed,
            added_listed: added,
            removed_listed: removed,
            changed_listed: changed,
        }
    }

    #[test]
    fn words_of_each_read() {
        let check = |r: ReadDiff, expected: &str| assert_eq!(change_words(&r), expected);
        check(read("ok", true, 1_200, 1, 0), "+1,200 added, −1 removed, ~0 changed");
        check(read("ok", true, 0, 0, 0), "No change");
        check(read("unchanged", false, 0, 0, 0), "No change (the file was not modified)");
        check(read("failed", false, 0, 0, 0), "No change (not read)");
        check(read("ok", false, 0, 0, 0), "–");
    }
}
