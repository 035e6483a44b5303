//! The receiving side of IndexNow (<https://www.indexnow.org/documentation>), as the engines
//! that took over from the sitemap ping expose it: `GET /indexnow?url=&key=[&keyLocation=]`
//! and `POST /indexnow` with `{"host", "key", "keyLocation"?, "urlList"}`.
//!
//! The answers are the protocol's: 400 for a malformed request; 422 when a URL is not on the
//! host (or outside the key file's folder), or the key does not match the protocol's schema
//! (8 to 128 of `a-z A-Z 0-9 -`), or keyLocation is on another host; 429 over a rate limit
//! (per client address and per host); 403 when the key file is missing or does not hold the
//! key; 503 with Retry-After when the bodies past 64 KiB being received hold the memory they may
//! ([`LARGE_BODY_BUDGET`]; the client's limit is counted before any body is read); 200 with how many URLs were stored and how many were refused and why (the site's URL
//! quota, an origin without a verified site); 422 too when none could be stored.
//!
//! What is stored: only URLs of an origin that some user verified. Their URLs enter each such
//! site's URL store as changed now ([`Store::record_pushed_urls`]), so they lead its crawl
//! frontier. For a host no verified site has, the service fetches nothing and stores nothing
//! and answers 202 ("received, key not validated"): storing pushes for unknown hosts would
//! let anyone fill the database, and fetching their key files would make the service fetch
//! any host on request. A submission for a verified site, accepted or refused for its key, is
//! recorded for the site's overview (when, how many URLs, the key file, why refused), each
//! site keeping its newest [`MAX_INDEXNOW_RECEIPTS`] only.
//!
//! [`MAX_INDEXNOW_RECEIPTS`]: mapwright_store::MAX_INDEXNOW_RECEIPTS
//!
//! [`Store::record_pushed_urls`]: mapwright_store::Store::record_pushed_urls

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_LENGTH;
use axum::response::{IntoResponse, Response};
use mapwright_fetch::Fetched;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

mod check;
use check::MAX_URL_LEN;
pub use check::{Checked, MAX_URLS, Refusal, Submission};

use crate::extract::ClientAddr;
use crate::{AppError, AppState, RateLimiter, now};

/// A good key file is trusted this long per (key file, key): a burst of POSTs costs one fetch.
const GOOD_KEY_TTL: Duration = Duration::from_secs(600);

/// A bad one this long, so a fixed key file is seen soon while a flood of bad keys still
/// costs one fetch a minute.
const BAD_KEY_TTL: Duration = Duration::from_secs(60);

/// Past this many cached keys, expired ones are dropped.
const CACHE_SWEEP_AT: usize = 10_000;

/// Bytes of a key file read: a key is at most 128.
const KEY_FILE_LIMIT: usize = 1024;

/// The IndexNow receiver's state: rate limits and the key-file cache.
#[derive(Debug)]
pub struct IndexNow {
    /// Submissions per client address.
    pub per_client: RateLimiter,
    /// Submissions per host named.
    pub per_host: RateLimiter,
    /// (key file URL, key) -> (checked at, good).
    keys: Mutex<HashMap<(String, String), (Instant, bool)>>,
    /// The memory large bodies may hold at once, a permit per byte ([`LARGE_BODY_BUDGET`]).
    large_bodies: Arc<Semaphore>,
}

impl IndexNow {
    /// At most `per_client` submissions a minute from one address and `per_host` for one host.
    pub fn new(per_client: u32, per_host: u32) -> Self {
        let minute = Duration::from_secs(60);
        IndexNow {
            per_client: RateLimiter::new(per_client, minute),
            per_host: RateLimiter::new(per_host, minute),
            keys: Mutex::new(HashMap::new()),
            large_bodies: Arc::new(Semaphore::new(LARGE_BODY_BUDGET)),
        }
    }

    /// The same receiver with `bytes` for large bodies at once instead of [`LARGE_BODY_BUDGET`].
    pub fn with_body_budget(mut self, bytes: usize) -> Self {
        self.large_bodies = Arc::new(Semaphore::new(bytes));
        self
    }

    /// Room for a body of `bytes`: none needed within the usual limit, a share of
    /// [`LARGE_BODY_BUDGET`] for a larger one (kept until the permit drops), or why not.
    fn room_for(&self, bytes: usize) -> Result<Option<OwnedSemaphorePermit>, AppError> {
        if bytes > BODY_LIMIT {
            return Err(AppError::PayloadTooLarge(too_large()));
        }
        if bytes <= crate::MAX_BODY {
            return Ok(None);
        }
        let permits = u32::try_from(bytes).unwrap_or(u32::MAX);
        match self.large_bodies.clone().try_acquire_many_owned(permits) {
            Ok(permit) => Ok(Some(permit)),
            Err(_) => Err(AppError::Overloaded(
                "the service is receiving as many large IndexNow bodies as it holds at once: try again shortly".into(),
                LARGE_BODY_RETRY,
            )),
        }
    }

