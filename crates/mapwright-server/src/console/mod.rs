//! The web console (issue 8): server-rendered pages for site owners, on the same store and
//! session cookie as the JSON API. Plain HTML forms with POST-redirect-GET, no JavaScript;
//! maud templates, checked at compile time. Every form carries a CSRF token ([`csrf`]); every
//! page of a site or sitemap goes through the store's actor filter, so another user's id is a
//! 404 page.
//!
//! Pages: `/` (the "My sitemaps" table, also at `/sitemaps`), `/sitemaps/add`,
//! `/sitemaps/{id}` (and its `/findings`), `/sites/{id}` (and its `/findings`, `/failing.csv`,
//! `/delete`, `/members`, `/webhooks` and each webhook's log; `POST /sites/{id}/alerts`), `/domains` (and `/domains/{id}`, its `/delete`), `/invitations/accept`, `/alerts/unsubscribe`, `/account` (and `/account/email/confirm`), `/signin`, `/signup`, `/signup/confirm`, `/password/forgot`, `/password/reset`; `POST /signout`, `/account/password`, `/account/email`. Every answer of these routes is
//! an HTML page, errors included (`html_errors`), and unknown paths get a 404 page.

mod accounts;
mod alerts;
mod check_changes;
pub mod csrf;
mod diffs;
mod domains;
mod findings;
pub(crate) mod format;
mod lastmod;
mod listing;
mod members;
mod overview;
mod recovery;
mod sitemap_page;
mod sitemaps;
mod sites;
mod svg;
mod webhooks;

use axum::Router;
use axum::extract::{FromRequestParts, Request};
use axum::http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use mapwright_store::{Actor, User};
use maud::{DOCTYPE, Markup, html};

use crate::auth::session_cookie;
use crate::{AppError, AppState, now};

/// The console's stylesheet, compiled in.
const STYLE: &str = include_str!("style.css");

/// The cookie of a one-time message shown by the next page (POST-redirect-GET).
const FLASH_COOKIE: &str = "mapwright_flash";

/// Rows per page of every list.
pub(crate) const PAGE: i64 = 50;

/// The console's routes, merged into [`crate::app`] at `/`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(sitemaps::table))
        .route("/sitemaps", get(sitemaps::table))
        .route("/sitemaps/add", get(sitemaps::add_form).post(sitemaps::add))
        .route("/sitemaps/{id}", get(sitemap_page::show))
        .route("/sitemaps/{id}/findings", get(findings::of_sitemap))
        .route("/sitemaps/{id}/resubmit", post(sitemaps::resubmit))
        .route("/sitemaps/{id}/remove", get(sitemaps::remove_confirm).post(sitemaps::remove))
        .route("/sites/{id}", get(sites::show))
        .route("/sites/{id}/findings", get(findings::of_site))
        .route("/sites/{id}/failing.csv", get(sites::failing_csv))
        .route("/sites/{id}/verify", post(sites::verify_now))
        .route("/sites/{id}/check", post(sites::check_now))
        .route("/sites/{id}/delete", get(sites::delete_confirm).post(sites::delete))
        .route("/sites/{id}/members", get(members::show))
        .route("/sites/{id}/invitations", post(members::invite))
        .route("/sites/{site}/invitations/{id}/withdraw", post(members::withdraw))
        .route("/sites/{site}/members/{id}/remove", get(members::remove_confirm).post(members::remove))
        .route("/sites/{id}/webhooks", get(webhooks::show).post(webhooks::add))
        .route("/sites/{site}/webhooks/{id}", get(webhooks::log))
        .route("/sites/{site}/webhooks/{id}/verify", axum::routing::post(webhooks::verify))
        .route("/sites/{site}/webhooks/{id}/delete", get(webhooks::delete_confirm).post(webhooks::delete))
        .route("/invitations/accept", get(members::accept_page).post(members::accept))
        .route("/sites/{id}/alerts", post(alerts::set))
        .route("/alerts/unsubscribe", get(alerts::unsubscribe_page).post(alerts::unsubscribe))
        .route("/domains", get(domains::list).post(domains::add))
        .route("/domains/{id}", get(domains::show))
        .route("/domains/{id}/verify", post(domains::verify_now))
        .route("/domains/{id}/delete", get(domains::delete_confirm).post(domains::delete))
        .route("/account", get(accounts::account))
        .route("/account/tokens", post(accounts::create_token))
        .route("/account/tokens/{id}/revoke", get(accounts::revoke_confirm).post(accounts::revoke_token))
        .route("/signin", get(accounts::sign_in_form).post(accounts::sign_in))
        .route("/signup", get(accounts::sign_up_form).post(accounts::sign_up))
        .route("/signup/confirm", get(accounts::confirm_form).post(accounts::confirm_sign_up))
        .route("/signout", post(accounts::sign_out))
        .route("/password/forgot", get(recovery::forgot_form).post(recovery::forgot))
        .route("/password/reset", get(recovery::reset_form).post(recovery::reset))
        .route("/account/password", post(recovery::change_password))
        .route("/account/email", post(recovery::change_email))
        .route("/account/email/confirm", get(recovery::email_confirm_form).post(recovery::confirm_email))
        .route("/static/style.css", get(style))
        .fallback(not_found)
        .layer(axum::middleware::from_fn(html_errors))
}

