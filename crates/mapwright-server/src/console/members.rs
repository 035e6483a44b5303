//! The members of a site (issue 23): who may see it and with which role, the invitations
//! waiting, an owner's invite form and Remove/Withdraw buttons (a member may also leave), and
//! the page of an invitation's link, where the invited user accepts. Every decision is the
//! store's; the invitation mail is [`crate::service::members`]'.

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use mapwright_store::{InvitationInfo, Member, Role};
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::{time, url};
use super::{PageResult, Session, button_form, csrf_field, page, redirect_error, redirect_with};
use crate::{AppError, AppState, now};

/// `GET /sites/{id}/members`.
pub(crate) async fn show(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let actor = session.actor();
    let site = state.store.site(actor, id).await?;
    let role = state.store.site_role(actor, id).await?;
    let members = state.store.list_members(actor, id).await?;
    let invitations = state.store.list_invitations(actor, id, now()).await?;
    let owner = role == Role::Owner;
    // The last owner may not leave (the store refuses it): it is offered no Leave, and told why.
    let owners = members.iter().filter(|m| Role::parse(&m.role) == Some(Role::Owner)).count();
    let last_owner = owner && owners <= 1;
    let now = now();
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } " › " a class="url" href=(format!("/sites/{id}")) { (url(&site.origin)) } }
        h1 { "Members" }
        p {
            "Owners may change everything and invite others; readers see everything of the site and change nothing. "
            "You are " strong id="my-role" { (role_name(role)) } " of this site."
        }
        table class="cards" id="members" {
            thead { tr { th scope="col" { "Member" } th scope="col" { "Role" } th scope="col" { "Since" } th scope="col" { "Action" } } }
            tbody {
                @for m in &members {
                    tr {
                        td data-label="Member" { (m.email) }
                        td data-label="Role" { (role_name(Role::parse(&m.role).unwrap_or(Role::Reader))) }
                        td data-label="Since" { (time(m.added_at, now)) }
                        td data-label="Action" {
                            @if m.user_id == session.user.id && last_owner {
                                span class="detail" id="last-owner" { "You are its only owner: make another member an owner to leave." }
                            } @else if m.user_id == session.user.id {
                                a class="button secondary" href=(format!("/sites/{id}/members/{}/remove", m.id))
                                    aria-label=(format!("Leave {}", site.origin)) { "Leave" }
                            } @else if owner {
                                a class="button danger" href=(format!("/sites/{id}/members/{}/remove", m.id))
                                    aria-label=(format!("Remove {}", m.email)) { "Remove" }
                            } @else { "–" }
                        }
                    }
                }
            }
        }
        h2 { "Invitations" }
        @if invitations.is_empty() {
            p id="no-invitations" { "No invitation is waiting." }
        } @else {
            table class="cards" id="invitations" {
                thead { tr { th scope="col" { "Address" } th scope="col" { "Role" } th scope="col" { "Expires" } @if owner { th scope="col" { "Action" } } } }
                tbody {
                    @for i in &invitations {
                        tr {
                            td data-label="Address" { (i.email) }
                            td data-label="Role" { (role_name(Role::parse(&i.role).unwrap_or(Role::Reader))) }
                            td data-label="Expires" { (time(i.expires_at, now)) }
                            @if owner {
                                td data-label="Action" {
                                    (button_form(&format!("/sites/{id}/invitations/{}/withdraw", i.id), &session.csrf,
                                        "Withdraw", "secondary", Some(&format!("Withdraw the invitation of {}", i.email))))
                                }
                            }
                        }
                    }
                }
            }
        }
        @if owner {
            h2 { "Invite someone" }
            form method="post" action=(format!("/sites/{id}/invitations")) class="stack" {
                (csrf_field(&session.csrf))
                label for="invite-email" { "E-mail address" }
                input type="email" id="invite-email" name="email" required autocomplete="off";
                label for="invite-role" { "Role" }
                select id="invite-role" name="role" {
                    option value="reader" selected { "Reader: sees everything, changes nothing" }
                    option value="owner" { "Owner: may change everything and invite others" }
                }
                p class="hint" { "A link is mailed to the address; it holds 7 days and works once, for a user signed in with that address." }
                button type="submit" { "Send invitation" }
            }
        }
    };
    Ok(page(&session, &format!("Members of {}", site.origin), body))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Owner => "an owner",
        Role::Reader => "a reader",
    }
}

