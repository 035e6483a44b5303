//! The API's own extractors: a JSON body, an id in the path, and query parameters, each
//! refusing bad input with a problem document in our words (never axum's plain-text
//! rejections), and the answers of unknown paths (404) and methods (405) under `/api/v1`; and
//! the client's address and network ([`ClientAddr`], [`ClientNet`]) that every face's rate
//! limits key on.

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::de::DeserializeOwned;

use crate::AppError;
use crate::error::problem;

/// A JSON request body: `content-type: application/json` (or `+json`) else 415, a body over
/// the limit 413, not JSON 400, JSON of the wrong shape 422.
pub(crate) struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        if !is_json(req.headers()) {
            return Err(AppError::UnsupportedMediaType(
                "send the body as JSON, with content-type: application/json".into(),
            ));
        }
        let body = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                AppError::PayloadTooLarge("the body is larger than this route reads".into())
            } else {
                AppError::BadRequest("the body could not be read".into())
            }
        })?;
        serde_json::from_slice(&body).map(JsonBody).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => AppError::Rejected(format!("the JSON body does not fit: {e}")),
            _ => AppError::BadRequest(format!("the body is not valid JSON: {e}")),
        })
    }
}

/// `application/json`, or any `application/*+json`, parameters (charset) allowed.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The `{id}` of the path: a positive 64-bit integer, else 400.
pub(crate) struct Id(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        let bad = || AppError::BadRequest("the id in the path must be a whole number from 1 to 2^63-1".into());
        let params = RawPathParams::from_request_parts(parts, state).await.map_err(|_| bad())?;
        let raw = params.iter().find(|(name, _)| *name == "id").map(|(_, value)| value).ok_or_else(bad)?;
        match raw.parse::<i64>() {
            Ok(id) if id >= 1 => Ok(Id(id)),
            _ => Err(bad()),
        }
    }
}

/// The query string's parameters, read one by one with the checks the spec states.
pub(crate) struct Params(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AppError> {
        let query = parts.uri.query().unwrap_or_default();
        Ok(Params(url::form_urlencoded::parse(query.as_bytes()).into_owned().collect()))
    }
}

impl Params {
    /// The value of `name`; given twice is an error (which one would count?).
    pub(crate) fn text(&self, name: &str) -> Result<Option<&str>, AppError> {
        let mut values = self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(AppError::BadRequest(format!("the parameter {name} is given more than once")));
        }
        Ok(first)
    }

    /// An integer parameter within `min..=max`.
    pub(crate) fn int(&self, name: &str, min: i64, max: i64) -> Result<Option<i64>, AppError> {
        let Some(text) = self.text(name)? else { return Ok(None) };
        match text.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(AppError::BadRequest(format!(
                "the parameter {name} must be a whole number from {min} to {max}, not {text:?}"
            ))),
        }
    }

    /// A boolean parameter: `true` or `false`.
    pub(crate) fn boolean(&self, name: &str) -> Result<Option<bool>, AppError> {
        match self.text(name)? {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => {
                Err(AppError::BadRequest(format!("the parameter {name} must be true or false, not {other:?}")))
            }
        }
    }
}

/// Any path under `/api/v1` that is not a route.
pub(crate) async fn no_such_route() -> Response {
    problem(StatusCode::NOT_FOUND, "no such API route: see /api/v1/openapi.yaml")
}

/// A route asked with a method it does not take (the router adds `Allow`).
pub(crate) async fn no_such_method() -> Response {
    problem(
        StatusCode::METHOD_NOT_ALLOWED,
        "this route does not take this method: the Allow header lists those it takes",
    )
}

/// The client's key ([`crate::ratelimit::client_key`]: an IPv4 address or an IPv6 /64), or "unknown" when the server was not given connection info (tests
/// that call the router directly).
pub(crate) struct ClientAddr(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let addr = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(a)| crate::ratelimit::client_key(a.ip()));
        Ok(ClientAddr(addr.unwrap_or_else(|| "unknown".into())))
    }
}

/// The client's key and its network's ([`crate::ratelimit::network_key`]: an IPv4 /24 or an
/// IPv6 /48), for the caps strangers share (sign-up); "unknown" for both without connection
/// info.
pub(crate) struct ClientNet(pub mapwright_store::Requester);

impl<S: Send + Sync> FromRequestParts<S> for ClientNet {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientNet(requester(parts)))
    }
}

/// The requester of `parts` (see [`ClientNet`]).
pub(crate) fn requester(parts: &Parts) -> mapwright_store::Requester {
    match parts.extensions.get::<ConnectInfo<SocketAddr>>() {
        Some(ConnectInfo(a)) => mapwright_store::Requester {
            client: crate::ratelimit::client_key(a.ip()),
            network: crate::ratelimit::network_key(a.ip()),
        },
        None => mapwright_store::Requester { client: "unknown".into(), network: "unknown".into() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(query: &str) -> Params {
        Params(url::form_urlencoded::parse(query.as_bytes()).into_owned().collect())
    }

    #[test]
    fn integers_and_booleans() {
        let p = params("limit=5&after=-1&flag=true&no=0&twice=1&twice=2");
        assert_eq!(p.int("limit", 1, 10).unwrap(), Some(5));
        assert_eq!(p.int("absent", 1, 10).unwrap(), None);
        assert!(p.int("limit", 6, 10).is_err());
        assert!(p.int("after", 0, 10).is_err());
        assert!(p.int("flag", 0, 10).is_err());
        assert_eq!(p.boolean("flag").unwrap(), Some(true));
        assert!(p.boolean("no").is_err());
        assert!(p.int("twice", 0, 10).is_err());
        assert!(params("limit=99999999999999999999").int("limit", 1, i64::MAX).is_err());
    }

    #[test]
    fn json_content_types() {
        let mut h = HeaderMap::new();
        assert!(!is_json(&h));
        for (value, ok) in [
            ("application/json", true),
            ("Application/JSON; charset=utf-8", true),
            ("application/problem+json", true),
            ("text/plain", false),
            ("application/x-www-form-urlencoded", false),
        ] {
            h.insert(CONTENT_TYPE, value.parse().unwrap());
            assert_eq!(is_json(&h), ok, "{value}");
        }
    }
}
