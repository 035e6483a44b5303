//! The "My sitemaps" table, the add form, and the Resubmit and Remove actions.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use mapwright_store::{Site, Sitemap, SitemapSummary};
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::{thousands, time, time_or};
use super::{PAGE, PageResult, Session, button_form, csrf_field, offset_pager, page, pager, redirect_with};
use crate::submission::{Added, add_sitemap, parse_sitemap_url};
use crate::{AppError, AppState, now};

/// `?after=ID` of a keyset-paged list.
#[derive(Deserialize, Default)]
pub(crate) struct After {
    #[serde(default)]
    after: i64,
    /// Offset in the list of sites.
    #[serde(default)]
    sites: usize,
}

/// `GET /`: one row per sitemap of the user, then the user's sites.
pub(crate) async fn table(State(state): State<AppState>, session: Session, Query(q): Query<After>) -> PageResult {
    let rows = state.store.list_sitemap_summaries(session.actor(), q.after, PAGE).await?;
    let sites = state.store.list_sites(session.actor()).await?;
    let now = now();
    let body = html! {
        div class="title-row" {
            h1 { "My sitemaps" }
            a class="button" href="/sitemaps/add" { "Add a sitemap" }
        }
        @if rows.items.is_empty() && q.after == 0 {
            p { "No sitemaps yet. " a href="/sitemaps/add" { "Add your first sitemap" } "." }
        } @else {
            div class="scroll" tabindex="0" role="region" aria-label="Table, scrolls sideways on narrow screens" {
                table class="sitemaps" {
                    caption class="visually-hidden" { "My sitemaps" }
                    thead { tr {
                        th scope="col" { "Site" } th scope="col" { "Sitemap" } th scope="col" { "Type" }
                        th scope="col" { "Submitted" } th scope="col" { "Last downloaded" } th scope="col" { "Status" }
                        th scope="col" class="num" { "URLs" } th scope="col" { "Actions" }
                    } }
                    tbody {
                        @for row in &rows.items { (table_row(row, &session.csrf, now)) }
                    }
                }
            }
            (pager("/", "after", q.after, rows.next_after))
        }
        h2 { "My sites" }
        (sites_list(&sites, q.sites, now))
    };
    Ok(page(&session, "My sitemaps", body))
}

fn table_row(row: &SitemapSummary, csrf: &str, now: i64) -> Markup {
    let sm = &row.sitemap;
    html! {
        tr {
            td { a href=(format!("/sites/{}", sm.site_id)) { (row.origin) } }
            td class="url" { a href=(format!("/sitemaps/{}", sm.id)) { (sm.url) } }
            td { (kind(row)) }
            td { (time(sm.submitted_at, now)) }
            td { (time_or(sm.last_downloaded_at, now, "not yet")) }
            td { (status(sm)) }
            td class="num" { (url_count(sm)) }
            td class="actions" {
                (button_form(&format!("/sitemaps/{}/resubmit", sm.id), csrf, "Resubmit", "secondary"))
                a class="button danger" href=(format!("/sitemaps/{}/remove", sm.id)) { "Remove" }
            }
        }
    }
}

/// The Type column: the kinds of entries a sitemap has. Until the scheduler records the
/// extensions a sitemap uses, every sitemap reads as a web sitemap.
/// The seed's Type column: "index", or the kinds of entries the last download held ("web",
/// "web, image", "news"...); "web" before the first download.
fn kind(row: &SitemapSummary) -> String {
    let kinds = row.sitemap.kinds.as_deref().filter(|k| !k.is_empty()).unwrap_or("web");
    kinds.split(',').map(str::trim).collect::<Vec<_>>().join(", ")
}

/// The URLs a sitemap stores (an index: the distinct URLs of its children), "–" before the
/// first read.
pub(crate) fn url_count(sm: &Sitemap) -> String {
    if sm.removed_at.is_some() || (sm.rollup_status.is_none() && sm.rollup_urls == 0) {
        return "–".into();
    }
    thousands(sm.rollup_urls)
}