/// The invite form.
#[derive(Deserialize)]
pub(crate) struct InviteForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    role: String,
}

/// `POST /sites/{id}/invitations`.
pub(crate) async fn invite(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(form): CsrfForm<InviteForm>,
) -> PageResult {
    let back = format!("/sites/{id}/members");
    let outcome = match crate::service::members::parse_role(Some(&form.role)) {
        Ok(role) => crate::service::members::invite(&state, &session.user, id, &form.email, role).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(invitation) => Ok(redirect_with(&back, &format!("Invitation mailed to {}.", invitation.email), &state)),
        Err(
            e
            @ (AppError::BadRequest(_) | AppError::Conflict(_) | AppError::Rejected(_) | AppError::TooManyRequests(_)),
        ) => Ok(redirect_error(&back, &format!("Not invited: {e}."), &state)),
        Err(e) => Err(e.into()),
    }
}

/// `POST /sites/{site}/invitations/{id}/withdraw`.
pub(crate) async fn withdraw(
    State(state): State<AppState>,
    session: Session,
    Path((site, id)): Path<(i64, i64)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    state.store.revoke_invitation(session.actor(), id).await?;
    Ok(redirect_with(&format!("/sites/{site}/members"), "Invitation withdrawn: its link no longer works.", &state))
}

/// The member `member_id` of site `site_id`, as the actor sees it (404 otherwise).
async fn member_of(state: &AppState, session: &Session, site_id: i64, member_id: i64) -> Result<Member, AppError> {
    let members = state.store.list_members(session.actor(), site_id).await?;
    members.into_iter().find(|m| m.id == member_id).ok_or(AppError::NotFound)
}

/// `GET /sites/{site}/members/{id}/remove`: the confirmation step.
pub(crate) async fn remove_confirm(
    State(state): State<AppState>,
    session: Session,
    Path((site_id, id)): Path<(i64, i64)>,
) -> PageResult {
    let member = member_of(&state, &session, site_id, id).await?;
    let site = state.store.site(session.actor(), site_id).await?;
    let leaving = member.user_id == session.user.id;
    if !leaving {
        state.store.site_as_owner(session.actor(), site_id).await?;
    }
    // The last owner is not shown a confirmation it would be refused after.
    if leaving && Role::parse(&member.role) == Some(Role::Owner) {
        let members = state.store.list_members(session.actor(), site_id).await?;
        if members.iter().filter(|m| Role::parse(&m.role) == Some(Role::Owner)).count() <= 1 {
            let why = "You are the only owner of this site: make another member an owner before you leave.";
            return Ok(redirect_error(&format!("/sites/{site_id}/members"), why, &state));
        }
    }
    let (title, button) = if leaving {
        (format!("Leave {}?", site.origin), "Leave site")
    } else {
        (format!("Remove {} from {}?", member.email, site.origin), "Remove member")
    };
    let body = html! {
        h1 { (title) }
        p {
            @if leaving { "You will no longer see this site. To come back, an owner must invite you again." }
            @else { (member.email) " will no longer see this site. Its sitemaps and data stay as they are." }
        }
        div class="row" {
            form method="post" action=(format!("/sites/{site_id}/members/{id}/remove")) class="inline" {
                (csrf_field(&session.csrf))
                button type="submit" class="danger" { (button) }
            }
            a class="button secondary" href=(format!("/sites/{site_id}/members")) { "Cancel" }
        }
    };
    Ok(page(&session, &title, body))
}

