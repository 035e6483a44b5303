//! Accounts: sign-up, sign-in and sign-out with a session cookie, and API tokens (Bearer).

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use mapwright_store::{Actor, ApiToken, Requester, SignupRequest, User, secret};
use serde::{Deserialize, Serialize};

pub(crate) mod recovery;

use crate::extract::{ClientAddr, ClientNet};
use crate::extract::{Id, JsonBody};
use crate::hashing::Budget;
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
    if !method.is_safe() && cross_site(headers) {
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

/// The session cookie's value, if the request carries one.
pub(crate) fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    cookie_value(headers, SESSION_COOKIE)
}

/// A cookie's value by name.
pub(crate) fn cookie_value<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value)
}

/// `Sec-Fetch-Site: cross-site`, or an `Origin` whose host is not the `Host` asked for.
/// The API's `CurrentUser` and the console's forms (`console::csrf`) both ask it: it lives
/// here, below both, so that the console depends on this module and never the reverse.
pub(crate) fn cross_site(headers: &HeaderMap) -> bool {
    let header = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    if header("sec-fetch-site").is_some_and(|s| s.eq_ignore_ascii_case("cross-site")) {
        return true;
    }
    match (header(ORIGIN.as_str()), header(HOST.as_str())) {
        (Some("null"), _) => true,
        (Some(origin), Some(host)) => match url::Url::parse(origin) {
            Ok(o) => {
                let port = o.port().map(|p| format!(":{p}")).unwrap_or_default();
                !format!("{}{port}", o.host_str().unwrap_or_default()).eq_ignore_ascii_case(host)
            }
            Err(_) => true,
        },
        _ => false,
    }
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
/// account; a password of 10 to 1024 characters, not all blank. The address must be one mail
/// can go to, as lettre's parser of RFC 5321 addresses (`lettre::Address`) reads it: `a<b>@x`,
/// `a,b@x` or `a..b@x` are refused here, before they count toward any cap.
fn check_credentials(c: &Credentials) -> Result<String, AppError> {
    let email = check_email(&c.email)?;
    match crate::password_problem(&c.password) {
        Some(problem) => Err(AppError::BadRequest(problem.into())),
        None => Ok(email),
    }
}

/// An e-mail address given for an account (sign-up, a password reset, a change of address) in
/// its one normal form, or why mail cannot go to it (see [`check_credentials`]).
pub(crate) fn check_email(given: &str) -> Result<String, AppError> {
    let email = given.trim_matches(BLANKS);
    let parts = email.split_once('@');
    let valid = given.chars().count() <= 254
        && !email.contains(BLANKS)
        && parts.is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty() && !domain.contains('@'));
    if !valid {
        return Err(AppError::BadRequest("the e-mail address is not valid: give name@domain".into()));
    }
    let email = mapwright_store::normalize_email(email).map_err(|e| AppError::BadRequest(e.to_string()))?;
    if email.parse::<lettre::Address>().is_err() {
        return Err(AppError::BadRequest(
            "the e-mail address is not one mail can be sent to: give name@domain, the name of letters, digits and \
             . _ + - (no two dots in a row, none at either end)"
                .into(),
        ));
    }
    Ok(email)
}

async fn signed_in(state: &AppState, user: User, status: StatusCode) -> Result<Response, AppError> {
    let token = state.store.create_session(user.id, now(), SESSION_SECONDS).await?;
    let mut response = (status, Json(user)).into_response();
    response.headers_mut().insert(SET_COOKIE, cookie(state, &token, SESSION_SECONDS));
    Ok(response)
}

/// How long a sign-up's confirmation link holds: a day.
pub const SIGN_UP_LINK_SECONDS: i64 = 24 * 3600;

/// What every sign-up request answers, whether the address has an account or not: only the
/// mail (a link, or a note that the account exists) differs, and only the owner reads it.
pub(crate) const SIGN_UP_SENT: &str = "If this address can be used for a new account, a link to confirm it is on its way \
there; it holds for 24 hours. Follow it and give the same password to finish signing up.";

/// `POST /api/v1/signup` answer.
#[derive(Serialize)]
pub(crate) struct SignUpAnswer {
    message: &'static str,
}

/// `POST /api/v1/signup` `{"email", "password"}`: 202, the same for every address (see
/// [`request_sign_up`]); the account comes with `POST /api/v1/signup/confirm`.
pub(crate) async fn sign_up(
    State(state): State<AppState>,
    ClientNet(client): ClientNet,
    JsonBody(c): JsonBody<Credentials>,
) -> Result<(StatusCode, Json<SignUpAnswer>), AppError> {
    request_sign_up(&state, &client, c).await?;
    Ok((StatusCode::ACCEPTED, Json(SignUpAnswer { message: SIGN_UP_SENT })))
}

/// Whether this request may mail `email` a link (sign-up, a password reset, a change of
/// address): counted per requesting network and address and per network (nobody floods an
/// inbox or uses up another's share), then asked of the outbound gate (the address's inbox has
/// one budget for every kind of the service's mail, across users and processes). `false`: the
/// caller answers the same as if mailed, and stores and sends nothing. The one home of these
/// checks, so no account mail skips one.
pub(crate) async fn may_mail(state: &AppState, from: &Requester, email: &str) -> Result<bool, AppError> {
    let (store, limits) = (&*state.store, &state.limits);
    let pair = format!("{} {email}", from.network);
    if limits.mail_per_network_address.count(store, &pair).await?.is_some()
        || limits.mail_per_network.count(store, &from.network).await?.is_some()
    {
        tracing::info!(email, network = %from.network, "account mail neither stored nor sent: its network had its share this hour");
        return Ok(false);
    }
    if let Err(held) = state.gate.ask(crate::outbound::Target::Mail(email)).await {
        tracing::info!(email, %held, "account mail neither stored nor sent: held by the outbound gate");
        return Ok(false);
    }
    Ok(true)
}