/// The roll-up (an index: the worst of its own read and its children's): "OK", the counts of
/// errors and warnings, "Failed", "Pending" before the first download (or while a child is),
/// or "Removed".
pub(crate) fn status(sm: &Sitemap) -> Markup {
    let plural = |n: i64, word: &str| format!("{} {word}{}", thousands(n), if n == 1 { "" } else { "s" });
    let (errors, warnings) = (sm.rollup_errors, sm.rollup_warnings);
    if sm.removed_at.is_some() {
        return html! { span class="badge pending" { "Removed" } };
    }
    match sm.rollup_status.as_deref() {
        None => html! { span class="badge pending" { "Pending" } },
        Some("failed") => {
            let own = sm.status.as_deref() == Some("failed");
            let http = sm.http_status.filter(|_| own).map(|s| format!(" (HTTP {s})")).unwrap_or_default();
            let children = if own { "" } else { " (a sitemap in this index)" };
            html! { span class="badge bad" { "Failed" (http) (children) } }
        }
        _ if errors > 0 && warnings > 0 => {
            html! { span class="badge bad" { (plural(errors, "error")) ", " (plural(warnings, "warning")) } }
        }
        _ if errors > 0 => html! { span class="badge bad" { (plural(errors, "error")) } },
        _ if warnings > 0 => html! { span class="badge warn" { (plural(warnings, "warning")) } },
        _ => html! { span class="badge ok" { "OK" } },
    }
}

fn sites_list(sites: &[Site], offset: usize, now: i64) -> Markup {
    let shown: Vec<&Site> = sites.iter().skip(offset).take(PAGE as usize).collect();
    html! {
        @if sites.is_empty() {
            p { "No sites yet: adding a sitemap adds its site." }
        } @else {
            ul class="sites" {
                @for site in &shown {
                    li {
                        a href=(format!("/sites/{}", site.id)) { (site.origin) }
                        " · "
                        @if let Some(at) = site.verified_at { "verified " (time(at, now)) } @else { strong { "not verified" } }
                    }
                }
            }
            (offset_pager("/", "sites", offset, sites.len() > offset + shown.len()))
        }
    }
}

/// The add form's body.
#[derive(Deserialize, Default)]
pub(crate) struct AddForm {
    #[serde(default)]
    url: String,
    /// A site id, or empty for the site of the URL's origin.
    #[serde(default)]
    site: String,
}

/// `GET /sitemaps/add`.
pub(crate) async fn add_form(State(state): State<AppState>, session: Session) -> PageResult {
    let sites = state.store.list_sites(session.actor()).await?;
    Ok(page(&session, "Add a sitemap", add_page(&session, &sites, &AddForm::default(), None)))
}

fn add_page(session: &Session, sites: &[Site], form: &AddForm, error: Option<Markup>) -> Markup {
    html! {
        h1 { "Add a sitemap" }
        p { "The sitemap must be on a verified site, or on another host that the site's robots.txt names in a "
            code { "Sitemap:" } " line. A sitemap on a new site adds the site; verify it, then add the sitemap again." }
        @if let Some(error) = error { div class="error" role="alert" id="add-error" { (error) } }
        form method="post" action="/sitemaps/add" class="stack" {
            (csrf_field(&session.csrf))
            label for="url" { "Sitemap URL" }
            input id="url" name="url" type="url" required maxlength="2048" value=(form.url)
                placeholder="https://example.com/sitemap.xml" aria-describedby="url-hint";
            p id="url-hint" class="hint" { "An absolute http or https URL." }
            label for="site" { "Site" }
            select id="site" name="site" {
                option value="" { "The site of the URL" }
                @for site in sites.iter().take(1000) {
                    option value=(site.id) selected[form.site == site.id.to_string()] { (site.origin) }
                }
            }
            button type="submit" { "Add sitemap" }
        }
    }
}

