//! Accounts: sign-up, sign-in and sign-out with a session cookie, and API tokens (Bearer).

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use mapwright_store::{Actor, ApiToken, User, secret};
use serde::{Deserialize, Serialize};

use crate::api::extract::{Id, JsonBody};
use crate::ping::ClientAddr;
use crate::{AppError, AppState, SESSION_COOKIE, SESSION_SECONDS, now};

/// Sign-up and sign-in body.
#[derive(Deserialize)]
pub(crate) struct Credentials {
    pub(crate) email: String,
    pub(crate) password: String,
}

/// The signed-in user, from the session cookie or an `Authorization: Bearer` API token.
pub(crate) struct CurrentUser(pub User);

impl FromRequestParts<AppState> for CurrentUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        if let Some(token) = bearer(&parts.headers) {
            let user = state.store.api_token_user(token, now()).await?;
            return user.map(CurrentUser).ok_or(AppError::Unauthorized);
        }
        if let Some(token) = session_cookie(&parts.headers) {
            same_site(&parts.method, &parts.headers)?;
            let user = state.store.session_user(token, now()).await?;
            return user.map(CurrentUser).ok_or(AppError::Unauthorized);
        }
        Err(AppError::Unauthorized)
    }
}

/// A cookie rides along with requests other sites make: a request that changes something
/// with it must not say it comes from another site (`Origin`, `Sec-Fetch-Site`), as the
/// console's forms check. Bearer tokens never ride along, so they need no such check.
fn same_site(method: &Method, headers: &HeaderMap) -> Result<(), AppError> {
    if !method.is_safe() && crate::console::csrf::cross_site(headers) {
        return Err(AppError::Forbidden(
            "a request signed in by session cookie must come from this site (its Origin or \
             Sec-Fetch-Site names another): from elsewhere, use an API token"
                .into(),
        ));
    }
    Ok(())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub(crate) fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value)
}

pub(crate) fn cookie(state: &AppState, value: &str, max_age: i64) -> HeaderValue {
    let secure = if state.secure_cookies { "; Secure" } else { "" };
    let text = format!("{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}");
    HeaderValue::from_str(&text).expect("cookie of hex and ASCII")
}

/// The blanks trimmed around an e-mail address or a token name: exactly those the patterns of
/// `openapi.yaml` allow there, so that the spec and the checks agree to the character.
const BLANKS: [char; 4] = [' ', '\t', '\r', '\n'];

/// The credentials' e-mail in its one normal form (`local@domain`, both parts non-empty, no
/// blank inside and one `@`, at most 254 characters, blanks around trimmed; then lower case,
/// as `mapwright_store::normalize_email` compares it everywhere), or why they cannot make an
/// account; a password of 10 to 1024 characters, not all blank.
fn check_credentials(c: &Credentials) -> Result<String, AppError> {
    let email = c.email.trim_matches(BLANKS);
    let parts = email.split_once('@');
    let valid = c.email.chars().count() <= 254
        && !email.contains(BLANKS)
        && parts.is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty() && !domain.contains('@'));
    if !valid {
        return Err(AppError::BadRequest("the e-mail address is not valid: give name@domain".into()));
    }
    let email = mapwright_store::normalize_email(email).map_err(|e| AppError::BadRequest(e.to_string()))?;
    let length = c.password.chars().count();
    if length < 10 {
        return Err(AppError::BadRequest("the password needs at least 10 characters".into()));
    }
    if c.password.trim().is_empty() {
        return Err(AppError::BadRequest("the password needs more than blank space".into()));
    }
    if length > 1024 {
        return Err(AppError::BadRequest("the password is longer than 1024 characters".into()));
    }
    Ok(email)
}

async fn signed_in(state: &AppState, user: User, status: StatusCode) -> Result<Response, AppError> {
    let token = state.store.create_session(user.id, now(), SESSION_SECONDS).await?;
    let mut response = (status, Json(user)).into_response();
    response.headers_mut().insert(SET_COOKIE, cookie(state, &token, SESSION_SECONDS));
    Ok(response)
}

/// `POST /api/v1/signup` `{"email", "password"}`: 201 with the user and a session cookie.
pub(crate) async fn sign_up(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    JsonBody(c): JsonBody<Credentials>,
) -> Result<Response, AppError> {
    let user = register(&state, &client, c).await?;
    signed_in(&state, user, StatusCode::CREATED).await
}

/// Checks sign-up credentials and creates the user (the API's and the console's sign-up),
/// under the per-client limit, hashing in the bounded pool. Never an admin: an anonymous
/// sign-up must not be able to claim an address named by `serve --admin` before its owner.
pub(crate) async fn register(state: &AppState, client: &str, c: Credentials) -> Result<User, AppError> {
    state.limits.sign_up_per_client.check(client).map_err(AppError::TooManyRequests)?;
    let email = check_credentials(&c)?;
    let password = c.password;
    let hash = state.hashing.run(move || secret::hash_password(&password)).await??;
    Ok(state.store.create_user(&email, &hash, false, now()).await?)
}

