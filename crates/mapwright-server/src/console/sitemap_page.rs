//! A sitemap's page: its summary (status rolled up for an index, type, a link to the file),
//! the findings of its last read grouped by rule, its children when it is an index, pictures
//! of its history, what each of its reads changed in its URL list (`diffs.rs`), its downloads,
//! and its URLs with search and paging. An index's page shows
//! its tree: the roll-up, its children's findings (each named), the URLs of its sitemaps and
//! the picture of the roll-up, with the index file's own numbers in a section apart.

use axum::extract::{Path, Query, State};
use mapwright_store::{Download, FindingQuery, Sitemap, SitemapSummary, UrlRow};
use maud::{Markup, html};
use serde::Deserialize;

use super::format::{thousands, time, time_or, url};
use super::{PAGE, PageResult, Session, button_form, diffs, findings, lastmod, page, pager, svg};
use crate::status::{self, download_words, source_words};
use crate::{AppState, now};

/// The page's paging, filter and search parameters.
#[derive(Deserialize, Default)]
pub(crate) struct Params {
    /// URL search text.
    #[serde(default)]
    q: String,
    #[serde(default)]
    urls_after: i64,
    /// The findings' severity filter.
    #[serde(default)]
    severity: String,
    /// How many downloads to show.
    #[serde(default)]
    downloads: i64,
    #[serde(default)]
    children_after: i64,
}

/// Full reads drawn in the history picture.
const HISTORY: i64 = 100;