/// Paths of the JSON API and the service's machine endpoints: their errors stay theirs.
fn is_machine_path(path: &str) -> bool {
    path.starts_with("/api/") || path == "/api" || ["/healthz", "/ping", "/metrics", "/indexnow"].contains(&path)
}

/// Unknown paths: a 404 page for people, the API's own error under `/api/`.
async fn not_found(request: Request) -> Response {
    if is_machine_path(request.uri().path()) {
        return AppError::NotFound.into_response();
    }
    error_page(StatusCode::NOT_FOUND, "There is no page at this address.", request.headers())
}

/// Turns every error answer of a console route that is not a page (an extractor's plain-text
/// rejection, a bare 405) into an HTML page with the same status and the navigation.
async fn html_errors(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    let headers = request.headers().clone();
    let response = next.run(request).await;
    let status = response.status();
    let html =
        response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|c| c.starts_with("text/html"));
    if let Some(ErrorPage(message)) = response.extensions().get::<ErrorPage>().cloned()
        && status.as_u16() >= 400
        && !is_machine_path(&path)
    {
        let mut page = error_page(status, &message, &headers);
        for name in [ALLOW, RETRY_AFTER] {
            if let Some(v) = response.headers().get(&name) {
                page.headers_mut().insert(name, v.clone());
            }
        }
        return page;
    }
    if status.as_u16() < 400 || html || is_machine_path(&path) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_owned();
    let message = match status {
        StatusCode::NOT_FOUND => "There is no page at this address.".to_owned(),
        StatusCode::METHOD_NOT_ALLOWED => {
            let verb = if method == Method::POST { "a form sent to it" } else { "this kind of request" };
            format!("This address does not take {verb}.")
        }
        _ if text.is_empty() => "The request could not be handled.".to_owned(),
        _ => format!("The request could not be handled: {}", text.chars().take(300).collect::<String>()),
    };
    let mut page = error_page(status, &message, &headers);
    for name in [ALLOW, RETRY_AFTER] {
        if let Some(v) = parts.headers.get(&name) {
            page.headers_mut().insert(name, v.clone());
        }
    }
    page
}

/// An error page: the status's title, the message, the navigation of a signed-in visitor (a
/// session cookie is enough to show links that lead to sign-in when it is stale).
fn error_page(status: StatusCode, message: &str, headers: &HeaderMap) -> Response {
    let title = title_of(status);
    // The header of a signed-in visitor's pages, Sign out included: its form's token is the
    // session's, computed from the cookie alone.
    let csrf = session_cookie(headers).map(csrf::session_token);
    let mut response = (status, error_layout(title, message, csrf.as_deref())).into_response();
    response.extensions_mut().insert(ErrorPage(message.to_owned()));
    response
}

/// Marks an error page drawn without the request (a handler's [`ConsoleError`], a refused
/// form): `html_errors` draws it again with the request's navigation, so a 403 or 404 keeps
/// the header of every other page, Sign out included.
#[derive(Clone)]
pub(crate) struct ErrorPage(pub String);

