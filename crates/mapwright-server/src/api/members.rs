//! The members of a site: list (with the invitations not yet accepted), invite, withdraw an
//! invitation, accept one, remove a member. Who may do what is the store's (`owned!` to see,
//! `site_as_owner` to change); the mail and its limit are [`crate::service::members`]'.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use mapwright_store::{Actor, Invitation, Member, Role};
use serde::{Deserialize, Serialize};

use super::sites::SiteView;
use crate::auth::CurrentUser;
use crate::extract::{Id, JsonBody};
use crate::{AppError, AppState, now};

/// `GET /api/v1/sites/{id}/members`.
#[derive(Serialize)]
pub(crate) struct Members {
    /// The caller's own role on the site.
    role: Role,
    members: Vec<Member>,
    /// Invitations sent and not accepted, withdrawn or expired.
    invitations: Vec<Invitation>,
}

/// `GET /api/v1/sites/{id}/members`: every member of the site can read it.
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<Members>, AppError> {
    let actor = Actor::from(&user);
    let role = state.store.site_role(actor, id).await?;
    let members = state.store.list_members(actor, id).await?;
    let invitations = state.store.list_invitations(actor, id, now()).await?;
    Ok(Json(Members { role, members, invitations }))
}

/// `POST /api/v1/sites/{id}/invitations` body.
#[derive(Deserialize)]
pub(crate) struct NewInvitation {
    email: String,
    /// `owner` or `reader` (the default).
    #[serde(default)]
    role: Option<String>,
}

/// `POST /api/v1/sites/{id}/invitations`: 201 with the invitation; the link is mailed to the
/// address only.
pub(crate) async fn invite(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    JsonBody(body): JsonBody<NewInvitation>,
) -> Result<(StatusCode, Json<Invitation>), AppError> {
    let role = crate::service::members::parse_role(body.role.as_deref())?;
    let invitation = crate::service::members::invite(&state, &user, id, &body.email, role).await?;
    Ok((StatusCode::CREATED, Json(invitation)))
}

// `revoke` and `remove` have the shape of `api/sites.rs`'s `remove` (same extractors, a store
// call, 204): axum handlers, one per route, each a line of its own use case; a shared generic
// handler would hide which store method a route calls.
/// `DELETE /api/v1/invitations/{id}`: an owner withdraws an invitation.
pub(crate) async fn revoke(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    state.store.revoke_invitation(Actor::from(&user), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/v1/invitations/accept` body: the token of the mailed link.
#[derive(Deserialize)]
pub(crate) struct Acceptance {
    token: String,
}

/// `POST /api/v1/invitations/accept`: the caller, signed in as the invited address, becomes a
/// member; 200 with the site.
pub(crate) async fn accept(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    JsonBody(body): JsonBody<Acceptance>,
) -> Result<Json<SiteView>, AppError> {
    let actor = Actor::from(&user);
    let site = state.store.accept_invitation(actor, body.token.trim(), now()).await?;
    Ok(Json(SiteView::of(&state, actor, site).await?))
}

/// `DELETE /api/v1/members/{id}`: an owner removes a member, or a member leaves; never the
/// last owner (422).
pub(crate) async fn remove(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    crate::service::members::remove(&state, Actor::from(&user), id).await?;
    Ok(StatusCode::NO_CONTENT)
}
