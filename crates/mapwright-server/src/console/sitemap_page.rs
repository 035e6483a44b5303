//! A sitemap's page: its summary, the findings of its last download with the rule
//! explanations, the download history, its children when it is an index, and its URLs with
//! search and paging.

use axum::extract::{Path, Query, State};
use mapwright_core::Rule;
use mapwright_core::validate::explain;
use mapwright_store::{Download, FindingRecord, Sitemap, UrlRow};
use maud::{Markup, html};
use serde::Deserialize;

use super::format::{thousands, time, time_or};
use super::{PAGE, PageResult, Session, button_form, page, pager};
use crate::{AppState, now};

/// The page's paging and search parameters.
#[derive(Deserialize, Default)]
pub(crate) struct Params {
    /// URL search text.
    #[serde(default)]
    q: String,
    #[serde(default)]
    urls_after: i64,
    /// Offset in the findings of the last download.
    #[serde(default)]
    findings: i64,
    /// How many downloads to show.
    #[serde(default)]
    downloads: i64,
    #[serde(default)]
    children_after: i64,
}

/// `GET /sitemaps/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Query(p): Query<Params>,
) -> PageResult {
    let actor = session.actor();
    let sitemap = state.store.sitemap(actor, id).await?;
    let site = state.store.site(actor, sitemap.site_id).await?;
    let shown_downloads = p.downloads.clamp(10, 1000);
    let downloads = state.store.list_downloads(actor, id, shown_downloads + 1).await?;
    let latest = downloads.iter().find(|d| d.status != "unchanged");
    let findings = match latest {
        Some(d) => state.store.list_findings_page(actor, d.id, p.findings.max(0), PAGE + 1).await?,
        None => Vec::new(),
    };
    let children = state.store.page_sitemaps(actor, sitemap.site_id, Some(id), None, p.children_after, PAGE).await?;
    let urls = state.store.search_sitemap_urls(actor, id, p.q.trim(), p.urls_after, PAGE).await?;
    let removed = sitemap.removed_at.is_some();
    let now = now();
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } " › " a href=(format!("/sites/{}", site.id)) { (site.origin) } }
        h1 class="url" { (sitemap.url) }
        dl class="facts" {
            dt { "Status" } dd { (super::sitemaps::status(&sitemap)) }
            dt { "URLs" } dd { (super::sitemaps::url_count(&sitemap)) }
            dt { "Source" } dd { (sitemap.source) }
            dt { "Submitted" } dd { (time(sitemap.submitted_at, now)) }
            dt { "Last downloaded" } dd { (time_or(sitemap.last_downloaded_at, now, "not yet")) }
            dt { "Next download" } dd { @if sitemap.removed_at.is_some() { "never (removed)" } @else { (time(sitemap.next_fetch_at, now)) } }
        }
        div class="row" {
            @if removed {
                (button_form(&format!("/sitemaps/{id}/resubmit"), &session.csrf, "Restore", "secondary"))
            } @else {
                (button_form(&format!("/sitemaps/{id}/resubmit"), &session.csrf, "Resubmit", "secondary"))
                a class="button danger" href=(format!("/sitemaps/{id}/remove")) { "Remove" }
            }
        }
        @if removed {
            p { "This sitemap was removed: it is not downloaded and its URLs left the site. Restore it to read it again." }
        } @else {
            @if let Some(error) = latest.and_then(|d| d.error.as_deref()) { p class="error" { "Last download failed: " (error) } }
            (findings_section(id, &findings, p.findings.max(0)))
        }
        (children_section(&children.items, p.children_after, children.next_after, id, now))
        (downloads_section(id, &downloads, shown_downloads, now))
        (urls_section(&sitemap, &p, &urls.items, urls.next_after))
    };
    Ok(page(&session, "Sitemap", body))
}