/// `POST /sitemaps/add`: adds the sitemap (and its site when new) and goes to the table, or
/// shows the form again with what to do.
pub(crate) async fn add(
    State(state): State<AppState>,
    session: Session,
    CsrfForm(form): CsrfForm<AddForm>,
) -> PageResult {
    let (site, outcome) = match resolve_site(&state, &session, &form).await {
        Ok(site) => {
            let outcome = add_sitemap(&state, session.actor(), site.id, &form.url).await;
            (Some(site), outcome)
        }
        Err(e) => (None, Err(e)),
    };
    let error = match outcome {
        Ok(added) => {
            let message = match &added {
                Added::New(s) => format!("Added {}: it will be downloaded shortly.", s.url),
                Added::AlreadySubmitted(s) => format!("{} is already submitted.", s.url),
                Added::Restored(s) => format!("Restored {}: it will be downloaded shortly.", s.url),
            };
            return Ok(redirect_with("/", &message, &state));
        }
        Err(e @ (AppError::BadRequest(_) | AppError::Rejected(_))) => e,
        Err(e) => return Err(e.into()),
    };
    let message = error.to_string();
    let status = error.into_response().status();
    let markup = html! {
        p { (message) }
        @if let Some(site) = site.filter(|s| s.verified_at.is_none()) {
            p { a href=(format!("/sites/{}", site.id)) { "Verify " (site.origin) } }
        }
    };
    let sites = state.store.list_sites(session.actor()).await?;
    let mut response = page(&session, "Add a sitemap", add_page(&session, &sites, &form, Some(markup)));
    *response.status_mut() = if status.is_client_error() { status } else { StatusCode::BAD_REQUEST };
    Ok(response)
}

/// The chosen site, or the user's site of the URL's origin, created when new.
async fn resolve_site(state: &AppState, session: &Session, form: &AddForm) -> Result<Site, AppError> {
    let actor = session.actor();
    if !form.site.trim().is_empty() {
        let id: i64 = form.site.trim().parse().map_err(|_| AppError::BadRequest("no such site".into()))?;
        return Ok(state.store.site(actor, id).await?);
    }
    let url = parse_sitemap_url(&form.url)?;
    let origin = url.origin().ascii_serialization();
    let sites = state.store.list_sites(actor).await?;
    if let Some(site) = sites.into_iter().find(|s| s.origin == origin && s.owner_id == actor.user_id) {
        return Ok(site);
    }
    Ok(state.store.create_site(actor, &origin, now()).await?)
}

/// `POST /sitemaps/{id}/resubmit`: due now.
pub(crate) async fn resubmit(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let sitemap = state.store.sitemap(session.actor(), id).await?;
    crate::submission::resubmit(&state, session.actor(), id).await?;
    Ok(redirect_with("/", &format!("Resubmitted {}: it will be downloaded again shortly.", sitemap.url), &state))
}

/// `GET /sitemaps/{id}/remove`: the confirmation step.
pub(crate) async fn remove_confirm(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let sitemap = state.store.sitemap(session.actor(), id).await?;
    let body = html! {
        h1 { "Remove this sitemap?" }
        p class="url" { (sitemap.url) }
        p { "It will no longer be downloaded, and its URLs leave the site unless another sitemap lists them." }
        div class="row" {
            form method="post" action=(format!("/sitemaps/{id}/remove")) class="inline" {
                (csrf_field(&session.csrf))
                button type="submit" class="danger" { "Remove sitemap" }
            }
            a class="button secondary" href="/" { "Cancel" }
        }
    };
    Ok(page(&session, "Remove a sitemap", body))
}

/// `POST /sitemaps/{id}/remove`.
pub(crate) async fn remove(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let sitemap = state.store.sitemap(session.actor(), id).await?;
    state.store.remove_sitemap(session.actor(), id, now()).await?;
    Ok(redirect_with("/", &format!("Removed {}.", sitemap.url), &state))
}