// Alike on purpose: the extractors of console/sites.rs's `show` (a page of one thing, its id and
// query); each renders its own page.
/// `GET /sitemaps/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Query(p): Query<Params>,
    Query(diff_params): Query<diffs::Params>,
) -> PageResult {
    let actor = session.actor();
    let sitemap = state.store.sitemap(actor, id).await?;
    let site = state.store.site(actor, sitemap.site_id).await?;
    let shown_downloads = p.downloads.clamp(10, 1000);
    let downloads = state.store.list_downloads(actor, id, shown_downloads.max(HISTORY * 2) + 1).await?;
    let latest = downloads.iter().find(|d| d.status != "unchanged");
    let filter = findings::severity(p.severity.trim());
    let query = FindingQuery {
        site_id: site.id,
        sitemap_id: Some(id),
        severity: filter.map(str::to_owned),
        per_rule: findings::EXAMPLES,
        ..FindingQuery::default()
    };
    let examples = state.store.finding_examples(actor, &query).await?;
    let children = state.store.page_sitemaps(actor, sitemap.site_id, Some(id), None, p.children_after, PAGE).await?;
    let child_rows = if children.items.is_empty() {
        Vec::new()
    } else {
        state.store.list_child_summaries(actor, &[id], 1000).await?
    };
    let urls = state.store.search_sitemap_urls(actor, id, p.q.trim(), p.urls_after, PAGE).await?;
    let summary = SitemapSummary { sitemap: sitemap.clone(), origin: site.origin.clone() };
    let index = status::is_index(&summary);
    let tally = if index { state.store.tree_tallies(actor, &[id]).await?.into_iter().next() } else { None };
    let tree_reads = if index { state.store.tree_reads(actor, id, TREE_READS).await? } else { Vec::new() };
    let shown = if index { status::rolled_up(&summary, tally.as_ref()) } else { status::own(&summary) };
    let mine = status::own(&summary);
    let (type_name, badges) = status::kind(&summary);
    let now = now();
    // An index's own reads list sitemaps, not URLs: their changes are its children's.
    let changes = if index {
        diffs::children_section(&state, actor, id, now).await?
    } else {
        let trust = lastmod::section(&state, actor, id, now).await?;
        let diffs = diffs::section(&state, actor, id, &diff_params, now).await?;
        html! { (trust) (diffs) }
    };
    let in_tree = tally.map_or(0, |t| t.sitemaps);
    // A reader is offered nothing it may not do (the store would answer 403).
    let owner = state.store.site_roles(actor).await?.of(site.id) == mapwright_store::Role::Owner;
    let paused = !sitemap.site_verified && sitemap.removed_at.is_none();
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } " › " a href=(format!("/sites/{}", site.id)) { (url(&site.origin)) } }
        h1 class="url" { (url(&sitemap.url)) }
        dl class="facts" {
            dt { "Status" } dd { (super::sitemaps::badge(&shown)) }
            dt { "Type" } dd { (type_name) @for b in badges { " " span class="badge tag" { (b) } } }
            dt { "URLs" } dd { (shown.urls.map(thousands).unwrap_or_else(|| "–".into()))
                @if index { " in " (thousands(in_tree)) " sitemap" @if in_tree != 1 { "s" } " of the index" } }
            dt { "File" } dd { a class="url" href=(sitemap.url) rel="noopener noreferrer" { (url(&sitemap.url)) } }
            dt { "Source" } dd { (source_words(&sitemap.source).0) }
            dt { "Submitted" } dd { (time(sitemap.submitted_at, now)) }
            @if sitemap.last_submitted() > sitemap.submitted_at {
                dt { "Last submitted" } dd { (time(sitemap.last_submitted(), now)) }
            }
            dt { "Last read" } dd { (time_or(sitemap.last_downloaded_at, now, "not yet")) }
            dt { "Next read" } dd {
                @if sitemap.removed_at.is_some() { "never (removed)" }
                @else if paused { "paused: when " a href=(format!("/sites/{}", site.id)) { "the site is verified" } " again" }
                @else if let (Some(at), Some(reason)) = (sitemap.held_at, &sitemap.held_reason) {
                    // The last try was held back by the service's outbound gate: say why, in its words.
                    span id="held-back" { (reason) " (" (time(at, now)) "); next try " (time(sitemap.next_fetch_at, now)) }
                }
                @else { (time(sitemap.next_fetch_at, now)) }
            }
        }
        @if index {
            // The index file's own numbers, apart from its tree's above.
            section id="this-file" aria-labelledby="this-file-title" {
                h2 id="this-file-title" { "This index file" }
                dl class="facts" {
                    dt { "Its own read" } dd { (super::sitemaps::badge(&mine)) }
                    dt { "Sitemaps it lists" } dd { (sitemap.url_count.map(thousands).unwrap_or_else(|| "–".into())) }
                }
            }
        }
        @if !owner {
            p class="hint" id="read-only" { "You read this site: only its owners can resubmit or remove its sitemaps." }
        } @else {
            div class="row" {
                @if sitemap.removed_at.is_some() {
                    (button_form(&format!("/sitemaps/{id}/resubmit"), &session.csrf, "Restore", "secondary", Some(&format!("Restore {}", sitemap.url))))
                } @else {
                    (button_form(&format!("/sitemaps/{id}/resubmit"), &session.csrf, status::resubmit_label(paused), "secondary", Some(&format!("Resubmit {}", sitemap.url))))
                    a class="button danger" href=(format!("/sitemaps/{id}/remove")) aria-label=(format!("Remove {}", sitemap.url)) { "Remove" }
                }
            }
        }
        @if let Some(error) = latest.and_then(|d| d.error.as_deref()) { p class="error" { "Last download failed: " (error) } }
        (findings::section(&format!("/sitemaps/{id}"), &examples, filter, if index { findings::Across::Tree } else { findings::Across::One }))
        (children_section(&children.items, &child_rows, p.children_after, children.next_after, id, owner.then_some(session.csrf.as_str()), now))
        @if index { (tree_history(id, &tree_reads)) } @else { (history(&downloads)) }
        (changes)
        (downloads_section(id, &downloads, shown_downloads, index, now))
        (urls_section(&sitemap, &p, &urls.items, urls.next_after))
    };
    Ok(page(&session, &format!("Sitemap {}", sitemap.url), body))
}

