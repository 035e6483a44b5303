//! Cross-site request forgery protection of the console's forms.
//!
//! Signed in, the token is a synchronizer token derived from the session: HMAC-SHA256 keyed
//! with a fixed label over the session's secret token. Only a holder of the session cookie
//! (HttpOnly, so no script can read it) can compute it, every server process computes the same
//! one without shared state, and it reveals nothing about the session. Before sign-in (the
//! sign-in and sign-up forms) it is a double-submit token: a random value in its own cookie
//! that the form must repeat. On top, a request whose `Sec-Fetch-Site` says cross-site, or
//! whose `Origin` names another host than `Host`, is refused whatever its token.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use serde::de::DeserializeOwned;
use sha2::Sha256;

use crate::AppState;
use crate::auth::{cookie_value, cross_site, session_cookie};

/// The hidden field of every state-changing form.
pub const FIELD: &str = "csrf";

/// The cookie of the pre-session (double-submit) token.
pub(crate) const PRE_SESSION_COOKIE: &str = "mapwright_csrf";

/// Largest form body read (a sitemap URL or a token name fits many times).
const MAX_FORM: usize = 16 * 1024;

/// The token of the forms of a session.
pub(crate) fn session_token(session: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(b"mapwright console csrf v1").expect("any key length");
    mac.update(session.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The pre-session token from the request's cookie, if any.
pub(crate) fn pre_session_token(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, PRE_SESSION_COOKIE).filter(|v| v.len() == 64).map(str::to_owned)
}

/// A fresh pre-session token and the cookie carrying it.
pub(crate) fn new_pre_session(secure: bool) -> (String, HeaderValue) {
    let token = hex::encode(rand::random::<[u8; 32]>());
    let secure = if secure { "; Secure" } else { "" };
    let cookie = format!("{PRE_SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=86400{secure}");
    (token, HeaderValue::from_str(&cookie).expect("hex cookie"))
}

/// A form body that passed the CSRF checks, deserialized into `T` (the `csrf` field ignored).
pub(crate) struct CsrfForm<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for CsrfForm<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Response> {
        if cross_site(req.headers()) {
            return Err(forbidden("this form was sent from another site"));
        }
        let mut expected = Vec::new();
        let mut signed_in = false;
        if let Some(session) = session_cookie(req.headers()) {
            expected.push(session_token(session));
            // A store that cannot answer counts as signed in: only the session's token then.
            signed_in = !matches!(state.store.session_user(session, crate::now()).await, Ok(None));
        }
        // Once signed in, only the session's token: a pre-session cookie can be planted by
        // whoever controls a sibling subdomain or a network path, so it must not open the
        // forms of a signed-in user. Before (or with an expired session), the double submit.
        if !signed_in {
            expected.extend(pre_session_token(req.headers()));
        }
        let body = axum::body::to_bytes(req.into_body(), MAX_FORM)
            .await
            .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "the form is too large\n").into_response())?;
        if !token_matches(&body, &expected) {
            return Err(forbidden(
                "the form's security token is missing or out of date: reload the page and try again",
            ));
        }
        serde_urlencoded::from_bytes(&body)
            .map(CsrfForm)
            .map_err(|e| (StatusCode::BAD_REQUEST, format!("the form is malformed: {e}\n")).into_response())
    }
}

fn token_matches(body: &Bytes, expected: &[String]) -> bool {
    let sent = url::form_urlencoded::parse(body).find(|(k, _)| k == FIELD).map(|(_, v)| v.into_owned());
    let Some(sent) = sent else { return false };
    expected.iter().any(|e| constant_time_eq(e.as_bytes(), sent.as_bytes()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn forbidden(why: &str) -> Response {
    let mut response = (StatusCode::FORBIDDEN, super::plain_page("Forbidden", why)).into_response();
    // With the visitor's navigation once the console's error layer draws it again.
    response.extensions_mut().insert(super::ErrorPage(why.to_owned()));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(session_token("abc"), session_token("abc"));
        assert_ne!(session_token("abc"), session_token("abd"));
        let body = Bytes::from_static(b"url=x&csrf=tok");
        assert!(token_matches(&body, &["tok".into()]));
        assert!(!token_matches(&body, &["other".into()]));
        assert!(!token_matches(&Bytes::from_static(b"url=x"), &["tok".into()]));
        assert!(!token_matches(&Bytes::from_static(b"csrf="), &[]));
    }
}