fn title_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "Page not found",
        StatusCode::METHOD_NOT_ALLOWED => "Not possible here",
        StatusCode::FORBIDDEN => "Forbidden",
        StatusCode::TOO_MANY_REQUESTS => "Too many requests",
        StatusCode::PAYLOAD_TOO_LARGE => "Too large",
        s if s.is_client_error() => "Request not understood",
        _ => "Something went wrong",
    }
}

/// An error page; `csrf` is the signed-in visitor's form token (its navigation and Sign out).
fn error_layout(title: &str, message: &str, csrf: Option<&str>) -> Markup {
    let signed_in = csrf.is_some();
    let body = html! {
        h1 { (title) }
        p { (message) }
        @if signed_in { p { a href="/" { "Back to My sitemaps" } } } @else { p { a href="/signin" { "Sign in" } } }
    };
    layout_with(title, None, csrf, body)
}

async fn style() -> Response {
    let mut response = STYLE.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/css; charset=utf-8"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    response
}

/// The signed-in user of a page, with the CSRF token of its forms and a pending one-time
/// message. Without a valid session the page redirects to `/signin`.
pub(crate) struct Session {
    pub user: User,
    pub csrf: String,
    pub flash: Option<Flash>,
}

/// A one-time message: news, or an error that says what went wrong.
pub(crate) struct Flash {
    pub text: String,
    pub error: bool,
}

impl Session {
    pub fn actor(&self) -> Actor {
        Actor::from(&self.user)
    }
}

impl FromRequestParts<AppState> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let Some(token) = session_cookie(&parts.headers) else {
            return Err(Redirect::to("/signin").into_response());
        };
        match state.store.session_user(token, now()).await {
            Ok(Some(user)) => {
                let flash = crate::auth::cookie_value(&parts.headers, FLASH_COOKIE).and_then(decode_flash);
                Ok(Session { user, csrf: csrf::session_token(token), flash })
            }
            Ok(None) => Err(Redirect::to("/signin").into_response()),
            Err(e) => Err(ConsoleError(AppError::Unavailable(e)).into_response()),
        }
    }
}

fn decode_flash(value: &str) -> Option<Flash> {
    let text: String = url::form_urlencoded::parse(format!("m={value}").as_bytes()).next()?.1.into_owned();
    match text.strip_prefix('!') {
        Some(error) => Some(Flash { text: error.to_owned(), error: true }),
        None => (!text.is_empty()).then_some(Flash { text, error: false }),
    }
}

/// A redirect that shows `message` on the next page.
pub(crate) fn redirect_with(to: &str, message: &str, state: &AppState) -> Response {
    flash_redirect(to, message.trim_start_matches('!'), state)
}

/// A redirect that shows `message` as an error on the next page.
pub(crate) fn redirect_error(to: &str, message: &str, state: &AppState) -> Response {
    flash_redirect(to, &format!("!{message}"), state)
}

fn flash_redirect(to: &str, message: &str, state: &AppState) -> Response {
    let value: String = url::form_urlencoded::byte_serialize(message.as_bytes()).collect();
    let secure = if state.secure_cookies { "; Secure" } else { "" };
    let cookie = format!("{FLASH_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=60{secure}");
    let mut response = Redirect::to(to).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(SET_COOKIE, v);
    }
    response
}

