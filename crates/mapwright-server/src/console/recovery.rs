//! Account recovery in the console (issue 34): "Forgot your password?" (`/password/forgot`), the
//! mailed link's page (`/password/reset`), the account page's forms to change the password and
//! the address (`/account/password`, `/account/email`), and the new address's link
//! (`/account/email/confirm`). The use cases are [`crate::auth::recovery`]'s, shared with the API.
//! A link opened does nothing by itself (mail scanners open links): a button does.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::accounts::{anonymous_page, refused};
use super::csrf::CsrfForm;
use super::{PageResult, Session, csrf_field, layout, redirect_error, redirect_with};
use crate::auth::recovery::{self, EMAIL_SENT, RESET_SENT};
use crate::auth::session_cookie;
use crate::extract::{ClientAddr, ClientNet};
use crate::{AppState, now};

/// `?token=` of a mailed link.
#[derive(Deserialize)]
pub(crate) struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// The "Forgot your password?" form body.
#[derive(Deserialize)]
pub(crate) struct ForgotForm {
    #[serde(default)]
    email: String,
}

fn forgot_page(csrf: &str, email: &str, error: Option<&str>) -> Markup {
    layout(
        "Forgot your password?",
        None,
        html! {
            h1 { "Forgot your password?" }
            @if let Some(error) = error { p class="error" role="alert" id="form-error" { (error) } }
            p { "Give your account's address: a link to choose a new password is mailed there." }
            form method="post" action="/password/forgot" class="stack narrow" {
                (csrf_field(csrf))
                label for="email" { "E-mail address" }
                input id="email" name="email" type="email" required autocomplete="email" value=(email);
                button type="submit" { "Mail me a link" }
            }
            p { a href="/signin" { "Back to sign in" } }
        },
    )
}

/// `GET /password/forgot`.
pub(crate) async fn forgot_form(State(state): State<AppState>, headers: HeaderMap) -> Response {
    anonymous_page(StatusCode::OK, &headers, &state, |csrf| forgot_page(csrf, "", None))
}

/// `POST /password/forgot`: the same page for every address (see [`recovery::request_reset`]).
pub(crate) async fn forgot(
    State(state): State<AppState>,
    ClientNet(from): ClientNet,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<ForgotForm>,
) -> Response {
    match recovery::request_reset(&state, &from, &form.email).await {
        Ok(()) => sent_page("Check your inbox", RESET_SENT, "/password/forgot", &state).into_response(),
        Err(e) => refused(e, |status, why| {
            anonymous_page(status, &headers, &state, |csrf| forgot_page(csrf, &form.email, Some(why)))
        }),
    }
}

/// What a request whose outcome is a mail says: the one message, and where the mail is. A
/// server that writes its mail to an outbox says so instead of pointing at a spam folder.
fn sent_page(title: &str, message: &str, again: &str, state: &AppState) -> Markup {
    let outbox = state.mail.as_ref().is_some_and(|m| m.outbox_dir().is_some());
    layout(
        title,
        None,
        html! {
            h1 { (title) }
            p role="status" { (message) }
            @if outbox {
                p class="hint" {
                    "This server sends no mail: it keeps each message in its outbox folder, where its operator \
                     finds your link."
                }
            } @else {
                p { "Nothing came? Look in your spam folder, or " a href=(again) { "ask again" } " for a new link." }
            }
            p { a href="/signin" { "Sign in" } }
        },
    )
}

/// A new password and a link's token, or the account's password and the token.
#[derive(Deserialize)]
pub(crate) struct LinkForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    password: String,
}

fn reset_page(csrf: &str, token: &str, error: Option<&str>) -> Markup {
    layout(
        "Choose a new password",
        None,
        html! {
            h1 { "Choose a new password" }
            @if let Some(error) = error { p class="error" role="alert" id="form-error" { (error) } }
            form method="post" action="/password/reset" class="stack narrow" {
                (csrf_field(csrf))
                input type="hidden" name="token" value=(token);
                label for="password" { "New password" }
                input id="password" name="password" type="password" required minlength="10" autocomplete="new-password"
                    aria-describedby="password-hint";
                p id="password-hint" class="hint" { "At least 10 characters. Every session of the account is signed out and every API token of it revoked." }
                button type="submit" { "Set the new password" }
            }
        },
    )
}

/// `GET /password/reset?token=`: the form of the mailed link.
pub(crate) async fn reset_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<TokenQuery>,
) -> Response {
    anonymous_page(StatusCode::OK, &headers, &state, |csrf| reset_page(csrf, &q.token, None))
}