/// Reads of an index's tree that its roll-up picture replays.
const TREE_READS: i64 = 5000;

/// The roll-up of an index over time, replayed from the reads of its tree (oldest first): after
/// each read, the URLs its descendants listed at their latest read (a failed one keeps its URLs),
/// and the errors and warnings of every member's latest read, the index's own included. The
/// index's own URL count (the sitemaps it lists) is not a URL of the tree.
pub(crate) fn rollup_points(index_id: i64, reads: &[Download]) -> Vec<(i64, i64, i64, i64)> {
    let mut latest: std::collections::HashMap<i64, (i64, i64, i64)> = std::collections::HashMap::new();
    let mut points: Vec<(i64, i64, i64, i64)> = Vec::new();
    let mut sum = (0, 0, 0);
    for d in reads.iter().rev() {
        let before = latest.get(&d.sitemap_id).copied().unwrap_or_default();
        let urls = match () {
            _ if d.sitemap_id == index_id => 0,
            _ if d.status == "failed" => before.0,
            _ => d.url_count,
        };
        latest.insert(d.sitemap_id, (urls, d.error_count, d.warning_count));
        sum = (sum.0 - before.0 + urls, sum.1 - before.1 + d.error_count, sum.2 - before.2 + d.warning_count);
        let point = (d.downloaded_at, sum.0, sum.1, sum.2);
        match points.last_mut() {
            Some(last) if last.0 == d.downloaded_at => *last = point,
            _ => points.push(point),
        }
    }
    let skip = points.len().saturating_sub(HISTORY as usize);
    points.split_off(skip)
}

/// An index's history: the picture of its roll-up (see [`rollup_points`]).
fn tree_history(index_id: i64, reads: &[Download]) -> Markup {
    let points = rollup_points(index_id, reads);
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return html! {};
    };
    let url_summary = format!(
        "{} URL entries in the index's sitemaps after the last of {} reads shown, {} after the first.",
        thousands(last.1),
        points.len(),
        thousands(first.1)
    );
    let error_summary = format!(
        "{} errors and {} warnings in the index and its sitemaps after the last read, {} and {} after the first.",
        thousands(last.2),
        thousands(last.3),
        thousands(first.2),
        thousands(first.3)
    );
    html! {
        h2 id="history" { "History of the index and its sitemaps" }
        div class="charts" {
            (svg::line_chart("urls-chart", "URL entries in the index's sitemaps", &url_summary,
                &[svg::Series { label: "URLs", class: "line-a", points: points.iter().map(|p| (p.0, p.1)).collect() }]))
            (svg::line_chart("errors-chart", "Errors and warnings in the index and its sitemaps", &error_summary, &[
                svg::Series { label: "Errors", class: "line-bad", points: points.iter().map(|p| (p.0, p.2)).collect() },
                svg::Series { label: "Warnings", class: "line-warn", points: points.iter().map(|p| (p.0, p.3)).collect() },
            ]))
        }
    }
}

/// URLs and errors over the sitemap's full reads (an unchanged answer repeats the read before).
fn history(downloads: &[Download]) -> Markup {
    let mut reads: Vec<&Download> =
        downloads.iter().filter(|d| d.status != "unchanged" && d.status != "failed").take(HISTORY as usize).collect();
    reads.reverse();
    if reads.is_empty() {
        return html! {};
    }
    let urls: Vec<(i64, i64)> = reads.iter().map(|d| (d.downloaded_at, d.url_count)).collect();
    let errors: Vec<(i64, i64)> = reads.iter().map(|d| (d.downloaded_at, d.error_count)).collect();
    let warnings: Vec<(i64, i64)> = reads.iter().map(|d| (d.downloaded_at, d.warning_count)).collect();
    let (first, last) = (reads[0], reads[reads.len() - 1]);
    let url_summary = format!(
        "{} URLs at the last of {} reads shown, {} at the first.",
        thousands(last.url_count),
        reads.len(),
        thousands(first.url_count)
    );
    let error_summary = format!(
        "{} errors and {} warnings at the last read, {} and {} at the first.",
        thousands(last.error_count),
        thousands(last.warning_count),
        thousands(first.error_count),
        thousands(first.warning_count)
    );
    html! {
        h2 id="history" { "History" }
        div class="charts" {
            (svg::line_chart("urls-chart", "URLs per read", &url_summary, &[svg::Series { label: "URLs", class: "line-a", points: urls }]))
            (svg::line_chart("errors-chart", "Errors and warnings per read", &error_summary, &[
                svg::Series { label: "Errors", class: "line-bad", points: errors },
                svg::Series { label: "Warnings", class: "line-warn", points: warnings },
            ]))
        }
    }
}

