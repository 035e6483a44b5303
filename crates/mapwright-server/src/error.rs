//! `AppError`: the one error of the handlers; logs the cause and answers an RFC 9457 problem
//! (`application/problem+json`: type, title, status, detail), the same shape for every error
//! of every API route, framework rejections included (see [`problem`]).

use axum::Json;
use axum::http::header::{CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The media type of every error answer of the API.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// A handler failure, turned into a response with a status and a problem document whose
/// `detail` is the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The request is malformed (a parameter, the body's syntax); the message says how.
    #[error("{0}")]
    BadRequest(String),
    /// No valid session or token.
    #[error("sign in first: no valid session cookie or API token")]
    Unauthorized,
    /// Wrong e-mail or password (one message for both, so it reveals no account).
    #[error("wrong e-mail or password")]
    BadCredentials,
    /// Understood and authenticated, but refused (a cookie-authenticated request sent from
    /// another site); the message says why.
    #[error("{0}")]
    Forbidden(String),
    /// The resource does not exist or is not the user's.
    #[error("not found")]
    NotFound,
    /// Over a rate limit; retry after this many seconds.
    #[error("too many requests: retry in {0} seconds")]
    TooManyRequests(u64),
    /// Well-formed but refused: a JSON body of the wrong shape, or a rule of the service (site
    /// not verified, sitemap out of scope); the message says which and what to do.
    #[error("{0}")]
    Rejected(String),
    /// The body is not in a media type the route takes; the message names the right one.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The body is larger than the route reads.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// Already exists.
    #[error("{0} already exists")]
    Conflict(String),
    /// Refused while something else is under way (a check of the same site); the message says
    /// what. 409, as for a conflict.
    #[error("{0}")]
    Busy(String),
    /// The service has no room for this now (memory for request bodies, the mail queue); the
    /// message says what, the seconds are Retry-After. 503: the caller may try again.
    #[error("{0}")]
    Overloaded(String, u64),
    /// The database is unreachable.
    #[error("the service is unavailable")]
    Unavailable(#[source] mapwright_store::Error),
    /// Anything else: logged, shown as a generic message.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Retry-After of a 503 while the database is unreachable.
const UNAVAILABLE_RETRY_SECONDS: u64 = 5;

impl From<mapwright_store::Error> for AppError {
    fn from(err: mapwright_store::Error) -> Self {
        match err {
            mapwright_store::Error::NotFound { .. } => AppError::NotFound,
            mapwright_store::Error::Conflict(what) => AppError::Conflict(what),
            mapwright_store::Error::Quota(why) => AppError::Rejected(why),
            mapwright_store::Error::Forbidden(why) => AppError::Forbidden(why),
            mapwright_store::Error::Refused(why) => AppError::Rejected(why),
            mapwright_store::Error::InvalidEmail(why) => AppError::BadRequest(why.to_string()),
            other if other.is_unavailable() => AppError::Unavailable(other),
            other => AppError::Internal(Box::new(other)),
        }
    }
}

impl AppError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized | AppError::BadCredentials => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::NotFound => StatusCode::NOT_FOUND,
            AppError::Conflict(_) | AppError::Busy(_) => StatusCode::CONFLICT,
            AppError::Rejected(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AppError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            AppError::Unavailable(_) | AppError::Overloaded(..) => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match &self {
            AppError::Unavailable(cause) => tracing::error!(error = %cause, "store unavailable"),
            AppError::Internal(cause) => tracing::error!(error = %cause, "internal error"),
            _ => {}
        }
        let mut response = problem(self.status(), &self.to_string());
        let retry_after = match self {
            AppError::TooManyRequests(seconds) => Some(seconds),
            AppError::Unavailable(_) => Some(UNAVAILABLE_RETRY_SECONDS),
            AppError::Overloaded(_, seconds) => Some(seconds.max(1)),
            _ => None,
        };
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(RETRY_AFTER, seconds.into());
        }
        response
    }
}

/// An RFC 9457 problem document. `type` is `about:blank`: the status says what kind of
/// problem it is, `title` is the status's reason phrase, `detail` the sentence for this case.
#[derive(Serialize)]
struct Problem<'a> {
    r#type: &'static str,
    title: &'static str,
    status: u16,
    detail: &'a str,
}

/// The problem answer of `status` with this `detail`.
pub fn problem(status: StatusCode, detail: &str) -> Response {
    let body = Problem {
        r#type: "about:blank",
        title: status.canonical_reason().unwrap_or("Error"),
        status: status.as_u16(),
        detail: detail.trim_end(),
    };
    let mut response = (status, Json(body)).into_response();
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    response
}
