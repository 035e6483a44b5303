//! The look-up of a domain property's TXT record, what follows it for the sites it covers,
//! and the periodic re-check of properties, beside the sites' (`jobs::recheck`). The API's and
//! console's "Verify now" of a property come here through `service::domains`.

use std::time::Duration;

use futures_util::StreamExt;
use mapwright_store::DomainProperty;
use serde::Serialize;
use tokio::sync::watch;

use crate::domains::{covers, dns};
use crate::{AppError, AppState, now};

/// The whole look-up (every server, every attempt) must end within this.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(15);

/// Properties re-checked per pass.
const PASS: i64 = 100;

/// Covered sites verified (or checked again) at once after a property changes.
const SITE_CONCURRENCY: usize = 4;

/// The result of one look-up, as the API and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DomainCheck {
    /// Whether the property is verified now.
    pub verified: bool,
    /// What was found, in a sentence the owner can act on.
    pub detail: String,
    /// Not looked up now (the outbound gate's budget of the name, or "Verify now"'s pace): the
    /// seconds until it may be asked again; `verified` is the property's state as it stands.
    pub held: Option<u64>,
}

/// Looks the record up and records the outcome; then the sites it covers follow it (see
/// `follow`). The API's and console's "Verify now" and the periodic re-check go through here.
pub async fn verify(state: &AppState, property: &DomainProperty) -> Result<DomainCheck, AppError> {
    // The look-up goes to the name's servers, whoever's they are: through the gate. Held,
    // nothing is recorded: the property keeps its state until a look-up can be made.
    if let Err(held) = state.gate.ask(crate::outbound::Target::Dns(&property.domain)).await {
        return Ok(DomainCheck {
            verified: property.verified_at.is_some(),
            detail: format!("not looked up now: {held}"),
            held: Some(held.retry_after),
        });
    }
    let answer = tokio::time::timeout(LOOKUP_TIMEOUT, dns::txt_records(&state.dns, &property.domain))
        .await
        .unwrap_or(dns::TxtAnswer::Timeout);
    let refusal = dns::refusal(&property.domain, &property.verification_token, &answer);
    let verified = refusal.is_none();
    state.store.record_domain_verification(property.id, verified, now()).await?;
    if property.verified_at.is_some() && !verified {
        tracing::info!(domain = %property.domain, "domain property verification lost");
    }
    follow(state, property.user_id, &property.domain, verified).await?;
    let detail = refusal.unwrap_or_else(|| {
        format!("{} has the TXT record {}", property.domain, dns::record_value(&property.verification_token))
    });
    Ok(DomainCheck { verified, detail, held: None })
}

/// The user's sites under `domain` whose state disagrees with the property's: unverified ones
/// when it is verified (now covered), verified ones when it is not (their proof may have been
/// this property), each verified again through the one path of sites, which looks for a
/// covering property first, then for the site's own file or meta tag.
pub(crate) async fn follow(state: &AppState, user_id: i64, domain: &str, verified: bool) -> Result<(), AppError> {
    let sites = state.store.sites_owned_by(user_id).await?;
    let stale = sites.into_iter().filter(|s| covers(domain, &s.origin) && s.verified_at.is_some() != verified);
    futures_util::stream::iter(stale)
        .for_each_concurrent(SITE_CONCURRENCY, |site| async move {
            if let Err(e) = super::verify_now(state, &site).await {
                tracing::warn!(site = %site.origin, error = %e, "verification after a domain property changed");
            }
        })
        .await;
    Ok(())
}

/// One pass of the periodic re-check: up to a hundred properties not looked up for
/// `interval_seconds`, claimed so that another process's pass takes others. Returns how many.
pub async fn recheck_once(state: &AppState, interval_seconds: i64) -> Result<usize, AppError> {
    let now = now();
    let properties = state.store.domains_to_verify(now - interval_seconds, now, PASS).await?;
    let checked = properties.len();
    futures_util::stream::iter(properties)
        .for_each_concurrent(SITE_CONCURRENCY, |property| async move {
            if let Err(e) = verify(state, &property).await {
                tracing::warn!(domain = %property.domain, error = %e, "domain property re-check");
            }
        })
        .await;
    Ok(checked)
}

/// The re-check task of domain properties, beside the sites' (`jobs::recheck`): a pass,
/// then a pause (shorter while there is a backlog).
pub(crate) async fn run_rechecks(state: AppState, interval: Duration, poll: Duration, shutdown: watch::Receiver<bool>) {
    let seconds = interval.as_secs().max(1) as i64;
    let idle = interval.min(Duration::from_secs(60));
    while !*shutdown.borrow() {
        let pause = match recheck_once(&state, seconds).await {
            Ok(n) if n as i64 == PASS => poll,
            Ok(_) => idle,
            Err(e) => {
                tracing::warn!(error = %e, "domain property re-check");
                idle
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = crate::jobs::stopping(shutdown.clone()) => {}
        }
    }
}