fn children_section(
    children: &[Sitemap],
    rows: &[SitemapSummary],
    after: i64,
    next: Option<i64>,
    id: i64,
    owner_csrf: Option<&str>,
    now: i64,
) -> Markup {
    html! {
        @if !children.is_empty() || after > 0 {
            h2 id="children" { "Sitemaps in this index" }
            table class="cards" {
                caption class="visually-hidden" { "Sitemaps in this index" }
                thead { tr {
                    th scope="col" { "Sitemap" } th scope="col" { "Status" } th scope="col" class="num" { "URLs" }
                    th scope="col" { "Last read" } @if owner_csrf.is_some() { th scope="col" { "Actions" } }
                } }
                tbody {
                    @for c in children {
                        @let shown = rows.iter().find(|r| r.sitemap.id == c.id).map(status::own);
                        @let label = if c.removed_at.is_some() { "Restore" } else { status::resubmit_label(!c.site_verified) };
                        tr {
                            td data-label="Sitemap" class="url" { a href=(format!("/sitemaps/{}", c.id)) { (url(&c.url)) } }
                            td data-label="Status" { @if let Some(s) = &shown { (super::sitemaps::badge(s)) } }
                            td data-label="URLs" class="num" { (shown.and_then(|s| s.urls).map(thousands).unwrap_or_else(|| "–".into())) }
                            td data-label="Last read" { (time_or(c.last_downloaded_at, now, "not yet")) }
                            @if let Some(csrf) = owner_csrf {
                                td data-label="Actions" class="actions" {
                                    (button_form(&format!("/sitemaps/{}/resubmit", c.id), csrf, label, "secondary", Some(&format!("{label} {}", c.url))))
                                }
                            }
                        }
                    }
                }
            }
            (pager(&format!("/sitemaps/{id}"), "children_after", after, next))
        }
    }
}

fn downloads_section(id: i64, downloads: &[Download], shown: i64, index: bool, now: i64) -> Markup {
    html! {
        h2 id="downloads" { @if index { "Downloads of the index file" } @else { "Downloads" } }
        @if downloads.is_empty() {
            p { "Not downloaded yet." }
        } @else {
            table class="cards" {
                caption class="visually-hidden" { "Download history" }
                thead { tr {
                    th scope="col" { "When" } th scope="col" { "Status" } th scope="col" class="num" { "HTTP" }
                    th scope="col" class="num" { "Bytes" } th scope="col" class="num" { "URLs" }
                    th scope="col" class="num" { "Errors" } th scope="col" class="num" { "Warnings" } th scope="col" class="num" { "Time (ms)" }
                } }
                tbody {
                    @for d in downloads.iter().take(shown as usize) {
                        tr {
                            td data-label="When" { (time(d.downloaded_at, now)) }
                            td data-label="Status" { (download_words(&d.status)) }
                            td data-label="HTTP" class="num" { (d.http_status.map(|s| s.to_string()).unwrap_or_else(|| "–".into())) }
                            td data-label="Bytes" class="num" { (thousands(d.bytes)) }
                            td data-label="URLs" class="num" { (thousands(d.url_count)) }
                            td data-label="Errors" class="num" { (thousands(d.error_count)) }
                            td data-label="Warnings" class="num" { (thousands(d.warning_count)) }
                            td data-label="Time (ms)" class="num" { (thousands(d.duration_ms)) }
                        }
                    }
                }
            }
            @if downloads.len() as i64 > shown {
                nav class="pager" aria-label="Older downloads" {
                    a href=(format!("/sitemaps/{id}?downloads={}#downloads", shown + 50)) { "Show older downloads" }
                }
            }
        }
    }
}

