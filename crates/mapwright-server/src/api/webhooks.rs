//! A site's webhooks: list, add (the secret in the answer, this once), show, delete, and each
//! endpoint's log of attempts. Who may do what is the store's (a member sees, an owner
//! changes); what an endpoint is made of is [`crate::service::webhooks`], how deliveries go [`crate::jobs::webhooks`]'.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use mapwright_store::{Actor, Role, Webhook, WebhookAttempt};
use serde::{Deserialize, Serialize};

use crate::auth::CurrentUser;
use crate::extract::{Id, JsonBody};
use crate::outbound::masked_url;
use crate::service::webhooks::{Handshake, NewWebhook};
use crate::{AppError, AppState, now};

/// An endpoint as the API shows it: never its secret; to a reader, its URL masked (a chat
/// service's incoming-hook URL is its secret).
#[derive(Serialize)]
pub(crate) struct WebhookView {
    id: i64,
    site_id: i64,
    url: String,
    events: Vec<String>,
    created_by: i64,
    created_at: i64,
    /// `unverified` (no handshake answered: it receives nothing), `active`, `paused` (backing
    /// off after failures) or `disabled` (after failing too long: verify it again).
    state: &'static str,
    /// Failed attempts in a row.
    failures: i64,
    /// Why it is disabled, when it is.
    disabled_reason: Option<String>,
}

impl WebhookView {
    fn of(w: Webhook, role: Role) -> Self {
        WebhookView {
            events: w.event_list().into_iter().map(str::to_owned).collect(),
            state: w.state(now()),
            id: w.id,
            site_id: w.site_id,
            url: if role == Role::Owner { w.url } else { masked_url(&w.url) },
            created_by: w.created_by,
            created_at: w.created_at,
            failures: w.failures,
            disabled_reason: w.disabled_reason,
        }
    }
}

/// `GET /api/v1/sites/{id}/webhooks`: every member may read it.
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<Vec<WebhookView>>, AppError> {
    let actor = Actor::from(&user);
    let webhooks = state.store.list_webhooks(actor, id).await?;
    let role = state.store.site_role(actor, id).await?;
    Ok(Json(webhooks.into_iter().map(|w| WebhookView::of(w, role)).collect()))
}

/// `POST /api/v1/sites/{id}/webhooks` body.
#[derive(Deserialize)]
pub(crate) struct NewBody {
    url: String,
    /// The events; absent or empty: all.
    #[serde(default)]
    events: Vec<String>,
    /// The signing secret; absent: the service makes one.
    #[serde(default)]
    secret: Option<String>,
}

/// `POST /api/v1/sites/{id}/webhooks` answer: the endpoint and its secret.
#[derive(Serialize)]
pub(crate) struct Created {
    #[serde(flatten)]
    webhook: WebhookView,
    /// Shown this once.
    secret: String,
    /// What its verification handshake found.
    handshake: Handshake,
}

/// `POST /api/v1/sites/{id}/webhooks`: an owner adds an endpoint; 201 with its secret.
pub(crate) async fn create(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    JsonBody(body): JsonBody<NewBody>,
) -> Result<(StatusCode, Json<Created>), AppError> {
    let new = NewWebhook { url: body.url, events: body.events, secret: body.secret };
    let (webhook, secret, handshake) = crate::service::webhooks::create(&state, &user, id, new).await?;
    Ok((StatusCode::CREATED, Json(Created { webhook: WebhookView::of(webhook, Role::Owner), secret, handshake })))
}

/// `GET /api/v1/webhooks/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<WebhookView>, AppError> {
    let actor = Actor::from(&user);
    let webhook = state.store.webhook(actor, id).await?;
    let role = state.store.site_role(actor, webhook.site_id).await?;
    Ok(Json(WebhookView::of(webhook, role)))
}

/// `POST /api/v1/webhooks/{id}/verify` answer: the endpoint and what its handshake found.
#[derive(Serialize)]
pub(crate) struct Verified {
    #[serde(flatten)]
    webhook: WebhookView,
    handshake: Handshake,
}

/// `POST /api/v1/webhooks/{id}/verify`: an owner sends the endpoint its handshake again.
pub(crate) async fn verify(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<Verified>, AppError> {
    let (webhook, handshake) = crate::service::webhooks::verify(&state, &user, id).await?;
    Ok(Json(Verified { webhook: WebhookView::of(webhook, Role::Owner), handshake }))
}

/// `DELETE /api/v1/webhooks/{id}`: an owner deletes an endpoint, its queue and its log.
pub(crate) async fn remove(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    state.store.delete_webhook(Actor::from(&user), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/v1/webhooks/{id}/deliveries`: the endpoint's newest attempts, newest first.
pub(crate) async fn deliveries(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<Vec<WebhookAttempt>>, AppError> {
    let attempts = state.store.webhook_attempts(Actor::from(&user), id, mapwright_store::ATTEMPTS_KEPT).await?;
    Ok(Json(attempts))
}
