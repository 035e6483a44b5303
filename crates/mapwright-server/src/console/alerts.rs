//! E-mail alerts in the console (issue 23): the caller's setting on a site's page with a button
//! that turns it on or off, and the page of an alert mail's unsubscribe link, which works
//! without signing in (the link's token is the proof) and offers to turn the alerts back on.
//! A GET never changes anything: mail scanners open links, so the page asks for a click; a
//! mail client's one-click POST (RFC 8058, the mail's `List-Unsubscribe`) turns them off.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use mapwright_store::AlertLink;
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::url;
use super::{ConsoleError, PageResult, Session, button_form, redirect_with};
use crate::{AppError, AppState};

/// The "E-mail alerts" part of a site's page for the signed-in member.
pub(crate) async fn section(state: &AppState, session: &Session, site_id: i64) -> Result<Markup, ConsoleError> {
    let setting = state.store.alert_setting(session.actor(), site_id).await?;
    let action = format!("/sites/{site_id}/alerts");
    let mailer = state.mail.is_some();
    Ok(html! {
        h2 id="alerts" { "E-mail alerts" }
        p id="alerts-state" {
            @if setting.enabled {
                "On: you get a mail when a sitemap of this site gets worse (Success, Has warnings, Has errors, "
                "Couldn't fetch, in that order), at most one a day."
            } @else {
                "Off: you get no mail when a sitemap of this site gets worse."
            }
            @if !mailer { " This server sends no mail at the moment." }
        }
        @if setting.enabled {
            (button_form(&action, &session.csrf, "Turn alerts off", "secondary", Some("Turn e-mail alerts off for this site")))
        } @else {
            form method="post" action=(action) class="inline" {
                (super::csrf_field(&session.csrf))
                input type="hidden" name="enabled" value="on";
                button type="submit" class="secondary" aria-label="Turn e-mail alerts on for this site" { "Turn alerts on" }
            }
        }
    })
}

/// The console's toggle: `enabled=on` turns alerts on, its absence off (a form's checkbox way).
#[derive(Deserialize)]
pub(crate) struct Toggle {
    #[serde(default)]
    enabled: Option<String>,
}

/// `POST /sites/{id}/alerts`.
pub(crate) async fn set(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(form): CsrfForm<Toggle>,
) -> PageResult {
    let on = form.enabled.as_deref() == Some("on");
    state.store.set_alerts(session.actor(), id, on).await?;
    let news = if on { "E-mail alerts are on for this site." } else { "E-mail alerts are off for this site." };
    Ok(redirect_with(&format!("/sites/{id}#alerts"), news, &state))
}

/// The token of an unsubscribe link, in the query or the form.
#[derive(Deserialize)]
pub(crate) struct LinkForm {
    #[serde(default)]
    token: String,
    /// `on` turns the alerts back on; absent: off.
    #[serde(default)]
    enabled: Option<String>,
}

/// `GET /alerts/unsubscribe?token=...`: what the link stands for and one button.
pub(crate) async fn unsubscribe_page(State(state): State<AppState>, Query(q): Query<LinkForm>) -> PageResult {
    match crate::service::alerts::link(&state, &q.token, None).await {
        Ok(link) => Ok(link_page(&link, &q.token, None).into_response()),
        Err(AppError::NotFound) => Ok(unknown_link()),
        Err(e) => Err(e.into()),
    }
}

/// `POST /alerts/unsubscribe`: the link page's button turns the link's alerts off (or on again
/// with `enabled=on`), the same page however often it is sent; a mail client's one-click POST
/// (RFC 8058: the token in the address of `List-Unsubscribe`, `List-Unsubscribe=One-Click` in
/// the body) turns them off.
pub(crate) async fn unsubscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<LinkForm>,
    body: axum::body::Bytes,
) -> PageResult {
    let is_one_click = one_click(&headers, &body);
    // The page's form is refused from another site, as every console form is; a one-click POST
    // comes from a mail provider (its server, or its web client on another site), carries no
    // session by the RFC, and its token is its only proof, so where it comes from tells nothing.
    if !is_one_click && crate::auth::cross_site(&headers) {
        return Err(AppError::Forbidden("this form was sent from another site".into()).into());
    }
    let (token, on) = if is_one_click {
        (query.token, false)
    } else {
        let form: LinkForm = serde_urlencoded::from_bytes(&body)
            .map_err(|e| AppError::BadRequest(format!("the form cannot be read: {e}")))?;
        (form.token, form.enabled.as_deref() == Some("on"))
    };
    match crate::service::alerts::link(&state, &token, Some(on)).await {
        Ok(link) => Ok(link_page(&link, &token, Some(on)).into_response()),
        Err(AppError::NotFound) => Ok(unknown_link()),
        Err(e) => Err(e.into()),
    }
}

/// Whether a POST is RFC 8058's one-click unsubscription: `List-Unsubscribe=One-Click` in a
/// urlencoded body, or as a field of a `multipart/form-data` one (the RFC's first choice).
fn one_click(headers: &HeaderMap, body: &[u8]) -> bool {
    let content_type = headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if content_type.trim_start().to_ascii_lowercase().starts_with("multipart/form-data") {
        // Each part: its headers (naming the field), a blank line, the value, the boundary.
        let text = String::from_utf8_lossy(body);
        return text.split("\r\n--").any(|part| {
            let (head, value) = part.split_once("\r\n\r\n").unwrap_or((part, ""));
            head.to_ascii_lowercase().contains("name=\"list-unsubscribe\"") && value.trim() == "One-Click"
        });
    }
    url::form_urlencoded::parse(body).any(|(name, value)| name == "List-Unsubscribe" && value == "One-Click")
}

fn unknown_link() -> axum::response::Response {
    let body = html! {
        h1 { "Link not valid" }
        p { "This alert link is unknown. Sign in to change your alerts on the site's page." }
        p { a href="/signin" { "Sign in" } }
    };
    (StatusCode::NOT_FOUND, super::layout("Link not valid", None, body)).into_response()
}

/// The page of a link: the state now (and what was just done), and the button that changes it.
fn link_page(link: &AlertLink, token: &str, done: Option<bool>) -> Markup {
    let title = format!("Alerts for {}", link.origin);
    let body = html! {
        h1 { "E-mail alerts for " span class="url" { (url(&link.origin)) } }
        @match done {
            Some(false) => { div class="flash" role="status" id="alerts-done" { "Done: no more alert mail about this site to " (link.email) "." } }
            Some(true) => { div class="flash" role="status" id="alerts-done" { "Done: alerts about this site are on again for " (link.email) "." } }
            None => {}
        }
        p id="alerts-state" {
            "Alerts about " span class="url" { (url(&link.origin)) } " to " strong { (link.email) } " are "
            @if link.enabled { "on: a mail when a sitemap gets worse, at most one a day." } @else { "off." }
        }
        form method="post" action="/alerts/unsubscribe" class="stack" {
            input type="hidden" name="token" value=(token.trim());
            @if link.enabled {
                button type="submit" { "Stop alert mail about this site" }
            } @else {
                input type="hidden" name="enabled" value="on";
                button type="submit" class="secondary" { "Turn alerts back on" }
            }
        }
        p { "Signed in, you change this on the site's page too." }
    };
    super::layout(&title, None, body)
}
