//! A site's webhook endpoints, what the JSON API and the console share: adding one after
//! checking its URL, events and secret. The deliveries are the webhook job's
//! ([`crate::jobs::webhooks`]), whose event names are re-exported here for the faces.

use mapwright_store::{Actor, User, WEBHOOK_EVENTS, Webhook};

pub use crate::jobs::webhooks::{READ_COMPLETED, STATUS_WORSENED};
use crate::{AppError, AppState, now};

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

/// Adds an endpoint for an owner of the site after checking what it is made of; returns it and
/// its secret, which is shown this once.
pub async fn create(
    state: &AppState,
    user: &User,
    site_id: i64,
    new: NewWebhook,
) -> Result<(Webhook, String), AppError> {
    let actor = Actor::from(user);
    // A stranger learns nothing from the checks of a site that is not theirs: 404 first.
    state.store.site_as_owner(actor, site_id).await?;
    let url = check_url(state, &new.url)?;
    let events = check_events(&new.events)?;
    let secret = match new.secret {
        Some(given) => check_secret(given)?,
        None => mapwright_store::secret::new_token(),
    };
    let webhook = state.store.create_webhook(actor, site_id, &url, &secret, &events, now()).await?;
    Ok((webhook, secret))
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
}
