//! POSTing a webhook's delivery: one request through the service's [`Fetcher`], so a
//! delivery obeys every rule of the fetches (private networks refused unless allowed, in the
//! URL and after DNS resolution; proxies ignored then), with redirects not followed (a
//! receiver that moved must be re-registered: a redirect could otherwise turn the POST into a
//! GET elsewhere), a time limit of its own and the answer read only up to a cap.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};

use crate::{Error, Fetcher};

/// A delivery to send.
#[derive(Debug, Clone)]
pub struct Delivery<'a> {
    /// The receiver.
    pub url: &'a str,
    /// Extra headers (the signature, the delivery's id, ...), names in lower case.
    pub headers: &'a [(&'static str, String)],
    /// The JSON body, sent as `application/json`.
    pub body: String,
    /// The time for the whole request, the answer's first bytes included.
    pub timeout: Duration,
    /// Bytes of the answer read at most; the rest is not read.
    pub max_answer: usize,
}

/// What a receiver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The first bytes of the body (at most the delivery's `max_answer`).
    pub body: Vec<u8>,
}

/// Checks a receiver's URL as the fetcher would at a request (http or https; no private or
/// loopback IP literal unless private networks are allowed). A name is checked only when it
/// is resolved, at each delivery.
pub fn check_url(fetcher: &Fetcher, url: &str) -> Result<url::Url, Error> {
    fetcher.check_url(url)
}

/// POSTs the delivery once (no retry here: the caller's queue retries) and returns the answer,
/// whatever its status.
pub async fn post(fetcher: &Fetcher, delivery: Delivery<'_>) -> Result<Answer, Error> {
    let url = fetcher.check_url(delivery.url)?;
    let mut request = fetcher
        .manual_client()
        .post(url.clone())
        .timeout(delivery.timeout)
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in delivery.headers {
        let value = HeaderValue::from_str(value)
            .map_err(|e| Error::Http { url: url.to_string(), message: format!("header {name}: {e}") })?;
        request = request.header(HeaderName::from_static(name), value);
    }
    let config = fetcher.config().clone();
    let config = crate::Config { timeout: delivery.timeout, ..config };
    let mut response =
        request.body(delivery.body).send().await.map_err(|e| Error::from_reqwest(url.as_str(), &e, &config))?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while body.len() < delivery.max_answer {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = delivery.max_answer - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            // The status is the answer; a body cut short changes nothing.
            Ok(None) | Err(_) => break,
        }
    }
    Ok(Answer { status, body })
}
