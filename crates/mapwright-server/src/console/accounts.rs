//! Sign-up, sign-in and sign-out pages, and the account page with its API tokens.

use axum::extract::{Path, Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::{self, CsrfForm};
use super::format::time_or;
use super::{PAGE, PageResult, Session, button_form, csrf_field, layout, offset_pager, page, redirect_with};
use crate::auth::{
    Confirmation, Credentials, SIGN_UP_SENT, authenticate, confirm, cookie, request_sign_up, session_cookie,
};
use crate::extract::{ClientAddr, ClientNet};
use crate::{AppError, AppState, SESSION_SECONDS, now};

/// The sign-in and sign-up form body.
#[derive(Deserialize)]
pub(crate) struct CredentialsForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

/// Which of the two account forms.
#[derive(Clone, Copy)]
enum Kind {
    SignIn,
    SignUp,
}

fn credentials_page(kind: Kind, token: &str, email: &str, error: Option<&str>) -> Markup {
    let (title, action, other, other_label, autocomplete) = match kind {
        Kind::SignIn => ("Sign in", "/signin", "/signup", "No account yet? Sign up", "current-password"),
        Kind::SignUp => ("Sign up", "/signup", "/signin", "Have an account? Sign in", "new-password"),
    };
    layout(
        title,
        None,
        html! {
            h1 { (title) }
            @if let Some(error) = error { p class="error" role="alert" id="form-error" { (error) } }
            form method="post" action=(action) class="stack narrow" {
                (csrf_field(token))
                label for="email" { "E-mail address" }
                input id="email" name="email" type="email" required autocomplete="email" value=(email);
                label for="password" { "Password" }
                input id="password" name="password" type="password" required minlength="10" autocomplete=(autocomplete)
                    aria-describedby="password-hint";
                p id="password-hint" class="hint" { "At least 10 characters." }
                button type="submit" { (title) }
            }
            p { a href=(other) { (other_label) } }
        },
    )
}

/// The pre-session token of the request, or a new one with the cookie to set.
fn pre_session(headers: &HeaderMap, state: &AppState) -> (String, Option<axum::http::HeaderValue>) {
    match csrf::pre_session_token(headers) {
        Some(token) => (token, None),
        None => {
            let (token, cookie) = csrf::new_pre_session(state.secure_cookies);
            (token, Some(cookie))
        }
    }
}

/// A page of a visitor not signed in, drawn around the request's pre-session CSRF token (a new
/// one, with its cookie, when it has none).
fn anonymous_page(
    status: StatusCode,
    headers: &HeaderMap,
    state: &AppState,
    page: impl FnOnce(&str) -> Markup,
) -> Response {
    let (token, set) = pre_session(headers, state);
    let mut response = (status, page(&token)).into_response();
    if let Some(set) = set {
        response.headers_mut().append(SET_COOKIE, set);
    }
    response
}

fn form_response(
    kind: Kind,
    status: StatusCode,
    headers: &HeaderMap,
    state: &AppState,
    email: &str,
    error: Option<&str>,
) -> Response {
    anonymous_page(status, headers, state, |token| credentials_page(kind, token, email, error))
}

/// A refused form drawn again by `again` with the status and why; an outage is the console's
/// error page instead.
fn refused(e: AppError, again: impl FnOnce(StatusCode, &str) -> Response) -> Response {
    if matches!(e, AppError::Unavailable(_) | AppError::Internal(_)) {
        return super::ConsoleError(e).into_response();
    }
    again(e.status(), &e.to_string())
}

/// `GET /signin`.
pub(crate) async fn sign_in_form(State(state): State<AppState>, headers: HeaderMap) -> Response {
    form_response(Kind::SignIn, StatusCode::OK, &headers, &state, "", None)
}

/// `GET /signup`.
pub(crate) async fn sign_up_form(State(state): State<AppState>, headers: HeaderMap) -> Response {
    form_response(Kind::SignUp, StatusCode::OK, &headers, &state, "", None)
}

/// `POST /signin`: a session and a redirect to the table, or the form again with the reason.
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<CredentialsForm>,
) -> Response {
    let email = form.email.clone();
    let result = authenticate(&state, &client, Credentials { email: form.email, password: form.password }).await;
    finish(Kind::SignIn, result, &headers, &state, &email).await
}

/// `POST /signup`: mails the address (a link that makes the account) and says so, in the same
/// words whatever the address (see [`request_sign_up`]); or the form again with the reason.
pub(crate) async fn sign_up(
    State(state): State<AppState>,
    ClientNet(client): ClientNet,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<CredentialsForm>,
) -> Response {
    let email = form.email.clone();
    match request_sign_up(&state, &client, Credentials { email: form.email, password: form.password }).await {
        Ok(()) => {
            let outbox = state.mail.as_ref().is_some_and(|m| m.outbox_dir().is_some());
            sent_page(outbox).into_response()
        }
        Err(e) => refused(e, |status, why| form_response(Kind::SignUp, status, &headers, &state, &email, Some(why))),
    }
}

