//! The sitemap page's "Changes by read" (issue 23): the last reads of a sitemap, each with what
//! it changed in the URL list ("+3 added, −1 removed, ~2 changed"), and the changed URLs of one
//! read, filtered by kind and paged, with the API's CSV and JSON Lines exports. No script: the
//! read, the kind and the page are links.

use mapwright_store::{Actor, Change, DiffUrl, MAX_DIFF_URLS, Page, ReadDiff};
use maud::{Markup, html};
use serde::Deserialize;

use super::format::{thousands, time, url};
use crate::format::field_changes;
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
    counts_words(r.added, r.removed, r.changed, r.first_read)
}

/// What a merged read changed, in words, from its counts: "+3 added, −1 removed, ~2 changed",
/// "First read: 50,000 URLs added", or "No change". Every line of a read's changes says it so,
/// a sitemap's reads and an index's roll-up of its children alike.
fn counts_words(added: i64, removed: i64, changed: i64, first_read: bool) -> String {
    if added == 0 && removed == 0 && changed == 0 {
        return "No change".into();
    }
    if first_read {
        // Everything a first read lists is new: one line, not a row per URL.
        let plural = if added == 1 { "" } else { "s" };
        return format!("First read: {} URL{plural} added", thousands(added));
    }
    format!("+{} added, −{} removed, ~{} changed", thousands(added), thousands(removed), thousands(changed))
}

/// Children listed in an index's roll-up.
const CHILDREN: i64 = 50;

/// An index's "Changes in its sitemaps": what the latest read of each child changed, summed,
/// and the children that changed most, each linking to its own page (its changes listed there).
pub(crate) async fn children_section(
    state: &AppState,
    actor: Actor,
    index_id: i64,
    now: i64,
) -> Result<Markup, AppError> {
    let c = state.store.child_changes(actor, index_id, CHILDREN).await?;
    let t = c.totals;
    Ok(html! {
        h2 id="changes" { "Changes in its sitemaps" }
        p class="hint" { "What the latest read of each sitemap of the index changed in its URL list." }
        @if t.children == 0 {
            p { "No sitemap of the index has been read yet." }
        } @else {
            @if t.changed_children == 0 {
                p { "No change in the latest reads of its " (thousands(t.children)) " sitemaps." }
            } @else {
                p {
                    "The latest reads of " (thousands(t.changed_children)) " of its " (thousands(t.children))
                    " sitemaps changed their URL lists: " (counts_words(t.added, t.removed, t.changed, false)) "."
                }
            }
            @if !c.items.is_empty() {
                table class="cards" {
                    caption class="visually-hidden" { "Changes by sitemap of the index" }
                    thead { tr { th scope="col" { "Sitemap" } th scope="col" { "Read" } th scope="col" { "Changes" } } }
                    tbody {
                        @for child in &c.items {
                            tr {
                                td data-label="Sitemap" class="url" {
                                    a href=(format!("/sitemaps/{}#changes", child.sitemap_id)) { (url(&child.url)) }
                                }
                                td data-label="Read" { (time(child.downloaded_at, now)) }
                                td data-label="Changes" { (counts_words(child.added, child.removed, child.changed, child.first_read)) }
                            }
                        }
                    }
                }
                @if t.changed_children > c.items.len() as i64 {
                    p class="hint" { "The " (c.items.len()) " sitemaps that changed most are listed." }
                }
            }
        }
    })
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
    // A first read is collapsed to its line: its URLs are listed only when asked for.
    let selected = asked.or_else(|| reads.iter().find(|r| r.recorded && !r.is_empty() && !r.first_read).cloned());
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
                        @let fields = u.fields();
                        tr {
                            td data-label="URL" class="url" { (url(&u.loc)) }
                            td data-label="Change" {
                                (Change::parse(&u.change).map_or("–", kind_name))
                                @if !fields.is_empty() { ": " span class="was" { (field_changes(&fields)) } }
                            }
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
            first_read: false,
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
        check(ReadDiff { first_read: true, ..read("ok", true, 50_000, 0, 0) }, "First read: 50,000 URLs added");
        check(ReadDiff { first_read: true, ..read("ok", true, 1, 0, 0) }, "First read: 1 URL added");
    }
}
