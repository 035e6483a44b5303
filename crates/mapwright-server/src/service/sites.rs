//! Sites, what the JSON API and the console share: "Verify now" is the re-check job's own path
//! ([`crate::jobs::recheck::verify_now`]), so a site is verified the same way by a click and by
//! the periodic re-check; a site just added follows its owner's domain properties
//! ([`crate::service::domains::after_site_added`]).

use mapwright_store::Site;

use crate::outbound::{Held, host_of};
pub use crate::service::domains::after_site_added;
use crate::verify::Verification;
use crate::{AppError, AppState, now};

/// "Verify now" as an owner asks it (API and console): paced per site and per host of its
/// origin (every user's sites with that origin together, since the origin may be anyone's),
/// a failed proof remembered for a while (`Rates::failed_proof_memory`); then the re-check job's own path.
/// Paced or remembered, nothing is fetched and the answer says so (`held`).
pub async fn verify_now(state: &AppState, site: &Site) -> Result<Verification, AppError> {
    let now = now();
    let memory = state.gate.rates().failed_proof_memory.as_secs() as i64;
    if site.verified_at.is_none()
        && let Some(at) = site.last_checked_at
        && (0..memory).contains(&(now - at))
    {
        let wait = (memory - (now - at)) as u64;
        return Ok(Verification {
            verified: false,
            method: None,
            detail: format!(
                "not checked again: the check {} s ago found no proof; the service checks again in {wait} s",
                now - at
            ),
            held: Some(wait),
        });
    }
    let rates = *state.gate.rates();
    let paced = match state.gate.pace(&rates.verify_per_site, &site.id.to_string(), &site.origin).await {
        Ok(()) => match host_of(&site.origin) {
            Some((host, _)) => state.gate.pace(&rates.verify_per_host, &host, &host).await,
            None => Ok(()),
        },
        Err(held) => Err(held),
    };
    if let Err(held) = paced {
        return Ok(held_verification(site, &held));
    }
    crate::jobs::recheck::verify_now(state, site).await
}

/// The answer of a "Verify now" the gate paced: the site's state as it stands.
fn held_verification(site: &Site, held: &Held) -> Verification {
    Verification {
        verified: site.verified_at.is_some(),
        method: None,
        detail: format!(
            "not checked now: \"Verify now\" of {} is paced, for every user together; try again in {} s",
            held.target, held.retry_after
        ),
        held: Some(held.retry_after),
    }
}