fn sent_page(outbox: bool) -> Markup {
    layout(
        "Check your inbox",
        None,
        html! {
            h1 { "Check your inbox" }
            p role="status" { (SIGN_UP_SENT) }
            @if outbox {
                p class="hint" {
                    "This server sends no mail: it keeps each message in its outbox folder, where its operator \
                     finds your link."
                }
            }
            p { "Nothing came? Look in your spam folder, or " a href="/signup" { "sign up again" } " for a new link." }
            p { a href="/signin" { "Sign in" } }
        },
    )
}

/// `?token=` of the mailed link.
#[derive(Deserialize)]
pub(crate) struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// The confirmation form: the link's token, kept in the form, and the sign-up's password. A
/// link opened does nothing by itself (mail scanners open links): the button makes the account.
fn confirm_page(csrf: &str, token: &str, error: Option<&str>) -> Markup {
    layout(
        "Confirm your account",
        None,
        html! {
            h1 { "Confirm your account" }
            @if let Some(error) = error { p class="error" role="alert" id="form-error" { (error) } }
            form method="post" action="/signup/confirm" class="stack narrow" {
                (csrf_field(csrf))
                input type="hidden" name="token" value=(token);
                label for="password" { "Password" }
                input id="password" name="password" type="password" required autocomplete="current-password"
                    aria-describedby="password-hint";
                p id="password-hint" class="hint" { "The password you chose when you signed up." }
                button type="submit" { "Make my account" }
            }
        },
    )
}

/// `GET /signup/confirm?token=`: the form that finishes a sign-up.
pub(crate) async fn confirm_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<TokenQuery>,
) -> Response {
    anonymous_page(StatusCode::OK, &headers, &state, |csrf| confirm_page(csrf, &q.token, None))
}

/// `POST /signup/confirm`: the account, a session and a redirect to the table.
pub(crate) async fn confirm_sign_up(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<ConfirmForm>,
) -> Response {
    let token = form.token.clone();
    match confirm(&state, &client, Confirmation { token: form.token, password: form.password }).await {
        Ok(user) => start_session(&state, user).await,
        Err(e) => refused(e, |status, why| {
            anonymous_page(status, &headers, &state, |csrf| confirm_page(csrf, &token, Some(why)))
        }),
    }
}

/// The confirmation form body.
#[derive(Deserialize)]
pub(crate) struct ConfirmForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    password: String,
}

async fn finish(
    kind: Kind,
    result: Result<mapwright_store::User, AppError>,
    headers: &HeaderMap,
    state: &AppState,
    email: &str,
) -> Response {
    match result {
        Ok(user) => start_session(state, user).await,
        Err(e) => refused(e, |status, why| form_response(kind, status, headers, state, email, Some(why))),
    }
}

/// A session for `user` and a redirect to the table.
async fn start_session(state: &AppState, user: mapwright_store::User) -> Response {
    match state.store.create_session(user.id, now(), SESSION_SECONDS).await {
        Ok(token) => {
            let mut response = Redirect::to("/").into_response();
            response.headers_mut().insert(SET_COOKIE, cookie(state, &token, SESSION_SECONDS));
            response
        }
        Err(e) => super::ConsoleError(AppError::from(e)).into_response(),
    }
}

/// `POST /signout`: ends the session and goes to the sign-in page.
pub(crate) async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    if let Some(token) = session_cookie(&headers) {
        state.store.delete_session(token).await?;
    }
    let mut response = Redirect::to("/signin").into_response();
    response.headers_mut().insert(SET_COOKIE, cookie(&state, "", 0));
    Ok(response)
}

/// The cookie that carries a new token's secret through the redirect after its creation, to
/// be shown once (HttpOnly, only sent to `/account`, cleared by the page that shows it).
const SECRET_COOKIE: &str = "mapwright_new_token";

/// `GET /account`; right after a token's creation, shows its secret once.
pub(crate) async fn account(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<TokensPage>,
) -> PageResult {
    let secret = crate::auth::cookie_value(&headers, SECRET_COOKIE).filter(|s| !s.is_empty() && s.len() <= 128);
    let mut response = account_page(&state, &session, q.tokens, secret, None).await?;
    if secret.is_some() {
        let clear = format!("{SECRET_COOKIE}=; Path=/account; HttpOnly; SameSite=Strict; Max-Age=0");
        if let Ok(v) = axum::http::HeaderValue::from_str(&clear) {
            response.headers_mut().append(SET_COOKIE, v);
        }
    }
    Ok(response)
}

