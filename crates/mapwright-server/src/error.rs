//! `AppError`: the one error of the handlers; logs the cause, shows the user a plain message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A handler failure, turned into a response with a status and a plain message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The request is malformed; the message says how.
    #[error("{0}")]
    BadRequest(String),
    /// No valid session or token.
    #[error("sign in first: no valid session cookie or API token")]
    Unauthorized,
    /// Wrong e-mail or password (one message for both, so it reveals no account).
    #[error("wrong e-mail or password")]
    BadCredentials,
    /// The resource does not exist or is not the user's.
    #[error("not found")]
    NotFound,
    /// Over a rate limit; retry after this many seconds.
    #[error("too many requests: retry in {0} seconds")]
    TooManyRequests(u64),
    /// Well-formed but refused by a rule of the service (site not verified, sitemap out of
    /// scope); the message says which and what to do.
    #[error("{0}")]
    Rejected(String),
    /// Already exists.
    #[error("{0} already exists")]
    Conflict(String),
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
            other if other.is_unavailable() => AppError::Unavailable(other),
            other => AppError::Internal(Box::new(other)),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = match &self {
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized | AppError::BadCredentials => StatusCode::UNAUTHORIZED,
            AppError::NotFound => StatusCode::NOT_FOUND,
            AppError::Conflict(_) => StatusCode::CONFLICT,
            AppError::Rejected(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            AppError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        match &self {
            AppError::Unavailable(cause) => tracing::error!(error = %cause, "store unavailable"),
            AppError::Internal(cause) => tracing::error!(error = %cause, "internal error"),
            _ => {}
        }
        let mut response = (status, format!("{self}\n")).into_response();
        let retry_after = match self {
            AppError::TooManyRequests(seconds) => Some(seconds),
            AppError::Unavailable(_) => Some(UNAVAILABLE_RETRY_SECONDS),
            _ => None,
        };
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}
