//! Account recovery in the API (issue 34): a password reset by a mailed link, a change of
//! password, a change of address confirmed by a link mailed to the new address. The use cases
//! are [`crate::auth::recovery`]'s, shared with the console.

use axum::Json;
use axum::extract::State;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use mapwright_store::User;
use serde::{Deserialize, Serialize};

use crate::auth::recovery::{self, EMAIL_SENT, RESET_SENT};
use crate::auth::{CurrentUser, session_cookie};
use crate::extract::JsonBody;
use crate::extract::{ClientAddr, ClientNet};
use crate::{AppError, AppState};

/// The answer of a request whose outcome is a mail: the same words whatever the address.
#[derive(Serialize)]
pub(crate) struct Sent {
    message: &'static str,
}

// Alike on purpose: auth.rs's `create_token` has this frame (a JSON body type, axum's extractors, a
// status and a JSON answer); the use cases differ.
/// `POST /api/v1/password-reset` body.
#[derive(Deserialize)]
pub(crate) struct ResetRequest {
    email: String,
}

/// `POST /api/v1/password-reset` `{"email"}`: 202, the same for every address; the account's
/// address is mailed a link (an hour, once) whose token `/api/v1/password-reset/confirm` takes.
pub(crate) async fn request_reset(
    State(state): State<AppState>,
    ClientNet(from): ClientNet,
    JsonBody(body): JsonBody<ResetRequest>,
) -> Result<(StatusCode, Json<Sent>), AppError> {
    recovery::request_reset(&state, &from, &body.email).await?;
    Ok((StatusCode::ACCEPTED, Json(Sent { message: RESET_SENT })))
}

/// A link's token and a password: `POST /api/v1/password-reset/confirm` (the new password) and
/// `POST /api/v1/email-change/confirm` (the account's password).
#[derive(Deserialize)]
pub(crate) struct LinkUse {
    token: String,
    password: String,
}

/// `POST /api/v1/password-reset/confirm` `{"token", "password"}`: 200 with the user; every
/// session of the account ended and every API token revoked (sign in with the new password).
pub(crate) async fn reset(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    JsonBody(body): JsonBody<LinkUse>,
) -> Result<Json<User>, AppError> {
    Ok(Json(recovery::reset(&state, &client, &body.token, body.password).await?))
}

/// `POST /api/v1/me/password` body.
#[derive(Deserialize)]
pub(crate) struct PasswordChange {
    current_password: String,
    password: String,
}

/// `POST /api/v1/me/password` `{"current_password", "password"}`: 204; every other session of
/// the account ends (the caller's stays when it is one).
pub(crate) async fn change_password(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    JsonBody(body): JsonBody<PasswordChange>,
) -> Result<StatusCode, AppError> {
    // A request signed in by an API token keeps no session: it holds none.
    let keep = headers.get(AUTHORIZATION).is_none().then(|| session_cookie(&headers)).flatten();
    recovery::change_password(&state, &user, &client, keep, body.current_password, body.password).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/v1/me/email` body.
#[derive(Deserialize)]
pub(crate) struct EmailChange {
    email: String,
    password: String,
}

/// `POST /api/v1/me/email` `{"email", "password"}`: 202, the same whether the new address is
/// free or not; the new address is mailed a link that `/api/v1/email-change/confirm` takes.
pub(crate) async fn request_email_change(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ClientNet(from): ClientNet,
    JsonBody(body): JsonBody<EmailChange>,
) -> Result<(StatusCode, Json<Sent>), AppError> {
    recovery::request_email_change(&state, &user, &from, body.password, &body.email).await?;
    Ok((StatusCode::ACCEPTED, Json(Sent { message: EMAIL_SENT })))
}

/// `POST /api/v1/email-change/confirm` `{"token", "password"}`: 200 with the user at its new
/// address. No session needed: the link may be opened anywhere; the password proves the account.
pub(crate) async fn confirm_email_change(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    JsonBody(body): JsonBody<LinkUse>,
) -> Result<Json<User>, AppError> {
    Ok(Json(recovery::confirm_email_change(&state, &client, &body.token, body.password).await?))
}
