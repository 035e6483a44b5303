//! Domain properties (issue 23): the list with an add form, a property's page (the TXT record
//! to publish, "Verify now", the user's sites it covers), and deleting one after a confirm
//! page. Every decision is [`crate::domains`]'; a stranger's property is a 404 page.

use axum::extract::{Path, State};
use mapwright_store::DomainProperty;
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::{time, time_or, url};
use super::{PageResult, Session, button_form, csrf_field, page, redirect_error, redirect_with};
use crate::domains::dns;
use crate::service::domains;
use crate::{AppError, AppState, now};

/// `GET /domains`.
pub(crate) async fn list(State(state): State<AppState>, session: Session) -> PageResult {
    let properties = state.store.list_domains(session.actor()).await?;
    let now = now();
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } }
        h1 { "Domain properties" }
        p {
            "A domain property proves with one DNS TXT record that you control a whole domain: once verified, "
            "every site of yours under it (http and https, the domain and all its subdomains) is verified too, "
            "and sitemaps of a new one can be added at once."
        }
        @if properties.is_empty() {
            p id="no-domains" { "No domain property yet." }
        } @else {
            table class="cards" id="domains" {
                thead { tr { th scope="col" { "Domain" } th scope="col" { "Status" } th scope="col" { "Last checked" } } }
                tbody {
                    @for d in &properties {
                        tr {
                            td data-label="Domain" { a href=(format!("/domains/{}", d.id)) { (d.domain) } }
                            td data-label="Status" { (badge(d)) }
                            td data-label="Last checked" { (time_or(d.last_checked_at, now, "Never")) }
                        }
                    }
                }
            }
        }
        h2 { "Add a domain property" }
        form method="post" action="/domains" class="stack" {
            (csrf_field(&session.csrf))
            label for="domain" { "Domain" }
            input type="text" id="domain" name="domain" required placeholder="example.com" autocomplete="off"
                spellcheck="false" autocapitalize="none";
            p class="hint" { "The name only: no https://, no path, no port." }
            button type="submit" { "Add domain" }
        }
    };
    Ok(page(&session, "Domain properties", body))
}

fn badge(property: &DomainProperty) -> Markup {
    html! {
        @if property.verified_at.is_some() { span class="badge ok" { "Verified" } }
        @else { span class="badge bad" { "Not verified" } }
    }
}

// Alike on purpose: the page's frame (badges, add form, list) has the shape of
// `console/sites.rs`'s: the console's markup per kind of thing, kept beside its handler as the
// console's other pages are.
/// The add form.
#[derive(Deserialize)]
pub(crate) struct AddForm {
    #[serde(default)]
    domain: String,
}

/// `POST /domains`: to the new property's page, which says what to publish.
pub(crate) async fn add(
    State(state): State<AppState>,
    session: Session,
    CsrfForm(form): CsrfForm<AddForm>,
) -> PageResult {
    match domains::add(&state, session.actor(), &form.domain).await {
        Ok(d) => Ok(redirect_with(&format!("/domains/{}", d.id), &format!("Added {}.", d.domain), &state)),
        Err(e @ (AppError::BadRequest(_) | AppError::Conflict(_) | AppError::Rejected(_))) => {
            Ok(redirect_error("/domains", &format!("Not added: {e}."), &state))
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /domains/{id}`.
pub(crate) async fn show(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let property = state.store.domain(session.actor(), id).await?;
    let sites = domains::sites_under(&state, &property).await?;
    let now = now();
    let value = dns::record_value(&property.verification_token);
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } " › " a href="/domains" { "Domain properties" } }
        h1 { (property.domain) }
        @if let Some(at) = property.verified_at {
            p id="domain-status" { span class="badge ok" { "Verified" } " since " (time(at, now))
                ". Keep the record in place: it is looked up again regularly." }
        } @else {
            p id="domain-status" { span class="badge bad" { "Not verified" }
                " Publish this TXT record at your DNS provider, then press Verify now. A new record may take a while to be seen." }
        }
        @if let Some(at) = property.last_checked_at { p class="hint" { "Last checked " (time(at, now)) "." } }
        dl class="facts" id="record" {
            dt { "Type" } dd { code { "TXT" } }
            dt { "Name" } dd { code { (property.domain) } " (the domain itself; some providers write " code { "@" } ")" }
            dt { "Value" } dd { code { (value) } }
        }
        (button_form(&format!("/domains/{id}/verify"), &session.csrf, "Verify now", "primary", None))
        h2 { "Sites covered" }
        p {
            "Your sites whose host is " code { (property.domain) } " or under it, whatever the scheme or port. "
            "Another user's sites are never covered by your property."
        }
        @if sites.is_empty() {
            p id="no-covered-sites" { "None yet: add a sitemap of any site under this domain and the site is made for you." }
        } @else {
            ul id="covered-sites" {
                @for s in &sites {
                    li {
                        a class="url" href=(format!("/sites/{}", s.id)) { (url(&s.origin)) } " "
                        @if s.verified_at.is_some() { span class="badge ok" { "Verified" } } @else { span class="badge bad" { "Not verified" } }
                    }
                }
            }
        }
        p { a class="button" href="/sitemaps/add" { "Add a sitemap" } }
        h2 { "Delete this domain property" }
        p { "Its sites stay; those that were verified by it alone are not verified any more." }
        a class="button danger" href=(format!("/domains/{id}/delete")) { "Delete domain property" }
    };
    Ok(page(&session, &property.domain, body))
}

// Alike on purpose: the console's POST handlers of one thing share axum's frame (state, session,
// id, a CSRF-checked empty form) and look the thing up first; each calls its own use case.
/// `POST /domains/{id}/verify`: the look-up's outcome as news or as an error saying why.
pub(crate) async fn verify_now(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let property = state.store.domain(session.actor(), id).await?;
    let check = domains::verify_now(&state, &property).await?;
    let back = format!("/domains/{id}");
    Ok(if check.held.is_some() {
        redirect_error(&back, &format!("Not checked: {}.", check.detail), &state)
    } else if check.verified {
        redirect_with(&back, &format!("Verified: {}.", check.detail), &state)
    } else {
        redirect_error(&back, &format!("Not verified: {}.", check.detail), &state)
    })
}

/// `GET /domains/{id}/delete`.
pub(crate) async fn delete_confirm(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let property = state.store.domain(session.actor(), id).await?;
    let title = format!("Delete the domain property {}?", property.domain);
    let body = html! {
        h1 { (title) }
        p { "Your sites under it stay, with their sitemaps; those verified by this property alone become unverified." }
        div class="row" {
            form method="post" action=(format!("/domains/{id}/delete")) class="inline" {
                (csrf_field(&session.csrf))
                button type="submit" class="danger" { "Delete domain property" }
            }
            a class="button secondary" href=(format!("/domains/{id}")) { "Cancel" }
        }
    };
    Ok(page(&session, &title, body))
}

// Alike on purpose: the console's POST handlers of one thing share axum's frame (state, session,
// id, a CSRF-checked empty form) and look the thing up first; each calls its own use case.
/// `POST /domains/{id}/delete`.
pub(crate) async fn delete(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let property = state.store.domain(session.actor(), id).await?;
    domains::delete(&state, session.actor(), id).await?;
    Ok(redirect_with("/domains", &format!("Deleted the domain property {}.", property.domain), &state))
}