    fn cached(&self, file: &str, key: &str) -> Option<bool> {
        let keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let (at, good) = *keys.get(&(file.to_owned(), key.to_owned()))?;
        let ttl = if good { GOOD_KEY_TTL } else { BAD_KEY_TTL };
        (at.elapsed() < ttl).then_some(good)
    }

    fn remember(&self, file: &str, key: &str, good: bool) {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        if keys.len() >= CACHE_SWEEP_AT {
            keys.retain(|_, (at, _)| at.elapsed() < GOOD_KEY_TTL);
        }
        keys.insert((file.to_owned(), key.to_owned()), (Instant::now(), good));
    }
}

impl Default for IndexNow {
    /// 60 submissions a minute per client and 30 per host.
    fn default() -> Self {
        IndexNow::new(60, 30)
    }
}

/// The request body limit of `POST /indexnow`: 10,000 URLs of up to 2 KiB, and the JSON
/// around them (about 20 MB).
pub const BODY_LIMIT: usize = MAX_URLS * (MAX_URL_LEN + 8) + 64 * 1024;

/// Bytes that all `POST /indexnow` bodies larger than the service's usual limit
/// ([`crate::MAX_BODY`]) may hold at once, in this process: past it such a body is refused
/// (503 with Retry-After) before it is read, so a crowd of anonymous clients cannot make the
/// server hold gigabytes. A body without a Content-Length counts as [`BODY_LIMIT`].
pub const LARGE_BODY_BUDGET: usize = 64 << 20;

/// The seconds a client refused for want of body memory is told to wait.
const LARGE_BODY_RETRY: u64 = 5;

/// `GET /indexnow?url=&key=[&keyLocation=]`: one URL.
pub(crate) async fn get(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let submission = Submission {
        host: None,
        key: query.get("key").cloned(),
        key_location: query.get("keyLocation").cloned(),
        url_list: query.get("url").map(|u| vec![u.clone()]),
    };
    if let Err(wait) = state.indexnow.per_client.check(&client) {
        return answer(Err(AppError::TooManyRequests(wait)));
    }
    answer(checked(&state, submission).await)
}

/// `POST /indexnow` with a JSON body (any content type: the protocol's is
/// `application/json; charset=utf-8`). The client's limit is counted, and room for a large
/// body taken, before a byte of the body is read.
pub(crate) async fn post(State(state): State<AppState>, ClientAddr(client): ClientAddr, request: Request) -> Response {
    if let Err(wait) = state.indexnow.per_client.check(&client) {
        return answer(Err(AppError::TooManyRequests(wait)));
    }
    let declared = request.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<usize>().ok());
    let (body, _room) = match read_within(&state.indexnow, request.into_body(), declared).await {
        Ok(body) => body,
        Err(e) => return answer(Err(e)),
    };
    match Submission::from_json(&body) {
        Ok(submission) => answer(checked(&state, submission).await),
        Err(e) => answer(Err(e.into())),
    }
}

/// The body, at most its declared length (else [`BODY_LIMIT`]), a longer one refused as it
/// comes. A body past the usual limit takes its share of the large bodies' budget first: at
/// once for its declared length, else (no Content-Length) for [`BODY_LIMIT`] when it grows past
/// the usual limit; refused when the budget is taken, before more of it is read.
async fn read_within(receiver: &IndexNow, body: axum::body::Body, declared: Option<usize>) -> Result<Body, AppError> {
    use futures_util::StreamExt;
    let limit = declared.unwrap_or(BODY_LIMIT);
    // Refuses a declared length past BODY_LIMIT too.
    let mut room = receiver.room_for(declared.unwrap_or(0))?;
    let mut bytes = Vec::with_capacity(declared.unwrap_or(0));
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| AppError::BadRequest("the body could not be read".into()))?;
        let length = bytes.len() + chunk.len();
        if length > limit {
            return Err(AppError::PayloadTooLarge(too_large()));
        }
        if room.is_none() && length > crate::MAX_BODY {
            room = receiver.room_for(limit)?;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, room))
}

/// A body read, with its share of the large bodies' budget, kept while the body is.
type Body = (Vec<u8>, Option<OwnedSemaphorePermit>);

fn too_large() -> String {
    format!("the body is larger than {MAX_URLS} URLs of {MAX_URL_LEN} bytes")
}

