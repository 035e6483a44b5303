//! E-mail alerts (issue 23): the caller's alerts for a site (read, turn on or off: any member,
//! a reader too, since it is their own mail), and the unsubscribe link's token, which needs no
//! session. What triggers a mail is [`crate::jobs::alerts`]'.

use axum::Json;
use axum::extract::State;
use mapwright_store::{Actor, AlertLink, AlertSetting};
use serde::Deserialize;

use crate::auth::CurrentUser;
use crate::extract::{Id, JsonBody};
use crate::service::alerts::link;
use crate::{AppError, AppState};

/// `GET /api/v1/sites/{id}/alerts`.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<AlertSetting>, AppError> {
    Ok(Json(state.store.alert_setting(Actor::from(&user), id).await?))
}

/// `POST /api/v1/sites/{id}/alerts` body.
#[derive(Deserialize)]
pub(crate) struct Choice {
    enabled: bool,
}

/// `POST /api/v1/sites/{id}/alerts`: 200 with the setting as it is now.
pub(crate) async fn set(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    JsonBody(body): JsonBody<Choice>,
) -> Result<Json<AlertSetting>, AppError> {
    Ok(Json(state.store.set_alerts(Actor::from(&user), id, body.enabled).await?))
}

/// `POST /api/v1/alerts/unsubscribe` body: the token of a mail's link, and on (`true`) or off
/// (the default: the link's purpose).
#[derive(Deserialize)]
pub(crate) struct Unsubscribe {
    token: String,
    #[serde(default)]
    enabled: bool,
}

/// `POST /api/v1/alerts/unsubscribe`: 200 with the site, the address and the state now; 404 for
/// a token no mail carried. The same answer however often it is sent.
pub(crate) async fn unsubscribe(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<Unsubscribe>,
) -> Result<Json<AlertLink>, AppError> {
    let link = link(&state, &body.token, Some(body.enabled)).await?;
    Ok(Json(link))
}