/// `POST /password/reset`: the new password, then the sign-in page to use it.
pub(crate) async fn reset(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<LinkForm>,
) -> Response {
    match recovery::reset(&state, &client, &form.token, form.password).await {
        Ok(user) => done_page(
            "Password changed",
            &format!(
                "The password of {} is changed: every session of the account was signed out and every API token of it revoked (make new ones on the Account page).",
                user.email
            ),
        ),
        Err(e) => refused(e, |status, why| {
            anonymous_page(status, &headers, &state, |csrf| reset_page(csrf, &form.token, Some(why)))
        }),
    }
}

/// The page after a link was used: what happened, and the way to sign in.
fn done_page(title: &str, message: &str) -> Response {
    let body = html! {
        h1 { (title) }
        p role="status" { (message) }
        p { a class="button" href="/signin" { "Sign in" } }
    };
    layout(title, None, body).into_response()
}

/// The change-of-password form body.
#[derive(Deserialize)]
pub(crate) struct PasswordForm {
    #[serde(default)]
    current_password: String,
    #[serde(default)]
    password: String,
}

/// `POST /account/password`: back to the account page with what happened.
pub(crate) async fn change_password(
    State(state): State<AppState>,
    session: Session,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> PageResult {
    let keep = session_cookie(&headers);
    match recovery::change_password(&state, &session.user, &client, keep, form.current_password, form.password).await {
        Ok(()) => {
            Ok(redirect_with("/account", "Your password is changed; your other sessions were signed out.", &state))
        }
        Err(e) => refused_on_account(e, &state),
    }
}

/// A refused account form: the account page with why, an outage the error page.
fn refused_on_account(e: crate::AppError, state: &AppState) -> PageResult {
    if matches!(e, crate::AppError::Unavailable(_) | crate::AppError::Internal(_) | crate::AppError::TooManyRequests(_))
    {
        return Err(e.into());
    }
    Ok(redirect_error("/account", &e.to_string(), state))
}

/// The change-of-address form body.
#[derive(Deserialize)]
pub(crate) struct EmailForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

/// `POST /account/email`: mails the new address; the same page whether it is free or not.
pub(crate) async fn change_email(
    State(state): State<AppState>,
    session: Session,
    ClientNet(from): ClientNet,
    CsrfForm(form): CsrfForm<EmailForm>,
) -> PageResult {
    match recovery::request_email_change(&state, &session.user, &from, form.password, &form.email).await {
        Ok(()) => Ok(redirect_with("/account", EMAIL_SENT, &state)),
        Err(e) => refused_on_account(e, &state),
    }
}

fn email_confirm_page(csrf: &str, token: &str, error: Option<&str>) -> Markup {
    layout(
        "Confirm your new address",
        None,
        html! {
            h1 { "Confirm your new address" }
            @if let Some(error) = error { p class="error" role="alert" id="form-error" { (error) } }
            form method="post" action="/account/email/confirm" class="stack narrow" {
                (csrf_field(csrf))
                input type="hidden" name="token" value=(token);
                label for="password" { "Password" }
                input id="password" name="password" type="password" required autocomplete="current-password"
                    aria-describedby="password-hint";
                p id="password-hint" class="hint" { "The password of the account that moves to this address." }
                button type="submit" { "Move my account here" }
            }
        },
    )
}

/// A page whose form works signed in or not: the session's CSRF token when the request has a
/// live session (a pre-session token would be refused then), else a pre-session one.
async fn any_visitor_page(
    state: &AppState,
    headers: &HeaderMap,
    status: StatusCode,
    page: impl FnOnce(&str) -> Markup,
) -> Response {
    if let Some(token) = session_cookie(headers)
        && !matches!(state.store.session_user(token, now()).await, Ok(None))
    {
        return (status, page(&super::csrf::session_token(token))).into_response();
    }
    anonymous_page(status, headers, state, page)
}

/// `GET /account/email/confirm?token=`: the form of the new address's link.
pub(crate) async fn email_confirm_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<TokenQuery>,
) -> Response {
    any_visitor_page(&state, &headers, StatusCode::OK, |csrf| email_confirm_page(csrf, &q.token, None)).await
}

/// `POST /account/email/confirm`: the account at its new address.
pub(crate) async fn confirm_email(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<LinkForm>,
) -> Response {
    match recovery::confirm_email_change(&state, &client, &form.token, form.password).await {
        Ok(user) => done_page("Address changed", &format!("Your account's address is {} now.", user.email)),
        Err(e @ (crate::AppError::Unavailable(_) | crate::AppError::Internal(_))) => {
            super::ConsoleError(e).into_response()
        }
        Err(e) => {
            let why = e.to_string();
            any_visitor_page(&state, &headers, e.status(), |csrf| email_confirm_page(csrf, &form.token, Some(&why)))
                .await
        }
    }
}
