//! Webhook deliveries (issue 23): a site's owners register endpoints (`service::webhooks`); each read of a sitemap becomes a
//! `read.completed` event, and a read whose status is worse than the one before also a
//! `status.worsened` event. The store queues a delivery per endpoint that asked for the event
//! ([`read_recorded`], called where the scheduler records a read), and [`run`] sends them.
//!
//! A delivery is a POST of JSON, `{"id", "event", "created_at", "data"}`, with
//! `Mapwright-Signature: sha256=<hex HMAC-SHA256(secret, body)>`, `Mapwright-Delivery` (the id,
//! the same at every attempt: a receiver dedupes on it), `Mapwright-Timestamp` (the event's
//! time, also in the signed body) and `Mapwright-Event`. The receiver checks the HMAC over the
//! raw bytes of the body (README, "Webhooks"). A 2xx answer delivers; anything else (another
//! status, a redirect, no answer within [`Config::timeout`], an address refused) is retried
//! after [`Config::backoff`] doubling at each attempt, up to [`Config::max_attempts`], then
//! given up. The queue is in the store, so a restart or another process continues it.
//!
//! Every request goes through the service's one [`Fetcher`](mapwright_fetch::Fetcher)
//! (`mapwright_fetch::webhook::post`): private, loopback and link-local addresses are refused
//! unless the service allows private networks, in the URL when it is added and after DNS
//! resolution at each attempt, exactly as for sitemap fetches.

use std::sync::Arc;
use std::time::Duration;

use hmac::{Hmac, Mac};
use mapwright_fetch::webhook::{Delivery, post};
use mapwright_store::{AttemptRecord, LeasedDelivery, Sitemap};
use serde_json::json;
use sha2::Sha256;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::outbound::Target;
use crate::status::badness;
use crate::{AppState, now};

/// The header of the body's signature.
pub const SIGNATURE_HEADER: &str = "mapwright-signature";
/// The header of the delivery's id.
pub const DELIVERY_HEADER: &str = "mapwright-delivery";
/// The header of the event's time (Unix seconds).
pub const TIMESTAMP_HEADER: &str = "mapwright-timestamp";
/// The header of the event's name.
pub const EVENT_HEADER: &str = "mapwright-event";

/// The event of every read of a sitemap (a 304 included).
pub const READ_COMPLETED: &str = "read.completed";
/// The event of a read whose status is worse than the previous read's.
pub const STATUS_WORSENED: &str = "status.worsened";

/// How deliveries are sent. Every field has a documented default ([`Config::default`]).
#[derive(Debug, Clone)]
pub struct Config {
    /// The wait before the second attempt, doubled for each one after (default 30 s; at most
    /// six hours between two attempts).
    pub backoff: Duration,
    /// Attempts of one delivery before it is given up (default 8: the last about an hour after
    /// the first with the default backoff).
    pub max_attempts: u32,
    /// Deliveries sent at once by this process (default 4).
    pub concurrency: usize,
    /// The time for one attempt, the answer included (default 10 s).
    pub timeout: Duration,
    /// Bytes of an answer read at most (default 16 KiB; the status is what counts).
    pub max_answer: usize,
    /// The wait of an idle sender before it looks at the queue again (default 1 s).
    pub poll_interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            backoff: Duration::from_secs(30),
            max_attempts: 8,
            concurrency: 4,
            timeout: Duration::from_secs(10),
            max_answer: 16 * 1024,
            poll_interval: Duration::from_secs(1),
        }
    }
}

impl Config {
    /// The wait after the `attempt`-th failed attempt (1-based): the backoff doubled for each
    /// attempt before, at most six hours.
    pub fn retry_delay(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(20);
        self.backoff.saturating_mul(factor).min(Duration::from_secs(6 * 3600))
    }

    /// The lease of a delivery: well past an attempt's time limit.
    fn lease_seconds(&self) -> i64 {
        (self.timeout.as_secs() as i64).max(1) * 3 + 30
    }
}

/// `sha256=` and the hex HMAC-SHA256 of `body` keyed by `secret`: the signature header's value.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The one trigger of the events of a read, called where the scheduler has recorded it:
/// `before` is the sitemap as it was before the read. Queues `read.completed` and, when the
/// status got worse than the previous read's, `status.worsened` for the site's endpoints that
/// asked for them. Never fails the read: a store error is logged.
pub async fn read_recorded(state: &AppState, before: &Sitemap) {
    if let Err(e) = queue_read_events(state, before).await {
        tracing::warn!(sitemap = before.id, error = %e, "cannot queue the webhook deliveries of a read");
    }
}

