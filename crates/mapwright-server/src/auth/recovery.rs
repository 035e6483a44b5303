//! Account recovery (issue 34): a password reset by a link mailed to the account's address, a
//! change of password, a change of address confirmed by a link mailed to the new address. The
//! use cases the API (`api/account.rs`) and the console (`console/recovery.rs`) share; the
//! operator's `serve user password` sets a password through the store directly.
//!
//! They keep sign-up's promises and reuse its limits (one home, `crate::Limits`): a reset
//! request answers the same for every address and mails only an account's owner; requests
//! count toward `sign_up_per_client`, their mail toward `mail_per_network_address` and
//! `mail_per_network` (past them the answer is the same and nothing is sent); a link's use and
//! a password check count toward `sign_in_per_client`, and a wrong current password toward the
//! sign-in back-off (through [`authenticate`]). Links are single use and short-lived; a reset
//! ends every session of the account, a change of password every session but the caller's.

use mapwright_store::{Requester, SignupRequest, User, secret};

use super::{Credentials, authenticate, check_email, may_mail};
use crate::hashing::Budget;
use crate::mail::Slot;
use crate::{AppError, AppState, now};

/// How long a password-reset link holds: an hour.
pub const RESET_LINK_SECONDS: i64 = 3600;

/// How long a change-of-address link holds: a day, as a sign-up's.
pub const EMAIL_LINK_SECONDS: i64 = 24 * 3600;

/// What every reset request answers, whether the address has an account or not.
pub(crate) const RESET_SENT: &str = "If an account has this address, a link to choose a new password is on its way \
there. It holds for one hour and works once; using it signs the account out everywhere.";

/// What every change-of-address request answers, whether the new address is free or not.
pub(crate) const EMAIL_SENT: &str = "A link to confirm the new address is on its way there; it holds for 24 hours. \
Your account keeps its present address until the link is followed.";

/// Why a reset link is refused.
const RESET_INVALID: &str = "this password-reset link is not valid: it was used already, the password was changed \
since, or it is more than an hour old; ask for a new one";

/// Why a change-of-address link is refused.
const EMAIL_INVALID: &str = "this confirmation link is not valid: it was used already, or it is more than 24 hours \
old; ask for the change again on your account page";

/// The refusal when the server sends no mail (`--sign-up closed`): its operator helps.
fn no_mail() -> AppError {
    AppError::Forbidden(
        "this server sends no mail: ask its operator to set a new password (mapwright serve user password EMAIL)"
            .into(),
    )
}

/// A link's token as given: non-empty and short, or refused with `why` before any look-up.
fn token_of<'t>(token: &'t str, why: &str) -> Result<&'t str, AppError> {
    let token = token.trim();
    if token.is_empty() || token.len() > 128 {
        return Err(AppError::BadRequest(why.into()));
    }
    Ok(token)
}

/// A new password's argon2 hash, made in the bounded pool, or why it cannot be one.
async fn new_hash(state: &AppState, password: String) -> Result<String, AppError> {
    if let Some(problem) = crate::password_problem(&password) {
        return Err(AppError::BadRequest(problem.into()));
    }
    Ok(state.hashing.run(Budget::SignUp, move || secret::hash_password(&password)).await??)
}

/// Asks for a password-reset link for `email`: mailed when an account has the address, the
/// answer the same either way (the caller shows [`RESET_SENT`]).
pub(crate) async fn request_reset(state: &AppState, from: &Requester, email: &str) -> Result<(), AppError> {
    let Some(mailer) = state.mail.clone() else { return Err(no_mail()) };
    let email = check_email(email)?;
    state.limits.sign_up_per_client.check(&*state.store, &from.client).await?;
    // A place for the mail before a link is stored (the same for every address).
    let slot = mailer.reserve()?;
    if !may_mail(state, from, &email).await? {
        return Ok(());
    }
    let Some((user, token)) = state.store.request_password_reset(&email, now(), RESET_LINK_SECONDS).await? else {
        tracing::info!(email, "password reset asked for an address without an account: nothing sent");
        return Ok(());
    };
    let base = mailer.public_url().to_owned();
    let body = format!(
        "Someone, probably you, asked to reset the password of your mapwright account at {base}.\n\n\
         To choose a new password, open this link within an hour (it works once):\n\n\
         {base}/password/reset?token={token}\n\n\
         Choosing a new password signs your account out everywhere and revokes every API token \
         of the account (make new ones on your Account page). If it was not you, ignore this \
         message: your password stays as it is.\n"
    );
    slot.send(user.email, "Reset your mapwright password", body);
    Ok(())
}

/// Uses a reset link: the account's new password, every session of it ended and every API
/// token revoked (a reset means the password may be someone else's: so may a token made with
/// it), every other reset link dead; a note to the address. The user, who then signs in with the new password.
pub(crate) async fn reset(state: &AppState, client: &str, token: &str, password: String) -> Result<User, AppError> {
    state.limits.sign_in_per_client.check(&*state.store, client).await?;
    let token = token_of(token, RESET_INVALID)?;
    let hash = new_hash(state, password).await?;
    let slot = notice_slot(state)?;
    let user = state
        .store
        .reset_password(token, &hash, now())
        .await?
        .ok_or_else(|| AppError::BadRequest(RESET_INVALID.into()))?;
    notify(slot, &user.email, "Your mapwright password was changed", "was changed through a reset link");
    Ok(user)
}

