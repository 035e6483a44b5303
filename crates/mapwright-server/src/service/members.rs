//! Several users per site (issue 23), what the JSON API and the console share: inviting an
//! address (an owner's, rate-limited per user, mailed through the service's [`Mailer`]), the
//! accepting of a link, and the words of the invitation mail. The store decides who may do
//! what (`Store::site_as_owner`, the members queries); this module adds the mail and the limit.
//!
//! [`Mailer`]: crate::mail::Mailer

use mapwright_store::{Actor, Invitation, Role, User};

use crate::{AppError, AppState, now};

/// How long an invitation's link holds.
pub const INVITATION_SECONDS: i64 = 7 * 86_400;

/// The role of a request's text (`owner`, `reader`; absent: reader), or 400.
pub(crate) fn parse_role(text: Option<&str>) -> Result<Role, AppError> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(Role::Reader),
        Some(name) => Role::parse(name)
            .ok_or_else(|| AppError::BadRequest(format!("the role {name:?} is neither \"owner\" nor \"reader\""))),
    }
}

/// `user` invites `email` to site `site_id` as `role`: 404 for a stranger's site, 403 for a
/// reader or where the server sends no mail, 400 for an address mail cannot go to, 409 for a
/// member's address, 422 past the members of a site, 429 past the invitations a user may send
/// a day, 503 when the mail has no room now (nothing stored). The link goes to the address
/// only: the answer carries the invitation, not its token.
pub(crate) async fn invite(
    state: &AppState,
    user: &User,
    site_id: i64,
    email: &str,
    role: Role,
) -> Result<Invitation, AppError> {
    let actor = Actor::from(user);
    let site = state.store.site_as_owner(actor, site_id).await?;
    let Some(mailer) = state.mail.clone() else {
        return Err(AppError::Forbidden("this server sends no mail, so it cannot send invitations".into()));
    };
    let email = email.trim();
    if email.parse::<lettre::Address>().is_err() {
        return Err(AppError::BadRequest(format!("{email:?} is not an e-mail address mail can be sent to")));
    }
    mapwright_store::normalize_email(email).map_err(|e| AppError::BadRequest(e.to_string()))?;
    state.limits.invitations_per_user.check(&*state.store, &user.id.to_string()).await?;
    // The recipient's inbox has one budget for every sender's mail (the outbound gate), and
    // the store caps invitations per address across senders: asked before anything is made,
    // so a held mail is said to the sender, never an invitation left without its mail.
    // A place among the messages on their way too, before the invitation is made: past it
    // 503 and nothing stored (a mail dropped after a 201 would leave an invitation without it).
    let slot = mailer.reserve()?;
    if let Err(held) = state.gate.ask(crate::outbound::Target::Mail(email)).await {
        return Err(AppError::Rejected(format!("the invitation was not sent: {held}")));
    }
    let (invitation, token) =
        state.store.create_invitation(actor, site_id, email, role, now(), INVITATION_SECONDS).await?;
    let base = slot.public_url().to_owned();
    let what = match role {
        Role::Owner => "an owner (you may change everything and invite others)",
        Role::Reader => "a reader (you see everything and change nothing)",
    };
    let body = format!(
        "{inviter} invites you to the site {origin} on mapwright at {base}, as {what}.\n\n\
         To accept, sign in (or sign up) with this address, {email}, and open this link within 7 days:\n\n\
         {base}/invitations/accept?token={token}\n\n\
         The link works once. If you do not know {inviter}, ignore this message.\n",
        inviter = user.email,
        origin = site.origin,
        email = invitation.email,
    );
    slot.send(invitation.email.clone(), "You are invited to a site on mapwright", body);
    Ok(invitation)
}

/// Removes a member (an owner's, or a member leaving), then re-judges at once the site's
/// verification if it may have been granted through a domain property of the removed member
/// (the store marks such a site due): a removed owner's domain must not keep the site verified
/// until the next re-check, a day later.
pub async fn remove(state: &AppState, actor: Actor, member_id: i64) -> Result<(), AppError> {
    let site_id = state.store.site_of_member(member_id).await?;
    state.store.remove_member(actor, member_id).await?;
    let Some(site_id) = site_id else { return Ok(()) };
    let site = state.store.site_by_id(site_id).await?;
    if site.verified_at.is_some() && site.last_checked_at.is_none() {
        if let Err(e) = crate::jobs::recheck::verify_now(state, &site).await {
            tracing::warn!(site = %site.origin, error = %e, "re-judging a site after a member's removal");
        }
    }
    Ok(())
}