async fn queue_read_events(state: &AppState, before: &Sitemap) -> Result<(), mapwright_store::Error> {
    let after = state.store.sitemap_by_id(before.id).await?;
    let site = state.store.site_by_id(after.site_id).await?;
    let data = json!({
        "site": { "id": site.id, "origin": site.origin },
        "sitemap": {
            "id": after.id,
            "url": after.url,
            "parent_id": after.parent_id,
            "is_index": after.is_index,
        },
        "read": {
            "at": after.last_downloaded_at,
            "status": after.status,
            "previous_status": before.status,
            "http_status": after.http_status,
            "url_count": after.url_count,
            "errors": after.errors,
            "warnings": after.warnings,
            "rollup_status": after.rollup_status,
            "rollup_errors": after.rollup_errors,
            "rollup_warnings": after.rollup_warnings,
        },
    })
    .to_string();
    let at = now();
    let mut queued = state.store.enqueue_webhook_event(site.id, READ_COMPLETED, &data, None, at).await?.queued;
    let worse = match (badness(before.status.as_deref()), badness(after.status.as_deref())) {
        (Some(was), Some(is)) => is > was,
        _ => false,
    };
    if worse {
        queued += state.store.enqueue_webhook_event(site.id, STATUS_WORSENED, &data, None, at).await?.queued;
    }
    if queued > 0 {
        state.scheduler.webhooks.notify_one();
    }
    Ok(())
}

/// The body of a delivery: the same bytes at every attempt.
pub fn body_of(delivery: &LeasedDelivery) -> String {
    let data: serde_json::Value = serde_json::from_str(&delivery.payload).unwrap_or(serde_json::Value::Null);
    json!({ "id": delivery.id, "event": delivery.event, "created_at": delivery.created_at, "data": data }).to_string()
}