/// A signed-in page: the layout around `body`, the flash cookie cleared once shown.
pub(crate) fn page(session: &Session, title: &str, body: Markup) -> Response {
    let markup = layout(title, Some(session), body);
    let mut response = markup.into_response();
    if session.flash.is_some() {
        let clear = HeaderValue::from_static("mapwright_flash=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
        response.headers_mut().insert(SET_COOKIE, clear);
    }
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A page without a session (sign-in, errors).
pub(crate) fn plain_page(title: &str, message: &str) -> Markup {
    layout(title, None, html! { h1 { (title) } p { (message) } p { a href="/" { "Back to My sitemaps" } } })
}

/// The HTML around every page: skip link, header with navigation, main, the stylesheet.
pub(crate) fn layout(title: &str, session: Option<&Session>, body: Markup) -> Markup {
    layout_with(title, session, None, body)
}

/// [`layout`]; `links`, the form token of a signed-in visitor whose session was not looked up
/// (error pages), shows the navigation and Sign out without a `Session`.
fn layout_with(title: &str, session: Option<&Session>, links: Option<&str>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · mapwright" }
                link rel="stylesheet" href="/static/style.css";
            }
            body {
                a class="skip" href="#main" { "Skip to content" }
                header {
                    a class="brand" href="/" { "mapwright" }
                    @if session.is_some() || links.is_some() {
                        nav aria-label="Main" {
                            a href="/" { "My sitemaps" }
                            a href="/sitemaps/add" { "Add a sitemap" }
                            a href="/domains" { "Domains" }
                            a href="/account" { "Account" }
                            @if let Some(s) = session {
                                form method="post" action="/signout" class="inline" {
                                    (csrf_field(&s.csrf))
                                    button type="submit" class="link" { "Sign out " span class="muted" { (s.user.email) } }
                                }
                            } @else if let Some(csrf) = links {
                                form method="post" action="/signout" class="inline" {
                                    (csrf_field(csrf))
                                    button type="submit" class="link" { "Sign out" }
                                }
                            }
                        }
                    }
                }
                main id="main" {
                    @if let Some(flash) = session.and_then(|s| s.flash.as_ref()) {
                        @if flash.error {
                            div class="error" role="alert" id="flash-error" { (flash.text) }
                        } @else {
                            div class="flash" role="status" { (flash.text) }
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// The hidden CSRF input of a form.
pub(crate) fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name=(csrf::FIELD) value=(token); }
}

/// A form that is a single button posting to `action`; `name` is its accessible name when the
/// visible label alone does not say which row it acts on ("Resubmit https://...").
pub(crate) fn button_form(action: &str, csrf: &str, label: &str, class: &str, name: Option<&str>) -> Markup {
    html! {
        form method="post" action=(action) class="inline" {
            (csrf_field(csrf))
            button type="submit" class=(class) aria-label=[name] { (label) }
        }
    }
}

/// "Next page" (and "First page") links of a keyset-paged list.
pub(crate) fn pager(base: &str, param: &str, current_after: i64, next_after: Option<i64>) -> Markup {
    let sep = if base.contains('?') { '&' } else { '?' };
    html! {
        @if current_after > 0 || next_after.is_some() {
            nav class="pager" aria-label="Pages" {
                @if current_after > 0 { a href=(base) { "First page" } }
                @if let Some(next) = next_after { a href=(format!("{base}{sep}{param}={next}")) { "Next page" } }
            }
        }
    }
}

/// "Previous" and "Next" links of a list paged by offset (lists the store returns whole and
/// small: a user's sites and tokens).
pub(crate) fn offset_pager(base: &str, param: &str, offset: usize, more: bool) -> Markup {
    let sep = if base.contains('?') { '&' } else { '?' };
    let page = PAGE as usize;
    html! {
        @if offset > 0 || more {
            nav class="pager" aria-label="Pages" {
                @if offset > 0 { a href=(format!("{base}{sep}{param}={}", offset.saturating_sub(page))) { "Previous page" } }
                @if more { a href=(format!("{base}{sep}{param}={}", offset + page)) { "Next page" } }
            }
        }
    }
}

/// A handler failure shown as an HTML page with the same status as the API's; no session is a
/// redirect to the sign-in page.
pub(crate) struct ConsoleError(pub AppError);

impl From<AppError> for ConsoleError {
    fn from(e: AppError) -> Self {
        ConsoleError(e)
    }
}

impl From<mapwright_store::Error> for ConsoleError {
    fn from(e: mapwright_store::Error) -> Self {
        ConsoleError(AppError::from(e))
    }
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        if matches!(self.0, AppError::Unauthorized) {
            return Redirect::to("/signin").into_response();
        }
        let message = match &self.0 {
            AppError::NotFound => "There is no such page, or it is not yours.".to_owned(),
            e => e.to_string(),
        };
        let plain = self.0.into_response();
        let status = plain.status();
        let mut response = (status, error_layout(title_of(status), &message, Some(""))).into_response();
        // Drawn again by `html_errors` with the request's session (Sign out's token).
        response.extensions_mut().insert(ErrorPage(message));
        for (name, value) in plain.headers() {
            if name == RETRY_AFTER {
                response.headers_mut().insert(name, value.clone());
            }
        }
        response
    }
}

/// The result of a console handler.
pub(crate) type PageResult = Result<Response, ConsoleError>;
