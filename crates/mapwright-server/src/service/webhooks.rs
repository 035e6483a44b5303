//! A site's webhook endpoints, what the JSON API and the console share: adding one after
//! checking its URL, events and secret, and its verification handshake. The deliveries are the
//! webhook job's ([`crate::jobs::webhooks`]), whose event names are re-exported here for the
//! faces.
//!
//! The handshake (issue 33): a URL a user types may be anyone's, so an endpoint receives no
//! event before it shows it wants them, the way large webhook providers ask. The service POSTs
//! it, signed like a delivery, `{"type": "verification", "event": "verification", "challenge":
//! "<random>", "webhook_id": ..., "created_at": ...}` (header `Mapwright-Event: verification`),
//! and the endpoint must answer 2xx with the challenge: the bare text, or JSON
//! `{"challenge": "<it>"}`. Done when the endpoint is added, and again when an owner asks
//! (an endpoint disabled after failing comes back that way).

use std::time::Duration;

use mapwright_fetch::webhook::{Delivery, post};
use mapwright_store::{Actor, User, WEBHOOK_EVENTS, Webhook};
use serde::Serialize;
use serde_json::json;

use crate::jobs::webhooks::{DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
pub use crate::jobs::webhooks::{READ_COMPLETED, STATUS_WORSENED};
use crate::outbound::Target;
use crate::{AppError, AppState, now};

/// The event name of the verification handshake.
pub const VERIFICATION: &str = "verification";

/// The time the endpoint has to answer its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of the handshake's answer read: the challenge fits many times.
const HANDSHAKE_ANSWER: usize = 4 * 1024;

/// What a handshake found, as the API and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Handshake {
    /// Whether the endpoint is verified now (it receives events).
    pub verified: bool,
    /// What happened, in a sentence the owner can act on.
    pub detail: String,
}

/// A receiver's URL at most this long.
pub const MAX_URL_LENGTH: usize = 2048;

/// What a new endpoint is made of, as the API and the console take it.
#[derive(Debug, Clone, Default)]
pub struct NewWebhook {
    /// The receiver.
    pub url: String,
    /// The events asked for; none: every event.
    pub events: Vec<String>,
    /// The secret; none: the service makes one.
    pub secret: Option<String>,
}

/// Adds an endpoint for an owner of the site after checking what it is made of, and sends its
/// handshake; returns it, its secret (shown this once) and what the handshake found.
pub async fn create(
    state: &AppState,
    user: &User,
    site_id: i64,
    new: NewWebhook,
) -> Result<(Webhook, String, Handshake), AppError> {
    let actor = Actor::from(user);
    // A stranger learns nothing from the checks of a site that is not theirs: 404 first.
    state.store.site_as_owner(actor, site_id).await?;
    let url = check_url(state, &new.url)?;
    let events = check_events(&new.events)?;
    pace_handshakes(state, user).await?;
    let secret = match new.secret {
        Some(given) => check_secret(given)?,
        None => mapwright_store::secret::new_token(),
    };
    let webhook = state.store.create_webhook(actor, site_id, &url, &secret, &events, now()).await?;
    let handshake = handshake(state, webhook.id).await?;
    let webhook = state.store.webhook(actor, webhook.id).await?;
    Ok((webhook, secret, handshake))
}

/// An owner asks for the endpoint's handshake again (after fixing the receiver, or to bring
/// back an endpoint disabled after failing).
pub async fn verify(state: &AppState, user: &User, webhook_id: i64) -> Result<(Webhook, Handshake), AppError> {
    let actor = Actor::from(user);
    let webhook = state.store.webhook(actor, webhook_id).await?;
    state.store.site_as_owner(actor, webhook.site_id).await?;
    pace_handshakes(state, user).await?;
    let handshake = handshake(state, webhook_id).await?;
    Ok((state.store.webhook(actor, webhook_id).await?, handshake))
}

/// Counts a handshake the user asks for against `Limits::webhook_handshakes_per_user` (in the
/// store: every process together); past it, 429 with Retry-After and nothing made or sent.
async fn pace_handshakes(state: &AppState, user: &User) -> Result<(), AppError> {
    state.limits.webhook_handshakes_per_user.check(&*state.store, &user.id.to_string()).await
}