/// `POST /api/v1/signin` `{"email", "password"}`: 200 with the user and a session cookie.
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    JsonBody(c): JsonBody<Credentials>,
) -> Result<Response, AppError> {
    let user = authenticate(&state, &client, c).await?;
    signed_in(&state, user, StatusCode::OK).await
}

/// Checks sign-in credentials under the limits (the API's and the console's sign-in): per
/// client address, and per address and e-mail together with a growing wait after a few
/// failures, so a stranger's guesses never lock the owner out from elsewhere. An e-mail that
/// fails from many addresses takes the slow path: each attempt waits a second first.
pub(crate) async fn authenticate(state: &AppState, client: &str, c: Credentials) -> Result<User, AppError> {
    let email = mapwright_store::normalize_email(&c.email).unwrap_or_else(|_| c.email.trim().to_lowercase());
    let limits = &state.limits;
    limits.sign_in_per_client.check(client).map_err(AppError::TooManyRequests)?;
    let pair = format!("{client} {email}");
    limits.sign_in_failures.check(&pair).map_err(AppError::TooManyRequests)?;
    if limits.sign_in_failures_per_email.failures(&email) >= SLOW_PATH_AFTER {
        tokio::time::sleep(SLOW_PATH_DELAY).await;
    }
    let found = state.store.user_credentials(&email).await?;
    // An unknown address still costs one argon2 verification, so timing reveals no account.
    let (user, hash) = match found {
        Some((user, hash)) => (Some(user), Some(hash)),
        None => (None, None),
    };
    let password = c.password;
    let ok = state
        .hashing
        .run(move || secret::verify_password(&password, hash.as_deref().unwrap_or_else(|| dummy_hash())))
        .await?;
    match user {
        Some(user) if ok => {
            limits.sign_in_failures.succeeded(&pair);
            Ok(user)
        }
        _ => {
            limits.sign_in_failures.failed(&pair);
            limits.sign_in_failures_per_email.failed(&email);
            Err(AppError::BadCredentials)
        }
    }
}

/// Failures of one e-mail (from any addresses) after which its sign-ins take the slow path.
const SLOW_PATH_AFTER: u32 = 20;

/// The pause of the slow path.
const SLOW_PATH_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

/// An argon2id hash of a random password nobody knows, made once with the same parameters
/// as real hashes so that checking it costs the same (made in the hashing pool, like them).
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| secret::hash_password(&secret::new_token()).unwrap_or_default())
}

/// `POST /api/v1/signout`: ends the session and clears the cookie.
pub(crate) async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, AppError> {
    if let Some(token) = session_cookie(&headers) {
        same_site(&Method::POST, &headers)?;
        state.store.delete_session(token).await?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(SET_COOKIE, cookie(&state, "", 0));
    Ok(response)
}

/// `GET /api/v1/me`: the signed-in user.
pub(crate) async fn me(CurrentUser(user): CurrentUser) -> Json<User> {
    Json(user)
}

/// `POST /api/v1/tokens` body.
#[derive(Deserialize)]
pub(crate) struct NewToken {
    name: String,
}

/// A new token with its secret, shown this once.
#[derive(Serialize)]
pub(crate) struct CreatedToken {
    #[serde(flatten)]
    token: ApiToken,
    secret: String,
}

/// `POST /api/v1/tokens` `{"name"}`: 201 with the token and its secret.
pub(crate) async fn create_token(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    JsonBody(body): JsonBody<NewToken>,
) -> Result<(StatusCode, Json<CreatedToken>), AppError> {
    let name = body.name.trim_matches(BLANKS);
    if name.is_empty() || body.name.chars().count() > 100 {
        return Err(AppError::BadRequest("a token needs a name of 1 to 100 characters, not only blanks".into()));
    }
    let (token, secret) = state.store.create_api_token(Actor::from(&user), name, now()).await?;
    Ok((StatusCode::CREATED, Json(CreatedToken { token, secret })))
}

/// `GET /api/v1/tokens`: the user's tokens, without secrets.
pub(crate) async fn list_tokens(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Json<Vec<ApiToken>>, AppError> {
    Ok(Json(state.store.list_api_tokens(Actor::from(&user)).await?))
}

/// `DELETE /api/v1/tokens/{id}`: revokes a token of the user.
pub(crate) async fn revoke_token(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    state.store.revoke_api_token(Actor::from(&user), id, now()).await?;
    Ok(StatusCode::NO_CONTENT)
}