/// Checks sign-up credentials and mails the address (the API's and the console's sign-up),
/// under the per-client limit, hashing in the bounded pool. The answer is the same whether the
/// address has an account or not, and costs the same (the hash is made either way, the mail
/// goes in the background): a free address gets a link that makes the account, a taken one a
/// note to its owner. So sign-up tells a stranger nothing about who has an account, and
/// signing in with the password of such a request fails alike for both until the link is
/// followed. Mail is limited silently per requesting network and address, and per network, so
/// nobody can flood an inbox through it nor use up the mail of someone else's address; a
/// request past its share stores nothing, so it replaces no link either (and a link is only
/// ever replaced by a request from the same network: see `Store::request_signup`). Never an
/// admin: `serve --admin` and `serve admin create` make those.
pub(crate) async fn request_sign_up(state: &AppState, from: &Requester, c: Credentials) -> Result<(), AppError> {
    let Some(mailer) = state.mail.clone() else {
        return Err(AppError::Forbidden(
            "this server takes no sign-ups: its operator makes the accounts (mapwright serve user create)".into(),
        ));
    };
    // Bad input first: it costs nothing, so it counts toward nothing.
    let email = check_credentials(&c)?;
    let limits = &state.limits;
    limits.sign_up_per_client.check(&*state.store, &from.client).await?;
    let password = c.password;
    let hash = state.hashing.run(Budget::SignUp, move || secret::hash_password(&password)).await??;
    let store = &*state.store;
    // A place for the mail first (the same answer for every address: it depends on no
    // account): a request stored is a request mailed.
    let slot = mailer.reserve()?;
    if !may_mail(state, from, &email).await? {
        return Ok(());
    }
    let request = store.request_signup(&email, &hash, from, now(), SIGN_UP_LINK_SECONDS).await?;
    let base = slot.public_url().to_owned();
    match request {
        SignupRequest::Pending(token) => {
            let body = format!(
                "Someone, probably you, asked for a mapwright account with this address at {base}.\n\n\
                 To make it, open this link within 24 hours and give the password you chose:\n\n\
                 {base}/signup/confirm?token={token}\n\n\
                 If it was not you, ignore this message: no account is made without the link.\n"
            );
            slot.send(email, "Confirm your mapwright account", body);
        }
        SignupRequest::Taken => {
            let body = format!(
                "Someone, probably you, asked to sign up at {base} with this address, which has an \
                 account already. Nothing was changed.\n\n\
                 To use your account, sign in at {base}/signin\n\n\
                 If it was not you, ignore this message: your account and password are as they were.\n"
            );
            slot.send(email, "You already have a mapwright account", body);
        }
    }
    Ok(())
}

/// `POST /api/v1/signup/confirm` body: the token of the mailed link and the sign-up's password.
#[derive(Deserialize)]
pub(crate) struct Confirmation {
    pub(crate) token: String,
    pub(crate) password: String,
}

/// `POST /api/v1/signup/confirm` `{"token", "password"}`: 201 with the new user and a session.
pub(crate) async fn confirm_sign_up(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    JsonBody(c): JsonBody<Confirmation>,
) -> Result<Response, AppError> {
    let user = confirm(&state, &client, c).await?;
    signed_in(&state, user, StatusCode::CREATED).await
}

/// Makes the account of a pending sign-up: its link's token and the password given at
/// sign-up (so that a stranger who asked first for someone else's address, with a password of
/// their own, cannot have the owner confirm an account the stranger can sign in to).
pub(crate) async fn confirm(state: &AppState, client: &str, c: Confirmation) -> Result<User, AppError> {
    state.limits.sign_in_per_client.check(&*state.store, client).await?;
    let invalid = || {
        AppError::BadRequest(
            "this confirmation link is not valid: it was used already, replaced by a newer sign-up, or is more than \
             24 hours old; sign up again"
                .into(),
        )
    };
    let token = c.token.trim();
    if token.is_empty() || token.len() > 128 {
        return Err(invalid());
    }
    if c.password.len() > 4 * 1024 {
        return Err(AppError::BadRequest("the password is longer than 1024 characters".into()));
    }
    let Some((_, hash)) = state.store.pending_signup(token, now()).await? else { return Err(invalid()) };
    let password = c.password;
    if !state.hashing.run(Budget::SignIn, move || secret::verify_password(&password, &hash)).await? {
        return Err(AppError::BadRequest(
            "this is not the password given when signing up: give that one, or sign up again".into(),
        ));
    }
    state.store.confirm_signup(token, now()).await?.ok_or_else(invalid)
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
    limits.sign_in_per_client.check(&*state.store, client).await?;
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
        .run(Budget::SignIn, move || {
            secret::verify_password(&password, hash.as_deref().unwrap_or_else(|| dummy_hash()))
        })
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

// Alike on purpose: api/account.rs's `request_reset` has this frame (see there).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_checks() {
        let mut h = HeaderMap::new();
        assert!(!cross_site(&h));
        h.insert(HOST, "127.0.0.1:8080".parse().unwrap());
        h.insert(ORIGIN, "http://127.0.0.1:8080".parse().unwrap());
        assert!(!cross_site(&h));
        h.insert(ORIGIN, "http://evil.example".parse().unwrap());
        assert!(cross_site(&h));
        h.insert(ORIGIN, "null".parse().unwrap());
        assert!(cross_site(&h));
        h.remove(ORIGIN);
        h.insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert!(cross_site(&h));
        h.insert("sec-fetch-site", "same-origin".parse().unwrap());
        assert!(!cross_site(&h));
    }
}
