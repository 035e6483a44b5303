//! A site's webhooks (issue 23): the endpoints with their events, an owner's form to add one
//! (the secret the service made is shown once, after the redirect, like an API token's), each
//! endpoint's log of attempts, and Delete after a confirmation. What an endpoint is made of
//! is [`crate::service::webhooks`]', how deliveries go [`crate::jobs::webhooks`]'; who may do
//! what is the store's.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::http::header::SET_COOKIE;
use mapwright_store::{Role, Webhook};
use maud::html;
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::{thousands, time, url};
use super::{PageResult, Session, csrf_field, page, redirect_error, redirect_with};
use crate::outbound::masked_url;
use crate::service::webhooks::{NewWebhook, READ_COMPLETED, STATUS_WORSENED};
use crate::{AppError, AppState, now};

/// The cookie that carries a new endpoint's secret through the redirect after its creation,
/// to be shown once (HttpOnly, sent only to the site's webhooks page, cleared by it).
const SECRET_COOKIE: &str = "mapwright_new_webhook";

fn event_words(event: &str) -> &'static str {
    match event {
        READ_COMPLETED => "every read",
        STATUS_WORSENED => "status worsened",
        _ => "other",
    }
}

/// `GET /sites/{id}/webhooks`; right after an endpoint's creation, shows its secret once.
pub(crate) async fn show(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> PageResult {
    let actor = session.actor();
    let site = state.store.site(actor, id).await?;
    let owner = state.store.site_role(actor, id).await? == Role::Owner;
    let webhooks = state.store.list_webhooks(actor, id).await?;
    let secret = crate::auth::cookie_value(&headers, SECRET_COOKIE).filter(|s| !s.is_empty() && s.len() <= 128);
    let now = now();
    let base = format!("/sites/{id}/webhooks");
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } " › " a class="url" href=(format!("/sites/{id}")) { (url(&site.origin)) } }
        h1 { "Webhooks" }
        p {
            "After each read of a sitemap of this site, the service POSTs JSON to each endpoint that asked for it, "
            "signed with the endpoint's secret (header " code { "Mapwright-Signature: sha256=…" } ", an HMAC-SHA256 "
            "of the body). A receiver that does not answer 2xx gets the delivery again later, up to 8 attempts."
        }
        @if let Some(secret) = secret {
            div class="flash" role="status" id="new-secret" {
                p { "The endpoint's secret, shown this once: keep it where the receiver checks signatures." }
                p { code class="secret" { (secret) } }
            }
        }
        @if webhooks.is_empty() {
            p id="no-webhooks" { "No webhook yet." }
        } @else {
            table class="cards" id="webhooks" {
                thead { tr { th scope="col" { "Endpoint" } th scope="col" { "Events" } th scope="col" { "State" } th scope="col" { "Added" } th scope="col" { "Log" } } }
                tbody {
                    @for w in &webhooks {
                        @let shown = if owner { w.url.clone() } else { masked_url(&w.url) };
                        tr {
                            td data-label="Endpoint" class="url" { (url(&shown)) }
                            td data-label="Events" { (events_text(w)) }
                            td data-label="State" class=(format!("webhook-{}", w.state(now))) {
                                (state_words(w, now))
                                @if owner && w.state(now) != "active" && w.state(now) != "paused" {
                                    form method="post" action=(format!("{base}/{}/verify", w.id)) class="inline" {
                                        (csrf_field(&session.csrf))
                                        button type="submit" { "Verify endpoint" }
                                    }
                                }
                            }
                            td data-label="Added" { (time(w.created_at, now)) }
                            td data-label="Log" {
                                a href=(format!("{base}/{}", w.id)) aria-label=(format!("Deliveries to {shown}")) { "Deliveries" }
                            }
                        }
                    }
                }
            }
        }
        @if owner {
            h2 { "Add a webhook" }
            form method="post" action=(base) class="stack" {
                (csrf_field(&session.csrf))
                label for="webhook-url" { "Endpoint URL" }
                input type="url" id="webhook-url" name="url" required maxlength="2048" placeholder="https://example.com/hooks/mapwright";
                fieldset {
                    legend { "Events" }
                    label { input type="checkbox" name="read_completed" value="on" checked; " Every read (" code { (READ_COMPLETED) } ")" }
                    label { input type="checkbox" name="status_worsened" value="on" checked; " Status worsened (" code { (STATUS_WORSENED) } ")" }
                }
                label for="webhook-secret" { "Secret (optional)" }
                input type="text" id="webhook-secret" name="secret" minlength="16" maxlength="256" autocomplete="off";
                p class="hint" { "Leave it empty and the service makes one, shown once after you add the webhook." }
                button type="submit" { "Add webhook" }
            }
        }
    };
    let mut response = page(&session, &format!("Webhooks of {}", site.origin), body);
    if secret.is_some() {
        let clear = format!("{SECRET_COOKIE}=; Path={base}; HttpOnly; SameSite=Strict; Max-Age=0");
        if let Ok(v) = axum::http::HeaderValue::from_str(&clear) {
            response.headers_mut().append(SET_COOKIE, v);
        }
    }
    Ok(response)
}

