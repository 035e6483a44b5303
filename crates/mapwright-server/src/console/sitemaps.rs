//! The "My sitemaps" table, the add form, and the Resubmit and Remove actions.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use mapwright_store::{Site, SitemapSummary, TreeTally};
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::{thousands, time, time_or, url};
use super::{PAGE, PageResult, Session, button_form, csrf_field, offset_pager, page, pager, redirect_with};
use crate::service::submission::{Added, add_sitemap, parse_sitemap_url};
use crate::status;
use crate::{AppError, AppState, now};

/// `?after=ID` of a keyset-paged list.
#[derive(Deserialize, Default)]
pub(crate) struct After {
    #[serde(default)]
    after: i64,
    /// Offset in the list of sites.
    #[serde(default)]
    sites: usize,
    /// The table sorted and filtered (`crate::listing`), paged by `offset`.
    #[serde(flatten)]
    listing: super::listing::ListingParams,
}

/// Children listed under each index of the table; the index's page lists them all.
const CHILDREN_SHOWN: i64 = 50;

/// `GET /`: one row per sitemap of the user (an index's children beneath it, collapsed), then
/// the user's sites.
pub(crate) async fn table(State(state): State<AppState>, session: Session, Query(q): Query<After>) -> PageResult {
    let listing = q.listing.listing();
    let (rows, listed_pager) = if listing.is_plain() {
        (state.store.list_sitemap_summaries(session.actor(), q.after, PAGE).await?, None)
    } else {
        let offset = q.listing.offset;
        let (items, more) = state.store.list_sitemaps_by(session.actor(), None, &listing, offset, PAGE).await?;
        (mapwright_store::Page { items, next_after: None }, Some(super::listing::pager(&listing, offset, more)))
    };
    let indexes: Vec<i64> = rows.items.iter().filter(|r| status::is_index(r)).map(|r| r.sitemap.id).collect();
    let children = state.store.list_child_summaries(session.actor(), &indexes, CHILDREN_SHOWN).await?;
    let tallies = state.store.tree_tallies(session.actor(), &indexes).await?;
    let sites = state.store.list_sites(session.actor()).await?;
    // A reader of a site sees its rows without the owners' actions (they would answer 403).
    // The roles in one read, not one per site of the page.
    let roles = state.store.site_roles(session.actor()).await?;
    let owned: std::collections::HashSet<i64> = rows
        .items
        .iter()
        .chain(children.iter())
        .map(|r| r.sitemap.site_id)
        .filter(|&id| roles.of(id) == mapwright_store::Role::Owner)
        .collect();
    let now = now();
    let body = html! {
        div class="title-row" {
            h1 { "My sitemaps" }
            a class="button" href="/sitemaps/add" { "Add a sitemap" }
        }
        @if !(rows.items.is_empty() && listing.is_plain() && q.after == 0) { (super::listing::form(&listing)) }
        @if rows.items.is_empty() && q.after == 0 && !listing.is_plain() {
            p id="none-match" { "No sitemap matches. " a href="/" { "Show all sitemaps" } }
        } @else if rows.items.is_empty() && q.after == 0 {
            // A site waiting for its proof is the next step, not a new sitemap.
            @if let Some(site) = sites.iter().find(|s| s.verified_at.is_none()) {
                p id="verify-first" { "No sitemaps yet: " a href=(format!("/sites/{}", site.id)) { "verify " (site.origin) }
                    " to have its sitemaps read." }
            } @else {
                p { "No sitemaps yet. " a href="/sitemaps/add" { "Add your first sitemap" } "." }
            }
        } @else {
            table class="sitemaps cards" {
                caption class="visually-hidden" { "My sitemaps" }
                (head())
                tbody {
                    @for row in &rows.items {
                        @let own: Vec<SitemapSummary> =
                            children.iter().filter(|c| c.sitemap.parent_id == Some(row.sitemap.id)).cloned().collect();
                        @let tally = tallies.iter().find(|t| t.index_id == row.sitemap.id);
                        (table_row(row, tally, &session.csrf, now, owned.contains(&row.sitemap.site_id)))
                        @if !own.is_empty() {
                            tr class="children" {
                                td colspan="9" {
                                    details {
                                        summary { (own.len()) @if own.len() as i64 >= CHILDREN_SHOWN { "+" } " sitemaps in this index" }
                                        table class="cards" {
                                            caption class="visually-hidden" { "Sitemaps in " (row.sitemap.url) }
                                            (head())
                                            tbody { @for child in &own { (table_row(child, None, &session.csrf, now, owned.contains(&child.sitemap.site_id))) } }
                                        }
                                        @if own.len() as i64 >= CHILDREN_SHOWN {
                                            p { a href=(format!("/sitemaps/{}#children", row.sitemap.id)) { "All sitemaps of this index" } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(listed) = listed_pager { (listed) } @else { (pager("/", "after", q.after, rows.next_after)) }
        }
        h2 { "My sites" }
        (sites_list(&sites, q.sites, now))
    };
    Ok(page(&session, "My sitemaps", body))
}

fn head() -> Markup {
    html! {
        thead { tr {
            th scope="col" { "Sitemap" } th scope="col" { "Site" } th scope="col" { "Type" } th scope="col" { "Source" }
            th scope="col" { "Submitted" } th scope="col" { "Last read" } th scope="col" { "Status" }
            th scope="col" class="num" { "URLs" } th scope="col" { "Actions" }
        } }
    }
}

/// One sitemap's row; an index's status and URLs rolled up over its tree (`tally`). Every
/// row, an index's child too, has its own Resubmit (or Restore) and Remove, for an `owner` of
/// its site; a reader's row says it is read-only instead.
fn table_row(row: &SitemapSummary, tally: Option<&TreeTally>, csrf: &str, now: i64, owner: bool) -> Markup {
    let sm = &row.sitemap;
    let shown = if status::is_index(row) { status::rolled_up(row, tally) } else { status::own(row) };
    let (type_name, badges) = status::kind(row);
    html! {
        tr class=[sm.removed_at.map(|_| "removed")] {
            td data-label="Sitemap" class="url" {
                a href=(format!("/sitemaps/{}", sm.id)) { (url(&sm.url)) }
                " " a class="file" href=(sm.url) rel="noopener noreferrer" aria-label=(format!("The file {}", sm.url)) { "file" }
            }
            td data-label="Site" class="url" { a href=(format!("/sites/{}", sm.site_id)) { (url(&row.origin)) } }
            td data-label="Type" {
                (type_name)
                @for b in badges { " " span class="badge tag" { (b) } }
            }
            td data-label="Source" { (status::source_words(&sm.source).1) }
            td data-label="Submitted" { (time(sm.last_submitted(), now)) }
            td data-label="Last read" { (time_or(sm.last_downloaded_at, now, "not yet")) }
            td data-label="Status" { (badge(&shown)) }
            td data-label="URLs" class="num" { (shown.urls.map(thousands).unwrap_or_else(|| "–".into())) }
            td data-label="Actions" class="actions" {
                @if !owner {
                    span class="detail" { "Read only" }
                } @else if sm.removed_at.is_some() {
                    (button_form(&format!("/sitemaps/{}/resubmit", sm.id), csrf, "Restore", "secondary", Some(&format!("Restore {}", sm.url))))
                } @else {
                    (button_form(&format!("/sitemaps/{}/resubmit", sm.id), csrf, status::resubmit_label(!sm.site_verified), "secondary", Some(&format!("Resubmit {}", sm.url))))
                    a class="button danger" href=(format!("/sitemaps/{}/remove", sm.id)) aria-label=(format!("Remove {}", sm.url)) { "Remove" }
                }
            }
        }
    }
}

/// The badge's colour class of a status word (`status.rs` decides the words, the console their
/// colours): bad, warn, ok, or pending (Pending, Removed).
fn colour(word: &str) -> &'static str {
    match word {
        "Couldn't fetch" | "Has errors" => "bad",
        "Has warnings" => "warn",
        "Success" => "ok",
        _ => "pending",
    }
}

/// A status as a coloured word with its numbers.
pub(crate) fn badge(shown: &status::Shown) -> Markup {
    html! {
        span class=(format!("badge {}", colour(shown.word))) { (shown.word) }
        @if let Some(detail) = &shown.detail { " " span class="detail" { (detail) } }
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
        p { "The sitemap must be on a site you have verified, or on another host that the site's robots.txt names in a "
            code { "Sitemap:" } " line. A sitemap of a site you have not verified yet takes you to that site's "
            "verification; the sitemap is added as soon as the site is verified." }
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
    let mut created = false;
    let outcome = match resolve_site(&state, &session, &form).await {
        // Not verified: no error, but the one next step, with the sitemap kept for after it.
        Ok((site, _)) if site.verified_at.is_none() => match parse_sitemap_url(&form.url) {
            Ok(_) => return Ok(verify_first(&state, &site, form.url.trim())),
            Err(e) => Err(e),
        },
        Ok((site, new)) => {
            created = new;
            add_sitemap(&state, session.actor(), site.id, &form.url).await
        }
        Err(e) => Err(e),
    };
    let error = match outcome {
        Ok(added) => {
            let message = match &added {
                Added::New(s) => format!("Added {}: it will be downloaded shortly.", s.url),
                // A site made by this very request had no sitemap before it: one there now came
                // with it (its robots.txt names it, read when a domain property verified the
                // site), so it was added now, not "already submitted".
                Added::AlreadySubmitted(s) if created => format!("Added {}: it will be downloaded shortly.", s.url),
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
    let markup = html! { p { (message) } };
    let sites = state.store.list_sites(session.actor()).await?;
    let mut response = page(&session, "Add a sitemap", add_page(&session, &sites, &form, Some(markup)));
    *response.status_mut() = if status.is_client_error() { status } else { StatusCode::BAD_REQUEST };
    Ok(response)
}

/// The way on from "Add" for a site not verified yet: its verification page, which keeps the
/// sitemap and adds it once the proof is found, with one sentence that says so.
fn verify_first(state: &AppState, site: &Site, sitemap_url: &str) -> axum::response::Response {
    // A fact, not a second instruction: the page says what to do ("Prove that you control this
    // site ..., then press Verify now") and names the kept sitemap ("... is added as soon as
    // the site is verified").
    let keep: String = url::form_urlencoded::byte_serialize(sitemap_url.as_bytes()).collect();
    let message = format!("{} is not verified yet.", site.origin);
    redirect_with(&format!("/sites/{}?add={keep}", site.id), &message, state)
}

/// The chosen site, or the user's site of the URL's origin, created when new (then `true`).
async fn resolve_site(state: &AppState, session: &Session, form: &AddForm) -> Result<(Site, bool), AppError> {
    let actor = session.actor();
    if !form.site.trim().is_empty() {
        let id: i64 = form.site.trim().parse().map_err(|_| AppError::BadRequest("no such site".into()))?;
        return Ok((state.store.site(actor, id).await?, false));
    }
    let url = parse_sitemap_url(&form.url)?;
    let origin = url.origin().ascii_serialization();
    let sites = state.store.list_sites(actor).await?;
    if let Some(site) = sites.into_iter().find(|s| s.origin == origin && s.owner_id == actor.user_id) {
        return Ok((site, false));
    }
    let site = state.store.create_site(actor, &origin, now()).await?;
    // Verified at once when a domain property of the user covers it: the sitemap goes in now.
    Ok((crate::service::sites::after_site_added(state, site).await?, true))
}

// Alike on purpose: the console's POST handlers of one thing share axum's frame (state, session,
// id, a CSRF-checked empty form) and look the thing up first; each calls its own use case.
/// `POST /sitemaps/{id}/resubmit`: due now.
pub(crate) async fn resubmit(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let sitemap = state.store.sitemap(session.actor(), id).await?;
    crate::service::submission::resubmit(&state, session.actor(), id).await?;
    // What happens next, said as it will be: a paused sitemap is read only once its site is
    // verified again.
    let message = if !sitemap.site_verified {
        format!(
            "Resubmitted {}: its site is not verified, so it will be read once the site is verified again.",
            sitemap.url
        )
    } else if sitemap.removed_at.is_some() {
        format!("Restored {}: it will be downloaded again shortly.", sitemap.url)
    } else if sitemap.is_index {
        format!("Resubmitted {} and the sitemaps it lists: they will be read again shortly.", sitemap.url)
    } else {
        format!("Resubmitted {}: it will be downloaded again shortly.", sitemap.url)
    };
    Ok(redirect_with("/", &message, &state))
}

/// `GET /sitemaps/{id}/remove`: the confirmation step.
pub(crate) async fn remove_confirm(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let sitemap = state.store.sitemap(session.actor(), id).await?;
    state.store.site_as_owner(session.actor(), sitemap.site_id).await?;
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
    Ok(page(&session, &format!("Remove {}", sitemap.url), body))
}

// Alike on purpose: the console's POST handlers of one thing share axum's frame (state, session,
// id, a CSRF-checked empty form) and look the thing up first; each calls its own use case.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_word_has_its_colour() {
        for (word, class) in [
            ("Success", "ok"),
            ("Has warnings", "warn"),
            ("Has errors", "bad"),
            ("Couldn't fetch", "bad"),
            ("Pending", "pending"),
            ("Removed", "pending"),
        ] {
            let shown = status::Shown { word, detail: None, urls: None };
            let markup = badge(&shown).into_string();
            assert!(markup.contains(&format!("class=\"badge {class}\"")), "{word}: {markup}");
        }
    }
}
