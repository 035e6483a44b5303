//! The web console (issue 8): server-rendered pages for site owners, on the same store and
//! session cookie as the JSON API. Plain HTML forms with POST-redirect-GET, no JavaScript;
//! maud templates, checked at compile time. Every form carries a CSRF token ([`csrf`]); every
//! page of a site or sitemap goes through the store's actor filter, so another user's id is a
//! 404 page.
//!
//! Pages: `/` (the "My sitemaps" table, also at `/sitemaps`), `/sitemaps/add`,
//! `/sitemaps/{id}`, `/sites/{id}`, `/account`, `/signin`, `/signup`; `POST /signout`.

mod accounts;
pub mod checker;
pub mod csrf;
mod format;
mod sitemap_page;
mod sitemaps;
mod sites;

use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
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
        .route("/sitemaps/{id}/resubmit", post(sitemaps::resubmit))
        .route("/sitemaps/{id}/remove", get(sitemaps::remove_confirm).post(sitemaps::remove))
        .route("/sites/{id}", get(sites::show))
        .route("/sites/{id}/verify", post(sites::verify_now))
        .route("/sites/{id}/check", post(sites::check_now))
        .route("/account", get(accounts::account))
        .route("/account/tokens", post(accounts::create_token))
        .route("/account/tokens/{id}/revoke", post(accounts::revoke_token))
        .route("/signin", get(accounts::sign_in_form).post(accounts::sign_in))
        .route("/signup", get(accounts::sign_up_form).post(accounts::sign_up))
        .route("/signout", post(accounts::sign_out))
        .route("/static/style.css", get(style))
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
    pub flash: Option<String>,
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
                let flash = csrf::cookie_value(&parts.headers, FLASH_COOKIE).and_then(decode_flash);
                Ok(Session { user, csrf: csrf::session_token(token), flash })
            }
            Ok(None) => Err(Redirect::to("/signin").into_response()),
            Err(e) => Err(ConsoleError(AppError::Unavailable(e)).into_response()),
        }
    }
}

fn decode_flash(value: &str) -> Option<String> {
    let text: String = url::form_urlencoded::parse(format!("m={value}").as_bytes()).next()?.1.into_owned();
    (!text.is_empty()).then_some(text)
}

/// A redirect that shows `message` on the next page.
pub(crate) fn redirect_with(to: &str, message: &str, state: &AppState) -> Response {
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
                    @if let Some(s) = session {
                        nav aria-label="Main" {
                            a href="/" { "My sitemaps" }
                            a href="/sitemaps/add" { "Add a sitemap" }
                            a href="/account" { "Account" }
                            form method="post" action="/signout" class="inline" {
                                (csrf_field(&s.csrf))
                                button type="submit" class="link" { "Sign out " span class="muted" { (s.user.email) } }
                            }
                        }
                    }
                }
                main id="main" {
                    @if let Some(message) = session.and_then(|s| s.flash.as_deref()) {
                        div class="flash" role="status" { (message) }
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

/// A form that is a single button posting to `action`.
pub(crate) fn button_form(action: &str, csrf: &str, label: &str, class: &str) -> Markup {
    html! {
        form method="post" action=(action) class="inline" {
            (csrf_field(csrf))
            button type="submit" class=(class) { (label) }
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
        let message = self.0.to_string();
        let plain = self.0.into_response();
        let status = plain.status();
        let title = if status == StatusCode::NOT_FOUND { "Not found" } else { "Something went wrong" };
        let mut response = (status, plain_page(title, &message)).into_response();
        for (name, value) in plain.headers() {
            if name == axum::http::header::RETRY_AFTER {
                response.headers_mut().insert(name, value.clone());
            }
        }
        response
    }
}

/// The result of a console handler.
pub(crate) type PageResult = Result<Response, ConsoleError>;