fn findings_section(id: i64, findings: &[FindingRecord], offset: i64) -> Markup {
    let more = findings.len() as i64 > PAGE;
    html! {
        h2 id="findings" { "Findings of the last download" }
        @if findings.is_empty() && offset == 0 {
            p { "No findings." }
        } @else {
            div class="scroll" tabindex="0" role="region" aria-label="Table, scrolls sideways on narrow screens" { table {
                caption class="visually-hidden" { "Findings" }
                thead { tr { th scope="col" { "Rule" } th scope="col" { "Severity" } th scope="col" { "Line:col" } th scope="col" { "Finding" } } }
                tbody {
                    @for f in findings.iter().take(PAGE as usize) {
                        tr {
                            td { code { (f.rule) } }
                            td { span class=(format!("badge {}", severity_class(&f.severity))) { (f.severity) } }
                            td class="num" { (position(f)) }
                            td {
                                (f.message)
                                @if let Some(loc) = &f.loc { br; span class="url muted" { (loc) } }
                                @if let Some(rule) = Rule::from_name(&f.rule) {
                                    @let x = explain(rule);
                                    details {
                                        summary { "About " (f.rule) }
                                        p { strong { "Checks: " } (x.checks) }
                                        p { strong { "Why: " } (x.why) }
                                        p { strong { "Fix: " } (x.fix) }
                                    }
                                }
                            }
                        }
                    }
                }
            } }
            nav class="pager" aria-label="Pages of findings" {
                @if offset > 0 { a href=(format!("/sitemaps/{id}?findings={}#findings", (offset - PAGE).max(0))) { "Previous findings" } }
                @if more { a href=(format!("/sitemaps/{id}?findings={}#findings", offset + PAGE)) { "Next findings" } }
            }
        }
    }
}

fn severity_class(severity: &str) -> &'static str {
    match severity {
        "error" => "bad",
        "warning" => "warn",
        _ => "pending",
    }
}

fn position(f: &FindingRecord) -> String {
    match (f.line, f.col) {
        (Some(l), Some(c)) => format!("{l}:{c}"),
        (Some(l), None) => l.to_string(),
        _ => "–".into(),
    }
}

fn children_section(children: &[Sitemap], after: i64, next: Option<i64>, id: i64, now: i64) -> Markup {
    html! {
        @if !children.is_empty() || after > 0 {
            h2 id="children" { "Sitemaps in this index" }
            ul {
                @for c in children {
                    li {
                        a class="url" href=(format!("/sitemaps/{}", c.id)) { (c.url) }
                        @if c.removed_at.is_some() {
                            " · removed by you (the index still lists it)"
                        } @else {
                            " · " (c.rollup_status.as_deref().unwrap_or("pending"))
                            " · " (super::sitemaps::url_count(c)) " URLs"
                        }
                        " · downloaded " (time_or(c.last_downloaded_at, now, "not yet"))
                    }
                }
            }
            (pager(&format!("/sitemaps/{id}"), "children_after", after, next))
        }
    }
}

fn downloads_section(id: i64, downloads: &[Download], shown: i64, now: i64) -> Markup {
    html! {
        h2 id="downloads" { "Downloads" }
        @if downloads.is_empty() {
            p { "Not downloaded yet." }
        } @else {
            div class="scroll" tabindex="0" role="region" aria-label="Table, scrolls sideways on narrow screens" { table {
                caption class="visually-hidden" { "Download history" }
                thead { tr {
                    th scope="col" { "When" } th scope="col" { "Status" } th scope="col" class="num" { "HTTP" }
                    th scope="col" class="num" { "Bytes" } th scope="col" class="num" { "URLs" }
                    th scope="col" class="num" { "Errors" } th scope="col" class="num" { "Warnings" } th scope="col" class="num" { "Time (ms)" }
                } }
                tbody {
                    @for d in downloads.iter().take(shown as usize) {
                        tr {
                            td { (time(d.downloaded_at, now)) }
                            td { (d.status) }
                            td class="num" { (d.http_status.map(|s| s.to_string()).unwrap_or_else(|| "–".into())) }
                            td class="num" { (thousands(d.bytes)) }
                            td class="num" { (thousands(d.url_count)) }
                            td class="num" { (thousands(d.error_count)) }
                            td class="num" { (thousands(d.warning_count)) }
                            td class="num" { (thousands(d.duration_ms)) }
                        }
                    }
                }
            } }
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
        h2 id="urls" { "URLs" }
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
            div class="scroll" tabindex="0" role="region" aria-label="Table, scrolls sideways on narrow screens" { table {
                caption class="visually-hidden" { "URLs of this sitemap" }
                thead { tr { th scope="col" { "URL" } th scope="col" { "Last modified" } th scope="col" { "Change frequency" } th scope="col" class="num" { "Priority" } } }
                tbody {
                    @for u in urls {
                        tr {
                            td class="url" { (u.loc) }
                            td { (u.lastmod.as_deref().unwrap_or("–")) }
                            td { (u.changefreq.as_deref().unwrap_or("–")) }
                            td class="num" { (u.priority.map(|p| format!("{p:.1}")).unwrap_or_else(|| "–".into())) }
                        }
                    }
                }
            } }
        }
        (pager(&base, "urls_after", p.urls_after, next))
    }
}