/// What a submission came to: a status and a sentence.
type Outcome = Result<(StatusCode, String), AppError>;

fn answer(outcome: Outcome) -> Response {
    match outcome {
        Ok((status, message)) if status.is_client_error() => crate::error::problem(status, &message),
        Ok((status, message)) => (status, format!("{message}\n")).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Checks a submission whose client passed its limit, in the protocol's order, and stores what
/// it may.
async fn checked(state: &AppState, s: Submission) -> Outcome {
    let Checked { key, host, urls, key_file } = s.check()?;
    let key = key.as_str();
    state.indexnow.per_host.check(&host).map_err(AppError::TooManyRequests)?;

    let mut by_origin: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for url in &urls {
        by_origin.entry(url.origin().ascii_serialization()).or_default().insert(url.to_string());
    }
    // Per origin with a verified site: its URLs and the sites that take them; the URLs of
    // the other origins are not stored, and the answer says so.
    let mut targets: Vec<(Vec<String>, Vec<i64>)> = Vec::new();
    let mut unverified = 0;
    for (origin, list) in by_origin {
        let sites: Vec<i64> = state.store.verified_sites_by_origin(&origin).await?.iter().map(|s| s.id).collect();
        if sites.is_empty() {
            unverified += list.len();
        } else {
            targets.push((list.into_iter().collect(), sites));
        }
    }
    if targets.is_empty() {
        return Ok((StatusCode::ACCEPTED, format!("received: no verified site on {host}, so nothing is stored")));
    }
    let at = now();
    if let Err(why) = check_key_file(state, &key_file, key).await {
        let refused = format!("the key is not valid: {why}");
        for (list, sites) in &targets {
            for site_id in sites {
                state
                    .store
                    .record_indexnow_receipt(*site_id, at, list.len() as i64, &key_file, Some(refused.as_str()))
                    .await?;
            }
        }
        return Ok((StatusCode::FORBIDDEN, refused));
    }
    // Each site holds its URL quota, as a read's merge does (the store's one decision).
    let quota = state.scheduler.url_quota.load(std::sync::atomic::Ordering::Relaxed);
    let full = format!("the site holds its quota of {quota} URLs");
    let (mut stored, mut over_quota) = (0, 0);
    for (list, sites) in &targets {
        // A URL counts as stored when some site of its origin stored it.
        let mut most = 0;
        for site_id in sites {
            let write = state.store.record_pushed_urls(*site_id, list, at, quota).await?;
            let refused = (write.written == 0).then_some(full.as_str());
            state.store.record_indexnow_receipt(*site_id, at, write.written as i64, &key_file, refused).await?;
            most = most.max(write.written as usize);
        }
        stored += most;
        over_quota += list.len() - most;
    }
    let mut refusals = Vec::new();
    if over_quota > 0 {
        refusals.push(format!("{over_quota} refused: {full}"));
    }
    if unverified > 0 {
        refusals.push(format!("{unverified} refused: no verified site on their origin"));
    }
    if stored == 0 {
        // Never a success over nothing: the sender learns that none was taken, and why.
        return Ok((StatusCode::UNPROCESSABLE_ENTITY, format!("nothing stored: {}", refusals.join("; "))));
    }
    let message = std::iter::once(format!("{stored} URLs stored")).chain(refusals).collect::<Vec<_>>().join("; ");
    Ok((StatusCode::OK, message))
}

/// Whether the key file holds the key (cached, see [`GOOD_KEY_TTL`]); `Err` says why not.
async fn check_key_file(state: &AppState, file: &str, key: &str) -> Result<(), String> {
    match state.indexnow.cached(file, key) {
        Some(true) => return Ok(()),
        Some(false) => return Err(format!("{file} did not hold the key at the last check")),
        None => {}
    }
    let result = match state.fetcher.get(file, None).await {
        Ok(Fetched::Body(response)) => match response.bytes_up_to(KEY_FILE_LIMIT).await {
            Ok((bytes, _)) if String::from_utf8_lossy(&bytes).trim() == key => Ok(()),
            Ok(_) => Err(format!("{file} does not hold the key")),
            Err(e) => Err(format!("{file} could not be read: {e}")),
        },
        Ok(Fetched::NotModified(_)) => Err(format!("{file} answered 304 to an unconditional request")),
        Err(e) => Err(format!("{file} could not be fetched: {e}")),
    };
    state.indexnow.remember(file, key, result.is_ok());
    result
}

impl From<Refusal> for AppError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::BadRequest(why) => AppError::BadRequest(why),
            Refusal::Rejected(why) => AppError::Rejected(why),
        }
    }
}