fn urls_section(sitemap: &Sitemap, p: &Params, urls: &[UrlRow], next: Option<i64>) -> Markup {
    let id = sitemap.id;
    let q: String = url::form_urlencoded::byte_serialize(p.q.trim().as_bytes()).collect();
    let base = if q.is_empty() { format!("/sitemaps/{id}") } else { format!("/sitemaps/{id}?q={q}") };
    html! {
        h2 id="urls" { @if sitemap.is_index { "URLs of the index's sitemaps" } @else { "URLs" } }
        form method="get" action=(format!("/sitemaps/{id}")) class="row" role="search" {
            label for="q" { "Search URLs" }
            input id="q" name="q" type="search" value=(p.q) placeholder="part of a URL";
            button type="submit" class="secondary" { "Search" }
        }
        p { "Download all URLs of the site: "
            a href=(format!("/api/v1/sites/{}/urls.csv", sitemap.site_id)) { "CSV" } " · "
            a href=(format!("/api/v1/sites/{}/urls.jsonl", sitemap.site_id)) { "JSON Lines" } }
        @if urls.is_empty() {
            p { @if p.q.trim().is_empty() { "No URLs." } @else { "No URL matches." } }
        } @else {
            table class="cards" {
                caption class="visually-hidden" { @if sitemap.is_index { "URLs of the index's sitemaps" } @else { "URLs of this sitemap" } }
                thead { tr { th scope="col" { "URL" } th scope="col" { "Last modified" } th scope="col" { "Change frequency" } th scope="col" class="num" { "Priority" } } }
                tbody {
                    @for u in urls {
                        tr {
                            td data-label="URL" class="url" { (url(&u.loc)) }
                            td data-label="Last modified" { (u.lastmod.as_deref().unwrap_or("–")) }
                            td data-label="Change frequency" { (u.changefreq.as_deref().unwrap_or("–")) }
                            td data-label="Priority" class="num" { (u.priority.map(|p| format!("{p:.1}")).unwrap_or_else(|| "–".into())) }
                        }
                    }
                }
            }
        }
        (pager(&base, "urls_after", p.urls_after, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sitemap_id: i64, at: i64, status: &str, urls: i64, errors: i64) -> Download {
        Download {
            id: at,
            sitemap_id,
            downloaded_at: at,
            status: status.into(),
            http_status: Some(200),
            bytes: 0,
            duration_ms: 0,
            url_count: urls,
            error_count: errors,
            warning_count: 0,
            error: None,
        }
    }

    #[test]
    fn the_roll_up_is_replayed_from_the_reads_of_the_tree() {
        // Newest first, as the store gives them: the index (1) lists two children (2, 3).
        let reads = [
            read(2, 40, "ok", 12, 0),
            read(3, 30, "failed", 0, 0),
            read(3, 20, "errors", 5, 2),
            read(2, 20, "ok", 10, 1),
            read(1, 10, "ok", 2, 0),
        ];
        let points = rollup_points(1, &reads);
        // The index's own count (its children) is no URL; a failed read keeps its URLs; two
        // reads in one second are one point.
        assert_eq!(points, [(10, 0, 0, 0), (20, 15, 3, 0), (30, 15, 1, 0), (40, 17, 0, 0)]);
    }
}