/// A change of password by the signed-in `user`, who gives the current one: every session of
/// the account ends but `keep_session` (the caller's own), and its reset links die.
pub(crate) async fn change_password(
    state: &AppState,
    user: &User,
    client: &str,
    keep_session: Option<&str>,
    current: String,
    new: String,
) -> Result<(), AppError> {
    check_current(state, user, client, current).await?;
    let hash = new_hash(state, new).await?;
    let slot = notice_slot(state)?;
    state.store.set_password(user.id, &hash, keep_session).await?;
    notify(slot, &user.email, "Your mapwright password was changed", "was changed on its account page");
    Ok(())
}

/// The account's current password, checked under the sign-in limits and back-off: a wrong one
/// is refused as a bad request (the caller is signed in; 401 would say it is not).
async fn check_current(state: &AppState, user: &User, client: &str, password: String) -> Result<(), AppError> {
    match authenticate(state, client, Credentials { email: user.email.clone(), password }).await {
        Ok(_) => Ok(()),
        Err(AppError::BadCredentials) => {
            Err(AppError::BadRequest("this is not the account's current password: nothing was changed".into()))
        }
        Err(e) => Err(e),
    }
}

/// A change of address asked by the signed-in `user`, who gives the password: the new address
/// is mailed a link that moves the account there (or, when an account has it, a note to its
/// owner); the answer is the same either way (the caller shows [`EMAIL_SENT`]).
pub(crate) async fn request_email_change(
    state: &AppState,
    user: &User,
    from: &Requester,
    password: String,
    new_email: &str,
) -> Result<(), AppError> {
    let Some(mailer) = state.mail.clone() else {
        return Err(AppError::Forbidden(
            "this server sends no mail, so it cannot confirm a new address: ask its operator".into(),
        ));
    };
    let new_email = check_email(new_email)?;
    if new_email == user.email {
        return Err(AppError::BadRequest("this is the account's address already".into()));
    }
    state.limits.sign_up_per_client.check(&*state.store, &from.client).await?;
    check_current(state, user, &from.client, password).await?;
    let slot = mailer.reserve()?;
    if !may_mail(state, from, &new_email).await? {
        return Ok(());
    }
    let base = mailer.public_url().to_owned();
    match state.store.request_email_change(user.id, &new_email, now(), EMAIL_LINK_SECONDS).await? {
        SignupRequest::Pending(token) => {
            let body = format!(
                "Someone, probably you, asked to move the mapwright account of {old} at {base} to this address.\n\n\
                 To confirm, open this link within 24 hours and give the account's password:\n\n\
                 {base}/account/email/confirm?token={token}\n\n\
                 If it was not you, ignore this message: nothing changes without the link.\n",
                old = user.email
            );
            slot.send(new_email, "Confirm your new mapwright address", body);
        }
        SignupRequest::Taken => {
            let body = format!(
                "Someone asked to move another mapwright account at {base} to this address, which has an account \
                 already. Nothing was changed.\n\nIf it was not you, ignore this message.\n"
            );
            slot.send(new_email, "Your address was given for another mapwright account", body);
        }
    }
    Ok(())
}

/// Uses a change-of-address link with the account's password: the account takes the new
/// address, and the old one is told. The user as it is now.
pub(crate) async fn confirm_email_change(
    state: &AppState,
    client: &str,
    token: &str,
    password: String,
) -> Result<User, AppError> {
    state.limits.sign_in_per_client.check(&*state.store, client).await?;
    let token = token_of(token, EMAIL_INVALID)?;
    let invalid = || AppError::BadRequest(EMAIL_INVALID.into());
    let (user, _) = state.store.pending_email_change(token, now()).await?.ok_or_else(invalid)?;
    check_current(state, &user, client, password).await?;
    let slot = notice_slot(state)?;
    let moved = match state.store.confirm_email_change(token, now()).await {
        Ok(moved) => moved.ok_or_else(invalid)?,
        Err(mapwright_store::Error::Conflict(_)) => {
            return Err(AppError::BadRequest("an account took this address meanwhile: nothing was changed".into()));
        }
        Err(e) => return Err(e.into()),
    };
    let (user, old) = moved;
    let what = format!("was moved to {} (its new address) on request", user.email);
    notify(slot, &old, "Your mapwright address was changed", &what);
    Ok(user)
}

/// A place for the note of [`notify`], taken before the change it tells of is made: `None`
/// without a mailer (nothing to tell with), 503 when the mail has no room (nothing changed).
fn notice_slot(state: &AppState) -> Result<Option<Slot>, AppError> {
    state.mail.as_ref().map(|mailer| mailer.reserve()).transpose()
}

/// A note to `to` that its account's password or address changed (`what`), so an owner whose
/// account was taken over hears of it; sent with the place [`notice_slot`] took.
fn notify(slot: Option<Slot>, to: &str, subject: &'static str, what: &str) {
    let Some(slot) = slot else { return };
    let base = slot.public_url().to_owned();
    let body = format!(
        "The mapwright account of this address at {base} {what}.\n\n\
         If it was you, nothing more is needed. If it was not, reset your password at {base}/password/forgot \
         at once, or ask the server's operator for help.\n"
    );
    slot.send(to.to_owned(), subject, body);
}