/// `POST /sites/{site}/members/{id}/remove`: the last owner stays (the refusal is shown).
pub(crate) async fn remove(
    State(state): State<AppState>,
    session: Session,
    Path((site_id, id)): Path<(i64, i64)>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let member = member_of(&state, &session, site_id, id).await?;
    let back = format!("/sites/{site_id}/members");
    match crate::service::members::remove(&state, session.actor(), id).await {
        Ok(()) if member.user_id == session.user.id => Ok(redirect_with("/", "You left the site.", &state)),
        Ok(()) => Ok(redirect_with(&back, &format!("Removed {}.", member.email), &state)),
        Err(AppError::Rejected(why)) => Ok(redirect_error(&back, &format!("Not removed: {why}."), &state)),
        Err(e) => Err(e.into()),
    }
}

/// `?token=` of an invitation's link.
#[derive(Deserialize)]
pub(crate) struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// The signed-in user of a page that also serves visitors, if any.
async fn optional_session(state: &AppState, headers: &HeaderMap) -> Result<Option<Session>, AppError> {
    let Some(token) = crate::auth::session_cookie(headers) else { return Ok(None) };
    let user = state.store.session_user(token, now()).await?;
    Ok(user.map(|user| Session { user, csrf: super::csrf::session_token(token), flash: None }))
}

/// `GET /invitations/accept?token=`: what the invitation is, and "Accept" for the user signed
/// in with the invited address; a visitor is asked to sign in with it first.
pub(crate) async fn accept_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<TokenQuery>,
) -> PageResult {
    let token = q.token.trim();
    let invitation = if token.is_empty() { None } else { state.store.invitation_by_token(token, now()).await? };
    let session = optional_session(&state, &headers).await?;
    let Some(invitation) = invitation else {
        let body = html! {
            h1 { "Invitation not valid" }
            p { "This invitation link is unknown, was used already, withdrawn, or has expired. Ask an owner of the site to invite you again." }
        };
        let markup = super::layout("Invitation not valid", session.as_ref(), body);
        return Ok((StatusCode::NOT_FOUND, markup).into_response());
    };
    let body = accept_body(&invitation, session.as_ref(), token);
    let title = format!("Invitation to {}", invitation.origin);
    Ok(match &session {
        Some(session) => page(session, &title, body),
        None => super::layout(&title, None, body).into_response(),
    })
}

fn accept_body(invitation: &InvitationInfo, session: Option<&Session>, token: &str) -> Markup {
    let role = role_name(Role::parse(&invitation.role).unwrap_or(Role::Reader));
    html! {
        h1 { "Invitation to " span class="url" { (url(&invitation.origin)) } }
        p id="invitation" {
            (invitation.inviter_email) " invites " strong { (invitation.email) } " to the site "
            span class="url" { (url(&invitation.origin)) } " as " (role) "."
        }
        @match session {
            Some(s) if s.user.email == invitation.email => {
                form method="post" action="/invitations/accept" class="stack" {
                    (csrf_field(&s.csrf))
                    input type="hidden" name="token" value=(token);
                    button type="submit" { "Accept invitation" }
                }
            }
            Some(s) => {
                p class="error" role="alert" {
                    "You are signed in as " (s.user.email) ". Sign out, then sign in as " (invitation.email) " and open the link again."
                }
            }
            None => {
                p { "Sign in as " strong { (invitation.email) } " (or sign up with that address), then open this link again." }
                p { a class="button" href="/signin" { "Sign in" } " " a class="button secondary" href="/signup" { "Sign up" } }
            }
        }
    }
}

/// The accept form.
#[derive(Deserialize)]
pub(crate) struct AcceptForm {
    #[serde(default)]
    token: String,
}

/// `POST /invitations/accept`: the user becomes a member and lands on the site's page.
pub(crate) async fn accept(
    State(state): State<AppState>,
    session: Session,
    CsrfForm(form): CsrfForm<AcceptForm>,
) -> PageResult {
    let site = state.store.accept_invitation(session.actor(), form.token.trim(), now()).await?;
    Ok(redirect_with(&format!("/sites/{}", site.id), &format!("You are now a member of {}.", site.origin), &state))
}