/// Sends the deliveries of the queue until shutdown: leases what is due (as many as there are
/// free slots), each attempt in its own task; woken at once when a read queues deliveries, else
/// every [`Config::poll_interval`]. At shutdown the attempts under way get their time limit;
/// a lease left behind expires and another process (or the next start) takes the delivery.
pub async fn run(state: AppState, config: Config, shutdown: watch::Receiver<bool>) {
    let worker = format!("{}-webhooks", super::process_tag());
    let slots = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let mut last_notice = std::time::Instant::now() - NOTICE_EVERY;
    let mut tasks = JoinSet::new();
    loop {
        if *shutdown.borrow() {
            break;
        }
        let free = slots.available_permits();
        let mut full = false;
        if free > 0 {
            match state.store.lease_webhook_deliveries(&worker, now(), config.lease_seconds(), free as i64).await {
                Ok(leased) => {
                    full = leased.len() == free;
                    for delivery in leased {
                        let permit = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
                        let (state, config, worker) = (state.clone(), config.clone(), worker.clone());
                        tasks.spawn(async move {
                            attempt(&state, &config, &worker, &delivery, now()).await;
                            drop(permit);
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot lease webhook deliveries"),
            }
        }
        if full {
            // More may be due: look again as soon as a slot frees.
            tokio::select! {
                _ = tasks.join_next() => {}
                _ = super::stopping(shutdown.clone()) => break,
            }
            continue;
        }
        if last_notice.elapsed() >= NOTICE_EVERY {
            last_notice = std::time::Instant::now();
            tell_disabled(&state).await;
        }
        tokio::select! {
            _ = tokio::time::sleep(config.poll_interval) => {}
            _ = state.scheduler.webhooks.notified() => {}
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            _ = super::stopping(shutdown.clone()) => break,
        }
    }
    let _ = tokio::time::timeout(config.timeout + Duration::from_secs(1), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
}

/// How often the sender looks for endpoints disabled since their creators were told.
const NOTICE_EVERY: Duration = Duration::from_secs(60);

/// Mails the creator of each endpoint disabled after failing (once, whichever process claims
/// it; through the outbound gate: a creator's inbox has its budget too). The claim stands for
/// a notice sent: one held by the gate or not sent is given back, and told at a later turn.
/// Sent here, one after the other (this task may wait for the mail server), so no notice is
/// dropped for want of room. Without mail set up, the endpoint's state in the console and the
/// API says it alone (no claim is made).
pub async fn tell_disabled(state: &AppState) {
    let Some(mailer) = state.mail.clone() else { return };
    let at = now();
    let disabled = match state.store.claim_disabled_webhooks(at, 50).await {
        Ok(disabled) => disabled,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the webhooks disabled after failing");
            return;
        }
    };
    for webhook in disabled {
        let sent = match state.gate.ask(Target::Mail(&webhook.email)).await {
            Err(held) => Err(held.to_string()),
            Ok(()) => {
                let body = format!(
                    "The webhook {url} of the site {origin} on mapwright was disabled: {reason}.\n\n\
                     Nothing is sent to it until an owner verifies it again on the site's webhooks page:\n\n\
                     {base}/sites/{site}/webhooks\n",
                    url = webhook.url,
                    origin = webhook.origin,
                    reason = webhook.reason,
                    base = mailer.public_url(),
                    site = webhook.site_id,
                );
                mailer.send(&webhook.email, "A webhook of yours was disabled", body).await.map_err(|e| e.to_string())
            }
        };
        if let Err(why) = sent {
            tracing::info!(webhook = webhook.id, why, "the notice of a disabled webhook was not mailed: told later");
            if let Err(e) = state.store.unclaim_disabled_webhook(webhook.id, at).await {
                tracing::warn!(webhook = webhook.id, error = %e, "cannot give back the notice's claim");
            }
        }
    }
}

/// Sends every delivery due at `at` now, one after the other, and returns how many were tried:
/// what [`run`] does, for a caller that wants it done (tests, a one-off). `at` is the clock of
/// the attempts too (their time in the log, and the next attempt's from it).
pub async fn deliver_due(state: &AppState, config: &Config, worker: &str, at: i64) -> usize {
    let mut tried = 0;
    loop {
        let leased = match state.store.lease_webhook_deliveries(worker, at, config.lease_seconds(), 16).await {
            Ok(leased) => leased,
            Err(e) => {
                tracing::warn!(error = %e, "cannot lease webhook deliveries");
                return tried;
            }
        };
        if leased.is_empty() {
            return tried;
        }
        for delivery in &leased {
            attempt(state, config, worker, delivery, at).await;
            tried += 1;
        }
    }
}

/// One attempt of a leased delivery at `at`, recorded in the endpoint's log.
async fn attempt(state: &AppState, config: &Config, worker: &str, delivery: &LeasedDelivery, at: i64) {
    // The outbound gate first: past the target host's budget (every user's endpoints there
    // together) the delivery waits its turn, with no attempt counted against its endpoint.
    if let Err(held) = state.gate.ask(Target::Http(&delivery.url)).await {
        tracing::debug!(delivery = delivery.id, %held, "webhook delivery held by the outbound gate");
        let until = at + held.retry_after.max(1) as i64;
        if let Err(e) = state.store.postpone_webhook_delivery(worker, delivery.id, until).await {
            tracing::warn!(delivery = delivery.id, error = %e, "cannot postpone a webhook delivery");
        }
        return;
    }
    let body = body_of(delivery);
    let headers = [
        (SIGNATURE_HEADER, sign(&delivery.secret, body.as_bytes())),
        (DELIVERY_HEADER, delivery.id.to_string()),
        (TIMESTAMP_HEADER, delivery.created_at.to_string()),
        (EVENT_HEADER, delivery.event.clone()),
    ];
    let started = std::time::Instant::now();
    let outcome = post(
        &state.fetcher,
        Delivery {
            url: &delivery.url,
            headers: &headers,
            body,
            timeout: config.timeout,
            max_answer: config.max_answer,
        },
    )
    .await;
    let duration_ms = started.elapsed().as_millis() as i64;
    let (status_code, error) = match outcome {
        Ok(answer) if (200..300).contains(&answer.status) => (Some(i64::from(answer.status)), None),
        Ok(answer) => (Some(i64::from(answer.status)), Some(format!("the receiver answered HTTP {}", answer.status))),
        Err(e) => (None, Some(describe(&e, config))),
    };
    let made = delivery.attempts as u32 + 1;
    let retry_at =
        (error.is_some() && made < config.max_attempts).then(|| at + config.retry_delay(made).as_secs().max(1) as i64);
    if let Some(why) = &error {
        tracing::debug!(delivery = delivery.id, attempt = made, error = %why, "webhook delivery failed");
    }
    let record = AttemptRecord { at, status_code, error, duration_ms, retry_at };
    match state.store.finish_webhook_attempt(worker, delivery, &record).await {
        Ok(true) => {}
        Ok(false) => tracing::debug!(delivery = delivery.id, "the lease of a webhook delivery was lost"),
        Err(e) => tracing::warn!(delivery = delivery.id, error = %e, "cannot record a webhook attempt"),
    }
}

/// A failed request in the owner's words: what went wrong, never the URL again or the
/// library's chain of causes (the log is shown in the console), except the one cause an owner
/// can act on, an address the service refuses.
fn describe(error: &mapwright_fetch::Error, config: &Config) -> String {
    use mapwright_fetch::Error as E;
    let refused = "refused: the address is private, loopback or link-local, and this service does not send to \
                   private networks";
    // The fetcher's refusals (the URL's address, or every address a name resolves to) say so.
    if error.to_string().contains("private or loopback") {
        return refused.to_owned();
    }
    match error {
        E::InvalidUrl { reason, .. } => format!("not a URL the service sends to: {reason}"),
        E::Connect { .. } => "could not connect".to_owned(),
        E::Timeout { .. } => format!("no answer within {} s", config.timeout.as_secs_f64()),
        _ => "the request failed".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn the_backoff_doubles_up_to_six_hours() {
        let config = Config { backoff: Duration::from_secs(30), ..Config::default() };
        let delays: Vec<u64> = (1..=4).map(|n| config.retry_delay(n).as_secs()).collect();
        assert_eq!(delays, [30, 60, 120, 240]);
        assert_eq!(config.retry_delay(40), Duration::from_secs(6 * 3600));
    }
}