/// An endpoint's state in the words of the console (the API's `state` field, said).
fn state_words(webhook: &Webhook, now: i64) -> String {
    match webhook.state(now) {
        "unverified" => "Not verified: it has not answered its handshake and receives nothing".to_owned(),
        "disabled" => format!("Disabled: {}", webhook.disabled_reason.as_deref().unwrap_or("after failing")),
        "paused" => format!("Paused after {} failed attempts in a row", webhook.failures),
        _ => "Receiving".to_owned(),
    }
}

fn events_text(webhook: &Webhook) -> String {
    webhook.event_list().into_iter().map(event_words).collect::<Vec<_>>().join(", ")
}

/// The add form.
#[derive(Deserialize)]
pub(crate) struct AddForm {
    #[serde(default)]
    url: String,
    #[serde(default)]
    read_completed: Option<String>,
    #[serde(default)]
    status_worsened: Option<String>,
    #[serde(default)]
    secret: String,
}

/// `POST /sites/{id}/webhooks`.
pub(crate) async fn add(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(form): CsrfForm<AddForm>,
) -> PageResult {
    let back = format!("/sites/{id}/webhooks");
    // A stranger's or a reader's post is refused before the form is judged.
    state.store.site_as_owner(session.actor(), id).await?;
    let mut events = Vec::new();
    if form.read_completed.is_some() {
        events.push(READ_COMPLETED.to_owned());
    }
    if form.status_worsened.is_some() {
        events.push(STATUS_WORSENED.to_owned());
    }
    if events.is_empty() {
        return Ok(redirect_error(&back, "Not added: choose at least one event.", &state));
    }
    let given = form.secret.trim();
    let secret = (!given.is_empty()).then(|| given.to_owned());
    let generated = secret.is_none();
    let new = NewWebhook { url: form.url, events, secret };
    match crate::service::webhooks::create(&state, &session.user, id, new).await {
        Ok((webhook, secret, handshake)) => {
            let said = format!("Added the webhook {}. Handshake: {}.", webhook.url, handshake.detail);
            let mut response = if handshake.verified {
                redirect_with(&back, &said, &state)
            } else {
                redirect_error(&back, &said, &state)
            };
            if generated {
                let secure = if state.secure_cookies { "; Secure" } else { "" };
                let cookie =
                    format!("{SECRET_COOKIE}={secret}; Path={back}; HttpOnly; SameSite=Strict; Max-Age=300{secure}");
                if let Ok(v) = axum::http::HeaderValue::from_str(&cookie) {
                    response.headers_mut().append(SET_COOKIE, v);
                }
            }
            Ok(response)
        }
        Err(e @ (AppError::BadRequest(_) | AppError::Rejected(_))) => {
            Ok(redirect_error(&back, &format!("Not added: {e}."), &state))
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /sites/{site}/webhooks/{id}/verify`: an owner sends the endpoint its handshake again.
pub(crate) async fn verify(
    State(state): State<AppState>,
    session: Session,
    Path((site_id, webhook_id)): Path<(i64, i64)>,
    CsrfForm(_): CsrfForm<EmptyForm>,
) -> PageResult {
    let back = format!("/sites/{site_id}/webhooks");
    webhook_of(&state, &session, site_id, webhook_id).await?;
    let (webhook, handshake) = crate::service::webhooks::verify(&state, &session.user, webhook_id).await?;
    let said = format!("Handshake of {}: {}.", webhook.url, handshake.detail);
    Ok(if handshake.verified { redirect_with(&back, &said, &state) } else { redirect_error(&back, &said, &state) })
}

/// A form with nothing but its CSRF token.
#[derive(Deserialize)]
pub(crate) struct EmptyForm {}

/// The endpoint `webhook_id` of site `site_id`, as the actor sees it (404 otherwise).
async fn webhook_of(state: &AppState, session: &Session, site_id: i64, webhook_id: i64) -> Result<Webhook, AppError> {
    let webhook = state.store.webhook(session.actor(), webhook_id).await?;
    if webhook.site_id != site_id {
        return Err(AppError::NotFound);
    }
    Ok(webhook)
}

/// `GET /sites/{site}/webhooks/{id}`: the endpoint and its log, newest first.
pub(crate) async fn log(
    State(state): State<AppState>,
    session: Session,
    Path((site_id, id)): Path<(i64, i64)>,
) -> PageResult {
    let webhook = webhook_of(&state, &session, site_id, id).await?;
    // A reader sees the endpoint's origin only: its path and query are often its secret.
    let owner = state.store.site_role(session.actor(), site_id).await? == Role::Owner;
    let shown = if owner { webhook.url.clone() } else { masked_url(&webhook.url) };
    let attempts = state.store.webhook_attempts(session.actor(), id, mapwright_store::ATTEMPTS_KEPT).await?;
    let now = now();
    let body = html! {
        p class="crumbs" {
            a href="/" { "My sitemaps" } " › " a href=(format!("/sites/{site_id}/webhooks")) { "Webhooks" }
        }
        h1 { "Deliveries to " span class="url" { (url(&shown)) } }
        p { "Events: " (events_text(&webhook)) ". The last " (mapwright_store::ATTEMPTS_KEPT) " attempts are kept." }
        @if attempts.is_empty() {
            p id="no-attempts" { "Nothing was sent yet." }
        } @else {
            table class="cards" id="attempts" {
                thead { tr {
                    th scope="col" { "When" } th scope="col" { "Event" } th scope="col" { "Delivery" }
                    th scope="col" { "Answer" } th scope="col" { "Outcome" }
                } }
                tbody {
                    @for a in &attempts {
                        tr {
                            td data-label="When" { (time(a.at, now)) }
                            td data-label="Event" { code { (a.event) } }
                            td data-label="Delivery" {
                                @if a.delivery_id > 0 { (a.delivery_id) ", attempt " (a.attempt) } @else { "–" }
                            }
                            td data-label="Answer" {
                                @match (a.status_code, &a.error) {
                                    (Some(code), _) => { "HTTP " (code) " in " (thousands(a.duration_ms)) " ms" }
                                    (None, Some(why)) => { (why) }
                                    (None, None) => { "–" }
                                }
                            }
                            td data-label="Outcome" { (outcome_words(&a.outcome)) }
                        }
                    }
                }
            }
        }
        @if owner {
            p { a class="button danger" href=(format!("/sites/{site_id}/webhooks/{id}/delete")) { "Delete webhook" } }
        }
    };
    Ok(page(&session, &format!("Deliveries to {shown}"), body))
}

fn outcome_words(outcome: &str) -> &'static str {
    match outcome {
        "delivered" => "Delivered",
        "retrying" => "Failed, will retry",
        "failed" => "Failed, given up",
        "dropped" => "Dropped: too many deliveries waiting",
        _ => "Unknown",
    }
}

/// `GET /sites/{site}/webhooks/{id}/delete`: the confirmation step.
pub(crate) async fn delete_confirm(
    State(state): State<AppState>,
    session: Session,
    Path((site_id, id)): Path<(i64, i64)>,
) -> PageResult {
    let webhook = webhook_of(&state, &session, site_id, id).await?;
    state.store.site_as_owner(session.actor(), site_id).await?;
    let title = "Delete this webhook?";
    let body = html! {
        h1 { (title) }
        p { "Nothing more is sent to " span class="url" { (url(&webhook.url)) } "; deliveries waiting and the log go with it." }
        div class="row" {
            form method="post" action=(format!("/sites/{site_id}/webhooks/{id}/delete")) class="inline" {
                (csrf_field(&session.csrf))
                button type="submit" class="danger" { "Delete webhook" }
            }
            a class="button secondary" href=(format!("/sites/{site_id}/webhooks/{id}")) { "Cancel" }
        }
    };
    Ok(page(&session, title, body))
}

/// `POST /sites/{site}/webhooks/{id}/delete`.
pub(crate) async fn delete(
    State(state): State<AppState>,
    session: Session,
    Path((site_id, id)): Path<(i64, i64)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let webhook = webhook_of(&state, &session, site_id, id).await?;
    state.store.delete_webhook(session.actor(), id).await?;
    Ok(redirect_with(&format!("/sites/{site_id}/webhooks"), &format!("Deleted the webhook {}.", webhook.url), &state))
}