/// `?tokens=OFFSET`.
#[derive(Deserialize, Default)]
pub(crate) struct TokensPage {
    #[serde(default)]
    tokens: usize,
}

async fn account_page(
    state: &AppState,
    session: &Session,
    offset: usize,
    secret: Option<&str>,
    error: Option<&str>,
) -> PageResult {
    let tokens: Vec<_> =
        state.store.list_api_tokens(session.actor()).await?.into_iter().filter(|t| t.revoked_at.is_none()).collect();
    let now = now();
    let shown: Vec<_> = tokens.iter().skip(offset).take(PAGE as usize).collect();
    let body = html! {
        h1 { "Account" }
        p { "Signed in as " strong { (session.user.email) } "." }
        h2 { "API tokens" }
        p { "A token lets a script use the JSON API under " code { "/api/v1" } " with " code { "Authorization: Bearer TOKEN" } "." }
        @if let Some(secret) = secret {
            div class="flash" role="status" {
                p { "Your new token. Copy it now: it is shown only this once." }
                p { code class="secret" { (secret) } }
            }
        }
        @if let Some(error) = error { p class="error" role="alert" { (error) } }
        form method="post" action="/account/tokens" class="row" {
            (csrf_field(&session.csrf))
            label for="token-name" { "Name of a new token" }
            input id="token-name" name="name" required maxlength="100" placeholder="deploy script";
            button type="submit" { "Create token" }
        }
        @if shown.is_empty() {
            p { "No tokens." }
        } @else {
            div {
                table class="cards" {
                    caption class="visually-hidden" { "Your API tokens" }
                    thead { tr { th scope="col" { "Name" } th scope="col" { "Created" } th scope="col" { "Last used" } th scope="col" { "Action" } } }
                    tbody {
                        @for t in &shown {
                            tr {
                                td data-label="Name" { (t.name) }
                                td data-label="Created" { (super::format::time(t.created_at, now)) }
                                td data-label="Last used" { (time_or(t.last_used_at, now, "never")) }
                                td data-label="Action" { a class="button danger" href=(format!("/account/tokens/{}/revoke", t.id)) { "Revoke" } }
                            }
                        }
                    }
                }
            }
            (offset_pager("/account", "tokens", offset, tokens.len() > offset + shown.len()))
        }
    };
    Ok(page(session, "Account", body))
}

/// The new-token form.
#[derive(Deserialize)]
pub(crate) struct TokenForm {
    #[serde(default)]
    name: String,
}

/// `POST /account/tokens`: creates the token and redirects to the account page, which shows
/// its secret once (a reload shows it no more and creates nothing).
pub(crate) async fn create_token(
    State(state): State<AppState>,
    session: Session,
    CsrfForm(form): CsrfForm<TokenForm>,
) -> PageResult {
    let name = form.name.trim();
    if name.is_empty() || name.len() > 100 {
        let mut response =
            account_page(&state, &session, 0, None, Some("A token needs a name of 1 to 100 bytes.")).await?;
        *response.status_mut() = StatusCode::BAD_REQUEST;
        return Ok(response);
    }
    let (_, secret) = state.store.create_api_token(session.actor(), name, now()).await?;
    let secure = if state.secure_cookies { "; Secure" } else { "" };
    let cookie = format!("{SECRET_COOKIE}={secret}; Path=/account; HttpOnly; SameSite=Strict; Max-Age=300{secure}");
    let mut response = redirect_with("/account", &format!("Created the token {name}."), &state);
    if let Ok(v) = axum::http::HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, v);
    }
    Ok(response)
}

/// `GET /account/tokens/{id}/revoke`: the confirmation step.
pub(crate) async fn revoke_confirm(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let tokens = state.store.list_api_tokens(session.actor()).await?;
    let token = tokens.iter().find(|t| t.id == id && t.revoked_at.is_none()).ok_or(AppError::NotFound)?;
    let body = html! {
        h1 { "Revoke this token?" }
        p { "Scripts that use the token " strong { (token.name) } " stop working at once. This cannot be undone." }
        div class="row" {
            (button_form(&format!("/account/tokens/{id}/revoke"), &session.csrf, "Revoke token", "danger", None))
            a class="button secondary" href="/account" { "Cancel" }
        }
    };
    Ok(page(&session, "Revoke a token", body))
}

/// `POST /account/tokens/{id}/revoke`.
pub(crate) async fn revoke_token(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    state.store.revoke_api_token(session.actor(), id, now()).await?;
    Ok(redirect_with("/account", "The token was revoked.", &state))
}