/// Sends the endpoint its handshake, through the outbound gate, and records the outcome.
async fn handshake(state: &AppState, webhook_id: i64) -> Result<Handshake, AppError> {
    let Some((url, secret)) = state.store.webhook_target(webhook_id).await? else {
        return Err(AppError::NotFound);
    };
    if let Err(held) = state.gate.ask(Target::Http(&url)).await {
        return Ok(Handshake { verified: false, detail: format!("the handshake was not sent: {held}") });
    }
    let challenge = mapwright_store::secret::new_token();
    let at = now();
    let body = json!({
        "type": VERIFICATION,
        "event": VERIFICATION,
        "challenge": challenge,
        "webhook_id": webhook_id,
        "created_at": at,
    })
    .to_string();
    let headers = [
        (SIGNATURE_HEADER, sign(&secret, body.as_bytes())),
        (DELIVERY_HEADER, "0".to_owned()),
        (TIMESTAMP_HEADER, at.to_string()),
        (EVENT_HEADER, VERIFICATION.to_owned()),
    ];
    let delivery =
        Delivery { url: &url, headers: &headers, body, timeout: HANDSHAKE_TIMEOUT, max_answer: HANDSHAKE_ANSWER };
    let (verified, detail) = match post(&state.fetcher, delivery).await {
        Ok(answer) if (200..300).contains(&answer.status) && echoes(&answer.body, &challenge) => {
            (true, "the endpoint answered its handshake: it receives the events it asked for".to_owned())
        }
        Ok(answer) if (200..300).contains(&answer.status) => (
            false,
            format!(
                "the endpoint answered HTTP {} without the challenge: it must answer the verification event with \
                 its challenge (the bare text, or JSON {{\"challenge\": ...}}) before it receives events",
                answer.status
            ),
        ),
        Ok(answer) => (false, format!("the endpoint answered its handshake with HTTP {}", answer.status)),
        Err(e) => {
            tracing::debug!(webhook = webhook_id, error = %e, "webhook handshake failed");
            (false, "the endpoint did not answer its handshake".to_owned())
        }
    };
    state.store.record_webhook_handshake(webhook_id, verified, at).await?;
    Ok(Handshake { verified, detail })
}

/// Whether a handshake's answer carries the challenge: the bare text, or JSON's `challenge`.
fn echoes(body: &[u8], challenge: &str) -> bool {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    text == challenge
        || serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .is_some_and(|v| v.get("challenge").and_then(|c| c.as_str()) == Some(challenge))
}

/// The receiver's URL, trimmed, if the service may POST to it: http or https, no private or
/// loopback IP literal unless private networks are allowed (a name is checked at each
/// attempt, after resolution).
fn check_url(state: &AppState, url: &str) -> Result<String, AppError> {
    let url = url.trim();
    if url.len() > MAX_URL_LENGTH {
        return Err(AppError::Rejected(format!("the URL is longer than {MAX_URL_LENGTH} characters")));
    }
    let parsed = mapwright_fetch::webhook::check_url(&state.fetcher, url).map_err(|e| match e {
        mapwright_fetch::Error::InvalidUrl { reason, .. } => {
            AppError::Rejected(format!("the webhook's URL cannot be used: {reason}"))
        }
        other => AppError::Rejected(format!("the webhook's URL cannot be used: {other}")),
    })?;
    Ok(parsed.to_string())
}

/// The events asked for, each known, in the service's order; none: all.
fn check_events(events: &[String]) -> Result<Vec<&'static str>, AppError> {
    if let Some(unknown) = events.iter().find(|e| !WEBHOOK_EVENTS.contains(&e.as_str())) {
        return Err(AppError::Rejected(format!(
            "unknown event {unknown:?}: the events are {}",
            WEBHOOK_EVENTS.join(", ")
        )));
    }
    Ok(WEBHOOK_EVENTS.into_iter().filter(|known| events.is_empty() || events.iter().any(|e| e == known)).collect())
}

/// A secret the owner gave: 16 to 256 characters, none of them a control character.
fn check_secret(secret: String) -> Result<String, AppError> {
    let length = secret.chars().count();
    if !(16..=256).contains(&length) || secret.chars().any(char::is_control) {
        return Err(AppError::Rejected(
            "the secret must be 16 to 256 characters without control characters (or leave it out: the service \
             makes one)"
                .into(),
        ));
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_checked_and_none_means_all() {
        assert_eq!(check_events(&[]).unwrap(), WEBHOOK_EVENTS);
        assert_eq!(check_events(&["status.worsened".into()]).unwrap(), ["status.worsened"]);
        assert!(check_events(&["read.started".into()]).is_err());
    }

    #[test]
    fn a_handshake_answer_carries_the_challenge() {
        for (body, expected) in [
            ("abc123", true),
            ("  abc123\n", true),
            (r#"{"challenge":"abc123"}"#, true),
            (r#"{"challenge":"abc1234"}"#, false),
            ("abc1234", false),
            ("ok", false),
            ("", false),
            (r#"{"type":"verification","challenge":"abc123x"}"#, false),
        ] {
            assert_eq!(echoes(body.as_bytes(), "abc123"), expected, "{body}");
        }
    }
}
